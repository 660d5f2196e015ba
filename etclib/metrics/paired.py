"""The statistics of comparing two systems on the same items: per metric key B − A, its paired
bootstrap interval (the board's resamples), the paired approximate-randomization p-value and the
verdict (:func:`compare_metrics`; every pair of many entries: :func:`pairwise`).

The test is sacrebleu's, run on the metric's own per-item sufficient statistics so that it
serves every metric, with one deliberate difference: a trial that ties the observed statistic
counts as at least as extreme. Definitions: docs/compare.md, "What is computed".
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from etclib import metrics as registry
from etclib.core.errors import MetricError
from etclib.metrics import Metric, MetricData, significance

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


def _takes_everything(module: Metric) -> bool:
    fn = getattr(module, "from_statistics", None)
    return fn is not None and "everything" in inspect.signature(fn).parameters


def _scores_from_sums(module: Metric, sums: np.ndarray, keys: list[str]) -> dict:
    everything = {"everything": True} if _takes_everything(module) else {}
    got = module.from_statistics(sums, **everything)
    return {k: np.asarray(got[k], dtype=float) for k in keys}


def _compared_keys(module: Metric) -> list[str]:
    """The ranking keys of a group, then (when its ``from_statistics`` takes ``everything``) its
    other ×100 keys."""
    keys = [f.key for f in module.FACTS if f.ranking]
    if _takes_everything(module):
        keys += [f.key for f in module.FACTS if not f.ranking and f.unit == "×100"]
    return keys


CHUNK = 2000  # trials x items of float at a time


def _trial_products(pos: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """``pos @ matrix``, ``CHUNK`` trials at a time through one reused float buffer (a fresh
    copy of each chunk cost more than the product); the same chunks give the same bits."""
    out = np.empty((len(pos), matrix.shape[1]))
    buffer = np.empty((min(CHUNK, len(pos)), pos.shape[1]))
    for start in range(0, len(pos), CHUNK):
        chunk = buffer[: len(pos[start : start + CHUNK])]
        np.copyto(chunk, pos[start : start + CHUNK])
        out[start : start + len(chunk)] = chunk @ matrix
    return out


def _has_statistics(module: Metric) -> bool:
    return hasattr(module, "statistics") and hasattr(module, "from_statistics")


def _ar_statistics_many(
    scored: list[tuple[Metric, MetricData, MetricData, list[str]]], pos: np.ndarray
) -> list[dict[str, np.ndarray]]:
    """For each (module, A's data, B's data, keys): per key, |A − B| of the two pseudo-systems
    of every trial; the metrics with statistics share one product: pseudo-A = B's totals +
    pos @ (A − B), pseudo-B = A's totals − pos @ (A − B)."""
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
        # each metric's scores once over all trials: its Python work is paid once, not per chunk
        moved = _trial_products(pos, delta)
        for k, (n, (lo, hi)) in enumerate(where.items()):
            module, _, _, keys = scored[n]
            _, tot_a, tot_b = blocks[k]
            got_a = _scores_from_sums(module, tot_b + moved[:, lo:hi], keys)
            got_b = _scores_from_sums(module, tot_a - moved[:, lo:hi], keys)
            out[n] = {key: np.abs(got_a[key] - got_b[key]) for key in keys}
    return [o or {} for o in out]


def _ar_statistics(
    module: Metric, da: MetricData, db: MetricData, pos: np.ndarray, keys: list[str]
) -> dict[str, np.ndarray]:
    """Per key, |A − B| of the two pseudo-systems of every trial (one metric group)."""
    return _ar_statistics_many([(module, da, db, keys)], pos)[0]


def _ar_by_swapping(
    module: Metric, da: MetricData, db: MetricData, pos: np.ndarray, keys: list[str]
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
    modules: dict[str, Metric],
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
    """Metric key -> :class:`MetricComparison` for two systems' per-item data on the same
    ``n_items`` items; ``keys``: only these (default: every compared key)."""
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
    module: Metric,
    datas: list[MetricData],
    key: str,
    n_items: int,
    *,
    resamples: int = significance.DEFAULT_RESAMPLES,
    seed: int = significance.DEFAULT_SEED,
    trials: int = DEFAULT_TRIALS,
    alpha: float = ALPHA,
) -> dict[tuple[int, int], MetricComparison]:
    """:func:`compare_metrics` of every pair ``(i, j)``, ``i < j`` (A = ``datas[i]``) on one
    ranking ``key``, at the cost of one system per entry: a pair's products differ only by
    subtraction (a module without per-item statistics is compared pair by pair)."""
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
    products = _trial_products(pos, stacked)
    out = {}
    for i in range(len(datas)):
        for j in range(i + 1, len(datas)):
            moved = products[:, i * width : (i + 1) * width]
            moved = moved - products[:, j * width : (j + 1) * width]
            got_a = _scores_from_sums(module, totals[j] + moved, [key])[key]
            got_b = _scores_from_sums(module, totals[i] - moved, [key])[key]
            diff = points[j] - points[i]
            p = p_value(abs(diff), np.abs(got_a - got_b))
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
