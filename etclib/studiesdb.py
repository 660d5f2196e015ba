"""The judge-vs-human studies database on either engine: a DuckDB file or a PostgreSQL server.

``ETC_STUDIES_DB`` (:func:`etclib.config.studies_db`) is a file path (DuckDB, the default
``data/studies.duckdb``) or a ``postgresql://`` URL (docs/deploy.md). The studies
(:mod:`etclib.annotation`, :mod:`etclib.labeljudge`, :mod:`etclib.causes`) write their SQL once,
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

On PostgreSQL one ``with connect(...)`` block is one transaction on a connection lent by the
process's pool: committed when the block ends, rolled back when it raises.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import config, serverdb
from .errors import StoreError


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
    if serverdb.is_url(target):
        with _server(str(target)) as con:
            yield con
        return
    import duckdb

    path = Path(target)
    try:
        if read_only and not path.exists():
            raw = duckdb.connect(":memory:")
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            raw = duckdb.connect(str(path))
    except (duckdb.Error, OSError) as exc:
        raise StoreError(
            f"Cannot open the studies database {path}: {exc}. Check ETC_STUDIES_DB and that no "
            "other process holds the file open for writing."
        ) from exc
    try:
        yield StudiesConnection(raw, "duckdb", str(path))
    finally:
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
