"""Judge runs under faults (429, 5xx, hangs, malformed bodies, dropped connections, bad
answers, missing keys, unreachable endpoints), parallelism, and the usage report; both SDKs."""

from __future__ import annotations

import math

import pytest

from etclib.core.errors import JudgeError
from etclib.metrics import judge as J
from tests.fakes.judge_fixtures import judge_env, point_provider_at  # noqa: F401 - fixture
from tests.fakes.judge_responder import request_kind
from tests.fakes.llm_server import FakeLLMServer
from tests.fixtures.judge import PREDS, REFS

# 4 decompositions + (1 + 2) + (2 + 1) entailments
CALLS = 10


F1 = 200 / 3


def _run(env, **overrides):
    data = J.METRIC.compute(PREDS, REFS, env.ctx(**overrides))
    return data, J.METRIC.aggregate(data), data.extra["judge_usage"]


def test_clean_run_baseline(judge_env):  # noqa: F811
    data, got, usage = _run(judge_env)
    assert got["f1"] == pytest.approx(F1)
    assert usage["calls"] == CALLS == judge_env.server.count()
    assert usage["retries"] == 0 and data.extra["judge_errors"] == 0


@pytest.mark.parametrize("fault", [429, 500, 503, "malformed", "close"])
def test_transient_faults_are_retried(judge_env, fault):  # noqa: F811
    judge_env.server.inject(fault, times=3)
    data, got, usage = _run(judge_env)
    assert got["f1"] == pytest.approx(F1)
    assert data.extra["judge_errors"] == 0
    assert usage["retries"] == 3
    assert usage["calls"] == CALLS + 3 == judge_env.server.count()
    assert judge_env.server.count(answered=True) == CALLS


def test_hanging_call_times_out_and_is_retried(judge_env):  # noqa: F811
    judge_env.server.inject("hang", times=1)
    # the hang lasts 10 s (tests/fakes/judge_fixtures.py); a 4 s timeout gives it up, and no
    # answered call comes near it on a loaded machine (0.5 s did: a run with both cores busy
    # counted 5 retries, answered calls given up as well)
    data, got, usage = _run(judge_env, judge_timeout=4.0)
    assert got["f1"] == pytest.approx(F1)
    # the hung call was given up after its timeout and asked again (a client that waited out
    # the hang would have got its late answer and no retry)
    assert usage["retries"] == 1 and data.extra["judge_errors"] == 0
    assert judge_env.server.count() == CALLS + 1


def test_unparseable_answer_is_retried(judge_env):  # noqa: F811
    good = judge_env.responder
    bad_once = {"left": 2}

    def flaky(req):
        if bad_once["left"] > 0:
            bad_once["left"] -= 1
            return "すみません、判定できません。"
        return good(req)

    judge_env.server.responder = flaky
    data, got, usage = _run(judge_env)
    assert got["f1"] == pytest.approx(F1)
    assert usage["retries"] == 2 and data.extra["judge_errors"] == 0


def test_answer_that_never_parses_is_an_item_error_not_not_supported(judge_env):  # noqa: F811
    good = judge_env.responder

    def broken_label(req):
        kind, args = request_kind(req)
        if kind == "entail" and args == ("楽しかった。", "嬉しかった。"):
            return '{"reasoning": "…", "label": "たぶん"}'
        return good(req)

    judge_env.server.responder = broken_label
    data, got, usage = _run(judge_env, judge_max_attempts=3)
    assert data.extra["judge_errors"] == 1
    err = data.details[1]["error"]
    assert "unparseable" in err and "3 attempt" in err
    assert math.isnan(data.arrays["f1"][1]) and math.isnan(data.arrays["units"][1])
    # item 2 is left out (NaN, n_judged 1), not scored as if the label were Not Supported;
    # item 1 alone remains
    assert got["f1"] == pytest.approx(F1) and got["n_judged"] == 1
    assert J.METRIC.item_scores(data, 1)["judge_error"] == err
    assert usage["retries"] == 2


def test_persistent_server_errors_exhaust_attempts(judge_env):  # noqa: F811
    def is_item2(req):
        kind, args = request_kind(req)
        return kind == "decompose" and args[0] == "嬉しかった。楽しかった。"

    judge_env.server.inject(500, times=100, match=is_item2)
    data, got, usage = _run(judge_env, judge_max_attempts=3)
    assert data.extra["judge_errors"] == 1
    assert "HTTP 500" in data.details[1]["error"]
    assert judge_env.server.count(where=is_item2) == 3
    assert got["n_judged"] == 1 and got["f1"] == pytest.approx(F1)
    # the failure is not cached: a later run asks again and succeeds
    judge_env.server.clear_faults()
    data2, got2, usage2 = _run(judge_env)
    assert data2.extra["judge_errors"] == 0 and got2["n_judged"] == 2
    assert usage2["calls"] == 1 + 3  # the decomposition and item 2's three entailments


def test_sdk_retries_are_off(judge_env):  # noqa: F811
    judge_env.server.inject(500, times=1)
    data, _, usage = _run(judge_env, judge_max_attempts=1)
    # the request that got the 500 reached the server once: the SDK did not retry it
    assert judge_env.server.count(answered=False) == 1
    assert usage["retries"] == 0 and data.extra["judge_errors"] == 1


