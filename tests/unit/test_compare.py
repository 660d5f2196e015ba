"""etclib.compare: paired bootstrap intervals and approximate-randomization p-values against an
independent computation (numpy on the same resamples and trials; sacrebleu's own paired test for
BLEU), verdicts, identical systems, oracle against constant, and the ``etclib compare`` CLI."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from etclib.cli import main
from etclib.data.tokenize import TokenCache
from etclib.metrics import MetricData, bleu, judge, paired, rouge
from etclib.tracks import comparison
from etclib.tracks.categories import metric as erc
from etclib.tracks.comparison import A_BETTER, B_BETTER, NO_DIFFERENCE, compare_data
from tests.fixtures.compare import (
    RESAMPLES,
    SEED,
    TRIALS,
    _write,
    numpy_mean_interval,
    numpy_mean_p,
    sacrebleu_ar_p,
    sacrebleu_interval,
)


def _compare_groups(modules, data_a, data_b, n, **kw):
    return comparison.compare_metrics(
        modules, data_a, data_b, n, resamples=RESAMPLES, seed=SEED, trials=TRIALS, **kw
    )


@pytest.mark.parametrize(
    "difference, p, higher, expected",
    [
        (2.0, 0.01, True, B_BETTER),
        (-2.0, 0.01, True, A_BETTER),
        (2.0, 0.01, False, A_BETTER),
        (2.0, 0.05, True, NO_DIFFERENCE),  # p must be below alpha
        (0.0, 0.0001, True, NO_DIFFERENCE),
        (float("nan"), 0.01, True, NO_DIFFERENCE),
        (2.0, float("nan"), True, NO_DIFFERENCE),
    ],
)
def test_verdict_table(difference, p, higher, expected):
    assert comparison.verdict(difference, p, 0.05, higher) == expected


@pytest.mark.parametrize(
    "observed, stats, expected",
    [
        (0.5, [0.1, 0.2, 0.6, 0.9], (2 + 1) / 5),
        (0.0, [0.0, 0.0, 0.0], 1.0),  # identical systems: every trial ties, p = 1
        (1.0, [0.0, 0.0, 0.0], 1 / 4),
        (0.2, [0.2, 0.2, 0.1], (2 + 1) / 4),  # ties count as at least as extreme
    ],
)
def test_p_value_table(observed, stats, expected):
    assert comparison.p_value(observed, np.array(stats)) == pytest.approx(expected)


def test_randomization_is_sacrebleus_draw():
    pos = comparison.randomization(37, 50, 7)
    assert np.array_equal(pos, np.random.default_rng(7).integers(2, size=(50, 37), dtype=bool))


@pytest.mark.parametrize("n", [5, 40, 200])
def test_mean_metric_interval_and_p_by_numpy(n):
    rng = np.random.default_rng(n)
    a = {k: rng.random(n) for k in rouge.METRIC.KEYS}
    b = {k: np.clip(v + rng.normal(0.03, 0.1, n), 0, 1) for k, v in a.items()}
    got = _compare_groups(
        {"rouge": rouge.METRIC}, {"rouge": MetricData(a)}, {"rouge": MetricData(b)}, n
    )
    for k in rouge.METRIC.KEYS:
        m = got[k]
        assert m.difference == pytest.approx((b[k].mean() - a[k].mean()) * 100)
        assert m.interval == pytest.approx(numpy_mean_interval(a[k], b[k]), abs=1e-9)
        assert m.p_value == pytest.approx(numpy_mean_p(a[k], b[k]))
        assert m.verdict == comparison.verdict(m.difference, m.p_value)


def test_judge_items_without_reference_units_are_left_out():
    # items 0 and 5 have no reference unit (NaN for both systems): excluded everywhere
    n = 30
    rng = np.random.default_rng(3)

    def data(shift):
        arr = {k: np.clip(rng.random(n) + shift, 0, 1) for k in ("precision", "recall", "f1")}
        for k in arr:
            arr[k][[0, 5]] = np.nan
        arr["units"] = np.full(n, 3.0)
        arr["ref_units"] = np.full(n, 2.0)
        return MetricData(arr)

    da, db = data(0.0), data(0.2)
    got = _compare_groups({"judge": judge.METRIC}, {"judge": da}, {"judge": db}, n)
    assert set(got) == {"precision", "recall", "f1"}
    for k in got:
        va, vb = da.arrays[k], db.arrays[k]
        assert got[k].difference == pytest.approx((np.nanmean(vb) - np.nanmean(va)) * 100)
        assert got[k].interval == pytest.approx(numpy_mean_interval(va, vb), abs=1e-9)
        assert got[k].p_value == pytest.approx(numpy_mean_p(va, vb))


HAND = [
    # (A, B, reference): Japanese, an empty prediction, an English one, repeated words
    ("私は嬉しかった", "私は嬉しかった", "私は嬉しかった"),
    ("", "相手の話に共感した", "相手の話に共感して嬉しかった"),
    ("ABC", "悲しかった", "とても悲しかった"),
    ("驚いた", "驚いた驚いた", "少し驚いた"),
    ("嬉しい", "相手が嫌いだった", "相手が嫌いだと思った"),
    ("怒っていた", "怖かった", "怖かった"),
    ("何も感じなかった", "何も感じなかった", "退屈だった"),
    ("楽しかった", "楽しい話ができて嬉しかった", "楽しい話ができて嬉しかった"),
]


@pytest.mark.parametrize("order", [1, 2, 4])
def test_bleu_on_hand_made_texts_matches_sacrebleu(order):
    tok = TokenCache()
    a = tok([h[0] for h in HAND])
    b = tok([h[1] for h in HAND])
    refs = tok([h[2] for h in HAND])
    ctx = bleu.Context()
    da = bleu.METRIC.compute([h[0] for h in HAND], [h[2] for h in HAND], ctx)
    db = bleu.METRIC.compute([h[1] for h in HAND], [h[2] for h in HAND], ctx)
    got = _compare_groups({"bleu": bleu.METRIC}, {"bleu": da}, {"bleu": db}, len(HAND))[
        f"bleu{order}"
    ]
    sa, sb = da.arrays["bleu_stats"], db.arrays["bleu_stats"]
    assert got.interval == pytest.approx(sacrebleu_interval(sa, sb, order), abs=1e-9)
    ours = got.p_value
    theirs = sacrebleu_ar_p(a, b, refs, order)
    # sacrebleu counts trials strictly above the observed |difference|; we count ties too.
    # With 8 items (256 assignments) ties happen: ours is sacrebleu's plus the tied trials.
    stats = paired._ar_statistics(
        bleu.METRIC, da, db, comparison.randomization(len(HAND), TRIALS, SEED), [f"bleu{order}"]
    )[f"bleu{order}"]
    ties = np.count_nonzero(np.isclose(stats, abs(got.difference), rtol=1e-9, atol=1e-9))
    assert ours == pytest.approx(theirs + ties / (TRIALS + 1))


def test_identical_hand_made_systems():
    preds = [h[0] for h in HAND]
    refs = [h[2] for h in HAND]
    ctx = bleu.Context()
    mods = {"bleu": bleu.METRIC, "rouge": rouge.METRIC}
    data = {name: m.compute(preds, refs, ctx) for name, m in mods.items()}
    got = _compare_groups(mods, data, data, len(HAND))
    for m in got.values():
        assert m.difference == 0
        assert m.interval == (0.0, 0.0)
        assert m.p_value == 1.0
        assert m.verdict == NO_DIFFERENCE


def _erc_f1(pred, gold):
    tp = (pred & gold).sum(axis=0)
    fp = (pred & ~gold).sum(axis=0)
    fn = (~pred & gold).sum(axis=0)
    den = 2 * tp + fp + fn
    return np.where(den > 0, 2 * tp / np.where(den > 0, den, 1), 0.0) * 100


def test_erc_macro_and_per_category_f1_by_numpy():
    n = 60
    rng = np.random.default_rng(11)
    gold = rng.random((n, erc.N)) < 0.3
    pred_a = np.where(rng.random((n, erc.N)) < 0.6, gold, ~gold)
    pred_b = np.where(rng.random((n, erc.N)) < 0.85, gold, ~gold)
    da = MetricData({"pred": pred_a.astype(np.uint8), "gold": gold.astype(np.uint8)})
    db = MetricData({"pred": pred_b.astype(np.uint8), "gold": gold.astype(np.uint8)})
    trials = 300
    got = comparison.compare_metrics(
        {"erc": erc.METRIC},
        {"erc": da},
        {"erc": db},
        n,
        resamples=RESAMPLES,
        seed=SEED,
        trials=trials,
    )
    f1_a, f1_b = _erc_f1(pred_a, gold), _erc_f1(pred_b, gold)
    assert got["macro_f1"].difference == pytest.approx(f1_b.mean() - f1_a.mean())
    for j, c in enumerate(erc.CATEGORIES):
        assert got[f"f1_{c}"].difference == pytest.approx(f1_b[j] - f1_a[j])
    # interval of the macro-F1 difference on the board's resamples
    idx = np.random.default_rng(SEED).integers(0, n, size=(RESAMPLES, n))
    diffs = [_erc_f1(pred_b[r], gold[r]).mean() - _erc_f1(pred_a[r], gold[r]).mean() for r in idx]
    assert got["macro_f1"].interval == pytest.approx(tuple(np.percentile(diffs, [2.5, 97.5])))
    # approximate randomization by swapping rows of the label matrices
    pos = np.random.default_rng(SEED).integers(2, size=(trials, n), dtype=bool)
    observed = abs(f1_b.mean() - f1_a.mean())
    stats = []
    for row in pos:
        pa = np.where(row[:, None], pred_a, pred_b)
        pb = np.where(row[:, None], pred_b, pred_a)
        stats.append(abs(_erc_f1(pa, gold).mean() - _erc_f1(pb, gold).mean()))
    expected = (np.count_nonzero(np.array(stats) >= observed - 1e-9) + 1) / (trials + 1)
    assert got["macro_f1"].p_value == pytest.approx(expected)


def test_per_item_rows_and_win_tie_loss():
    from etclib.data.task import Item

    items = [
        Item(i, 1 + i % 5, ("speaker", "listener")[i % 2], "test", (), h[2], ("joy",))
        for i, h in enumerate(HAND)
    ]
    ctx = bleu.Context()
    refs = [h[2] for h in HAND]
    da = {"rouge": rouge.METRIC.compute([h[0] for h in HAND], refs, ctx)}
    db = {"rouge": rouge.METRIC.compute([h[1] for h in HAND], refs, ctx)}
    c = compare_data(
        items,
        {"rouge": rouge.METRIC},
        da,
        db,
        predictions_a=[h[0] for h in HAND],
        predictions_b=[h[1] for h in HAND],
        signature={"etclib": "x"},
        resamples=50,
        trials=50,
    )
    rows = c.per_item()
    assert rows[2]["prediction_a"] == "ABC" and rows[2]["prediction_b"] == "悲しかった"
    for r, (pa, pb, ref) in zip(rows, HAND):
        expected_a = rouge.METRIC.score([pa], [ref])["rougeL"]
        expected_b = rouge.METRIC.score([pb], [ref])["rougeL"]
        assert r["rougeL_a"] == pytest.approx(expected_a, abs=1e-3)
        assert r["rougeL_diff"] == pytest.approx(expected_b - expected_a, abs=1e-3)
    assert c.primary_item_key() == "rougeL"
    counts = comparison.win_tie_loss(c)
    total = counts["all"]["all"]
    wins = sum(r["rougeL_diff"] > 0 for r in rows)
    ties = sum(r["rougeL_diff"] == 0 for r in rows)
    assert (total["B wins"], total["tie"], total["A wins"]) == (wins, ties, len(rows) - wins - ties)
    assert sum(v["B wins"] for v in counts["role"].values()) == wins
    assert counts["category"]["joy"] == total
    assert "bootstrap:50|seed:20260" in c.signature["compare"]


def test_cli_refuses_another_track(tmp_path, tiny_corpus, capsys):
    from etclib.data.corpus import load_corpus
    from etclib.data.task import items

    its = items(load_corpus(tiny_corpus), "test")
    a = _write(tmp_path / "a.jsonl", its, ["嬉しかった"] * len(its))
    b = _write(tmp_path / "b.jsonl", its, [["joy"]] * len(its), "labels")
    code = main(["compare", str(a), str(b), "--data", str(tiny_corpus)])
    assert code != 0
    assert "track" in capsys.readouterr().err


def test_nan_numbers_are_null_in_json():
    m = comparison.MetricComparison(
        "f1", "judge", math.nan, 1.0, math.nan, (math.nan, 1.0), math.nan, NO_DIFFERENCE
    )
    assert m.to_json()["a"] is None and m.to_json()["interval"] == [None, 1.0]


@pytest.mark.parametrize("module, key", [(rouge.METRIC, "rougeL"), (bleu.METRIC, "bleu4")])
def test_pairwise_equals_each_pairs_comparison(module, key):
    ctx = bleu.Context()
    refs = [h[2] for h in HAND]
    systems = [[h[0] for h in HAND], [h[1] for h in HAND], refs, ["嬉しかった"] * len(HAND)]
    datas = [module.compute(s, refs, ctx) for s in systems]
    got = comparison.pairwise(
        module, datas, key, len(HAND), resamples=RESAMPLES, seed=SEED, trials=TRIALS
    )
    assert set(got) == {(i, j) for i in range(4) for j in range(i + 1, 4)}
    for (i, j), m in got.items():
        alone = _compare_groups({"g": module}, {"g": datas[i]}, {"g": datas[j]}, len(HAND))[key]
        assert (m.a, m.b, m.difference, m.verdict) == (
            alone.a,
            alone.b,
            alone.difference,
            alone.verdict,
        )
        assert m.interval == pytest.approx(alone.interval)
        assert m.p_value == pytest.approx(alone.p_value)


def test_cli_compares_the_boards_metrics_by_default(tmp_path, tiny_corpus, capsys):
    from etclib import metrics, tracks
    from etclib.data.corpus import load_corpus
    from etclib.data.task import items

    its = items(load_corpus(tiny_corpus), "test")
    a = _write(tmp_path / "a.jsonl", its, ["嬉しかった"] * len(its))
    b = _write(tmp_path / "b.jsonl", its, [it.reference for it in its])
    args = ["compare", str(a), str(b), "--data", str(tiny_corpus), "--json"]
    assert main([*args, "--resamples", "20", "--trials", "20"]) == 0
    got = set(json.loads(capsys.readouterr().out)["metrics"])
    # every key of the groups the board's first stage scores, Category F1 among them
    board = {
        k for g in tracks.get("transcription").stages()["lexical"] for k in metrics.get(g).KEYS
    }
    assert "category_f1" in got and board <= got
