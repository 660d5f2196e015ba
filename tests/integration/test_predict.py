"""`etclib predict`: valid files, resuming after a crash, shots from train only, refusals."""

from __future__ import annotations

import json
import re

import pytest

from etclib.data.corpus import load_corpus
from etclib.tracks.predictions import MAX_PREDICTION_CHARS, read_predictions
from tests.data.tiny_model import tiny_model  # noqa: F401 - fixture
from tests.fakes import FakeLLMServer
from tests.fixtures.models import (
    _registered,  # noqa: F401 - for every test here
    predict,
)


def test_shots_come_from_train_and_are_seeded(tiny_corpus, tmp_path, monkeypatch):
    with FakeLLMServer(lambda req: "私は相手に共感した。") as server:
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        out = tmp_path / "p.jsonl"
        common = (
            "--backend",
            "openai",
            "--model",
            "fake-model",
            "--shots",
            "2",
            "--data",
            str(tiny_corpus),
        )
        assert predict(*common, "--out", str(out), "--seed", "1") == 0
        first = [r.user for r in server.requests]
        server.reset()
        assert predict(*common, "--out", str(tmp_path / "q.jsonl"), "--seed", "1") == 0
        again = [r.user for r in server.requests]
    assert len(read_predictions(out, "test", load_corpus(tiny_corpus))) == 20
    assert sorted(first) == sorted(again)  # same seed, same shots
    for user in first:
        examples, dialogue = user.split("# 対話")
        assert examples.count("## 例") == 2
        ids = set(re.findall(r"の話(\d+)の", examples))
        assert ids and ids <= {"1", "2", "3", "4", "5"}  # train dialogues only
        assert set(re.findall(r"の話(\d+)の", dialogue)) <= {"7", "8"}


def test_long_predictions_are_cut_to_the_limit(tiny_corpus, tmp_path, monkeypatch, capsys):
    with FakeLLMServer(lambda req: "あ" * (MAX_PREDICTION_CHARS + 50)) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        out = tmp_path / "p.jsonl"
        assert predict("--backend", "openai", "--data", str(tiny_corpus), "--out", str(out)) == 0
    preds = read_predictions(out, "test", load_corpus(tiny_corpus))
    assert {len(p) for p in preds.by_key.values()} == {MAX_PREDICTION_CHARS}
    assert "cut to 2000 characters" in capsys.readouterr().err


def test_hf_backend_through_the_cli(tiny_corpus, tiny_model, tmp_path):  # noqa: F811
    out = tmp_path / "hf.jsonl"
    code = predict(
        "--backend",
        "hf",
        "--model",
        str(tiny_model),
        "--max-new-tokens",
        "3",
        "--batch-size",
        "8",
        "--data",
        str(tiny_corpus),
        "--out",
        str(out),
    )
    assert code == 0
    assert len(read_predictions(out, "test", load_corpus(tiny_corpus))) == 20
    run = json.loads((tmp_path / "hf.jsonl.run.json").read_text(encoding="utf-8"))
    assert run["signature"]["model"] == str(tiny_model)
    assert run["signature"]["max_new_tokens"] == 3


@pytest.mark.usefixtures("corpus", "warmed")
@pytest.mark.parametrize("backend", ["retrieval", "copy"])
def test_real_corpus_files_validate(tmp_path, backend):
    out = tmp_path / f"{backend}.jsonl"
    assert predict("--backend", backend, "--out", str(out)) == 0
    assert len(read_predictions(out, "test")) == 1010
