"""Compare two systems on the same items: paired differences, intervals, tests and verdicts.

``etclib.compare`` is :func:`compare` (this module is ``comparison``, so that importing it
never hides the function behind a module of the same name).

>>> c = compare("a.jsonl", "b.jsonl", metrics="bleu,rouge")              # doctest: +SKIP
>>> c.metrics["rougeL"].difference, c.metrics["rougeL"].verdict          # doctest: +SKIP
(3.12, 'B better')

For every ranking key of the metric groups compared (and, for a group whose
``from_statistics`` takes ``everything``, its other ×100 keys: the ERC track's per-category
precision, recall and F1):

- ``difference``: B − A of the scores as ``etclib score`` reports them;
- ``interval``: the paired bootstrap 95% interval of B − A over items: the board's resamples
  (:func:`etclib.significance.draw`, same count and seed, the same for both systems), each
  system's score on each resample from :func:`etclib.significance.resampled_many` (the function
  behind the board's intervals and rank bands), the percentile interval of the differences;
- ``p_value``: paired approximate randomization as sacrebleu does it
  (``sacrebleu.significance._paired_ar_test``: ``default_rng(seed).integers(2, size=(trials,
  items), dtype=bool)`` picks, per trial, which system each item's statistics go to; the
  statistic is |A − B| of the two pseudo-systems' scores; p = (c + 1) / (trials + 1)), run on the
  metric's own per-item sufficient statistics, so it serves every metric of the registry. For a
  corpus-level metric (BLEU, macro-F1) this is sacrebleu's test; for a mean over items it is the
  paired permutation (sign-flip) test of the item differences. One deliberate difference: c
  counts the trials whose statistic is *at least* the observed one (sacrebleu counts those
  strictly above, which gives two identical systems p = 1/(trials + 1), "significant": see
  jhclark/multeval#5); where no trial ties the observed value both give the same p;
- ``verdict``: "A better" / "no significant difference" / "B better" at ``alpha`` (0.05):
  significant when p < alpha; which side by the metric's direction
  (:attr:`etclib.metrics.Fact.higher_is_better`).

The signature adds ``compare``: resamples, seed, trials, alpha. Per item (:meth:`Comparison.
per_item`): both predictions, the reference, each metric's item scores for A and B and B − A.
"""

from __future__ import annotations

import inspect
import json
import math
import os
from dataclasses import dataclass, field
from functools import lru_cache
from types import ModuleType
from typing import Any

import numpy as np

from . import metrics as registry
from . import significance, tracks
from .corpus import CATEGORIES, ROLES
from .errors import MetricError, TaskError
from .metrics import MetricData
from .task import Item

#: sacrebleu's default number of approximate-randomization trials
DEFAULT_TRIALS = 10000
ALPHA = significance.ALPHA
A_BETTER, NO_DIFFERENCE, B_BETTER = "A better", "no significant difference", "B better"
VERDICTS = (A_BETTER, NO_DIFFERENCE, B_BETTER)
#: the name of the test in the signature and the JSON
TEST = "paired approximate randomization (sacrebleu's; ties count as at least as extreme)"
#: relative tolerance under which a trial's statistic counts as equal to the observed one
TIE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class MetricComparison:
    """One metric key compared: the scores, B − A, its interval, the test and the verdict."""

    key: str
    group: str
    a: float
    b: float
    difference: float
    interval: tuple[float, float]
    p_value: float
    verdict: str
    ranking: bool = True

    def to_json(self) -> dict[str, Any]:
        return _finite(
            {
                "a": self.a,
                "b": self.b,
                "difference": self.difference,
                "interval": list(self.interval),
                "p_value": self.p_value,
                "verdict": self.verdict,
            }
        )


