"""The leaderboard's storage: an embedded DuckDB file (default) or a PostgreSQL server.

``ETC_LEADERBOARD_DB`` (or ``open_db(target)``) names a file (:class:`DuckDBDatabase`) or a
``postgresql://`` URL (:class:`ServerDatabase`); both offer one interface (:class:`Database`:
``cursor()``, ``write()``, ``query()``, ``query_df()``, ``close()``), and the same
:data:`MIGRATIONS` create both schemas (:func:`engine_statements` holds their one per-engine
branch; :mod:`leaderboard.engine` the few SQL differences of the write path).

On PostgreSQL there is no lock file and no resume on opening: many processes share the server,
writes are transactions on pooled connections (``ETC_LB_POOL_SIZE``), running jobs hold leases
(:mod:`leaderboard.queue`), and server faults become :class:`DatabaseServerError` with the URL
shown without its password. The rest of this text is about the DuckDB file:

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
import re
import socket
import threading
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

from etclib import duckfile
from etclib.duckfile import not_duckdb

from . import settings
from .clock import now
from .engine import SERVER, serialize
from .errors import (
    DatabaseCorruptError,
    DatabaseInUseError,
    DatabaseMissingError,
    DatabaseServerError,
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
MIGRATIONS.append(
    (
        7,
        [
            # the lease of a running job (docs/deploy.md): the worker process holding it and
            # its last heartbeat; on a PostgreSQL board a job whose heartbeat is older than
            # ETC_LB_LEASE_SECONDS is claimed again (DuckDB resumes jobs on opening instead)
            "ALTER TABLE jobs ADD COLUMN claimed_process VARCHAR",
            "ALTER TABLE jobs ADD COLUMN heartbeat_at TIMESTAMP",
            # a job's result is stored once, however many workers ran it (a re-claimed job
            # whose first worker was slow, not dead): INSERT ... ON CONFLICT DO NOTHING
            "CREATE UNIQUE INDEX scores_once ON scores (job_id, metric_group, signature)",
            # the board orders a submission's history by DuckDB's rowid (insertion order);
            # PostgreSQL has none: an identity column of that name keeps the same order
            (
                "postgresql",
                "ALTER TABLE status_history ADD COLUMN rowid BIGINT GENERATED ALWAYS AS IDENTITY",
            ),
        ],
    )
)
MIGRATIONS.append(
    (
        8,
        [
            # per-visitor and per-model rate limits that a reload or another replica does not
            # reset (leaderboard.limits): one row per counted event, the key hashed
            """CREATE TABLE limit_events (
                bucket VARCHAR NOT NULL,        -- e.g. admin-failure, chat, chat-model:openai
                key_hash VARCHAR NOT NULL,      -- sha256 of the visitor's key (or "all")
                happened_at TIMESTAMP NOT NULL
            )""",
            "CREATE INDEX limit_events_by_key ON limit_events (bucket, key_hash, happened_at)",
        ],
    )
)
SCHEMA_VERSION = max(version for version, _ in MIGRATIONS)


def engine_statements(statements: list, engine: str) -> Iterator[str]:
    """A migration's statements for one engine: the shared ones (written in SQL both accept,
    ``BLOB`` spelt ``BYTEA`` on PostgreSQL) and the ``(engine, sql)`` ones of this engine."""
    for item in statements:
        if isinstance(item, tuple):
            only, sql = item
            if only != engine:
                continue
        else:
            sql = item
        if engine == SERVER:
            sql = re.sub(r"\bBLOB\b", "BYTEA", sql)
        yield sql


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

    Both engines offer the same interface: :meth:`cursor` (reads), :meth:`write` (a cursor in
    one transaction), :meth:`query`, :meth:`query_df`, :meth:`close`; ``engine`` names the
    engine and ``leases`` says whether running jobs hold a lease (PostgreSQL) rather than
    being resumed when the database is opened (DuckDB).
    """

    engine = "duckdb"
    leases = False

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
        #: Bumped by :meth:`invalidate`, so a result computed before a write is not cached after it.
        self.generation = 0
        self.pools: list[Any] = []
        #: Jobs queued again on opening, left running by a dead process (DuckDB only).
        self.resumed_jobs = 0

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
        self.generation += 1
        self.cache.clear()

    def cache_put(self, key: Any, value: Any, generation: int) -> None:
        """Cache ``value`` unless a write happened since ``generation`` was read."""
        if generation == self.generation:
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
        """Stop this process's workers and put its running jobs back in the queue."""
        for pool in list(self.pools):
            pool.stop()
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

    @staticmethod
    def _version(cur) -> int:
        exists = cur.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_version' "
            "AND table_schema = current_schema()"
        ).fetchone()[0]
        if not exists:
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
            serialize(cur, "migrate")
            cur.execute(
                "CREATE TABLE IF NOT EXISTS schema_version "
                "(version INTEGER NOT NULL, applied_at TIMESTAMP NOT NULL)"
            )
        for version, statements in MIGRATIONS:
            if version <= current:
                continue
            with self.write() as cur:
                serialize(cur, "migrate")
                if version <= self._version(cur):
                    continue  # another process applied it meanwhile
                for sql in engine_statements(statements, self.engine):
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

    def _unregister(self, key: str) -> None:
        with _REGISTRY_LOCK:
            if _REGISTRY.get(key) is self:
                del _REGISTRY[key]


