"""`python -m leaderboard admin rescore --all --stage judge --batch`: a board
whose judge must answer every question anew re-scores every entry through the provider's batch
interface (the real SDKs against the fake server's batch endpoints), with the online run's
scores and no online call."""

from __future__ import annotations

import json

import pytest

import leaderboard as lb
from leaderboard.__main__ import main as lb_main
from tests.fixtures.judge import (  # noqa: F401 - fixtures: _close_board, board
    FAILING,
    TOKEN,
    _close_board,
    board,
    submit,
)


def test_rescore_all_in_batch_rescores_every_entry_without_an_online_call(
    board,  # noqa: F811
    tmp_path,
    monkeypatch,
    capsys,
):
    right = submit("references")
    wrong = submit("three wrong", FAILING)
    assert lb.process_jobs() == 4  # lexical and judge, online
    ranking = lb.ranking().set_index("id")
    # the three wrong predictions share nothing with their references: F1 0 on those items
    assert ranking.loc[right, "f1"] == 100
    assert ranking.loc[wrong, "f1"] == pytest.approx(100 * 17 / 20)
    asked_online = {r.text for r in board.requests}

    # every answer gone (as after a change of judge prompt): a judge cache of its own
    monkeypatch.setenv("ETC_CACHE_DIR", str(tmp_path / "fresh"))
    monkeypatch.setenv("ETC_JUDGE_BATCH_POLL", "0.01")
    board.reset()
    argv = ["admin", "rescore", "--all", "--stage", "judge", "--batch", "--score"]
    assert lb_main([*argv, "--token", TOKEN]) == 0
    out = capsys.readouterr().out
    assert "queued 2 job(s) for 2 submission(s)" in out
    assert f"{right}: scored" in out and f"{wrong}: scored" in out

    # every question went through a batch, none online
    assert board.count() == 0
    assert {r.text for r in board.batches.items} == asked_online
    assert board.batches.count(f"{board.provider} batches.create") >= 2
    ranking = lb.ranking().set_index("id")
    assert ranking.loc[right, "f1"] == 100
    assert ranking.loc[wrong, "f1"] == pytest.approx(100 * 17 / 20)
    # the judge jobs ran with the batch option, recorded with their scores
    rows = (
        lb.db.resolve(None)
        .cursor()
        .execute("SELECT options FROM jobs WHERE stage = 'judge' ORDER BY id")
        .fetchall()
    )
    assert [json.loads(o).get("judge_batch") for (o,) in rows] == [None, None, True, True]


def test_batch_applies_to_the_judge_stage_only(board, capsys):  # noqa: F811
    submit("references")
    lb.process_jobs()
    argv = ["admin", "rescore", "--all", "--stage", "lexical", "--batch", "--token", TOKEN]
    assert lb_main(argv) != 0
    assert "--batch applies to the judge stage only; add --stage judge" in capsys.readouterr().err
