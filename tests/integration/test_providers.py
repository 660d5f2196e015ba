"""Every registered provider's codec through its real SDK against the loopback fake server: a
request sent and streamed, its reply and usage read, and a failure that reaches the caller
after one attempt (the SDKs' own retries are off: callers own the retry policy)."""

from __future__ import annotations

import pytest

from etclib import llm
from etclib.llm import providers
from tests.fakes import FakeLLMServer
from tests.fakes.judge_fixtures import point_provider_at

NAMES = providers.names()
MESSAGES = [{"role": "system", "content": "指示"}, {"role": "user", "content": "こんにちは"}]
ANSWER = "[指示] こんにちは"


@pytest.fixture(params=NAMES)
def provider(request, monkeypatch):
    """``(spec, server)``: the provider's settings pointed at a fake server."""
    with FakeLLMServer(lambda req: f"[{req.system}] {req.user}", hang_seconds=3) as server:
        point_provider_at(monkeypatch, request.param, server)
        yield providers.get(request.param), server


def _request(spec):
    decoding = llm.decoding(spec.name, "fake-model")
    return spec.request("fake-model", MESSAGES, decoding, max_tokens=64)


def test_a_request_is_sent_and_streamed(provider):
    spec, server = provider
    client = spec.client(timeout=5)
    reply = spec.send(client, _request(spec))
    assert reply.text == ANSWER and reply.model_version == "fake-model" and not reply.cut
    assert (reply.input_tokens, reply.output_tokens) == (len("指示\nこんにちは"), len(ANSWER))
    chunks = list(spec.open_stream(client, _request(spec)))
    assert "".join(spec.chunk_text(c) for c in chunks) == ANSWER
    usage, _ = spec.stream_end(chunks)
    assert usage.output_tokens == len(ANSWER)
    assert server.counts() == {spec.name: 1, f"{spec.name}-stream": 1}


@pytest.mark.parametrize(
    ("fault", "kind"),
    [(500, "server"), ("malformed", "malformed"), ("close", "connection"), ("hang", "timeout")],
)
def test_a_failure_reaches_the_caller_after_one_attempt(provider, fault, kind):
    spec, server = provider
    server.inject(fault)
    with pytest.raises(Exception) as caught:
        spec.send(spec.client(timeout=0.5), _request(spec))
    assert llm.classify(caught.value).kind == kind
    assert server.count(answered=False) == 1 and server.pending_faults() == 0
