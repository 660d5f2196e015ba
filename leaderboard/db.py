"""The leaderboard's DuckDB file: one writing process, a connection per process, migrations.

- :func:`open_db` returns the process-wide :class:`Database` for a path (opened once).
- A lock file ``<db>.lock`` holds the writer's PID under an exclusive ``flock``: a second
  process gets :class:`DatabaseInUseError` naming that PID. A lock left by a dead process (its
  ``flock`` died with it; on systems without ``flock``, its PID is no longer alive) is taken over.
- Threads share the connection through their own cursors (:meth:`Database.cursor`); writes go
  through :meth:`Database.write`, which serialises them with one lock and runs each in a
  transaction.
- The schema is versioned (table ``schema_version``) and migrated in order on open.
- Opening checks the storage and gives one clear error for each fault (:class:`StorageError`,
  exit status 7): a missing file (created only with ``create=True``: the CLI's ``--create``,
  ``seed-baselines``, the site's first start), a directory in its place, a folder or file that
  cannot be written, a damaged file. The integrity check reads every column of every table, so
  DuckDB verifies the checksum of every block in use; a file that fails it is never written.
- Opening also resumes work: jobs that a dead process left ``running`` are queued again, after
  a backoff, and their submissions' statuses re-derived (:mod:`leaderboard.statuses`). The crash
  counts against a job only when it was the only job running (a job that stopped the scorer
  runs alone afterwards, :func:`leaderboard.queue.claim`); such a job is failed after
  ``ETC_LB_MAX_ATTEMPTS`` crashes. Closing cleanly puts this process's running jobs back in the
  queue without counting anything.

This module depends only on the leaderboard's settings, errors, clock and status rules; the
queue, scoring, submitting and the board are built on it.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

from . import settings
from .clock import now
from .errors import (
    DatabaseCorruptError,
    DatabaseInUseError,
    DatabaseMissingError,
    DatabaseUnwritableError,
    LeaderboardError,
    StorageError,
)
from .statuses import refresh_status

log = logging.getLogger("leaderboard.db")

try:  # POSIX; elsewhere the PID liveness check alone decides
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


#: Ordered migrations: version -> SQL statements. Never edit a released one; append.
MIGRATIONS: list[tuple[int, list[str]]] = [
    (
        1,
        [
            "CREATE SEQUENCE job_ids START 1",
            "CREATE SEQUENCE score_ids START 1",
            """CREATE TABLE submissions (
                id VARCHAR PRIMARY KEY,
                kind VARCHAR NOT NULL,          -- submission | baseline | reported
                created_at TIMESTAMP NOT NULL,
                split VARCHAR NOT NULL,
                name VARCHAR NOT NULL,
                team VARCHAR,
                contact VARCHAR,                -- never shown publicly
                submitter_key VARCHAR,          -- sha256 of the key the daily limit counts by
                model_url VARCHAR,
                paper_url VARCHAR,
                description VARCHAR,
                setting VARCHAR,
                saw_test VARCHAR,
                file_name VARCHAR,
                file_sha256 VARCHAR,
                file_format VARCHAR,
                file_bytes BIGINT,
                n_items INTEGER,
                corpus_hash VARCHAR,
                warnings VARCHAR,               -- JSON list
                baseline_key VARCHAR,
                visibility VARCHAR NOT NULL,    -- public | hidden | deleted
                status VARCHAR NOT NULL,        -- latest of status_history
                status_message VARCHAR
            )""",
            """CREATE TABLE predictions (
                submission_id VARCHAR NOT NULL,
                item_index INTEGER NOT NULL,
                dialogue_id INTEGER NOT NULL,
                turn INTEGER NOT NULL,
                role VARCHAR NOT NULL,
                prediction VARCHAR NOT NULL
            )""",
            """CREATE TABLE status_history (
                submission_id VARCHAR NOT NULL,
                happened_at TIMESTAMP NOT NULL,
                status VARCHAR NOT NULL,
                message VARCHAR
            )""",
            """CREATE TABLE jobs (
                id BIGINT PRIMARY KEY,
                submission_id VARCHAR NOT NULL,
                stage VARCHAR NOT NULL,         -- lexical | bertscore | judge
                status VARCHAR NOT NULL,        -- queued | running | done | failed
                attempts INTEGER NOT NULL,
                created_at TIMESTAMP NOT NULL,
                claimed_at TIMESTAMP,
                claimed_by VARCHAR,
                finished_at TIMESTAMP,
                error VARCHAR,
                options VARCHAR                 -- JSON of metric options
            )""",
            """CREATE TABLE scores (
                id BIGINT PRIMARY KEY,
                submission_id VARCHAR NOT NULL,
                job_id BIGINT,
                metric_group VARCHAR NOT NULL,  -- bleu | rouge | bertscore | judge | reported
                signature VARCHAR NOT NULL,     -- canonical JSON of the signature
                created_at TIMESTAMP NOT NULL,
                n_items INTEGER,
                scores VARCHAR NOT NULL,        -- JSON: key -> value
                extras VARCHAR,                 -- JSON: run-level extras
                breakdown VARCHAR               -- JSON: role / category / turn
            )""",
            """CREATE TABLE score_arrays (
                score_id BIGINT NOT NULL,
                name VARCHAR NOT NULL,
                dtype VARCHAR NOT NULL,
                shape VARCHAR NOT NULL,
                data BLOB NOT NULL
            )""",
            """CREATE TABLE item_scores (
                score_id BIGINT NOT NULL,
                item_index INTEGER NOT NULL,
                scores VARCHAR,                 -- JSON: this item's scores
                details VARCHAR                 -- JSON: e.g. judge units and labels
            )""",
            """CREATE TABLE moderation_log (
                happened_at TIMESTAMP NOT NULL,
                submission_id VARCHAR,
                action VARCHAR NOT NULL,
                note VARCHAR
            )""",
            """CREATE TABLE hub_pushes (
                happened_at TIMESTAMP NOT NULL,
                repo VARCHAR,
                ok BOOLEAN NOT NULL,
                message VARCHAR
            )""",
        ],
    ),
    (
        4,
        [
            # A failed job's reason (jobs.error) is public: it becomes the submission's
            # status_message, which the board and its exports show. The provider's text,
            # endpoint and status (redacted) go to error_detail, read only by the admin view.
            "ALTER TABLE jobs ADD COLUMN error_detail VARCHAR",
            # Failures stored before this version may quote a provider: moved to the admin
            # column, replaced by a neutral public reason (a re-score writes a fresh one).
            "UPDATE jobs SET error_detail = error, error = 'the scoring failed; an admin can "
            "see why and re-score it' WHERE status = 'failed' AND error IS NOT NULL",
            "UPDATE submissions SET status_message = 'a scoring stage failed; an admin can see "
            "why and re-score it' WHERE id IN (SELECT submission_id FROM jobs "
            "WHERE status = 'failed')",
            "UPDATE status_history SET message = 'a scoring stage failed; an admin can see why "
            "and re-score it' WHERE EXISTS (SELECT 1 FROM jobs j WHERE j.submission_id = "
            "status_history.submission_id AND j.status = 'failed' AND j.error_detail IS NOT NULL "
            "AND strpos(status_history.message, j.error_detail) > 0)",
            # The account a submitter signed in with (OIDC), shown beside the team name.
            """CREATE TABLE submission_accounts (
                submission_id VARCHAR PRIMARY KEY,
                account VARCHAR NOT NULL,       -- shown publicly (the claim the site shows)
                issuer VARCHAR                  -- the identity provider that verified it
            )""",
        ],
    ),
]
MIGRATIONS.append(
    (
        5,
        [
            # duplicates are found by content; file_sha256 is the file's bytes again
            "ALTER TABLE submissions ADD COLUMN content_sha256 VARCHAR",
            # queue fairness: crashes in flight, crashes alone, the backoff's end
            "ALTER TABLE jobs ADD COLUMN crashes INTEGER DEFAULT 0",
            "ALTER TABLE jobs ADD COLUMN solo_crashes INTEGER DEFAULT 0",
            "ALTER TABLE jobs ADD COLUMN not_before TIMESTAMP",
        ],
    )
)
MIGRATIONS.append(
    (
        6,
        [
            # the leaderboard track (etclib.tracks): transcription, or erc (emotion categories;
            # predictions.prediction then holds the label set as "joy;surprise")
            "ALTER TABLE submissions ADD COLUMN track VARCHAR DEFAULT 'transcription'",
            "UPDATE submissions SET track = 'transcription' WHERE track IS NULL",
        ],
    )
)
SCHEMA_VERSION = max(version for version, _ in MIGRATIONS)

#: Longest wait before a crashed job is tried again.
MAX_BACKOFF_SECONDS = 600


def backoff(crashes: int) -> timedelta:
    """How long a job that stopped the scorer ``crashes`` times waits before it is retried."""
    base = settings.retry_backoff()
    return timedelta(seconds=min(MAX_BACKOFF_SECONDS, base * 2 ** max(0, crashes - 1)))


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError as exc:  # pragma: no cover
        return exc.errno != errno.ESRCH
    return True


def _read_pid(fd: int) -> int | None:
    os.lseek(fd, 0, os.SEEK_SET)
    text = os.read(fd, 64).decode("ascii", "replace").strip()
    return int(text) if text.isdigit() else None


class _LockFile:
    """``<db>.lock``: this process's PID, held under an exclusive ``flock`` while open."""

    def __init__(self, db_path: Path) -> None:
        self.path = db_path.with_name(db_path.name + ".lock")
        self.fd: int | None = None
        self.took_over_from: int | None = None

    def acquire(self, db_path: Path) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            old = _read_pid(fd)
            if fcntl is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    raise DatabaseInUseError(str(db_path), old) from None
            elif old and old != os.getpid() and _pid_alive(old):  # pragma: no cover
                raise DatabaseInUseError(str(db_path), old)
            # Free: either fresh, or a stale lock of a process that is gone; take it over.
            self.took_over_from = old if old and old != os.getpid() else None
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, f"{os.getpid()}\n".encode())
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            raise
        self.fd = fd

    def release(self) -> None:
        if self.fd is None:
            return
        try:
            os.ftruncate(self.fd, 0)
        finally:
            os.close(self.fd)  # closing drops the flock
            self.fd = None


