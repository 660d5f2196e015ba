"""Compare two systems on the same items: paired differences, intervals, tests and verdicts.

>>> c = compare("a.jsonl", "b.jsonl", metrics="bleu,rouge")              # doctest: +SKIP
>>> c.metrics["rougeL"].difference, c.metrics["rougeL"].verdict          # doctest: +SKIP
(3.12, 'B better')

The statistics are :mod:`etclib.metrics.paired`'s (re-exported here). The module is named
``comparison`` so that importing it never hides ``etclib.compare``. See docs/compare.md.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from etclib import metrics as registry
from etclib import tracks
from etclib.core.errors import MetricError, TaskError
from etclib.data.task import Item
from etclib.metrics import Metric, MetricData, significance

# re-exported: the statistics are part of this module's interface
from etclib.metrics.paired import A_BETTER as A_BETTER
from etclib.metrics.paired import ALPHA as ALPHA
from etclib.metrics.paired import B_BETTER as B_BETTER
from etclib.metrics.paired import DEFAULT_TRIALS as DEFAULT_TRIALS
from etclib.metrics.paired import NO_DIFFERENCE as NO_DIFFERENCE
from etclib.metrics.paired import TEST as TEST
from etclib.metrics.paired import TIE_TOLERANCE as TIE_TOLERANCE
from etclib.metrics.paired import VERDICTS as VERDICTS
from etclib.metrics.paired import MetricComparison as MetricComparison
from etclib.metrics.paired import _finite
from etclib.metrics.paired import compare_metrics as compare_metrics
from etclib.metrics.paired import compare_signature as compare_signature
from etclib.metrics.paired import p_value as p_value
from etclib.metrics.paired import pairwise as pairwise
from etclib.metrics.paired import randomization as randomization
from etclib.metrics.paired import verdict as verdict


@dataclass
class Comparison:
    """Two systems compared on the same items."""

    a: dict[str, str]
    b: dict[str, str]
    track: str
    split: str
    items: list[Item]
    predictions_a: list[Any]
    predictions_b: list[Any]
    modules: dict[str, Metric]
    data_a: dict[str, MetricData]
    data_b: dict[str, MetricData]
    signature: dict[str, str]
    metrics: dict[str, MetricComparison]
    resamples: int
    seed: int
    trials: int
    alpha: float
    #: per group, each item's scores as ``item_scores`` gave them (A's, B's), when known
    #: already (the leaderboard stored them); computed from the data otherwise
    item_scores_a: dict[str, list[dict[str, Any]]] | None = field(default=None, repr=False)
    item_scores_b: dict[str, list[dict[str, Any]]] | None = field(default=None, repr=False)
    _rows: list[dict[str, Any]] | None = field(default=None, repr=False)

    @property
    def n_items(self) -> int:
        return len(self.items)

    def to_json(self, per_item: bool = False) -> dict[str, Any]:
        """The shape of ``etclib compare --json``, with ``items`` (:meth:`per_item`) when asked."""
        out: dict[str, Any] = {
            "a": self.a,
            "b": self.b,
            "signature": self.signature,
            "n_items": self.n_items,
            "metrics": {k: m.to_json() for k, m in self.metrics.items()},
        }
        if per_item:
            out["items"] = self.per_item()
        return out

    def item_keys(self) -> list[str]:
        """The per-item score keys both systems have, in the groups' order."""
        rows = self.per_item()
        if not rows:
            return []
        return [k[:-2] for k in rows[0] if k.endswith("_a") and k[:-2] + "_b" in rows[0]]

    def primary_item_key(self) -> str | None:
        """The per-item key of the win/tie/loss counts: the first compared ranking key items are
        scored on, else the first item key."""
        keys = [k for k in self.item_keys() if k != "prediction"]
        for key in tracks.get(self.track).display_order():
            if key in keys and key in self.metrics:
                return key
        return keys[0] if keys else None

    def per_item(self) -> list[dict[str, Any]]:
        """One row per item: key, label, reference, both predictions, each item score as
        ``<key>_a``, ``<key>_b`` and ``<key>_diff`` (B − A), and ``Track.compare_columns``."""
        if self._rows is None:
            self._rows = _per_item_rows(self)
        return self._rows

    def metric_rows(self) -> list[dict[str, Any]]:
        """The metric table: one row per key (label, A, B, B − A, interval, p, verdict)."""
        return [
            _finite(
                {
                    "metric": key,
                    "label": registry.fact(key).label,
                    "group": m.group,
                    "a": m.a,
                    "b": m.b,
                    "difference": m.difference,
                    "interval_lo": m.interval[0],
                    "interval_hi": m.interval[1],
                    "p_value": m.p_value,
                    "verdict": m.verdict,
                    "ranking": m.ranking,
                }
            )
            for key, m in self.metrics.items()
        ]


