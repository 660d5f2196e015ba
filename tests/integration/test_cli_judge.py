"""`etclib score --metrics judge` end to end: CLI -> metric -> real SDK -> fake server."""

import json

from etclib.cli import main
from etclib.data.corpus import load_corpus
from etclib.data.task import items
from etclib.tracks.predictions import dumps_jsonl
from tests.fakes.judge_fixtures import FAKE_MODEL, judge_env  # noqa: F401


def test_score_with_judge_adds_the_judge_keys(judge_env, tiny_corpus, tmp_path, capsys):  # noqa: F811
    corpus = load_corpus(tiny_corpus)
    its = items(corpus, "test")
    # Half the items copy the reference (every unit supported), half say something else.
    preds = {it.key: it.reference if i % 2 == 0 else "犬が好きです。" for i, it in enumerate(its)}
    f = tmp_path / "p.jsonl"
    f.write_text(dumps_jsonl(preds.items()), encoding="utf-8")
    argv = [
        "score",
        str(f),
        "--metrics",
        "bleu,judge",
        "--judge-provider",
        judge_env.provider,
        "--judge-model",
        FAKE_MODEL,
        "--concurrency",
        "4",
        "--json",
        "--per-item",
        str(tmp_path / "items.jsonl"),
        "--data",
        str(tiny_corpus),
    ]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    for key in (
        "precision",
        "recall",
        "f1",
        "units_mean",
        "units_sd",
        "ref_units_mean",
        "ref_units_sd",
        "n_judged",
        "judge_errors",
        "judge_usage",
    ):
        assert key in out, key
    # Tiny-corpus references are one sentence each -> one unit; copies are fully supported,
    # "犬が好きです。" supports nothing: P = R = F1 = 50 over the 20 judged items.
    assert out["n_judged"] == 20 and out["judge_errors"] == 0
    assert out["precision"] == out["recall"] == out["f1"] == 50.0
    assert out["judge_usage"]["calls"] > 0
    assert (
        judge_env.provider in out["signature"]["judge"] and FAKE_MODEL in out["signature"]["judge"]
    )
    rows = [
        json.loads(x) for x in (tmp_path / "items.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert rows[0]["units"] and rows[0]["unit_labels"] == ["Supported"] and rows[0]["f1"] == 100.0
    assert rows[1]["f1"] == 0.0

    # The same file again: every answer comes from the cache.
    assert main(argv) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["judge_usage"]["calls"] == 0 and again["f1"] == out["f1"]
