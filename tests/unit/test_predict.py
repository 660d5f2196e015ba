"""`etclib predict`: valid files, resuming after a crash, shots from train only, refusals."""

from __future__ import annotations

import json
import re

import pytest

from etclib.core.errors import PredictionsError
from etclib.data.corpus import load_corpus
from etclib.data.task import items
from etclib.models.copy import CopyBackend
from etclib.tracks.predictions import read_predictions
from tests.data.tiny_model import tiny_model  # noqa: F401 - fixture
from tests.fixtures.models import (
    _registered,  # noqa: F401 - for every test here
    predict,
)


def lines_of(path):
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("backend", ["retrieval", "constant", "copy"])
@pytest.mark.parametrize("split", ["test", "valid"])
def test_cpu_backends_write_valid_files(tiny_corpus, tmp_path, backend, split, capsys):
    out = tmp_path / "runs" / f"{backend}.jsonl"
    assert (
        predict(
            "--backend", backend, "--split", split, "--data", str(tiny_corpus), "--out", str(out)
        )
        == 0
    )
    corpus = load_corpus(tiny_corpus)
    preds = read_predictions(out, split, corpus)
    assert len(preds) == len(items(corpus, split))
    assert "valid" in capsys.readouterr().out
    run = json.loads((tmp_path / "runs" / f"{backend}.jsonl.run.json").read_text(encoding="utf-8"))
    assert run["backend"] == backend and run["split"] == split
    assert run["signature"]["backend"] == backend


def test_copy_predictions_are_the_utterances(tiny_corpus, tmp_path):
    out = tmp_path / "copy.jsonl"
    assert predict("--backend", "copy", "--data", str(tiny_corpus), "--out", str(out)) == 0
    corpus = load_corpus(tiny_corpus)
    expected = {it.key: it.utterance for it in items(corpus, "test")}
    assert read_predictions(out, "test", corpus).by_key == expected


class Crashing(CopyBackend):
    """Copies, but dies on the third batch, like a killed run."""

    calls = 0

    def predict(self, items, progress=None, shots=None):
        Crashing.calls += 1
        if Crashing.calls == 3:
            raise KeyboardInterrupt
        return super().predict(items, progress, shots)


def test_resume_after_a_crash_skips_written_items(tiny_corpus, tmp_path, monkeypatch):
    import etclib.models.copy as copy_module

    monkeypatch.setattr(copy_module, "BACKEND", Crashing)
    Crashing.calls = 0
    out = tmp_path / "p.jsonl"
    args = ("--backend", "copy", "--data", str(tiny_corpus), "--out", str(out), "--batch-size", "4")
    assert predict(*args) == 130  # interrupted
    assert len(lines_of(out)) == 8  # two whole batches were flushed
    seen = []

    class Counting(CopyBackend):
        def predict(self, items, progress=None, shots=None):
            seen.extend(it.key for it in items)
            return super().predict(items, progress, shots)

    monkeypatch.setattr(copy_module, "BACKEND", Counting)
    assert predict(*args, "--json") == 0
    corpus = load_corpus(tiny_corpus)
    assert len(read_predictions(out, "test", corpus)) == 20
    first = {(r["dialogue_id"], r["turn"], r["role"]) for r in lines_of(out)[:8]}
    assert not first & set(seen) and len(seen) == 12


@pytest.mark.parametrize("cut", [1, 30, 75])
def test_resume_drops_a_truncated_last_line(tiny_corpus, tmp_path, capsys, cut):
    out = tmp_path / "p.jsonl"
    args = ("--backend", "copy", "--data", str(tiny_corpus), "--out", str(out))
    assert predict(*args) == 0
    whole = out.read_bytes()
    lines = whole.split(b"\n")
    out.write_bytes(b"\n".join(lines[:5]) + b"\n" + lines[5][:cut])
    capsys.readouterr()
    assert predict(*args, "--json") == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["resumed"] == 5 and summary["written"] == 15
    assert any("truncated last line" in n for n in summary["notes"])
    assert sorted(out.read_bytes().split(b"\n")) == sorted(whole.split(b"\n"))


def test_resume_refuses_other_settings(tiny_corpus, tmp_path, capsys):
    out = tmp_path / "p.jsonl"
    assert (
        predict("--backend", "copy", "--data", str(tiny_corpus), "--out", str(out), "--limit", "3")
        == 0
    )
    assert predict("--backend", "constant", "--data", str(tiny_corpus), "--out", str(out)) == 2
    err = capsys.readouterr().err
    assert "was started with other settings" in err and "--overwrite" in err
    assert (
        predict(
            "--backend", "constant", "--data", str(tiny_corpus), "--out", str(out), "--overwrite"
        )
        == 0
    )
    assert len(read_predictions(out, "test", load_corpus(tiny_corpus))) == 20


def test_resume_refuses_items_of_another_split(tiny_corpus, tmp_path, capsys):
    out = tmp_path / "p.jsonl"
    assert (
        predict(
            "--backend", "copy", "--split", "valid", "--data", str(tiny_corpus), "--out", str(out)
        )
        == 0
    )
    (tmp_path / "p.jsonl.run.json").unlink()
    assert (
        predict(
            "--backend", "copy", "--split", "test", "--data", str(tiny_corpus), "--out", str(out)
        )
        == 1
    )
    assert "not in this split" in capsys.readouterr().err


def test_resume_refuses_a_damaged_middle_line(tiny_corpus, tmp_path, capsys):
    out = tmp_path / "p.jsonl"
    args = ("--backend", "copy", "--data", str(tiny_corpus), "--out", str(out))
    assert predict(*args, "--limit", "4") == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    lines[1] = "{broken"
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert predict(*args) == 1
    assert re.search(r"line 2: cannot resume: unreadable line", capsys.readouterr().err)


def test_read_partial_rejects_repeats(tiny_corpus, tmp_path):
    from etclib.cli.predict import read_partial

    corpus = load_corpus(tiny_corpus)
    key = items(corpus, "test")[0].key
    row = json.dumps({"dialogue_id": key[0], "turn": key[1], "role": key[2], "prediction": "x"})
    path = tmp_path / "p.jsonl"
    path.write_text(row + "\n" + row + "\n", encoding="utf-8")
    with pytest.raises(PredictionsError, match="appears twice"):
        read_partial(path, {key})


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--backend", "retrieval", "--shots", "2"), "does not prompt a model"),
        (("--backend", "copy", "--shots", "-1"), "--shots must be >= 0"),
        (("--backend", "copy", "--batch-size", "0"), "--batch-size must be >= 1"),
        (("--backend", "copy", "--limit", "0"), "--limit must be >= 1"),
        (
            (
                "--backend",
                "retrival",
            ),
            "Did you mean 'retrieval'",
        ),
        (("--backend", "copy", "--model", "m"), "has no option 'model'"),
    ],
)
def test_refusals(tiny_corpus, tmp_path, capsys, args, message):
    code = predict(*args, "--data", str(tiny_corpus), "--out", str(tmp_path / "x.jsonl"))
    assert code != 0
    assert message in capsys.readouterr().err
