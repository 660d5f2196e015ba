"""Test doubles that run locally: no test touches the network.

- :mod:`tests.fakes.llm_server`: a loopback HTTP server that speaks the OpenAI Chat Completions
  and the Gemini ``generateContent`` protocols, for driving the real SDKs.
"""

from .llm_server import FakeLLMServer, FakeRequest, fake_llm_server

__all__ = ["FakeLLMServer", "FakeRequest", "fake_llm_server"]
