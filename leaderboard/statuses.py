"""A submission's status, derived from its jobs and scores, and its history.

Statuses: ``queued`` -> ``scoring`` -> ``scored``; ``partially scored`` (a later stage pending
or failed), ``incomplete`` (a stage's latest run left items unjudged) or ``failed`` (the first
stage failed); each message lists what is pending or failed and why. Every change is appended
to ``status_history``. Functions here take a cursor of the caller's write transaction.
"""

from __future__ import annotations

from typing import NamedTuple

from etclib.core.redact import redact

from . import stages
from .clock import now

STATUSES: tuple[str, ...] = (
    "queued",
    "scoring",
    "partially scored",
    "incomplete",
    "scored",
    "failed",
)


class JobSummary(NamedTuple):
    """Where a submission's stages stand (the latest job of each)."""

    #: stages queued or running
    pending: list[str]
    #: failed stage -> its public reason
    failed: dict[str, str]
    running: bool
    #: the first stage's scores exist (the submission is on the board)
    visible: bool
    #: incomplete stage -> its public reason (``judge incomplete: K of N items failed ...``)
    incomplete: dict[str, str]
    #: pending stage -> the note its queued job carries (a re-run, a wait for a quota)
    notes: dict[str, str]


def job_summary(cur, submission_id: str) -> JobSummary:
    """The submission's :class:`JobSummary`."""
    jobs = cur.execute(
        "SELECT stage, status, error FROM jobs WHERE submission_id = ? ORDER BY id",
        [submission_id],
    ).fetchall()
    latest = {stage: (status, error) for stage, status, error in jobs}  # the newest of each
    track = stages.track_of(cur, submission_id)
    order = list(stages.all_stages(track))
    ordered = [s for s in order if s in latest] + [s for s in latest if s not in order]
    pending = [s for s in ordered if latest[s][0] in ("queued", "running")]
    failed = {s: latest[s][1] or "failed" for s in ordered if latest[s][0] == "failed"}
    incomplete = {s: latest[s][1] or "incomplete" for s in ordered if latest[s][0] == "incomplete"}
    notes = {s: latest[s][1] for s in ordered if latest[s][0] == "queued" and latest[s][1]}
    running = any(v[0] == "running" for v in latest.values())
    first = list(stages.groups(stages.first(), track))
    marks = ", ".join("?" for _ in first)
    (visible,) = cur.execute(
        f"SELECT count(*) FROM scores WHERE submission_id = ? AND metric_group IN ({marks})",
        [submission_id, *first],
    ).fetchone()
    return JobSummary(pending, failed, running, bool(visible), incomplete, notes)


def pending_metrics(pending: list[str], track: str | None = None) -> list[str]:
    """The metric groups of the pending stages."""
    return [m for s in pending for m in stages.groups(s, track)]


def failed_metrics(failed: dict[str, str], track: str | None = None) -> dict[str, str]:
    """Metric group -> the reason its stage failed."""
    return {m: reason for s, reason in failed.items() for m in stages.groups(s, track)}


def refresh_status(cur, submission_id: str, note: str | None = None, force: bool = False) -> str:
    """Derive a submission's status from its jobs and scores; record it when it changes."""
    # On PostgreSQL, two workers finishing two stages of one submission at once must not each
    # derive the status without the other's job: the submission's row is locked first.
    (kind,) = cur.execute(
        "SELECT kind FROM submissions WHERE id = ?" + cur.dialect.for_update, [submission_id]
    ).fetchone()
    if kind == "reported":
        return "scored"
    summary = job_summary(cur, submission_id)
    pending, failed, running, visible = summary[:4]
    first = stages.first()
    parts = []
    if not visible:
        if first in failed and not pending:
            status, parts = "failed", [failed[first]]
        else:
            status = "scoring" if running else "queued"
    elif pending or failed:
        status = "partially scored"
        if pending:
            track = stages.track_of(cur, submission_id)
            parts.append("pending: " + ", ".join(pending_metrics(pending, track)))
        parts += [f"{s}: {note}" for s, note in summary.notes.items()]
        parts += [f"{s} failed: {reason}" for s, reason in failed.items()]
        parts += list(summary.incomplete.values())
    elif summary.incomplete:
        status = "incomplete"
        parts += list(summary.incomplete.values())
    else:
        status = "scored"
    # public text (board, exports, status): jobs.error holds only public reasons; the redactor
    # is a second guard against a key that reached one anyway
    message = redact("; ".join(parts))
    old_status, old_message = cur.execute(
        "SELECT status, status_message FROM submissions WHERE id = ?", [submission_id]
    ).fetchone()
    if (status, message) != (old_status, old_message or "") or force:
        cur.execute(
            "UPDATE submissions SET status = ?, status_message = ? WHERE id = ?",
            [status, message, submission_id],
        )
        shown = "; ".join(p for p in (note, message) if p)
        cur.execute(
            "INSERT INTO status_history VALUES (?, ?, ?, ?)", [submission_id, now(), status, shown]
        )
    return status
