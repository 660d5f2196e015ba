"""The retry loop follows the server's own advice: OpenAI's ``x-should-retry`` and
``retry-after-ms`` headers, read from the real SDK's exceptions against the fake server."""

from __future__ import annotations

import openai
import pytest

from etclib.core.errors import BackendServiceError
from etclib.data.task import chat_item
from etclib.llm import retry
from etclib.models import get_backend
from tests.fakes import FakeLLMServer
from tests.fakes.judge_fixtures import point_provider_at

ITEM = chat_item([("A", "旅行に行ってきました")])


@pytest.fixture
def server(monkeypatch):
    with FakeLLMServer(lambda req: "楽しかった。") as fake:
        point_provider_at(monkeypatch, "openai", fake)
        monkeypatch.setenv("ETC_OPENAI_MODEL", "fake-model")
        yield fake


def test_should_retry_false_stops_a_retry_the_status_would_allow(server):
    server.error_headers = {"x-should-retry": "false"}
    server.inject(503, times=5)
    backend = get_backend("openai", retries=3, retry_wait=0.01)
    with pytest.raises(BackendServiceError):
        backend.predict([ITEM])
    assert server.count("openai") == 1 and backend.usage.retries == 0


def test_should_retry_true_retries_a_status_that_would_stop(server):
    server.error_headers = {"x-should-retry": "true"}
    server.inject(400, times=1)
    backend = get_backend("openai", retries=2, retry_wait=0.01)
    assert backend.predict([ITEM]) == ["楽しかった。"]
    assert server.count("openai") == 2 and backend.usage.retries == 1


@pytest.mark.parametrize(
    ("headers", "should", "after"),
    [
        ({"retry-after-ms": "1500"}, None, 1.5),
        ({"retry-after-ms": "250", "retry-after": "9"}, None, 0.25),  # the finer one wins
        ({"x-should-retry": "false", "retry-after": "2"}, False, 2.0),
        ({"x-should-retry": "TRUE"}, True, None),
        ({"x-should-retry": "maybe"}, None, None),
    ],
)
def test_the_headers_are_read_from_the_sdks_exception(server, headers, should, after):
    server.error_headers = headers
    server.inject(503, times=1)
    client = openai.OpenAI(base_url=server.openai_base_url, api_key="test", max_retries=0)
    with pytest.raises(openai.APIStatusError) as caught:
        client.chat.completions.create(
            model="fake-model", messages=[{"role": "user", "content": "こんにちは"}]
        )
    fault = retry.classify(caught.value)
    assert fault.kind == "server" and fault.should_retry is should
    assert fault.retry_after == after
    assert fault.transient is (should if should is not None else True)
