"""The retry loop follows the server's own advice: OpenAI's ``x-should-retry`` and
``retry-after-ms`` headers, read from the real SDK's exceptions against the fake server."""

from __future__ import annotations

from etclib.llm import retry


def test_a_used_up_quota_is_not_retried_whatever_the_header():
    assert not retry.Fault("quota", 429, should_retry=True).transient
    assert retry.Fault("auth", 401, should_retry=True).transient
    assert not retry.Fault("timeout", should_retry=False).transient
