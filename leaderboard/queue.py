"""The scoring queue: jobs (one stage of one submission) queued, claimed, and counted.

Jobs of the first stage are claimed before heavier ones, so new submissions become visible
quickly; within a stage, in the order they became ready. A job left ``running`` by a process
that died is queued again when the database is next opened (:mod:`leaderboard.db`), ready only
after a backoff, and from then on it runs alone: while it runs nothing else is claimed, and it
is claimed only when nothing else runs. A later crash is then known to be its own (and counts
towards failing it), while crashes with several jobs in flight count against none of them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from . import stages
from .clock import now
from .db import Database
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
    job_id = cur.execute("SELECT nextval('job_ids')").fetchone()[0]
    opts = stages.stage_options(stage) if options is None else options
    cur.execute(
        "INSERT INTO jobs (id, submission_id, stage, status, attempts, created_at, options) "
        "VALUES (?, ?, ?, 'queued', 0, ?, ?)",
        [job_id, submission_id, stage, now(), json.dumps(opts, sort_keys=True)],
    )
    return int(job_id)


def claim(db: Database, worker: str) -> Job | None:
    """Mark the next ready job running for ``worker`` and return it (None when none may run).

    A job that stopped the scorer before (``crashes > 0``) runs alone: it is claimed only when
    no job is running, and nothing is claimed while it runs.
    """
    with db.write() as cur:
        (suspect_running, running) = cur.execute(
            "SELECT count(*) FILTER (WHERE crashes > 0), count(*) FROM jobs "
            "WHERE status = 'running'"
        ).fetchone()
        if suspect_running:
            return None
        row = cur.execute(
            "SELECT id, submission_id, stage, options, crashes FROM jobs WHERE status = 'queued' "
            "AND (not_before IS NULL OR not_before <= ?) "
            "ORDER BY CASE stage WHEN ? THEN 0 ELSE 1 END, coalesce(not_before, created_at), id "
            "LIMIT 1",
            [now(), stages.first()],
        ).fetchone()
        if row is None:
            return None
        job_id, sid, stage, options, crashes = row
        if crashes and running:
            return None  # let the running jobs finish; then it runs alone
        cur.execute(
            "UPDATE jobs SET status = 'running', claimed_at = ?, claimed_by = ?, "
            "attempts = attempts + 1 WHERE id = ?",
            [now(), worker, job_id],
        )
        refresh_status(cur, sid)
    return Job(int(job_id), sid, stage, json.loads(options or "{}"))


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
    (wait,) = db.query(
        "SELECT min(date_diff('millisecond', ?::TIMESTAMP, coalesce(not_before, created_at))) "
        "FROM jobs WHERE status = 'queued'",
        [now()],
    )[0]
    return None if wait is None else max(0.0, wait / 1000)


def pending_jobs(db: Database) -> int:
    """Jobs queued or running."""
    return int(db.query("SELECT count(*) FROM jobs WHERE status IN ('queued', 'running')")[0][0])


def waiting_submissions(cur) -> int:
    """Submissions with a job queued or running."""
    (waiting,) = cur.execute(
        "SELECT count(DISTINCT submission_id) FROM jobs WHERE status IN ('queued', 'running')"
    ).fetchone()
    return int(waiting)
