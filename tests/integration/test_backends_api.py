"""openai and gemini backends: the real SDKs against the loopback fake server (no network)."""

from __future__ import annotations

import threading

import pytest

from etclib.core.errors import BackendError
from etclib.data.task import build_messages, chat_item
from etclib.models import get_backend
from tests.fakes import FakeLLMServer

PROVIDERS = ["openai", "gemini"]


KEY = "test-key"


ITEMS = [
    chat_item([("A", "昨日、犬が死んでしまいました。")]),
    chat_item([("A", "試験に受かりました！"), ("B", "おめでとうございます！")]),
    chat_item([("A", "")]),
]


@pytest.fixture
def server(monkeypatch):
    with FakeLLMServer(lambda req: f" 私は{len(req.user)}文字を読んだ。\n", api_key=KEY) as fake:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", fake.openai_base_url)
        monkeypatch.setenv("GEMINI_API_KEY", KEY)
        monkeypatch.setenv("ETC_GEMINI_BASE_URL", fake.gemini_base_url)
        monkeypatch.setenv("ETC_OPENAI_MODEL", "fake-model")
        monkeypatch.setenv("ETC_GEMINI_MODEL", "fake-gemini")
        yield fake


def expected(item) -> str:
    return f"私は{len(build_messages(item)[1]['content'])}文字を読んだ。"


@pytest.mark.parametrize("name", PROVIDERS)
def test_predict_sends_the_prompt_at_temperature_zero(server, name):
    backend = get_backend(name, batch_size=1)
    assert backend.predict(ITEMS) == [expected(it) for it in ITEMS]
    assert server.count(f"{name}") == len(ITEMS)
    for req, item in zip(server.requests, ITEMS, strict=True):
        messages = build_messages(item)
        assert req.system == messages[0]["content"]
        assert req.user == messages[1]["content"]
        assert req.settings["temperature"] == 0
    assert server.requests[0].model == ("fake-model" if name == "openai" else "fake-gemini")


@pytest.mark.parametrize("name", PROVIDERS)
def test_stream_yields_chunks(server, name):
    backend = get_backend(name)
    chunks = list(backend.stream(ITEMS[1]))
    assert len(chunks) > 1
    assert "".join(chunks).strip() == expected(ITEMS[1])
    assert server.count(f"{name}-stream") == 1


@pytest.mark.parametrize("name", PROVIDERS)
def test_requests_run_concurrently_and_keep_order(server, name):
    server.latency = 0.1
    many = [chat_item([("A", "あ" * n)]) for n in range(1, 9)]
    done = []
    preds = get_backend(name, batch_size=4).predict(many, progress=done.append)
    assert preds == [expected(it) for it in many]
    assert sum(done) == len(many)
    assert 2 <= server.max_in_flight <= 4


@pytest.mark.parametrize("name", PROVIDERS)
@pytest.mark.parametrize("fault", [429, 500, 503, "close"])
def test_transient_faults_are_retried(server, name, fault):
    server.inject(fault, times=2)
    backend = get_backend(name, retry_wait=0.01, retries=2)
    assert backend.predict([ITEMS[0]]) == [expected(ITEMS[0])]
    assert server.count(f"{name}", answered=True) == 1


@pytest.mark.parametrize("name", PROVIDERS)
def test_retries_give_up_with_a_backend_error(server, name):
    server.inject(503, times=3)
    backend = get_backend(name, retry_wait=0.01, retries=1)
    with pytest.raises(BackendError, match=r"HTTP 503.*after 2 attempts"):
        backend.predict([ITEMS[0]])


@pytest.mark.parametrize(
    ("name", "hint"), [("openai", "Check OPENAI_API_KEY"), ("gemini", "Check GEMINI_API_KEY")]
)
def test_wrong_key_is_not_retried_and_says_what_to_check(server, monkeypatch, name, hint):
    monkeypatch.setenv("OPENAI_API_KEY", "wrong")
    monkeypatch.setenv("GEMINI_API_KEY", "wrong")
    backend = get_backend(name, retry_wait=0.01)
    with pytest.raises(BackendError, match=hint):
        backend.predict([ITEMS[0]])
    assert server.count() == 1


@pytest.mark.parametrize("name", PROVIDERS)
def test_timeout_is_retried(server, name):
    server.hang_seconds = 3
    server.inject("hang", times=1)
    backend = get_backend(name, retry_wait=0.01, timeout=1)
    assert backend.predict([ITEMS[1]]) == [expected(ITEMS[1])]


def test_openai_max_tokens_and_model_option(server):
    backend = get_backend("openai", model="my-lora", max_new_tokens=64)
    backend.predict([ITEMS[0]])
    req = server.requests[0]
    assert req.model == "my-lora" and req.settings["max_tokens"] == 64
    assert backend.signature() == {
        "backend": "openai",
        "prompt": backend.signature()["prompt"],
        "model": "my-lora",
        "temperature": 0,
        "thinking": "none",
        "max_tokens": 64,
    }


def test_gemini_max_output_tokens(server):
    get_backend("gemini", max_new_tokens=32).predict([ITEMS[0]])
    assert server.requests[0].settings["maxOutputTokens"] == 32


def test_vllm_style_server_without_key_check(monkeypatch):
    """A vLLM server serving an adapter under its own name, with OPENAI_API_KEY=EMPTY."""
    with FakeLLMServer(lambda req: "相手に共感した。", models=("etc-lora",)) as fake:
        monkeypatch.setenv("OPENAI_API_KEY", "EMPTY")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.openai_base_url)
        monkeypatch.setenv("ETC_OPENAI_MODEL", "etc-lora")
        backend = get_backend("openai")
        assert "".join(backend.stream(ITEMS[0])) == "相手に共感した。"
        assert fake.requests[0].model == "etc-lora"


@pytest.mark.parametrize("name", PROVIDERS)
def test_empty_answer_is_an_empty_prediction(server, name):
    server.inject("empty", times=1)
    assert get_backend(name).predict([ITEMS[0]]) == [""]


@pytest.mark.parametrize("name", PROVIDERS)
def test_stream_can_be_consumed_from_another_thread(server, name):
    backend = get_backend(name)
    out: list[str] = []
    t = threading.Thread(target=lambda: out.extend(backend.stream(ITEMS[0])))
    t.start()
    t.join(10)
    assert "".join(out).strip() == expected(ITEMS[0])


@pytest.mark.parametrize("name", PROVIDERS)
def test_stream_closed_early_then_backend_still_answers(server, name):
    backend = get_backend(name)
    chunks = backend.stream(ITEMS[1])
    first = next(chunks)
    chunks.close()
    assert expected(ITEMS[1]).startswith(first)
    assert backend.predict([ITEMS[0]]) == [expected(ITEMS[0])]
