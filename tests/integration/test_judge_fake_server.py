"""The fake LLM server itself (tests/fakes/llm_server/), driven by the real SDKs, so the
judge and backend tests that rely on it rely on something checked."""

from __future__ import annotations

import asyncio

import pytest

from etclib import llm
from tests.fakes.llm_server import FakeLLMServer, FakeRequest


def _reply(req: FakeRequest) -> str:
    return f"[{req.kind}|{req.model}|{req.system}] {req.user}"


@pytest.fixture
def server():
    with FakeLLMServer(_reply) as s:
        yield s


@pytest.fixture
def openai_client(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
    return llm.client("openai", timeout=5)


@pytest.fixture
def gemini_client(server, monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    monkeypatch.setenv("ETC_GEMINI_BASE_URL", server.gemini_base_url)
    return llm.client("gemini", timeout=5)


MESSAGES = [{"role": "system", "content": "指示"}, {"role": "user", "content": "こんにちは"}]


def test_openai_plain_and_stream(server, openai_client):
    r = openai_client.chat.completions.create(model="m1", messages=MESSAGES, temperature=0)
    assert r.choices[0].message.content == "[openai|m1|指示] こんにちは"
    assert r.usage.prompt_tokens == len("指示\nこんにちは")
    stream = openai_client.chat.completions.create(
        model="m1", messages=MESSAGES, stream=True, stream_options={"include_usage": True}
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "[openai-stream|m1|指示] こんにちは"
    assert chunks[-1].usage.completion_tokens == len(text)
    assert server.counts() == {"openai": 1, "openai-stream": 1}
    assert server.requests[0].settings["temperature"] == 0
    assert [m.id for m in openai_client.models.list()] == ["fake-model"]


def test_gemini_plain_and_stream(server, gemini_client):
    from google.genai import types

    config = types.GenerateContentConfig(system_instruction="指示", temperature=0)
    r = gemini_client.models.generate_content(model="g1", contents="こんにちは", config=config)
    assert r.text == "[gemini|g1|指示] こんにちは"
    assert r.usage_metadata.prompt_token_count == len("指示\nこんにちは")
    text = "".join(
        c.text or ""
        for c in gemini_client.models.generate_content_stream(
            model="g1", contents="こんにちは", config=config
        )
    )
    assert text == "[gemini-stream|g1|指示] こんにちは"
    assert server.counts() == {"gemini": 1, "gemini-stream": 1}
    assert server.count("gemini*") == 2 and server.count("openai*") == 0


@pytest.mark.parametrize(
    ("fault", "openai_error", "gemini_error"),
    [
        (429, "RateLimitError", "ClientError"),
        (500, "InternalServerError", "ServerError"),
        (503, "InternalServerError", "ServerError"),
        ("malformed", "JSONDecodeError", "JSONDecodeError"),
        ("close", "APIConnectionError", "RemoteProtocolError"),
        ("hang", "APITimeoutError", "ReadTimeout"),
    ],
)
def test_faults_reach_the_sdks(
    server, openai_client, gemini_client, fault, openai_error, gemini_error, monkeypatch
):
    server.hang_seconds = 3
    if fault == "hang":
        openai_client = llm.client("openai", timeout=0.3)
        gemini_client = llm.client("gemini", timeout=0.3)
    server.inject(fault, times=2)
    with pytest.raises(Exception) as info:
        openai_client.chat.completions.create(model="m", messages=MESSAGES)
    assert type(info.value).__name__ == openai_error
    with pytest.raises(Exception) as info:
        gemini_client.models.generate_content(model="g", contents="x")
    assert type(info.value).__name__ == gemini_error
    assert server.pending_faults() == 0
    assert server.count(answered=False) == 2  # no SDK retried on its own
    # the next request is answered normally
    ok = openai_client.chat.completions.create(model="m", messages=MESSAGES)
    assert ok.choices[0].message.content.endswith("こんにちは")


def test_fault_matching_and_empty_answers(server, openai_client):
    server.inject(500, times=1, match=lambda r: r.user == "二")
    server.inject("empty", times=1)
    a = openai_client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "一"}]
    )
    assert a.choices[0].message.content == ""  # the "empty" fault, first in line for "一"
    with pytest.raises(Exception, match="500"):
        openai_client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "二"}]
        )
    assert [r.fault for r in server.requests] == ["empty", 500]


def test_api_key_is_checked(server, openai_client, monkeypatch):
    server.api_key = "right"
    with pytest.raises(Exception) as info:
        openai_client.chat.completions.create(model="m", messages=MESSAGES)
    assert type(info.value).__name__ == "AuthenticationError"
    right = llm.client("openai", api_key="right")
    assert right.chat.completions.create(model="m", messages=MESSAGES).choices


def test_latency_and_parallel_requests(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
    server.gather = 12  # every request is held until all 12 are in flight

    async def main():
        client = llm.client("openai", async_=True, timeout=5)
        try:
            return await asyncio.gather(
                *(
                    client.chat.completions.create(
                        model="m", messages=[{"role": "user", "content": str(i)}]
                    )
                    for i in range(12)
                )
            )
        finally:
            await client.close()

    replies = asyncio.run(main())  # one after another, the first would time out
    assert sorted(r.choices[0].message.content.split()[-1] for r in replies) == sorted(
        str(i) for i in range(12)
    )
    assert server.max_in_flight == 12