def compare_data(
    items: list[Item],
    modules: dict[str, Metric],
    data_a: dict[str, MetricData],
    data_b: dict[str, MetricData],
    *,
    predictions_a: list[Any],
    predictions_b: list[Any],
    signature: dict[str, str],
    a: dict[str, str] | None = None,
    b: dict[str, str] | None = None,
    track: str | None = None,
    split: str = "test",
    resamples: int | None = None,
    seed: int | None = None,
    trials: int | None = None,
    alpha: float | None = None,
    item_scores: tuple[dict, dict] | None = None,
) -> Comparison:
    """A :class:`Comparison` from both systems' per-item data (no scoring)."""
    resamples = significance.DEFAULT_RESAMPLES if resamples is None else int(resamples)
    seed = significance.DEFAULT_SEED if seed is None else int(seed)
    trials = DEFAULT_TRIALS if trials is None else int(trials)
    alpha = ALPHA if alpha is None else float(alpha)
    if resamples < 1 or trials < 1 or not 0 < alpha < 1:
        raise MetricError(
            f"Compare needs at least one resample and one trial and 0 < alpha < 1 (got "
            f"resamples={resamples}, trials={trials}, alpha={alpha})."
        )
    compared = compare_metrics(
        modules,
        data_a,
        data_b,
        len(items),
        resamples=resamples,
        seed=seed,
        trials=trials,
        alpha=alpha,
    )
    sig = dict(signature)
    sig["compare"] = compare_signature(resamples, seed, trials, alpha)
    return Comparison(
        a=a or {"name": "A", "source": ""},
        b=b or {"name": "B", "source": ""},
        track=tracks.get(track).name,
        split=split,
        items=list(items),
        predictions_a=list(predictions_a),
        predictions_b=list(predictions_b),
        modules=dict(modules),
        data_a=dict(data_a),
        data_b=dict(data_b),
        signature=sig,
        metrics=compared,
        resamples=resamples,
        seed=seed,
        trials=trials,
        alpha=alpha,
        item_scores_a=item_scores[0] if item_scores else None,
        item_scores_b=item_scores[1] if item_scores else None,
    )


