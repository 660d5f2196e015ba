"""Bootstrap intervals and rank bands, checked against independent computations."""

from __future__ import annotations

import numpy as np
import pytest

import leaderboard as lb
from etclib.data.corpus import load_corpus
from etclib.data.task import items as split_items
from etclib.metrics import MetricData
from etclib.metrics.judge import JudgeMetric
from etclib.tracks.predictions import dumps_jsonl
from tests.fixtures.bootstrap import SEED, B, independent_indices


@pytest.fixture
def tiny(tiny_corpus, monkeypatch, board_engine):
    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    monkeypatch.setenv("ETC_LB_SEED", str(SEED))
    monkeypatch.setenv("ETC_LB_BOOTSTRAP", str(B))
    return split_items(load_corpus(tiny_corpus), "test")


def jsonl(items, text) -> bytes:
    return dumps_jsonl((it.key, text(it)) for it in items).encode("utf-8")


def test_board_intervals_equal_an_independent_bootstrap(tiny):
    from sacrebleu.metrics import BLEU

    from etclib.data.tokenize import TokenCache
    from etclib.metrics import Context, rouge

    half = {it.key for it in tiny[::2]}
    pred = lambda it: it.reference if it.key in half else it.utterance  # noqa: E731
    sid = lb.submit(jsonl(tiny, pred), {"name": "half right"}).id
    lb.process_jobs()
    row = lb.ranking().set_index("id").loc[sid]

    preds = [pred(it) for it in tiny]
    refs = [it.reference for it in tiny]
    idx = independent_indices(len(tiny))
    values = rouge.METRIC.compute(preds, refs, Context()).arrays["rougeL"]
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


class FakeJudge(JudgeMetric):
    """The judge metric with deterministic per-item results (no LLM)."""

    def compute(self, predictions, references, ctx):
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

    def signature(self, ctx=None, data=None):
        return {"judge": "fake-judge|test"}


def test_judge_f1_is_the_ranking_metric_when_present(tiny, monkeypatch):
    from etclib import metrics

    monkeypatch.setitem(metrics.METRICS, "judge", FakeJudge())
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
