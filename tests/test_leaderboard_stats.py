"""Bootstrap intervals and rank bands, checked against independent computations."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

import leaderboard as lb
from etclib import significance
from etclib.corpus import load_corpus
from etclib.metrics import MetricData, resampled_mean
from etclib.predictions import dumps_jsonl
from etclib.significance import Resamples
from etclib.task import items as split_items

SEED, B = 7, 300


@pytest.fixture(autouse=True)
def _close_databases():
    yield
    lb.close_all()


@pytest.fixture
def tiny(tiny_corpus, monkeypatch, board_engine):
    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    monkeypatch.setenv("ETC_LB_SEED", str(SEED))
    monkeypatch.setenv("ETC_LB_BOOTSTRAP", str(B))
    return split_items(load_corpus(tiny_corpus), "test")


def jsonl(items, text) -> bytes:
    return dumps_jsonl((it.key, text(it)) for it in items).encode("utf-8")


def independent_indices(n: int) -> np.ndarray:
    """The documented resampling, written out here: numpy's default_rng(seed).integers."""
    return np.random.default_rng(SEED).integers(0, n, size=(B, n))


# --- the vectorised aggregations equal the plain computation -----------------------------------


def test_resampled_means_equal_numpy_on_each_resample():
    rng = np.random.default_rng(1)
    values = rng.random(50)
    values[[3, 17, 40]] = np.nan  # excluded items, as the judge leaves them
    idx = independent_indices(50)
    got = resampled_mean(values, significance.weights(idx, 50))
    expected = np.nanmean(values[idx], axis=1) * 100
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_all_nan_resample_is_nan():
    values = np.array([np.nan, 0.5])
    w = np.array([[2.0, 0.0], [1.0, 1.0]])
    got = resampled_mean(values, w)
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
    got = significance.resampled(bleu, data, Resamples(idx))[f"bleu{order}"]
    scorer = BLEU(max_ngram_order=order, tokenize="none")
    expected = [
        scorer.corpus_score([hyps[i] for i in row], [[refs[i] for i in row]]).score for row in idx
    ]
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)
    # and equal to etclib's own aggregate over the same resample
    mine = [bleu.aggregate(data, row)[f"bleu{order}"] for row in idx[:10]]
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


# --- intervals and bands on the board, from the database ----------------------------------


def test_board_intervals_equal_an_independent_bootstrap(tiny):
    from sacrebleu.metrics import BLEU

    from etclib.metrics import Context, rouge
    from etclib.tokenize import TokenCache

    half = {it.key for it in tiny[::2]}
    pred = lambda it: it.reference if it.key in half else it.utterance  # noqa: E731
    sid = lb.submit(jsonl(tiny, pred), {"name": "half right"}).id
    lb.process_jobs()
    row = lb.ranking().set_index("id").loc[sid]

    preds = [pred(it) for it in tiny]
    refs = [it.reference for it in tiny]
    idx = independent_indices(len(tiny))
    values = rouge.compute(preds, refs, Context()).arrays["rougeL"]
    lo, hi = np.percentile(values[idx].mean(axis=1) * 100, [2.5, 97.5])
    assert (row["rougeL_lo"], row["rougeL_hi"]) == pytest.approx((lo, hi), rel=1e-9)
    assert row["rougeL"] == pytest.approx(values.mean() * 100)

    tok = TokenCache()
    hyp_t, ref_t = tok(preds), tok(refs)
    scorer = BLEU(max_ngram_order=4, tokenize="none")
    resampled = [
        scorer.corpus_score([hyp_t[i] for i in r], [[ref_t[i] for i in r]]).score for r in idx
    ]
    lo, hi = np.percentile(resampled, [2.5, 97.5])
    assert (row["bleu4_lo"], row["bleu4_hi"]) == pytest.approx((lo, hi), rel=1e-9)
    assert row["bleu4_lo"] < row["bleu4"] < row["bleu4_hi"]

    d = lb.detail(sid)
    assert d["scores"]["rouge"]["intervals"]["rougeL"] == pytest.approx(
        (row["rougeL_lo"], row["rougeL_hi"])
    )


def test_identical_entries_share_a_rank_and_a_clearly_worse_one_does_not(tiny):
    perfect = jsonl(tiny, lambda it: it.reference)
    csv_text = "dialogue_id,turn,role,prediction\n" + "".join(
        f"{it.dialogue_id},{it.turn},{it.role},{it.reference}\n" for it in tiny
    )
    a = lb.submit(perfect, {"name": "A", "contact": "a@x.org"}).id
    # The same predictions re-saved as CSV are the same submission (duplicates by content) ...
    same = lb.submit(csv_text.encode(), {"name": "B", "contact": "b@x.org"}, file_name="b.csv")
    assert same.id == a
    # ... so B differs from A in one item only: a paired difference that is 0 on every resample
    # without that item (over a third of them), so never significant.
    first = tiny[0].key
    b = lb.submit(
        jsonl(tiny, lambda it: it.reference + ("！" if it.key == first else "")),
        {"name": "B", "contact": "b@x.org"},
    ).id
    c = lb.submit(jsonl(tiny, lambda it: it.utterance), {"name": "C", "contact": "c@x.org"}).id
    lb.process_jobs()
    board = lb.ranking().set_index("id")
    assert board.loc[a, "rank"] == board.loc[b, "rank"] == 1
    assert board.loc[a, "rank_band"] == board.loc[b, "rank_band"] == "1–2"
    # C: below 100 on every resample while A and B score 100 on all: significantly worse.
    assert board.loc[c, "rank"] == 3 and board.loc[c, "rank_band"] == "3"
    assert list(lb.ranking()["id"])[-1] == c


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


