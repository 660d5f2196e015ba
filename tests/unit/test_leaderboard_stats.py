"""Bootstrap intervals and rank bands, checked against independent computations."""

from __future__ import annotations

import types

import numpy as np
import pytest

from etclib.metrics import MetricData, significance
from etclib.metrics.significance import Resamples
from tests.fixtures.bootstrap import SEED, B, independent_indices


def _resampled_mean(values: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """A mean metric's (ROUGE-1's) score on each resample ``idx``, through its statistics."""
    from etclib.metrics import rouge

    data = MetricData({k: values for k in rouge.METRIC.KEYS})
    return significance.resampled(rouge.METRIC, data, Resamples(idx))["rouge1"]


def test_resampled_means_equal_numpy_on_each_resample():
    rng = np.random.default_rng(1)
    values = rng.random(50)
    values[[3, 17, 40]] = np.nan  # excluded items, as the judge leaves them
    idx = independent_indices(50)
    got = _resampled_mean(values, idx)
    expected = np.nanmean(values[idx], axis=1) * 100
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_all_nan_resample_is_nan():
    values = np.array([np.nan, 0.5])
    got = _resampled_mean(values, np.array([[0, 0], [0, 1]]))
    assert np.isnan(got[0]) and got[1] == pytest.approx(50)


TEXTS = [
    ("相手 の 話 に 共感 し た", "相手 の 話 に 共感 し まし た"),
    ("私 は 嬉しかっ た", "私 は 悲しかっ た"),
    ("", "何 か 言い たかっ た"),
    ("驚い た", "驚い た"),
    ("旅行 の 話 を し たく て 嬉しかっ た", "旅行 に つい て 話し たかっ た"),
    ("a b c d e f g", "h i j"),
    ("怖かっ た", "怖かっ た けど 楽しかっ た 。"),
]


@pytest.mark.parametrize("order", [1, 2, 3, 4])
def test_resampled_bleu_equals_sacrebleu_on_each_resample(order):
    from sacrebleu.metrics import BLEU

    from etclib.metrics import bleu

    hyps = [h for h, _ in TEXTS]
    refs = [r for _, r in TEXTS]
    stats = np.asarray(
        BLEU(max_ngram_order=4, tokenize="none")._extract_corpus_statistics(hyps, [refs])
    )
    idx = np.random.default_rng(3).integers(0, len(TEXTS), size=(60, len(TEXTS)))
    idx[0] = [2, 2, 2, 2, 2, 2, 2]  # an empty hypothesis only: BLEU 0
    idx[1] = [5, 5, 5, 5, 5, 5, 5]  # nothing matches: BLEU 0
    idx[2] = [3, 3, 3, 3, 3, 3, 3]  # one-token sentences: no 2-grams at all
    data = MetricData({"bleu_stats": stats})
    got = significance.resampled(bleu.METRIC, data, Resamples(idx))[f"bleu{order}"]
    scorer = BLEU(max_ngram_order=order, tokenize="none")
    expected = [
        scorer.corpus_score([hyps[i] for i in row], [[refs[i] for i in row]]).score for row in idx
    ]
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)
    # and equal to etclib's own aggregate over the same resample
    mine = [bleu.METRIC.aggregate(data, row)[f"bleu{order}"] for row in idx[:10]]
    np.testing.assert_allclose(got[:10], mine, rtol=1e-9, atol=1e-9)


def test_generic_fallback_calls_aggregate_per_resample():
    from etclib.metrics import Fact

    idx = independent_indices(5)
    values = np.arange(5, dtype=float)
    odd = types.ModuleType("odd_metric")  # no resample(): aggregate is called per resample
    odd.FACTS = (Fact("odd_metric", "Odd", "the largest value"),)
    odd.aggregate = lambda data, i: {"odd_metric": data.arrays["v"][i].max()}
    got = significance.resampled(odd, MetricData({"v": values}), Resamples(idx))["odd_metric"]
    np.testing.assert_array_equal(got, values[idx].max(axis=1))


