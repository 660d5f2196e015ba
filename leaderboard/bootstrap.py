"""Paired bootstrap over items: confidence intervals and rank bands.

Resamples: ``numpy.random.default_rng(seed).integers(0, n_items, size=(resamples, n_items))``,
the same for every entry of the board (so differences are paired). Each resample is turned into
a weight matrix ``W`` (resamples x items, how often each item was drawn), and a metric is
aggregated for all resamples at once from the per-item data stored with its score:

- mean-over-items metrics (ROUGE, BERTScore, judge precision / recall / f1): the weighted mean
  of the per-item values, NaN items (e.g. excluded by the judge) left out, x100, exactly as
  ``etclib.metrics.subset_mean`` on the resample;
- BLEU: the weighted sum of sacrebleu's sufficient statistics, scored as sacrebleu does
  (brevity penalty, ``exp`` smoothing, zero when nothing matches);
- any other metric: its module's ``aggregate`` called once per resample (slow but exact).

An interval is the 2.5th and 97.5th percentiles of the resampled scores (numpy's default
linear interpolation). An entry's rank is 1 + the number of entries that are significantly better
than it: their paired difference's 95% interval lies above 0.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np

#: metric key -> the per-item array it is the mean of (x100)
MEAN_KEYS: dict[str, str] = {
    "rouge1": "rouge1",
    "rouge2": "rouge2",
    "rougeL": "rougeL",
    "bertscore": "bertscore",
    "precision": "precision",
    "recall": "recall",
    "f1": "f1",
}
BLEU_KEYS: dict[str, int] = {"bleu1": 1, "bleu2": 2, "bleu3": 3, "bleu4": 4}
BLEU_MAX_ORDER = 4
ALPHA = 0.05


def resample_indices(n_items: int, resamples: int, seed: int) -> np.ndarray:
    """The resampled item indices, one row per resample."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, n_items, size=(resamples, n_items))


def weights(idx: np.ndarray, n_items: int) -> np.ndarray:
    """How often each item appears in each resample (resamples x items, float)."""
    b = idx.shape[0]
    w = np.zeros((b, n_items))
    np.add.at(w, (np.repeat(np.arange(b), idx.shape[1]), idx.ravel()), 1.0)
    return w


