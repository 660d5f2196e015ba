"""The legacy DuckDB board (read only): boards written before the embedded engine became SQLite.

Only read, by the in-place upgrade of such a file and by ``migrate`` from one; never written.
A file is recognised by its header (:func:`etclib.duckfile.not_duckdb`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..dialect import Dialect


class Rows:
    def __init__(self, cur: Any) -> None:
        self._cur = cur
        self.description = cur.description

    def fetchone(self):
        return self._cur.fetchone()

    def fetchall(self):
        return self._cur.fetchall()

    def fetchmany(self, size: int):
        return self._cur.fetchmany(size)


class Connection:
    """A read-only DuckDB connection with the stores' small API."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw
        self.dialect = DIALECT
        self.engine = DIALECT.name

    def execute(self, sql: str, params: list | tuple | None = None) -> Rows:
        return Rows(self.raw.execute(sql, list(params) if params is not None else []))

    def close(self) -> None:
        self.raw.close()


def is_duckdb(path: str | Path) -> bool:
    """Whether ``path`` is an existing, non-empty file with DuckDB's header."""
    from etclib.duckfile import MAGIC

    try:
        with open(path, "rb") as f:
            head = f.read(16)
    except OSError:
        return False
    return head[8:12] == MAGIC


def connect(path: str | Path) -> Connection:
    """The DuckDB file ``path``, read only (no extension installed or loaded)."""
    from etclib import duckfile

    return Connection(duckfile.connect(path, read_only=True))


class DuckDB(Dialect):
    name = "duckdb"
    schemes = ("duckdb:///",)
    shared = False


DIALECT = DuckDB()
