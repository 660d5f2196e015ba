"""Limits on what a visitor does, through the path a visitor or an operator uses: the daily
submission quota (exact under concurrent submissions, counting stored submissions only) and the
queue's bound; the chat's per-visitor and per-model budgets; wrong admin tokens, counted per
session in the board's database so that a reload does not reset them, and a short token refused
at start-up; the upload size said as one figure on the Submit page. Limits survive a new
session: each is checked from fresh AppTest sessions of the whole site."""

from __future__ import annotations

import logging

import pytest

import leaderboard as lb
from tests.conftest import REPO
from tests.fixtures.board import TOKEN, concurrently, count, variant
from tests.site_apptest import app

META = {"name": "My model", "team": "Lab", "contact": "me@example.org", "setting": "few-shot"}

ADMIN_TOKEN = "s3cret-admin-token-0123456789"


def test_admin_guesses_from_new_sessions_are_refused_after_the_limit(tiny, monkeypatch, caplog):
    from etclib.core import admintoken

    monkeypatch.setenv("ETC_ADMIN_TOKEN", ADMIN_TOKEN)
    errors = []
    for n in range(admintoken.MAX_FAILURES + 2):
        at = app("site_pages/operator.py")  # each guess from a reloaded page
        at.text_input(key="op_token").set_value(f"guess-{n:030d}").run()
        errors.append(at.error[-1].value if at.error else "")
    limit = admintoken.MAX_FAILURES
    assert all("Wrong admin token" in e for e in errors[:limit]), errors
    assert all("Too many wrong admin tokens" in e for e in errors[limit:]), errors
    # the count is in the board's database (where the upload quota is counted), key hashed
    rows = lb.open_db().query("SELECT bucket, key_hash FROM limit_events")
    assert len(rows) == limit and {r[0] for r in rows} == {"admin-failure"}
    assert all(len(r[1]) == 64 for r in rows)
    # even the right token waits, in yet another session
    at = app("site_pages/operator.py")
    at.text_input(key="op_token").set_value(ADMIN_TOKEN).run()
    assert "Too many wrong admin tokens" in at.error[-1].value


@pytest.fixture
def chat_server(tiny_corpus, monkeypatch):
    """A loopback OpenAI-compatible server as the chat's paid model (``openai``)."""
    import streamlit as st

    from tests.fakes import FakeLLMServer

    st.cache_resource.clear()  # the chat keeps its backend (and so the server's URL) per process
    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    with FakeLLMServer(lambda req: "嬉しかった。") as server:
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        yield server


def chat_once(text: str):
    at = app("site_pages/chat.py")
    at.selectbox(key="chat_model").set_value("openai").run()
    at.chat_input(key="chat_input").set_value(text).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_chat_messages_from_new_sessions_are_refused_after_the_limit(chat_server, monkeypatch):
    from views import chat

    monkeypatch.setattr(chat, "RATE_PER_MINUTE", 2)
    shown = [" ".join(w.value for w in chat_once(f"発話{n}").warning) for n in range(4)]
    assert chat_server.count("openai-stream") == 2  # the model was called twice, not four times
    assert not shown[0] and not shown[1]
    assert all("2 predictions in the last minute" in s for s in shown[2:]), shown


def test_a_paid_model_has_one_budget_for_every_visitor(chat_server, monkeypatch):
    import views.identity

    monkeypatch.setenv("ETC_CHAT_MODEL_PER_MINUTE", "3")
    visitors = iter(f"visitor-{n}" for n in range(100))
    monkeypatch.setattr(views.identity, "limit_key", lambda: next(visitors))
    shown = [" ".join(w.value for w in chat_once(f"発話{n}").warning) for n in range(5)]
    assert chat_server.count("openai-stream") == 3, (shown, chat_server.counts())
    assert not any(shown[:3])
    assert all("3 predictions per minute for all visitors together" in s for s in shown[3:])


def test_limits_count_per_key_in_the_board_on_both_engines(board_engine):
    from leaderboard import limits

    assert [limits.take("chat", "visitor-a", 2, 60) for _ in range(2)] == [0.0, 0.0]
    wait = limits.take("chat", "visitor-a", 2, 60)
    assert 1.0 <= wait <= 60.0  # refused, and nothing counted for it
    assert limits.take("chat", "visitor-b", 2, 60) == 0.0  # another visitor
    assert limits.take("admin-failure", "visitor-a", 2, 60) == 0.0  # another bucket
    assert len(limits.recent("chat", "visitor-a", 60)) == 2
    limits.clear("chat", "visitor-a")
    assert limits.recent("chat", "visitor-a", 60) == []
    rows = lb.open_db().query("SELECT key_hash FROM limit_events")
    assert rows and all("visitor" not in r[0] for r in rows)  # keys are stored hashed


