"""The judge-vs-human studies database, on the storage layer (:mod:`etclib.storage`).

``ETC_STUDIES_DB`` (:func:`etclib.config.studies_db`) is a file path (SQLite in WAL mode, the
default ``data/studies.sqlite``: many processes of one machine) or a ``postgresql://`` URL
(docs/deploy.md); :func:`etclib.storage.dialect_for` decides which. Each study of
:mod:`etclib.studies` registers its tables here when it is imported (:func:`register`); this
module imports none of them (an import-linter contract keeps it so). The studies write their
SQL once, in the subset both engines read the same way: ``?`` placeholders, ``INSERT ... ON
CONFLICT``, ``CAST(? AS VARCHAR) IS NULL`` for optional filters, times passed as parameters.
What differs between the engines is asked of the dialect, behind :class:`StudiesConnection`:

- :meth:`~StudiesConnection.frame`: a query's rows as a pandas DataFrame;
- :meth:`~StudiesConnection.insert` / :meth:`~StudiesConnection.upsert`: many rows at once;
- :meth:`~StudiesConnection.transaction` and :meth:`~StudiesConnection.serialize` (one writer at
  a time for a read-then-write step: SQLite's write lock taken at ``BEGIN IMMEDIATE``, a named
  advisory lock on PostgreSQL);
- :meth:`~StudiesConnection.schema`: ``CREATE TABLE IF NOT EXISTS`` statements.

A studies file written by the earlier DuckDB engine is upgraded in place on opening (the storage
layer's one upgrade function, :func:`etclib.storage.upgrade.upgrade`: every table copied and
compared, the DuckDB file kept as ``<name>.duckdb-backup``); so is the old default
``data/studies.duckdb`` when the new default is missing.

:func:`migrate` copies a studies file (SQLite, or DuckDB of an earlier version, only read) into
PostgreSQL (``etclib studies migrate --to URL``) with the storage layer's table copier, every
table of every study, each table's count and SHA-256 compared afterwards.

On PostgreSQL one ``with connect(...)`` block is one transaction on a connection lent by the
process's pool: committed when the block ends, rolled back when it raises.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import config, registry
from ..errors import StoreError
from ..storage import copier, dialect_for, server
from ..storage import upgrade as storage_upgrade
from ..storage.dialect import Dialect
from ..storage.dialects import duckdb as legacy
from ..storage.dialects import sqlite as sqlite_engine
from ..storage.urls import redacted


def now() -> datetime:
    """The time a row is written: UTC, without a zone (the columns are ``TIMESTAMP``)."""
    return datetime.now(UTC).replace(tzinfo=None)


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
    """One connection to the studies database; ``execute(sql, params)`` takes ``?``.

    ``raw`` is the storage layer's connection (``execute`` with ``?``), ``dialect`` its
    engine's :class:`~etclib.storage.dialect.Dialect`."""

    def __init__(self, raw: Any, dialect: Dialect, where: str, target: str | Path):
        self.raw = raw
        self.dialect = dialect
        self.engine = dialect.name
        self.where = where
        self._target = target

    def execute(self, sql: str, params: Sequence[Any] | None = None):
        """Run one statement; the result has ``fetchone``, ``fetchall`` and ``description``."""
        return self.raw.execute(sql, None if params is None else list(params))

    def frame(self, sql: str, params: Sequence[Any] | None = None) -> pd.DataFrame:
        """The query's rows as a DataFrame (column names from the query)."""
        cur = self.execute(sql, list(params or []))
        names = [d[0] for d in cur.description or []]
        return pd.DataFrame.from_records(cur.fetchall(), columns=names)

    def schema(self, name: str, ddl: str) -> None:
        """Create the tables of ``ddl`` if missing."""
        self.dialect.create_schema(self.raw, self._target, name, ddl)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """All statements of the block, or none of them."""
        with self.dialect.transaction(self.raw):
            yield

    def serialize(self, name: str) -> None:
        """Hold the lock ``name`` until the current transaction ends, so that a read-then-write
        step runs one writer at a time, across processes: on SQLite the file's write lock,
        taken by a transaction that ends with the ``with connect(...)`` block (committed, or
        rolled back when it raises), as every block is one transaction on PostgreSQL."""
        self.dialect.serialize(self.raw, f"studies:{name}")

    def insert(self, table: str, rows: pd.DataFrame) -> int:
        """Insert every row of ``rows`` (its columns name the table's columns)."""
        return self._write(table, rows, None)

    def upsert(self, table: str, rows: pd.DataFrame, keys: Sequence[str]) -> int:
        """Insert every row of ``rows``; a row whose ``keys`` are already stored replaces it."""
        return self._write(table, rows, list(keys))

    def copy_rows(self, table: str, columns: list[str], rows) -> None:
        """Insert rows (tuples in the order of ``columns``): the copier's bulk insert, the
        engine's own (``COPY`` on PostgreSQL)."""
        self.raw.copy_rows(table, columns, ([_plain(v) for v in row] for row in rows))

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


