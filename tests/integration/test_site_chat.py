"""The chat page through ``streamlit.testing.v1.AppTest``: predictions for each author,
limits, model availability, streaming from an OpenAI-compatible server, and replay.

Split from tests/integration/test_site_pages.py (one file per concept, each under 700 lines); the shared
fixtures and helpers are tests/site_apptest.py.
"""

from __future__ import annotations

import pytest

from tests.conftest import needs_corpus
from tests.site_apptest import (  # noqa: F401 - fixtures, found by name
    _site,
    app,
    assert_clean,
    corpus_fixture,
    plain,
    shared_dirs,
    texts,
    write_secrets,
)

pytestmark = needs_corpus


def test_chat_with_retrieval_predicts_for_each_author(corpus):
    from etclib.data.task import chat_item
    from etclib.models import get_backend

    lines = [("A", "昨日、友達に裏切られて本当に悲しかったです。"), ("B", "それは辛かったですね。")]
    at = app("site_pages/chat.py")
    assert at.selectbox(key="chat_model").value == "retrieval"
    for who, text in lines:
        box = at.chat_input(key="chat_input")
        assert box.proto.placeholder == f"Write {who}'s utterance in Japanese…"
        box.set_value(text).run()
        assert_clean(at)
    backend = get_backend("retrieval")
    expected = [
        backend.predict([chat_item(lines[:1])])[0],
        backend.predict([chat_item(lines)])[0],
    ]
    shown = [m.value for m in at.markdown]
    from views.text import escape_markdown

    assert [escape_markdown(e) for e in expected] == shown[-2:]
    assert [t.value for t in at.text] == [f"{w}: {t}" for w, t in lines]


def test_chat_limits(corpus):
    from views import chat

    at = app("site_pages/chat.py")
    at.session_state["chat_limiter"] = chat.RateLimiter(limit=1)
    at.chat_input(key="chat_input").set_value("こんにちは").run()
    at.chat_input(key="chat_input").set_value("もう一度").run()
    assert_clean(at)
    assert "1 predictions in the last minute" in plain(texts(at))
    assert len(at.text) == 1  # the refused utterance was not added...
    box = at.chat_input(key="chat_input")
    assert box.proto.set_value and box.proto.value == "もう一度"  # ...but is back in the box
    assert "back in the box" in plain(texts(at))
    at.session_state["chat_lines"] = [
        {"who": "AB"[i % 2], "text": f"発話{i}", "prediction": "x", "model": "m"}
        for i in range(chat.MAX_LINES)
    ]
    at.run()
    assert at.chat_input(key="chat_input").proto.disabled
    assert f"{chat.MAX_LINES} utterances" in texts(at)


def test_chat_overlong_utterance_is_refused_with_a_message_and_kept():
    """The browser would silently refuse a paste over ``max_chars``, so the input sets none and
    the server says what is wrong; nothing is spent, the text goes back into the box."""
    from views import chat

    at = app("site_pages/chat.py")
    box = at.chat_input(key="chat_input")
    assert not box.proto.max_chars
    text = "あ" * (chat.MAX_UTTERANCE_CHARS + 100)
    box.set_value(text).run()
    assert_clean(at)
    assert f"{len(text)} characters; the limit is {chat.MAX_UTTERANCE_CHARS}" in plain(texts(at))
    assert not at.text and not at.session_state["chat_limiter"].events
    assert at.chat_input(key="chat_input").proto.value == text


def test_chat_speaker_comes_from_the_conversation_and_input_waits_for_the_prediction(corpus):
    at = app("site_pages/chat.py")
    assert at.chat_input(key="chat_input").proto.submit_mode == 1  # "disable" while a run goes on
    for i in range(4):
        at.chat_input(key="chat_input").set_value(f"発話{i}").run()
    assert [t.value for t in at.text] == [f"{'ABAB'[i]}: 発話{i}" for i in range(4)]
    assert [ln["who"] for ln in at.session_state["chat_lines"]] == list("ABAB")


@pytest.mark.parametrize(
    ("text", "lines", "expected"),
    [
        ("", 0, "empty"),
        ("   ", 0, "empty"),
        ("あ" * 301, 0, "301 characters"),
        ("あ" * 300, 0, None),
        ("ok", 10, "10 utterances"),
        ("ok", 9, None),
    ],
)
def test_utterance_problem(text, lines, expected):
    from views.chat import utterance_problem

    got = utterance_problem(text, lines)
    assert (got is None) if expected is None else (expected in got)