def test_a_short_admin_token_is_refused_at_start_up(tiny, board_engine, monkeypatch, capsys):
    from streamlit.testing.v1 import AppTest

    from etclib.core.errors import ConfigError
    from etclib.studies import annotation
    from leaderboard.__main__ import main

    monkeypatch.setenv("ETC_ADMIN_TOKEN", "s3cret-but-short")
    assert main(["show", "--create"]) == 2
    err = capsys.readouterr().err
    assert "ETC_ADMIN_TOKEN is shorter than 24 characters" in err and "s3cret" not in err
    with pytest.raises(ConfigError, match="shorter than 24"):
        lb.hide("x", "s3cret-but-short")
    with pytest.raises(ConfigError, match="shorter than 24"):
        annotation.issue_code("s3cret-but-short")
    at = AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=60).run()
    assert any("shorter than 24 characters" in e.value for e in at.error)
    assert not at.title  # the site refused to start: no page ran


def test_wrong_tokens_are_rate_limited_per_session_and_logged(
    tiny, monkeypatch, caplog, board_engine
):
    from etclib.core import admintoken

    # the failures are counted per session for the whole process: sessions of this run's own
    visitor, other = f"visitor-1-{board_engine}", f"visitor-2-{board_engine}"

    monkeypatch.setenv("ETC_ADMIN_TOKEN", TOKEN)
    sid = lb.submit(variant(tiny, 0), META).id
    outcomes = []
    with caplog.at_level(logging.WARNING, logger="etclib.core.admintoken"):
        with admintoken.session(visitor):
            for n in range(30):
                try:
                    lb.hide(sid, f"guess-{n:030d}")
                except lb.AdminError as exc:
                    outcomes.append("wait" if "Too many wrong admin tokens" in str(exc) else "no")
            with pytest.raises(lb.AdminError, match="Too many wrong admin tokens"):
                lb.hide(sid, TOKEN)  # locked out: even the right token waits
    limit = admintoken.MAX_FAILURES
    assert outcomes == ["no"] * limit + ["wait"] * (30 - limit)
    failures = [r for r in caplog.records if "wrong admin token" in r.getMessage()]
    assert len(failures) == limit and all(TOKEN not in r.getMessage() for r in caplog.records)
    assert all("guess-" not in r.getMessage() for r in caplog.records)
    with admintoken.session(other):  # another session is not locked out
        lb.hide(sid, TOKEN)
    assert lb.status(sid)["visibility"] == "hidden"


def test_submit_page_states_the_upload_limit_as_one_figure():
    """The page's label and Streamlit's own box text ("NMB per file", from the uploader's
    max_upload_size_mb) say the same figure in the same unit."""
    from streamlit.testing.v1 import AppTest

    from etclib.tracks.predictions import MAX_FILE_BYTES, TOO_BIG

    at = AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=60).run()
    at.switch_page("site_pages/submit.py").run()
    assert not at.exception
    box = at.file_uploader(key="submit_file")
    mb = MAX_FILE_BYTES // 10**6
    assert box.proto.max_upload_size_mb == mb  # the box prints f"{mb}MB per file"
    assert box.proto.label.endswith(f"at most {mb} MB")
    assert f"limit of {mb} MB ({MAX_FILE_BYTES:,} bytes)" in TOO_BIG


def test_concurrent_submissions_respect_the_daily_limit_exactly(tiny, board_engine, monkeypatch):
    monkeypatch.setenv("ETC_LB_DAILY_LIMIT", "5")
    results, errors = concurrently(8, lambda k: lb.submit(variant(tiny, k), META))
    assert len(results) == 5 and len(errors) == 3
    assert all(isinstance(e, lb.LimitError) for e in errors)
    assert count("submissions") == 5 and count("predictions") == 5 * 20 and count("jobs") == 5


def test_daily_limit_counts_only_stored_submissions(tiny, board_engine, monkeypatch):
    monkeypatch.setenv("ETC_LB_DAILY_LIMIT", "2")
    with pytest.raises(lb.SubmissionError):
        lb.submit(variant(tiny[:-1], 0), META)  # refused: uses no quota
    lb.submit(variant(tiny, 0), META)
    lb.submit(variant(tiny, 1), META)
    with pytest.raises(lb.LimitError, match="Daily limit reached: 2 of 2"):
        lb.submit(variant(tiny, 2), META)
    assert count("submissions") == 2
    lb.submit(variant(tiny, 2), {**META, "contact": "other@example.org"})  # another submitter
    with pytest.raises(lb.LimitError):
        lb.submit(variant(tiny, 3), META, submitter=" ME@example.org ")  # same key, normalised
    assert count("submissions") == 3


def test_queue_limit(tiny, board_engine, monkeypatch):
    monkeypatch.setenv("ETC_LB_MAX_QUEUE", "2")
    lb.submit(variant(tiny, 0), {**META, "contact": "a@x.org"})
    lb.submit(variant(tiny, 1), {**META, "contact": "b@x.org"})
    with pytest.raises(lb.LimitError, match="queue is full"):
        lb.submit(variant(tiny, 2), {**META, "contact": "c@x.org"})
    assert count("submissions") == 2
    lb.process_jobs()
    lb.submit(variant(tiny, 2), {**META, "contact": "c@x.org"})
    assert count("submissions") == 3
