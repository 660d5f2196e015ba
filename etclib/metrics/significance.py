"""Paired bootstrap over items: confidence intervals and rank bands, for any metric.

Like sacrebleu's ``significance.py``, this module knows no metric: it calls the metric's own
``statistics``/``from_statistics``, else ``resample``, else ``aggregate`` once per resample.
Every system on the same items gets the same resamples (:func:`draw`), so differences are
paired. The rules: docs/leaderboard.md, "The ranking rule".

>>> res = draw(len(items))                                              # doctest: +SKIP
>>> intervals("bleu", result.data["bleu"], res)["bleu4"]                # doctest: +SKIP
(2.01, 2.87)
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

from etclib import metrics
from etclib.metrics import Metric, MetricData

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 20260
ALPHA = 0.05


@dataclass(frozen=True, eq=False)
class Resamples:
    """Bootstrap resamples of ``n_items`` items: ``idx`` is resamples x items."""

    idx: np.ndarray
    seed: int | None = None

    @property
    def n_items(self) -> int:
        return int(self.idx.shape[1])

    def __len__(self) -> int:
        return int(self.idx.shape[0])

    @cached_property
    def weights(self) -> np.ndarray:
        """How often each item appears in each resample (resamples x items, float)."""
        return weights(self.idx, self.n_items)


def weights(idx: np.ndarray, n_items: int) -> np.ndarray:
    """Draw counts of resampled indices ``idx`` (resamples x draws) -> resamples x items."""
    b = idx.shape[0]
    flat = (np.arange(b)[:, None] * n_items + idx).ravel()
    return np.bincount(flat, minlength=b * n_items).reshape(b, n_items).astype(float)


@lru_cache(maxsize=4)
def draw(n_items: int, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> Resamples:
    """The seeded resamples for ``n_items`` items (cached: every entry shares them)."""
    rng = np.random.default_rng(seed)
    return Resamples(rng.integers(0, n_items, size=(resamples, n_items)), seed)


def _metric(metric: str | Metric) -> Metric:
    return metrics.get(metric) if isinstance(metric, str) else metric


def resampled(metric: str | Metric, data: MetricData, res: Resamples) -> dict[str, np.ndarray]:
    """Every ranking key of ``metric`` (a group name or a Metric) on every resample."""
    return resampled_many([(metric, data)], res)[0]


def resampled_many(
    scored: list[tuple[str | Metric, MetricData]], res: Resamples
) -> list[dict[str, np.ndarray]]:
    """:func:`resampled` for many (metric, data) pairs on the same resamples: the statistics
    of all are stacked, so all their resamples cost one matrix product."""
    found = [_metric(m) for m, _ in scored]
    stats: list[np.ndarray] = []
    where: dict[int, tuple[int, int]] = {}
    for n, (metric, (_, data)) in enumerate(zip(found, scored)):
        if hasattr(metric, "statistics") and hasattr(metric, "from_statistics"):
            block = np.asarray(metric.statistics(data), dtype=float)
            start = sum(b.shape[1] for b in stats)
            where[n] = (start, start + block.shape[1])
            stats.append(block)
    sums = res.weights @ np.hstack(stats) if stats else None
    out = []
    for n, (metric, (_, data)) in enumerate(zip(found, scored)):
        ranked = [f.key for f in metric.FACTS if f.ranking]
        if not ranked:  # nothing to resample (e.g. erc_loo): no aggregate per resample
            out.append({})
            continue
        if n in where:
            a, b = where[n]
            got = metric.from_statistics(sums[:, a:b])
        elif hasattr(metric, "resample"):
            got = metric.resample(data, res)
        else:
            rows = [metric.aggregate(data, row) for row in res.idx]
            got = {k: [r[k] for r in rows] for k in ranked}
        out.append({k: np.asarray(got[k], dtype=float) for k in ranked})
    return out


def interval(values: np.ndarray, alpha: float = ALPHA) -> tuple[float, float]:
    """The percentile interval of resampled scores (NaN resamples ignored)."""
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if not len(v):
        return float("nan"), float("nan")
    lo, hi = np.percentile(v, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return float(lo), float(hi)


def interval_rows(samples: np.ndarray, alpha: float = ALPHA) -> np.ndarray:
    """:func:`interval` of each row of ``samples`` (rows x resamples) -> rows x (lo, hi), in
    one vectorised call for the rows without a NaN resample."""
    samples = np.asarray(samples, dtype=float)
    out = np.full((samples.shape[0], 2), np.nan)
    clean = ~np.isnan(samples).any(axis=1)
    if clean.any():
        out[clean] = np.percentile(
            samples[clean], [100 * alpha / 2, 100 * (1 - alpha / 2)], axis=1
        ).T
    for i in np.flatnonzero(~clean):
        out[i] = interval(samples[i], alpha)
    return out


def intervals(
    metric: str | Metric, data: MetricData, res: Resamples, alpha: float = ALPHA
) -> dict[str, tuple[float, float]]:
    """Ranking key -> its ``1 - alpha`` bootstrap interval."""
    return {k: interval(v, alpha) for k, v in resampled(metric, data, res).items()}


def rank_bands(
    points: np.ndarray,
    samples: np.ndarray,
    alpha: float = ALPHA,
    higher_is_better: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Rank bands from paired bootstrap differences (``samples``: entries x resamples):
    ``(rank, worst)``, ``rank`` = 1 + the entries significantly better, ``worst`` = the entries
    not significantly worse; a NaN score gets 0 (unranked)."""
    points = np.asarray(points, dtype=float)
    samples = np.asarray(samples, dtype=float)
    if not higher_is_better:
        points, samples = -points, -samples
    e = len(points)
    ok = ~np.isnan(points)
    better = np.zeros((e, e), dtype=bool)  # better[i, j]: i significantly above j
    worse = np.zeros((e, e), dtype=bool)  # worse[i, j]: i significantly below j
    q = [100 * alpha / 2, 100 * (1 - alpha / 2)]
    # Rows with a NaN resample (unscored entries: all NaN) need nanpercentile, which is slow
    # (one Python call per row); every other row takes np.percentile, vectorised, with the
    # same values (both interpolate linearly over the same sorted numbers).
    nan = np.isnan(samples.reshape(e, -1)) if e else np.zeros((0, 0), dtype=bool)
    has_nan, all_nan = nan.any(axis=1), nan.all(axis=1)
    for i in range(e):
        if not ok[i]:
            continue
        diff = samples[i][None, :] - samples  # row j: i - j
        lo = np.full(e, np.nan)
        hi = np.full(e, np.nan)
        # all-NaN differences stay NaN: never significant
        clean = ~has_nan & (not has_nan[i])
        dirty = ~all_nan & (has_nan | has_nan[i]) & (not all_nan[i])
        if clean.any():
            lo[clean], hi[clean] = np.percentile(diff[clean], q, axis=1)
        if dirty.any():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # a difference all NaN
                lo[dirty], hi[dirty] = np.nanpercentile(diff[dirty], q, axis=1)
        better[i] = (lo > 0) & ok
        worse[i] = (hi < 0) & ok
        better[i, i] = worse[i, i] = False
    best = np.where(ok, 1 + better.sum(axis=0), 0)
    worst = np.where(ok, ok.sum() - worse.sum(axis=0), 0)
    return best, worst
