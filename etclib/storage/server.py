"""Connections to a PostgreSQL server, for the postgresql dialect
(:mod:`etclib.storage.dialects.postgresql`), behind the small connection API the embedded
engine has.

The project's stores (the leaderboard, the judge-vs-human studies, the judge cache) are SQLite
files by default. Each setting that names one (``ETC_LEADERBOARD_DB``, ``ETC_STUDIES_DB``,
``ETC_JUDGE_CACHE``) also takes a ``postgresql://`` URL, for several site replicas and scoring
workers on other machines sharing one database (docs/deploy.md); which engine a setting names is
decided by :func:`etclib.storage.dialect_for` (the URL scheme). This module is the one place that
knows how such a URL is opened:

- :func:`pool` gives the process's connection pool for a URL (psycopg 3 + psycopg_pool, opened
  once per URL and closed at exit);
- :func:`connect` opens one connection whose ``execute(sql, params)`` takes the ``?``
  placeholders the embedded engines use (:func:`translate`), so a query is written once for
  both engines;

psycopg is imported only when a URL is used; without it the error says what to install.
"""

from __future__ import annotations

import atexit
import threading
from typing import Any

from ..errors import ConfigError, DependencyError
from .urls import redacted

_lock = threading.Lock()
_pools: dict[str, Any] = {}


def translate(sql: str, has_params: bool = True) -> str:
    """``?`` placeholders (outside quoted literals and identifiers) to psycopg's ``%s``.

    With parameters, psycopg reads every ``%`` as the start of a placeholder, so literal ``%``
    signs are doubled first (in literals too: ``LIKE 'a%'`` stays ``LIKE 'a%'`` once sent).
    """
    if not has_params:
        return sql
    out: list[str] = []
    quote = ""
    for ch in sql:
        if quote:
            out.append("%%" if ch == "%" else ch)
            if ch == quote:
                quote = ""
        elif ch in ("'", '"'):
            quote = ch
            out.append(ch)
        elif ch == "?":
            out.append("%s")
        elif ch == "%":
            out.append("%%")
        else:
            out.append(ch)
    return "".join(out)


def _psycopg():
    try:
        import psycopg
    except ImportError as exc:  # pragma: no cover - psycopg is in requirements.txt
        raise DependencyError(
            "A postgresql:// database needs psycopg 3: pip install 'psycopg[binary]' psycopg-pool "
            "(or pip install 'etclib[postgres]')."
        ) from exc
    return psycopg


class Connection:
    """A psycopg connection that takes ``?`` placeholders, like DuckDB's and SQLite's."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    def execute(self, sql: str, params: list | tuple | None = None):
        """Run one statement; the cursor (``fetchone``/``fetchall``/``rowcount``)."""
        return self.raw.execute(translate(sql, params is not None), params)

    def executemany(self, sql: str, rows: list | tuple) -> None:
        with self.raw.cursor() as cur:
            cur.executemany(translate(sql), rows)

    def copy_rows(self, table: str, columns: list[str], rows) -> None:
        """``COPY`` rows (tuples in the order of ``columns``) into ``table``: the postgresql
        dialect's bulk insert (:meth:`etclib.storage.dialect.Dialect.insert_rows`)."""
        import numpy as np

        with (
            self.raw.cursor() as cur,
            cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy,
        ):
            for row in rows:
                copy.write_row([v.item() if isinstance(v, np.generic) else v for v in row])

    def commit(self) -> None:
        self.raw.commit()

    def rollback(self) -> None:
        self.raw.rollback()

    def close(self) -> None:
        self.raw.close()


def connect(url: str, *, autocommit: bool = False) -> Connection:
    """One new connection to the server (the caller closes it)."""
    psycopg = _psycopg()
    try:
        return Connection(psycopg.connect(url, autocommit=autocommit))
    except psycopg.Error as exc:
        raise ConfigError(
            f"Cannot connect to the PostgreSQL database {redacted(url)}: {exc}".strip()
            + " Check the URL (user, password, host, port, database) and that the server runs."
        ) from exc


def pool(url: str, *, max_size: int = 10):
    """The process's connection pool for ``url`` (opened on first use; closed at exit).

    ``with pool(url).connection() as raw:`` lends a psycopg connection; wrap it in
    :class:`Connection` for ``?`` placeholders.
    """
    with _lock:
        existing = _pools.get(url)
        if existing is not None:
            return existing
        made = new_pool(url, max_size=max_size)
        _pools[url] = made
        return made


_schemas_made: set[tuple[str, str]] = set()


def ensure_schema(url: str, name: str, ddl: str) -> None:
    """Run ``ddl`` (``CREATE ... IF NOT EXISTS`` statements) once per process for ``url``.

    Several processes starting together would race in ``CREATE TABLE IF NOT EXISTS`` (the server
    can then report a duplicate type); the statements run in one transaction under a
    transaction-level advisory lock named after ``name``, so they run one process at a time.
    """
    with _lock:
        if (url, name) in _schemas_made:
            return
    with pool(url).connection() as raw, raw.transaction():
        raw.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [f"schema:{name}"])
        raw.execute(ddl)
    with _lock:
        _schemas_made.add((url, name))


def close_pool(url: str) -> None:
    """Close this process's pool for ``url``, if open (before the database is dropped)."""
    with _lock:
        made = _pools.pop(url, None)
        for done in [k for k in _schemas_made if k[0] == url]:
            _schemas_made.discard(done)
    if made is not None:
        made.close()


def new_pool(
    url: str, *, max_size: int = 10, configure=None, name: str = "etc", timeout: float = 30
):
    """A new, open connection pool for ``url`` that the caller owns and closes.

    ``configure(connection)`` runs on each new connection (e.g. to register type loaders).
    :class:`ConfigError` (password-free) when the server cannot be reached in ``timeout`` s; a
    refused login fails at once (one plain connection first: a pool would retry it until then).
    """
    connect(url).close()
    from psycopg_pool import ConnectionPool

    made = ConnectionPool(
        url, min_size=1, max_size=max_size, open=False, name=name, configure=configure
    )
    try:
        made.open(wait=True, timeout=timeout)
    except Exception as exc:
        made.close()
        raise ConfigError(
            f"Cannot connect to the PostgreSQL database {redacted(url)}: {exc}. Check the URL "
            "(user, password, host, port, database) and that the server runs."
        ) from exc
    return made


def close_pools() -> None:
    """Close every pool this process opened."""
    with _lock:
        for made in _pools.values():
            made.close()
        _pools.clear()


atexit.register(close_pools)
