"""The leaderboard on a PostgreSQL server (``ETC_LEADERBOARD_DB=postgresql://...``).

Many processes on many machines share the server: writes are transactions on pooled connections
(``ETC_LB_POOL_SIZE``), rows that decide a write are locked (the dialect's ``for_update``),
running jobs hold leases (:mod:`leaderboard.queue`), and server faults become
:class:`DatabaseServerError` with the URL shown without its password.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterator
from typing import Any

from etclib.storage import server
from etclib.storage.dialects.postgresql import DIALECT

from . import settings
from .db import Database
from .errors import DatabaseMissingError, DatabaseServerError, LeaderboardError


class ServerCursor(server.Connection):
    """A cursor of one PostgreSQL transaction with the DuckDB cursor's small API (bulk
    inserts: :meth:`etclib.storage.server.Connection.copy_rows`).

    ``execute(sql, params)`` takes ``?`` placeholders (:func:`etclib.storage.server.translate`) and
    returns an object with ``fetchone``, ``fetchall`` and ``description``.
    """

    dialect = DIALECT
    engine = DIALECT.name

    def execute(self, sql: str, params: list | tuple | None = None) -> _Rows:
        params = list(params) if params is not None else None
        got = self.raw.execute(server.translate(sql, params is not None), params)
        return _Rows(got.fetchall() if got.description else [], got.description)


class _Rows:
    """The fetched rows of one statement."""

    def __init__(self, rows: list[tuple], description: Any) -> None:
        self._rows = rows
        self._next = 0
        self.description = (
            [(c.name, c.type_code, None, None, None, None, None) for c in description]
            if description
            else None
        )

    def fetchone(self) -> tuple | None:
        if self._next >= len(self._rows):
            return None
        self._next += 1
        return self._rows[self._next - 1]

    def fetchall(self) -> list[tuple]:
        rest, self._next = self._rows[self._next :], len(self._rows)
        return rest


class _ServerReader:
    """:meth:`ServerDatabase.cursor`: each read borrows a pooled connection (or, inside this
    thread's write transaction, uses that transaction, which sees its own writes)."""

    dialect = DIALECT
    engine = DIALECT.name

    def __init__(self, db: ServerDatabase) -> None:
        self.db = db

    def execute(self, sql: str, params: list | tuple | None = None) -> _Rows:
        inside = getattr(self.db._local, "cursor", None)
        if inside is not None:
            return inside.execute(sql, params)
        with self.db._storage_faults(), self.db._pool.connection() as raw:
            return ServerCursor(raw).execute(sql, params)


def _as_floats(connection) -> None:
    """PostgreSQL's ``numeric`` (``avg``, ``sum``) as Python floats, as DuckDB gives DOUBLE."""
    from psycopg.types.numeric import FloatLoader

    connection.adapters.register_loader("numeric", FloatLoader)


class ServerDatabase(Database):
    """A board on a PostgreSQL server, shared by many processes (site replicas, workers).

    No lock file and no resume on opening: writes are transactions on pooled connections, rows
    that decide a write are locked (:mod:`leaderboard.engine`), and a running job holds a lease
    that its worker renews (:meth:`keep_alive`); another worker claims it again once the lease
    has expired (:func:`leaderboard.queue.claim`).
    """

    dialect = DIALECT

    def __init__(self, url: str, *, create: bool = True, source: str = "") -> None:
        from etclib.errors import ConfigError
        from etclib.storage.server import connect, new_pool, redacted

        self.url = url
        self._init_common(redacted(url))
        #: What messages and ``db.path`` show: the URL without its password.
        self.path = self.label
        self._local = threading.local()
        try:  # one connection first: a wrong URL fails at once, not after the pool's retries
            connect(url).close()
            self._pool = new_pool(
                url, max_size=settings.pool_size(), configure=_as_floats, timeout=15
            )
        except ConfigError as exc:
            raise DatabaseServerError(self.label, _server_reason(exc.__cause__ or exc)) from None
        try:
            self.created = self._version(self.cursor()) == 0
            if self.created and not create:
                raise DatabaseMissingError(self.label, source or "set by ETC_LEADERBOARD_DB")
            self._migrate()
            self._backfill()
        except BaseException:
            self._pool.close()
            raise

    def cursor(self) -> _ServerReader:
        if self.closed:
            raise LeaderboardError(
                f"The leaderboard database {self.label} was closed; call open_db() again."
            )
        return _ServerReader(self)

    @contextlib.contextmanager
    def write(self) -> Iterator[ServerCursor]:
        """A cursor inside one transaction on a pooled connection (committed at the end,
        rolled back on an error); a server fault becomes a :class:`StorageError`."""
        if getattr(self._local, "cursor", None) is not None:
            raise LeaderboardError("a leaderboard write inside another write of the same thread")
        if self.closed:
            raise LeaderboardError(
                f"The leaderboard database {self.label} was closed; call open_db() again."
            )
        with self._storage_faults(), self._pool.connection() as raw, raw.transaction():
            cur = ServerCursor(raw)
            self._local.cursor = cur
            try:
                yield cur
            finally:
                self._local.cursor = None

    def query_df(self, sql: str, params: list | tuple | None = None):
        """A read query as a pandas DataFrame."""
        import pandas as pd

        res = self.cursor().execute(sql, params or [])
        return pd.DataFrame(res.fetchall(), columns=[d[0] for d in res.description or []])

    @contextlib.contextmanager
    def _storage_faults(self) -> Iterator[None]:
        import psycopg
        from psycopg_pool import PoolTimeout

        try:
            yield
        except (psycopg.OperationalError, PoolTimeout) as exc:
            raise DatabaseServerError(self.label, _server_reason(exc)) from None
        except psycopg.errors.InsufficientPrivilege as exc:
            raise DatabaseServerError(self.label, _server_reason(exc)) from None

    def close(self) -> None:
        """Stop this process's workers, put its running jobs back, close its connections."""
        if self.closed:
            return
        self._stop_work()
        self.closed = True
        self._pool.close()
        self._unregister(self.url)


def _server_reason(exc: BaseException) -> str:
    """A server error's text without any password (psycopg may quote the connection string)."""
    from etclib.redact import redact

    text = str(exc).strip() or type(exc).__name__
    text = re.sub(r"(postgres(?:ql)?://[^:/@\s]*:)[^@\s]*@", r"\1***@", text)
    text = re.sub(r"password=\S+", "password=***", text)
    return redact(text)
