"""Outputs and options the command lines cannot use get one line saying what, where and what to
do, and a non-zero exit, never a traceback: an output that is a folder, an empty name or a file
in /proc; a negative seed; a board that is a device; ``submit --score`` for a submission whose
job another process holds."""

from __future__ import annotations

import pytest

import leaderboard as lb
from etclib.data.corpus import load_corpus
from etclib.data.task import items as split_items
from etclib.tracks.predictions import dumps_jsonl


@pytest.fixture
def tiny(tiny_corpus, monkeypatch, tmp_path):
    """The tiny corpus as ETC_DATA_DIR; a valid predictions file of its test split."""
    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    path = tmp_path / "preds.jsonl"
    its = split_items(load_corpus(tiny_corpus), "test")
    path.write_text(dumps_jsonl((it.key, it.reference) for it in its), encoding="utf-8")
    return path


def said(capsys) -> str:
    """What the command wrote on stderr, checked to be one line and no traceback."""
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize(
    ("out", "expected"),
    [
        ("{tmp}", "is a folder, not a file: give the file to write"),
        ("", '"" is a folder, not a file'),
        ("/proc/version", "Cannot write /proc/version ("),
    ],
)
def test_an_output_that_cannot_be_written_is_one_line(tiny, tmp_path, capsys, out, expected):
    from etclib.cli import main

    assert main(["template", "--out", out.format(tmp=tmp_path)]) == 1
    line = said(capsys)
    assert line.startswith("etclib template: error:") and expected in line, line


def test_a_per_item_output_that_is_a_folder_is_one_line(tiny, tmp_path, capsys):
    from etclib.cli import main

    assert main(["score", str(tiny), "--metrics", "bleu", "--per-item", str(tmp_path)]) == 1
    assert f"{tmp_path} is a folder, not a file" in said(capsys)


@pytest.mark.parametrize(
    "args",
    [
        ["score", "{file}", "--metrics", "bleu", "--ci", "--seed", "-1"],
        ["compare", "{file}", "{file}", "--metrics", "bleu", "--seed", "-1"],
    ],
)
def test_a_negative_seed_is_refused_by_its_option(tiny, capsys, args):
    from etclib.cli import main

    with pytest.raises(SystemExit) as exit_:
        main([a.format(file=tiny) for a in args])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "argument --seed: expected a whole number of at least 0, got '-1'" in err


def test_an_export_to_a_folder_is_one_line(tiny, tmp_path, capsys):
    from leaderboard.__main__ import main

    lb.open_db()
    lb.close_all()
    assert main(["export", "--format", "csv", "--out", str(tmp_path)]) == 1
    line = said(capsys)
    assert line.startswith("leaderboard export: error:") and "is a folder, not a file" in line


def test_a_board_that_is_a_device_is_named_so(tiny, monkeypatch, capsys):
    from leaderboard.__main__ import main

    monkeypatch.setenv("ETC_LEADERBOARD_DB", "/dev/null")
    assert main(["show"]) == 7
    assert "/dev/null is a device or other special file, not a database file" in said(capsys)


def test_submit_score_while_another_process_holds_the_job(tiny, capsys):
    from leaderboard.__main__ import main
    from leaderboard.queue import claim

    sid = lb.submit(tiny, {"name": "First"}).id
    assert claim(lb.open_db(), "worker-1 of another host", "pid 1 another-host") is not None
    capsys.readouterr()
    assert main(["submit", str(tiny), "--name", "Again", "--score"]) == 8
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f"{sid} is still scoring: another process holds its job" in err
