"""Score a predictions file: every metric, its signature, and breakdowns.

>>> result = score("preds.jsonl", split="test", metrics="bleu,rouge")   # doctest: +SKIP
>>> result.scores["bleu4"], result.signature["tokenizer"]               # doctest: +SKIP

Each metric computes its per-item data once; the corpus score, the breakdowns (role, category,
turn) and the leaderboard's bootstrap intervals are all aggregations of it over subsets.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from etclib import __version__, tracks
from etclib import metrics as metric_registry
from etclib.core.jsonl import dumps_line
from etclib.data import tokenize
from etclib.data.corpus import CATEGORIES, ROLES, Corpus, load_corpus
from etclib.data.task import Item, Key
from etclib.data.task import items as split_items
from etclib.metrics import Context, Metric, MetricData
from etclib.tracks.predictions import Predictions, check_coverage, check_values, read_predictions


def breakdown_groups(items: list[Item]) -> dict[str, dict[str, np.ndarray]]:
    """Index sets of the breakdowns of ``items``: role, aggregated category, turn."""
    role = np.array([it.role for it in items])
    turn = np.array([it.turn for it in items])
    return {
        "role": {r: np.flatnonzero(role == r) for r in ROLES},
        "category": {c: np.flatnonzero([c in it.label for it in items]) for c in CATEGORIES},
        "turn": {str(t): np.flatnonzero(turn == t) for t in range(1, 6)},
    }


@dataclass
class ScoreResult:
    split: str
    items: list[Item]
    predictions: list[str]
    metrics: list[str]
    data: dict[str, MetricData]
    signature: dict[str, str]
    modules: dict[str, Metric] = field(repr=False, default_factory=dict)
    #: the track (:mod:`etclib.tracks`); predictions are its values
    track: str = tracks.DEFAULT_TRACK

    @property
    def n_items(self) -> int:
        return len(self.items)

    @property
    def keys(self) -> list[Key]:
        return [it.key for it in self.items]

    def aggregate(
        self, idx: np.ndarray | None = None, names: list[str] | None = None
    ) -> dict[str, float]:
        """Every metric's (or ``names``') scores over the items ``idx`` (all when ``None``)."""
        out: dict[str, float] = {}
        for name in self.metrics if names is None else names:
            out.update(self.modules[name].aggregate(self.data[name], idx))
        return out

    @property
    def scores(self) -> dict[str, float]:
        return self.aggregate()

    def groups(self) -> dict[str, dict[str, np.ndarray]]:
        """Index sets of the breakdowns (:func:`breakdown_groups`)."""
        return breakdown_groups(self.items)

    def breakdown(self, names: list[str] | None = None) -> dict[str, dict[str, dict[str, float]]]:
        """Breakdown -> subset -> ``n_items`` and every metric's (or ``names``') scores."""
        return {
            group: {
                name: {"n_items": int(len(idx)), **self.aggregate(idx, names)}
                for name, idx in subsets.items()
            }
            for group, subsets in self.groups().items()
        }

    def intervals(
        self,
        resamples: int | None = None,
        seed: int | None = None,
        alpha: float | None = None,
    ) -> dict[str, tuple[float, float]]:
        """Ranking key -> its paired-bootstrap interval (the leaderboard's, for equal settings:
        ``resamples`` and ``seed`` default to :mod:`etclib.metrics.significance`'s)."""
        from etclib.metrics import significance as sig

        res = sig.draw(
            self.n_items,
            sig.DEFAULT_RESAMPLES if resamples is None else resamples,
            sig.DEFAULT_SEED if seed is None else seed,
        )
        out: dict[str, tuple[float, float]] = {}
        for name in self.metrics:
            out.update(
                sig.intervals(
                    self.modules[name], self.data[name], res, sig.ALPHA if alpha is None else alpha
                )
            )
        return out

    def extras(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in self.metrics:
            out.update(self.data[name].extra)
        return out

    def incomplete(self, shown: int = 1) -> dict[str, str]:
        """Metric group -> why its scores are incomplete, for the metrics that have an
        ``incomplete`` method; ``shown``: how many reasons each message quotes."""
        out: dict[str, str] = {}
        for name in self.metrics:
            words = getattr(self.modules[name], "incomplete", None)
            message = words(self.data[name], self.keys, shown) if words is not None else None
            if message:
                out[name] = message
        return out

    def failures(self) -> dict[str, list[str]]:
        """Metric group -> one line per failed item (``dialogue 945 turn 3 listener: reason``),
        for the incomplete metrics (see :meth:`incomplete`)."""
        return {
            name: self.modules[name].failures(self.data[name], self.keys)
            for name in self.incomplete()
            if hasattr(self.modules[name], "failures")
        }

    def to_json(self, breakdown: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {"n_items": self.n_items, **self.scores, **self.extras()}
        out["signature"] = self.signature
        if breakdown:
            out["breakdown"] = self.breakdown()
        return _finite(out)

    def per_item(self) -> list[dict[str, Any]]:
        """One record per item: key, prediction, reference, label and each metric's scores."""
        rows = []
        for i, it in enumerate(self.items):
            row: dict[str, Any] = {
                "dialogue_id": it.dialogue_id,
                "turn": it.turn,
                "role": it.role,
                "prediction": self.predictions[i],
                "reference": it.reference,
                "label": list(it.label),
            }
            for name in self.metrics:
                row.update(self.modules[name].item_scores(self.data[name], i))
                details = self.data[name].details
                if details is not None:
                    row.update(details[i])
            rows.append(_finite(row))
        return rows


def _finite(obj):
    """JSON has no NaN: undefined scores (an empty subset) become null."""
    if isinstance(obj, float):
        return None if obj != obj else obj
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_finite(v) for v in obj]
    return obj


def signature_string(sig: dict[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in sig.items())


def score(
    predictions: Predictions | dict[Key, Any] | str | os.PathLike,
    split: str = "test",
    metrics: str | list[str] | None = None,
    *,
    corpus: Corpus | None = None,
    options: dict[str, Any] | None = None,
    track: str | None = None,
) -> ScoreResult:
    """Score predictions (a validated ``Predictions``, a key->value dict, or a file path).
    A ``Predictions`` brings its ``track``, a file's is detected, a dict is of the default track
    unless named, and checked like a file."""
    corpus = corpus or load_corpus()
    if isinstance(predictions, (str, os.PathLike)):
        predictions = read_predictions(predictions, split=split, corpus=corpus, track=track)
    if isinstance(predictions, Predictions):
        split = predictions.split
        track = predictions.track
        by_key = predictions.by_key
    else:
        rows = [(0, k, v) for k, v in predictions.items()]
        by_key = check_values(
            check_coverage(rows, split, corpus, "predictions"), "predictions", track
        )
    t = tracks.get(track)
    names = t.parse_metrics(metrics)
    items = split_items(corpus, split)
    preds = [by_key[it.key] for it in items]
    refs = [t.reference_of(it) for it in items]
    ctx = Context(
        dict(options or {}),
        labels=[it.label for it in items],
        corpus=corpus,
        keys=[it.key for it in items],
    )
    modules = {n: metric_registry.get(n) for n in names}
    data = {n: m.compute(preds, refs, ctx) for n, m in modules.items()}
    sig: dict[str, str] = {
        "etclib": __version__,
        "split": split,
        "corpus": corpus.content_hash[:12],
    }
    if t.signature:
        sig["track"] = t.signature
    if any(m.TOKENS for m in modules.values()):
        sig["tokenizer"] = tokenize.signature()
    for n, m in modules.items():
        sig.update(m.signature(ctx, data[n]))
    return ScoreResult(split, items, preds, names, data, sig, modules, t.name)


def write_per_item(result: ScoreResult, path: str | os.PathLike) -> None:
    from etclib.core.files import write_text

    write_text(path, "".join(dumps_line(row) + "\n" for row in result.per_item()))
