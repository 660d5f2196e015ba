"""Anthropic's Claude as judge, backend and labeller: the real ``anthropic`` SDK against the
loopback fake Messages API (``POST /v1/messages``), including its 429 (``retry-after``), 529
overloaded and used-up credit responses, and prompt caching of the judge's fixed prompt; how the
SDK's own error objects are classified."""

from __future__ import annotations

import pytest

from etclib import tracks
from etclib.core.errors import BackendServiceError, QuotaExhaustedError
from etclib.data.task import build_messages, chat_item
from etclib.llm import classify
from etclib.llm.retry import RetryPolicy
from etclib.metrics import Context
from etclib.metrics import judge as J
from etclib.models import get_backend
from etclib.studies import labeljudge
from tests.fakes import FakeLLMServer
from tests.fakes.judge_fixtures import FAKE_MODEL, point_provider_at
from tests.fakes.judge_responder import ScriptedJudge
from tests.fixtures.llm import KEY, majority_responder, server  # noqa: F401 - server: a fixture
from tests.studies_engines import studies_db  # noqa: F401 - fixture: DuckDB and PostgreSQL

ITEM = chat_item([("A", "試験に受かりました！"), ("B", "おめでとうございます！")])


@pytest.fixture
def delays(monkeypatch):
    """Record the server's suggested delay every retry saw; wait nothing."""
    seen: list[float | None] = []

    def delay(self, attempt, retry_after=None):
        seen.append(retry_after)
        return 0.0

    monkeypatch.setattr(RetryPolicy, "delay", delay)
    return seen


@pytest.fixture
def judge(monkeypatch):
    with FakeLLMServer(ScriptedJudge(), retry_delay=7) as fake:
        point_provider_at(monkeypatch, "anthropic", fake)
        yield fake


def options(**extra):
    return {
        "judge_provider": "anthropic",
        "judge_model": FAKE_MODEL,
        "judge_backoff": 0.01,
        "judge_timeout": 5.0,
        "judge_max_attempts": 4,
        **extra,
    }


def test_backend_predicts_and_streams_through_the_messages_api(server):
    backend = get_backend("anthropic", batch_size=1)
    expected = f"私は{len(build_messages(ITEM)[1]['content'])}文字を読んだ。"
    assert backend.predict([ITEM]) == [expected]
    req = server.requests[-1]
    assert (req.kind, req.model, req.path) == ("anthropic", "fake-claude", "/v1/messages")
    assert req.headers["Authorization"] == f"Bearer {KEY}" and "anthropic-version" in req.headers
    messages = build_messages(ITEM)
    # the system message is Claude's top-level "system"; max_tokens is always sent
    assert req.body["system"] == messages[0]["content"]
    assert req.body["messages"] == [{"role": "user", "content": messages[1]["content"]}]
    # no sampling settings (refused by API version 2026-10-21), no thinking for an unknown model
    assert "temperature" not in req.body and "thinking" not in req.body
    assert req.settings["max_tokens"] == 512
    assert backend.signature()["temperature"] == "default"
    assert "".join(backend.stream(ITEM)) == expected
    assert server.count("anthropic-stream") == 1
    # tokens as the fake counts them: characters of the prompt and of the answer
    prompt = len(req.text)
    assert backend.usage.input_tokens == 2 * prompt
    assert backend.usage.output_tokens == 2 * len(" " + expected)


@pytest.mark.parametrize(
    ("model", "thinking", "sent"),
    [
        ("claude-sonnet-4-5", None, {"type": "disabled"}),  # the table's default: off
        ("claude-haiku-4-5-20251001", "2048", {"type": "enabled", "budget_tokens": 2048}),
        ("claude-sonnet-5-5", "-1", {"type": "adaptive"}),
        ("claude-opus-5", None, None),  # the family row: the server decides
    ],
)
def test_thinking_is_set_explicitly_where_the_table_knows_the_model(server, model, thinking, sent):
    backend = get_backend("anthropic", model=model, thinking=thinking)
    backend.predict([ITEM])
    assert server.requests[-1].body.get("thinking") == sent


@pytest.mark.parametrize("fault", ["quota", "overloaded"])
def test_backend_retries_429_and_529_after_the_suggested_delay(server, delays, fault):
    server.inject(fault, times=2)
    backend = get_backend("anthropic", retries=3)
    assert backend.predict([ITEM])[0].startswith("私は")
    assert server.count("anthropic") == 3 and backend.usage.retries == 2
    assert delays == [7.0, 7.0]  # the retry-after header of the 429 / 529


def test_backend_stops_on_a_used_up_credit_balance(server, delays):
    server.inject("insufficient_quota", times=5)
    backend = get_backend("anthropic", retries=3)
    with pytest.raises(QuotaExhaustedError) as info:
        backend.predict([ITEM])
    assert server.count("anthropic") == 1 and delays == []  # no retry: waiting cannot help
    message = str(info.value)
    assert "anthropic quota is used up" in message and "credit balance" in message
    assert "credit_balance_too_low" in message and "console.anthropic.com" in message


