"""The judge-vs-human studies database on either engine: a DuckDB file or a PostgreSQL server.

``ETC_STUDIES_DB`` (:func:`etclib.config.studies_db`) is a file path (DuckDB, the default
``data/studies.duckdb``) or a ``postgresql://`` URL (docs/deploy.md). Each study of
:mod:`etclib.studies` registers its tables here when it is imported (:func:`register`); this
module imports none of them (an import-linter contract keeps it so). The studies write their
SQL once,
in the subset both engines read the same way: ``?`` placeholders, ``INSERT ... ON CONFLICT``,
``CAST(? AS VARCHAR) IS NULL`` for optional filters, times passed as parameters. What differs
between the engines is here, behind :class:`StudiesConnection`:

- :meth:`~StudiesConnection.frame`: a query's rows as a pandas DataFrame;
- :meth:`~StudiesConnection.insert` / :meth:`~StudiesConnection.upsert`: many rows at once
  (DuckDB reads the DataFrame in place; PostgreSQL gets one pipelined batch);
- :meth:`~StudiesConnection.transaction` and :meth:`~StudiesConnection.serialize` (one writer at
  a time for a read-then-write step; DuckDB's file already has one writing process);
- :meth:`~StudiesConnection.schema`: ``CREATE TABLE IF NOT EXISTS`` statements, run once per
  process on PostgreSQL (:func:`etclib.serverdb.ensure_schema`).

:func:`migrate` copies an existing DuckDB file into PostgreSQL (``etclib studies migrate --to
URL``), every table of every study, with each table's count and SHA-256 compared afterwards.

On PostgreSQL one ``with connect(...)`` block is one transaction on a connection lent by the
process's pool: committed when the block ends, rolled back when it raises.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import config, duckfile, registry
from ..duckfile import not_duckdb
from ..errors import StoreError
from ..storage import copier, dialect_for
from ..storage import server as serverdb


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
    """One connection to the studies database; ``execute(sql, params)`` takes ``?``."""

    def __init__(self, raw: Any, engine: str, where: str, url: str | None = None):
        self.raw = raw
        self.engine = engine  # "duckdb" or "postgres"
        self.where = where
        self._url = url

    @property
    def server(self) -> bool:
        return self.engine == "postgres"

    def execute(self, sql: str, params: Sequence[Any] | None = None):
        """Run one statement; the result has ``fetchone`` and ``fetchall``."""
        if self.server:
            return serverdb.Connection(self.raw).execute(
                sql, None if params is None else list(params)
            )
        return self.raw.execute(sql, list(params) if params is not None else [])

    def frame(self, sql: str, params: Sequence[Any] | None = None) -> pd.DataFrame:
        """The query's rows as a DataFrame (column names from the query)."""
        if not self.server:
            return self.raw.execute(sql, list(params or [])).df()
        cur = self.execute(sql, list(params or []))
        names = [c.name for c in cur.description]
        return pd.DataFrame.from_records(cur.fetchall(), columns=names)

    def schema(self, name: str, ddl: str) -> None:
        """Create the tables of ``ddl`` if missing (once per process on a server)."""
        if self.server:
            assert self._url is not None
            serverdb.ensure_schema(self._url, name, ddl)
        else:
            self.raw.execute(ddl)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """All statements of the block, or none of them."""
        if self.server:
            with self.raw.transaction():
                yield
            return
        self.raw.execute("BEGIN")
        try:
            yield
        except BaseException:
            self.raw.execute("ROLLBACK")
            raise
        self.raw.execute("COMMIT")

    def serialize(self, name: str) -> None:
        """Hold the lock ``name`` until the current transaction ends (PostgreSQL), so that a
        read-then-write step runs one writer at a time; nothing to do for a DuckDB file."""
        if self.server:
            self.execute("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", [name])

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
        names = ", ".join(cols)
        tail = ""
        if keys:
            update = ", ".join(f"{c} = excluded.{c}" for c in cols if c not in keys)
            tail = f" ON CONFLICT ({', '.join(keys)}) DO UPDATE SET {update}"
        if self.server:
            marks = ", ".join("?" * len(cols))
            values = [tuple(_plain(v) for v in row) for row in rows.itertuples(index=False)]
            serverdb.Connection(self.raw).executemany(
                f"INSERT INTO {table} ({names}) VALUES ({marks}){tail}", values
            )
        else:
            if hasattr(self.raw, "complete"):  # DuckDB 2 registers nothing over an open result
                self.raw.complete()
            self.raw.register("incoming_rows", rows)
            try:
                self.raw.execute(
                    f"INSERT INTO {table} ({names}) SELECT {names} FROM incoming_rows{tail}"
                )
            finally:
                self.raw.unregister("incoming_rows")
        return len(rows)


#: Held while this process opens or closes a studies file: DuckDB shares one database instance
#: per file among a process's connections, and a thread opening the file while another closes
#: its last connection can fail with "Unique file handle conflict ... already attached" (seen
#: by a visitor of the Causes page in a browser test, and with six threads writing).
_opening = threading.Lock()


