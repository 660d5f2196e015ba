"""Agreement statistics between raters (people and LLM judges), on plain sequences or arrays.

An undefined statistic is ``NaN``, never an exception; input that cannot be a rating table
(ragged, empty, mismatched lengths) raises ``ValueError``. Definitions and the constant rule:
docs/judge_vs_human.md, "Statistics".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike


def fleiss_kappa(counts) -> float:
    """Fleiss' kappa from a subjects x categories table of rater counts.

    Every row must sum to the same number of raters n >= 2. Returns NaN when expected agreement
    is 1 (every rating in one category), where kappa is undefined.
    """
    table = np.asarray(counts, dtype=float)
    if table.ndim != 2 or table.shape[0] == 0:
        raise ValueError("fleiss_kappa needs a non-empty subjects x categories table.")
    n = table.sum(axis=1)
    if not np.all(n == n[0]) or n[0] < 2:
        raise ValueError("fleiss_kappa needs the same number (>= 2) of raters for every subject.")
    raters = n[0]
    p_j = table.sum(axis=0) / table.sum()
    p_i = ((table * table).sum(axis=1) - raters) / (raters * (raters - 1))
    p_bar = p_i.mean()
    p_e = float((p_j * p_j).sum())
    if np.isclose(p_e, 1.0):
        return float("nan")
    return float((p_bar - p_e) / (1 - p_e))


def binary_fleiss_kappa(chosen: ArrayLike) -> float:
    """Fleiss' kappa for one yes/no category: ``chosen[i][r]``, did rater ``r`` choose it for
    subject ``i``."""
    votes = np.asarray(chosen, dtype=bool)
    if votes.ndim != 2 or votes.shape[0] == 0:
        raise ValueError("binary_fleiss_kappa needs a non-empty subjects x raters matrix.")
    yes = votes.sum(axis=1)
    return fleiss_kappa(np.column_stack([yes, votes.shape[1] - yes]))


def _codes(a: Sequence[Hashable], b: Sequence[Hashable], labels: Sequence[Hashable] | None = None):
    if len(a) != len(b):
        raise ValueError(f"Two raters must rate the same items: got {len(a)} and {len(b)} labels.")
    if len(a) == 0:
        raise ValueError("No items to compare: both label sequences are empty.")
    if labels is None:
        labels = sorted(set(a) | set(b), key=lambda x: (str(type(x)), x))
    index = {label: i for i, label in enumerate(labels)}
    unknown = [x for x in (*a, *b) if x not in index]
    if unknown:
        raise ValueError(f"Label {unknown[0]!r} is not among the given labels {list(labels)}.")
    return (
        np.fromiter((index[x] for x in a), dtype=np.int64, count=len(a)),
        np.fromiter((index[x] for x in b), dtype=np.int64, count=len(b)),
        list(labels),
    )


def _table(a, b, labels) -> tuple[np.ndarray, list]:
    """The k x k table of (a, b) label pairs, and the labels in its order."""
    ca, cb, labels = _codes(a, b, labels)
    k = len(labels)
    return np.bincount(ca * k + cb, minlength=k * k).reshape(k, k), labels


def _kappa_from_table(table: np.ndarray) -> float:
    total = table.sum()
    p_o = np.trace(table) / total
    p_e = float((table.sum(axis=1) * table.sum(axis=0)).sum() / (total * total))
    if np.isclose(p_e, 1.0):
        return float("nan")
    return float((p_o - p_e) / (1 - p_e))


def cohen_kappa(
    a: Sequence[Hashable], b: Sequence[Hashable], labels: Sequence[Hashable] | None = None
) -> float:
    """Cohen's kappa of two raters' nominal labels on the same items.

    NaN when chance agreement is 1 (both raters used one and the same category throughout).
    A rater who is constant while the other is not gets kappa 0 (agreement equals chance).
    """
    return _kappa_from_table(_table(a, b, labels)[0].astype(float))


def confusion_matrix(
    a: Sequence[Hashable],
    b: Sequence[Hashable],
    labels: Sequence[Hashable] | None = None,
    *,
    rows: str = "rater A",
    columns: str = "rater B",
) -> pd.DataFrame:
    """Counts of (a, b) label pairs: a row per label of ``a``, a column per label of ``b``, in
    the order of ``labels`` (which keeps labels nobody used as zero rows and columns)."""
    table, labels = _table(a, b, labels)
    return pd.DataFrame(
        table,
        index=pd.Index(labels, name=rows),
        columns=pd.Index(labels, name=columns),
    )


# --- Krippendorff's alpha -----------------------------------------------------------------------


def _is_missing(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def krippendorff_alpha(
    data: Sequence[Sequence[Any]], level: Literal["nominal", "interval"] = "nominal"
) -> float:
    """Krippendorff's alpha from a raters x units table; ``None``/NaN marks a missing value.

    Units with fewer than two values carry no pairing information and are dropped. Computed
    through the coincidence matrix (Krippendorff 2011, "Computing Krippendorff's Alpha-
    Reliability"): alpha = 1 - (n - 1) * sum(o_ck d_ck) / sum(n_c n_k d_ck), with d the squared
    difference for interval data and 0/1 mismatch for nominal data. NaN when no unit has two
    values or when every value is the same (no disagreement is possible).
    """
    if level not in ("nominal", "interval"):
        raise ValueError(f"Unknown level {level!r}: use 'nominal' or 'interval'.")
    rows = [list(r) for r in data]
    if not rows or not rows[0]:
        raise ValueError("krippendorff_alpha needs a non-empty raters x units table.")
    width = len(rows[0])
    if any(len(r) != width for r in rows):
        raise ValueError("krippendorff_alpha needs the same number of units for every rater.")
    values = sorted(
        {x for r in rows for x in r if not _is_missing(x)}, key=lambda x: (str(type(x)), x)
    )
    if level == "interval":
        try:
            numeric = [float(v) for v in values]
        except (TypeError, ValueError):
            raise ValueError("Interval alpha needs numeric values.") from None
    index = {v: i for i, v in enumerate(values)}
    k = len(values)
    coincidences = np.zeros((k, k))
    for u in range(width):
        present = [index[r[u]] for r in rows if not _is_missing(r[u])]
        m = len(present)
        if m < 2:
            continue
        counts = np.bincount(present, minlength=k).astype(float)
        pairs = np.outer(counts, counts) - np.diag(counts)
        coincidences += pairs / (m - 1)
    n_c = coincidences.sum(axis=1)
    n = n_c.sum()
    if n == 0:
        return float("nan")
    if level == "nominal":
        delta = 1.0 - np.eye(k)
    else:
        v = np.asarray(numeric)
        delta = (v[:, None] - v[None, :]) ** 2
    expected = (np.outer(n_c, n_c) * delta).sum()
    if expected == 0:
        return float("nan")
    observed = (coincidences * delta).sum()
    return float(1.0 - (n - 1) * observed / expected)


# --- correlation with the constant rule -----------------------------------------------------


@dataclass(frozen=True)
class Correlation:
    """A correlation between paired scores, or why there is none: when a series is constant,
    ``r`` .. ``high`` are None, ``x_constant`` / ``y_constant`` hold its value, and ``mad`` and the
    means are what a reader compares instead (the "constant rule").
    """

    method: str
    n: int
    r: float | None
    p: float | None
    low: float | None
    high: float | None
    confidence: float
    mad: float
    x_mean: float
    y_mean: float
    x_constant: float | None = None
    y_constant: float | None = None
    note: str = ""

    @property
    def defined(self) -> bool:
        return self.r is not None

    @property
    def constant(self) -> bool:
        return self.x_constant is not None or self.y_constant is not None


def _paired(x, y) -> tuple[np.ndarray, np.ndarray]:
    xs = np.asarray(x, dtype=float)
    ys = np.asarray(y, dtype=float)
    if xs.ndim != 1 or ys.ndim != 1 or xs.shape != ys.shape:
        raise ValueError(
            f"Paired scores must be two 1-D series of the same length: got {xs.shape} and "
            f"{ys.shape}."
        )
    if xs.size == 0:
        raise ValueError("No paired scores: both series are empty.")
    if not (np.isfinite(xs).all() and np.isfinite(ys).all()):
        raise ValueError("Paired scores must be finite numbers (no NaN or infinity).")
    return xs, ys


def mean_absolute_difference(x: ArrayLike, y: ArrayLike) -> float:
    """Mean of |x_i - y_i| over paired scores."""
    xs, ys = _paired(x, y)
    return float(np.abs(xs - ys).mean())


def _pearson_r(xs: np.ndarray, ys: np.ndarray) -> float:
    dx = xs - xs.mean()
    dy = ys - ys.mean()
    r = float((dx * dy).sum() / math.sqrt((dx * dx).sum() * (dy * dy).sum()))
    return max(-1.0, min(1.0, r))


def _t_test_p(r: float, n: int) -> float:
    """Two-sided p of H0: rho = 0 from the t distribution with n - 2 degrees of freedom."""
    from scipy.stats import t as t_dist

    if abs(r) >= 1.0:
        return 0.0
    t = r * math.sqrt((n - 2) / (1.0 - r * r))
    return float(2.0 * t_dist.sf(abs(t), n - 2))


def _result(
    method, xs, ys, confidence, r=None, p=None, low=None, high=None, **const
) -> Correlation:
    return Correlation(
        method=method,
        n=int(xs.size),
        r=r,
        p=p,
        low=low,
        high=high,
        confidence=confidence,
        mad=float(np.abs(xs - ys).mean()),
        x_mean=float(xs.mean()),
        y_mean=float(ys.mean()),
        **const,
    )


def _check_defined(method, xs, ys, confidence) -> Correlation | None:
    x_const = float(xs[0]) if np.ptp(xs) == 0 else None
    y_const = float(ys[0]) if np.ptp(ys) == 0 else None
    if x_const is not None or y_const is not None:
        sides = [f"x is constant ({x_const:g})"] if x_const is not None else []
        sides += [f"y is constant ({y_const:g})"] if y_const is not None else []
        note = (
            " and ".join(sides)
            + ": the correlation is undefined; compare the means and the mean absolute difference."
        )
        return _result(
            method, xs, ys, confidence, x_constant=x_const, y_constant=y_const, note=note
        )
    if xs.size < 3:
        note = f"only {xs.size} paired scores: a correlation needs at least 3."
        return _result(method, xs, ys, confidence, note=note)
    return None


def pearson(x: ArrayLike, y: ArrayLike, *, confidence: float = 0.95) -> Correlation:
    """Pearson's r with the two-sided t-test p-value and a Fisher-z confidence interval.

    The interval needs at least 4 pairs (otherwise ``low``/``high`` are None). A constant series
    or fewer than 3 pairs gives an undefined result (see :class:`Correlation`).
    """
    xs, ys = _paired(x, y)
    undefined = _check_defined("pearson", xs, ys, confidence)
    if undefined:
        return undefined
    n = int(xs.size)
    r = _pearson_r(xs, ys)
    low = high = None
    if n > 3:
        from scipy.stats import norm

        z = math.atanh(min(max(r, -1 + 1e-15), 1 - 1e-15))
        half = norm.ppf(0.5 + confidence / 2) / math.sqrt(n - 3)
        # tanh rounds to +-1 near perfect correlation; keep r inside its own interval
        low, high = min(math.tanh(z - half), r), max(math.tanh(z + half), r)
    return _result("pearson", xs, ys, confidence, r, _t_test_p(r, n), low, high)


def spearman(
    x: ArrayLike, y: ArrayLike, *, confidence: float = 0.95, n_resamples: int = 2000, seed: int = 0
) -> Correlation:
    """Spearman's rho (Pearson r of average ranks), t-approximation p, seeded bootstrap interval.

    The interval is the percentile bootstrap over resampled pairs (:func:`bootstrap_ci`);
    ``n_resamples=0`` skips it.
    """
    from scipy.stats import rankdata

    xs, ys = _paired(x, y)
    undefined = _check_defined("spearman", xs, ys, confidence)
    if undefined:
        return undefined
    n = int(xs.size)
    rho = _pearson_r(rankdata(xs), rankdata(ys))
    low = high = None
    if n_resamples > 0:

        def stat(a, b):
            if np.ptp(a) == 0 or np.ptp(b) == 0:
                return float("nan")
            return _pearson_r(rankdata(a), rankdata(b))

        low, high = bootstrap_ci(
            stat, xs, ys, n_resamples=n_resamples, confidence=confidence, seed=seed
        )
        if math.isnan(low):
            low = high = None
    return _result("spearman", xs, ys, confidence, rho, _t_test_p(rho, n), low, high)


# --- bootstrap --------------------------------------------------------------------------------


def bootstrap_ci(
    statistic: Callable[..., float],
    *samples: ArrayLike,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic(*samples)``, resampling items jointly (the
    same indices for every sample, so pairing is kept). Resamples where the statistic is NaN are
    dropped; if fewer than half remain, the interval is (NaN, NaN).
    """
    if not samples:
        raise ValueError("bootstrap_ci needs at least one sample.")
    _check_bootstrap(n_resamples, confidence)
    arrays = [np.asarray(s) if not isinstance(s, np.ndarray) else s for s in samples]
    n = len(arrays[0])
    if any(len(a) != n for a in arrays):
        raise ValueError("bootstrap_ci samples must all cover the same items (same length).")
    if n == 0:
        raise ValueError("bootstrap_ci needs at least one item.")
    rng = np.random.default_rng(seed)
    values = np.empty(n_resamples)
    for i in range(n_resamples):
        idx = rng.integers(0, n, size=n)
        values[i] = statistic(*(a[idx] for a in arrays))
    return _percentile(values, n_resamples, confidence)


def _resampled_indices(rng: np.random.Generator, n: int, n_resamples: int, chunk: int):
    """Index rows for the bootstrap, in chunks; the same stream as one draw per resample."""
    done = 0
    while done < n_resamples:
        size = min(chunk, n_resamples - done)
        yield rng.integers(0, n, size=(size, n))
        done += size


def _percentile(values: np.ndarray, n_resamples: int, confidence: float) -> tuple[float, float]:
    values = values[~np.isnan(values)]
    if values.size < n_resamples / 2:
        return float("nan"), float("nan")
    alpha = (1 - confidence) / 2
    low, high = np.quantile(values, [alpha, 1 - alpha])
    return float(low), float(high)


def _check_bootstrap(n_resamples: int, confidence: float) -> None:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}.")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}.")


