"""The fake LLM server object: lifecycle, scripted faults, request log and counts (see the
package docstring for the API)."""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from typing import Any

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
        from .batch import BatchDesk

        #: the batch interfaces' state and knobs (:mod:`.batch`)
        self.batches = BatchDesk(self)
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> FakeLLMServer:
        """Bind a random port on 127.0.0.1 and serve in a daemon thread."""
        from .handler import _Handler, _Server

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


@pytest.fixture
def fake_llm_server() -> Iterator[FakeLLMServer]:
    """A started :class:`FakeLLMServer` with the echo responder, stopped after the test."""
    with FakeLLMServer() as server:
        yield server