def test_wrong_key_is_named_and_never_shown(server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-wrong-key-42424242")
    backend = get_backend("anthropic", retries=0)
    with pytest.raises(BackendServiceError) as info:
        backend.predict([ITEM])
    assert "ANTHROPIC_API_KEY" in str(info.value)
    assert "wrong-key" not in str(info.value) + (info.value.detail or "")


def test_erc_llm_backend_labels_with_claude(server):
    server.responder = lambda req: '{"labels": ["喜び"]}'
    backend = tracks.get("erc").backend("llm", provider="anthropic", batch_size=1)
    assert backend.predict([ITEM]) == [("joy",)]
    assert server.count("anthropic") == 1
    assert backend.signature()["provider"] == "anthropic"


def test_judge_caches_its_fixed_prompt_and_asks_for_the_schema(judge):
    texts = [f"文{i}です。" for i in range(4)]
    data = J.METRIC.compute(texts, texts, Context(options(concurrency=1)))
    assert J.METRIC.aggregate(data)["f1"] == pytest.approx(100.0)
    reqs = [r for r in judge.requests if r.kind == "anthropic"]
    for r in reqs:
        (block,) = r.body["system"]
        assert block["cache_control"] == {"type": "ephemeral"}
        assert r.body["output_config"]["format"]["type"] == "json_schema"
        assert "temperature" not in r.body
    # one fixed prompt per question kind (decompose, entail): written once each, read after
    usage = data.extra["judge_usage"]
    systems = {r.body["system"][0]["text"] for r in reqs}
    assert len(systems) == 2
    expected = sum(len(r.body["system"][0]["text"]) for r in reqs) - sum(map(len, systems))
    assert usage["cached_tokens"] == expected > 0
    assert usage["input_tokens"] == sum(len(r.text) for r in reqs)


@pytest.mark.parametrize("fault", ["quota", "overloaded"])
def test_judge_retries_429_and_529_after_the_suggested_delay(judge, delays, fault):
    judge.inject(fault, times=2)
    got = J.METRIC.score(["文です。"], ["文です。"], **options())
    assert got["f1"] == pytest.approx(100.0)
    assert judge.count(answered=False) == 2 and delays == [7.0, 7.0]


def test_judge_stops_on_a_used_up_credit_balance(judge, delays):
    judge.inject("insufficient_quota", times=1000)
    texts = [f"文{i}です。" for i in range(30)]
    with pytest.raises(QuotaExhaustedError) as info:
        J.METRIC.compute(texts, texts, Context(options(concurrency=3)))
    assert judge.count() <= 3 and delays == []  # the calls in flight, no retry
    message = str(info.value)
    assert "The anthropic judge" in message and "anthropic quota is used up" in message
    assert "credit balance" in message and "console.anthropic.com/settings/billing" in message
    assert "run the same command again" in message and info.value.exit_code == 11


@pytest.mark.usefixtures("studies_db")
def test_label_judge_with_claude(corpus, monkeypatch):
    with FakeLLMServer(majority_responder(corpus)) as server:
        point_provider_at(monkeypatch, "anthropic", server)
        run = labeljudge.judge_labels(corpus, "anthropic", "claude-fake", split="valid", limit=6)
        assert server.count("anthropic") == run.n_items - run.n_cached
        assert run.n_labelled == 6 and run.n_failed == 0
    assert labeljudge.list_runs()["provider"].tolist() == ["anthropic"]
    items = [u for d in corpus.split("valid") for u in d.utterances][:6]
    assert {u.key: u.label for u in items} == labeljudge.run_labels(run.run_id)


def test_classification_of_claude_errors():
    import anthropic
    import httpx

    def error(status: int, kind: str, message: str, **headers: str) -> Exception:
        request = httpx.Request("POST", "https://api.anthropic.com/v1/messages")
        body = {"type": "error", "error": {"type": kind, "message": message}}
        response = httpx.Response(status, json=body, headers=headers, request=request)
        return anthropic.Anthropic(api_key="x")._make_status_error(
            message, body=body, response=response
        )

    rate = classify(error(429, "rate_limit_error", "slow down", **{"retry-after": "3"}))
    assert (rate.kind, rate.retry_after, rate.transient) == ("rate_limit", 3.0, True)
    busy = classify(error(529, "overloaded_error", "Overloaded"))
    assert (busy.kind, busy.status, busy.transient) == ("server", 529, True)
    credit = classify(
        error(400, "invalid_request_error", "Your credit balance is too low to access the API.")
    )
    assert (credit.kind, credit.what, credit.transient) == (
        "quota",
        "credit_balance_too_low",
        False,
    )
    other = classify(error(400, "invalid_request_error", "max_tokens: field required"))
    assert other.kind == "bad_request"
