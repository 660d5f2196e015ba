"""openai and gemini backends: the real SDKs against the loopback fake server (no network)."""

from __future__ import annotations

import pytest

from etclib.core.errors import BackendError
from etclib.models import get_backend


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("openai", "openai backend is not configured.*OPENAI_API_KEY"),
        ("gemini", "gemini backend is not configured.*GEMINI_API_KEY"),
    ],
)
def test_not_configured(name, message):
    with pytest.raises(BackendError, match=message):
        get_backend(name)
