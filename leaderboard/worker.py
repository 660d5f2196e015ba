"""The scoring worker: claims queued jobs and runs them, as a thread pool or in the caller.

:func:`start_workers` starts the site's pool; ``python -m leaderboard worker`` runs it in its own
process; :func:`process_jobs` runs the queue in the calling thread. A job's outcome is stored
once (the finishing transaction drops a result another worker stored first), and only a result
this worker stored feeds Study 2. Crash recovery, retries and quotas: docs/leaderboard.md.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
import uuid
from datetime import timedelta

from etclib.core.errors import EtcError, QuotaExhaustedError, ServiceError
from etclib.core.redact import redact

from . import board, samples, settings, stages
from .clock import now
from .db import Database, process_name, resolve
from .errors import DatabaseCorruptError, DatabaseUnwritableError, WorkerStoppedError
from .faultpoints import hit as fault_point
from .queue import (
    DEFER_SECONDS,
    Job,
    busy_stages,
    claim,
    enqueue,
    finish_lock,
    next_ready_in,
    pending_jobs,
)
from .scoring import compute, feed_study, store_result
from .statuses import refresh_status

log = logging.getLogger("leaderboard.worker")

#: Consecutive errors of a worker thread's loop (not of a job) after which the pool stops.
MAX_LOOP_ERRORS = 5
#: Pause after the first loop error, doubled after each further one.
LOOP_ERROR_PAUSE = 0.5


def run_job(db: Database, job: Job) -> bool:
    """Score one claimed job and store its result (or its failure); True when it succeeded."""
    try:
        result = compute(db, job)
    except QuotaExhaustedError as exc:
        _wait_for_quota(db, job, exc)
        return False
    except EtcError as exc:
        _fail(db, job, *failure_texts(exc))
        return False
    except Exception as exc:  # noqa: BLE001 - any failure must end the job, not the worker
        public, detail = failure_texts(exc)
        log.error(
            "job %s (%s of %s) failed: %s\n%s",
            job.id,
            job.stage,
            job.submission_id,
            detail,
            redact(traceback.format_exc()),
        )
        _fail(db, job, public, detail)
        return False
    fault_point("after_compute")
    incomplete = result.incomplete(shown=INCOMPLETE_REASONS_SHOWN)
    if incomplete:
        _incomplete(db, job, result, incomplete)
        return False
    # Before the scores become visible: the board that shows them next reads their resamples
    # instead of computing them while its visitor waits.
    samples.warm(result)
    with db.write() as cur:
        fault_point("before_store")
        if finish_lock(cur, job.id) == "done":
            # another worker ran it too (its lease had expired) and stored it first
            log.warning("job %s was stored by another worker; this result is dropped", job.id)
            return True
        stored = store_result(cur, job, result)
        fault_point("after_store")
        cur.execute(
            "UPDATE jobs SET status = 'done', finished_at = ? WHERE id = ?", [now(), job.id]
        )
        if job.stage == stages.first() and job.options.get("follow", True):
            waiting = busy_stages(cur, job.submission_id)
            track = stages.track_of(cur, job.submission_id)
            for stage in stages.configured_stages(track)[1:]:
                if stage not in waiting:
                    enqueue(cur, job.submission_id, stage)
        fault_point("during_status")
        refresh_status(cur, job.submission_id)
    fault_point("after_commit")
    db.invalidate()
    db.notify_jobs()
    if stored:  # Study 2 gets the decisions of a stored result only, once it is committed
        try:
            feed_study(job.submission_id, result)
        except Exception:  # noqa: BLE001 - the score is stored: a study's failure is logged
            log.exception("job %s: Study 2 was not fed (the score is stored)", job.id)
    return True


#: Failed items' reasons the submitter sees for an incomplete stage (operators see all).
INCOMPLETE_REASONS_SHOWN = 3


def _incomplete(db: Database, job: Job, result, messages: dict[str, str]) -> None:
    """End ``job`` as ``incomplete`` and queue its automatic re-run, if any is left."""
    public = redact("; ".join(messages.values()))
    failures = result.failures()
    detail = redact("\n".join(line for lines in failures.values() for line in lines))
    log.warning("job %s (%s of %s) incomplete: %s", job.id, job.stage, job.submission_id, public)
    with db.write() as cur:
        if finish_lock(cur, job.id) == "done":
            return
        cur.execute(
            "UPDATE jobs SET status = 'incomplete', finished_at = ?, error = ?, error_detail = ? "
            "WHERE id = ?",
            [now(), public, detail or None, job.id],
        )
        runs = [
            status
            for (status,) in cur.execute(
                "SELECT status FROM jobs WHERE submission_id = ? AND stage = ? ORDER BY id DESC",
                [job.submission_id, job.stage],
            ).fetchall()
        ]
        # this run and the incomplete ones right before it: the automatic re-runs so far + 1
        streak = next((i for i, st in enumerate(runs) if st != "incomplete"), len(runs))
        retries = settings.judge_retries()
        if streak <= retries and not busy_stages(cur, job.submission_id) & {job.stage}:
            at = now() + timedelta(seconds=settings.judge_retry_delay() * 2 ** (streak - 1))
            retry = enqueue(cur, job.submission_id, job.stage, job.options)
            note = (
                f"re-run {streak} of {retries} queued for {at:%Y-%m-%d %H:%M} UTC (only the failed "
                f"items are asked again) after: {public}"
            )
            cur.execute("UPDATE jobs SET not_before = ?, error = ? WHERE id = ?", [at, note, retry])
        refresh_status(cur, job.submission_id)
    db.invalidate()
    db.notify_jobs()


def _wait_for_quota(db: Database, job: Job, exc: QuotaExhaustedError) -> None:
    """Put ``job`` back in the queue until the provider's quota may allow it again."""
    at = now() + timedelta(seconds=settings.quota_retry_delay())
    public = (
        f"waiting for the {exc.provider} judge's quota ({exc.quota}), used up at the provider; "
        f"tried again from {at:%Y-%m-%d %H:%M} UTC"
    )
    detail = redact(f"{exc} [{type(exc).__name__} HTTP {exc.status} (ref {exc.ref}): {exc.detail}]")
    log.warning(
        "job %s (%s of %s) waits for a quota until %s UTC: %s",
        job.id,
        job.stage,
        job.submission_id,
        f"{at:%Y-%m-%d %H:%M}",
        exc,
    )
    with db.write() as cur:
        if finish_lock(cur, job.id) == "done":
            return
        cur.execute(
            "UPDATE jobs SET status = 'queued', claimed_at = NULL, claimed_by = NULL, "
            "claimed_process = NULL, heartbeat_at = NULL, not_before = ?, error = ?, "
            "error_detail = ? WHERE id = ?",
            [at, public, detail, job.id],
        )
        refresh_status(cur, job.submission_id)
    db.invalidate()
    db.notify_jobs()


