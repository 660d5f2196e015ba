"""PostgreSQL: a server shared by many processes on many machines.

Several transactions write at once: rows that decide a write are locked (``FOR UPDATE``, a
claim ``SKIP LOCKED``), checks spanning rows take an advisory lock on a name, bulk inserts go
through ``COPY``, leases use the server's clock. Connections come from a psycopg pool and take
``?`` placeholders (:func:`translate`). Claims are session-level advisory locks, which the
server drops with their session.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterator
from typing import Any

from etclib.storage import redacted
from etclib.storage.dialect import Dialect, Fault, Rows, plain

#: The server's clock, in the naive UTC the TIMESTAMP columns hold.
NOW = "timezone('UTC', clock_timestamp())"
DEFAULT_POOL_SIZE = 10


#: A quoted literal or identifier (to the end when unclosed), or a ``?`` or ``%`` outside one.
_TOKENS = re.compile(r"'[^']*(?:'|$)|\"[^\"]*(?:\"|$)|[?%]")


def translate(sql: str, has_params: bool = True) -> str:
    """``?`` placeholders (outside quoted literals and identifiers) to psycopg's ``%s``; with
    parameters psycopg reads every ``%`` as a placeholder, so literal ones are doubled."""
    if not has_params:
        return sql
    return _TOKENS.sub(lambda m: "%s" if m[0] == "?" else m[0].replace("%", "%%"), sql)


def _psycopg():
    try:
        import psycopg
    except ImportError as exc:  # pragma: no cover - psycopg is in requirements.txt
        from etclib.core.errors import DependencyError

        raise DependencyError(
            "A postgresql:// database needs psycopg 3: pip install 'psycopg[binary]' psycopg-pool "
            "(or pip install 'etclib[postgres]')."
        ) from exc
    return psycopg


def reason(exc: BaseException) -> str:
    """A server error's text without any password (psycopg may quote the connection string)."""
    from etclib.core.redact import redact

    text = str(exc).strip() or type(exc).__name__
    text = re.sub(r"(postgres(?:ql)?://[^:/@\s]*:)[^@\s]*@", r"\1***@", text)
    return redact(re.sub(r"password=\S+", "password=***", text))


class Connection:
    """A psycopg connection that takes ``?`` placeholders, like the other engines'."""

    dialect: Dialect

    def __init__(self, raw: Any) -> None:
        self.raw = raw
        self.dialect = DIALECT

    def execute(self, sql: str, params: list | tuple | None = None):
        params = list(params) if params is not None else None
        return self.raw.execute(translate(sql, params is not None), params)

    def executemany(self, sql: str, rows: list | tuple) -> None:
        with self.raw.cursor() as cur:
            cur.executemany(translate(sql), rows)

    def copy_rows(self, table: str, columns: list[str], rows) -> None:
        """``COPY`` rows (tuples in the order of ``columns``) into ``table``."""
        with (
            self.raw.cursor() as cur,
            cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy,
        ):
            for row in rows:
                copy.write_row([plain(v) for v in row])

    def commit(self) -> None:
        self.raw.commit()

    def close(self) -> None:
        self.raw.close()


def _as_floats(connection) -> None:
    from psycopg.types.numeric import FloatLoader

    connection.adapters.register_loader("numeric", FloatLoader)


def connect(url: str, *, autocommit: bool = False) -> Connection:
    """One new connection to the server (the caller closes it)."""
    psycopg = _psycopg()
    try:
        raw = psycopg.connect(url, autocommit=autocommit)
    except psycopg.Error as exc:
        raise Fault("server", redacted(url), reason(exc)) from None
    _as_floats(raw)
    return Connection(raw)


class Reader:
    """Reads outside a write: each statement on a connection borrowed from the pool, its rows
    fetched before the connection goes back."""

    def __init__(self, lender: Lender, faults: Any) -> None:
        self.lender, self.faults, self.dialect = lender, faults, DIALECT

    def execute(self, sql: str, params: list | tuple | None = None) -> Rows:
        with self.faults(), self.lender.pool.connection() as raw:
            got = Connection(raw).execute(sql, params)
            rows = got.fetchall() if got.description else []
            return Rows(rows, got.description, got.rowcount)


