"""Study 2's results: the judge against people, per submission and over all, and the CSV export."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from etclib.core import csvexport
from etclib.metrics.agreement import (
    confusion_matrix,
    fleiss_kappa,
    kappa_with_ci,
    krippendorff_alpha,
)
from etclib.studies.annotation.answers import _DECISION_COLUMNS
from etclib.studies.annotation.store import _TIE_ORDER, LABELS, SIDES, _db


def human_label(answers: Iterable[str]) -> str | None:
    """The people's label for one decision: the most frequent answer; ties go to the less
    supportive label (Not Supported, then Neutral, then Supported). None without answers."""
    answers = list(answers)
    if not answers:
        return None
    top = max(answers.count(x) for x in set(answers))
    return next(x for x in _TIE_ORDER if answers.count(x) == top)


def submission_metrics(decisions: pd.DataFrame, label_column: str = "label") -> dict[str, float]:
    """SPEC precision / recall / f1 (x100) of one submission from its unit decisions, over
    items with at least one reference unit; Neutral counts as not supported."""
    if decisions.empty:
        return {"precision": math.nan, "recall": math.nan, "f1": math.nan, "items": 0}
    d = decisions.assign(ok=decisions[label_column].eq("Supported"))
    key = ["dialogue_id", "turn", "role"]
    by = d.groupby([*key, "side"])["ok"].mean().unstack("side")
    by = by.reindex(columns=list(SIDES))
    by = by[by["recall"].notna()]
    if by.empty:
        return {"precision": math.nan, "recall": math.nan, "f1": math.nan, "items": 0}
    p = by["precision"].fillna(0.0)
    r = by["recall"]
    f1 = (2 * p * r / (p + r)).where(p + r > 0, 0.0)
    return {
        "precision": 100 * float(p.mean()),
        "recall": 100 * float(r.mean()),
        "f1": 100 * float(f1.mean()),
        "items": int(len(by)),
    }


@dataclass(frozen=True)
class AnnotationResults:
    """Study 2 results for one submission (or all). NaN where there are too few answers."""

    submission_id: str | None
    n_answers: int
    n_decisions: int
    n_annotators: int
    judge_human_kappa: float
    judge_human_low: float
    judge_human_high: float
    human_human_kappa: float
    human_human_alpha: float
    n_double: int
    confusion: pd.DataFrame
    metrics: pd.DataFrame

    @property
    def empty(self) -> bool:
        return self.n_answers == 0


def answers_frame(
    submission_id: str | None = None, *, db: str | Path | None = None
) -> pd.DataFrame:
    """Every answer with its decision: one row per (decision, annotator), oldest first."""
    with _db(db, read_only=True) as con:
        return con.frame(
            f"""
            SELECT {_DECISION_COLUMNS}, s.stratum, a.annotator_id, a.label AS human_label,
                   a.answered_at
              FROM annotation_answers a
              JOIN judge_decisions d USING (decision_id)
              LEFT JOIN annotation_sample s USING (decision_id)
             WHERE (CAST(? AS VARCHAR) IS NULL OR d.submission_id = ?)
             ORDER BY a.answered_at, d.decision_id, a.annotator_id
            """,
            [submission_id, submission_id],
        )


def results(
    submission_id: str | None = None,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    db: str | Path | None = None,
) -> AnnotationResults:
    """Judge-human and human-human agreement, the confusion matrix, and how each submission's
    precision / recall / f1 change when people's labels (:func:`human_label`) replace the
    judge's on re-checked decisions. Definitions: docs/judge_vs_human.md.
    """
    answers = answers_frame(submission_id, db=db)
    labels = list(LABELS)
    if answers.empty:
        nan = math.nan
        confusion = pd.DataFrame(
            0, index=pd.Index(labels, name="judge"), columns=pd.Index(labels, name="human")
        )
        columns = ["submission_id", "metric", "judge", "with_humans", "change", "items"]
        metrics = pd.DataFrame(columns=[*columns, "relabelled"])
        return AnnotationResults(
            submission_id, 0, 0, 0, nan, nan, nan, nan, nan, 0, confusion, metrics
        )
    judge = answers["label"].tolist()
    human = answers["human_label"].tolist()
    kappa, low, high = kappa_with_ci(judge, human, labels, n_resamples=n_resamples, seed=seed)
    confusion = confusion_matrix(judge, human, labels, rows="judge", columns="human")

    per_decision = answers.groupby("decision_id")["human_label"].apply(list)
    double = per_decision[per_decision.map(len) >= 2]
    hh_kappa = math.nan
    if len(double):
        counts = [[first_two[:2].count(x) for x in labels] for first_two in double]
        hh_kappa = fleiss_kappa(counts)
    annotator_ids = sorted(answers["annotator_id"].unique())
    table = answers.pivot_table(
        index="annotator_id", columns="decision_id", values="human_label", aggfunc="first"
    ).reindex(annotator_ids)
    alpha = math.nan
    if len(double):
        alpha = krippendorff_alpha(
            [[None if pd.isna(v) else v for v in row] for row in table.to_numpy().tolist()]
        )

    people = per_decision.map(human_label)
    rows = []
    with _db(db, read_only=True) as con:
        for sid in sorted(answers["submission_id"].unique()):
            decisions = con.frame(
                "SELECT decision_id, dialogue_id, turn, role, side, label FROM judge_decisions "
                "WHERE submission_id = ?",
                [sid],
            )
            replaced = decisions["decision_id"].map(people)
            decisions["with_humans"] = replaced.fillna(decisions["label"])
            before = submission_metrics(decisions, "label")
            after = submission_metrics(decisions, "with_humans")
            relabelled = int((decisions["with_humans"] != decisions["label"]).sum())
            for metric in ("precision", "recall", "f1"):
                rows.append(
                    {
                        "submission_id": sid,
                        "metric": metric,
                        "judge": before[metric],
                        "with_humans": after[metric],
                        "change": after[metric] - before[metric],
                        "items": before["items"],
                        "relabelled": relabelled,
                    }
                )
    return AnnotationResults(
        submission_id=submission_id,
        n_answers=len(answers),
        n_decisions=int(answers["decision_id"].nunique()),
        n_annotators=len(annotator_ids),
        judge_human_kappa=kappa,
        judge_human_low=low,
        judge_human_high=high,
        human_human_kappa=hh_kappa,
        human_human_alpha=alpha,
        n_double=len(double),
        confusion=confusion,
        metrics=pd.DataFrame(rows),
    )


EXPORT_COLUMNS = (
    "submission_id",
    "dialogue_id",
    "turn",
    "role",
    "side",
    "unit",
    "target",
    "judge_label",
    "stratum",
    "annotator_id",
    "human_label",
    "answered_at",
    "decision_id",
)


def export_csv(submission_id: str | None = None, *, db: str | Path | None = None) -> str:
    """Every answer as CSV text (UTF-8, header row): decision, judge label, annotator, answer."""
    answers = answers_frame(submission_id, db=db).rename(columns={"label": "judge_label"})
    rows = (
        ["" if pd.isna(v) else v for v in rec]
        for rec in answers[list(EXPORT_COLUMNS)].itertuples(index=False, name=None)
    )
    return csvexport.dumps(EXPORT_COLUMNS, rows)
