"""Study 2's answers: the next decision for an annotator, and recording an answer."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from etclib.core.errors import AnnotationError
from etclib.studies import db as studiesdb
from etclib.studies.annotation.store import ANSWERS_PER_DECISION, LABELS, Decision, _db
from etclib.studies.codes import annotator


def annotators(*, db: str | Path | None = None) -> pd.DataFrame:
    """Issued annotators (id, name, issued_at, revoked, answers); never the codes."""
    with _db(db, read_only=True) as con:
        return con.frame(
            """
            SELECT a.annotator_id, a.name, a.issued_at, a.revoked, count(x.decision_id) AS answers
              FROM annotators a LEFT JOIN annotation_answers x USING (annotator_id)
             GROUP BY a.annotator_id, a.name, a.issued_at, a.revoked ORDER BY a.issued_at
            """,
        )


def _decision(row) -> Decision:
    return Decision(*row)


_DECISION_COLUMNS = "d.decision_id, d.submission_id, d.dialogue_id, d.turn, d.role, d.side, d.unit, d.target, d.label"


def next_decision(
    code: str | None, submission_id: str | None = None, *, db: str | Path | None = None
) -> Decision | None:
    """The next sampled decision this annotator has not answered yet, or None when done.

    Decisions that still lack :data:`ANSWERS_PER_DECISION` answers come first, so pairs complete
    and people can be compared. It carries the judge's label: a page must hide it until the
    annotator has answered.
    """
    with _db(db, read_only=True) as con:
        annotator_id = annotator(con, code)
        row = con.execute(
            f"""
            WITH n AS (
                SELECT decision_id, count(*) AS answers FROM annotation_answers
                 GROUP BY decision_id)
            SELECT {_DECISION_COLUMNS}
              FROM annotation_sample s JOIN judge_decisions d USING (decision_id)
              LEFT JOIN n USING (decision_id)
             WHERE (CAST(? AS VARCHAR) IS NULL OR s.submission_id = ?)
               AND s.decision_id NOT IN (
                   SELECT decision_id FROM annotation_answers WHERE annotator_id = ?)
             ORDER BY coalesce(n.answers, 0) >= ?,
                      CASE WHEN coalesce(n.answers, 0) < ? THEN -coalesce(n.answers, 0)
                           ELSE coalesce(n.answers, 0) END,
                      s.position
             LIMIT 1
            """,
            [
                submission_id,
                submission_id,
                annotator_id,
                ANSWERS_PER_DECISION,
                ANSWERS_PER_DECISION,
            ],
        ).fetchone()
    return _decision(row) if row else None


def progress(
    code: str | None, submission_id: str | None = None, *, db: str | Path | None = None
) -> tuple[int, int]:
    """(answered, sampled) for this annotator, over one submission's sample or all samples."""
    with _db(db, read_only=True) as con:
        annotator_id = annotator(con, code)
        total, done = con.execute(
            """
            SELECT count(*), count(a.decision_id)
              FROM annotation_sample s
              LEFT JOIN annotation_answers a
                ON a.decision_id = s.decision_id AND a.annotator_id = ?
             WHERE (CAST(? AS VARCHAR) IS NULL OR s.submission_id = ?)
            """,
            [annotator_id, submission_id, submission_id],
        ).fetchone()
    return int(done), int(total)


def record_answer(
    code: str | None, decision: str, label: str, *, db: str | Path | None = None
) -> Decision:
    """Store an annotator's answer to a sampled decision and return the decision (with the
    judge's label, to reveal now). Raises AccessDenied without a valid code."""
    if label not in LABELS:
        raise AnnotationError(f"Answer {label!r} is not one of {', '.join(LABELS)}.")
    with _db(db) as con:
        annotator_id = annotator(con, code)
        row = con.execute(
            f"""
            SELECT {_DECISION_COLUMNS}
              FROM judge_decisions d JOIN annotation_sample s USING (decision_id)
             WHERE d.decision_id = ?
            """,
            [decision],
        ).fetchone()
        if row is None:
            raise AnnotationError(
                f"Decision {decision!r} is not in the annotation sample: answer only decisions "
                "that next_decision() hands out."
            )
        answer = pd.DataFrame(
            [[decision, annotator_id, label, studiesdb.now()]],
            columns=["decision_id", "annotator_id", "label", "answered_at"],
        )
        con.upsert("annotation_answers", answer, ["decision_id", "annotator_id"])
    return _decision(row)
