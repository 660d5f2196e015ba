"""The judge-vs-human studies database, on the storage layer (:mod:`etclib.storage`).

``ETC_STUDIES_DB`` is a file path (SQLite, default ``data/studies.sqlite``) or a
``postgresql://`` URL. Each study registers its tables here (:func:`register`); this module
imports none of them. The studies write SQL in the subset every engine reads the same way
(``?`` placeholders, ``ON CONFLICT``, ``CAST(? AS VARCHAR) IS NULL`` for optional filters).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from etclib.core import config, registry
from etclib.core.errors import StoreError
from etclib.storage import MEMORY, Fault, copier, dialect_for, target_of
from etclib.storage.database import Database, Schema, Store, now, open_store
from etclib.storage.dialects.duckdb import is_duckdb

__all__ = ["STUDIES", "StudiesConnection", "connect", "migrate", "now", "register"]


DEFAULT = Path("data") / "studies.sqlite"
#: The default studies file of the earlier versions (DuckDB): named, with the command that
#: converts it, when the new default is missing.
LEGACY_DEFAULT = Path("data") / "studies.duckdb"


def target(explicit: str | os.PathLike | None = None) -> Path | str:
    """The studies database: argument, ``ETC_STUDIES_DB``, or ``data/studies.sqlite``; a file
    path, or a server URL (:func:`etclib.storage.target_of` decides which)."""
    return target_of(explicit or config.setting("ETC_STUDIES_DB") or DEFAULT)


def _plain(value: Any) -> Any:
    """A DataFrame cell as the Python value a driver takes (None for missing)."""
    if value is None or value is pd.NaT:
        return None
    if isinstance(value, float) and np.isnan(value):
        return None
    if isinstance(value, pd.Timestamp):
        return value.to_pydatetime()
    if isinstance(value, np.generic):
        return value.item()
    return value


class StudiesConnection:
    """One block's connection to the studies database; ``execute(sql, params)`` takes ``?``."""

    def __init__(self, db: Database, raw: Any) -> None:
        self.db, self.raw = db, raw
        self.dialect = db.dialect
        self.engine = db.dialect.name
        self.where = db.label

    def execute(self, sql: str, params: Sequence[Any] | None = None):
        """Run one statement; the result has ``fetchone``, ``fetchall`` and ``description``."""
        return self.raw.execute(sql, None if params is None else list(params))

    def frame(self, sql: str, params: Sequence[Any] | None = None) -> pd.DataFrame:
        """The query's rows as a DataFrame (column names from the query)."""
        cur = self.execute(sql, list(params or []))
        names = [d[0] for d in cur.description or []]
        return pd.DataFrame.from_records(cur.fetchall(), columns=names)

    def schema(self, name: str, ddl: str) -> None:
        """Create the tables of ``ddl`` if missing (once per process)."""
        self.db.apply(Schema.of(name, ddl))

    def transaction(self) -> contextlib.AbstractContextManager[None]:
        """All statements of the block, or none of them."""
        return self.dialect.transaction(self.raw)

    def serialize(self, name: str) -> None:
        """Hold the lock ``name`` until the ``with connect(...)`` block ends, so that a
        read-then-write step runs one writer at a time, across processes (on SQLite the file's
        write lock; every block is one transaction on PostgreSQL)."""
        self.dialect.serialize(self.raw, f"studies:{name}")

    def insert(self, table: str, rows: pd.DataFrame) -> int:
        """Insert every row of ``rows`` (its columns name the table's columns)."""
        return self._write(table, rows, None)

    def upsert(self, table: str, rows: pd.DataFrame, keys: Sequence[str]) -> int:
        """Insert every row of ``rows``; a row whose ``keys`` are already stored replaces it."""
        return self._write(table, rows, list(keys))

    def _write(self, table: str, rows: pd.DataFrame, keys: list[str] | None) -> int:
        if rows.empty:
            return 0
        cols = list(rows.columns)
        tail = ""
        if keys:
            update = ", ".join(f"{c} = excluded.{c}" for c in cols if c not in keys)
            tail = f" ON CONFLICT ({', '.join(keys)}) DO UPDATE SET {update}"
        marks = ", ".join("?" * len(cols))
        values = [tuple(_plain(v) for v in row) for row in rows.itertuples(index=False)]
        self.raw.executemany(
            f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({marks}){tail}", values
        )
        return len(rows)


def _error(fault: Fault) -> StoreError:
    return StoreError(
        fault.describe("studies database", "ETC_STUDIES_DB", "etclib studies migrate")
    )


#: The studies as the storage layer sees them (each study applies its own schema).
STUDIES = Store(name="studies", error=_error, tables=lambda: list(tables()))


@contextlib.contextmanager
def connect(
    db: str | Path | None = None, *, read_only: bool = False
) -> Iterator[StudiesConnection]:
    """A connection to the studies database (:func:`target`) for one block, committed when it
    ends, rolled back when it raises. ``read_only`` on a file that does not exist yet reads an
    empty database in memory, so reading never creates files."""
    where = target(db)
    if where == DEFAULT and not where.exists() and is_duckdb(LEGACY_DEFAULT):
        raise _error(Fault("legacy", str(LEGACY_DEFAULT)))
    if read_only and not dialect_for(where).exists(where):
        scratch = Database(MEMORY, STUDIES)
        try:
            with scratch.session() as raw:
                yield StudiesConnection(scratch, raw)
        finally:
            scratch.close()
        return
    database = open_store(where, STUDIES)
    with database.session() as raw:
        yield StudiesConnection(database, raw)


# --- the studies' schemas, and moving a file into PostgreSQL ---------------------------------

#: Study name -> its ``CREATE TABLE IF NOT EXISTS`` statements, filled by :func:`register` as
#: each study module is imported (importing :mod:`etclib.studies` imports them all). No
#: foreign keys between studies: any order copies.
_SCHEMAS: dict[str, str] = {}


def register(name: str, ddl: str) -> str:
    """Declare study ``name``'s tables; returns ``ddl``. Another ``ddl`` under the same name is
    an error (two studies would share one schema name on PostgreSQL)."""
    return registry.add(_SCHEMAS, name, ddl, kind="study", error=StoreError)


def schemas() -> dict[str, str]:
    """Study name -> its ``CREATE TABLE IF NOT EXISTS`` statements (every registered study)."""
    return dict(_SCHEMAS)


def tables() -> dict[str, str]:
    """Every table of the studies -> the study it belongs to, in the schemas' order."""
    return {
        table: name
        for name, ddl in schemas().items()
        for table in re.findall(r"CREATE TABLE IF NOT EXISTS (\w+)", ddl)
    }


def migrate(
    source: str | Path | None, to: str | Path, *, replace: bool = False
) -> copier.MigrationReport:
    """Copy every study table of ``source`` (only read) into ``to`` in one transaction, with
    :func:`etclib.storage.copier.copy_store`; a target holding rows is refused unless
    ``replace``."""
    into = open_store(target(to), STUDIES)
    for name, ddl in schemas().items():
        into.apply(Schema.of(name, ddl))
    return copier.copy_store(target(source), into, replace=replace)