@contextlib.contextmanager
def connect(
    db: str | Path | None = None, *, read_only: bool = False
) -> Iterator[StudiesConnection]:
    """A connection to the studies database (:func:`etclib.config.studies_db`), closed (or, on
    PostgreSQL, committed and given back to the pool) on exit.

    A file and its folder are created on first write; ``read_only`` on a file that does not
    exist yet gives an in-memory database (every table empty), so reading never creates files.
    On PostgreSQL the tables are created on first use, reading or writing.
    """
    target = config.studies_db(db)
    dialect = dialect_for(target)
    opener = _OPENERS.get(dialect.name)
    if opener is None:
        raise StoreError(
            f"The studies database cannot be kept in {target} ({dialect.name}). Point "
            f"ETC_STUDIES_DB at a file (SQLite) or a postgresql:// URL; engines: "
            f"{', '.join(_OPENERS)}."
        )
    with opener(target, read_only) as con:
        yield con


def _store(path: Path, _why: str) -> Any:
    return _NewFile(path)


def _error(path: str, message: str) -> StoreError:
    return StoreError(message)


#: How the one upgrade function (:mod:`etclib.storage.upgrade`) sees the studies database.
UPGRADE = storage_upgrade.Store(
    label="studies database", make=_store, error=_error, logger="etclib.studies"
)


class _NewFile:
    """A new studies file being filled by the upgrade: every registered study's tables."""

    dialect = sqlite_engine.DIALECT

    def __init__(self, path: Path) -> None:
        self.con = sqlite_engine.connect(path)
        for name, ddl in schemas().items():
            self.dialect.create_schema(self.con, path, name, ddl)

    @contextlib.contextmanager
    def write(self) -> Iterator[Any]:
        with self.dialect.transaction(self.con):
            yield self.con

    def cursor(self) -> Any:
        return self.con

    def close(self) -> None:
        self.con.close()


def _upgrade_legacy(path: Path) -> None:
    """Upgrade a DuckDB studies file at ``path`` (or the old default beside a missing default)
    to SQLite, in place."""
    old = storage_upgrade.legacy_default(
        path, config.DEFAULT_STUDIES_DB, config.LEGACY_STUDIES_DB, config.using_default_studies()
    )
    if old is not None:
        storage_upgrade.upgrade(old, path, UPGRADE)
    elif legacy.is_duckdb(path):
        storage_upgrade.upgrade(path, path, UPGRADE)


@contextlib.contextmanager
def _file(target: str | Path, read_only: bool) -> Iterator[StudiesConnection]:
    path = Path(target)
    try:
        _upgrade_legacy(path)
        if read_only and not path.exists():
            con = sqlite_engine.connect(":memory:")
        else:
            if path.is_file() and path.stat().st_size and sqlite_engine.not_sqlite(path):
                raise StoreError(
                    f"Cannot open the studies database {path}: the file does not start with "
                    "SQLite's header. Check ETC_STUDIES_DB, or move the file aside to start a "
                    "new database."
                )
            path.parent.mkdir(parents=True, exist_ok=True)
            con = sqlite_engine.connect(path)
    except (sqlite3.Error, OSError) as exc:
        raise StoreError(
            f"Cannot open the studies database {path}: {exc}. Check ETC_STUDIES_DB and that "
            "its folder is writable."
        ) from exc
    try:
        yield StudiesConnection(con, sqlite_engine.DIALECT, str(path), path)
        if con.raw.in_transaction:  # begun by serialize(): committed with the block
            con.execute("COMMIT")
    finally:
        con.close()  # a transaction still open (the block raised) is rolled back


