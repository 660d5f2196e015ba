"""Study 1 of docs/judge_vs_human.md: an LLM labels transcriptions with ETC's seven categories.

``etclib judge-labels`` asks an LLM to label each transcription of a split (multi-label) through
the scoring judge's machinery, and stores the run with its signature. :func:`label_study`
compares a run with the annotators per category: against the human majority, Fleiss' kappa with
and without the judge, and each annotator against the other two's consensus.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from etclib.core.errors import JudgeError
from etclib.data.corpus import CATEGORIES, CATEGORY_TO_JA, Corpus, Utterance
from etclib.metrics.agreement import (
    binary_fleiss_kappa,
    binary_fleiss_with_ci,
    confusion_matrix,
    kappa_with_ci,
)
from etclib.studies import db as studiesdb
from etclib.studies import labelling
from etclib.tracks.categories.labels import ANNOTATORS, pair_consensus, parse_labels

PROMPT_NAME = "label_judge"


@dataclass(frozen=True)
class LabelPrompt(labelling.ChatPrompt):
    """The versioned label-judge prompt (``etclib/data/prompts/label_judge.toml``)."""

    def messages(self, transcription: str) -> list[dict[str, str]]:
        """Chat messages (system, user) asking for the labels of one transcription."""
        return self.chat(transcription=transcription)


@lru_cache(maxsize=1)
def load_prompt() -> LabelPrompt:
    """Load and check ``etclib/data/prompts/label_judge.toml``."""
    return labelling.load_prompt(PROMPT_NAME, ("transcription",), "label-judge", LabelPrompt)


_SCHEMA = studiesdb.register(
    "labeljudge",
    labelling.runs_table("label_runs")
    + """
