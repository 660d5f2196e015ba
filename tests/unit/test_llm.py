"""etclib.llm and etclib.core.redact without a server: the capability table, the decoding settings
each model gets, error classification, retry delays, and the redactor."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from etclib import llm
from etclib.core.errors import ConfigError, EmptyAnswerError, ServiceError
from etclib.core.redact import MASK, redact
from etclib.judge import pricing
from etclib.llm import models
from etclib.llm.retry import RetryPolicy, classify, retry_after
from tests.fixtures.llm import _secret


@pytest.mark.parametrize(
    ("provider", "model", "temperature", "thinking", "token_param", "known"),
    [
        ("openai", "gpt-4.1-2025-04-14", "0", "none", "max_tokens", True),
        ("openai", "gpt-4.1-mini", "0", "none", "max_tokens", True),
        ("openai", "gpt-5", "default", "effort=low", "max_completion_tokens", True),
        ("openai", "gpt-5-mini-2025-08-07", "default", "effort=low", "max_completion_tokens", True),
        ("openai", "o3-mini", "default", "effort=low", "max_completion_tokens", True),
        ("gemini", "gemini-2.5-flash", "0", "budget=0", "max_output_tokens", True),
        ("gemini", "models/gemini-2.5-flash-lite", "0", "budget=0", "max_output_tokens", True),
        ("gemini", "gemini-2.5-pro", "0", "budget=128", "max_output_tokens", True),
        ("gemini", "gemini-3-pro-preview", "1", "level=low", "max_output_tokens", True),
        ("gemini", "gemini-2.0-flash", "0", "none", "max_output_tokens", True),
        # unknown models: the documented default, a classic chat model
        ("openai", "Qwen/Qwen2.5-32B-Instruct", "0", "none", "max_tokens", False),
        ("gemini", "gemini-next", "0", "none", "max_output_tokens", False),
    ],
)
def test_decoding_follows_the_table(provider, model, temperature, thinking, token_param, known):
    d = llm.decoding(provider, model)
    assert (d.temperature_label(), d.thinking_label()) == (temperature, thinking)
    assert d.info.token_param == token_param and d.info.known is known
    assert d.signature() == f"temperature:{temperature}|thinking:{thinking}"


@pytest.mark.parametrize(
    ("model", "value", "label"),
    [
        ("gemini-2.5-flash", 1024, "budget=1024"),
        ("gemini-2.5-flash", "-1", "budget=-1"),
        ("gemini-2.5-flash", "default", "default"),
        ("gemini-3-pro-preview", "high", "level=high"),
    ],
)
def test_thinking_overrides(model, value, label):
    assert llm.decoding("gemini", model, thinking=value).thinking_label() == label


@pytest.mark.parametrize(
    ("provider", "model", "value", "message"),
    [
        ("gemini", "gemini-2.5-pro", 0, "at least 128"),
        ("gemini", "gemini-2.5-flash", "lots", "budget in tokens"),
        ("gemini", "gemini-3-pro-preview", "max", "low, high"),
        ("openai", "gpt-4.1", "low", "no thinking setting"),
    ],
)
def test_thinking_values_a_model_cannot_take_are_refused(provider, model, value, message):
    with pytest.raises(ConfigError, match=message):
        llm.decoding(provider, model, thinking=value, where="judge_thinking")


def test_every_priced_model_has_known_capabilities():
    assert pricing.PRICES  # derived from the same rows
    for prefix in pricing.PRICES:
        row = [m for m in models.MODELS if m.prefix == prefix][0]
        assert llm.info(row.provider, prefix).known
    # gpt-5 is priced and gets no temperature: the two facts come from one row
    assert pricing.price("gpt-5-mini") == (0.25, 2.00)
    assert llm.decoding("openai", "gpt-5-mini").temperature is None
    assert pricing.price("my-vllm-model") is None


def test_requests_carry_only_what_the_model_accepts():
    from etclib.llm.providers import gemini, openai

    msgs = [{"role": "system", "content": "指示"}, {"role": "user", "content": "こんにちは"}]
    gpt5 = openai.request("gpt-5-mini", msgs, llm.decoding("openai", "gpt-5-mini"), max_tokens=9)
    assert "temperature" not in gpt5 and "max_tokens" not in gpt5
    assert gpt5["max_completion_tokens"] == 9 and gpt5["reasoning_effort"] == "low"
    gpt41 = openai.request("gpt-4.1", msgs, llm.decoding("openai", "gpt-4.1"), max_tokens=9)
    assert gpt41["temperature"] == 0 and gpt41["max_tokens"] == 9
    assert "reasoning_effort" not in gpt41
    gem = gemini.request("gemini-2.5-flash", msgs, llm.decoding("gemini", "gemini-2.5-flash"))
    assert gem["config"] == {
        "system_instruction": "指示",
        "temperature": 0.0,
        "thinking_config": {"thinking_budget": 0},
    }
    gem3 = gemini.request("gemini-3-pro", msgs, llm.decoding("gemini", "gemini-3-pro"))
    assert gem3["config"]["temperature"] == 1.0
    assert gem3["config"]["thinking_config"] == {"thinking_level": "low"}


class _Resp:
    def __init__(self, headers):
        self.headers = headers


class _GenaiLike(Exception):
    def __init__(self, code, details, headers=None):
        super().__init__(f"{code} {json.dumps(details)}")
        self.code = code
        self.details = details
        self.response = _Resp(headers or {})


RETRY_INFO_BODY = {
    "error": {
        "code": 429,
        "message": "You exceeded your current quota.",
        "status": "RESOURCE_EXHAUSTED",
        "details": [
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "57s"},
        ],
    }
}


@pytest.mark.parametrize(
    ("exc", "seconds"),
    [
        (_GenaiLike(429, RETRY_INFO_BODY), 57.0),
        (
            _GenaiLike(
                429,
                {"error": {"details": [{"@type": "x.google.rpc.RetryInfo", "retryDelay": "1.5s"}]}},
            ),
            1.5,
        ),
        (_GenaiLike(429, {}, {"retry-after": "3"}), 3.0),
        (_GenaiLike(429, {}, {"retry-after-ms": "250"}), 0.25),
        (_GenaiLike(429, {}, {"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}), None),
        (_GenaiLike(429, {"error": {"message": "no hint"}}), None),
    ],
)
def test_retry_after_reads_headers_and_retry_info(exc, seconds):
    assert retry_after(exc) == seconds
    assert classify(exc).retry_after == seconds


@pytest.mark.parametrize(
    ("exc", "kind", "transient"),
    [
        (_GenaiLike(429, RETRY_INFO_BODY), "rate_limit", True),
        (_GenaiLike(503, {}), "server", True),
        (_GenaiLike(401, {}), "auth", False),
        (_GenaiLike(404, {}), "not_found", False),
        (_GenaiLike(400, {}), "bad_request", False),
        (TimeoutError(), "timeout", True),
        (ConnectionError("reset"), "connection", True),
        (json.JSONDecodeError("x", "doc", 0), "malformed", True),
        (EmptyAnswerError("x", reason="safety"), "blocked", False),
        (EmptyAnswerError("x", reason="output_limit"), "empty", False),
        (ValueError("bug"), "other", False),
    ],
)
def test_classify(exc, kind, transient):
    fault = classify(exc)
    assert (fault.kind, fault.transient) == (kind, transient)


def test_policy_delays_are_jittered_capped_and_honour_the_server():
    policy = RetryPolicy(attempts=6, backoff=1.0, backoff_max=8.0, retry_after_max=60.0)
    for attempt, cap in [(1, 1), (2, 2), (3, 4), (4, 8), (9, 8)]:
        delays = [policy.delay(attempt) for _ in range(100)]
        assert all(cap / 2 <= d <= cap for d in delays) and len(set(delays)) > 1
    assert policy.delay(1, 57.0) == 57.0 and policy.delay(1, 600.0) == 60.0
    assert 0.5 <= policy.delay(1, 0.1) <= 1.0  # a shorter suggestion does not shorten back-off


def test_failure_keeps_provider_text_out_of_the_message(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-abcdef123456")
    exc = _GenaiLike(401, {"error": {"message": "Incorrect API key: Bearer sk-live-abcdef123456"}})
    fault = classify(exc, where="http://10.0.0.7:8000/v1")
    err = llm.failure(fault, provider="openai", who="The openai backend (model 'm')")
    assert isinstance(err, ServiceError) and err.status == 401
    text = str(err)
    assert "sk-live" not in text and "10.0.0.7" not in text and "Incorrect" not in text
    assert "refused the key (HTTP 401)" in text and "OPENAI_API_KEY" in text
    assert f"(ref {err.ref})" in text
    assert "10.0.0.7" in err.detail and "sk-live-abcdef123456" not in err.detail


def test_aclose_works_with_old_and_new_google_genai():
    closed = []

    class NewAio:
        async def aclose(self):
            closed.append(True)

    class New:
        aio = NewAio()

    class Old:  # google-genai < 1.39: client.aio has no aclose
        aio = object()

    asyncio.run(llm.providers.get("gemini").aclose(New()))
    asyncio.run(llm.providers.get("gemini").aclose(Old()))
    assert closed == [True]


@pytest.mark.parametrize(
    ("text", "gone"),
    [
        ("Incorrect API key provided: Bearer sk-test-SECRET123", ["sk-test-SECRET123"]),
        ("Authorization: Bearer abc.def-ghi", ["abc.def-ghi"]),
        ("x-goog-api-key: AIzaSyA1234567890abcdefghijklmnopqrstu", ["AIzaSyA1234567890"]),
        ("GET /v1beta/models/g:generateContent?key=AIzaXYZ123&alt=sse", ["AIzaXYZ123"]),
        ("https://host/path?api_key=hunter2hunter2", ["hunter2hunter2"]),
        ("token hf_abcdefghijklmnopqrstuvwx pushed", ["hf_abcdefghijklmnop"]),
        (
            "the admin token is configured-admin-token-value-0001",
            ["configured-admin-token-value-0001"],
        ),
        ("gemini said GEMINI-SECRET-VALUE-XYZ twice: GEMINI-SECRET-VALUE-XYZ", ["GEMINI-SECRET"]),
    ],
)
def test_redact_table(monkeypatch, text, gone):
    monkeypatch.setenv("ETC_ADMIN_TOKEN", "configured-admin-token-value-0001")
    monkeypatch.setenv("GEMINI_API_KEY", "GEMINI-SECRET-VALUE-XYZ")
    out = redact(text)
    assert MASK in out
    for g in gone:
        assert g not in out


def test_redact_keeps_ordinary_text():
    text = (
        "HTTP 429 RESOURCE_EXHAUSTED: quota exceeded for model gemini-2.5-flash; 相手に共感した。"
    )
    assert redact(text) == text
    assert redact("OPENAI_API_KEY=EMPTY is fine") == "OPENAI_API_KEY=EMPTY is fine"


@given(secret=_secret, n=st.integers(1, 3))
def test_secret_settings_are_redacted_wherever_they_appear(secret, n):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ETC_FINETUNED_API_KEY", secret)
        out = redact(" | ".join([f"key {secret}"] * n) + " Bearer " + secret)
    assert secret not in out