def compare(
    a: Any,
    b: Any,
    metrics: str | list[str] | None = None,
    *,
    split: str = "test",
    corpus: Any = None,
    options: dict[str, Any] | None = None,
    track: str | None = None,
    resamples: int | None = None,
    seed: int | None = None,
    trials: int | None = None,
    alpha: float | None = None,
    names: tuple[str, str] | None = None,
) -> Comparison:
    """Compare system B with system A on the items of ``split`` (B − A for every metric).
    ``a`` and ``b``: what :func:`etclib.score` takes, or finished ``ScoreResult`` objects; their
    signatures must agree metric by metric."""
    from etclib.data.corpus import load_corpus
    from etclib.tracks.scoring import ScoreResult, score

    results: list[ScoreResult] = []
    labels: list[dict[str, str]] = []
    for n, system in enumerate((a, b)):
        name = names[n] if names else None
        if isinstance(system, ScoreResult):
            results.append(system)
            labels.append({"name": name or "AB"[n], "source": ""})
            continue
        if corpus is None:
            corpus = load_corpus()
        results.append(score(system, split, metrics, corpus=corpus, options=options, track=track))
        source = os.fspath(system) if isinstance(system, (str, os.PathLike)) else ""
        labels.append(
            {"name": name or (os.path.basename(source) if source else "AB"[n]), "source": source}
        )
    ra, rb = results
    if ra.track != rb.track:
        raise TaskError(
            f"A is of the {ra.track} track and B of the {rb.track} track; compare two systems "
            "of the same track."
        )
    if ra.split != rb.split or ra.keys != rb.keys:
        raise TaskError(
            f"A covers the {ra.split} split and B the {rb.split} split; compare two systems "
            "scored on the same items."
        )
    groups = [g for g in ra.metrics if g in rb.metrics]
    if metrics is not None:
        wanted = tracks.get(ra.track).parse_metrics(metrics)
        missing = [g for g in wanted if g not in groups]
        if missing:
            raise MetricError(
                f"Not both systems are scored with {', '.join(missing)}; score both with it."
            )
        groups = wanted
    if not groups:
        raise MetricError("The two systems share no metric group; score both with the same ones.")
    check_signatures(ra.signature, rb.signature, groups)
    signature = {k: v for k, v in ra.signature.items() if k not in registry.METRICS or k in groups}
    return compare_data(
        ra.items,
        {g: ra.modules[g] for g in groups},
        {g: ra.data[g] for g in groups},
        {g: rb.data[g] for g in groups},
        predictions_a=ra.predictions,
        predictions_b=rb.predictions,
        signature=signature,
        a=labels[0],
        b=labels[1],
        track=ra.track,
        split=ra.split,
        resamples=resamples,
        seed=seed,
        trials=trials,
        alpha=alpha,
    )


def check_signatures(sig_a: dict[str, str], sig_b: dict[str, str], groups: list[str]) -> None:
    """Refuse two signatures that differ on a compared group or on what all scores depend on
    (tokenizer, corpus, split, track): their numbers are not comparable."""
    shared = [k for k in ("tokenizer", "corpus", "split", "track") if k in sig_a or k in sig_b]
    for k in [*shared, *groups]:
        if sig_a.get(k) != sig_b.get(k):
            raise MetricError(
                f"A and B were scored under different {k!r} signatures ({sig_a.get(k)!r} vs "
                f"{sig_b.get(k)!r}); their numbers are not comparable. Score both the same way."
            )


# --- per item ---------------------------------------------------------------------------------


#: a per-item value that is no score (a text or a list: a judge error, unit lists)
_TEXT = object()
_NUMBERS = (int, float, np.number)


def _numbers(scores: dict[str, Any]) -> dict[str, Any]:
    """One item's scores as finite floats, None (undefined: None, NaN, infinite) or
    :data:`_TEXT` (not a number, booleans included); one pass, no call per value."""
    out: dict[str, Any] = {}
    for k, v in scores.items():
        if v is None:
            out[k] = None
        elif type(v) is float:
            out[k] = v if math.isfinite(v) else None
        elif isinstance(v, bool) or not isinstance(v, _NUMBERS):
            out[k] = _TEXT
        else:
            v = float(v)
            out[k] = v if math.isfinite(v) else None
    return out


def _group_numbers(known, module, data, group: str, n: int) -> list[dict[str, Any]]:
    """:func:`_numbers` of every item's scores of ``group`` (stored, else ``item_scores``)."""
    stored = known.get(group) if known is not None else None
    return [
        _numbers(
            stored[i]
            if stored is not None and len(stored) > i
            else module.item_scores(data[group], i)
        )
        for i in range(n)
    ]


