"""DuckDB, only read: store files of the earlier versions, whose embedded engine was DuckDB.

Nothing opens such a file as a store; ``migrate --from FILE`` copies one into a store of today
(docs/deploy.md). Connections go through :func:`etclib.storage.duckfile.connect` (no extension is
installed or loaded).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from etclib.storage.dialect import Dialect, Fault


class Connection:
    """A read-only DuckDB connection with the stores' small API."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw
        self.dialect = DIALECT

    def execute(self, sql: str, params: list | tuple | None = None) -> Any:
        return self.raw.execute(sql, list(params) if params is not None else [])

    def close(self) -> None:
        self.raw.close()


def is_duckdb(path: str | Path) -> bool:
    """Whether ``path`` is an existing file with DuckDB's header."""
    from etclib.storage.duckfile import MAGIC

    try:
        with open(path, "rb") as f:
            return f.read(16)[8:12] == MAGIC
    except OSError:
        return False


class DuckDB(Dialect):
    name = "duckdb"
    schemes = ("duckdb:///",)
    shared = False

    def prepare(self, target: Any, create: bool) -> bool:
        raise Fault("legacy", str(target), "a DuckDB file of an earlier version")

    def fault(self, exc: BaseException, where: str) -> Fault | None:
        import duckdb

        if isinstance(exc, duckdb.Error):
            return Fault("corrupt", where, " ".join(str(exc).split())[:200])
        return None

    def connect(self, target: Any, **options: Any) -> Connection:
        from etclib.storage import duckfile

        return Connection(duckfile.connect(str(target).removeprefix("duckdb:///"), read_only=True))


DIALECT = DuckDB()
