"""Pytest fixtures for judge tests: a fake LLM server wired to one provider through the env.

Import into a test module: ``from tests.fakes.judge_fixtures import judge_env  # noqa: F401``.
``judge_env`` is parametrized over both providers, so every test that uses it runs against
the Gemini and the OpenAI SDK. It yields a :class:`JudgeEnv`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from .judge_responder import ScriptedJudge
from .llm_server import FakeLLMServer

PROVIDERS = ("gemini", "openai")
FAKE_MODEL = "fake-judge"


def point_provider_at(
    monkeypatch: pytest.MonkeyPatch, provider: str, server: FakeLLMServer, key: str = "test-key"
) -> None:
    """Set the key and endpoint env vars of ``provider`` to the fake ``server``."""
    if provider == "gemini":
        monkeypatch.setenv("GEMINI_API_KEY", key)
        monkeypatch.setenv("ETC_GEMINI_BASE_URL", server.gemini_base_url)
    else:
        monkeypatch.setenv("OPENAI_API_KEY", key)
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)


@dataclass
class JudgeEnv:
    """A running fake server, its scripted judge, and the metric options that reach it."""

    provider: str
    server: FakeLLMServer
    responder: ScriptedJudge
    options: dict[str, Any] = field(default_factory=dict)

    def ctx(self, **overrides: Any):
        from etclib.metrics import Context

        return Context({**self.options, **overrides})

    def kind(self) -> str:
        """The fake server's request kind for this provider (``"gemini"`` / ``"openai"``)."""
        return self.provider


@pytest.fixture(params=PROVIDERS)
def judge_env(request, monkeypatch) -> Iterator[JudgeEnv]:
    responder = ScriptedJudge()
    with FakeLLMServer(responder, hang_seconds=10.0) as server:
        point_provider_at(monkeypatch, request.param, server)
        yield JudgeEnv(
            provider=request.param,
            server=server,
            responder=responder,
            options={
                "judge_provider": request.param,
                "judge_model": FAKE_MODEL,
                "judge_backoff": 0.01,
                "judge_timeout": 5.0,
                "judge_max_attempts": 4,
            },
        )
