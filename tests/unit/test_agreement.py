"""Agreement statistics against hand-worked tables and independent implementations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from etclib.metrics.agreement import (
    binary_fleiss_kappa,
    bootstrap_ci,
    cohen_kappa,
    confusion_matrix,
    fleiss_kappa,
    kappa_with_ci,
    krippendorff_alpha,
    mean_absolute_difference,
    pearson,
    spearman,
)


def pairs_from_table(table: list[list[int]], labels: list[str]) -> tuple[list[str], list[str]]:
    """Expand a confusion table into two raters' label lists."""
    a, b = [], []
    for i, row in enumerate(table):
        for j, count in enumerate(row):
            a += [labels[i]] * count
            b += [labels[j]] * count
    return a, b


COHEN_CASES = [
    # table (rows: rater A, columns: rater B), kappa worked by hand
    # p_o = 35/50, p_e = (25*30 + 25*20)/50^2 = 0.5 -> (0.7 - 0.5)/0.5
    ([[20, 5], [10, 15]], 0.4),
    # p_o = 24/30, p_e = (12*11 + 10*12 + 8*7)/900 = 308/900 -> (720 - 308)/(900 - 308)
    ([[10, 2, 0], [1, 8, 1], [0, 2, 6]], 412 / 592),
    # perfect agreement
    ([[3, 0], [0, 7]], 1.0),
    # complete disagreement with balanced margins: p_o = 0, p_e = 0.5 -> -1
    ([[0, 5], [5, 0]], -1.0),
    # one rater constant, the other not: p_o = p_e -> 0
    ([[4, 6], [0, 0]], 0.0),
]


@pytest.mark.parametrize(("table", "expected"), COHEN_CASES)
def test_cohen_kappa_hand_worked(table, expected):
    labels = ["喜び", "悲しみ", "該当なし"][: len(table)]
    a, b = pairs_from_table(table, labels)
    assert cohen_kappa(a, b) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(("table", "expected"), COHEN_CASES)
def test_cohen_kappa_matches_sklearn(table, expected):
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    labels = ["x", "y", "z"][: len(table)]
    a, b = pairs_from_table(table, labels)
    assert cohen_kappa(a, b) == pytest.approx(sklearn_metrics.cohen_kappa_score(a, b), abs=1e-12)


def test_cohen_kappa_degenerate():
    # both raters used one category throughout: chance agreement is 1, kappa undefined
    assert math.isnan(cohen_kappa(["neutral"] * 5, ["neutral"] * 5))
    with pytest.raises(ValueError, match="empty"):
        cohen_kappa([], [])
    with pytest.raises(ValueError, match="same items"):
        cohen_kappa(["a"], ["a", "b"])
    with pytest.raises(ValueError, match="not among"):
        cohen_kappa(["a", "b"], ["a", "c"], labels=["a", "b"])


def test_cohen_kappa_fixed_labels_do_not_change_value():
    a, b = ["a", "b", "a", "a"], ["a", "b", "b", "a"]
    assert cohen_kappa(a, b, labels=["a", "b", "unused"]) == pytest.approx(cohen_kappa(a, b))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=40),
)
def test_cohen_kappa_properties(pairs):
    a = [p[0] for p in pairs]
    b = [p[1] for p in pairs]
    k = cohen_kappa(a, b)
    assert (math.isnan(k) and len(set(a) | set(b)) == 1) or -1 - 1e-12 <= k <= 1 + 1e-12
    k_sym = cohen_kappa(b, a)
    assert (math.isnan(k) and math.isnan(k_sym)) or k == pytest.approx(k_sym)
    same = cohen_kappa(a, a)
    assert math.isnan(same) if len(set(a)) == 1 else same == pytest.approx(1.0)


# Fleiss (1971) style example reproduced on Wikipedia: 10 subjects, 14 raters, 5 categories.
WIKIPEDIA_FLEISS = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def test_fleiss_kappa_wikipedia_example():
    # P_bar = 0.378, P_e = 0.213 (Wikipedia, "Fleiss' kappa", worked example) -> 0.210
    assert fleiss_kappa(WIKIPEDIA_FLEISS) == pytest.approx(0.20993, abs=1e-5)


def test_fleiss_kappa_small_hand_worked():
    # 3 subjects, 2 raters, 2 categories: [2,0], [0,2], [1,1]
    # P_i = 1, 1, 0 -> P_bar = 2/3; p_j = (3/6, 3/6) -> P_e = 0.5; kappa = (2/3 - 1/2)/(1/2)
    assert fleiss_kappa([[2, 0], [0, 2], [1, 1]]) == pytest.approx(1 / 3)


def test_fleiss_kappa_two_raters_equals_scott_pi():
    # With two raters Fleiss' kappa is Scott's pi: p_e from the pooled margins.
    a = ["x", "x", "y", "y", "y", "x", "z", "z"]
    b = ["x", "y", "y", "y", "x", "x", "z", "y"]
    labels = ["x", "y", "z"]
    counts = [[(ai == c) + (bi == c) for c in labels] for ai, bi in zip(a, b, strict=True)]
    p_o = sum(ai == bi for ai, bi in zip(a, b, strict=True)) / len(a)
    pooled = [(a.count(c) + b.count(c)) / (2 * len(a)) for c in labels]
    p_e = sum(p * p for p in pooled)
    assert fleiss_kappa(counts) == pytest.approx((p_o - p_e) / (1 - p_e))