def _per_item_rows(c: Comparison) -> list[dict[str, Any]]:
    track = tracks.get(c.track)
    n = len(c.items)
    groups = [
        (
            _group_numbers(c.item_scores_a, module, c.data_a, group, n),
            _group_numbers(c.item_scores_b, module, c.data_b, group, n),
        )
        for group, module in c.modules.items()
    ]
    rows = []
    for i, it in enumerate(c.items):
        pa, pb = c.predictions_a[i], c.predictions_b[i]
        row: dict[str, Any] = {
            "dialogue_id": it.dialogue_id,
            "turn": it.turn,
            "role": it.role,
            "label": list(it.label),
            "reference": it.reference,
            "prediction_a": list(pa) if isinstance(pa, tuple) else pa,
            "prediction_b": list(pb) if isinstance(pb, tuple) else pb,
            **track.compare_columns(pa, pb),
        }
        for numbers_a, numbers_b in groups:
            na, nb = numbers_a[i], numbers_b[i]
            for k in dict.fromkeys([*na, *nb]):
                va, vb = na.get(k), nb.get(k)
                if k in row or va is _TEXT or vb is _TEXT:
                    continue  # a text or list (a judge error, unit lists): not a score
                row[f"{k}_a"] = va
                row[f"{k}_b"] = vb
                row[f"{k}_diff"] = None if va is None or vb is None else vb - va
        rows.append(row)
    return rows


def outcome(diff: float | None, higher_is_better: bool = True) -> str:
    """An item's outcome for B on a per-item difference: "B wins", "A wins", "tie", or
    "undefined" (no score for one of them)."""
    if diff is None or diff != diff:
        return "undefined"
    if diff == 0:
        return "tie"
    return "B wins" if (diff > 0) == higher_is_better else "A wins"


def win_tie_loss(c: Comparison, key: str | None = None) -> dict[str, dict[str, dict[str, int]]]:
    """Breakdown -> subset -> counts of "B wins", "tie", "A wins", "undefined" on the per-item
    difference of ``key`` (default :meth:`Comparison.primary_item_key`)."""
    from etclib.tracks.scoring import breakdown_groups

    key = key or c.primary_item_key()
    rows = c.per_item()
    higher = registry.fact(key).higher_is_better if key in c.metrics else True
    outcomes = [outcome(r.get(f"{key}_diff"), higher) for r in rows] if key else []

    def count(idx) -> dict[str, int]:
        got = dict.fromkeys(("B wins", "tie", "A wins", "undefined"), 0)
        for i in idx:
            got[outcomes[i]] += 1
        return got

    groups = breakdown_groups(c.items)
    return {
        "all": {"all": count(range(len(rows)))},
        **{g: {name: count(idx) for name, idx in subsets.items()} for g, subsets in groups.items()},
    }


def write_per_item(c: Comparison, path: str | os.PathLike) -> None:
    """One JSON line per item (:meth:`Comparison.per_item`)."""
    from etclib.core.files import write_text

    rows = (json.dumps(_finite(row), ensure_ascii=False) + "\n" for row in c.per_item())
    write_text(path, "".join(rows))


def format_text(c: Comparison) -> str:
    """A human-readable report: the metric table, the win/tie/loss counts and the signature."""
    from etclib.tracks.scoring import signature_string

    lines = [
        f"A: {c.a['name']}" + (f"  ({c.a['source']})" if c.a.get("source") else ""),
        f"B: {c.b['name']}" + (f"  ({c.b['source']})" if c.b.get("source") else ""),
        f"{c.n_items} items of the {c.split} split ({c.track} track); B − A with its paired "
        f"bootstrap {round((1 - c.alpha) * 100)}% interval ({c.resamples} resamples, seed "
        f"{c.seed}) and the paired approximate-randomization p-value ({c.trials} trials)",
        f"  {'metric':<18}{'A':>8}{'B':>8}{'B − A':>9}  {'interval':<18}{'p':>8}  verdict",
    ]
    for key, m in c.metrics.items():
        iv = f"[{m.interval[0]:.2f}, {m.interval[1]:.2f}]"
        lines.append(
            f"  {key:<18}{m.a:8.2f}{m.b:8.2f}{m.difference:+9.2f}  {iv:<18}{m.p_value:8.4f}  "
            f"{m.verdict}"
        )
    key = c.primary_item_key()
    if key:
        w = win_tie_loss(c, key)["all"]["all"]
        lines.append(
            f"items on {key}: B wins {w['B wins']}, ties {w['tie']}, A wins {w['A wins']}"
            + (f", undefined {w['undefined']}" if w["undefined"] else "")
        )
    lines.append(f"signature: {signature_string(c.signature)}")
    return "\n".join(lines)
