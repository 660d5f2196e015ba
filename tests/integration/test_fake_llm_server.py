"""The fake LLM server's own logic that product tests lean on: faults reach the requests they
match, in order; a wrong key gets a 401 that echoes it (the leak tests look for it); ``gather``
holds requests until that many are in flight, so ``max_in_flight`` counts real overlap."""

from __future__ import annotations

import asyncio

import pytest

from etclib.llm import providers
from tests.fakes.llm_server import FakeLLMServer

OPENAI = providers.get("openai")


@pytest.fixture
def server(monkeypatch):
    with FakeLLMServer() as s:
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        monkeypatch.setenv("OPENAI_BASE_URL", s.openai_base_url)
        yield s


def _ask(client, text: str):
    return client.chat.completions.create(model="m", messages=[{"role": "user", "content": text}])


def test_faults_go_to_the_requests_they_match_in_order(server):
    server.inject(500, times=1, match=lambda r: r.user == "二")
    server.inject("empty", times=1)
    client = OPENAI.client(timeout=5)
    assert _ask(client, "一").choices[0].message.content == ""  # "empty" is first for "一"
    with pytest.raises(Exception, match="500"):
        _ask(client, "二")
    assert _ask(client, "三").choices[0].message.content == "三"
    assert [r.fault for r in server.requests] == ["empty", 500, None]


def test_a_wrong_key_gets_a_401_that_echoes_it(server):
    server.api_key = "right"
    with pytest.raises(Exception) as caught:
        _ask(OPENAI.client(timeout=5, api_key="wrong-key"), "x")
    assert type(caught.value).__name__ == "AuthenticationError"
    assert "Bearer wrong-key" in str(caught.value)
    assert _ask(OPENAI.client(timeout=5, api_key="right"), "x").choices


def test_gather_holds_requests_until_that_many_are_in_flight(server):
    server.gather = 12  # one after another, the first would wait for the others in vain

    async def main():
        client = OPENAI.client(async_=True, timeout=5)
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

    replies = asyncio.run(main())
    assert sorted(r.choices[0].message.content for r in replies) == sorted(map(str, range(12)))
    assert server.max_in_flight == 12
