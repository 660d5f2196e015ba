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
"""

from __future__ import annotations

import collections
import json
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

KINDS = ("openai", "openai-stream", "gemini", "gemini-stream", "anthropic", "anthropic-stream")
FAULTS = (
    "overloaded",
    "hang",
    "malformed",
    "close",
    "empty",
    "quota",
    "insufficient_quota",
    "daily_quota",
    "length",
    "safety",
    "break",
)


@dataclass
class FakeRequest:
    """One request as the fake server saw it, in a protocol-neutral form."""

    kind: str
    model: str
    path: str
    body: dict[str, Any]
    headers: dict[str, str]
    #: ``[{"role": "system"|"user"|"assistant", "content": str}, ...]`` in order; a Gemini
    #: ``systemInstruction`` becomes a leading system message, role ``model`` becomes assistant.
    messages: list[dict[str, str]] = field(default_factory=list)
    fault: str | int | None = None
    reply: str | None = None

    @property
    def system(self) -> str:
        """The system message text ('' when none)."""
        return "\n".join(m["content"] for m in self.messages if m["role"] == "system")

    @property
    def user(self) -> str:
        """The last user message text ('' when none)."""
        users = [m["content"] for m in self.messages if m["role"] == "user"]
        return users[-1] if users else ""

    @property
    def text(self) -> str:
        """All message texts joined by newlines."""
        return "\n".join(m["content"] for m in self.messages)

    @property
    def stream(self) -> bool:
        return self.kind.endswith("-stream")

    @property
    def settings(self) -> dict[str, Any]:
        """Decoding settings: OpenAI top-level fields, or Gemini ``generationConfig``."""
        if self.kind.startswith("gemini"):
            return dict(self.body.get("generationConfig") or {})
        skip = ("messages", "model", "system")
        return {k: v for k, v in self.body.items() if k not in skip}


def _echo(req: FakeRequest) -> str:
    return req.user


class _Fail(Exception):
    def __init__(self, fault: str | int):
        super().__init__(str(fault))
        self.fault = fault


class FakeLLMServer:
    """Loopback OpenAI + Gemini server; see the module docstring for the API."""

    Fail = _Fail

    def __init__(
        self,
        responder: Callable[[FakeRequest], str] | None = None,
        *,
        latency: float = 0.0,
        api_key: str | None = None,
        models: tuple[str, ...] = ("fake-model",),
        hang_seconds: float = 30.0,
        reasoning_models: tuple[str, ...] = ("gpt-5", "o1", "o3", "o4"),
        retry_delay: float = 1.0,
        snapshots: dict[str, str] | None = None,
    ):
        self.responder: Callable[[FakeRequest], str] = responder or _echo
        self.latency = latency
        self.api_key = api_key
        self.models = models
        self.hang_seconds = hang_seconds
        self.reasoning_models = reasoning_models
        self.retry_delay = retry_delay
        self.snapshots = dict(snapshots or {})
        #: extra fields of a model in ``GET /v1/models`` (vLLM's ``root``, ``parent``)
        self.model_fields: dict[str, dict[str, Any]] = {}
        #: ``"hang"`` or an HTTP status for every ``GET /v1/models``; None answers it
        self.models_fault: str | int | None = None
        #: ``GET /v1/models`` requests received
        self.model_probes = 0
        #: whether ``GET /v1/models`` checks ``api_key`` (as vLLM and OpenAI do); False lets a
        #: test's probe pass so that the generation meets the 401
        self.models_check_key = True
        #: thinking / reasoning tokens reported with every answer
        self.reasoning_tokens = 0
        #: Anthropic prompt cache: the system texts marked ``cache_control`` seen so far
        self.prompt_cache: set[str] = set()
        #: prompt tokens reported as served from the prompt cache with every plain answer
        self.cached_tokens = 0
        #: headers added to every OpenAI error answer (``x-should-retry``, ``retry-after-ms``)
        self.error_headers: dict[str, str] = {}
        self.requests: list[FakeRequest] = []
        self.max_in_flight = 0
        self.gather = 0
        self.gather_timeout = 30.0
        self._in_flight = 0
        self._faults: collections.deque[tuple[str | int, Callable | None]] = collections.deque()
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> FakeLLMServer:
        """Bind a random port on 127.0.0.1 and serve in a daemon thread."""
        handler = type("_BoundHandler", (_Handler,), {"fake": self})
        httpd = _Server(("127.0.0.1", 0), handler, bind_and_activate=False)
        httpd.daemon_threads = True
        httpd.request_queue_size = 256
        httpd.server_bind()
        httpd.server_activate()
        self._httpd = httpd
        self._stopping.clear()
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; hanging handlers are released."""
        self._stopping.set()
        with self._arrived:
            self._arrived.notify_all()  # release requests held by ``gather``
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("FakeLLMServer is not started; call start() or use `with`.")
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def gemini_base_url(self) -> str:
        return self.url

    @property
    def anthropic_base_url(self) -> str:
        return self.url

    # -- faults and counts -----------------------------------------------------------------
    def inject(
        self,
        fault: str | int,
        times: int = 1,
        *,
        match: Callable[[FakeRequest], bool] | None = None,
    ) -> None:
        """Answer the next ``times`` (matching) requests with ``fault``."""
        if not (isinstance(fault, int) or fault in FAULTS):
            raise ValueError(f"unknown fault {fault!r}")
        with self._lock:
            for _ in range(times):
                self._faults.append((fault, match))

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    def pending_faults(self) -> int:
        with self._lock:
            return len(self._faults)

    def count(
        self,
        kind: str | None = None,
        *,
        answered: bool | None = None,
        where: Callable[[FakeRequest], bool] | None = None,
    ) -> int:
        """Requests received. ``kind``: exact kind, or ``"openai*"`` / ``"gemini*"`` for both
        plain and stream; ``answered=True`` only those answered normally (no fault);
        ``where`` filters further."""
        with self._lock:
            reqs = list(self.requests)
        out = 0
        for r in reqs:
            if kind is not None:
                if kind.endswith("*"):
                    if not r.kind.startswith(kind[:-1]):
                        continue
                elif r.kind != kind:
                    continue
            if answered is not None and (r.fault is None) != answered:
                continue
            if where is not None and not where(r):
                continue
            out += 1
        return out

    def counts(self) -> collections.Counter:
        with self._lock:
            return collections.Counter(r.kind for r in self.requests)

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.max_in_flight = 0

    # -- internals -------------------------------------------------------------------------
    def _record(self, req: FakeRequest) -> str | int | None:
        """Log the request and pop the fault it should get, if any."""
        with self._lock:
            self.requests.append(req)
            for i, (fault, match) in enumerate(self._faults):
                if match is None or match(req):
                    del self._faults[i]
                    req.fault = fault
                    return fault
        return None

    def _enter(self) -> None:
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            self._arrived.notify_all()

    def _gather(self) -> None:
        """With ``gather`` set: wait until that many requests have been in flight together."""
        with self._arrived:
            if self.gather:
                self._arrived.wait_for(
                    lambda: self.max_in_flight >= self.gather or self._stopping.is_set(),
                    timeout=self.gather_timeout,
                )

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError)):
            return  # the client went away (a cancelled or timed-out request): not an error
        super().handle_error(request, client_address)


