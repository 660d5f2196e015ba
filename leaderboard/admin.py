"""Moderation: hide, unhide, soft-delete and re-score submissions (``ETC_ADMIN_TOKEN``).

Every operation takes the admin token and compares it in constant time
(``hmac.compare_digest``). Without ``ETC_ADMIN_TOKEN`` admin operations are disabled. Nothing is
erased: a deleted submission keeps its rows (``visibility = 'deleted'``), every action is logged
in ``moderation_log``, and a re-score adds new score rows next to the old ones.
"""

from __future__ import annotations

import hmac

import pandas as pd

from . import settings
from . import stages as stage_rules
from .clock import now
from .db import Database, resolve
from .errors import AdminError, LeaderboardError, NotFoundError
from .queue import busy_stages, enqueue
from .statuses import refresh_status


def check_token(token: str | None) -> None:
    """Raise :class:`AdminError` unless ``token`` is the configured admin token."""
    expected = settings.admin_token()
    if not expected:
        raise AdminError(
            "Admin operations are disabled: set ETC_ADMIN_TOKEN (environment or "
            ".streamlit/secrets.toml) on the server."
        )
    if not token or not hmac.compare_digest(token.encode("utf-8"), expected.encode("utf-8")):
        raise AdminError("Wrong admin token; nothing was changed.")


def _set_visibility(
    submission_id: str, token: str | None, visibility: str, action: str, note: str, db
) -> None:
    check_token(token)
    db = resolve(db)
    with db.write() as cur:
        row = cur.execute(
            "SELECT visibility FROM submissions WHERE id = ?", [submission_id]
        ).fetchone()
        if row is None:
            raise NotFoundError(f"No submission {submission_id!r}; see admin list for the ids.")
        cur.execute(
            "UPDATE submissions SET visibility = ? WHERE id = ?", [visibility, submission_id]
        )
        cur.execute(
            "INSERT INTO moderation_log VALUES (?, ?, ?, ?)", [now(), submission_id, action, note]
        )
    db.invalidate()


def hide(
    submission_id: str, token: str | None, note: str = "", *, db: Database | None = None
) -> None:
    """Hide a submission from the board and exports (its owner can still see its status)."""
    _set_visibility(submission_id, token, "hidden", "hide", note, db)


def unhide(
    submission_id: str, token: str | None, note: str = "", *, db: Database | None = None
) -> None:
    """Show a hidden or deleted submission again."""
    _set_visibility(submission_id, token, "public", "unhide", note, db)


def delete(
    submission_id: str, token: str | None, note: str = "", *, db: Database | None = None
) -> None:
    """Soft-delete: gone from every public view and from duplicate checks; rows are kept."""
    _set_visibility(submission_id, token, "deleted", "delete", note, db)


def rescore(
    submission_id: str,
    token: str | None,
    stages: list[str] | None = None,
    note: str = "",
    *,
    db: Database | None = None,
) -> list[int]:
    """Queue new scoring jobs for ``stages`` (default: the first stage, which queues the
    configured heavier ones when it finishes); job ids.

    New score rows are added with their signatures; old ones stay.
    """
    check_token(token)
    db = resolve(db)
    wanted = [stage_rules.check(s) for s in (stages or [stage_rules.first()])]
    with db.write() as cur:
        row = cur.execute("SELECT kind FROM submissions WHERE id = ?", [submission_id]).fetchone()
        if row is None:
            raise NotFoundError(f"No submission {submission_id!r}; see admin list for the ids.")
        if row[0] == "reported":
            raise LeaderboardError(
                f"{submission_id} is a published (reported) row; it has no predictions to score."
            )
        busy = busy_stages(cur, submission_id)
        ids = [enqueue(cur, submission_id, s) for s in wanted if s not in busy]
        cur.execute(
            "INSERT INTO moderation_log VALUES (?, ?, 'rescore', ?)",
            [now(), submission_id, note or ",".join(wanted)],
        )
        refresh_status(cur, submission_id, note="re-score requested", force=True)
    db.invalidate()
    db.notify_jobs()
    return ids


def admin_submissions(token: str | None, *, db: Database | None = None) -> pd.DataFrame:
    """Every submission with every field (contact included), newest first.

    ``failure_detail`` is what the public status leaves out: each failed stage's provider text,
    endpoint and status (as ``jobs.error_detail`` holds them), passed through the redactor again
    on the way out; ``account`` the signed-in account, if any.
    """
    from etclib.redact import redact

    check_token(token)
    db = resolve(db)
    frame = db.query_df(
        "SELECT s.id, s.kind, s.created_at, s.visibility, s.status, s.status_message, s.name, "
        "s.team, s.contact, a.account, s.model_url, s.paper_url, s.setting, s.saw_test, "
        "s.file_name, s.file_sha256, s.n_items, "
        "(SELECT string_agg(j.stage || ': ' || coalesce(j.error_detail, j.error, ''), '; ' "
        "ORDER BY j.id) FROM jobs j WHERE j.submission_id = s.id AND j.status = 'failed') "
        "AS failure_detail "
        "FROM submissions s LEFT JOIN submission_accounts a ON a.submission_id = s.id "
        "ORDER BY s.created_at DESC, s.id"
    )
    frame["failure_detail"] = [redact(v) if v else "" for v in frame["failure_detail"]]
    return frame
