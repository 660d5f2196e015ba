"""Study 2 of docs/judge_vs_human.md: people re-check the LLM judge's atomic-unit decisions.

The judge's decisions are stored (:func:`feed`, after each judge run), a stratified sample is
drawn, people with an annotator code answer (only a hash of each code is stored) and
:func:`results` compares the two. Every write from a person needs a valid, unrevoked code.
"""

from __future__ import annotations

from etclib.studies.annotation.answers import annotators, next_decision, progress, record_answer
from etclib.studies.annotation.results import (
    EXPORT_COLUMNS,
    AnnotationResults,
    answers_frame,
    export_csv,
    human_label,
    results,
    submission_metrics,
)
from etclib.studies.annotation.sample import (
    AUTO_PER_STRATUM,
    AUTO_SEED,
    auto_sample_settings,
    draw_sample,
    feed,
    judge_decisions,
    pool,
)
from etclib.studies.annotation.store import (
    ANSWERS_PER_DECISION,
    LABELS,
    SIDES,
    Decision,
    add_decisions,
    connect_studies,
    decision_id,
    studies_path,
    submissions,
)
from etclib.studies.codes import (
    IssuedCode,
    annotator_for_code,
    issue_code,
    require_admin,
    revoke_code,
)

__all__ = [
    "ANSWERS_PER_DECISION",
    "AUTO_PER_STRATUM",
    "AUTO_SEED",
    "EXPORT_COLUMNS",
    "LABELS",
    "SIDES",
    "AnnotationResults",
    "Decision",
    "IssuedCode",
    "add_decisions",
    "annotator_for_code",
    "annotators",
    "answers_frame",
    "auto_sample_settings",
    "connect_studies",
    "decision_id",
    "draw_sample",
    "export_csv",
    "feed",
    "human_label",
    "issue_code",
    "judge_decisions",
    "next_decision",
    "pool",
    "progress",
    "record_answer",
    "require_admin",
    "results",
    "revoke_code",
    "studies_path",
    "submission_metrics",
    "submissions",
]