def test_fleiss_kappa_degenerate():
    assert math.isnan(fleiss_kappa([[3, 0], [3, 0]]))  # every rating in one category
    with pytest.raises(ValueError):
        fleiss_kappa([])
    with pytest.raises(ValueError):
        fleiss_kappa([[2, 0], [1, 0]])  # unequal raters per subject


def test_binary_fleiss_kappa_matches_count_table():
    chosen = [[1, 1, 0], [0, 0, 0], [1, 1, 1], [0, 1, 0]]
    counts = [[sum(r), 3 - sum(r)] for r in chosen]
    assert binary_fleiss_kappa(chosen) == pytest.approx(fleiss_kappa(counts))


# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers,
# 12 units, missing values. Published: nominal 0.743, interval 0.849.
K2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


@pytest.mark.parametrize(("level", "expected"), [("nominal", 0.743), ("interval", 0.849)])
def test_krippendorff_alpha_published_example(level, expected):
    assert krippendorff_alpha(K2011, level) == pytest.approx(expected, abs=5e-4)


def test_krippendorff_alpha_hand_worked():
    # Units (0,0), (1,1), (0,1): coincidences o00 = 2, o11 = 2, o01 = o10 = 1; n0 = n1 = 3, n = 6
    # nominal alpha = 1 - (n - 1) * 2 / (n0 * n1 * 2) = 1 - 10/18
    assert krippendorff_alpha([[0, 1, 0], [0, 1, 1]]) == pytest.approx(1 - 10 / 18)
    # interval on the same data: differences are 0/1, so squared differences equal mismatches
    assert krippendorff_alpha([[0, 1, 0], [0, 1, 1]], "interval") == pytest.approx(1 - 10 / 18)


def test_krippendorff_alpha_labels_and_nan_missing():
    data = [["喜び", "悲しみ", float("nan")], ["喜び", "悲しみ", "怒り"]]
    assert krippendorff_alpha(data) == pytest.approx(1.0)  # the third unit has one value


def test_krippendorff_alpha_degenerate():
    assert math.isnan(krippendorff_alpha([[1, 1, 1], [1, 1, 1]]))  # no variation at all
    assert math.isnan(krippendorff_alpha([[1, None], [None, 2]]))  # no unit has two values
    with pytest.raises(ValueError):
        krippendorff_alpha([])
    with pytest.raises(ValueError):
        krippendorff_alpha([[1, 2], [1]])
    with pytest.raises(ValueError, match="numeric"):
        krippendorff_alpha([["a", "b"], ["a", "a"]], "interval")
    with pytest.raises(ValueError, match="level"):
        krippendorff_alpha([[1, 2], [1, 2]], "ordinal")


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.lists(st.one_of(st.none(), st.integers(1, 5)), min_size=6, max_size=6),
        min_size=2,
        max_size=4,
    ),
    st.sampled_from(["nominal", "interval"]),
)
def test_krippendorff_alpha_matches_package(data, level):
    krippendorff = pytest.importorskip("krippendorff")
    ours = krippendorff_alpha(data, level)
    matrix = np.array([[np.nan if x is None else x for x in row] for row in data], dtype=float)
    try:
        theirs = krippendorff.alpha(reliability_data=matrix, level_of_measurement=level)
    except (ValueError, ZeroDivisionError):
        theirs = float("nan")
    if math.isnan(ours):
        assert math.isnan(theirs) or not np.isfinite(theirs)
    else:
        assert ours == pytest.approx(theirs, abs=1e-9)


X = [4.2, 3.1, 5.0, 2.2, 3.3, 4.4, 1.9, 2.8, 3.9, 4.9]


Y = [4.0, 3.5, 4.6, 2.0, 3.9, 3.8, 2.5, 2.6, 4.1, 4.3]


def test_pearson_matches_scipy():
    ours = pearson(X, Y)
    ref = stats.pearsonr(X, Y)
    ci = ref.confidence_interval(0.95)
    assert ours.defined and not ours.constant
    assert ours.r == pytest.approx(ref.statistic, abs=1e-12)
    assert ours.p == pytest.approx(ref.pvalue, rel=1e-9)
    assert (ours.low, ours.high) == pytest.approx((ci.low, ci.high), abs=1e-9)
    assert ours.mad == pytest.approx(np.mean(np.abs(np.subtract(X, Y))))
    assert ours.n == 10 and ours.note == ""


