"""Anthropic's Claude as judge, backend and labeller: the real ``anthropic`` SDK against the
loopback fake Messages API (``POST /v1/messages``), including its 429 (``retry-after``), 529
overloaded and used-up credit responses, and prompt caching of the judge's fixed prompt."""

from __future__ import annotations

from etclib import llm
from tests.fixtures.llm import KEY, server  # noqa: F401 - server: a fixture
from tests.studies_engines import studies_db  # noqa: F401 - fixture: DuckDB and PostgreSQL


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

    rate = llm.classify(error(429, "rate_limit_error", "slow down", **{"retry-after": "3"}))
    assert (rate.kind, rate.retry_after, rate.transient) == ("rate_limit", 3.0, True)
    busy = llm.classify(error(529, "overloaded_error", "Overloaded"))
    assert (busy.kind, busy.status, busy.transient) == ("server", 529, True)
    credit = llm.classify(
        error(400, "invalid_request_error", "Your credit balance is too low to access the API.")
    )
    assert (credit.kind, credit.what, credit.transient) == (
        "quota",
        "credit_balance_too_low",
        False,
    )
    other = llm.classify(error(400, "invalid_request_error", "max_tokens: field required"))
    assert other.kind == "bad_request"