@pytest.mark.parametrize("provider", ["gemini", "openai"])
def test_missing_key_stops_at_once(provider, monkeypatch):
    with FakeLLMServer() as server:
        point_provider_at(monkeypatch, provider, server)
        monkeypatch.delenv("GEMINI_API_KEY" if provider == "gemini" else "OPENAI_API_KEY")
        with pytest.raises(JudgeError, match="API_KEY"):
            J.METRIC.score(PREDS, REFS, judge_provider=provider, judge_model="m")
        assert server.count() == 0


@pytest.mark.parametrize("status", [401, 403, 404])
def test_bad_key_or_model_stops_at_once(judge_env, status):  # noqa: F811
    judge_env.server.inject(status, times=1)
    judge_env.server.latency = 0.05
    preds = [f"予測{i}。" for i in range(30)]  # 60 decompositions and 60 entailments
    refs = [f"参照{i}。" for i in range(30)]
    with pytest.raises(JudgeError, match=f"HTTP {status}"):
        J.METRIC.compute(preds, refs, judge_env.ctx(concurrency=4))
    # not retried, and the run stopped: at most the 4 calls in flight with it and 4 started
    # as they returned, of the 120
    assert judge_env.server.count(answered=False) == 1
    assert judge_env.server.count() <= 8


def test_wrong_key_is_refused_by_the_server(judge_env, monkeypatch):  # noqa: F811
    judge_env.server.api_key = "the-right-key"
    with pytest.raises(JudgeError, match="HTTP 401"):
        _run(judge_env)
    point_provider_at(monkeypatch, judge_env.provider, judge_env.server, key="the-right-key")
    assert _run(judge_env)[1]["f1"] == pytest.approx(F1)


def test_bad_request_before_any_success_stops(judge_env):  # noqa: F811
    # one call at a time, so the 400 is the run's first answer: the endpoint or the request
    # format is wrong, and every call would fail the same way
    judge_env.server.inject(400, times=1)
    with pytest.raises(JudgeError, match="HTTP 400"):
        _run(judge_env, concurrency=1)
    assert judge_env.server.count() == 1


def test_bad_request_after_a_success_is_an_item_error(judge_env):  # noqa: F811
    def is_item2(req):
        kind, args = request_kind(req)
        return kind == "decompose" and args[0] == "嬉しかった。楽しかった。"

    judge_env.server.inject(400, times=1, match=is_item2)
    data, got, usage = _run(judge_env, concurrency=1)
    assert data.extra["judge_errors"] == 1 and "HTTP 400" in data.details[1]["error"]
    assert judge_env.server.count(where=is_item2) == 1  # a 400 is not retried
    assert got["n_judged"] == 1 and usage["retries"] == 0


def test_calls_run_in_parallel(judge_env):  # noqa: F811
    # 8 items whose predictions have no unit: 16 decompositions and nothing else
    judge_env.responder.units.update({f"空{i}": [] for i in range(8)})
    judge_env.server.gather = 16  # every call is held until all 16 are in flight
    data = J.METRIC.compute(
        [f"空{i}" for i in range(8)],
        [f"参照{i}。" for i in range(8)],
        judge_env.ctx(concurrency=16),
    )
    assert judge_env.server.count() == 16
    assert judge_env.server.max_in_flight == 16
    assert J.METRIC.aggregate(data)["f1"] == 0.0


def test_concurrency_bound_is_respected(judge_env):  # noqa: F811
    judge_env.server.gather = 3  # the first calls are held until three are in flight
    preds = [f"予測{i}。" for i in range(12)]
    refs = [f"参照{i}。" for i in range(12)]
    J.METRIC.compute(preds, refs, judge_env.ctx(concurrency=3))
    assert judge_env.server.max_in_flight == 3


def test_usage_counts_tokens_and_cost(judge_env, monkeypatch):  # noqa: F811
    # (model, USD per 1M input, output and cached input tokens)
    model, price_in, price_out, price_cached = {
        "gemini": ("gemini-2.5-flash", 0.30, 2.50, 0.03),
        "anthropic": ("claude-haiku-4-5", 1.00, 5.00, 0.10),
    }.get(judge_env.provider, ("gpt-4.1-mini", 0.40, 1.60, 0.10))
    _, _, usage = _run(judge_env, judge_model=model)
    # the fake server bills one token per character of the request and of the reply; of the
    # input, Claude's prompt cache serves the fixed prompt after its first sight
    reqs = judge_env.server.requests
    tokens_in = sum(len(r.text) for r in reqs)
    tokens_out = sum(len(r.reply) for r in reqs)
    assert (usage["input_tokens"], usage["output_tokens"]) == (tokens_in, tokens_out)
    cached = usage["cached_tokens"]
    assert (cached > 0) is (judge_env.provider == "anthropic")
    expected = (
        (tokens_in - cached) * price_in + cached * price_cached + tokens_out * price_out
    ) / 1e6
    assert usage["cost_usd"] == pytest.approx(expected, abs=1e-6)  # rounded to micro-dollars
    _, _, unknown = _run(judge_env, judge_model="my-own-model")
    assert unknown["cost_usd"] is None