def failure_texts(exc: BaseException) -> tuple[str, str]:
    """(public reason, private detail) of a job's failure, both redacted.

    The public reason becomes the submission's ``status_message``: a ``ServiceError``'s
    visitor-safe text, another ``EtcError``'s message, else a reference only. The detail is for
    the log and the admin view (``jobs.error_detail``).
    """
    if isinstance(exc, ServiceError):
        status = f" HTTP {exc.status}" if exc.status else ""
        return str(exc), redact(f"{type(exc).__name__}{status} (ref {exc.ref}): {exc.detail}")
    if isinstance(exc, EtcError):
        text = redact(str(exc))
        return text, text
    ref = uuid.uuid4().hex[:10]
    return (
        f"internal error (ref {ref}); the operator has been told and an admin can re-score it",
        redact(f"(ref {ref}) {type(exc).__name__}: {exc}"),
    )


def _fail(db: Database, job: Job, reason: str, detail: str = "") -> None:
    if detail and detail != reason:
        log.warning("job %s (%s of %s) failed: %s", job.id, job.stage, job.submission_id, detail)
    with db.write() as cur:
        if finish_lock(cur, job.id) == "done":
            return  # another worker stored it (its lease had expired): that result stands
        cur.execute(
            "UPDATE jobs SET status = 'failed', finished_at = ?, error = ?, error_detail = ? "
            "WHERE id = ?",
            [now(), reason, detail or None, job.id],
        )
        refresh_status(cur, job.submission_id)
    db.invalidate()
    db.notify_jobs()  # a job waiting to run alone may go now


def worker_name() -> str:
    """This thread as a job's ``claimed_by``: its process (PID, host, token) and its name."""
    return f"{process_name()} {threading.current_thread().name}"


def run_one(db: Database) -> bool:
    """Claim and run one job; False when the queue is empty."""
    job = claim(db, worker_name())
    if job is None:
        return False
    fault_point("after_claim")
    run_job(db, job)
    _after_job(db)
    return True


def _after_job(db: Database) -> None:
    if settings.hub_repo() and settings.hf_token():
        from .export import push_to_hub

        try:
            push_to_hub(db=db)
        except EtcError as exc:  # recorded in hub_pushes; scoring goes on
            log.warning("push to the Hub failed: %s", exc)


