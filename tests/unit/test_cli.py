import json

import pytest

from etclib.cli import main
from etclib.data.corpus import load_corpus
from etclib.tracks.predictions import dumps_jsonl, template_rows


def run(argv, capsys):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_help_lists_commands_and_each_has_an_example(capsys):
    code, out, _ = run([], capsys)
    assert code == 0 and "score" in out and "stats" in out

    for name in ("stats", "validate", "template", "score", "download", "db"):
        with pytest.raises(SystemExit):
            main([name, "--help"])
        assert "Example" in capsys.readouterr().out


def test_template_validate_score_roundtrip(tiny_corpus, tmp_path, capsys):
    data = ["--data", str(tiny_corpus)]
    tpl = tmp_path / "t.csv"
    assert run(["template", "--split", "test", "--out", str(tpl), *data], capsys)[0] == 0
    code, out, err = run(["validate", str(tpl), *data], capsys)
    assert code == 0 and "valid csv file, 20 items" in out and "20 predictions are empty" in err
    corpus = load_corpus(tiny_corpus)
    good = tmp_path / "p.jsonl"
    good.write_text(
        dumps_jsonl((k, "私は嬉しかった") for k, _ in template_rows(corpus)), encoding="utf-8"
    )
    code, out, _ = run(
        ["score", str(good), "--json", "--per-item", str(tmp_path / "items.jsonl"), *data], capsys
    )
    assert code == 0
    result = json.loads(out)
    assert list(result)[:8] == [
        "n_items",
        "bleu1",
        "bleu2",
        "bleu3",
        "bleu4",
        "rouge1",
        "rouge2",
        "rougeL",
    ]
    assert result["n_items"] == 20 and set(result) >= {"signature", "breakdown"}
    assert set(result["breakdown"]["role"]) == {"speaker", "listener"}
    assert result["signature"]["tokenizer"].startswith("ja-mecab")
    items = [
        json.loads(x) for x in (tmp_path / "items.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert len(items) == 20 and {"bleu4", "rouge1", "prediction", "reference"} <= set(items[0])
    code, out, _ = run(["score", str(good), *data], capsys)
    assert code == 0 and "signature:" in out and "rougeL" in out


def test_validate_refuses_with_line_and_exit_code(tiny_corpus, tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"dialogue_id": 7, "turn": 1}\n', encoding="utf-8")
    code, _, err = run(["validate", str(bad), "--data", str(tiny_corpus)], capsys)
    assert code == 1 and "line 1: missing field(s): role, prediction" in err
    code, out, _ = run(["validate", str(bad), "--json", "--data", str(tiny_corpus)], capsys)
    assert code == 1 and json.loads(out)["problems"][0]["line"] == 1


def test_unknown_metric_and_missing_corpus_are_clean_errors(tiny_corpus, tmp_path, capsys):
    f = tmp_path / "p.jsonl"
    f.write_text("{}", encoding="utf-8")
    code, _, err = run(["score", str(f), "--metrics", "blue", "--data", str(tiny_corpus)], capsys)
    assert code == 1 and "Did you mean 'bleu'" in err and "Traceback" not in err
    code, _, err = run(["stats", "--data", str(tmp_path / "none")], capsys)
    assert code == 1 and "etclib download" in err


def test_stats_json_and_db(tiny_corpus, tmp_path, capsys):
    code, out, _ = run(
        ["db", "--db", str(tmp_path / "x.duckdb"), "--data", str(tiny_corpus)], capsys
    )
    assert code == 0 and out.strip().endswith("x.duckdb")
    code, out, _ = run(
        ["stats", "--json", "--db", str(tmp_path / "x.duckdb"), "--data", str(tiny_corpus)], capsys
    )
    assert code == 0 and json.loads(out)["utterances"] == 80
    code, out, _ = run(
        ["stats", "--db", str(tmp_path / "x.duckdb"), "--data", str(tiny_corpus)], capsys
    )
    assert "Fleiss" in out
