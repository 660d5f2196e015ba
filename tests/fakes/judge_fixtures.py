"""Pytest fixtures for judge tests: a fake LLM server wired to one provider through the env.

Import into a test module: ``from tests.fakes.judge_fixtures import judge_env  # noqa: F401``.
``judge_env`` is parametrized over every registered provider (etclib.llm.providers), so every
test that uses it runs against each provider's real SDK. It yields a :class:`JudgeEnv`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from etclib.llm import providers

from .judge_responder import ScriptedJudge
from .llm_server import FakeLLMServer

PROVIDERS = providers.names()
FAKE_MODEL = "fake-judge"


def point_provider_at(
    monkeypatch: pytest.MonkeyPatch, provider: str, server: FakeLLMServer, key: str = "test-key"
) -> None:
    """Set the key and endpoint settings of ``provider`` (its spec names them) to the fake
    ``server`` (its ``<provider>_base_url``)."""
    spec = providers.get(provider)
    monkeypatch.setenv(spec.key_settings[0], key)
    monkeypatch.setenv(spec.base_url_setting, getattr(server, f"{provider}_base_url"))


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
        """The fake server's request kind for this provider (its name: ``"gemini"`` ...)."""
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