def test_spearman_matches_scipy_with_ties():
    x = [1, 2, 2, 3, 4, 4, 4, 5]
    y = [2, 1, 3, 3, 5, 4, 4, 5]
    ours = spearman(x, y, n_resamples=200)
    ref = stats.spearmanr(x, y)
    assert ours.r == pytest.approx(ref.statistic, abs=1e-12)
    assert ours.p == pytest.approx(ref.pvalue, rel=1e-9)
    assert ours.low <= ours.r <= ours.high


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 5), st.integers(1, 5)), min_size=4, max_size=30).filter(
        lambda p: len({a for a, _ in p}) > 1 and len({b for _, b in p}) > 1
    )
)
def test_pearson_property_matches_scipy(pairs):
    x = [float(a) for a, _ in pairs]
    y = [float(b) for _, b in pairs]
    ours = pearson(x, y)
    ref = stats.pearsonr(x, y)
    assert -1 <= ours.r <= 1
    assert ours.r == pytest.approx(ref.statistic, abs=1e-9)
    assert ours.p == pytest.approx(ref.pvalue, abs=1e-9)
    assert ours.low <= ours.r <= ours.high


@pytest.mark.parametrize("fn", [pearson, spearman])
def test_constant_rule(fn):
    llm = [5.0] * 6
    human = [4.0, 4.33, 5.0, 3.67, 4.0, 5.0]
    result = fn(llm, human)
    assert not result.defined and result.constant
    assert result.r is None and result.p is None and result.low is None
    assert result.x_constant == 5.0 and result.y_constant is None
    assert result.mad == pytest.approx(np.mean([1.0, 0.67, 0.0, 1.33, 1.0, 0.0]))
    assert result.y_mean == pytest.approx(np.mean(human))
    assert "constant (5)" in result.note
    both = fn([2.0, 2.0, 2.0], [3.0, 3.0, 3.0])
    assert both.x_constant == 2.0 and both.y_constant == 3.0 and both.mad == 1.0


def test_correlation_too_few_and_invalid():
    few = pearson([1.0, 2.0], [2.0, 1.0])
    assert not few.defined and not few.constant and "at least 3" in few.note
    three = pearson([1.0, 2.0, 4.0], [2.0, 1.0, 5.0])
    assert three.defined and three.low is None  # Fisher interval needs n > 3
    with pytest.raises(ValueError, match="empty"):
        pearson([], [])
    with pytest.raises(ValueError, match="same length"):
        pearson([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="finite"):
        pearson([1, 2, float("nan")], [1, 2, 3])


def test_mean_absolute_difference():
    assert mean_absolute_difference([5, 5, 5], [4, 4.5, 5]) == pytest.approx(0.5)
    assert mean_absolute_difference([1], [1]) == 0.0


def test_confusion_matrix_counts_and_order():
    a = ["Supported", "Neutral", "Supported", "Not Supported"]
    b = ["Supported", "Supported", "Not Supported", "Not Supported"]
    labels = ["Supported", "Neutral", "Not Supported"]
    m = confusion_matrix(a, b, labels, rows="judge", columns="human")
    assert list(m.index) == labels and list(m.columns) == labels
    assert m.index.name == "judge" and m.columns.name == "human"
    assert m.to_numpy().tolist() == [[1, 0, 1], [1, 0, 0], [0, 0, 1]]
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    assert (m.to_numpy() == sklearn_metrics.confusion_matrix(a, b, labels=labels)).all()


def test_bootstrap_is_seeded_and_close_to_scipy():
    rng = np.random.default_rng(1)
    sample = rng.normal(3.0, 1.0, size=200)
    first = bootstrap_ci(np.mean, sample, n_resamples=4000, seed=7)
    assert first == bootstrap_ci(np.mean, sample, n_resamples=4000, seed=7)
    assert first != bootstrap_ci(np.mean, sample, n_resamples=4000, seed=8)
    ref = stats.bootstrap(
        (sample,), np.mean, n_resamples=4000, method="percentile", random_state=3
    ).confidence_interval
    assert first[0] == pytest.approx(ref.low, abs=0.03)
    assert first[1] == pytest.approx(ref.high, abs=0.03)
    # analytic check: the mean's 95% interval is about +-1.96 standard errors
    se = sample.std(ddof=1) / np.sqrt(sample.size)
    assert first[1] - first[0] == pytest.approx(2 * 1.96 * se, rel=0.1)


def test_bootstrap_keeps_pairs_and_rejects_bad_input():
    x = np.arange(50, dtype=float)
    low, high = bootstrap_ci(lambda a, b: float(np.mean(a - b)), x, x.copy(), n_resamples=100)
    assert low == high == 0.0  # pairs resampled jointly: the difference is always 0
    with pytest.raises(ValueError, match="same items"):
        bootstrap_ci(np.mean, [1, 2], [1])
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_ci(np.mean, [1, 2], confidence=1.5)


def test_kappa_with_ci():
    a, b = pairs_from_table([[20, 5], [10, 15]], ["y", "n"])
    kappa, low, high = kappa_with_ci(a, b, n_resamples=500, seed=1)
    assert kappa == pytest.approx(0.4)
    assert low < 0.4 < high and -1 <= low and high <= 1
    assert (kappa, low, high) == kappa_with_ci(a, b, n_resamples=500, seed=1)
    nan = kappa_with_ci(["n"] * 4, ["n"] * 4)
    assert all(math.isnan(v) for v in nan)