def _gemini_messages(body: dict[str, Any]) -> list[dict[str, str]]:
    def text_of(content: Any) -> str:
        if isinstance(content, str):
            return content
        parts = (content or {}).get("parts") or []
        return "".join(p.get("text", "") for p in parts if isinstance(p, dict))

    out = []
    system = body.get("systemInstruction") or body.get("system_instruction")
    if system:
        out.append({"role": "system", "content": text_of(system)})
    for c in body.get("contents") or []:
        role = c.get("role") or "user"
        out.append({"role": "assistant" if role == "model" else role, "content": text_of(c)})
    return out


def _block_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or [] if isinstance(b, dict))


def _anthropic_messages(body: dict[str, Any]) -> list[dict[str, str]]:
    out = []
    if body.get("system"):
        out.append({"role": "system", "content": _block_text(body["system"])})
    for m in body.get("messages") or []:
        out.append({"role": m.get("role", "user"), "content": _block_text(m.get("content"))})
    return out


def _openai_messages(body: dict[str, Any]) -> list[dict[str, str]]:
    out = []
    for m in body.get("messages") or []:
        content = m.get("content")
        if isinstance(content, list):  # content parts
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        role = m.get("role", "user")
        out.append({"role": "system" if role == "developer" else role, "content": content or ""})
    return out


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # reply headers and body go out as two writes
    fake: FakeLLMServer  # set on the bound subclass

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    # -- plumbing --------------------------------------------------------------------------
    def _send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(obj, ensure_ascii=False).encode("utf-8")
        self._send_bytes(status, data, "application/json", headers)

    def _send_bytes(
        self, status: int, data: bytes, ctype: str, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _send_sse(self, events: Iterator[str]) -> None:
        """Server-Sent Events; an event given as ``(name, data)`` gets an ``event:`` line
        (Anthropic names its events)."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for ev in events:
            if isinstance(ev, tuple):
                self.wfile.write(f"event: {ev[0]}\ndata: {ev[1]}\n\n".encode())
            else:
                self.wfile.write(f"data: {ev}\n\n".encode())
            self.wfile.flush()
        self.close_connection = True

    def _drop(self) -> None:
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.connection.close()

    def _read_body(self) -> dict[str, Any] | None:
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        if len(raw) < n:
            raise ConnectionAbortedError("client went away before sending the whole body")
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            return None
        return body if isinstance(body, dict) else None

    def _error(
        self,
        kind: str,
        status: int,
        message: str,
        *,
        details: list | None = None,
        openai_error: dict | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        if kind.startswith("anthropic"):
            names = {
                400: "invalid_request_error",
                401: "authentication_error",
                402: "billing_error",
                403: "permission_error",
                404: "not_found_error",
                413: "request_too_large",
                429: "rate_limit_error",
                529: "overloaded_error",
            }
            body = {
                "type": "error",
                "error": {"type": names.get(status, "api_error"), "message": message},
            }
            headers = {"request-id": f"req_{uuid.uuid4().hex[:12]}", **(headers or {})}
        elif kind.startswith("gemini"):
            names = {
                400: "INVALID_ARGUMENT",
                401: "UNAUTHENTICATED",
                404: "NOT_FOUND",
                429: "RESOURCE_EXHAUSTED",
                500: "INTERNAL",
                503: "UNAVAILABLE",
            }
            body = {
                "error": {
                    "code": status,
                    "message": message,
                    "status": names.get(status, "UNKNOWN"),
                }
            }
            if details:
                body["error"]["details"] = details
        elif openai_error is not None:
            body = {"error": openai_error}
        else:
            types_ = {401: "invalid_request_error", 429: "rate_limit_exceeded"}
            body = {
                "error": {
                    "message": message,
                    "type": types_.get(status, "server_error"),
                    "param": None,
                    "code": None,
                }
            }
        if kind.startswith("openai") and self.fake.error_headers:
            headers = {**self.fake.error_headers, **(headers or {})}
        self._send_json(status, body, headers)

    def _break_stream(self) -> None:
        """200 with SSE headers and chunked encoding, then close before the first chunk."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        self._drop()

    # -- routes ----------------------------------------------------------------------------
    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        path = urlsplit(self.path).path
        if path.rstrip("/") == "/v1/models":
            self.fake.model_probes += 1
            key = (self.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
            if self.fake.models_check_key and self.fake.api_key not in (None, key):
                self._error("openai", 401, "Unauthorized")  # as vLLM's --api-key and OpenAI do
                return
            if self.fake.models_fault == "hang":
                self.fake._sleep(self.fake.hang_seconds)
            elif isinstance(self.fake.models_fault, int):
                self._error("openai", self.fake.models_fault, "models route failed")
                return
            data = [
                {
                    "id": m,
                    "object": "model",
                    "created": 0,
                    "owned_by": "fake",
                    **self.fake.model_fields.get(m, {}),
                }
                for m in self.fake.models
            ]
            self._send_json(200, {"object": "list", "data": data})
            return
        self._send_json(404, {"error": {"message": f"no route GET {path}", "code": 404}})

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        split = urlsplit(self.path)
        path = split.path
        try:
            body = self._read_body()
        except ConnectionAbortedError:  # a cancelled request: not counted, nothing to answer
            self.close_connection = True
            return
        if path.rstrip("/").endswith("/chat/completions"):
            kind = "openai-stream" if (body or {}).get("stream") else "openai"
            model = (body or {}).get("model", "")
            key = (self.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
        elif path.rstrip("/").endswith("/v1/messages"):
            kind = "anthropic-stream" if (body or {}).get("stream") else "anthropic"
            model = (body or {}).get("model", "")
            auth = (self.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
            key = auth or self.headers.get("x-api-key") or ""
        elif ":generateContent" in path or ":streamGenerateContent" in path:
            kind = "gemini-stream" if ":streamGenerateContent" in path else "gemini"
            model = path.rsplit("/", 1)[-1].split(":", 1)[0]
            key = self.headers.get("x-goog-api-key") or parse_qs(split.query).get("key", [""])[0]
        else:
            self._send_json(404, {"error": {"message": f"no route POST {path}", "code": 404}})
            return
        if body is None:
            self._error(kind, 400, "request body is not a JSON object")
            return
        fake = self.fake
        if kind.startswith("gemini"):
            messages = _gemini_messages(body)
        elif kind.startswith("anthropic"):
            messages = _anthropic_messages(body)
        else:
            messages = _openai_messages(body)
        req = FakeRequest(kind, model, self.path, body, dict(self.headers.items()), messages)
        fake._enter()
        try:
            self._serve(fake, req, key)
        finally:
            fake._leave()

    def _serve(self, fake: FakeLLMServer, req: FakeRequest, key: str) -> None:
        fault = fake._record(req)
        fake._gather()
        if fake.api_key is not None and key != fake.api_key:
            req.fault = 401
            # echoes the key it got, as some servers do: the leak tests rely on it
            self._error(req.kind, 401, f"Incorrect API key provided: Bearer {key}.")
            return
        if fault == "hang":
            fake._sleep(fake.hang_seconds)
            fault = None  # answer late, if the client still listens
        fake._sleep(fake.latency)
        if req.kind.startswith("openai") and self._refuse_reasoning(fake, req):
            return
        if req.kind.startswith("anthropic") and self._refuse_sampling(req):
            return
        if fault == "close" or (fault == "break" and not req.stream):
            self._drop()
            return
        if fault == "break":
            self._break_stream()
            return
        if fault == "quota":
            self._quota(fake, req)
            return
        if fault == "overloaded":
            anthropic = req.kind.startswith("anthropic")
            self._error(
                req.kind,
                529 if anthropic else 503,
                "Overloaded" if anthropic else "The service is overloaded (fake server)",
                headers={"retry-after": f"{fake.retry_delay:g}"},
            )
            return
        if fault in ("insufficient_quota", "daily_quota"):
            self._exhausted(fake, req)
            return
        if fault == "safety":
            self._safety(req)
            return
        if fault == "malformed":
            self._send_bytes(200, b'{"choices": [ this is not json', "application/json")
            return
        if isinstance(fault, int):
            self._error(req.kind, fault, f"injected HTTP {fault} (fake server)")
            return
        if fault == "empty":
            reply = ""
        else:
            try:
                reply = fake.responder(req)
            except _Fail as exc:
                req.fault = exc.fault
                if isinstance(exc.fault, int):
                    self._error(req.kind, exc.fault, f"HTTP {exc.fault} from responder")
                else:
                    self._drop()
                return
        req.reply = reply
        served = fake.snapshots.get(req.model, req.model)
        prompt_tokens, completion_tokens = len(req.text), len(reply)
        if req.kind.startswith("anthropic"):
            self._anthropic(fake, req, served, reply, "max_tokens" if fault == "length" else None)
            return
        if (fault == "length" or fake.reasoning_tokens or fake.cached_tokens) and not req.stream:
            body = _full_reply(req, served, reply, fake.reasoning_tokens, fault)
            cached = min(fake.cached_tokens, prompt_tokens)
            if req.kind.startswith("gemini"):
                body["usageMetadata"]["cachedContentTokenCount"] = cached
            else:
                body["usage"]["prompt_tokens_details"] = {
                    "cached_tokens": cached,
                    "audio_tokens": 0,
                }
            self._send_json(200, body)
            return
        if req.kind == "openai":
            self._send_json(200, _openai_reply(served, reply, prompt_tokens, completion_tokens))
        elif req.kind == "openai-stream":
            usage = bool((req.body.get("stream_options") or {}).get("include_usage"))
            self._send_sse(_openai_chunks(served, reply, prompt_tokens, completion_tokens, usage))
        elif req.kind == "gemini":
            self._send_json(200, _gemini_reply(served, reply, prompt_tokens, completion_tokens))
        else:
            self._send_sse(_gemini_chunks(served, reply, prompt_tokens, completion_tokens))

    def _refuse_sampling(self, req: FakeRequest) -> bool:
        """Anthropic API version 2026-10-21 refuses sampling settings, even at their
        defaults (the 2.x SDKs send that version and have no such arguments)."""
        version = req.headers.get("anthropic-version") or req.headers.get("Anthropic-Version")
        for name in ("temperature", "top_p", "top_k"):
            if name in req.body and version != "2023-06-01":
                req.fault = 400
                self._error(req.kind, 400, f"{name}: Extra inputs are not permitted")
                return True
        return False

    def _refuse_reasoning(self, fake: FakeLLMServer, req: FakeRequest) -> bool:
        """OpenAI's 400s for a reasoning model (GPT-5, o-series), bodies as the API sends them."""
        if not req.model.startswith(tuple(fake.reasoning_models)):
            return False
        body = req.body
        if "temperature" in body and body["temperature"] != 1:
            value = body["temperature"]
            shown = int(value) if float(value).is_integer() else value
            req.fault = 400
            message = (
                f"Unsupported value: 'temperature' does not support {shown} with this model. "
                "Only the default (1) value is supported."
            )
            error = {
                "message": message,
                "type": "invalid_request_error",
                "param": "temperature",
                "code": "unsupported_value",
            }
            self._error(req.kind, 400, message, openai_error=error)
            return True
        if "max_tokens" in body:
            req.fault = 400
            message = (
                "Unsupported parameter: 'max_tokens' is not supported with this model. "
                "Use 'max_completion_tokens' instead."
            )
            error = {
                "message": message,
                "type": "invalid_request_error",
                "param": "max_tokens",
                "code": "unsupported_parameter",
            }
            self._error(req.kind, 400, message, openai_error=error)
            return True
        return False

    def _anthropic(
        self, fake: FakeLLMServer, req: FakeRequest, model: str, text: str, stop: str | None
    ) -> None:
        """A Messages API answer (plain or streamed) with its prompt-cache usage."""
        usage = _anthropic_usage(fake, req, len(text))
        stop = stop or ("end_turn" if text or req.fault != "safety" else "refusal")
        if not req.stream:
            self._send_json(200, _anthropic_reply(model, text, stop, usage))
            return
        self._send_sse(_anthropic_events(model, text, stop, usage))

    def _quota(self, fake: FakeLLMServer, req: FakeRequest) -> None:
        delay = f"{fake.retry_delay:g}s"
        if req.kind.startswith("anthropic"):
            message = (
                "This request would exceed the rate limit for your organization of 50 "
                "requests per minute. For details, refer to: "
                "https://docs.claude.com/en/api/rate-limits."
            )
            self._error(req.kind, 429, message, headers={"retry-after": f"{fake.retry_delay:g}"})
            return
        if req.kind.startswith("gemini"):
            details = [
                {
                    "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                    "violations": [
                        {
                            "quotaMetric": "generativelanguage.googleapis.com/"
                            "generate_content_free_tier_requests",
                            "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
                            "quotaDimensions": {"location": "global", "model": req.model},
                            "quotaValue": "10",
                        }
                    ],
                },
                {
                    "@type": "type.googleapis.com/google.rpc.Help",
                    "links": [
                        {
                            "description": "Learn more about Gemini API quotas",
                            "url": "https://ai.google.dev/gemini-api/docs/rate-limits",
                        }
                    ],
                },
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay},
            ]
            message = (
                "You exceeded your current quota, please check your plan and billing details. "
                f"Please retry in {fake.retry_delay}s."
            )
            self._error(req.kind, 429, message, details=details)
        else:
            error = {
                "message": "Rate limit reached for requests per min. Please try again later.",
                "type": "requests",
                "param": None,
                "code": "rate_limit_exceeded",
            }
            self._error(
                req.kind,
                429,
                "",
                openai_error=error,
                headers={"retry-after": f"{fake.retry_delay:g}"},
            )

    def _exhausted(self, fake: FakeLLMServer, req: FakeRequest) -> None:
        """A used-up quota, as each API answers it: OpenAI's ``insufficient_quota`` 429 (no
        retry-after), Gemini's 429 naming the per-day request quota, Anthropic's 400 for an
        organisation whose credit balance is used up."""
        if req.kind.startswith("anthropic"):
            message = (
                "Your credit balance is too low to access the Anthropic API. Please go to "
                "Plans & Billing to upgrade or purchase credits."
            )
            self._error(req.kind, 400, message)
            return
        if req.kind.startswith("gemini"):
            details = [
                {
                    "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                    "violations": [
                        {
                            "quotaMetric": "generativelanguage.googleapis.com/"
                            "generate_content_free_tier_requests",
                            "quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
                            "quotaDimensions": {"location": "global", "model": req.model},
                            "quotaValue": "250",
                        }
                    ],
                },
                {
                    "@type": "type.googleapis.com/google.rpc.Help",
                    "links": [
                        {
                            "description": "Learn more about Gemini API quotas",
                            "url": "https://ai.google.dev/gemini-api/docs/rate-limits",
                        }
                    ],
                },
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "41s"},
            ]
            message = (
                "You exceeded your current quota, please check your plan and billing details. "
                "For more information on this error, head to: "
                "https://ai.google.dev/gemini-api/docs/rate-limits."
            )
            self._error(req.kind, 429, message, details=details)
            return
        error = {
            "message": "You exceeded your current quota, please check your plan and billing "
            "details. For more information on this error, read the docs: "
            "https://platform.openai.com/docs/guides/error-codes/api-errors.",
            "type": "insufficient_quota",
            "param": None,
            "code": "insufficient_quota",
        }
        self._error(req.kind, 429, "", openai_error=error)

    def _safety(self, req: FakeRequest) -> None:
        req.reply = ""
        p = len(req.text)
        if req.kind.startswith("anthropic"):
            self._anthropic(self.fake, req, req.model, "", "refusal")
            return
        if req.kind.startswith("gemini"):
            cand = {
                "finishReason": "SAFETY",
                "index": 0,
                "safetyRatings": [
                    {"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"},
                    {
                        "category": "HARM_CATEGORY_DANGEROUS_CONTENT",
                        "probability": "HIGH",
                        "blocked": True,
                    },
                ],
            }
            reply = {
                "candidates": [cand],
                "usageMetadata": {"promptTokenCount": p, "totalTokenCount": p},
                "modelVersion": req.model,
            }
            if req.stream:
                self._send_sse(iter([json.dumps(reply)]))
            else:
                self._send_json(200, reply)
            return
        if req.stream:
            chunks = _openai_chunks(req.model, "", p, 0, False)
            events = [
                c.replace('"finish_reason": "stop"', '"finish_reason": "content_filter"')
                for c in chunks
            ]
            self._send_sse(iter(events))
            return
        body = _openai_reply(req.model, "", p, 0)
        body["choices"][0]["message"]["content"] = None
        body["choices"][0]["finish_reason"] = "content_filter"
        self._send_json(200, body)