def kappa_with_ci(
    a: Sequence[Hashable],
    b: Sequence[Hashable],
    labels: Sequence[Hashable] | None = None,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float, float]:
    """``(kappa, low, high)``: :func:`cohen_kappa` and the interval
    ``bootstrap_ci(cohen_kappa, a, b, ...)`` gives, computed for many resamples at once."""
    _check_bootstrap(n_resamples, confidence)
    ca, cb, labels = _codes(a, b, labels)
    k = len(labels)
    codes = ca * k + cb
    point = _kappa_from_table(np.bincount(codes, minlength=k * k).reshape(k, k).astype(float))
    if math.isnan(point):
        return point, float("nan"), float("nan")
    n = codes.size
    values = []
    for idx in _resampled_indices(np.random.default_rng(seed), n, n_resamples, 256):
        rows = idx.shape[0]
        flat = (codes[idx] + (np.arange(rows) * k * k)[:, None]).ravel()
        tables = np.bincount(flat, minlength=rows * k * k).reshape(rows, k, k) / n
        p_o = np.trace(tables, axis1=1, axis2=2)
        p_e = (tables.sum(axis=2) * tables.sum(axis=1)).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            kappa = np.where(np.isclose(p_e, 1.0), np.nan, (p_o - p_e) / (1 - p_e))
        values.append(kappa)
    low, high = _percentile(np.concatenate(values), n_resamples, confidence)
    return point, low, high


def binary_fleiss_with_ci(
    chosen: ArrayLike,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float, float]:
    """:func:`binary_fleiss_kappa` and the interval ``bootstrap_ci(binary_fleiss_kappa, chosen,
    ...)`` gives, computed for many resamples at once."""
    _check_bootstrap(n_resamples, confidence)
    votes = np.asarray(chosen, dtype=bool)
    point = binary_fleiss_kappa(votes)
    if math.isnan(point):
        return point, float("nan"), float("nan")
    n, m = votes.shape
    yes = votes.sum(axis=1).astype(float)
    values = []
    for idx in _resampled_indices(np.random.default_rng(seed), n, n_resamples, 256):
        y = yes[idx]
        p_i = (y * (y - 1) + (m - y) * (m - y - 1)) / (m * (m - 1))
        p = y.sum(axis=1) / (n * m)
        p_e = p * p + (1 - p) * (1 - p)
        with np.errstate(divide="ignore", invalid="ignore"):
            kappa = np.where(np.isclose(p_e, 1.0), np.nan, (p_i.mean(axis=1) - p_e) / (1 - p_e))
        values.append(kappa)
    low, high = _percentile(np.concatenate(values), n_resamples, confidence)
    return point, low, high