def test_rank_bands_against_plain_percentiles():
    rng = np.random.default_rng(0)
    base = rng.normal(0, 1, size=B)
    samples = np.vstack([50 + base, 49.9 + base + rng.normal(0, 2, B), 40 + base, 39.95 + base])
    points = np.array([50.0, 49.9, 40.0, 39.95])
    rank, worst = significance.rank_bands(points, samples)
    expected_rank, expected_worst = [], []
    for j in range(4):
        better = worse = 0
        for i in range(4):
            if i == j:
                continue
            lo, hi = np.percentile(samples[i] - samples[j], [2.5, 97.5])
            better += lo > 0
            worse += hi < 0
        expected_rank.append(1 + better)
        expected_worst.append(4 - worse)
    assert rank.tolist() == expected_rank
    assert worst.tolist() == expected_worst
    assert rank.tolist() == [1, 1, 3, 4]  # 40 vs 39.95 with paired identical noise: significant


@pytest.mark.parametrize("higher", [True, False])
def test_rank_bands_with_nan_resamples_against_pairwise_percentiles(higher):
    # Entries with some NaN resamples (a metric undefined on a resample), none at all (scored
    # on other items) or no score: each pair compared on the resamples where both are defined.
    rng = np.random.default_rng(7)
    n = 12
    points = rng.normal(50, 3, size=n)
    samples = points[:, None] + rng.normal(0, 1.5, size=(n, 200))
    samples[2, ::7] = np.nan  # partly undefined
    samples[5, :3] = np.nan
    samples[8] = np.nan  # a score but no resamples: never significantly different
    points[10], samples[10] = np.nan, np.nan  # unscored
    rank, worst = significance.rank_bands(points, samples, higher_is_better=higher)
    sign = 1 if higher else -1
    scored = [j for j in range(n) if not np.isnan(points[j])]
    for j in range(n):
        if j not in scored:
            assert rank[j] == worst[j] == 0
            continue
        better = worse = 0
        for i in scored:
            diff = sign * (samples[i] - samples[j])
            diff = diff[~np.isnan(diff)]
            if i == j or not len(diff):
                continue
            lo, hi = np.percentile(diff, [2.5, 97.5])
            better += lo > 0
            worse += hi < 0
        assert (rank[j], worst[j]) == (1 + better, len(scored) - worse), j
    assert rank[8] == 1 and worst[8] == len(scored)


def test_unscored_entries_are_unranked():
    samples = np.vstack([np.full(10, 5.0), np.full(10, np.nan)])
    rank, worst = significance.rank_bands(np.array([5.0, np.nan]), samples)
    assert rank.tolist() == [1, 0] and worst.tolist() == [1, 0]


def test_weights_count_every_draw():
    idx = independent_indices(13)
    expected = np.zeros((B, 13))
    for r, row in enumerate(idx):
        for i in row:
            expected[r, i] += 1
    np.testing.assert_array_equal(significance.weights(idx, 13), expected)
    assert significance.draw(13, B, SEED).idx.tolist() == idx.tolist()


def test_rank_bands_for_a_lower_is_better_metric():
    rng = np.random.default_rng(4)
    base = rng.normal(0, 1, size=B)
    samples = np.vstack([10 + base, 10.02 + base, 15 + base + rng.normal(0, 0.5, B)])
    points = samples.mean(axis=1)
    rank, worst = significance.rank_bands(points, samples, higher_is_better=False)
    expected_rank, expected_worst = [], []
    for j in range(3):
        better = sum(
            np.percentile(samples[j] - samples[i], 2.5) > 0 for i in range(3) if i != j
        )  # i is better than j when j - i is surely positive (lower wins)
        worse = sum(np.percentile(samples[j] - samples[i], 97.5) < 0 for i in range(3) if i != j)
        expected_rank.append(1 + better)
        expected_worst.append(3 - worse)
    assert rank.tolist() == expected_rank == [1, 2, 3]
    assert worst.tolist() == expected_worst


def test_a_metric_with_its_own_resample_is_called_once():
    from etclib.metrics import Fact

    idx = independent_indices(6)
    calls = []
    own = types.ModuleType("own_resample_metric")
    own.FACTS = (Fact("spread", "Spread", "max minus min"), Fact("n", "n", "items", ranking=False))

    def resample(data, res):
        calls.append(res)
        v = data.arrays["v"][res.idx]
        return {"spread": v.max(axis=1) - v.min(axis=1), "n": np.full(len(res), 6.0)}

    own.resample = resample
    values = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0])
    got = significance.resampled(own, MetricData({"v": values}), Resamples(idx))
    assert list(got) == ["spread"] and len(calls) == 1
    expected = [values[row].max() - values[row].min() for row in idx]
    np.testing.assert_array_equal(got["spread"], expected)