def process_jobs(*, db: Database | None = None, max_jobs: int | None = None) -> int:
    """Run queued jobs in this thread until the queue is empty; the number run. Waits out a
    crash backoff; a deferred job (:data:`~leaderboard.queue.DEFER_SECONDS`) is left for a
    running worker."""
    db = resolve(db)
    done = 0
    while max_jobs is None or done < max_jobs:
        if run_one(db):
            done += 1
            continue
        wait = next_ready_in(db)
        if not wait or wait > DEFER_SECONDS:  # nothing queued, only jobs that cannot run now,
            break  # or deferred ones
        time.sleep(min(wait, 5.0))
    return done


class WorkerPool:
    """A bounded pool of scoring threads on one database."""

    def __init__(
        self, db: Database, threads: int, poll: float = 2.0, warm_board: bool = True
    ) -> None:
        self.db = db
        self.poll = poll
        self.warm_board = warm_board
        self._stop = threading.Event()
        #: Why the pool stopped by itself (repeated loop errors, a storage fault), else None.
        self.failure: str | None = None
        self._failure_lock = threading.Lock()
        self.threads = [
            threading.Thread(target=self._loop, name=f"lb-worker-{i + 1}", daemon=True)
            for i in range(threads)
        ]

    def start(self) -> WorkerPool:
        for t in self.threads:
            t.start()
        return self

    @property
    def running(self) -> bool:
        return not self._stop.is_set() and any(t.is_alive() for t in self.threads)

    def _loop(self) -> None:
        errors = 0
        worked = False
        while not self._stop.is_set():
            try:
                busy = run_one(self.db)
                errors = 0
                idle = not pending_jobs(self.db, deferred=False)
                if self.warm_board and worked and not busy and idle:
                    # the queue just emptied: rank the boards for their next visitor
                    board.warm(db=self.db)
                worked = busy
            except Exception as exc:  # noqa: BLE001 - e.g. the database failing under us
                if self._stop.is_set() or self.db.closed:
                    return
                if isinstance(exc, (DatabaseUnwritableError, DatabaseCorruptError)):
                    # expected, and retrying soon does not help (a full or read-only disk, a
                    # damaged file): one line with the fix, no traceback, the pool stops
                    self._stopped_by(f"the scoring worker stopped: {exc}")
                    return
                errors += 1
                log.error(
                    "worker loop error %d of %d:\n%s",
                    errors,
                    MAX_LOOP_ERRORS,
                    traceback.format_exc(),
                )
                if errors >= MAX_LOOP_ERRORS:
                    self._stopped_by(
                        f"the scoring worker stopped after {errors} consecutive errors; the "
                        f"last: {type(exc).__name__}: {str(exc)[:400]}"
                    )
                    return
                self._stop.wait(LOOP_ERROR_PAUSE * 2 ** (errors - 1))
                continue
            if not busy:
                with self.db.jobs_changed:
                    self.db.jobs_changed.wait(self.poll)

    def _stopped_by(self, failure: str) -> None:
        """Stop the pool for ``failure``, logged once however many threads meet it (records
        marked ``worker_failure``: a command that prints the failure itself drops them)."""
        with self._failure_lock:
            first = self.failure is None
            if first:
                self.failure = failure
        if first:
            log.error("%s", failure, extra={"worker_failure": True})
        self._stop.set()
        self.db.notify_jobs()

    def stop(self, timeout: float = 60.0) -> None:
        """Ask the threads to stop after their current job and wait for them."""
        self._stop.set()
        self.db.notify_jobs()
        for t in self.threads:
            if t.is_alive() and t is not threading.current_thread():
                t.join(timeout)
        if self in self.db.pools:
            self.db.pools.remove(self)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until no job is queued or running (deferred jobs aside); False on timeout or
        when the pool stopped, :class:`WorkerStoppedError` when it stopped by itself."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while pending_jobs(self.db, deferred=False):
            if self.failure:
                raise WorkerStoppedError(self.failure)
            if not self.running:
                return False
            if deadline is not None and time.monotonic() > deadline:
                return False
            time.sleep(0.2)
        return True


def start_workers(
    threads: int | None = None, *, db: Database | None = None, warm_board: bool = True
) -> WorkerPool:
    """Start (once per database and process) the pool of scoring threads; return it.

    ``threads`` defaults to ``ETC_LB_WORKERS`` (0: a pool without threads). ``warm_board``: rank
    the boards whenever the queue empties, for the site's next visitor.
    """
    db = resolve(db)
    for pool in db.pools:
        if pool.running:
            return pool
    count = settings.workers() if threads is None else threads
    pool = WorkerPool(db, count, warm_board=warm_board).start()
    db.pools.append(pool)
    return pool


def stop_workers(*, db: Database | None = None) -> None:
    """Stop this process's scoring threads on ``db``."""
    db = resolve(db)
    for pool in list(db.pools):
        pool.stop()
