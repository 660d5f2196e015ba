"""The leaderboard's storage: an embedded SQLite file (default) or a PostgreSQL server.

``ETC_LEADERBOARD_DB`` (or ``open_db(target)``) names a file or a ``postgresql://`` URL; the
engine is picked by :func:`etclib.storage.dialect_for` and opened by its class
(:data:`ENGINES`: :class:`leaderboard.db_sqlite.SQLiteDatabase`,
:class:`leaderboard.db_server.ServerDatabase`). Both offer one interface (:class:`Database`:
``cursor()``, ``write()``, ``query()``, ``query_df()``, ``close()``); the same
:data:`leaderboard.migrations.MIGRATIONS` create both schemas, and what the SQL cannot say once
is asked of the engine's dialect (``db.dialect``, :mod:`etclib.storage`).

Every engine is shared by several processes (site processes, ``python -m leaderboard`` commands,
``worker`` processes): writes are transactions, a running job holds a lease that its worker
renews (:meth:`Database.keep_alive`), and another worker claims it again once the lease has
expired (:func:`leaderboard.queue.claim`). Closing cleanly puts this process's running jobs back
in the queue without counting anything. Each process's caches (the ranking) are dropped when
another process writes (:attr:`Database.generation`).

Opening checks the storage and gives one clear error for each fault (:class:`StorageError`,
exit status 7): a missing file (created only with ``create=True``: the CLI's ``--create``,
``seed-baselines``, the site's first start), a directory in its place, a folder or file that
cannot be written, a damaged or foreign file; a board file written by the earlier DuckDB engine
is upgraded in place (:mod:`leaderboard.upgrade`).
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import logging
import os
import socket
import threading
import uuid
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from etclib.storage import Dialect, dialect_for

from . import settings
from .clock import now
from .errors import (
    DatabaseMissingError,
    DatabaseUnwritableError,
    LeaderboardError,
    StorageError,
)
from .migrations import MIGRATIONS, SCHEMA_VERSION, engine_statements
from .statuses import refresh_status

log = logging.getLogger("leaderboard.db")

#: Engine name (a dialect of :mod:`etclib.storage`) -> "module:class" of its board.
ENGINES = {
    "sqlite": "leaderboard.db_sqlite:SQLiteDatabase",
    "postgresql": "leaderboard.db_server:ServerDatabase",
}
#: Longest wait before a crashed job is tried again.
MAX_BACKOFF_SECONDS = 600
#: Seconds a closing store waits for a lease renewal in progress (SQLite's busy timeout is 30 s).
HEARTBEAT_JOIN_S = 40.0


def backoff(crashes: int) -> timedelta:
    """How long a job that stopped the scorer ``crashes`` times waits before it is retried."""
    base = settings.retry_backoff()
    return timedelta(seconds=min(MAX_BACKOFF_SECONDS, base * 2 ** max(0, crashes - 1)))


def process_name() -> str:
    """This process, as the ``claimed_process`` of the jobs it runs: PID, host and a random
    token (PIDs repeat across machines and restarts)."""
    global _PROCESS
    pid = os.getpid()
    if _PROCESS is None or _PROCESS[0] != pid:  # a forked child is another process
        _PROCESS = (pid, f"pid {pid} {socket.gethostname()} {uuid.uuid4().hex[:8]}")
    return _PROCESS[1]


_PROCESS: tuple[int, str] | None = None


def requeue_crashed(cur, rows: list[tuple], note: str) -> int:
    """Queue again (after a backoff) the jobs whose worker died, or fail those that crashed
    alone too often; ``rows`` are (id, submission_id, crashes, solo_crashes, claimed_by, alone)
    where ``alone`` says the job was the only one its worker ran (the crash is then its own)."""
    limit = settings.max_attempts()
    at = now()
    for job_id, sid, crashes, solo, claimed_by, alone in rows:
        crashes = (crashes or 0) + 1
        solo = (solo or 0) + (1 if alone else 0)
        if solo >= limit:
            cur.execute(
                "UPDATE jobs SET status = 'failed', finished_at = ?, error = ?, "
                "crashes = ?, solo_crashes = ? WHERE id = ?",
                [
                    at,
                    f"the scorer stopped {solo} times while this job was the only one "
                    "running; an admin can re-run it",
                    crashes,
                    solo,
                    job_id,
                ],
            )
        else:
            cur.execute(
                "UPDATE jobs SET status = 'queued', claimed_at = NULL, claimed_by = NULL, "
                "claimed_process = NULL, heartbeat_at = NULL, crashes = ?, solo_crashes = ?, "
                "not_before = ? WHERE id = ?",
                [crashes, solo, at + backoff(crashes), job_id],
            )
        refresh_status(cur, sid, note=f"{note} ({claimed_by})", force=True)
    return len(rows)


class Database:
    """One open leaderboard database; :func:`open_db` gives the engine's subclass.

    Every engine offers the same interface: :meth:`cursor` (reads), :meth:`write` (a cursor in
    one transaction), :meth:`query`, :meth:`query_df`, :meth:`close`; ``dialect`` is the
    engine's :class:`etclib.storage.Dialect` and ``leases`` says whether running jobs hold a
    lease (several processes share the board) rather than being resumed on opening.
    """

    dialect: Dialect

    @property
    def engine(self) -> str:
        return self.dialect.name

    @property
    def leases(self) -> bool:
        return self.dialect.shared

    def _init_common(self, label: str) -> None:
        #: What messages call the database: the file, or the URL without its password.
        self.label = label
        self.closed = False
        #: Set whenever a job is queued, so that idle workers wake at once.
        self.jobs_changed = threading.Condition()
        #: Per-process caches (the ranking, bootstrap weights); see :meth:`invalidate`.
        self.cache: dict[Any, Any] = {}
        self._computing: dict[Any, threading.Lock] = {}
        self._computing_lock = threading.Lock()
        self._generation = 0
        self.pools: list[Any] = []
        self._heartbeat: threading.Thread | None = None
        self._stopping = threading.Event()

    @property
    def generation(self) -> int:
        """Bumped by :meth:`invalidate` (and when another process wrote, where the engine can
        tell), so a result computed before a write is not cached after it."""
        if self._changed_elsewhere():
            self.invalidate()
        return self._generation

    def _changed_elsewhere(self) -> bool:
        """Whether another process wrote since this was last asked (engines that can tell)."""
        return False

    def cursor(self):  # pragma: no cover - every engine defines it
        raise NotImplementedError

    def write(self):  # pragma: no cover
        raise NotImplementedError

    def query(self, sql: str, params: list | tuple | None = None) -> list[tuple]:
        """Rows of a read query."""
        with self._storage_faults():
            return self.cursor().execute(sql, params or []).fetchall()

    def query_df(self, sql: str, params: list | tuple | None = None):  # pragma: no cover
        raise NotImplementedError

    def _storage_faults(self):  # pragma: no cover
        raise NotImplementedError

    def invalidate(self) -> None:
        """Drop cached results after a write that changes what the board shows."""
        self._generation += 1
        self.cache.clear()

    def cache_put(self, key: Any, value: Any, generation: int) -> None:
        """Cache ``value`` unless a write happened since ``generation`` was read."""
        if generation == self._generation:
            self.cache[key] = value

    def cached(self, key: Any, compute: Callable[[], Any], generation: int | None = None) -> Any:
        """The cached value of ``key``, else ``compute()``'s, cached unless a write happened
        since ``generation`` (default: now) was read. One computation per key and generation at
        a time: a second caller (a visitor's page while the scoring thread warms the board)
        waits for the first and takes its value instead of computing it again beside it."""
        generation = self.generation if generation is None else generation
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        with self._computing_lock:
            lock = self._computing.setdefault((key, generation), threading.Lock())
        try:
            with lock:
                hit = self.cache.get(key)
                if hit is not None:
                    return hit
                value = compute()
                self.cache_put(key, value, generation)
                return value
        finally:
            with self._computing_lock:
                if self._computing.get((key, generation)) is lock:
                    del self._computing[(key, generation)]

    def notify_jobs(self) -> None:
        with self.jobs_changed:
            self.jobs_changed.notify_all()

    def _stop_work(self) -> None:
        """Stop this process's workers and its lease heartbeat, and put its running jobs back
        in the queue.

        The heartbeat is waited for: a renewal in progress ends (at most the store's busy
        timeout) before the caller closes the connections, since closing a SQLite connection
        that another thread is using crashes the process (the sqlite3 module frees the
        statement under that thread's feet)."""
        for pool in list(self.pools):
            pool.stop()
        self._stopping.set()
        beat = self._heartbeat
        if beat is not None and beat is not threading.current_thread():
            beat.join(HEARTBEAT_JOIN_S)
            if beat.is_alive():
                log.warning("the lease heartbeat did not stop within %s s", HEARTBEAT_JOIN_S)
        with contextlib.suppress(Exception):
            self._requeue_own_jobs()

    def _requeue_own_jobs(self) -> None:
        """A clean stop: this process's running jobs go back to the queue, nothing counted."""
        with self.write() as cur:
            rows = cur.execute(
                "SELECT id, submission_id FROM jobs WHERE status = 'running' "
                "AND (claimed_process = ? OR (claimed_process IS NULL AND claimed_by LIKE ?))",
                [process_name(), f"pid {os.getpid()} %"],
            ).fetchall()
            for job_id, sid in rows:
                cur.execute(
                    "UPDATE jobs SET status = 'queued', claimed_at = NULL, claimed_by = NULL, "
                    "claimed_process = NULL, heartbeat_at = NULL, "
                    "attempts = greatest(attempts - 1, 0) WHERE id = ?",
                    [job_id],
                )
                refresh_status(cur, sid, note="the scorer stopped cleanly; queued again")

    # --- schema ------------------------------------------------------------------------------

    def schema_version(self) -> int:
        return self._version(self.cursor())

    def _version(self, cur) -> int:
        if not self.dialect.has_table(cur, "schema_version"):
            return 0
        row = cur.execute("SELECT max(version) FROM schema_version").fetchone()
        return int(row[0] or 0)

    def _migrate(self) -> None:
        """Apply the missing migrations in order, each in its own transaction (on PostgreSQL
        under a lock, so that processes starting together migrate once)."""
        current = self.schema_version()
        if current > SCHEMA_VERSION:
            raise LeaderboardError(
                f"{self.label} has schema version {current}, newer than this code knows "
                f"({SCHEMA_VERSION}); update the project before opening it."
            )
        if current == SCHEMA_VERSION:
            return
        with self.write() as cur:
            self.dialect.serialize(cur, "migrate")
            cur.execute(
                "CREATE TABLE IF NOT EXISTS schema_version "
                "(version INTEGER NOT NULL, applied_at TIMESTAMP NOT NULL)"
            )
        for version, statements in MIGRATIONS:
            if version <= current:
                continue
            with self.write() as cur:
                self.dialect.serialize(cur, "migrate")
                if version <= self._version(cur):
                    continue  # another process applied it meanwhile
                for sql in engine_statements(statements, self.dialect):
                    cur.execute(sql)
                cur.execute("INSERT INTO schema_version VALUES (?, ?)", [version, now()])

    def _backfill(self) -> None:
        """Rows stored before ``content_sha256`` existed get it, from their predictions."""
        rows = self.query(
            "SELECT id FROM submissions WHERE content_sha256 IS NULL AND kind <> 'reported'"
        )
        if not rows:
            return
        import hashlib
        import json

        with self.write() as cur:
            for (sid,) in rows:
                preds = cur.execute(
                    "SELECT dialogue_id, turn, role, prediction FROM predictions "
                    "WHERE submission_id = ? ORDER BY item_index",
                    [sid],
                ).fetchall()
                body = [list(p) for p in preds]  # the split's item order, as stored
                digest = hashlib.sha256(
                    json.dumps(["etc-predictions-v1", body]).encode("ascii")
                ).hexdigest()
                cur.execute("UPDATE submissions SET content_sha256 = ? WHERE id = ?", [digest, sid])

    # --- leases ------------------------------------------------------------------------------

    def keep_alive(self) -> None:
        """Renew the lease of this process's running jobs every third of
        ``ETC_LB_LEASE_SECONDS``, from one thread (started once)."""
        if self._heartbeat is not None and self._heartbeat.is_alive():
            return
        self._heartbeat = threading.Thread(target=self._beat, name="lb-heartbeat", daemon=True)
        self._heartbeat.start()

    def beat(self) -> int:
        """Renew the lease of this process's running jobs now; how many."""
        with self.write() as cur:
            clock, params = self.dialect.clock()
            return len(
                cur.execute(
                    f"UPDATE jobs SET heartbeat_at = {clock} WHERE status = 'running' "
                    "AND claimed_process = ? RETURNING id",
                    [*params, process_name()],
                ).fetchall()
            )

    def _beat(self) -> None:
        while not self._stopping.wait(max(0.2, settings.lease_seconds() / 3)):
            try:
                self.beat()
            except Exception as exc:  # noqa: BLE001 - the store busy for a moment: try again
                log.warning("could not renew the job leases: %s", exc)

    def _unregister(self, key: str) -> None:
        with _REGISTRY_LOCK:
            if _REGISTRY.get(key) is self:
                del _REGISTRY[key]


def _directory_error(path: Path) -> StorageError:
    """The refusal of ``path``, which is there but no regular file (a folder, a device such as
    /dev/null, a pipe)."""
    what = "a directory" if path.is_dir() else "a device or other special file"
    return StorageError(
        str(path),
        f"{path} is {what}, not a database file. Point ETC_LEADERBOARD_DB at a file "
        "(e.g. data/leaderboard.sqlite), or move it away.",
    )


def _unwritable(path: Path, exc: OSError) -> StorageError:
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC):
        reason = os.strerror(exc.errno).lower()
        return DatabaseUnwritableError(str(path), str(path.parent), reason)
    if exc.errno == errno.EISDIR:
        return _directory_error(path)
    return StorageError(
        str(path),
        f"Cannot open the leaderboard database {path} ({os.strerror(exc.errno or 0)}). "
        "Check the path (ETC_LEADERBOARD_DB) and its folder.",
    )


def _check_path(path: Path, create: bool, source: str) -> bool:
    """Refuse a path that cannot hold the database; True when the file will be new."""
    if path.is_dir():
        raise _directory_error(path)
    if path.exists():
        if not path.is_file():
            raise _directory_error(path)
        return False
    if not create:
        raise DatabaseMissingError(str(path), source or "set by ETC_LEADERBOARD_DB")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _unwritable(path, exc) from None
    return True


_REGISTRY: dict[str, Database] = {}
_REGISTRY_LOCK = (
    threading.RLock()
)  # re-entered: the upgrade opens and closes a board inside open_db


def _key(path: Path) -> str:
    return str(path.resolve())


def open_db(path: str | os.PathLike | None = None, *, create: bool = True) -> Database:
    """The process-wide :class:`Database` for ``path`` (default ``ETC_LEADERBOARD_DB``).

    A file path opens the embedded SQLite board (upgrading a legacy DuckDB board file in
    place); a ``postgresql://`` URL a board on that server. Opened, checked and migrated on
    first use; later calls return the same object. A missing file (or an empty server
    database) is created when ``create`` (the library's default; the CLI refuses a missing one
    unless ``--create``), else :class:`DatabaseMissingError`. A :class:`StorageError` for a
    damaged or foreign file, a directory, or a folder it cannot write;
    :class:`DatabaseServerError` when a server cannot be used.
    """
    target = settings.db_target(path)
    key = target if isinstance(target, str) else _key(target)
    with _REGISTRY_LOCK:
        db = _REGISTRY.get(key)
        if db is None or db.closed:
            if path is not None:
                source = "given explicitly"
            elif settings.using_default_db():
                source = "the default path; `make prepare` creates it"
            else:
                source = "set by ETC_LEADERBOARD_DB"
            module, _, name = ENGINES[dialect_for(target).name].partition(":")
            engine = getattr(importlib.import_module(module), name)
            db = engine(target, create=create, source=source)
            if db.created:
                log.warning("created a new, empty leaderboard database at %s", db.label)
            _REGISTRY[key] = db
        return db


def storage_fault(exc: BaseException) -> StorageError | None:
    """The clear error for a storage failure of the default board's engine that escaped the
    board's own checks (the file's fault, not a query's), else None."""
    target = settings.db_target()
    module, _, name = ENGINES[dialect_for(target).name].partition(":")
    fault = getattr(importlib.import_module(module), "storage_error", None)
    return fault(target, exc) if fault is not None and not isinstance(target, str) else None


def close_all() -> None:
    """Close every database this process opened (tests; a clean shutdown)."""
    with _REGISTRY_LOCK:
        dbs = list(_REGISTRY.values())
    for db in dbs:
        db.close()


def resolve(db: Database | None) -> Database:
    """``db`` itself, or the default database."""
    return db if db is not None else open_db()