def mean_scores(values: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted mean x100 per resample; NaN items left out; NaN when none is left."""
    known = ~np.isnan(values)
    num = w @ np.where(known, values, 0.0)
    den = w @ known.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / den * 100.0, np.nan)


def bleu_scores(stats: np.ndarray, w: np.ndarray, order: int) -> np.ndarray:
    """Corpus BLEU (x100) of order ``order`` per resample from per-item sacrebleu statistics.

    ``stats`` rows are ``[hyp_len, ref_len, correct_1..4, total_1..4]`` (etclib.metrics.bleu).
    """
    return bleu_from_sums(w @ np.asarray(stats, dtype=float), order)


def bleu_from_sums(s: np.ndarray, order: int) -> np.ndarray:
    """BLEU (x100) of order ``order`` from summed statistics, one row per resample."""
    sys_len, ref_len = s[:, 0], s[:, 1]
    correct = s[:, 2 : 2 + order]
    total = s[:, 2 + BLEU_MAX_ORDER : 2 + BLEU_MAX_ORDER + order]
    b = s.shape[0]
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        bp = np.where(
            sys_len < ref_len,
            np.where(sys_len > 0, np.exp(1 - ref_len / np.where(sys_len > 0, sys_len, 1)), 0.0),
            1.0,
        )
        logs = np.zeros((b, order))
        smooth = np.ones(b)
        stopped = np.zeros(b, dtype=bool)
        for n in range(order):
            c, t = correct[:, n], total[:, n]
            stopped |= t == 0
            zero = (c == 0) & ~stopped
            smooth = np.where(zero, smooth * 2, smooth)
            p = np.where(
                zero, 100.0 / (smooth * np.where(t > 0, t, 1)), 100.0 * c / np.where(t > 0, t, 1)
            )
            # sacrebleu's my_log(0) is -9999999999: an order it never reached zeroes the score
            logs[:, n] = np.where(stopped, -9999999999.0, np.log(np.where(p > 0, p, 1)))
        score = bp * np.exp(logs.sum(axis=1) / order)
    nothing = ~np.any(correct > 0, axis=1)
    return np.where(nothing, 0.0, score)


def generic_scores(
    aggregate: Callable[[np.ndarray], dict[str, float]], key: str, idx: np.ndarray
) -> np.ndarray:
    """Fallback: ``aggregate(indices)[key]`` for every resample."""
    return np.array([aggregate(row)[key] for row in idx], dtype=float)


def resampled(
    key: str,
    arrays: dict[str, np.ndarray],
    w: np.ndarray,
    idx: np.ndarray,
    aggregate: Callable[[np.ndarray], dict[str, float]] | None = None,
) -> np.ndarray:
    """The metric ``key`` on every resample, from the per-item ``arrays`` of its score."""
    return resample_all([("x", key, arrays, aggregate)], w, idx)["x"]


def _kind(key: str, arrays: dict[str, np.ndarray]) -> str:
    if key in MEAN_KEYS and MEAN_KEYS[key] in arrays:
        return "mean"
    if key in BLEU_KEYS and "bleu_stats" in arrays:
        return "bleu"
    return "generic"


def resample_all(
    specs: list[tuple[object, str, dict[str, np.ndarray], Callable | None]],
    w: np.ndarray,
    idx: np.ndarray,
) -> dict[object, np.ndarray]:
    """Many metrics at once: ``[(name, key, arrays, aggregate)]`` -> name -> resampled scores.

    Every per-item column that a mean or a BLEU needs is stacked into one matrix, so all
    resamples of all metrics of all entries cost one matrix product.
    """
    columns: list[np.ndarray] = []
    where: dict[object, tuple[str, int]] = {}
    bleu_at: dict[int, int] = {}  # id of a bleu_stats array -> its first column
    out: dict[object, np.ndarray] = {}
    for name, key, arrays, aggregate in specs:
        kind = _kind(key, arrays)
        if kind == "mean":
            values = np.asarray(arrays[MEAN_KEYS[key]], dtype=float)
            known = ~np.isnan(values)
            where[name] = ("mean", len(columns))
            columns += [np.where(known, values, 0.0), known.astype(float)]
        elif kind == "bleu":
            stats = arrays["bleu_stats"]
            if id(stats) not in bleu_at:
                bleu_at[id(stats)] = len(columns)
                columns += list(np.asarray(stats, dtype=float).T)
            where[name] = ("bleu", bleu_at[id(stats)])
        else:
            if aggregate is None:
                raise KeyError(f"no per-item data to resample metric {key!r}")
            out[name] = generic_scores(aggregate, key, idx)
    if not columns:
        return out
    sums = w @ np.column_stack(columns)
    for name, key, _, _ in specs:
        if name not in where:
            continue
        kind, col = where[name]
        if kind == "mean":
            num, den = sums[:, col], sums[:, col + 1]
            with np.errstate(invalid="ignore", divide="ignore"):
                out[name] = np.where(den > 0, num / den * 100.0, np.nan)
        else:
            width = 2 + 2 * BLEU_MAX_ORDER
            out[name] = bleu_from_sums(sums[:, col : col + width], BLEU_KEYS[key])
    return out


def interval(values: np.ndarray, alpha: float = ALPHA) -> tuple[float, float]:
    """The percentile interval of resampled scores (NaN resamples ignored)."""
    v = values[~np.isnan(values)]
    if not len(v):
        return float("nan"), float("nan")
    lo, hi = np.percentile(v, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return float(lo), float(hi)


def rank_bands(
    points: np.ndarray, samples: np.ndarray, alpha: float = ALPHA
) -> tuple[np.ndarray, np.ndarray]:
    """Rank bands from paired bootstrap differences.

    ``points``: each entry's score; ``samples``: entries x resamples. Returns ``(rank, worst)``:
    ``rank`` = 1 + the entries significantly better (the interval of their paired difference
    lies above 0), ``worst`` = the number of entries not significantly worse (the band is
    ``rank..worst``). Entries with a NaN score get 0 (unranked).
    """
    e = len(points)
    ok = ~np.isnan(points)
    better = np.zeros((e, e), dtype=bool)  # better[i, j]: i significantly above j
    worse = np.zeros((e, e), dtype=bool)  # worse[i, j]: i significantly below j
    for i in range(e):
        if not ok[i]:
            continue
        diff = samples[i][None, :] - samples  # row j: i - j
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows of unscored entries
            lo, hi = np.nanpercentile(diff, [100 * alpha / 2, 100 * (1 - alpha / 2)], axis=1)
        better[i] = (lo > 0) & ok
        worse[i] = (hi < 0) & ok
        better[i, i] = worse[i, i] = False
    best = np.where(ok, 1 + better.sum(axis=0), 0)
    worst = np.where(ok, ok.sum() - worse.sum(axis=0), 0)
    return best, worst
