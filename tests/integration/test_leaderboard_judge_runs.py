"""The leaderboard's judge stage when the judge cannot finish, with
the real SDKs against the fake server: an incomplete run is shown as such and not ranked on the
judge, an admin's `rescore --stage judge` (or the automatic re-run) completes it asking only
the failed items, and a used-up quota leaves the job waiting instead of failing it."""

from __future__ import annotations

import collections
import math

import pytest

import leaderboard as lb
from leaderboard.__main__ import main as lb_main
from tests.conftest import REPO
from tests.fakes.llm_server import FakeLLMServer
from tests.fixtures.judge import (  # noqa: F401 - fixtures: _close_board, board
    FAIL,
    FAILING,
    TOKEN,
    _close_board,
    board,
    submit,
)

EXHAUSTED = {"openai": "insufficient_quota", "gemini": "daily_quota"}
CHECK_AT = {"openai": "platform.openai.com", "gemini": "aistudio.google.com/usage"}


def asked_once(server: FakeLLMServer) -> bool:
    """Every question the fake answered was answered once only (the rest came from the cache)."""
    answered = collections.Counter(r.user for r in server.requests if r.fault is None)
    return all(n == 1 for n in answered.values())


def submit_page(sid: str) -> str:
    """The Submit page's text with ``sid`` as this session's latest submission."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    st.cache_data.clear()
    st.cache_resource.clear()
    at = AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=60)
    at.session_state["submit_ids"] = [sid]
    at.run()
    at.switch_page("site_pages/submit.py").run()
    assert not at.exception, [e.value for e in at.exception]
    parts = [m.value for m in at.markdown] + [t.value for t in at.text]
    parts += [w.value for w in at.warning]
    return "\n".join(str(p) for p in parts)


def judge_jobs(sid: str) -> list[str]:
    return [
        status
        for (status,) in lb.open_db().query(
            "SELECT status FROM jobs WHERE submission_id = ? AND stage = 'judge' ORDER BY id",
            [sid],
        )
    ]


def test_an_incomplete_judge_is_not_ranked_and_rescore_completes_it(board, capsys):
    complete = submit("complete")
    assert lb.process_jobs() == 2
    board.inject(500, times=1000, match=lambda r: FAIL in r.user)
    sid = submit("partly judged", FAILING)
    lb.process_jobs()

    st = lb.status(sid)
    assert st["status"] == "incomplete"
    assert st["message"].startswith(
        "judge incomplete: 3 of 20 items failed (first 3 reasons: dialogue "
    )
    assert "HTTP 500" in st["message"]
    assert st["incomplete_metrics"]["judge"] == st["message"]
    assert judge_jobs(sid) == ["incomplete"]  # ETC_LB_JUDGE_RETRIES=0: no automatic re-run
    # the submitter sees it on the Submit page: the count and the first reasons
    shown = submit_page(sid)
    assert "⚠️ incomplete" in shown and st["message"] in shown
    assert "not ranked on the judge's metrics" in shown

    ranking = lb.ranking().set_index("id")
    assert ranking.attrs["sort_by"] == "f1"
    assert ranking.loc[complete, "f1"] == 100 and ranking.loc[complete, "rank"] == 1
    # no judge score for the incomplete entry: unranked on F1, its lexical scores shown
    assert math.isnan(ranking.loc[sid, "f1"]) and ranking.loc[sid, "rank"] == 0
    assert ranking.loc[sid, "rougeL"] > 0
    assert "judge" not in lb.detail(sid)["scores"]

    # the operator sees every failed item with its reason
    assert lb_main(["admin", "list", "--token", TOKEN]) == 0
    out = capsys.readouterr().out
    assert out.count("HTTP 500") >= len(FAILING) and "dialogue 8 turn" in out

    # the provider recovers; the admin completes the stage, asking only the failed items
    board.clear_faults()
    board.reset()
    assert lb_main(["admin", "rescore", sid, "--stage", "judge", "--score", "--token", TOKEN]) == 0
    assert "status: scored" in capsys.readouterr().out
    assert lb.status(sid)["status"] == "scored"
    assert board.count() == 3 * len(FAILING)  # its decomposition, one entailment each way
    assert all(FAIL in r.user for r in board.requests)
    ranking = lb.ranking().set_index("id")
    assert ranking.loc[sid, "f1"] == pytest.approx(100 * 17 / 20)
    assert judge_jobs(sid) == ["incomplete", "done"]


def test_the_worker_runs_an_incomplete_judge_again_by_itself(board, monkeypatch):
    monkeypatch.setenv("ETC_LB_JUDGE_RETRIES", "1")
    monkeypatch.setenv("ETC_LB_JUDGE_RETRY_DELAY", "0")
    # the provider fails the three items' questions for the first run only (2 attempts each)
    board.inject(500, times=2 * len(FAILING), match=lambda r: FAIL in r.user)
    sid = submit("retried", FAILING)
    lb.process_jobs()
    assert judge_jobs(sid) == ["incomplete", "done"]
    st = lb.status(sid)
    assert st["status"] == "scored"
    notes = [h["message"] for h in st["history"] if "re-run 1 of 1 queued" in h["message"]]
    assert notes and "judge incomplete: 3 of 20 items failed" in notes[0]
    assert asked_once(board)  # the re-run asked only what the first run had not answered


def test_a_used_up_quota_leaves_the_job_waiting_not_failed(board, capsys):
    board.inject(EXHAUSTED[board.provider], times=1000)
    sid = submit("waits")
    assert lb.process_jobs() == 2  # lexical, then the judge job, which stops at the quota
    assert board.count() <= 16  # the calls in flight (concurrency), no retry
    st = lb.status(sid)
    assert st["status"] == "partially scored"
    assert f"waiting for the {board.provider} judge's quota" in st["message"]
    assert judge_jobs(sid) == ["queued"]  # not failed: a running worker tries again later
    assert lb_main(["admin", "list", "--token", TOKEN]) == 0
    assert CHECK_AT[board.provider] in capsys.readouterr().out

    # the quota is back: the admin need not wait for the retry time
    board.clear_faults()
    board.reset()
    assert lb_main(["admin", "rescore", sid, "--stage", "judge", "--score", "--token", TOKEN]) == 0
    assert lb.status(sid)["status"] == "scored"
    assert judge_jobs(sid) == ["done"]
    assert asked_once(board)