@contextlib.contextmanager
def connect(
    db: str | Path | None = None, *, read_only: bool = False
) -> Iterator[StudiesConnection]:
    """A connection to the studies database (:func:`etclib.config.studies_db`), closed (or, on
    PostgreSQL, committed and given back to the pool) on exit.

    A DuckDB file and its folder are created on first write; ``read_only`` on a file that does
    not exist yet gives an in-memory database (every table empty), so reading never creates
    files. On PostgreSQL the tables are created on first use, reading or writing.
    """
    target = config.studies_db(db)
    if dialect_for(target).server:
        with _server(str(target)) as con:
            yield con
        return
    import duckdb

    path = Path(target)
    try:
        with _opening:
            if read_only and not path.exists():
                raw = duckfile.connect(":memory:")
            else:
                reason = not_duckdb(path)
                if reason:
                    raise StoreError(
                        f"Cannot open the studies database {path}: {reason}. Check "
                        "ETC_STUDIES_DB, or move the file aside to start a new database."
                    )
                path.parent.mkdir(parents=True, exist_ok=True)
                raw = duckfile.connect(path)
    except (duckdb.Error, OSError) as exc:
        raise StoreError(
            f"Cannot open the studies database {path}: {exc}. Check ETC_STUDIES_DB and that no "
            "other process holds the file open for writing."
        ) from exc
    try:
        yield StudiesConnection(raw, "duckdb", str(path))
    finally:
        with _opening:
            raw.close()


@contextlib.contextmanager
def _server(url: str) -> Iterator[StudiesConnection]:
    import psycopg

    where = serverdb.redacted(url)
    try:
        lent = serverdb.pool(url).connection()
        raw = lent.__enter__()
    except (psycopg.Error, OSError) as exc:
        raise StoreError(
            f"Cannot open the studies database {where}: {exc}. Check ETC_STUDIES_DB (user, "
            "password, host, port, database) and that the server runs."
        ) from exc
    # the pool commits the block's transaction when it ends and rolls it back on an error
    with contextlib.ExitStack() as stack:
        stack.push(lent.__exit__)
        yield StudiesConnection(raw, "postgres", where, url)


# --- moving a DuckDB file into PostgreSQL ----------------------------------------------------

#: Study name -> its ``CREATE TABLE IF NOT EXISTS`` statements, filled by :func:`register` as
#: each study module is imported (importing :mod:`etclib.studies` imports them all). No
#: foreign keys between studies: any order copies.
_SCHEMAS: dict[str, str] = {}
#: Rows fetched from the source at a time.
CHUNK = 50_000


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


def _columns(con: StudiesConnection, table: str) -> list[str]:
    rows = con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = ? "
        "AND table_schema = current_schema() ORDER BY ordinal_position",
        [table],
    ).fetchall()
    return [r[0] for r in rows]


def _digest(con: StudiesConnection, table: str, cols: list[str]) -> tuple[int, str]:
    if not cols:  # a table the source file never had: no rows
        return copier.rows_digest([])
    return copier.rows_digest(con.execute(f"SELECT {', '.join(cols)} FROM {table}").fetchall())


def migrate(source: str | Path, url: str, *, replace: bool = False) -> copier.MigrationReport:
    """Copy every study table of the DuckDB file ``source`` into the PostgreSQL database ``url``
    and compare each table (count and SHA-256, :func:`etclib.copier.rows_digest`).

    The tables are created on the target first (the studies' own schemas); the copy is one
    transaction, so a failure leaves the target as it was. A target whose study tables hold
    rows is refused (:class:`StoreError`) unless ``replace``: those rows are then deleted first,
    in the same transaction. A table the file does not have (a study never run) copies as
    empty. The file is only read.
    """
    if dialect_for(source).server:
        raise StoreError(
            f"migrate copies a DuckDB studies file into PostgreSQL; the source {source!r} is a "
            "server. Give the file (--from, or ETC_STUDIES_DB) to copy."
        )
    if not dialect_for(url).server:
        raise StoreError(
            f"--to {url!r} is not a PostgreSQL URL; give postgresql://USER:PASSWORD@HOST/DB."
        )
    path = Path(source)
    if not path.is_file():
        raise StoreError(
            f"There is no studies file at {path}. Give the DuckDB file to copy with --from "
            "(or ETC_STUDIES_DB)."
        )
    where = serverdb.redacted(url)
    report = copier.MigrationReport(str(path), where)
    names = tables()
    with connect(path, read_only=True) as src:
        layout = {table: _columns(src, table) for table in names}
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
                if not cols:
                    continue
                marks = ", ".join("?" * len(cols))
                insert = f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({marks})"
                rows = src.execute(
                    f"SELECT {', '.join(cols)} FROM {table} ORDER BY {', '.join(cols)}"
                )
                while chunk := rows.fetchmany(CHUNK):
                    serverdb.Connection(dst.raw).executemany(insert, chunk)
        with connect(url, read_only=True) as dst:
            for table, cols in layout.items():
                n_src, sha_src = _digest(src, table, cols)
                n_dst, sha_dst = _digest(dst, table, cols)
                report.tables[table] = copier.TableCheck(n_src, n_dst, sha_src, sha_dst)
    return report