class Lender:
    """A pool of connections to one server database (opened here, closed by :meth:`close`)."""

    def __init__(self, url: str, *, pool_size: int = DEFAULT_POOL_SIZE, timeout: float = 15, **_):
        connect(url).close()  # a wrong URL or password fails at once, not after the retries
        from psycopg_pool import ConnectionPool

        self.pool = ConnectionPool(
            url, min_size=1, max_size=pool_size, open=False, name="etc", configure=_as_floats
        )
        try:
            self.pool.open(wait=True, timeout=timeout)
        except Exception as exc:
            self.pool.close()
            raise Fault("server", redacted(url), reason(exc)) from None

    def reader(self, faults: Any) -> Reader:
        return Reader(self, faults)

    @contextlib.contextmanager
    def writer(self) -> Iterator[Connection]:
        with self.pool.connection() as raw, raw.transaction():
            yield Connection(raw)

    @contextlib.contextmanager
    def session(self) -> Iterator[Connection]:
        # the pool commits the block's transaction when it ends, rolls it back on an error
        with self.pool.connection() as raw:
            yield Connection(raw)

    def changed(self) -> bool:
        return False

    def check(self) -> None:
        pass

    def close(self) -> None:
        self.pool.close()


class Claims:
    """Session-level advisory locks on a connection of their own (a lock belongs to the
    session that took it, and the server drops it if the session dies)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._lock = threading.Lock()
        self._con: Connection | None = None

    def try_lock(self, key: str) -> bool:
        return self._advisory("pg_try_advisory_lock", key)

    def unlock(self, key: str) -> None:
        self._advisory("pg_advisory_unlock", key)

    def _advisory(self, function: str, key: str) -> bool:
        psycopg = _psycopg()
        with self._lock:
            try:
                if self._con is None:
                    self._con = connect(self.url, autocommit=True)
                sql = f"SELECT {function}(hashtextextended(?, 0))"
                return bool(self._con.execute(sql, [key]).fetchone()[0])
            except psycopg.Error as exc:
                # a lost session has lost its claims too: reconnect on the next claim
                self.close_quietly()
                raise Fault("server", redacted(self.url), reason(exc)) from None

    def close_quietly(self) -> None:
        if self._con is not None:
            with contextlib.suppress(Exception):
                self._con.close()
        self._con = None

    def close(self) -> None:
        with self._lock:
            self.close_quietly()


class PostgreSQL(Dialect):
    name = "postgresql"
    schemes = ("postgresql://", "postgres://")
    shared = True
    server = True
    for_update = " FOR UPDATE"
    skip_locked = " FOR UPDATE SKIP LOCKED"

    def connect(self, target: Any, **options: Any) -> Connection:
        return connect(str(target), **options)

    def lender(self, target: Any, **options: Any) -> Lender:
        return Lender(str(target), **options)

    def fault(self, exc: BaseException, where: str) -> Fault | None:
        try:
            import psycopg
            from psycopg_pool import PoolTimeout
        except ImportError:  # pragma: no cover
            return None
        if isinstance(
            exc, (psycopg.OperationalError, PoolTimeout, psycopg.errors.InsufficientPrivilege)
        ):
            return Fault("server", where, reason(exc))
        return None

    def claims(self, target: Any) -> Claims:
        return Claims(str(target))

    def ddl(self, sql: str) -> list[str]:
        return [re.sub(r"\bBLOB\b", "BYTEA", sql)]

    @contextlib.contextmanager
    def transaction(self, con: Any) -> Iterator[None]:
        with con.raw.transaction():
            yield

    def serialize(self, cur: Any, name: str) -> None:
        cur.execute("SELECT pg_advisory_xact_lock(hashtext(?))", [f"etc-leaderboard:{name}"])

    def next_id(self, cur: Any, sequence: str) -> int:
        return int(cur.execute("SELECT nextval(?)", [sequence]).fetchone()[0])

    def set_sequence(self, cur: Any, sequence: str, value: int) -> None:
        cur.execute("SELECT setval(?, ?)", [sequence, int(value)])

    def insert_rows(self, cur: Any, table: str, columns, rows) -> None:
        cur.copy_rows(table, list(columns), rows)

    def clock(self) -> tuple[str, list]:
        return NOW, []

    def older_than(self, column: str, seconds: float) -> tuple[str, list]:
        return f"{column} < {NOW} - make_interval(secs => ?)", [seconds]


DIALECT = PostgreSQL()
