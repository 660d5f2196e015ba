"""Scoring stages: run etclib's metrics on a stored submission and store everything they give.

A submission is scored in stages, each a job in the queue:

- ``lexical`` (bleu, rouge): always, first; the submission becomes visible with it;
- ``bertscore``: when ``ETC_BERTSCORE_MODEL`` is set or ``ETC_LB_BERTSCORE`` is true;
- ``judge`` (precision, recall, f1, units): when ``ETC_JUDGE_PROVIDER`` is set and that provider
  is configured (``etclib.llm.configured``).

The heavy stages are queued when the lexical stage finishes, with the settings of that moment.
Each metric group gets one new ``scores`` row (never an update) with its own signature, the
per-item arrays that its ``aggregate`` needs (so intervals and breakdowns are recomputed from the
database without re-scoring), one ``item_scores`` row per item, and its breakdowns.
"""

from __future__ import annotations

import json
import math
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import settings
from .db import Database, now

#: stage -> etclib metric groups
STAGES: dict[str, tuple[str, ...]] = {
    "lexical": ("bleu", "rouge"),
    "bertscore": ("bertscore",),
    "judge": ("judge",),
}
#: Stages whose models are shared in-process and not known to be thread-safe run one at a time.
_STAGE_LOCKS: dict[str, threading.Lock] = {
    "lexical": threading.Lock(),  # one MeCab tagger per process
    "bertscore": threading.Lock(),  # one model per process
}


def configured_stages() -> list[str]:
    """The stages that run for a new submission with the current settings, in order."""
    out = ["lexical"]
    if settings.bertscore_enabled():
        out.append("bertscore")
    if settings.judge_provider():
        out.append("judge")
    return out


def stage_options(stage: str) -> dict[str, Any]:
    """Metric options fixed when a stage is queued (so a job runs with the settings it had)."""
    if stage == "judge":
        from etclib.config import setting

        provider = settings.judge_provider()
        out = {"judge_provider": provider} if provider else {}
        if setting("ETC_JUDGE_MODEL"):
            out["judge_model"] = setting("ETC_JUDGE_MODEL")
        return out
    return {}


def finite(obj: Any) -> Any:
    """NaN and infinities become None (JSON has none); numpy scalars become Python numbers."""
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj


def dumps(obj: Any) -> str:
    return json.dumps(finite(obj), ensure_ascii=False, sort_keys=True, default=str)


def group_signature(signature: dict[str, str], group: str, groups: list[str]) -> str:
    """One metric group's signature: the run's shared keys plus the group's own entry."""
    sig = {k: v for k, v in signature.items() if k not in groups}
    if group in signature:
        sig[group] = signature[group]
    return json.dumps(sig, ensure_ascii=False, sort_keys=True)


@dataclass
class Job:
    """A claimed job."""

    id: int
    submission_id: str
    stage: str
    options: dict[str, Any]


def load_predictions(db: Database, submission_id: str) -> tuple[str, dict[tuple, str]]:
    """A stored submission's split and predictions (key -> text)."""
    cur = db.cursor()
    split = cur.execute("SELECT split FROM submissions WHERE id = ?", [submission_id]).fetchone()[0]
    rows = cur.execute(
        "SELECT dialogue_id, turn, role, prediction FROM predictions "
        "WHERE submission_id = ? ORDER BY item_index",
        [submission_id],
    ).fetchall()
    return split, {(d, t, r): p for d, t, r, p in rows}


def compute(db: Database, job: Job):
    """Run the job's metrics (outside the write lock); an etclib ``ScoreResult``."""
    from etclib.corpus import load_corpus
    from etclib.scoring import score

    split, by_key = load_predictions(db, job.submission_id)
    corpus = load_corpus()
    lock = _STAGE_LOCKS.get(job.stage)
    metrics = list(STAGES[job.stage])
    if lock is None:
        return score(by_key, split, metrics, corpus=corpus, options=job.options)
    with lock:
        return score(by_key, split, metrics, corpus=corpus, options=job.options)


def store_result(cur, job: Job, result) -> list[int]:
    """Insert one ``scores`` row per metric group, its arrays, item scores and breakdowns."""
    import pandas as pd

    groups = result.groups()
    ids = []
    created = now()
    for group in result.metrics:
        module = result.modules[group]
        data = result.data[group]
        score_id = cur.execute("SELECT nextval('score_ids')").fetchone()[0]
        breakdown = {
            name: {
                sub: {"n_items": int(len(idx)), **module.aggregate(data, idx)}
                for sub, idx in subsets.items()
            }
            for name, subsets in groups.items()
        }
        cur.execute(
            "INSERT INTO scores VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                score_id,
                job.submission_id,
                job.id,
                group,
                group_signature(result.signature, group, result.metrics),
                created,
                result.n_items,
                dumps(module.aggregate(data)),
                dumps(data.extra),
                dumps(breakdown),
            ],
        )
        for name, arr in data.arrays.items():
            arr = np.ascontiguousarray(arr)
            cur.execute(
                "INSERT INTO score_arrays VALUES (?, ?, ?, ?, ?)",
                [score_id, name, arr.dtype.str, json.dumps(list(arr.shape)), arr.tobytes()],
            )
        per_item = []
        for i in range(result.n_items):
            details = data.details[i] if data.details is not None else None
            per_item.append(
                (
                    score_id,
                    i,
                    dumps(module.item_scores(data, i)),
                    dumps(details) if details is not None else None,
                )
            )
        frame = pd.DataFrame(per_item, columns=["score_id", "item_index", "scores", "details"])
        cur.register("_item_scores_frame", frame)
        try:
            cur.execute("INSERT INTO item_scores SELECT * FROM _item_scores_frame")
        finally:
            cur.unregister("_item_scores_frame")
        ids.append(int(score_id))
    return ids


def enqueue(cur, submission_id: str, stage: str, options: dict[str, Any] | None = None) -> int:
    """Queue one stage for a submission (inside a write transaction); the job id."""
    job_id = cur.execute("SELECT nextval('job_ids')").fetchone()[0]
    opts = stage_options(stage) if options is None else options
    cur.execute(
        "INSERT INTO jobs (id, submission_id, stage, status, attempts, created_at, options) "
        "VALUES (?, ?, ?, 'queued', 0, ?, ?)",
        [job_id, submission_id, stage, now(), json.dumps(opts, sort_keys=True)],
    )
    return int(job_id)


def load_arrays(db: Database, score_ids: list[int]) -> dict[int, dict[str, np.ndarray]]:
    """score id -> the per-item arrays stored with it."""
    if not score_ids:
        return {}
    marks = ", ".join("?" for _ in score_ids)
    rows = db.query(
        f"SELECT score_id, name, dtype, shape, data FROM score_arrays WHERE score_id IN ({marks})",
        list(score_ids),
    )
    out: dict[int, dict[str, np.ndarray]] = {int(i): {} for i in score_ids}
    for score_id, name, dtype, shape, blob in rows:
        arr = np.frombuffer(bytes(blob), dtype=np.dtype(dtype)).reshape(json.loads(shape))
        out[int(score_id)][name] = arr
    return out
