"""etclib.compare: paired bootstrap intervals and approximate-randomization p-values against an
independent computation (numpy on the same resamples and trials; sacrebleu's own paired test for
BLEU), verdicts, identical systems, oracle against constant, and the ``etclib compare`` CLI."""

from __future__ import annotations

import json
import random

import pytest

from etclib.cli import main
from etclib.data.tokenize import TokenCache
from etclib.metrics import rouge
from etclib.tracks.comparison import A_BETTER, B_BETTER, NO_DIFFERENCE, compare
from tests.conftest import needs_corpus
from tests.fixtures.compare import (
    RESAMPLES,
    TRIALS,
    _write,
    numpy_mean_interval,
    numpy_mean_p,
    sacrebleu_ar_p,
    sacrebleu_interval,
)


@pytest.fixture
def real_files(corpus, tmp_path):
    from etclib.data.task import items

    its = items(corpus, "test")
    rng = random.Random(5)
    refs = [it.reference for it in its]
    constant = _write(
        tmp_path / "constant.jsonl", its, ["相手の話を聞いて嬉しい気持ちになった。"] * len(its)
    )
    oracle = _write(tmp_path / "oracle.jsonl", its, refs)
    # a noisy system: the reference for one item in five, another item's reference otherwise
    noisy = [r if rng.random() < 0.2 else refs[rng.randrange(len(refs))] for r in refs]
    noisy_file = _write(tmp_path / "noisy.jsonl", its, noisy)
    return corpus, its, constant, oracle, noisy_file, noisy


@needs_corpus
def test_real_files_match_independent_computation(real_files):
    corpus, its, constant, _, noisy_file, noisy = real_files
    c = compare(
        constant, noisy_file, "bleu,rouge", corpus=corpus, resamples=RESAMPLES, trials=TRIALS
    )
    assert c.n_items == 1010
    refs = [it.reference for it in its]
    const = ["相手の話を聞いて嬉しい気持ちになった。"] * len(its)
    for k in rouge.METRIC.KEYS:
        va = c.data_a["rouge"].arrays[k]
        vb = c.data_b["rouge"].arrays[k]
        assert c.metrics[k].interval == pytest.approx(numpy_mean_interval(va, vb), abs=1e-9)
        assert c.metrics[k].p_value == pytest.approx(numpy_mean_p(va, vb))
    tok = TokenCache()
    ta, tb, tr = tok(const), tok(noisy), tok(refs)
    sa, sb = c.data_a["bleu"].arrays["bleu_stats"], c.data_b["bleu"].arrays["bleu_stats"]
    for order in (1, 4):
        m = c.metrics[f"bleu{order}"]
        assert m.interval == pytest.approx(sacrebleu_interval(sa, sb, order), abs=1e-9)
        # 1,010 items: no trial ties the observed difference, so sacrebleu's p is ours
        assert m.p_value == pytest.approx(sacrebleu_ar_p(ta, tb, tr, order))


@needs_corpus
def test_real_identical_files(real_files):
    corpus, _, constant, _, noisy_file, _ = real_files
    c = compare(noisy_file, noisy_file, "bleu,rouge", corpus=corpus, resamples=100, trials=500)
    for m in c.metrics.values():
        assert (m.difference, m.interval, m.p_value, m.verdict) == (
            0.0,
            (0.0, 0.0),
            1.0,
            NO_DIFFERENCE,
        )


@needs_corpus
def test_real_oracle_against_constant_is_significant_everywhere(real_files):
    corpus, _, constant, oracle, _, _ = real_files
    c = compare(constant, oracle, "bleu,rouge", corpus=corpus, resamples=200, trials=1000)
    assert {m.verdict for m in c.metrics.values()} == {B_BETTER}
    assert all(
        m.p_value == pytest.approx(1 / 1001) and m.interval[0] > 0 for m in c.metrics.values()
    )
    flipped = compare(oracle, constant, "bleu,rouge", corpus=corpus, resamples=200, trials=1000)
    assert {m.verdict for m in flipped.metrics.values()} == {A_BETTER}


@needs_corpus
def test_real_erc_oracle_against_constant(corpus, tmp_path):
    from etclib.data.task import items

    its = items(corpus, "test")
    oracle = _write(tmp_path / "gold.jsonl", its, [list(it.label) for it in its], "labels")
    neutral = _write(tmp_path / "neutral.jsonl", its, [["neutral"]] * len(its), "labels")
    c = compare(neutral, oracle, corpus=corpus, resamples=100, trials=500)
    assert c.track == "erc"
    ranked = [m for m in c.metrics.values() if m.ranking]
    assert {m.verdict for m in ranked} == {B_BETTER}
    assert "f1_joy" in c.metrics and c.metrics["f1_joy"].b == pytest.approx(100.0)
    rows = c.per_item()
    assert sum(r["labels_differ"] for r in rows) == sum(set(it.label) != {"neutral"} for it in its)


@needs_corpus
def test_cli_json_shape_and_per_item(real_files, capsys, tmp_path):
    corpus, _, constant, _, noisy_file, _ = real_files
    out = tmp_path / "items.jsonl"
    args = [str(constant), str(noisy_file), "--metrics", "rouge", "--json", "--resamples", "100"]
    args += ["--trials", "500", "--per-item", str(out)]
    assert main(["compare", *args]) == 0
    got = json.loads(capsys.readouterr().out)
    assert set(got) == {"a", "b", "signature", "n_items", "metrics"}
    assert got["a"]["name"] == "constant.jsonl" and got["b"]["source"] == str(noisy_file)
    assert (
        "trials:500" in got["signature"]["compare"]
        and "bootstrap:100" in got["signature"]["compare"]
    )
    assert set(got["metrics"]) == set(rouge.METRIC.KEYS)
    for m in got["metrics"].values():
        assert set(m) == {"a", "b", "difference", "interval", "p_value", "verdict"}
        assert m["difference"] == pytest.approx(m["b"] - m["a"])
        assert m["interval"][0] <= m["difference"] <= m["interval"][1]
    direct = compare(constant, noisy_file, "rouge", corpus=corpus, resamples=100, trials=500)
    assert got["metrics"]["rougeL"]["p_value"] == direct.metrics["rougeL"].p_value
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 1010 and {"prediction_a", "prediction_b", "rougeL_diff"} <= set(rows[0])
    # the text form prints the same numbers
    assert (
        main(
            [
                "compare",
                str(constant),
                str(noisy_file),
                "--metrics",
                "rouge",
                "--resamples",
                "100",
                "--trials",
                "500",
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert f"{direct.metrics['rougeL'].difference:+.2f}" in text
