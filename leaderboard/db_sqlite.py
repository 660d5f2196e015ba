"""The embedded board: one SQLite file in WAL mode, shared by the processes of one machine.

The site, ``python -m leaderboard`` commands, ``worker`` processes and further site processes
open the same file at once: reads never wait (WAL), writes take the file's write lock at their
start (``BEGIN IMMEDIATE``) and wait for one another up to the busy timeout. Running jobs hold
leases as on PostgreSQL (:mod:`leaderboard.queue`), so a killed worker's jobs are claimed again
once their lease expires, and a process's caches are dropped when another process commits
(``PRAGMA data_version``). Each thread has its own connection.

A board file written by the earlier DuckDB engine is upgraded on opening
(:mod:`leaderboard.upgrade`); any other file that is not a SQLite database is refused with a
clear :class:`StorageError`, as is a damaged one (``PRAGMA quick_check`` on opening).
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path

from etclib.duckfile import not_duckdb
from etclib.storage.dialects import duckdb as legacy
from etclib.storage.dialects.sqlite import DIALECT, Connection, connect, not_sqlite

from . import upgrade
from .db import Database, _check_path, _directory_error
from .errors import (
    DatabaseCorruptError,
    DatabaseUnwritableError,
    LeaderboardError,
    StorageError,
)

_UNWRITABLE = {
    "readonly": "read-only file system or no permission to write",
    "unable to open": "permission denied",
    "disk is full": "no space left on device",
    "disk i/o error": "disk I/O error",
}
_CORRUPT = ("not a database", "malformed", "corrupt")


def storage_error(path: Path, exc: BaseException) -> StorageError | None:
    """The clear error for a SQLite failure that is the file's fault, else None."""
    if not isinstance(exc, sqlite3.Error):
        return None
    low = str(exc).lower()
    for hint, reason in _UNWRITABLE.items():
        if hint in low:
            if hint == "unable to open" and path.is_dir():
                return _directory_error(path)
            return DatabaseUnwritableError(str(path), str(path.parent), reason)
    if any(h in low for h in _CORRUPT):
        return DatabaseCorruptError(str(path), str(exc))
    if "locked" in low or "busy" in low:
        return StorageError(
            str(path),
            f"The leaderboard database {path} stayed locked by another process's write for "
            "longer than the busy timeout; nothing was written. Try again; if it persists, "
            "look for a process stuck in a write (e.g. a long `migrate`).",
        )
    return None


class SQLiteDatabase(Database):
    """The embedded board (see the module's text)."""

    dialect = DIALECT

    def __init__(self, path: Path, *, create: bool = False, source: str = "") -> None:
        self.path = path
        self._init_common(str(path))
        old = upgrade.legacy_default(path)
        if old is not None:  # the default board of the DuckDB days, under its old name
            upgrade.upgrade(old, path, SQLiteDatabase)
        self.created = _check_path(path, create, source)
        if not self.created and legacy.is_duckdb(path):
            upgrade.upgrade(path, path, SQLiteDatabase)
        elif not self.created and path.stat().st_size == 0:
            raise DatabaseCorruptError(str(path), "the file is empty (0 bytes)")
        elif not self.created and not_sqlite(path):
            what = not_duckdb(path) or ""
            what = what.replace(", not a DuckDB database", "").replace(
                "the file does not start with DuckDB's header: not a DuckDB database",
                "the file does not start with SQLite's header",
            )
            raise DatabaseCorruptError(str(path), what or "not a SQLite database")
        self._local = threading.local()
        # weak: a thread that ends (Streamlit runs each script run in a thread of its own)
        # drops its connection, which SQLite then closes; close() closes those still alive
        self._connections: weakref.WeakSet[Connection] = weakref.WeakSet()
        self._connections_lock = threading.Lock()
        self._watch_lock = threading.Lock()
        self._seen_version: int | None = None
        try:
            with self._storage_faults():
                self._watch = connect(path)
                self._check_integrity()
            self._migrate()
            self._backfill()
            self._changed_elsewhere()
        except BaseException:
            self._close_connections()
            if self.created:
                for leftover in (path, *_sidecars(path)):
                    with contextlib.suppress(OSError):
                        leftover.unlink()
            raise

    # --- connections -------------------------------------------------------------------------

    def cursor(self) -> Connection:
        """This thread's connection (reads outside a write see the last committed state)."""
        if self.closed:
            raise LeaderboardError(
                f"The leaderboard database {self.path} was closed; call open_db() again."
            )
        con = getattr(self._local, "con", None)
        if con is None:
            with self._storage_faults():
                con = connect(self.path)
            self._local.con = con
            with self._connections_lock:
                self._connections.add(con)
        return con

    @contextlib.contextmanager
    def write(self) -> Iterator[Connection]:
        """This thread's connection inside one ``BEGIN IMMEDIATE`` transaction (committed at
        the end, rolled back on an error); a storage fault becomes a :class:`StorageError`."""
        if getattr(self._local, "writing", False):
            raise LeaderboardError("a leaderboard write inside another write of the same thread")
        con = self.cursor()
        with self._storage_faults():
            con.raw.execute("BEGIN IMMEDIATE")
            self._local.writing = True
            try:
                yield con
            except BaseException:
                with contextlib.suppress(Exception):
                    con.raw.execute("ROLLBACK")
                raise
            finally:
                self._local.writing = False
            con.raw.execute("COMMIT")

    def query_df(self, sql: str, params: list | tuple | None = None):
        """A read query as a pandas DataFrame."""
        import pandas as pd

        with self._storage_faults():
            res = self.cursor().execute(sql, params or [])
            rows = res.fetchall()
        return pd.DataFrame(rows, columns=[d[0] for d in res.description or []])

    @contextlib.contextmanager
    def _storage_faults(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            err = storage_error(self.path, exc)
            if err is not None:
                raise err from None
            raise

    def _changed_elsewhere(self) -> bool:
        """Whether a commit happened on another connection (any process) since last asked."""
        if self.closed:
            return False
        with self._watch_lock:
            try:
                (version,) = self._watch.raw.execute("PRAGMA data_version").fetchone()
            except sqlite3.Error:
                return False
            changed = self._seen_version is not None and version != self._seen_version
            self._seen_version = version
            return changed

    def _check_integrity(self) -> None:
        """``PRAGMA quick_check``: every page of the file read and checked."""
        rows = self._watch.raw.execute("PRAGMA quick_check").fetchall()
        if [r[0] for r in rows] != ["ok"]:
            raise DatabaseCorruptError(str(self.path), "; ".join(str(r[0]) for r in rows[:3]))

    def _close_connections(self) -> None:
        with self._connections_lock:
            cons, self._connections = list(self._connections), weakref.WeakSet()
        for con in cons:
            with contextlib.suppress(Exception):
                con.close()
        with self._watch_lock:  # not under a _changed_elsewhere() of another thread
            watch = getattr(self, "_watch", None)
            if watch is not None:
                with contextlib.suppress(Exception):
                    watch.close()

    def close(self) -> None:
        """Stop this process's workers, put its running jobs back, close its connections."""
        if self.closed:
            return
        self._stop_work()
        self.closed = True
        self._close_connections()
        self._unregister(str(self.path.resolve()))


def _sidecars(path: Path) -> tuple[Path, Path]:
    """SQLite's write-ahead log and shared-memory files beside ``path``."""
    return path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")