class Database:
    """One open leaderboard database: a shared DuckDB connection, cursors per thread."""

    def __init__(self, path: Path, *, create: bool = False, source: str = "") -> None:
        import duckdb

        self.path = path
        self.created = _check_path(path, create, source)
        self._lock_file = _LockFile(path)
        try:
            self._lock_file.acquire(path)
        except OSError as exc:
            raise _unwritable(path, exc) from None
        try:
            self.con = duckdb.connect(str(path))
        except duckdb.Error as exc:
            self._lock_file.release()
            if self.created:
                with contextlib.suppress(OSError):
                    path.unlink()
            if "lock" in str(exc).lower() and "conflicting lock" in str(exc).lower():
                raise DatabaseInUseError(str(path), _pid_in_message(str(exc))) from None
            raise storage_error(path, exc) from None
        self._write_lock = threading.RLock()
        self._local = threading.local()
        self._cursors: list[Any] = []
        self._cursors_lock = threading.Lock()
        self.closed = False
        #: Set whenever a job is queued, so that idle workers wake at once.
        self.jobs_changed = threading.Condition()
        #: Per-process caches (the ranking, bootstrap weights); see :meth:`invalidate`.
        self.cache: dict[Any, Any] = {}
        #: Bumped by :meth:`invalidate`, so a result computed before a write is not cached after it.
        self.generation = 0
        self.pools: list[Any] = []
        try:
            self._check_integrity()
            self._migrate()
            self._backfill()
            self.resumed_jobs = self._resume()
        except BaseException as exc:
            self.con.close()
            self._lock_file.release()
            if self.created:
                for leftover in (path, path.with_name(path.name + ".wal")):
                    with contextlib.suppress(OSError):
                        leftover.unlink()
            if isinstance(exc, duckdb.Error) and is_storage_fault(exc):
                raise storage_error(path, exc) from None
            raise

    # --- connections -------------------------------------------------------------------------

    def cursor(self):
        """This thread's cursor on the shared connection."""
        if self.closed:
            raise LeaderboardError(
                f"The leaderboard database {self.path} was closed; call open_db() again."
            )
        cur = getattr(self._local, "cursor", None)
        if cur is None:
            cur = self.con.cursor()
            self._local.cursor = cur
            with self._cursors_lock:
                self._cursors.append(cur)
        return cur

    @contextlib.contextmanager
    def write(self) -> Iterator[Any]:
        """A cursor inside one transaction, holding the process's write lock.

        A storage fault met inside (a damaged block, a full or read-only disk) rolls the
        transaction back and becomes a :class:`StorageError`.
        """
        with self._write_lock, self._storage_faults():
            cur = self.cursor()
            cur.execute("BEGIN TRANSACTION")
            try:
                yield cur
            except BaseException:
                with contextlib.suppress(Exception):
                    cur.execute("ROLLBACK")
                raise
            cur.execute("COMMIT")

    def query(self, sql: str, params: list | tuple | None = None) -> list[tuple]:
        """Rows of a read query (no lock needed: DuckDB readers see committed data)."""
        with self._storage_faults():
            return self.cursor().execute(sql, params or []).fetchall()

    def query_df(self, sql: str, params: list | tuple | None = None):
        """A read query as a pandas DataFrame."""
        with self._storage_faults():
            return self.cursor().execute(sql, params or []).df()

    @contextlib.contextmanager
    def _storage_faults(self) -> Iterator[None]:
        import duckdb

        try:
            yield
        except duckdb.Error as exc:
            if is_storage_fault(exc):
                raise storage_error(self.path, exc) from None
            raise

    def invalidate(self) -> None:
        """Drop cached results after a write that changes what the board shows."""
        self.generation += 1
        self.cache.clear()

    def cache_put(self, key: Any, value: Any, generation: int) -> None:
        """Cache ``value`` unless a write happened since ``generation`` was read."""
        if generation == self.generation:
            self.cache[key] = value

    def notify_jobs(self) -> None:
        with self.jobs_changed:
            self.jobs_changed.notify_all()

    def close(self) -> None:
        """Stop this process's workers, close the connection and release the lock file."""
        if self.closed:
            return
        for pool in list(self.pools):
            pool.stop()
        with contextlib.suppress(Exception):
            self._requeue_own_jobs()
        self.closed = True
        with self._cursors_lock:
            for cur in self._cursors:
                with contextlib.suppress(Exception):
                    cur.close()
            self._cursors.clear()
        self.con.close()
        self._lock_file.release()
        with _REGISTRY_LOCK:
            if _REGISTRY.get(_key(self.path)) is self:
                del _REGISTRY[_key(self.path)]

    def _requeue_own_jobs(self) -> None:
        """A clean stop: this process's running jobs go back to the queue, nothing counted."""
        with self.write() as cur:
            rows = cur.execute(
                "SELECT id, submission_id FROM jobs WHERE status = 'running' AND claimed_by LIKE ?",
                [f"pid {os.getpid()} %"],
            ).fetchall()
            for job_id, sid in rows:
                cur.execute(
                    "UPDATE jobs SET status = 'queued', claimed_at = NULL, claimed_by = NULL, "
                    "attempts = greatest(attempts - 1, 0) WHERE id = ?",
                    [job_id],
                )
                refresh_status(cur, sid, note="the scorer stopped cleanly; queued again")

    # --- schema ------------------------------------------------------------------------------

    def _check_integrity(self) -> None:
        """Read every column of every table, so DuckDB checks each block in use."""
        cur = self.con.cursor()
        try:
            tables = cur.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = 'main' AND table_type = 'BASE TABLE'"
            ).fetchall()
            for (table,) in tables:
                cur.execute(f'SELECT count(*), max(hash(COLUMNS(*))) FROM "{table}"').fetchall()
        finally:
            cur.close()

    def schema_version(self) -> int:
        cur = self.cursor()
        exists = cur.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_version'"
        ).fetchone()[0]
        if not exists:
            return 0
        row = cur.execute("SELECT max(version) FROM schema_version").fetchone()
        return int(row[0] or 0)

    def _migrate(self) -> None:
        current = self.schema_version()
        if current > SCHEMA_VERSION:
            raise LeaderboardError(
                f"{self.path} has schema version {current}, newer than this code knows "
                f"({SCHEMA_VERSION}); update the project before opening it."
            )
        with self.write() as cur:
            cur.execute(
                "CREATE TABLE IF NOT EXISTS schema_version "
                "(version INTEGER NOT NULL, applied_at TIMESTAMP NOT NULL)"
            )
        for version, statements in MIGRATIONS:
            if version <= current:
                continue
            with self.write() as cur:
                for sql in statements:
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

    def _resume(self) -> int:
        """Queue again the jobs that a dead process left running; count the crash against a
        job only when it was the only one running; fail those that crashed alone too often."""
        limit = settings.max_attempts()
        with self.write() as cur:
            rows = cur.execute(
                "SELECT id, submission_id, crashes, solo_crashes, claimed_by FROM jobs "
                "WHERE status = 'running'"
            ).fetchall()
            alone = len(rows) == 1
            at = now()
            for job_id, sid, crashes, solo, claimed_by in rows:
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
                        "crashes = ?, solo_crashes = ?, not_before = ? WHERE id = ?",
                        [crashes, solo, at + backoff(crashes), job_id],
                    )
                refresh_status(
                    cur, sid, note=f"resumed after the scorer ({claimed_by}) stopped", force=True
                )
        return len(rows)


