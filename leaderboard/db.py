"""The leaderboard's database: the board and its scoring queue, on the storage layer.

``ETC_LEADERBOARD_DB`` names a SQLite file or a ``postgresql://`` URL. :class:`Database` adds
what each process keeps: caches dropped when anyone writes, the leases of its running jobs, and
its running jobs put back in the queue when it closes cleanly.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import socket
import threading
import uuid
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from etclib.storage import Fault, dialect_for, redacted
from etclib.storage import database as storage
from etclib.storage.dialects.duckdb import is_duckdb

from . import settings
from .clock import now
from .errors import (
    DatabaseCorruptError,
    DatabaseMissingError,
    DatabaseServerError,
    DatabaseUnwritableError,
    LeaderboardError,
    StorageError,
)
from .migrations import MIGRATIONS, SEQUENCES, TABLES
from .statuses import refresh_status

log = logging.getLogger("leaderboard.db")

#: Longest wait before a crashed job is tried again.
MAX_BACKOFF_SECONDS = 600
#: Seconds a closing store waits for a lease renewal in progress (SQLite's busy timeout is 30 s).
HEARTBEAT_JOIN_S = 40.0


def backoff(crashes: int) -> timedelta:
    """How long a job that stopped the scorer ``crashes`` times waits before it is retried."""
    base = settings.retry_backoff()
    return timedelta(seconds=min(MAX_BACKOFF_SECONDS, base * 2 ** max(0, crashes - 1)))


def process_name() -> str:
    """This process as its jobs' ``claimed_process``: PID, host and a token (PIDs repeat)."""
    global _PROCESS
    pid = os.getpid()
    if _PROCESS is None or _PROCESS[0] != pid:  # a forked child is another process
        _PROCESS = (pid, f"pid {pid} {socket.gethostname()} {uuid.uuid4().hex[:8]}")
    return _PROCESS[1]


_PROCESS: tuple[int, str] | None = None


