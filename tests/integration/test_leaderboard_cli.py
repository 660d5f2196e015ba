"""`python -m leaderboard seed-baselines` and `show` on the real test split, on both engines
(``board_engine``, tests/conftest.py: a DuckDB file and a PostgreSQL database)."""

from __future__ import annotations

import json

import pytest

import leaderboard as lb
from leaderboard.__main__ import main

REFERENCE_ROWS = 5


@pytest.fixture(autouse=True)
def _close_databases(board_engine):
    yield
    lb.close_all()


@pytest.mark.usefixtures("warmed")
def test_seed_baselines_then_show_on_the_real_test_split(corpus, capsys):
    assert (
        main(["seed-baselines", "--backends", "copy,constant", "--erc-backends", "majority"]) == 0
    )
    out = capsys.readouterr().out
    assert f"reported rows: {REFERENCE_ROWS} added" in out
    assert "copy: added as" in out and "constant: added as" in out and "scored 3 job(s)" in out
    assert "majority: added as" in out

    assert main(["show"]) == 0
    shown = capsys.readouterr().out
    assert "Copy of the utterance (etclib)" in shown
    assert "Constant transcription (etclib)" in shown
    assert "Reported in the paper" in shown
    assert "GPT-4.1 (gpt-4.1-2025-04-14), zero-shot" in shown
    assert "16.89" in shown  # the paper's BLEU-1 for that row, as published
    assert "Categories (ERC) track" in shown and "Majority label set (etclib)" in shown
    assert "a person" in shown

    board = lb.ranking()
    assert set(board["kind"]) == {"baseline"} and len(board) == 2
    assert (board["status"] == "scored").all()
    copy = board.set_index("name").loc["Copy of the utterance (etclib)"]
    assert copy["pred_chars"] > 0 and copy["rougeL_lo"] < copy["rougeL"] < copy["rougeL_hi"]
    rep = lb.reported()
    assert len(rep) == REFERENCE_ROWS and set(rep["kind"]) == {"reported"}
    assert "rougeL_lo" not in rep.columns  # published rows have no intervals
    detail = lb.detail(copy["id"])
    assert detail["scores"]["bleu"]["signature"]["split"] == "test"
    assert len(lb.per_item(copy["id"])) == 1010

    # Idempotent: nothing new the second time.
    assert (
        main(["seed-baselines", "--backends", "copy,constant", "--erc-backends", "majority"]) == 0
    )
    out = capsys.readouterr().out
    assert "0 added, 0 updated, 5 unchanged" in out and "scored 0 job(s)" in out
    assert "already there" in out
    assert len(lb.ranking()) == 2 and len(lb.reported()) == REFERENCE_ROWS

    data = json.loads(lb.export_json("board"))
    assert len(data["board"]) == 2 and len(data["reported"]) == REFERENCE_ROWS


def test_missing_reference_file_is_a_clear_error(corpus, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ETC_REFERENCE_DIR", str(tmp_path / "nowhere"))
    assert main(["seed-baselines", "--backends", ""]) == 1
    err = capsys.readouterr().err
    assert "paper_baselines.json: not found" in err and "ETC_REFERENCE_DIR" in err


def test_a_broken_reference_file_is_a_clear_error(corpus, tmp_path, monkeypatch, capsys):
    (tmp_path / "paper_baselines.json").write_text('{"rows": [{"model": 1}]}', encoding="utf-8")
    monkeypatch.setenv("ETC_REFERENCE_DIR", str(tmp_path))
    assert main(["seed-baselines", "--backends", ""]) == 1
    assert "cannot read the published results" in capsys.readouterr().err
