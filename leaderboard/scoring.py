"""Running a job: score a stored submission with etclib and store the ``ScoreResult``.

Each metric group of the job's stage gets one new ``scores`` row (never an update) with its
signature, scores and breakdowns, the per-item arrays its ``aggregate`` / ``resample`` need (so
intervals are recomputed without re-scoring), and one ``item_scores`` row per item. The LLM
judge's unit decisions of a stored result go to Study 2 (:func:`feed_study`).
"""

from __future__ import annotations

import json
import logging
import math
from typing import Any

import numpy as np

from . import stages
from .clock import now
from .db import Database
from .errors import NotFoundError, StoredPredictionsError
from .queue import Job

__all__ = ["Job", "compute", "dumps", "feed_study", "finite", "load_arrays", "store_result"]

log = logging.getLogger("leaderboard.scoring")

#: Metric groups whose per-item details are judge unit decisions (fed to Study 2).
DECISION_GROUPS = ("judge",)


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


def _dumps_or_none(obj: Any) -> str | None:
    return None if obj is None else dumps(obj)


def group_signature(signature: dict[str, str], group: str, groups: list[str]) -> str:
    """One metric group's signature: the run's shared keys plus the group's own entry."""
    sig = {k: v for k, v in signature.items() if k not in groups}
    if group in signature:
        sig[group] = signature[group]
    return json.dumps(sig, ensure_ascii=False, sort_keys=True)


def load_predictions(db: Database, submission_id: str):
    """A stored submission's predictions, as the ``Predictions`` it was stored from. Not
    validated again, but checked against the content hash they were stored with: a mismatch
    (rows changed or lost since) is a :class:`StoredPredictionsError`, never a score.
    """
    from etclib import tracks
    from etclib.data.corpus import load_corpus
    from etclib.data.task import items as split_items
    from etclib.tracks.predictions import Predictions

    from .submit import content_sha256

    cur = db.cursor()
    row = cur.execute(
        "SELECT split, track, content_sha256, file_sha256, file_format, file_name, file_bytes "
        "FROM submissions WHERE id = ?",
        [submission_id],
    ).fetchone()
    if row is None:
        raise NotFoundError(f"No submission {submission_id!r}; it may have been deleted.")
    split, track_name, content, file_sha, fmt, name, size = row
    track = tracks.get(track_name or tracks.DEFAULT_TRACK)
    rows = cur.execute(
        "SELECT dialogue_id, turn, role, prediction FROM predictions "
        "WHERE submission_id = ? ORDER BY item_index",
        [submission_id],
    ).fetchall()
    by_key = {(d, t, r): track.decode(p) for d, t, r, p in rows}
    preds = Predictions(
        split, by_key, file_sha or "", fmt or "", name or "", [], track.name, size or 0
    )
    order = split_items(load_corpus(), split)
    if content and (
        len(by_key) != len(order)
        or any(it.key not in by_key for it in order)
        or content_sha256(preds, order) != content
    ):
        raise StoredPredictionsError(submission_id, len(rows), len(order))
    return preds


def compute(db: Database, job: Job):
    """Run the job's metrics (outside the write lock); an etclib ``ScoreResult``."""
    from etclib.data.corpus import load_corpus
    from etclib.tracks.scoring import score

    preds = load_predictions(db, job.submission_id)
    corpus = load_corpus()
    metrics = list(stages.groups(stages.check(job.stage), preds.track))
    lock = stages.lock(job.stage)
    run = dict(corpus=corpus, options=job.options)
    if lock is None:
        return score(preds, preds.split, metrics, **run)
    with lock:
        return score(preds, preds.split, metrics, **run)


def feed_study(submission_id: str, result) -> dict[str, int]:
    """Give the judge's decisions of ``result`` to Study 2 (stored, then sampled); counts. A
    failure is logged and never fails the job: re-scoring feeds the same decisions again
    (their ids are stable, so nothing is stored twice).
    """
    from etclib.core.errors import EtcError
    from etclib.studies import annotation

    out = {"stored": 0, "sampled": 0}
    for group in DECISION_GROUPS:
        data = result.data.get(group) if group in result.metrics else None
        if data is None or data.details is None:
            continue
        rows = annotation.judge_decisions(
            submission_id,
            result.keys,
            result.predictions,
            [it.reference for it in result.items],
            data.details,
        )
        try:
            got = annotation.feed(rows)
        except EtcError as exc:
            log.warning("Study 2 was not fed the decisions of %s: %s", submission_id, exc)
            continue
        out = {k: out[k] + got[k] for k in out}
    return out


def store_result(cur, job: Job, result) -> list[int]:
    """Insert each group's ``scores`` row, arrays and item scores (once per job and group)."""
    import pandas as pd

    ids = []
    created = now()
    for group in result.metrics:
        module = result.modules[group]
        data = result.data[group]
        score_id = cur.dialect.next_id(cur, "score_ids")
        stored = cur.execute(
            "INSERT INTO scores (id, submission_id, job_id, metric_group, signature, created_at, "
            "n_items, scores, extras, breakdown) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT DO NOTHING RETURNING id",
            [
                score_id,
                job.submission_id,
                job.id,
                group,
                group_signature(result.signature, group, result.metrics),
                created,
                result.n_items,
                dumps(result.aggregate(names=[group])),
                dumps(data.extra),
                dumps(result.breakdown([group])),
            ],
        ).fetchall()
        if not stored:
            log.warning("job %s: its %s scores were stored already; kept those", job.id, group)
            continue
        for name, arr in data.arrays.items():
            arr = np.ascontiguousarray(arr)
            cur.execute(
                "INSERT INTO score_arrays (score_id, name, dtype, shape, data) "
                "VALUES (?, ?, ?, ?, ?)",
                [score_id, name, arr.dtype.str, json.dumps(list(arr.shape)), arr.tobytes()],
            )
        details = data.details if data.details is not None else [None] * result.n_items
        per_item = [
            (score_id, i, dumps(module.item_scores(data, i)), _dumps_or_none(details[i]))
            for i in range(result.n_items)
        ]
        frame = pd.DataFrame(per_item, columns=["score_id", "item_index", "scores", "details"])
        cur.dialect.insert_frame(cur, "item_scores", frame)
        ids.append(int(score_id))
    return ids


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