CREATE TABLE IF NOT EXISTS label_judgements (
    run_id VARCHAR NOT NULL,
    dialogue_id INTEGER NOT NULL,
    turn INTEGER NOT NULL,
    role VARCHAR NOT NULL,
    labels VARCHAR,
    raw VARCHAR NOT NULL,
    PRIMARY KEY (run_id, dialogue_id, turn, role)
);
""",
)
STUDY = labelling.Study(
    kind="labels",
    name="labeljudge",
    command="judge-labels",
    who="judge",
    what="transcriptions",
    schema=_SCHEMA,
    runs="label_runs",
    answers="label_judgements",
    of_run="run_id = ?",
)

#: A stored judge-labels run: what was asked (``signature``) and how it went.
LabelRun = labelling.LabellingRun


def _questions(items: list[Utterance]) -> list[labelling.Question]:
    prompt = load_prompt()
    return [
        labelling.Question(
            u.key, prompt.messages(u.transcription), parse_labels, {"text": u.transcription}
        )
        for u in items
    ]


def _utterances(corpus: Corpus, split: str) -> list[Utterance]:
    return [u for d in labelling.dialogues_of(corpus, split) for u in d.utterances]


def judge_labels(
    corpus: Corpus,
    provider: str,
    model: str,
    *,
    split: str = "test",
    db: str | Path | None = None,
    **options: Any,
) -> LabelRun:
    """Label every transcription of ``split`` with the LLM judge and store the run.

    ``options``: :class:`etclib.studies.labelling.Options`. Unusable answers are retried and then
    stored as unlabelled; a bad key or unknown model, or no item labelled, stops the run with
    JudgeError and stores nothing. A run with the same signature and split replaces the old one.
    """

    def row(run: LabelRun, a: labelling.Labelled) -> dict[str, Any]:
        return {
            "run_id": run.run_id,
            "dialogue_id": a.key[0],
            "turn": a.key[1],
            "role": a.key[2],
            "labels": ",".join(a.value) if a.value is not None else None,
            "raw": a.raw,
        }

    items = _utterances(corpus, split)
    return STUDY.run(_questions, items, load_prompt(), provider, model, split, options, row, db)


def list_runs(*, db: str | Path | None = None) -> pd.DataFrame:
    """Stored runs, newest first (one row per run, with its signature and counts)."""
    return STUDY.list_runs(db)


def run_labels(
    run_id: str, *, db: str | Path | None = None
) -> dict[tuple[int, int, str], tuple[str, ...]]:
    """The labels of a stored run by item key (unusable answers left out)."""
    answers = STUDY.answers_of(run_id, "labels", db)
    return {key: tuple(x for x in labels.split(",") if x) for key, labels in answers}


@dataclass(frozen=True)
class LabelStudy:
    """Study 1 results: one row per category in ``table``; judge columns NaN without a run.

    ``yardstick``: each annotator's kappa against the two others' consensus, per category.
    ``confusion`` (with a run): an item counts once in every (human-majority category, judge
    category) pair of its two label sets. ``binary``: each category's 2x2 table.
    """

    split: str
    n_items: int
    run: dict[str, Any] | None
    table: pd.DataFrame
    yardstick: pd.DataFrame
    confusion: pd.DataFrame | None
    binary: dict[str, pd.DataFrame]


def label_study(
    corpus: Corpus,
    split: str = "test",
    run_id: str | None = None,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    db: str | Path | None = None,
) -> LabelStudy:
    """Compare a judge-labels run (or none) with the annotators on ``split`` (or ``"all"``).

    Only items the judge labelled are compared when a run is given. Intervals are seeded
    percentile bootstraps over items (``n_resamples=0`` leaves them out).
    """
    run_info = None
    judge: dict[tuple[int, int, str], tuple[str, ...]] = {}
    if run_id is not None:
        runs = list_runs(db=db)
        match = runs[runs["run_id"] == run_id]
        if match.empty:
            raise JudgeError(f"No judge-labels run {run_id!r}: see list_runs().")
        run_info = match.iloc[0].to_dict()
        split = str(run_info["split"])
        judge = run_labels(run_id, db=db)
    utterances = _utterances(corpus, split)
    if run_id is not None:
        utterances = [u for u in utterances if u.key in judge]
    n = len(utterances)
    if n == 0:
        raise JudgeError(f"No items to compare in split {split!r}.")
    rows = []
    yard_rows = []
    binary: dict[str, pd.DataFrame] = {}
    boot = dict(n_resamples=max(n_resamples, 1), seed=seed)

    def with_ci(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
        if n_resamples <= 0:
            return kappa_with_ci(a, b, [False, True], n_resamples=1)[0], math.nan, math.nan
        return kappa_with_ci(a, b, [False, True], **boot)

    def fleiss_ci(m: np.ndarray) -> tuple[float, float, float]:
        k = binary_fleiss_kappa(m)
        if n_resamples <= 0 or math.isnan(k):
            return k, math.nan, math.nan
        return binary_fleiss_with_ci(m, **boot)

    for c in CATEGORIES:
        votes = np.array([[c in a for a in u.annotations] for u in utterances], dtype=bool)
        majority = np.array([c in u.label for u in utterances], dtype=bool)
        consensus = pair_consensus(votes)
        per_annotator = []
        for i in range(ANNOTATORS):
            k, lo, hi = with_ci(votes[:, i], consensus[i])
            per_annotator.append(k)
            yard_rows.append({"category": c, "annotator": i + 1, "kappa": k, "low": lo, "high": hi})
        yard = (
            float(np.nanmean(per_annotator))
            if not all(map(math.isnan, per_annotator))
            else math.nan
        )
        fh, fh_lo, fh_hi = fleiss_ci(votes)
        row = {
            "category": c,
            "ja": CATEGORY_TO_JA[c],
            "items": n,
            "human_rate": float(majority.mean()),
            "human_vs_others": yard,
            "fleiss_humans": fh,
            "fleiss_humans_low": fh_lo,
            "fleiss_humans_high": fh_hi,
        }
        if run_id is not None:
            j = np.array([c in judge[u.key] for u in utterances], dtype=bool)
            k, lo, hi = with_ci(j, majority)
            fj, fj_lo, fj_hi = fleiss_ci(np.column_stack([votes, j]))
            pairs = [
                kappa_with_ci(j, consensus[i], [False, True], n_resamples=1)[0]
                for i in range(ANNOTATORS)
            ]
            row |= {
                "judge_rate": float(j.mean()),
                "judge_vs_majority": k,
                "judge_vs_majority_low": lo,
                "judge_vs_majority_high": hi,
                "judge_vs_pairs": float(np.mean(pairs)),
                "fleiss_with_judge": fj,
                "fleiss_with_judge_low": fj_lo,
                "fleiss_with_judge_high": fj_hi,
            }
            binary[c] = confusion_matrix(
                ["yes" if x else "no" for x in majority],
                ["yes" if x else "no" for x in j],
                ["yes", "no"],
                rows="human majority",
                columns="judge",
            )
        rows.append(row)
    confusion = None
    if run_id is not None:
        counts = np.zeros((len(CATEGORIES), len(CATEGORIES)), dtype=int)
        index = {c: i for i, c in enumerate(CATEGORIES)}
        for u in utterances:
            for h in u.label:
                for g in judge[u.key]:
                    counts[index[h], index[g]] += 1
        confusion = pd.DataFrame(
            counts,
            index=pd.Index(CATEGORIES, name="human majority"),
            columns=pd.Index(CATEGORIES, name="judge"),
        )
    return LabelStudy(
        split=split,
        n_items=n,
        run=run_info,
        table=pd.DataFrame(rows),
        yardstick=pd.DataFrame(yard_rows),
        confusion=confusion,
        binary=binary,
    )