def _pieces(text: str, n: int = 3) -> list[str]:
    if not text:
        return [""]
    step = max(1, -(-len(text) // n))
    return [text[i : i + step] for i in range(0, len(text), step)]


def _openai_usage(p: int, c: int) -> dict[str, int]:
    return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}


def _openai_reply(model: str, text: str, p: int, c: int) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": _openai_usage(p, c),
    }


def _openai_chunks(model: str, text: str, p: int, c: int, usage: bool) -> Iterator[str]:
    cid, created = f"chatcmpl-{uuid.uuid4().hex[:12]}", int(time.time())

    def chunk(delta: dict, finish: str | None, **extra: Any) -> str:
        obj = {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            **extra,
        }
        return json.dumps(obj, ensure_ascii=False)

    yield chunk({"role": "assistant", "content": ""}, None)
    for piece in _pieces(text):
        yield chunk({"content": piece}, None)
    yield chunk({}, "stop")
    if usage:
        yield json.dumps(
            {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [],
                "usage": _openai_usage(p, c),
            }
        )
    yield "[DONE]"


def _anthropic_usage(fake: FakeLLMServer, req: FakeRequest, c: int) -> dict[str, int]:
    """Tokens as characters; a ``cache_control`` system block is written, then read."""
    cached = written = 0
    system = req.body.get("system")
    for block in system if isinstance(system, list) else []:
        if isinstance(block, dict) and (block.get("cache_control") or {}).get("type") == (
            "ephemeral"
        ):
            text = str(block.get("text", ""))
            with fake._lock:
                seen = text in fake.prompt_cache
                fake.prompt_cache.add(text)
            if seen:
                cached += len(text)
            else:
                written += len(text)
    return {
        "input_tokens": len(req.text) - cached - written,
        "output_tokens": c + fake.reasoning_tokens,
        "output_tokens_details": {"thinking_tokens": fake.reasoning_tokens},
        "cache_creation_input_tokens": written,
        "cache_read_input_tokens": cached,
    }