class DuckDBDatabase(Database):
    """The embedded board: one DuckDB file, one writing process, cursors per thread."""

    def __init__(self, path: Path, *, create: bool = False, source: str = "") -> None:
        import duckdb

        self.path = path
        self._init_common(str(path))
        self.created = _check_path(path, create, source)
        self._lock_file = _LockFile(path)
        try:
            self._lock_file.acquire(path)
        except OSError as exc:
            raise _unwritable(path, exc) from None
        reason = None if self.created else not_duckdb(path)
        if reason:  # before DuckDB reads it (it would try an extension for, e.g., SQLite)
            self._lock_file.release()
            raise DatabaseCorruptError(str(path), reason)
        try:
            self.con = duckfile.connect(path)
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

    def close(self) -> None:
        """Stop this process's workers, close the connection and release the lock file."""
        if self.closed:
            return
        self._stop_work()
        self.closed = True
        with self._cursors_lock:
            for cur in self._cursors:
                with contextlib.suppress(Exception):
                    cur.close()
            self._cursors.clear()
        self.con.close()
        self._lock_file.release()
        self._unregister(_key(self.path))

    # --- on opening --------------------------------------------------------------------------

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

    def _resume(self) -> int:
        """Queue again the jobs that a dead process left running; count the crash against a
        job only when it was the only one running; fail those that crashed alone too often."""
        with self.write() as cur:
            rows = cur.execute(
                "SELECT id, submission_id, crashes, solo_crashes, claimed_by FROM jobs "
                "WHERE status = 'running'"
            ).fetchall()
            alone = len(rows) == 1
            return requeue_crashed(
                cur, [(*r, alone) for r in rows], "resumed after the scorer stopped"
            )


class ServerCursor:
    """A cursor of one PostgreSQL transaction with the DuckDB cursor's small API.

    ``execute(sql, params)`` takes ``?`` placeholders (:func:`etclib.serverdb.translate`) and
    returns an object with ``fetchone``, ``fetchall`` and ``description``.
    """

    engine = SERVER

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    def execute(self, sql: str, params: list | tuple | None = None) -> _Rows:
        from etclib.serverdb import translate

        params = list(params) if params is not None else None
        got = self.raw.execute(translate(sql, params is not None), params)
        return _Rows(got.fetchall() if got.description else [], got.description)

    def copy_rows(self, table: str, columns: list[str], rows) -> None:
        """``COPY`` rows (tuples in the order of ``columns``) into ``table``."""
        import numpy as np

        with (
            self.raw.cursor() as cur,
            cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy,
        ):
            for row in rows:
                copy.write_row([v.item() if isinstance(v, np.generic) else v for v in row])


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

    engine = SERVER

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

    engine = SERVER
    leases = True

    def __init__(self, url: str, *, create: bool = True, source: str = "") -> None:
        from etclib.errors import ConfigError
        from etclib.serverdb import connect, new_pool, redacted

        self.url = url
        self._init_common(redacted(url))
        #: What messages and ``db.path`` show: the URL without its password.
        self.path = self.label
        self._local = threading.local()
        self._heartbeat: threading.Thread | None = None
        self._stopping = threading.Event()
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
            return len(
                cur.execute(
                    f"UPDATE jobs SET heartbeat_at = {SERVER_NOW} WHERE status = 'running' "
                    "AND claimed_process = ? RETURNING id",
                    [process_name()],
                ).fetchall()
            )

    def _beat(self) -> None:
        while not self._stopping.wait(max(0.2, settings.lease_seconds() / 3)):
            try:
                self.beat()
            except Exception as exc:  # noqa: BLE001 - the server away for a moment: try again
                log.warning("could not renew the job leases: %s", exc)

    def close(self) -> None:
        """Stop this process's workers, put its running jobs back, close its connections."""
        if self.closed:
            return
        self._stop_work()
        self._stopping.set()
        self.closed = True
        self._pool.close()
        self._unregister(self.url)


#: The server's clock, in the naive UTC the TIMESTAMP columns hold (leases are measured on it,
#: so the workers' machines' clocks do not matter).
SERVER_NOW = "timezone('UTC', clock_timestamp())"


def _server_reason(exc: BaseException) -> str:
    """A server error's text without any password (psycopg may quote the connection string)."""
    from etclib.redact import redact

    text = str(exc).strip() or type(exc).__name__
    text = re.sub(r"(postgres(?:ql)?://[^:/@\s]*:)[^@\s]*@", r"\1***@", text)
    text = re.sub(r"password=\S+", "password=***", text)
    return redact(text)


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

    A file path opens the embedded DuckDB board; a ``postgresql://`` URL a board on that
    server (:class:`ServerDatabase`). Opened, checked, migrated (and on DuckDB resumed) on
    first use; later calls return the same object. A missing file (or an empty server
    database) is created when ``create`` (the library's default; the CLI refuses a missing one
    unless ``--create``), else :class:`DatabaseMissingError`. On DuckDB raises
    :class:`DatabaseInUseError` when another live process holds the file, and a
    :class:`StorageError` for a damaged file, a directory, or a folder it cannot write; on
    PostgreSQL :class:`DatabaseServerError` when the server cannot be used.
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
            if isinstance(target, str):
                db = ServerDatabase(target, create=create, source=source)
            else:
                db = DuckDBDatabase(target, create=create, source=source)
            if db.created:
                log.warning("created a new, empty leaderboard database at %s", db.label)
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