@dataclass
class Comparison:
    """Two systems compared on the same items (see the module's text)."""

    a: dict[str, str]
    b: dict[str, str]
    track: str
    split: str
    items: list[Item]
    predictions_a: list[Any]
    predictions_b: list[Any]
    modules: dict[str, ModuleType]
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
        """``{"a", "b", "signature", "n_items", "metrics": {key: {a, b, difference, interval,
        p_value, verdict}}}`` (the shape of ``etclib compare --json`` and ``python -m
        leaderboard compare --json``), with ``items`` (:meth:`per_item`) when asked."""
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
        """The per-item key the win/tie/loss counts use: the first compared ranking key (in the
        track's display order) that items are scored on, else the first item key."""
        keys = [k for k in self.item_keys() if k != "prediction"]
        for key in registry.display_order(self.track):
            if key in keys and key in self.metrics:
                return key
        return keys[0] if keys else None

    def per_item(self) -> list[dict[str, Any]]:
        """One row per item: key, label, reference, ``prediction_a`` / ``prediction_b``, and for
        each item score of each group ``<key>_a``, ``<key>_b`` and ``<key>_diff`` (B − A; None
        where either is undefined); on the ERC track ``labels_differ``."""
        if self._rows is None:
            self._rows = _per_item_rows(self)
        return self._rows

    def metric_rows(self) -> list[dict[str, Any]]:
        """The metric table: one row per key (label, A, B, B − A, interval, p, verdict)."""
        rows = []
        for key, m in self.metrics.items():
            fact = registry.fact(key)
            rows.append(
                _finite(
                    {
                        "metric": key,
                        "label": fact.label,
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
            )
        return rows


def _finite(obj):
    """JSON has no NaN: undefined numbers become None; numpy scalars plain numbers."""
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


# --- the statistics -------------------------------------------------------------------------


@lru_cache(maxsize=4)
def randomization(
    n_items: int, trials: int = DEFAULT_TRIALS, seed: int = significance.DEFAULT_SEED
):
    """Which system each item's statistics go to in each trial (trials x items, bool): the
    draw of sacrebleu's ``_paired_ar_test`` (True: pseudo-system A takes A's). Cached."""
    rng = np.random.default_rng(seed)
    pos = rng.integers(2, size=(trials, n_items), dtype=bool)
    pos.setflags(write=False)
    return pos


def p_value(observed: float, trial_stats: np.ndarray) -> float:
    """(trials whose statistic is at least ``observed``, + 1) / (trials + 1); NaN trials are
    counted as not extreme; NaN when ``observed`` is NaN."""
    if observed != observed:
        return float("nan")
    t = np.asarray(trial_stats, dtype=float)
    tol = TIE_TOLERANCE * max(1.0, abs(observed))
    c = int(np.count_nonzero(t >= observed - tol))
    return (c + 1) / (len(t) + 1)


def verdict(difference: float, p: float, alpha: float = ALPHA, higher_is_better: bool = True):
    """ "A better", "B better" (p < alpha, on the metric's better side) or "no significant
    difference"."""
    if p != p or difference != difference or difference == 0 or p >= alpha:
        return NO_DIFFERENCE
    return B_BETTER if (difference > 0) == higher_is_better else A_BETTER


def _takes_everything(module: ModuleType) -> bool:
    fn = getattr(module, "from_statistics", None)
    return fn is not None and "everything" in inspect.signature(fn).parameters


def _scores_from_sums(module: ModuleType, sums: np.ndarray, keys: list[str]) -> dict:
    if _takes_everything(module):
        got = module.from_statistics(sums, everything=True)
    else:
        got = module.from_statistics(sums)
    return {k: np.asarray(got[k], dtype=float) for k in keys}


def _compared_keys(module: ModuleType) -> list[str]:
    """The ranking keys of a group, then (when its ``from_statistics`` takes ``everything``) its
    other ×100 keys."""
    keys = [f.key for f in module.FACTS if f.ranking]
    if _takes_everything(module):
        keys += [f.key for f in module.FACTS if not f.ranking and f.unit == "×100"]
    return keys


CHUNK = 2000  # trials x items of float at a time


def _has_statistics(module: ModuleType) -> bool:
    return hasattr(module, "statistics") and hasattr(module, "from_statistics")


def _ar_statistics_many(
    scored: list[tuple[ModuleType, MetricData, MetricData, list[str]]], pos: np.ndarray
) -> list[dict[str, np.ndarray]]:
    """For each (module, A's data, B's data, keys): per key, |A − B| of the two
    pseudo-systems of every trial. The metrics with per-item statistics share one matrix
    product per chunk of trials: pseudo-A = B's totals + pos @ (A − B), pseudo-B = A's totals
    − pos @ (A − B)."""
    out: list[dict[str, np.ndarray] | None] = [None] * len(scored)
    blocks, where = [], {}
    for n, (module, da, db, _) in enumerate(scored):
        if _has_statistics(module):
            sa = np.asarray(module.statistics(da), dtype=float)
            sb = np.asarray(module.statistics(db), dtype=float)
            start = sum(b[0].shape[1] for b in blocks)
            where[n] = (start, start + sa.shape[1])
            blocks.append((sa - sb, sa.sum(axis=0), sb.sum(axis=0)))
        else:
            out[n] = _ar_by_swapping(*scored[n][:3], pos, scored[n][3])
    if blocks:
        delta = np.hstack([b[0] for b in blocks])
        parts: dict[int, dict[str, list[np.ndarray]]] = {n: {} for n in where}
        for start in range(0, len(pos), CHUNK):
            moved = pos[start : start + CHUNK].astype(float) @ delta
            for k, (n, (lo, hi)) in enumerate(where.items()):
                module, _, _, keys = scored[n]
                _, tot_a, tot_b = blocks[k]
                got_a = _scores_from_sums(module, tot_b + moved[:, lo:hi], keys)
                got_b = _scores_from_sums(module, tot_a - moved[:, lo:hi], keys)
                for key in keys:
                    parts[n].setdefault(key, []).append(np.abs(got_a[key] - got_b[key]))
        for n, got in parts.items():
            out[n] = {k: np.concatenate(v) for k, v in got.items()}
    return [o or {} for o in out]


def _ar_statistics(
    module: ModuleType, da: MetricData, db: MetricData, pos: np.ndarray, keys: list[str]
) -> dict[str, np.ndarray]:
    """Per key, |A − B| of the two pseudo-systems of every trial (one metric group)."""
    return _ar_statistics_many([(module, da, db, keys)], pos)[0]


def _ar_by_swapping(
    module: ModuleType, da: MetricData, db: MetricData, pos: np.ndarray, keys: list[str]
) -> dict[str, np.ndarray]:
    """A metric without statistics: swap the per-item arrays and aggregate each trial (slow,
    but any metric)."""
    out: dict[str, list[float]] = {k: [] for k in keys}
    for row in pos:
        arrays_a, arrays_b = {}, {}
        for name, arr_a in da.arrays.items():
            arr_b = db.arrays[name]
            pick = row.reshape((-1,) + (1,) * (arr_a.ndim - 1))
            arrays_a[name] = np.where(pick, arr_a, arr_b)
            arrays_b[name] = np.where(pick, arr_b, arr_a)
        ga = module.aggregate(MetricData(arrays_a))
        gb = module.aggregate(MetricData(arrays_b))
        for k in keys:
            out[k].append(abs(ga[k] - gb[k]))
    return {k: np.asarray(v, dtype=float) for k, v in out.items()}


def compare_metrics(
    modules: dict[str, ModuleType],
    data_a: dict[str, MetricData],
    data_b: dict[str, MetricData],
    n_items: int,
    *,
    resamples: int = significance.DEFAULT_RESAMPLES,
    seed: int = significance.DEFAULT_SEED,
    trials: int = DEFAULT_TRIALS,
    alpha: float = ALPHA,
    keys: list[str] | None = None,
) -> dict[str, MetricComparison]:
    """Metric key -> :class:`MetricComparison`, for per-item data of two systems on the same
    ``n_items`` items (each group's ``MetricData`` as ``compute`` returned it or as the
    leaderboard stored it). ``keys``: only these metric keys (default: every compared key)."""
    res = significance.draw(n_items, resamples, seed)
    pos = randomization(n_items, trials, seed)
    plans = []
    for group, module in modules.items():
        da, db = data_a[group], data_b[group]
        for name, d in (("A", da), ("B", db)):
            if len(d) != n_items:
                raise MetricError(
                    f"System {name}'s {group} data covers {len(d)} items, not {n_items}; "
                    "compare two systems scored on the same items."
                )
        wanted = [k for k in _compared_keys(module) if keys is None or k in keys]
        if wanted:
            plans.append((group, module, da, db, wanted))
    trial_stats = _ar_statistics_many([(m, da, db, w) for _, m, da, db, w in plans], pos)
    out: dict[str, MetricComparison] = {}
    for (group, module, da, db, wanted), trials_of in zip(plans, trial_stats):
        ranked = [f.key for f in module.FACTS if f.ranking]
        samples_a, samples_b = significance.resampled_many([(module, da), (module, db)], res)
        extra = [k for k in wanted if k not in ranked]
        if extra:
            sums_a = res.weights @ np.asarray(module.statistics(da), dtype=float)
            sums_b = res.weights @ np.asarray(module.statistics(db), dtype=float)
            samples_a.update(_scores_from_sums(module, sums_a, extra))
            samples_b.update(_scores_from_sums(module, sums_b, extra))
        point_a, point_b = module.aggregate(da), module.aggregate(db)
        for key in wanted:
            fact = registry.fact(key)
            a, b = float(point_a[key]), float(point_b[key])
            diff = b - a
            lo, hi = significance.interval(samples_b[key] - samples_a[key], alpha)
            p = p_value(abs(diff), trials_of[key])
            out[key] = MetricComparison(
                key,
                group,
                a,
                b,
                diff,
                (lo, hi),
                p,
                verdict(diff, p, alpha, fact.higher_is_better),
                fact.ranking,
            )
    return out


def pairwise(
    module: ModuleType,
    datas: list[MetricData],
    key: str,
    n_items: int,
    *,
    resamples: int = significance.DEFAULT_RESAMPLES,
    seed: int = significance.DEFAULT_SEED,
    trials: int = DEFAULT_TRIALS,
    alpha: float = ALPHA,
) -> dict[tuple[int, int], MetricComparison]:
    """:func:`compare_metrics` of every pair ``(i, j)``, ``i < j`` (A = ``datas[i]``, B =
    ``datas[j]``) on one ranking ``key`` of ``module``, at the cost of one system per entry:
    each entry's resampled scores and its statistics' product with the trials are computed
    once, and a pair's differ only by subtraction (a module without per-item statistics is
    compared pair by pair)."""
    if not _has_statistics(module):
        return {
            (i, j): compare_metrics(
                {"m": module},
                {"m": datas[i]},
                {"m": datas[j]},
                n_items,
                resamples=resamples,
                seed=seed,
                trials=trials,
                alpha=alpha,
                keys=[key],
            )[key]
            for i in range(len(datas))
            for j in range(i + 1, len(datas))
        }
    fact = registry.fact(key)
    res = significance.draw(n_items, resamples, seed)
    pos = randomization(n_items, trials, seed)
    samples = [s[key] for s in significance.resampled_many([(module, d) for d in datas], res)]
    points = [float(module.aggregate(d)[key]) for d in datas]
    stats = [np.asarray(module.statistics(d), dtype=float) for d in datas]
    totals = [s.sum(axis=0) for s in stats]
    width = stats[0].shape[1] if stats else 0
    stacked = np.hstack(stats) if stats else np.zeros((n_items, 0))
    trial_stats: dict[tuple[int, int], list[np.ndarray]] = {}
    for start in range(0, len(pos), CHUNK):
        products = pos[start : start + CHUNK].astype(float) @ stacked
        for i in range(len(datas)):
            for j in range(i + 1, len(datas)):
                moved = products[:, i * width : (i + 1) * width]
                moved = moved - products[:, j * width : (j + 1) * width]
                got_a = _scores_from_sums(module, totals[j] + moved, [key])[key]
                got_b = _scores_from_sums(module, totals[i] - moved, [key])[key]
                trial_stats.setdefault((i, j), []).append(np.abs(got_a - got_b))
    out = {}
    for (i, j), parts in trial_stats.items():
        diff = points[j] - points[i]
        p = p_value(abs(diff), np.concatenate(parts))
        out[(i, j)] = MetricComparison(
            key,
            fact.group,
            points[i],
            points[j],
            diff,
            significance.interval(samples[j] - samples[i], alpha),
            p,
            verdict(diff, p, alpha, fact.higher_is_better),
            fact.ranking,
        )
    return out


def compare_signature(resamples: int, seed: int, trials: int, alpha: float) -> str:
    """The ``compare`` entry of a comparison's signature."""
    return (
        f"bootstrap:{resamples}|seed:{seed}|interval:percentile-{round((1 - alpha) * 100)}"
        f"|test:paired-ar|trials:{trials}|ties:at-least|alpha:{alpha:g}"
    )


def compare_data(
    items: list[Item],
    modules: dict[str, ModuleType],
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
    """A :class:`Comparison` from both systems' per-item data (no scoring: what
    :func:`compare` and the leaderboard's stored entries share)."""
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

    ``a`` and ``b``: predictions files, ``Predictions``, key -> value dicts (as
    :func:`etclib.score` takes them), or finished :class:`~etclib.scoring.ScoreResult` objects
    of the same split and track. ``metrics``: the groups (default: the track's). The two
    systems' signatures must agree metric by metric (the same tokenizer, models and judge).
    """
    from .corpus import load_corpus
    from .predictions import detect_file_track
    from .scoring import ScoreResult, score

    corpus = corpus if corpus is not None else None
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
        t = track
        if t is None and isinstance(system, (str, os.PathLike)):
            t = detect_file_track(system)
        results.append(
            score(system, split, metrics, corpus=corpus, options=options, track=t or track)
        )
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
        wanted = registry.parse_metrics(metrics, ra.track)
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


def _number(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.number)):
        return None
    v = float(v)
    return v if math.isfinite(v) else None


def _scalar(v: Any) -> bool:
    return v is None or (not isinstance(v, bool) and isinstance(v, (int, float, np.number)))


def _item_scores(known, module, data, group: str, i: int) -> dict[str, Any]:
    if known is not None and group in known and len(known[group]) > i:
        return known[group][i]
    return module.item_scores(data[group], i)


def _per_item_rows(c: Comparison) -> list[dict[str, Any]]:
    erc = tracks.get(c.track).kind == "labels"
    rows = []
    for i, it in enumerate(c.items):
        pa, pb = c.predictions_a[i], c.predictions_b[i]
        row: dict[str, Any] = {
            "dialogue_id": it.dialogue_id,
            "turn": it.turn,
            "role": it.role,
            "label": list(it.label),
            "reference": it.reference,
            "prediction_a": list(pa) if erc else pa,
            "prediction_b": list(pb) if erc else pb,
        }
        if erc:
            row["labels_differ"] = set(pa) != set(pb)
        for group, module in c.modules.items():
            sa = _item_scores(c.item_scores_a, module, c.data_a, group, i)
            sb = _item_scores(c.item_scores_b, module, c.data_b, group, i)
            for k in dict.fromkeys([*sa, *sb]):
                if k in row or not all(_scalar(s.get(k)) for s in (sa, sb)):
                    continue  # a text or list (a judge error, unit lists): not a score
                va, vb = _number(sa.get(k)), _number(sb.get(k))
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
    """Breakdown (role, category, turn) -> subset -> counts of "B wins", "tie", "A wins" (and
    "undefined") on the per-item difference of ``key`` (default :meth:`Comparison.
    primary_item_key`)."""
    key = key or c.primary_item_key()
    rows = c.per_item()
    higher = registry.fact(key).higher_is_better if key in c.metrics else True
    outcomes = [outcome(r.get(f"{key}_diff"), higher) for r in rows] if key else []
    kinds = ("B wins", "tie", "A wins", "undefined")

    def count(idx) -> dict[str, int]:
        got = {k: 0 for k in kinds}
        for i in idx:
            got[outcomes[i]] += 1
        return got

    n = range(len(rows))
    return {
        "all": {"all": count(n)},
        "role": {r: count([i for i in n if rows[i]["role"] == r]) for r in ROLES},
        "category": {cat: count([i for i in n if cat in rows[i]["label"]]) for cat in CATEGORIES},
        "turn": {str(t): count([i for i in n if rows[i]["turn"] == t]) for t in range(1, 6)},
    }


def write_per_item(c: Comparison, path: str | os.PathLike) -> None:
    """One JSON line per item (:meth:`Comparison.per_item`)."""
    from pathlib import Path

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for row in c.per_item():
            f.write(json.dumps(_finite(row), ensure_ascii=False) + "\n")


def format_text(c: Comparison) -> str:
    """A human-readable report: the metric table, the win/tie/loss counts and the signature."""
    from .scoring import signature_string

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