@contextlib.contextmanager
def _server(target: str | Path, read_only: bool) -> Iterator[StudiesConnection]:
    import psycopg

    url = str(target)
    where = redacted(url)
    try:
        lent = server.pool(url).connection()
        raw = lent.__enter__()
    except (psycopg.Error, OSError) as exc:
        raise StoreError(
            f"Cannot open the studies database {where}: {exc}. Check ETC_STUDIES_DB (user, "
            "password, host, port, database) and that the server runs."
        ) from exc
    # the pool commits the block's transaction when it ends and rolls it back on an error
    with contextlib.ExitStack() as stack:
        stack.push(lent.__exit__)
        yield StudiesConnection(server.Connection(raw), dialect_for(url), where, url)


#: Storage engine (:mod:`etclib.storage.dialects`) -> how a studies connection is opened.
_OPENERS = {"sqlite": _file, "postgresql": _server}


# --- the studies' schemas, and moving a file into PostgreSQL ---------------------------------

#: Study name -> its ``CREATE TABLE IF NOT EXISTS`` statements, filled by :func:`register` as
#: each study module is imported (importing :mod:`etclib.studies` imports them all). No
#: foreign keys between studies: any order copies.
_SCHEMAS: dict[str, str] = {}


def register(name: str, ddl: str) -> str:
    """Declare study ``name``'s tables (``CREATE TABLE IF NOT EXISTS`` statements); returns
    ``ddl``. A second registration of a name with other statements is an error (the
    registries' one collision rule, :func:`etclib.registry.add`: two studies would share one
    schema name on PostgreSQL)."""
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


def migrate(source: str | Path, url: str, *, replace: bool = False) -> copier.MigrationReport:
    """Copy every study table of the studies file ``source`` (SQLite, or DuckDB of an earlier
    version; only read) into the PostgreSQL database ``url`` with the storage layer's table
    copier, and compare each table (count and SHA-256, :func:`etclib.storage.copier.rows_digest`).

    The tables are created on the target first (the studies' own schemas); the copy is one
    transaction, so a failure leaves the target as it was. A target whose study tables hold
    rows is refused (:class:`StoreError`) unless ``replace``: those rows are then deleted first,
    in the same transaction. A table the file does not have (a study never run) copies as
    empty.
    """
    if dialect_for(source).server:
        raise StoreError(
            f"migrate copies a studies file into PostgreSQL; the source {redacted(str(source))!r} "
            "is a server. Give the file (--from, or ETC_STUDIES_DB) to copy."
        )
    if not dialect_for(url).server:
        raise StoreError(
            f"--to {url!r} is not a PostgreSQL URL; give postgresql://USER:PASSWORD@HOST/DB."
        )
    path = Path(source)
    if not path.is_file():
        raise StoreError(
            f"There is no studies file at {path}. Give the file to copy with --from "
            "(or ETC_STUDIES_DB)."
        )
    where = redacted(url)
    report = copier.MigrationReport(str(path), where)
    names = tables()
    with _source(path) as src:
        have = dialect_for(src)
        layout = {table: have.columns(src, table) for table in names}
        with connect(url) as dst:
            for name, ddl in schemas().items():
                dst.schema(name, ddl)
            filled = copier.filled_tables(dst, names)
            if filled and not replace:
                raise StoreError(
                    f"The studies database {where} is not empty: {filled}. Nothing was copied. "
                    "Give --replace to delete its study rows and copy this file in their "
                    "place, or point --to at an empty database."
                )
            for table, cols in layout.items():
                dst.execute(f"DELETE FROM {table}")
                if cols:
                    copier.copy_table(src, dst, table, cols, ", ".join(cols))
        with connect(url, read_only=True) as dst:
            for table, cols in layout.items():
                n_src, sha_src = _digest(src, table, cols)
                n_dst, sha_dst = _digest(dst, table, cols)
                report.tables[table] = copier.TableCheck(n_src, n_dst, sha_src, sha_dst)
    return report


@contextlib.contextmanager
def _source(path: Path) -> Iterator[Any]:
    """The file to copy, only read: a DuckDB file of an earlier version as it is, else the
    SQLite file."""
    if legacy.is_duckdb(path):
        con = legacy.connect(path)
        try:
            yield con
        finally:
            con.close()
        return
    with connect(path, read_only=True) as con:
        yield con


def _digest(con: Any, table: str, cols: list[str]) -> tuple[int, str]:
    if not cols:  # a table the source file never had: no rows
        return copier.rows_digest([])
    return copier.table_digest(con, table, cols)
