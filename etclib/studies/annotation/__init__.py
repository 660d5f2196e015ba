"""Study 2 of docs/judge_vs_human.md: people re-check the LLM judge's atomic-unit decisions.

The judge of SPEC.md decides, for one atomic unit and one target transcription, Supported /
Neutral / Not Supported. This module stores such decisions, lets people with an annotator code
give their own answer to a stratified sample of them, and compares the two.

Storage is the studies database (``ETC_STUDIES_DB``: a SQLite file, default
``data/studies.sqlite``, or a ``postgresql://`` URL; :mod:`etclib.studies.db`), shared with study 1
(:mod:`etclib.studies.labeljudge`):

- ``judge_decisions``: one row per (submission, item, side, unit, target) with the judge's
  label. ``side`` is ``precision`` (a prediction unit judged against the reference) or
  ``recall`` (a reference unit judged against the prediction). Filled by :func:`feed` (the
  leaderboard calls it after each judge run, :func:`judge_decisions` turning the judge's
  per-item details into rows) or :func:`add_decisions`.
- ``annotators``: codes issued by an admin (``ETC_ADMIN_TOKEN``); only a SHA-256 hash of each
  code is stored, so a leaked database does not leak codes.
- ``annotation_sample``: the decisions chosen for re-checking. :func:`feed` draws it
  automatically, seeded, up to :data:`AUTO_PER_STRATUM` per (judge label, side) stratum; an
  admin can draw more per label with :func:`draw_sample`.
- ``annotation_answers``: one answer per (decision, annotator); answering again replaces it.

Every write that comes from a person needs a valid, unrevoked code: there are no anonymous
answers. Every query is parameterised.
"""

from __future__ import annotations

from ..codes import IssuedCode, annotator_for_code, issue_code, require_admin, revoke_code
from .answers import annotators, next_decision, progress, record_answer
from .results import (
    EXPORT_COLUMNS,
    AnnotationResults,
    answers_frame,
    export_csv,
    human_label,
    results,
    submission_metrics,
)
from .sample import (
    AUTO_PER_STRATUM,
    AUTO_SEED,
    auto_sample_settings,
    draw_sample,
    feed,
    judge_decisions,
    pool,
)
from .store import (
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
