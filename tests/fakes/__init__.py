"""Test doubles that run locally: no test touches the network.

- :mod:`tests.fakes.llm_server`: a loopback HTTP server that speaks each provider's protocol
  (one module each), for driving the real SDKs.
- :mod:`tests.fakes.judge_responder`: a scripted LLM judge (units and labels from tables) to
  answer the judge's decomposition and entailment prompts through that server.
- :mod:`tests.fakes.judge_fixtures`: the ``judge_env`` fixture (server + scripted judge + env
  vars), parametrized over every provider.
"""

from .llm_server import FakeLLMServer, FakeRequest, fake_llm_server

__all__ = ["FakeLLMServer", "FakeRequest", "fake_llm_server"]