_CORRUPT_HINTS = (
    "corrupt",
    "not a valid duckdb database",
    "could not read enough bytes",
    "checksum",
    "invalid block",
    "serialization",
    "failed to read",
)
_UNWRITABLE_HINTS = ("permission denied", "read-only file system", "no space left")


def is_storage_fault(exc: BaseException) -> bool:
    """Whether a DuckDB error is the file's fault (damaged, unwritable), not a query's."""
    import duckdb

    if not isinstance(exc, duckdb.Error):
        return False
    text = str(exc).lower()
    if isinstance(exc, duckdb.IOException):
        return True
    return any(h in text for h in _CORRUPT_HINTS + _UNWRITABLE_HINTS)


def storage_error(path: Path, exc: BaseException) -> StorageError:
    """The clear error for a DuckDB storage failure on ``path``."""
    text = str(exc)
    low = text.lower()
    if any(h in low for h in _UNWRITABLE_HINTS):
        reason = next(h for h in _UNWRITABLE_HINTS if h in low)
        return DatabaseUnwritableError(str(path), str(path.parent), reason)
    if "is a directory" in low:
        return _directory_error(path)
    return DatabaseCorruptError(str(path), text.removeprefix("IO Error: "))


def _directory_error(path: Path) -> StorageError:
    return StorageError(
        str(path),
        f"{path} is a directory, not a database file. Point ETC_LEADERBOARD_DB at a file "
        "(e.g. data/leaderboard.duckdb), or move the directory away.",
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


def _pid_in_message(text: str) -> int | None:
    import re

    m = re.search(r"PID (\d+)", text)
    return int(m.group(1)) if m else None


_REGISTRY: dict[str, Database] = {}
_REGISTRY_LOCK = threading.Lock()


def _key(path: Path) -> str:
    return str(path.resolve())


def open_db(path: str | os.PathLike | None = None, *, create: bool = True) -> Database:
    """The process-wide :class:`Database` for ``path`` (default ``ETC_LEADERBOARD_DB``).

    Opened, checked, migrated and resumed on first use; later calls return the same object.
    A missing file is created when ``create`` (the library's default; the CLI refuses a missing
    file unless ``--create``), else :class:`DatabaseMissingError`. Raises
    :class:`DatabaseInUseError` when another live process holds the file, and a
    :class:`StorageError` for a damaged file, a directory, or a folder it cannot write.
    """
    resolved = settings.db_path(path)
    key = _key(resolved)
    with _REGISTRY_LOCK:
        db = _REGISTRY.get(key)
        if db is None or db.closed:
            if path is not None:
                source = "given explicitly"
            elif settings.using_default_db():
                source = "the default path; `make prepare` creates it"
            else:
                source = "set by ETC_LEADERBOARD_DB"
            db = Database(resolved, create=create, source=source)
            if db.created:
                log.warning("created a new, empty leaderboard database at %s", resolved)
            _REGISTRY[key] = db
        return db


def close_all() -> None:
    """Close every database this process opened (tests; a clean shutdown)."""
    with _REGISTRY_LOCK:
        dbs = list(_REGISTRY.values())
    for db in dbs:
        db.close()


def resolve(db: Database | None) -> Database:
    """``db`` itself, or the default database."""
    return db if db is not None else open_db()
