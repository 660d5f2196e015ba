"""The scoring queue: jobs (one stage of one submission) queued, claimed, and counted.

Jobs of the first stage are claimed first, so new submissions become visible quickly. A claimed
job is held under a lease its process renews; a job whose lease expired is queued again, and one
that crashed its process alone then runs alone. docs/leaderboard.md, "Several processes, one
board".
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from . import settings, stages
from .clock import now
from .db import MAX_BACKOFF_SECONDS, Database, process_name, requeue_crashed
from .statuses import refresh_status


@dataclass
class Job:
    """A claimed job."""

    id: int
    submission_id: str
    stage: str
    options: dict[str, Any]


def enqueue(cur, submission_id: str, stage: str, options: dict[str, Any] | None = None) -> int:
    """Queue one stage for a submission (inside a write transaction); the job id."""
    job_id = cur.dialect.next_id(cur, "job_ids")
    opts = stages.stage_options(stage) if options is None else options
    cur.execute(
        "INSERT INTO jobs (id, submission_id, stage, status, attempts, created_at, options) "
        "VALUES (?, ?, ?, 'queued', 0, ?, ?)",
        [job_id, submission_id, stage, now(), json.dumps(opts, sort_keys=True)],
    )
    return int(job_id)


def reclaim_expired(db: Database) -> int:
    """Queue again the running jobs whose lease expired (their worker died); how many. Each
    in a transaction of its own, so the submissions' rows are locked one at a time."""
    lease = settings.lease_seconds()
    old, params = db.dialect.older_than("coalesce(heartbeat_at, claimed_at)", lease)
    expired = db.query(
        f"SELECT claimed_process FROM jobs WHERE status = 'running' AND {old}", params
    )
    if not expired:
        return 0
    per_process = Counter(proc for (proc,) in expired)
    done = 0
    while True:
        with db.write() as cur:
            old, params = db.dialect.older_than("coalesce(heartbeat_at, claimed_at)", lease)
            row = cur.execute(
                "SELECT id, submission_id, crashes, solo_crashes, claimed_by, claimed_process "
                f"FROM jobs WHERE status = 'running' AND {old} "
                "ORDER BY id LIMIT 1" + db.dialect.skip_locked,
                params,
            ).fetchone()
            if row is None:
                return done
            *fields, proc = row
            alone = per_process.get(proc, 1) == 1
            requeue_crashed(
                cur, [(*fields, alone)], f"claimed again: the lease of {lease} s expired"
            )
        done += 1
        db.invalidate()


def claim(db: Database, worker: str, process: str | None = None) -> Job | None:
    """Re-queue expired leases, then mark the next ready job running for ``worker`` and return
    it (None when none may run), skipping rows another worker holds where the engine locks rows.

    A job that stopped the scorer before (``crashes > 0``) runs alone: it is claimed only when
    no job of this worker's process is running, and nothing else is claimed by that process
    while it runs. ``process`` names the worker's process (default: this one's when
    ``worker`` is one of its threads, else ``worker``).
    """
    if process is None:
        process = process_name() if worker.startswith(process_name() + " ") else worker
    reclaim_expired(db)
    with db.write() as cur:
        (suspect_mine, mine) = cur.execute(
            "SELECT count(*) FILTER (WHERE crashes > 0), count(*) FROM jobs "
            "WHERE status = 'running' AND claimed_process = ?",
            [process],
        ).fetchone()
        if suspect_mine:
            return None  # it runs alone in this process
        row = cur.execute(
            "SELECT id, submission_id, stage, options FROM jobs WHERE status = 'queued' "
            "AND (not_before IS NULL OR not_before <= ?) "
            + ("AND coalesce(crashes, 0) = 0 " if mine else "")
            + "ORDER BY CASE stage WHEN ? THEN 0 ELSE 1 END, coalesce(not_before, created_at), "
            "id LIMIT 1" + db.dialect.skip_locked,
            [now(), stages.first()],
        ).fetchone()
        if row is None:
            return None
        job_id, sid, stage, options = row
        clock, at = db.dialect.clock()
        cur.execute(
            "UPDATE jobs SET status = 'running', claimed_at = ?, claimed_by = ?, "
            f"claimed_process = ?, heartbeat_at = {clock}, attempts = attempts + 1 "
            "WHERE id = ?",
            [now(), worker, process, *at, job_id],
        )
        refresh_status(cur, sid)
    db.keep_alive()
    return Job(int(job_id), sid, stage, json.loads(options or "{}"))


def finish_lock(cur, job_id: int) -> str | None:
    """Lock a job's row for storing its outcome; its status (``done``: stored already)."""
    row = cur.execute(
        "SELECT status FROM jobs WHERE id = ?" + cur.dialect.for_update, [job_id]
    ).fetchone()
    return None if row is None else row[0]


def queue_position(cur, submission_id: str) -> int | None:
    """1 + the number of queued jobs ahead of this submission's first queued job, or None."""
    row = cur.execute(
        "SELECT min(id) FROM jobs WHERE submission_id = ? AND status = 'queued'", [submission_id]
    ).fetchone()
    if row is None or row[0] is None:
        return None
    (ahead,) = cur.execute(
        "SELECT count(*) FROM jobs WHERE status = 'queued' AND id < ?", [row[0]]
    ).fetchone()
    return int(ahead) + 1


def busy_stages(cur, submission_id: str) -> set[str]:
    """The stages of a submission that are queued or running."""
    return {
        s
        for (s,) in cur.execute(
            "SELECT stage FROM jobs WHERE submission_id = ? AND status IN ('queued', 'running')",
            [submission_id],
        ).fetchall()
    }


def next_ready_in(db: Database) -> float | None:
    """Seconds until the earliest queued job's backoff ends (0 when one is ready; None: none)."""
    (ready,) = db.query(
        "SELECT min(coalesce(not_before, created_at)) FROM jobs WHERE status = 'queued'"
    )[0]
    return None if ready is None else max(0.0, (ready - now()).total_seconds())


#: A queued job not ready for longer than this (seconds) is *deferred*: it waits for a quota or
#: a judge re-run's delay, not for a crash backoff. ``worker --once`` and ``process_jobs`` do
#: not wait for deferred jobs; a running worker pool runs them when ready.
DEFER_SECONDS = MAX_BACKOFF_SECONDS


def pending_jobs(db: Database, *, deferred: bool = True) -> int:
    """Jobs queued or running (``deferred=False``: leaving out the deferred ones)."""
    if deferred:
        sql = "SELECT count(*) FROM jobs WHERE status IN ('queued', 'running')"
        return int(db.query(sql)[0][0])
    rows = db.query(
        "SELECT count(*) FROM jobs WHERE status = 'running' OR (status = 'queued' "
        "AND (not_before IS NULL OR not_before <= ?))",
        [now() + timedelta(seconds=DEFER_SECONDS)],
    )
    return int(rows[0][0])


def waiting_submissions(cur) -> int:
    """Submissions with a job queued or running."""
    (waiting,) = cur.execute(
        "SELECT count(DISTINCT submission_id) FROM jobs WHERE status IN ('queued', 'running')"
    ).fetchone()
    return int(waiting)
