"""The library entry point `etclib.score(predictions, split=..., metrics=...)`."""

import pytest

import etclib
from etclib.core.errors import PredictionsError
from etclib.data.corpus import load_corpus
from etclib.tracks.predictions import dumps_jsonl, template_rows


def test_score_from_a_path_a_dict_and_breakdowns(tiny_corpus, tmp_path, monkeypatch):
    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    corpus = load_corpus(tiny_corpus)
    rows = [(k, "私は嬉しかった") for k, _ in template_rows(corpus, "test")]
    f = tmp_path / "p.jsonl"
    f.write_text(dumps_jsonl(rows), encoding="utf-8")
    by_path = etclib.score(f, split="test", metrics="bleu,rouge")
    by_dict = etclib.score(dict(rows), split="test", metrics=["bleu", "rouge"])
    assert by_path.to_json() == by_dict.to_json()
    assert by_path.n_items == 20 and set(by_path.scores) == {
        "bleu1",
        "bleu2",
        "bleu3",
        "bleu4",
        "rouge1",
        "rouge2",
        "rougeL",
    }
    bd = by_path.breakdown()
    assert bd["role"]["speaker"]["n_items"] == bd["role"]["listener"]["n_items"] == 10
    assert sum(v["n_items"] for v in bd["turn"].values()) == 20
    # A subset aggregate equals scoring that subset on its own.
    idx = by_path.groups()["role"]["speaker"]
    sub = [by_path.predictions[i] for i in idx]
    refs = [by_path.items[i].reference for i in idx]
    from etclib.metrics import rouge

    assert by_path.aggregate(idx)["rouge1"] == pytest.approx(
        rouge.METRIC.score(sub, refs)["rouge1"]
    )


def test_a_dict_missing_items_is_refused(tiny_corpus, monkeypatch):
    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    with pytest.raises(PredictionsError, match="have no prediction"):
        etclib.score({(7, 1, "speaker"): "x"})