def requeue_crashed(cur, rows: list[tuple], note: str) -> int:
    """Queue again (after a backoff) the jobs whose worker died, or fail those that crashed
    alone too often; ``rows`` are (id, submission_id, crashes, solo_crashes, claimed_by, alone),
    ``alone`` when the job was the only one its worker ran (the crash is then its own)."""
    limit = settings.max_attempts()
    at = now()
    for job_id, sid, crashes, solo, claimed_by, alone in rows:
        crashes = (crashes or 0) + 1
        solo = (solo or 0) + (1 if alone else 0)
        if solo >= limit:
            why = f"the scorer stopped {solo} times while this job was the only one running"
            cur.execute(
                "UPDATE jobs SET status = 'failed', finished_at = ?, error = ?, "
                "crashes = ?, solo_crashes = ? WHERE id = ?",
                [at, why + "; an admin can re-run it", crashes, solo, job_id],
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


_TYPED: dict[str, Callable[[Fault], Exception]] = {
    "missing": lambda f: DatabaseMissingError(f.where, f.reason or "set by ETC_LEADERBOARD_DB"),
    "unwritable": lambda f: DatabaseUnwritableError(f.where, str(Path(f.where).parent), f.reason),
    "corrupt": lambda f: DatabaseCorruptError(f.where, f.reason),
    "server": lambda f: DatabaseServerError(f.where, f.reason),
}


def _error(fault: Fault) -> Exception:
    typed = _TYPED.get(fault.kind)
    if typed is not None:
        return typed(fault)
    text = fault.describe(
        "leaderboard database", "ETC_LEADERBOARD_DB", "python -m leaderboard migrate"
    )
    if fault.kind in ("newer", "closed", "same", "filled", "unknown"):
        return LeaderboardError(text)
    return StorageError(fault.where, text)


#: The board as the storage layer sees it.
BOARD = storage.Store(
    name="leaderboard",
    error=_error,
    schema=storage.Schema("leaderboard", MIGRATIONS, versions="schema_version"),
    tables=TABLES,
    sequences=SEQUENCES,
    # status_history is read in insertion order (rowid; on PostgreSQL a column of that name)
    order={"status_history": "rowid"},
    check=True,
)


class Database(storage.Database):
    """The board open in this process; :func:`open_db` gives it.

    Reads: :meth:`cursor`, :meth:`query`, :meth:`query_df`; writes: :meth:`write` (one
    transaction); ``dialect`` is the engine's :class:`etclib.storage.Dialect`.
    """

    def __init__(self, target: Any, store: storage.Store = BOARD, **options: Any) -> None:
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
        super().__init__(target, store, pool_size=settings.pool_size(), **options)
        try:
            self._backfill()
            self.changed_elsewhere()
        except BaseException:
            storage.Database.close(self)
            raise
        if self.created:
            log.warning("created a new, empty leaderboard database at %s", self.label)

    @property
    def engine(self) -> str:
        return self.dialect.name

    def schema_version(self) -> int:
        return self.version()

    @property
    def generation(self) -> int:
        """Bumped by :meth:`invalidate` (and when another process wrote, where the engine can
        tell), so a result computed before a write is not cached after it."""
        if self.changed_elsewhere():
            self.invalidate()
        return self._generation

    def invalidate(self) -> None:
        """Drop cached results after a write that changes what the board shows."""
        self._generation += 1
        self.cache.clear()

    def cached(self, key: Any, compute: Callable[[], Any], generation: int | None = None) -> Any:
        """The cached value of ``key``, else ``compute()``'s, cached unless a write happened
        since ``generation`` (default: now) was read. One computation per key and generation at
        a time: a second caller waits for the first and takes its value."""
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
                if generation == self._generation:
                    self.cache[key] = value
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
        in the queue. The heartbeat is waited for: closing a SQLite connection that another
        thread is using crashes the process (the sqlite3 module frees the statement under that
        thread's feet)."""
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

    def _backfill(self) -> None:
        """Rows stored before ``content_sha256`` existed get it, from their predictions."""
        rows = self.query(
            "SELECT id FROM submissions WHERE content_sha256 IS NULL AND kind <> 'reported'"
        )
        if not rows:
            return
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

    def keep_alive(self) -> None:
        """Renew this process's leases every third of ``ETC_LB_LEASE_SECONDS``, in one thread."""
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

    def close(self) -> None:
        """Stop this process's workers, put its running jobs back, close its connections."""
        if not self.closed:
            self._stop_work()
            super().close()


def open_db(path: str | os.PathLike | None = None, *, create: bool = True) -> Database:
    """The process-wide :class:`Database` for ``path`` (default ``ETC_LEADERBOARD_DB``),
    opened, checked and migrated on first use. A missing board is created when ``create``,
    else :class:`DatabaseMissingError`; every other fault is a :class:`StorageError`."""
    target = settings.db_target(path)
    if path is not None:
        source = "given explicitly"
    elif not settings.setting("ETC_LEADERBOARD_DB"):  # data/leaderboard.sqlite
        source = "the default path; `make prepare` creates it"
        old = settings.LEGACY_DEFAULT_DB
        if not Path(target).exists() and is_duckdb(old):
            raise _error(Fault("legacy", str(old)))
    else:
        source = "set by ETC_LEADERBOARD_DB"
    return storage.open_store(target, BOARD, kind=Database, create=create, source=source)


def storage_fault(exc: BaseException) -> Exception | None:
    """The clear error for a storage fault of the default board, else None."""
    target = settings.db_target()
    fault = dialect_for(target).fault(exc, redacted(str(target)))
    return None if fault is None else _error(fault)


def close_all() -> None:
    """Close every board this process opened (tests; a clean shutdown)."""
    storage.close_all(BOARD)


def resolve(db: Database | None) -> Database:
    """``db`` itself, or the default database."""
    return db if db is not None else open_db()
