"""No provider text in public: a model server that echoes the key it got.

The fake server answers every request with 401 and ``Incorrect API key provided: Bearer <key>``,
as some servers do. With the key set to :data:`SECRET`, the judge's failure on the leaderboard,
the chat's failure and the model picker must never show the key, the provider's words or the
server's address to the public: not the ``status`` output, the board and per-item exports (CSV
and JSON), the public status history, nor (in the browser test) any page's HTML or websocket
traffic. The admin view still gets the provider's text, redacted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import leaderboard as lb
from etclib.data.corpus import load_corpus
from etclib.data.task import items as split_items
from etclib.tracks.predictions import dumps_jsonl
from tests.conftest import REPO
from tests.fakes import FakeLLMServer
from tests.fixtures.secrets import ADMIN, PROVIDER_WORDS, SECRET, leaks


@pytest.fixture
def echoing(monkeypatch):
    """A fake server that wants another key than the configured one, and the settings for it."""
    with FakeLLMServer(api_key="the-right-key") as server:
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        monkeypatch.setenv("ETC_OPENAI_MODEL", "fake-model")
        monkeypatch.setenv("ETC_ADMIN_TOKEN", ADMIN)
        yield server


@pytest.fixture
def tiny(tiny_corpus, monkeypatch):
    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    return split_items(load_corpus(tiny_corpus), "test")


def _judge_failure(tiny, echoing, monkeypatch) -> str:
    """Submit a file whose judge stage meets the echoing server; its id."""
    monkeypatch.setenv("ETC_JUDGE_PROVIDER", "openai")
    monkeypatch.setenv("ETC_JUDGE_MODEL", "fake-model")
    monkeypatch.setenv("ETC_JUDGE_MAX_ATTEMPTS", "1")
    assert lb.configured_stages() == ["lexical", "judge"]
    data = dumps_jsonl((it.key, it.reference) for it in tiny).encode("utf-8")
    receipt = lb.submit(data, {"name": "Leaky", "team": "Lab", "contact": "me@example.org"})
    lb.process_jobs()
    # the server did refuse the key and echo it (else this test proves nothing)
    assert any(r.fault == 401 for r in echoing.requests)
    assert SECRET in json.dumps([r.headers for r in echoing.requests])
    return receipt.id


def test_judge_failure_is_public_only_in_our_words(tiny, echoing, monkeypatch, tmp_path):
    sid = _judge_failure(tiny, echoing, monkeypatch)
    st = lb.status(sid)
    assert st["status"] == "partially scored", st
    assert "judge failed" in st["message"] and "(ref " in st["message"], st["message"]
    public = {
        "status": json.dumps(st, default=str, ensure_ascii=False),
        "board.csv": lb.export_csv("board"),
        "board.json": lb.export_json("board"),
        "items.csv": lb.export_csv("items"),
        "items.json": lb.export_json("items"),
        "one.csv": lb.export_csv("items", submission_id=sid),
        "one.json": lb.export_json("items", submission_id=sid),
        "detail": json.dumps(lb.detail(sid), default=str, ensure_ascii=False),
    }
    assert "status_message" in public["board.csv"] or sid in public["board.csv"]
    for name, text in public.items():
        assert not leaks(text, echoing), (name, leaks(text, echoing))

    # the CLI, as a visitor of the server would run it (no admin token)
    env = {**os.environ, "PYTHONPATH": str(REPO), "ETC_ADMIN_TOKEN": ""}
    lb.close_all()  # one writer at a time: the CLI opens the database itself
    for args in (["status", sid], ["status", sid, "--json"], ["show"]):
        out = subprocess.run(
            [sys.executable, "-m", "leaderboard", *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert out.returncode == 0, out.stderr
        assert not leaks(out.stdout + out.stderr, echoing), (args, out.stdout, out.stderr)

    # the admin view keeps the provider's text and status, with the key redacted
    frame = lb.admin_submissions(ADMIN)
    detail = frame.set_index("id").loc[sid, "failure_detail"]
    assert PROVIDER_WORDS in detail and "401" in detail and "[REDACTED]" in detail, detail
    assert SECRET not in detail and "SECRET123" not in detail
    stored = lb.open_db().query("SELECT error, error_detail FROM jobs WHERE status = 'failed'")
    assert stored and all(SECRET not in (e or "") + (d or "") for e, d in stored)


def test_a_service_error_keeps_its_public_text(echoing):
    from etclib.core.errors import ServiceError
    from etclib.data.task import chat_item
    from etclib.models import get_backend
    from leaderboard.worker import failure_texts

    backend = get_backend("openai", retries=0)
    with pytest.raises(ServiceError) as caught:
        list(backend.stream(chat_item([("A", "こんにちは")])))
    public, detail = failure_texts(caught.value)
    assert public == str(caught.value) and not leaks(public, echoing)
    assert PROVIDER_WORDS in detail and SECRET not in detail


def test_the_model_picker_never_shows_a_server_address(echoing, monkeypatch):
    from views import chat

    monkeypatch.setenv("GEMINI_API_KEY", "AIza" + "x" * 30)
    monkeypatch.setenv("ETC_GEMINI_BASE_URL", echoing.url)
    monkeypatch.setenv("ETC_FINETUNED_BASE_URL", echoing.openai_base_url)
    monkeypatch.setenv("ETC_FINETUNED_API_KEY", SECRET)
    picker = chat.choices()
    assert {c.key for c in picker if c.usable} >= {"gemini"}
    # the server refuses the configured keys: both its choices are offline, their reasons clean
    assert {c.key for c in picker if c.offline} >= {"openai", "finetuned"}
    for c in picker:
        assert not leaks(f"{c.label} {c.reason}", echoing), c


def test_a_chat_backends_raw_failure_reaches_the_page_without_its_text(echoing):
    from etclib.core.errors import BackendError
    from etclib.data.task import chat_item
    from views import chat

    class Broken:
        name = "openai"

        def stream(self, item, shots):
            yield "部分"
            raise ConnectionError(f"{PROVIDER_WORDS}: Bearer {SECRET} from {echoing.url}")

    with pytest.raises(BackendError) as caught:
        list(chat.stream_prediction(Broken(), chat_item([("A", "こんにちは")])))
    assert not leaks(str(caught.value), echoing) and "(ref " in str(caught.value)
