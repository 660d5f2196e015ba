"""Whole judge runs as a user meets them, with the real SDKs against the
fake server: an incomplete run is not a result (``etclib score`` exits 10 unless
--allow-partial, and a re-run asks only the failed items), a cut answer is an error (asked once
more with twice the token limit), and a used-up quota stops the run at once (exit 11, the
quota named, the answers so far kept for the re-run)."""

from __future__ import annotations

import pytest

from tests.fakes.judge_fixtures import FAKE_MODEL, judge_env  # noqa: F401


def _gemini_429(*quota_ids: str):
    from google.genai import errors

    violations = [
        {"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
         "quotaId": q, "quotaDimensions": {"location": "global", "model": "gemini-2.5-flash"}}
        for q in quota_ids
    ]  # fmt: skip
    details = [{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": violations}]
    details.append({"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "41s"})
    body = {
        "error": {
            "code": 429,
            "message": "You exceeded your current quota, please check your plan and billing "
            "details.",
            "status": "RESOURCE_EXHAUSTED",
            "details": details,
        }
    }
    return errors.ClientError(429, body)


def _openai_429(code: str | None, kind: str):
    import httpx
    import openai

    body = {
        "message": "You exceeded your current quota ...",
        "type": kind,
        "param": None,
        "code": code,
    }
    request = httpx.Request("POST", "https://api.openai.com/v1/chat/completions")
    response = httpx.Response(429, request=request, json={"error": body})
    return openai.RateLimitError("Error code: 429", response=response, body=body)


@pytest.mark.parametrize(
    ("make", "kind", "quota"),
    [
        (lambda: _openai_429("insufficient_quota", "insufficient_quota"), "quota", "insufficient_quota"),
        # the body of 2023, before OpenAI filled in "code"
        (lambda: _openai_429(None, "insufficient_quota"), "quota", "insufficient_quota"),
        (lambda: _openai_429("rate_limit_exceeded", "requests"), "rate_limit", None),
        (
            lambda: _gemini_429("GenerateRequestsPerDayPerProjectPerModel-FreeTier"),
            "quota",
            "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
        ),
        # per-minute and per-day at once (a free tier with limit 0): the day decides
        (
            lambda: _gemini_429(
                "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
                "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
            ),
            "quota",
            "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
        ),
        (lambda: _gemini_429("GenerateRequestsPerMinutePerProjectPerModel-FreeTier"), "rate_limit", None),
        (lambda: _gemini_429(), "rate_limit", None),  # no QuotaFailure at all
    ],
)  # fmt: skip
def test_which_429_is_a_used_up_quota(make, kind, quota):
    from etclib import llm

    fault = llm.classify(make())
    assert (fault.kind, fault.status) == (kind, 429)
    assert fault.transient == (kind == "rate_limit")
    if quota:
        assert fault.what == quota
