"""The scoring worker: claims queued jobs and runs them, as a thread pool or in the caller.

- In the site process: :func:`start_workers` starts a bounded pool (``ETC_LB_WORKERS``
  threads, default 2) that sleeps until a job is queued. It is idempotent per database.
- Without the site: ``python -m leaderboard worker`` runs the same pool in its own process
  (``--once`` stops when the queue is empty).
- In tests and scripts: :func:`process_jobs` runs every queued job in the calling thread.

First-stage (lexical) jobs are claimed before heavier ones (:func:`leaderboard.queue.claim`).
A job that raises an ``EtcError`` fails with its message (shown to the submitter); any other
exception fails it with its type and message, and the traceback goes to the log. A job left
``running`` by a process that died is queued again when the database is next opened.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import traceback

from etclib.errors import EtcError

from . import settings, stages
from .clock import now
from .db import Database, resolve
from .queue import Job, busy_stages, claim, enqueue, pending_jobs
from .scoring import compute, store_result
from .statuses import refresh_status

__all__ = [
    "WorkerPool",
    "claim",
    "pending_jobs",
    "process_jobs",
    "run_job",
    "run_one",
    "start_workers",
    "stop_workers",
]

log = logging.getLogger("leaderboard.worker")


def run_job(db: Database, job: Job) -> bool:
    """Score one claimed job and store its result (or its failure); True when it succeeded."""
    try:
        result = compute(db, job)
    except EtcError as exc:
        _fail(db, job, str(exc))
        return False
    except Exception as exc:  # noqa: BLE001 - any failure must end the job, not the worker
        log.error(
            "job %s (%s of %s) failed:\n%s",
            job.id,
            job.stage,
            job.submission_id,
            traceback.format_exc(),
        )
        _fail(
            db,
            job,
            f"internal error ({type(exc).__name__}: {str(exc)[:300]}); an admin can re-score it",
        )
        return False
    with db.write() as cur:
        store_result(cur, job, result)
        cur.execute(
            "UPDATE jobs SET status = 'done', finished_at = ? WHERE id = ?", [now(), job.id]
        )
        if job.stage == stages.first() and job.options.get("follow", True):
            waiting = busy_stages(cur, job.submission_id)
            track = stages.track_of(cur, job.submission_id)
            for stage in stages.configured_stages(track)[1:]:
                if stage not in waiting:
                    enqueue(cur, job.submission_id, stage)
        refresh_status(cur, job.submission_id)
    db.invalidate()
    db.notify_jobs()
    return True


def _fail(db: Database, job: Job, reason: str) -> None:
    with db.write() as cur:
        cur.execute(
            "UPDATE jobs SET status = 'failed', finished_at = ?, error = ? WHERE id = ?",
            [now(), reason, job.id],
        )
        refresh_status(cur, job.submission_id)
    db.invalidate()


def worker_name() -> str:
    return f"pid {os.getpid()} {threading.current_thread().name}"


def run_one(db: Database) -> bool:
    """Claim and run one job; False when the queue is empty."""
    job = claim(db, worker_name())
    if job is None:
        return False
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
    """Run queued jobs in this thread until the queue is empty; the number run."""
    db = resolve(db)
    done = 0
    while max_jobs is None or done < max_jobs:
        if not run_one(db):
            break
        done += 1
    return done


class WorkerPool:
    """A bounded pool of scoring threads on one database."""

    def __init__(self, db: Database, threads: int, poll: float = 2.0) -> None:
        self.db = db
        self.poll = poll
        self._stop = threading.Event()
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
        while not self._stop.is_set():
            try:
                busy = run_one(self.db)
            except Exception:  # noqa: BLE001 - e.g. the database closed under us
                if self._stop.is_set() or self.db.closed:
                    return
                log.error("worker loop error:\n%s", traceback.format_exc())
                busy = False
            if not busy:
                with self.db.jobs_changed:
                    self.db.jobs_changed.wait(self.poll)

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
        """Block until no job is queued or running; False on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while pending_jobs(self.db):
            if deadline is not None and time.monotonic() > deadline:
                return False
            time.sleep(0.2)
        return True


def start_workers(threads: int | None = None, *, db: Database | None = None) -> WorkerPool:
    """Start (once per database and process) the pool of scoring threads; return it."""
    db = resolve(db)
    for pool in db.pools:
        if pool.running:
            return pool
    pool = WorkerPool(db, threads or settings.workers()).start()
    db.pools.append(pool)
    return pool


def stop_workers(*, db: Database | None = None) -> None:
    """Stop this process's scoring threads on ``db``."""
    db = resolve(db)
    for pool in list(db.pools):
        pool.stop()
