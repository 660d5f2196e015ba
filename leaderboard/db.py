"""The leaderboard's DuckDB file: one writing process, a connection per process, migrations.

- :func:`open_db` returns the process-wide :class:`Database` for a path (opened once).
- A lock file ``<db>.lock`` holds the writer's PID under an exclusive ``flock``: a second
  process gets :class:`DatabaseInUseError` naming that PID. A lock left by a dead process (its
  ``flock`` died with it; on systems without ``flock``, its PID is no longer alive) is taken over.
- Threads share the connection through their own cursors (:meth:`Database.cursor`); writes go
  through :meth:`Database.write`, which serialises them with one lock and runs each in a
  transaction.
- The schema is versioned (table ``schema_version``) and migrated in order on open.
- Opening also resumes work: jobs that a dead process left ``running`` are queued again, and
  their submissions' statuses re-derived (:mod:`leaderboard.statuses`).

This module depends only on the leaderboard's settings, errors, clock and status rules; the
queue, scoring, submitting and the board are built on it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from . import settings
from .clock import now
from .errors import DatabaseInUseError, LeaderboardError
from .statuses import refresh_status

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
        2,
        [
            # the leaderboard track (etclib.tracks): transcription, or erc (emotion categories;
            # predictions.prediction then holds the label set as "joy;surprise")
            "ALTER TABLE submissions ADD COLUMN track VARCHAR DEFAULT 'transcription'",
            "UPDATE submissions SET track = 'transcription' WHERE track IS NULL",
        ],
    ),
]
SCHEMA_VERSION = MIGRATIONS[-1][0]


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

    def __init__(self, path: Path) -> None:
        import duckdb

        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock_file = _LockFile(path)
        self._lock_file.acquire(path)
        try:
            self.con = duckdb.connect(str(path))
        except duckdb.IOException as exc:
            self._lock_file.release()
            if "lock" in str(exc).lower():
                raise DatabaseInUseError(str(path), _pid_in_message(str(exc))) from None
            raise LeaderboardError(
                f"Cannot open the leaderboard database {path}: {exc}. Check the path "
                "(ETC_LEADERBOARD_DB) and that the file is a DuckDB database."
            ) from None
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
            self._migrate()
            self.resumed_jobs = self._resume()
        except BaseException:
            self.con.close()
            self._lock_file.release()
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
        """A cursor inside one transaction, holding the process's write lock."""
        with self._write_lock:
            cur = self.cursor()
            cur.execute("BEGIN TRANSACTION")
            try:
                yield cur
            except BaseException:
                cur.execute("ROLLBACK")
                raise
            cur.execute("COMMIT")

    def query(self, sql: str, params: list | tuple | None = None) -> list[tuple]:
        """Rows of a read query (no lock needed: DuckDB readers see committed data)."""
        return self.cursor().execute(sql, params or []).fetchall()

    def query_df(self, sql: str, params: list | tuple | None = None):
        """A read query as a pandas DataFrame."""
        return self.cursor().execute(sql, params or []).df()

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

    # --- schema ------------------------------------------------------------------------------

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

    def _resume(self) -> int:
        """Queue again the jobs that a dead process left running; fail those tried too often."""
        limit = settings.max_attempts()
        with self.write() as cur:
            rows = cur.execute(
                "SELECT id, submission_id, attempts, claimed_by FROM jobs WHERE status = 'running'"
            ).fetchall()
            for job_id, sid, attempts, claimed_by in rows:
                if attempts >= limit:
                    cur.execute(
                        "UPDATE jobs SET status = 'failed', finished_at = ?, error = ? WHERE id = ?",
                        [
                            now(),
                            f"the scorer stopped {attempts} times while working on this "
                            "submission; an admin can re-score it",
                            job_id,
                        ],
                    )
                else:
                    cur.execute(
                        "UPDATE jobs SET status = 'queued', claimed_at = NULL, claimed_by = NULL "
                        "WHERE id = ?",
                        [job_id],
                    )
                refresh_status(
                    cur, sid, note=f"resumed after the scorer ({claimed_by}) stopped", force=True
                )
        return len(rows)


def _pid_in_message(text: str) -> int | None:
    import re

    m = re.search(r"PID (\d+)", text)
    return int(m.group(1)) if m else None


_REGISTRY: dict[str, Database] = {}
_REGISTRY_LOCK = threading.Lock()


def _key(path: Path) -> str:
    return str(path.resolve())


def open_db(path: str | os.PathLike | None = None) -> Database:
    """The process-wide :class:`Database` for ``path`` (default ``ETC_LEADERBOARD_DB``).

    Opened, migrated and resumed on first use; later calls return the same object.
    Raises :class:`DatabaseInUseError` when another live process holds the file.
    """
    resolved = settings.db_path(path)
    key = _key(resolved)
    with _REGISTRY_LOCK:
        db = _REGISTRY.get(key)
        if db is None or db.closed:
            db = Database(resolved)
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