def _anthropic_message(model: str, stop: str | None, usage: dict[str, int]) -> dict[str, Any]:
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage,
    }


def _anthropic_reply(model: str, text: str, stop: str, usage: dict[str, int]) -> dict[str, Any]:
    body = _anthropic_message(model, stop, usage)
    if text:
        body["content"] = [{"type": "text", "text": text}]
    return body


def _anthropic_events(
    model: str, text: str, stop: str, usage: dict[str, int]
) -> Iterator[tuple[str, str]]:
    def ev(name: str, **data: Any) -> tuple[str, str]:
        return name, json.dumps({"type": name, **data}, ensure_ascii=False)

    yield ev(
        "message_start", message=_anthropic_message(model, None, {**usage, "output_tokens": 1})
    )
    if text:
        yield ev("content_block_start", index=0, content_block={"type": "text", "text": ""})
        yield ev("ping")
        for piece in _pieces(text):
            yield ev("content_block_delta", index=0, delta={"type": "text_delta", "text": piece})
        yield ev("content_block_stop", index=0)
    yield ev(
        "message_delta",
        delta={"stop_reason": stop, "stop_sequence": None},
        usage={
            "output_tokens": usage["output_tokens"],
            "output_tokens_details": usage["output_tokens_details"],
        },
    )
    yield ev("message_stop")


