"""A fake LLM server on 127.0.0.1 that the real OpenAI, Gemini and Anthropic SDKs talk to.

One module per protocol (:mod:`.openai`, :mod:`.gemini`, :mod:`.anthropic`, registered in
:data:`WIRES` as the providers are in ``etclib.llm.providers``) beside the shared core
(:mod:`.base`), all on one random port and answered from one ``responder``::

    with FakeLLMServer(lambda req: "こんにちは") as server:
        client = openai.OpenAI(base_url=server.openai_base_url, api_key="test")
        ...
        assert server.count("openai") == 1

or the pytest fixture ``fake_llm_server`` (a started server with an echo responder).

- ``FakeLLMServer(responder=None, *, latency=0.0, api_key=None, models=("fake-model",),
  hang_seconds=30.0, reasoning_models=(...), retry_delay=1.0, snapshots=None)``.
  ``responder(req: FakeRequest) -> str`` returns the reply text (default: the last user
  message); it may raise ``FakeLLMServer.Fail(fault)`` to fail that one request. ``latency``
  delays every answer; with ``api_key`` set, a request without that key gets 401.
  ``<wire>_base_url`` is the base URL that wire's SDK is given (``openai_base_url`` ends in
  ``/v1``); ``snapshots`` maps a requested model to the one the reply says was served.
- ``inject(fault, times=1, *, match=None)``: the next ``times`` requests (those ``match(req)``
  accepts) get ``fault`` instead of an answer, in order: an int (that HTTP status with the
  protocol's error body), ``"hang"`` (``hang_seconds`` before answering), ``"malformed"`` (200,
  not JSON), ``"close"`` (no reply), ``"empty"`` (an answer with no text), ``"break"`` (a
  stream that closes before its first chunk), and each service's real shapes: ``"quota"``
  (a per-minute 429 with the delay the service suggests, ``retry_delay``), ``"overloaded"``
  (Anthropic's 529, a 503 elsewhere), ``"insufficient_quota"`` / ``"daily_quota"`` (a quota or
  credit that no wait cures), ``"length"`` (the answer cut by the token limit), ``"safety"``
  (a blocked answer). ``clear_faults()`` drops pending ones.
- ``requests`` (every request as a :class:`FakeRequest`, faulted ones too), ``count(kind=None,
  *, answered=None, where=None)`` (``kind``: ``"openai"``, ``"gemini-stream"`` ..., or
  ``"anthropic*"`` for both forms), ``counts()``, ``reset()``, ``max_in_flight``; ``gather``
  holds every request until that many are in flight together (a client that sends N calls at
  once makes ``max_in_flight == N`` on any machine).
- Tokens are characters (prompt: the request's text; completion: the reply), plus
  ``reasoning_tokens`` (counted in the output, as the services count them) and
  ``cached_tokens`` (part of the prompt) reported with every plain answer.
- ``batches``: the batch interfaces (:class:`~.base.BatchDesk`).
"""

from .anthropic import WIRE as ANTHROPIC
from .base import FAULTS, FakeLLMServer, FakeRequest, Wire, fake_llm_server
from .gemini import WIRE as GEMINI
from .openai import WIRE as OPENAI

#: name -> the protocol its SDK speaks; the same names as etclib.llm.providers
WIRES: dict[str, Wire] = {w.name: w for w in (OPENAI, GEMINI, ANTHROPIC)}
KINDS = tuple(kind for name in WIRES for kind in (name, f"{name}-stream"))

__all__ = ["FAULTS", "KINDS", "WIRES", "FakeLLMServer", "FakeRequest", "fake_llm_server"]
