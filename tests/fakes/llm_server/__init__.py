"""A fake LLM server on 127.0.0.1 that the real OpenAI, Gemini and Anthropic SDKs can talk to.

It speaks three protocols on one random port, each answered from the same ``responder``:

- OpenAI Chat Completions: ``POST /v1/chat/completions`` (JSON reply, or Server-Sent Events
  chunks ending in ``data: [DONE]`` when the body has ``"stream": true``; a usage chunk is sent
  when ``stream_options.include_usage`` is true). ``GET /v1/models`` lists ``models`` (with
  ``model_fields[name]`` added to a model's entry, as vLLM adds ``root`` and ``parent``; 401
  without ``api_key`` when one is set); set
  ``models_fault`` to ``"hang"`` or a status to fail it; ``model_probes`` counts them.
- Gemini: ``POST /{version}/models/{model}:generateContent`` and
  ``POST /{version}/models/{model}:streamGenerateContent?alt=sse``.
- Anthropic Messages: ``POST /v1/messages`` (a ``message`` object, or with ``"stream": true``
  the named SSE events ``message_start``, ``content_block_start``, ``content_block_delta``
  (``text_delta``), ``content_block_stop``, ``message_delta`` (``stop_reason``, output tokens),
  ``message_stop``). The key is read from ``Authorization: Bearer`` (the 2.x SDKs) or
  ``x-api-key``; as API version 2026-10-21 does, a request with ``temperature``, ``top_p`` or
  ``top_k`` gets a 400 (unless it names version 2023-06-01). Errors have Anthropic's body (``{"type": "error", "error": {"type":
  "rate_limit_error", "message": ...}}``). Prompt caching: a ``system`` text block with
  ``cache_control: {"type": "ephemeral"}`` is written to the cache on first sight
  (``usage.cache_creation_input_tokens``) and read from it afterwards
  (``usage.cache_read_input_tokens``; ``input_tokens`` is the rest of the prompt).

Usage::

    from tests.fakes import FakeLLMServer

    with FakeLLMServer(lambda req: "こんにちは", latency=0.05) as server:
        client = openai.OpenAI(base_url=server.openai_base_url, api_key="test")
        # genai.Client(api_key="test",
        #              http_options=types.HttpOptions(base_url=server.gemini_base_url))
        ...
        assert server.count("openai") == 1

or as the pytest fixture ``fake_llm_server`` (import it into a test module or conftest), which
yields a started server with a default echo responder; set ``server.responder`` in the test.

API:

- ``FakeLLMServer(responder=None, *, latency=0.0, api_key=None, models=("fake-model",),
  hang_seconds=30.0)``. ``responder(req: FakeRequest) -> str`` returns the reply text; the
  default echoes the last user message. It may raise ``FakeLLMServer.Fail(fault)`` to answer
  that one request with a fault (see ``inject``). ``latency`` (seconds, settable at any time)
  delays every answer. With ``api_key`` set, a request without that key gets 401.
- ``start()`` / ``stop()``, or use it as a context manager. ``url`` is ``http://127.0.0.1:PORT``;
  ``openai_base_url`` is ``url + "/v1"``; ``gemini_base_url`` is ``url`` (the SDK adds
  ``/v1beta/models/...``); ``anthropic_base_url`` is ``url`` (the SDK adds ``/v1/messages``).
- ``inject(fault, times=1, *, match=None)``: the next ``times`` requests (those for which
  ``match(req)`` is true, when given) get the fault instead of an answer. Faults:
  ``429``, ``500``, ``503`` (or any int: that HTTP status with the protocol's error body),
  ``"hang"`` (sleep ``hang_seconds`` before answering, to trip client timeouts),
  ``"malformed"`` (status 200 with a body that is not JSON), ``"close"`` (read the request, then
  close the connection without a reply), ``"empty"`` (a well-formed answer with empty text),
  and the real failure shapes of the hosted APIs:

  - ``"quota"``: 429 with Gemini's body, whose ``details`` hold a ``google.rpc.RetryInfo``
    with ``retryDelay`` (``retry_delay`` seconds, e.g. ``"0.3s"``), as Gemini sends for
    per-minute quotas; for OpenAI, 429 with a ``retry-after`` header of that many seconds;
    for Anthropic, 429 ``rate_limit_error`` with that ``retry-after`` header;
  - ``"overloaded"``: Anthropic's 529 ``overloaded_error`` with a ``retry-after`` header of
    ``retry_delay`` seconds; for OpenAI and Gemini, a 503 with that header;
  - ``"insufficient_quota"``: OpenAI's 429 for an account without credit (body ``type`` and
    ``code`` ``insufficient_quota``, no ``retry-after``); for Gemini, the same as
    ``"daily_quota"``; for Anthropic, its 400 ``invalid_request_error`` "Your credit balance
    is too low to access the Anthropic API. ...";
  - ``"daily_quota"``: Gemini's 429 ``RESOURCE_EXHAUSTED`` whose ``QuotaFailure`` violation
    names the per-day request quota (``GenerateRequestsPerDayPerProjectPerModel-FreeTier``),
    with a RetryInfo as Gemini sends it (waiting does not help); for OpenAI, the same as
    ``"insufficient_quota"``;
  - ``"length"``: the responder's text, answered as cut by the token limit (OpenAI
    ``finish_reason: "length"``, Gemini ``finishReason: MAX_TOKENS``, Anthropic
    ``stop_reason: "max_tokens"``), even when it parses;
  - ``"safety"``: a blocked answer: Gemini, a candidate with ``finishReason: SAFETY``, safety
    ratings and no ``content``; OpenAI, ``finish_reason: content_filter`` and null content;
    Anthropic, ``stop_reason: "refusal"`` and no text;
  - ``"break"``: a streaming reply that fails before its first chunk: 200, SSE headers,
    chunked transfer encoding, then the connection closes without a chunk (the SDK raises
    while reading the first event); for a plain request, the same as ``"close"``.

  Faults queue in order; ``clear_faults()`` drops pending ones.
- ``snapshots``: requested model -> the model name the reply says was served (``model`` /
  ``modelVersion``), like a dated snapshot behind an alias.
- ``reasoning_models`` (prefixes, default ``gpt-5``, ``o1``, ``o3``, ``o4``): OpenAI requests
  for these models are refused as OpenAI refuses them: 400 with the real error body
  (``unsupported_value`` for a ``temperature`` other than 1, ``unsupported_parameter`` for
  ``max_tokens``).
- ``requests``: every received request as a :class:`FakeRequest` (faulted ones too, with
  ``fault`` set); ``count(kind=None, *, answered=None, where=None)`` counts them, ``kind`` one of
  ``"openai"``, ``"openai-stream"``, ``"gemini"``, ``"gemini-stream"``, ``"anthropic"``,
  ``"anthropic-stream"``, or ``"openai*"`` / ``"gemini*"`` / ``"anthropic*"`` for both forms; ``answered=True`` counts only requests answered normally;
  ``counts()`` is a Counter by kind; ``reset()`` clears the log and the concurrency peak.
- ``max_in_flight``: the highest number of requests handled at the same time.
- ``gather`` (0: off): hold every request until that many have been in flight together (or
  ``gather_timeout`` seconds passed, a guard against a hang), then answer them all: a client
  that really sends N calls at once makes ``max_in_flight == N`` on any machine, where a
  ``latency`` only makes the overlap likely. ``reset()`` starts a new gathering.
- Token usage in answers: prompt tokens = characters of the request text, completion tokens =
  characters of the reply (so tests can predict them), plus ``reasoning_tokens`` (default 0)
  reported as OpenAI's ``completion_tokens_details.reasoning_tokens`` (counted in
  ``completion_tokens``, as OpenAI counts them), Gemini's ``thoughtsTokenCount`` and
  Anthropic's ``output_tokens_details.thinking_tokens`` (counted in ``output_tokens``), and
  ``cached_tokens`` (default 0, at most the prompt's) reported as OpenAI's
  ``prompt_tokens_details.cached_tokens`` and Gemini's ``cachedContentTokenCount`` (both part
  of the prompt tokens, as the services count them; Anthropic's cache reads come from its
  prompt cache below).

The package, by concept: :mod:`.server` (the server object: lifecycle, faults, counts),
:mod:`.handler` (the HTTP routes of the three chat protocols), :mod:`.wire` (request parsing
and reply bodies of each protocol), :mod:`.batch` (OpenAI's Files and Batch API and Gemini's
batch mode, see its docstring).
"""

from .server import FAULTS, KINDS, FakeLLMServer, FakeRequest, fake_llm_server

__all__ = ["FAULTS", "KINDS", "FakeLLMServer", "FakeRequest", "fake_llm_server"]