def test_rate_limiter_window():
    from views.chat import RateLimiter

    now = [0.0]
    lim = RateLimiter(limit=2, window=60, clock=lambda: now[0])
    assert lim.take() == 0 and lim.take() == 0
    assert lim.take() == pytest.approx(60)
    now[0] = 59.0
    assert lim.take() == pytest.approx(1)
    now[0] = 60.0
    assert lim.take() == 0


def test_chat_lists_unavailable_models_apart_in_visitor_words():
    from views import chat

    at = app("site_pages/chat.py")
    usable, unusable = chat.available(chat.choices())
    assert unusable, "without secrets some chat models are unavailable"
    labels = at.selectbox(key="chat_model").options
    assert labels == [c.label for c in usable]
    shown = plain(texts(at))
    for c in unusable:
        assert c.label not in labels and c.label in shown
    assert "not available on this site" in shown
    # Operator details (settings to set) stay in docs/site.md.
    for word in ("ETC_", "GEMINI_API_KEY", "OPENAI_API_KEY", "not configured"):
        assert word not in shown


@pytest.mark.parametrize("key", ["gemini", "openai", "finetuned"])
def test_an_unavailable_model_cannot_spend_an_utterance(key):
    from views import chat

    picked = chat.choice(key)
    assert not picked.usable
    lines: list = []
    limiter = chat.RateLimiter()
    message = chat.submit(lines, "こんにちは", picked, limiter)
    assert "not available on this site" in message
    assert lines == [] and limiter.events == []


@pytest.mark.parametrize(("before", "expected"), [(0, "A"), (1, "B"), (2, "A"), (9, "B")])
def test_next_speaker_alternates_from_the_conversation(before, expected):
    from views import chat

    lines = [{"who": "AB"[i % 2], "text": "x"} for i in range(before)]
    assert chat.next_speaker(lines) == expected
    retrieval = chat.choice("retrieval")
    assert chat.submit(lines, "はい", retrieval, chat.RateLimiter()) is None
    assert lines[-1] == {"who": expected, "text": "はい", "pending": True}


def test_chat_streams_from_an_openai_compatible_server(tmp_path):
    from tests.fakes import FakeLLMServer

    with FakeLLMServer(lambda req: "相手の話に共感して、**嬉しく**なりました。") as server:
        write_secrets(tmp_path, OPENAI_API_KEY="test", OPENAI_BASE_URL=server.openai_base_url)
        at = app("site_pages/chat.py")
        at.selectbox(key="chat_model").set_value("openai").run()
        at.select_slider(key="chat_shots").set_value(2).run()
        at.chat_input(key="chat_input").set_value("旅行に行ってきました！").run()
        assert_clean(at)
        assert server.count("openai-stream") == 1
        prompt = server.requests[-1].text
        assert "旅行に行ってきました！" in prompt
    # Model output is shown literally (Markdown escaped), never as formatting.
    assert r"相手の話に共感して、\*\*嬉しく\*\*なりました。" in [m.value for m in at.markdown]


def test_chat_backend_failure_is_a_message(tmp_path):
    from tests.fakes import FakeLLMServer

    with FakeLLMServer() as server:
        server.inject(500, times=5)
        write_secrets(tmp_path, OPENAI_API_KEY="test", OPENAI_BASE_URL=server.openai_base_url)
        at = app("site_pages/chat.py")
        at.selectbox(key="chat_model").set_value("openai").run()
        at.chat_input(key="chat_input").set_value("こんにちは").run()
    assert_clean(at)
    assert at.error and "500" in at.error[0].value


def test_chat_replay_shows_prediction_beside_own_transcription(corpus):
    at = app("site_pages/chat.py")
    at.radio(key="chat_mode").set_value("Replay a corpus dialogue").run()
    did = at.selectbox(key="chat_replay_id").value
    dialogue = corpus.by_id[did]
    assert dialogue.split in ("test", "valid")
    at.button(key="chat_replay_next").click().run()
    at.button(key="chat_replay_next").click().run()
    assert_clean(at)
    shown = texts(at)
    from views.text import escape_markdown

    for u in dialogue.utterances[:2]:
        assert f"{u.letter}: {u.text}" in shown
        assert escape_markdown(u.transcription) in shown
    assert "Utterance 2 of 10" in shown
