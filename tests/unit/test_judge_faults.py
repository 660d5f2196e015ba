"""Judge runs under faults (429, 5xx, hangs, malformed bodies, dropped connections, bad
answers, missing keys, unreachable endpoints), parallelism, and the usage report; both SDKs."""

from __future__ import annotations

import asyncio
import socket

import pytest

from etclib.core.errors import JudgeError
from etclib.judge import runner
from etclib.metrics import judge as J
from tests.fakes.judge_fixtures import judge_env, point_provider_at  # noqa: F401 - fixture
from tests.fixtures.judge import PREDS, REFS


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("provider", ["gemini", "openai"])
def test_unreachable_endpoint_stops_at_once(provider, monkeypatch, backoff_delays):
    url = f"http://127.0.0.1:{_closed_port()}"
    if provider == "gemini":
        monkeypatch.setenv("GEMINI_API_KEY", "k")
        monkeypatch.setenv("ETC_GEMINI_BASE_URL", url)
    else:
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        monkeypatch.setenv("OPENAI_BASE_URL", url + "/v1")
    with pytest.raises(JudgeError, match="cannot connect") as info:
        J.METRIC.score(
            PREDS * 20, REFS * 20, judge_provider=provider, judge_model="m", judge_backoff=5.0
        )
    assert backoff_delays == []  # no back-off: stopped at the first refusal
    # the endpoint is for the operator (the error's detail and the log), not the message
    assert url in info.value.detail and url not in str(info.value)
    assert f"ref {info.value.ref}" in str(info.value)


@pytest.mark.parametrize(
    ("attempt", "low", "high"),
    [(1, 0.5, 1.0), (2, 1.0, 2.0), (3, 2.0, 4.0), (6, 5.0, 10.0), (10, 5.0, 10.0)],
)
def test_backoff_is_exponential_jittered_and_capped(attempt, low, high):
    judge = runner.Judge(runner.JudgeSettings(backoff=1.0, backoff_max=10.0), provider=object())
    delays = [judge._delay(attempt, None) for _ in range(200)]
    cap = min(10.0, 2 ** (attempt - 1))
    assert all(cap / 2 <= d <= cap for d in delays)
    assert low <= min(delays) and max(delays) <= high
    assert len(set(delays)) > 1  # jittered
    # a longer delay suggested by the server (Retry-After, RetryInfo) wins, up to 120 s
    assert judge._delay(1, 7.0) == 7.0 and judge._delay(1, 60.0) == 60.0
    assert judge._delay(1, 500.0) == 120.0


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"judge_provider": "claude"}, "Unknown judge provider 'claude'"),
        ({"concurrency": "many"}, "concurrency"),
        ({"concurrency": 0}, "at least 1"),
        ({"judge_timeout": -1}, "judge_timeout"),
        ({"judge_max_attempts": "x"}, "judge_max_attempts"),
    ],
)
def test_bad_options_are_refused(options, message):
    from etclib.core.errors import EtcError

    with pytest.raises(EtcError, match=message):
        runner.JudgeSettings.resolve(options.get)


def test_settings_from_environment(monkeypatch):
    monkeypatch.setenv("ETC_JUDGE_PROVIDER", "openai")
    monkeypatch.setenv("ETC_JUDGE_MODEL", "my-vllm-model")
    monkeypatch.setenv("ETC_JUDGE_CONCURRENCY", "32")
    monkeypatch.setenv("ETC_JUDGE_TIMEOUT", "12.5")
    monkeypatch.setenv("ETC_JUDGE_MAX_ATTEMPTS", "2")
    s = runner.JudgeSettings.resolve()
    assert (s.provider, s.model, s.concurrency, s.timeout, s.max_attempts) == (
        "openai",
        "my-vllm-model",
        32,
        12.5,
        2,
    )
    # options win over the environment
    s = runner.JudgeSettings.resolve({"concurrency": 4, "judge_model": "m"}.get)
    assert (s.concurrency, s.model) == (4, "m")


def test_a_failed_request_leaves_no_sibling_running_on():
    """An item's requests all end before its failure is reported: a sibling left running would
    outlive its judge and keep the cache claim it holds (the next asker would wait forever)."""
    ended = []

    async def fails():
        raise runner.RequestFailed("no usable answer")

    async def still_asking():
        for _ in range(100):  # loop turns: still running long after its sibling failed
            await asyncio.sleep(0)
        ended.append(True)

    with pytest.raises(runner.RequestFailed):
        asyncio.run(runner.every(still_asking(), fails()))
    assert ended == [True]