# --- the judge's F1 ranks first when present ------------------------------------------------------


def _fake_judge_module() -> types.ModuleType:
    """The judge metric's interface with deterministic per-item results (no LLM)."""
    from etclib.metrics import judge

    mod = types.ModuleType("fake_judge_metric")
    mod.KEYS = judge.KEYS
    mod.FACTS = judge.FACTS
    mod.STAGE = judge.STAGE
    mod.statistics = judge.statistics
    mod.from_statistics = judge.from_statistics

    def compute(predictions, references, ctx):
        n = len(predictions)
        f1 = np.array([1.0 if p == r else 0.0 for p, r in zip(predictions, references)])
        arrays = {
            "precision": f1.copy(),
            "recall": f1.copy(),
            "f1": f1,
            "units": np.ones(n),
            "ref_units": np.ones(n),
        }
        details = [
            {"units": [p], "unit_labels": ["Supported" if v else "Not Supported"], "error": None}
            for p, v in zip(predictions, f1)
        ]
        return MetricData(arrays, details=details, extra={"judge_errors": 0})

    mod.compute = compute
    mod.aggregate = judge.aggregate
    mod.item_scores = judge.item_scores
    mod.signature = lambda ctx=None, data=None: {"judge": "fake-judge|test"}
    return mod


def test_judge_f1_is_the_ranking_metric_when_present(tiny, monkeypatch):
    from etclib import metrics

    monkeypatch.setitem(sys.modules, "fake_judge_metric", _fake_judge_module())
    monkeypatch.setitem(metrics.METRICS, "judge", "fake_judge_metric")
    monkeypatch.setenv("ETC_JUDGE_PROVIDER", "openai")
    assert lb.configured_stages() == ["lexical"]  # the provider has no key yet
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    assert lb.configured_stages() == ["lexical", "judge"]

    half = {it.key for it in tiny[:15]}
    a = lb.submit(jsonl(tiny, lambda it: it.reference if it.key in half else "x"), {"name": "A"})
    b = lb.submit(jsonl(tiny, lambda it: it.reference), {"name": "B", "contact": "b@x.org"})
    lb.process_jobs()
    st = lb.status(a.id)
    assert st["status"] == "scored", st
    board = lb.ranking()
    assert board.attrs["sort_by"] == "f1"
    assert list(board["id"]) == [b.id, a.id]
    assert board.iloc[0]["f1"] == pytest.approx(100) and board.iloc[1]["f1"] == pytest.approx(75)
    assert board.iloc[1]["units_mean"] == pytest.approx(1.0)
    items = lb.per_item(a.id)
    assert items["f1"].tolist()[:15] == [100.0] * 15 and items["f1"].tolist()[15:] == [0.0] * 5
    assert items["unit_labels"].iloc[-1] == ["Not Supported"]
    assert ["x"] in items.iloc[-1].tolist()  # the unit texts, whatever etclib names them
    d = lb.detail(a.id)
    assert d["verbosity"]["units_mean"] == pytest.approx(1.0)
    assert d["verbosity"]["recall"] == pytest.approx(75)
    lo, hi = d["scores"]["judge"]["intervals"]["f1"]
    f1 = np.array([1.0] * 15 + [0.0] * 5)
    expected = np.percentile(f1[independent_indices(20)].mean(axis=1) * 100, [2.5, 97.5])
    assert (lo, hi) == pytest.approx(tuple(expected))


# --- etclib significance alone: weights, direction, and the CLI's --ci ----------------------


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


def test_cli_ci_prints_the_boards_intervals(tiny, tiny_corpus, tmp_path, capsys):
    import json

    from etclib.cli import main

    half = {it.key for it in tiny[1::2]}
    data = jsonl(tiny, lambda it: it.reference if it.key in half else it.utterance)
    path = tmp_path / "p.jsonl"
    path.write_bytes(data)
    sid = lb.submit(data, {"name": "odd right"}).id
    lb.process_jobs()
    row = lb.ranking().set_index("id").loc[sid]
    args = ["score", str(path), "--ci", "--seed", str(SEED), "--resamples", str(B)]
    assert main([*args, "--json", "--data", str(tiny_corpus)]) == 0
    got = json.loads(capsys.readouterr().out)
    for key in ("bleu1", "bleu4", "rouge1", "rouge2", "rougeL"):
        assert got["intervals"][key] == pytest.approx([row[key + "_lo"], row[key + "_hi"]])
    assert got["bootstrap"] == {"resamples": B, "seed": SEED, "level": 0.95}
    assert main([*args, "--data", str(tiny_corpus)]) == 0
    text = capsys.readouterr().out
    lo, hi = row["rougeL_lo"], row["rougeL_hi"]
    assert f"[{lo:.2f}, {hi:.2f}]" in next(ln for ln in text.splitlines() if "rougeL" in ln)


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
