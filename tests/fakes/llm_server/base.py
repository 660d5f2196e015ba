"""The fake LLM server's shared core: the server object (lifecycle, scripted faults, request log
and counts), the HTTP plumbing, the one path every chat request takes (key check, faults,
latency, the responder) and the batch jobs' bookkeeping. What a protocol says on the wire is
its own module's (:class:`Wire`: :mod:`.openai`, :mod:`.gemini`, :mod:`.anthropic`)."""

from __future__ import annotations

import collections
import json
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import pytest

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
    #: the decoding settings: OpenAI's top-level fields, Gemini's ``generationConfig`` ...
    settings: dict[str, Any] = field(default_factory=dict)

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


class Fail(Exception):
    """Raised by a responder: answer this one request with ``fault``."""

    def __init__(self, fault: str | int):
        super().__init__(str(fault))
        self.fault = fault


def pieces(text: str, n: int = 3) -> list[str]:
    """``text`` in about ``n`` pieces, as a stream sends it."""
    if not text:
        return [""]
    step = max(1, -(-len(text) // n))
    return [text[i : i + step] for i in range(0, len(text), step)]


class Wire:
    """One protocol: its chat route, request and reply shapes, error bodies and fault answers.
    Each method answering a fault takes the handler ``h`` and the request."""

    #: the name of its kinds (``openai``, ``openai-stream``) and of ``<name>_base_url``
    name = ""
    #: what the SDK's base URL adds to the server's
    base_path = ""

    def chat(self, path: str) -> bool:
        """Whether ``POST path`` is this protocol's chat call."""
        raise NotImplementedError

    def parse(self, h: Handler, path: str, body: dict[str, Any]) -> tuple[bool, str, str]:
        """``(stream, model, key)`` of a chat call."""
        raise NotImplementedError

    def messages(self, body: dict[str, Any]) -> list[dict[str, str]]:
        raise NotImplementedError

    def settings(self, body: dict[str, Any]) -> dict[str, Any]:
        skip = ("messages", "model", "system")
        return {k: v for k, v in body.items() if k not in skip}

    def route(self, h: Handler, method: str, path: str) -> bool:
        """Answer a route other than the chat call (models, batches); False when not one."""
        return False

    def error(
        self, h: Handler, status: int, message: str, headers: dict[str, str] | None = None
    ) -> None:
        """HTTP ``status`` with the protocol's error body."""
        raise NotImplementedError

    def refuse(self, h: Handler, req: FakeRequest) -> bool:
        """Refuse settings the real service refuses (a 400), True when it did."""
        return False

    def answer(self, h: Handler, req: FakeRequest, model: str, text: str, cut: bool) -> None:
        """``text`` as served by ``model``, plain or streamed; ``cut``: stopped by the token
        limit."""
        raise NotImplementedError

    # -- the real failure shapes, by fault -------------------------------------------------
    def quota(self, h: Handler, req: FakeRequest) -> None:
        """A per-minute rate limit, with the delay the service suggests."""
        raise NotImplementedError

    def insufficient_quota(self, h: Handler, req: FakeRequest) -> None:
        """A used-up quota or credit that no wait cures."""
        raise NotImplementedError

    def daily_quota(self, h: Handler, req: FakeRequest) -> None:
        self.insufficient_quota(h, req)

    def overloaded(self, h: Handler, req: FakeRequest) -> None:
        delay = {"retry-after": f"{h.fake.retry_delay:g}"}
        self.error(h, 503, "The service is overloaded (fake server)", delay)

    def safety(self, h: Handler, req: FakeRequest) -> None:
        """A blocked answer, with no text."""
        raise NotImplementedError


class FakeLLMServer:
    """Loopback server for the real SDKs of every wire (see the package docstring)."""

    Fail = Fail

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
        from . import WIRES

        self.wires: dict[str, Wire] = WIRES
        self.responder: Callable[[FakeRequest], str] = responder or (lambda req: req.user)
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
        #: the batch interfaces' state and knobs
        self.batches = BatchDesk(self)
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> FakeLLMServer:
        """Bind a random port on 127.0.0.1 and serve in a daemon thread."""
        handler = type("_BoundHandler", (Handler,), {"fake": self})
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

    def __getattr__(self, name: str) -> Any:
        """``<wire>_base_url``: the base URL that wire's SDK is given."""
        wire = self.__dict__.get("wires", {}).get(name.removesuffix("_base_url"))
        if name.endswith("_base_url") and wire is not None:
            return self.url + wire.base_path
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

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
            if kind is not None and not (
                r.kind.startswith(kind[:-1]) if kind.endswith("*") else r.kind == kind
            ):
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
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return  # the client went away (a cancelled or timed-out request): not an error
        super().handle_error(request, client_address)


class Handler(BaseHTTPRequestHandler):
    """The HTTP side: routes each request to its wire, and the chat path shared by all."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # reply headers and body go out as two writes
    fake: FakeLLMServer  # set on the bound subclass

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    # -- plumbing --------------------------------------------------------------------------
    def send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(obj, ensure_ascii=False).encode("utf-8")
        self.send_bytes(status, data, "application/json", headers)

    def send_bytes(
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

    def send_sse(self, events: Iterator[str | tuple[str, str]]) -> None:
        """Server-Sent Events; an event given as ``(name, data)`` gets an ``event:`` line."""
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

    def drop(self) -> None:
        """Close the connection without a reply."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.connection.close()

    def raw_body(self) -> bytes:
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        if len(raw) < n:
            raise ConnectionAbortedError("client went away before sending the whole body")
        return raw

    def _break_stream(self) -> None:
        """200 with SSE headers and chunked encoding, then close before the first chunk."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        self.drop()

    # -- routes ----------------------------------------------------------------------------
    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        path = urlsplit(self.path).path
        if not any(w.route(self, "GET", path) for w in self.fake.wires.values()):
            self.send_json(404, {"error": {"message": f"no route GET {path}", "code": 404}})

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        path = urlsplit(self.path).path
        wires = self.fake.wires.values()
        if any(w.route(self, "POST", path) for w in wires):
            return
        try:
            raw = self.raw_body()
        except ConnectionAbortedError:  # a cancelled request: not counted, nothing to answer
            self.close_connection = True
            return
        wire = next((w for w in wires if w.chat(path)), None)
        if wire is None:
            self.send_json(404, {"error": {"message": f"no route POST {path}", "code": 404}})
            return
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = None
        if not isinstance(body, dict):
            wire.error(self, 400, "request body is not a JSON object")
            return
        stream, model, key = wire.parse(self, path, body)
        kind = f"{wire.name}-stream" if stream else wire.name
        headers = dict(self.headers.items())
        req = FakeRequest(
            kind, model, self.path, body, headers, wire.messages(body), settings=wire.settings(body)
        )
        self.fake._enter()
        try:
            self._serve(wire, req, key)
        finally:
            self.fake._leave()

    def _serve(self, wire: Wire, req: FakeRequest, key: str) -> None:
        fake = self.fake
        fault = fake._record(req)
        fake._gather()
        if fake.api_key is not None and key != fake.api_key:
            req.fault = 401
            # echoes the key it got, as some servers do: the leak tests rely on it
            wire.error(self, 401, f"Incorrect API key provided: Bearer {key}.")
            return
        if fault == "hang":
            fake._sleep(fake.hang_seconds)
            fault = None  # answer late, if the client still listens
        fake._sleep(fake.latency)
        if wire.refuse(self, req):
            return
        if fault == "close" or (fault == "break" and not req.stream):
            self.drop()
        elif fault == "break":
            self._break_stream()
        elif fault in ("quota", "overloaded", "insufficient_quota", "daily_quota", "safety"):
            getattr(wire, fault)(self, req)
        elif fault == "malformed":
            self.send_bytes(200, b'{"choices": [ this is not json', "application/json")
        elif isinstance(fault, int):
            wire.error(self, fault, f"injected HTTP {fault} (fake server)")
        else:
            try:
                text = "" if fault == "empty" else fake.responder(req)
            except Fail as exc:
                req.fault = exc.fault
                if isinstance(exc.fault, int):
                    wire.error(self, exc.fault, f"HTTP {exc.fault} from responder")
                else:
                    self.drop()
                return
            req.reply = text
            wire.answer(
                self, req, fake.snapshots.get(req.model, req.model), text, fault == "length"
            )


# -- batch jobs ------------------------------------------------------------------------------


@dataclass
class FakeBatch:
    """One batch job as the fake holds it."""

    id: str
    wire: str
    model: str
    #: (custom id or metadata, request body) in input order
    lines: list[tuple[Any, dict[str, Any]]]
    #: the wire's states before the job is done, and the name of each way it ends
    steps: tuple[str, ...]
    ends: dict[str, str]
    step: int = 0
    reads: int = 0
    status: str = ""
    cancelled: bool = False
    invalid: list[dict[str, Any]] = field(default_factory=list)
    created_at: int = field(default_factory=lambda: int(time.time()))
    output: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    output_file_id: str | None = None
    error_file_id: str | None = None
    input_file_id: str = ""
    #: what the wire keeps from the request that made it (a display name, metadata ...)
    info: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.status = self.status or self.steps[0]


class BatchDesk:
    """The batch jobs and files of every wire, and the knobs tests script them with.

    A job moves one state per ``polls_per_state`` reads, never with the clock. ``outcome``
    ``"failed"`` fails every job as a whole; ``answer_limit`` answers only that many requests
    and lets the job expire; ``item_fault(req) -> HTTP status | None`` fails requests inside a
    job; :meth:`fail` fails the next calls of a batch route (``"openai batches.get"`` ...),
    which ``calls`` counts. Each request in a job is answered by the server's ``responder`` and
    logged in ``items`` (kinds ``openai-batch``, ``gemini-batch``), not in the server's
    ``requests``."""

    def __init__(self, fake: FakeLLMServer):
        self.fake = fake
        self.polls_per_state = 1
        self.outcome = "completed"
        self.answer_limit: int | None = None
        self.item_fault: Callable[[FakeRequest], int | None] | None = None
        self.files: dict[str, tuple[str, bytes]] = {}
        self.jobs: dict[str, FakeBatch] = {}
        self.items: list[FakeRequest] = []
        self.calls: collections.Counter = collections.Counter()
        #: call name -> HTTP statuses the next calls of it get (:meth:`fail`)
        self.faults: dict[str, collections.deque[int]] = collections.defaultdict(collections.deque)
        self._lock = threading.Lock()

    def fail(self, call: str, status: int, times: int = 1) -> None:
        """Answer the next ``times`` calls of ``call`` (``"openai batches.get"`` ...) with
        HTTP ``status`` and the protocol's error body (the job does not move)."""
        with self._lock:
            self.faults[call].extend([status] * times)

    def count(self, call: str) -> int:
        with self._lock:
            return self.calls[call]

    def faulted(self, h: Handler, wire: Wire, call: str) -> bool:
        """Count ``call`` (named after the wire); answer it with a scripted fault if one is
        queued (True)."""
        name = f"{wire.name} {call}"
        with self._lock:
            self.calls[name] += 1
            status = self.faults[name].popleft() if self.faults[name] else None
        if status is None:
            return False
        h.raw_body()  # read what was sent before answering
        wire.error(h, status, f"injected HTTP {status} (fake batch route)")
        return True

    def store_file(self, name: str, data: bytes) -> str:
        file_id = f"file-{uuid.uuid4().hex[:24]}"
        with self._lock:
            self.files[file_id] = (name, data)
        return file_id

    def add(self, job: FakeBatch) -> None:
        with self._lock:
            self.jobs[job.id] = job

    def cancel(self, job: FakeBatch, status: str | None = None) -> None:
        """Mark ``job`` cancelled (in state ``status`` until its next read, where given)."""
        with self._lock:
            if job.status in job.steps:
                job.cancelled = True
                job.status = status or job.status

    def read(self, job: FakeBatch, finish: Callable[[BatchDesk, FakeBatch, bool], None]) -> None:
        """One read: move ``job`` on one state every ``polls_per_state`` reads; at the end,
        ``finish(desk, job, expired)`` answers its requests (outside the lock: the responder may
        take its own)."""
        with self._lock:
            job.reads += 1
            if job.reads % max(1, self.polls_per_state):
                return
            if job.cancelled and job.status not in job.ends.values():
                job.status = job.ends["cancelled"]
                return
            if job.status not in job.steps:
                return  # finished
            job.step += 1
            if job.invalid:
                job.status = job.ends["failed"]
                return
            if job.step < len(job.steps):
                job.status = job.steps[job.step]
                return
        if self.outcome == "failed":
            job.status = job.ends["failed"]
            return
        finish(self, job, self.answer_limit is not None)

    def answer(
        self, job: FakeBatch, model: str, body: dict[str, Any], messages: list[dict[str, str]]
    ) -> tuple[FakeRequest, str]:
        """One request of ``job``, answered (its ``reply``) or failed (its ``fault``, an HTTP
        status from ``item_fault`` or the responder's :class:`Fail`); and the served model."""
        req = FakeRequest(f"{job.wire}-batch", model, job.id, body, {}, messages)
        with self._lock:
            self.items.append(req)
        status = self.item_fault(req) if self.item_fault is not None else None
        text = ""
        if status is None:
            try:
                text = self.fake.responder(req)
            except Fail as exc:
                status = exc.fault if isinstance(exc.fault, int) else 500
        req.fault, req.reply = status, (None if status else text)
        return req, self.fake.snapshots.get(model, model)


@pytest.fixture
def fake_llm_server() -> Iterator[FakeLLMServer]:
    """A started :class:`FakeLLMServer` with the echo responder, stopped after the test."""
    with FakeLLMServer() as server:
        yield server
