"""Moderation: hide, unhide, soft-delete, re-score submissions and re-run failed jobs.

Every operation takes the admin token (:mod:`etclib.core.admintoken`; without
``ETC_ADMIN_TOKEN`` admin is disabled). Nothing is erased: a deleted submission keeps its rows,
every action is logged in ``moderation_log``, and a re-score adds score rows beside the old ones.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from etclib.core import admintoken
from etclib.core.errors import AccessDenied

from . import stages as stage_rules
from .clock import now
from .db import Database, resolve
from .errors import AdminError, LeaderboardError, NotFoundError
from .queue import busy_stages, enqueue
from .statuses import refresh_status


def check_token(token: str | None, action: str = "leaderboard admin") -> None:
    """Raise :class:`AdminError` unless ``token`` is the configured admin token."""
    try:
        admintoken.verify(token, action)
    except admintoken.AdminDisabled:
        raise AdminError(
            "Admin operations are disabled: set ETC_ADMIN_TOKEN (environment or "
            ".streamlit/secrets.toml) on the server."
        ) from None
    except admintoken.WrongToken:
        raise AdminError("Wrong admin token; nothing was changed.") from None
    except AccessDenied as exc:  # too many attempts
        raise AdminError(f"{exc} Nothing was changed.") from None


def _set_visibility(
    submission_id: str, token: str | None, visibility: str, action: str, note: str, db
) -> None:
    check_token(token, action)
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
    batch: bool = False,
) -> list[int]:
    """Queue new scoring jobs for ``stages`` (default: the first stage, which queues the
    heavier ones when it finishes); job ids. A stage already queued is not queued twice, but
    made ready now. Re-scoring an incomplete judge stage asks only its failed items (the others
    are in the judge's cache).

    ``batch``: the judge's uncached questions go through the provider's batch interface first
    (:mod:`etclib.judge.batch`); only with the judge stage.
    """
    check_token(token, "rescore")
    db = resolve(db)
    wanted = [stage_rules.check(s) for s in (stages or [stage_rules.first()])]
    if batch and "judge" not in wanted:
        raise LeaderboardError(
            "--batch applies to the judge stage only; add --stage judge "
            f"(asked: {','.join(wanted)})."
        )
    with db.write() as cur:
        row = cur.execute("SELECT kind FROM submissions WHERE id = ?", [submission_id]).fetchone()
        if row is None:
            raise NotFoundError(f"No submission {submission_id!r}; see admin list for the ids.")
        if row[0] == "reported":
            raise LeaderboardError(
                f"{submission_id} is a published (reported) row; it has no predictions to score."
            )
        busy = busy_stages(cur, submission_id)
        ids = [enqueue(cur, submission_id, s, _options(s, batch)) for s in wanted if s not in busy]
        for stage in busy & set(wanted):
            cur.execute(
                "UPDATE jobs SET not_before = NULL WHERE submission_id = ? AND stage = ? "
                "AND status = 'queued'",
                [submission_id, stage],
            )
        cur.execute(
            "INSERT INTO moderation_log VALUES (?, ?, 'rescore', ?)",
            [now(), submission_id, note or ",".join(wanted)],
        )
        refresh_status(cur, submission_id, note="re-score requested", force=True)
    db.invalidate()
    db.notify_jobs()
    return ids


def _options(stage: str, batch: bool) -> dict[str, Any] | None:
    """A rescored stage's job options (None: the stage's own)."""
    if not batch or stage != "judge":
        return None
    return {**stage_rules.stage_options(stage), "judge_batch": True}


def rescore_all(
    token: str | None,
    stages: list[str] | None = None,
    note: str = "",
    *,
    db: Database | None = None,
    batch: bool = False,
) -> dict[str, list[int]]:
    """:func:`rescore` every submission that has predictions and is not deleted."""
    check_token(token, "rescore")
    db = resolve(db)
    rows = db.query(
        "SELECT id FROM submissions WHERE kind <> 'reported' AND visibility <> 'deleted' "
        "ORDER BY created_at, id"
    )
    return {
        sid: rescore(sid, token, stages, note or "rescore --all", db=db, batch=batch)
        for (sid,) in rows
    }


def rerun_failed(
    token: str | None,
    submission_id: str | None = None,
    note: str = "",
    *,
    db: Database | None = None,
) -> list[int]:
    """Queue again, with the same options, each stage whose latest job failed or ended
    incomplete (of one submission, or of all but deleted and published rows); the new job ids."""
    check_token(token, "rerun")
    db = resolve(db)
    ids: list[int] = []
    with db.write() as cur:
        if submission_id is not None:
            row = cur.execute(
                "SELECT kind FROM submissions WHERE id = ? AND visibility <> 'deleted'",
                [submission_id],
            ).fetchone()
            if row is None:
                raise NotFoundError(f"No submission {submission_id!r}; see admin list for the ids.")
        rows = cur.execute(
            "SELECT j.submission_id, j.stage, j.options FROM jobs j "
            "JOIN submissions s ON s.id = j.submission_id "
            "WHERE j.status IN ('failed', 'incomplete') AND s.kind <> 'reported' "
            "AND s.visibility <> 'deleted' "
            "AND (CAST(? AS VARCHAR) IS NULL OR j.submission_id = ?) "
            "AND NOT EXISTS (SELECT 1 FROM jobs k WHERE k.submission_id = j.submission_id "
            "AND k.stage = j.stage AND k.id > j.id) ORDER BY j.id",
            [submission_id, submission_id],
        ).fetchall()
        for sid, stage, options in rows:
            ids.append(enqueue(cur, sid, stage, json.loads(options or "{}")))
            cur.execute(
                "INSERT INTO moderation_log VALUES (?, ?, 'rerun', ?)",
                [now(), sid, note or f"re-run the failed or incomplete {stage} job"],
            )
            refresh_status(cur, sid, note=f"re-run of the {stage} job", force=True)
    db.invalidate()
    db.notify_jobs()
    return ids


def admin_submissions(token: str | None, *, db: Database | None = None) -> pd.DataFrame:
    """Every submission with every field (contact and account included), newest first, and
    ``failure_detail``: what the public status leaves out of failed, incomplete and waiting
    jobs, redacted again on the way out."""
    from etclib.core.redact import redact

    check_token(token, "list")
    db = resolve(db)
    frame = db.query_df(
        "SELECT s.id, s.kind, s.created_at, s.visibility, s.status, s.status_message, s.name, "
        "s.team, s.contact, a.account, s.model_url, s.paper_url, s.setting, s.saw_test, "
        "s.file_name, s.file_sha256, s.content_sha256, s.n_items, "
        + db.dialect.string_agg(
            "j.stage || ': ' || coalesce(j.error_detail, j.error, '')",
            "; ",
            "j.id",
            "FROM jobs j WHERE j.submission_id = s.id AND (j.status IN ('failed', "
            "'incomplete') OR (j.status = 'queued' AND j.error_detail IS NOT NULL))",
        )
        + " AS failure_detail "
        "FROM submissions s LEFT JOIN submission_accounts a ON a.submission_id = s.id "
        "ORDER BY s.created_at DESC, s.id"
    )
    frame["failure_detail"] = [redact(v) if v else "" for v in frame["failure_detail"]]
    return frame
