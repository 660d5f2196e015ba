"""The pre-flight estimate: no answer, no estimate; cached input at its price; the
daily request limit of the key's tier."""

from __future__ import annotations

import pytest

from etclib.core.errors import ConfigError
from etclib.judge import pricing
from tests.fakes.judge_fixtures import judge_env  # noqa: F401 - fixture
from tests.fixtures.llm import LIST_PRICES


@pytest.mark.parametrize(("model", "prices"), sorted(LIST_PRICES.items()))
@pytest.mark.parametrize(("tokens_in", "cached", "tokens_out"), [(1000, 0, 10), (1000, 800, 10),
                                                                  (0, 0, 0), (500, 900, 0)])  # fmt: skip
def test_cached_input_is_billed_at_its_price(model, prices, tokens_in, cached, tokens_out):
    p_in, p_out, p_cached = prices
    cached_billed = min(cached, tokens_in)  # never more cached than the input
    expected = (
        (tokens_in - cached_billed) * p_in + cached_billed * p_cached + tokens_out * p_out
    ) / 1e6
    assert pricing.cost_usd(model, tokens_in, tokens_out, cached) == pytest.approx(
        expected, abs=1e-6
    )


def test_a_model_without_price_has_no_cost():
    assert pricing.cost_usd("my-vllm-model", 1000, 10, 500) is None


@pytest.mark.parametrize(
    ("provider", "model", "calls", "tier", "limit"),
    [
        ("gemini", "gemini-2.5-flash", 5000, None, 250),
        ("gemini", "gemini-2.5-flash", 5000, "free", 250),
        ("gemini", "models/gemini-2.5-flash-lite", 5000, None, 1000),
        ("gemini", "gemini-2.5-pro", 101, None, 100),
        ("gemini", "gemini-2.5-pro", 100, None, None),  # exactly the limit fits
        ("gemini", "gemini-2.5-flash", 5000, "tier1", None),
        ("gemini", "gemini-2.5-flash", 12000, "tier1", 10000),
        ("openai", "gpt-4.1-mini", 10**6, None, None),  # no per-day limit documented
        ("gemini", "my-gemini-proxy", 10**6, None, None),
    ],
)
def test_the_daily_request_limit_of_the_tier(monkeypatch, provider, model, calls, tier, limit):
    monkeypatch.delenv("ETC_JUDGE_TIER", raising=False)
    note = pricing.daily_limit_note(provider, model, calls, tier)
    if limit is None:
        assert note is None
        return
    days = -(-calls // limit)
    assert f"daily limit of {limit:,} requests" in note and f"take {days} days" in note
    assert pricing.DAILY_LIMITS_SOURCE in note and pricing.DAILY_LIMITS_READ in note
    assert ("ETC_JUDGE_TIER" in note) is (tier is None)


def test_the_tier_setting_is_read_and_checked(monkeypatch):
    monkeypatch.setenv("ETC_JUDGE_TIER", "tier1")
    assert pricing.daily_limit_note("gemini", "gemini-2.5-flash", 5000) is None
    monkeypatch.setenv("ETC_JUDGE_TIER", "tier9")
    with pytest.raises(ConfigError, match="ETC_JUDGE_TIER"):
        pricing.key_tier()