def _gemini_usage(p: int, c: int) -> dict[str, int]:
    return {"promptTokenCount": p, "candidatesTokenCount": c, "totalTokenCount": p + c}


def _gemini_reply(model: str, text: str, p: int, c: int, finish: str | None = "STOP"):
    cand: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": text}]}, "index": 0}
    if finish:
        cand["finishReason"] = finish
    return {"candidates": [cand], "usageMetadata": _gemini_usage(p, c), "modelVersion": model}


def _full_reply(
    req: FakeRequest, served: str, text: str, reasoning: int, fault: Any
) -> dict[str, Any]:
    """A plain (not streamed) answer with reasoning tokens, or cut by the token limit."""
    p, c = len(req.text), len(text)
    if req.kind.startswith("gemini"):
        body = _gemini_reply(served, text, p, c, "MAX_TOKENS" if fault == "length" else "STOP")
        if reasoning:
            body["usageMetadata"]["thoughtsTokenCount"] = reasoning
            body["usageMetadata"]["totalTokenCount"] += reasoning
        return body
    body = _openai_reply(served, text, p, c + reasoning)
    if fault == "length":
        body["choices"][0]["finish_reason"] = "length"
    body["usage"]["completion_tokens_details"] = {
        "reasoning_tokens": reasoning,
        "audio_tokens": 0,
        "accepted_prediction_tokens": 0,
        "rejected_prediction_tokens": 0,
    }
    return body


def _gemini_chunks(model: str, text: str, p: int, c: int) -> Iterator[str]:
    pieces = _pieces(text)
    for i, piece in enumerate(pieces):
        last = i == len(pieces) - 1
        yield json.dumps(
            _gemini_reply(model, piece, p, c if last else 0, "STOP" if last else None),
            ensure_ascii=False,
        )


@pytest.fixture
def fake_llm_server() -> Iterator[FakeLLMServer]:
    """A started :class:`FakeLLMServer` with the echo responder, stopped after the test."""
    with FakeLLMServer() as server:
        yield server
