"""The batch interfaces of the fake server, as the real SDKs drive them.

OpenAI (``openai`` SDK: ``client.files.create``, ``client.batches.create / retrieve / cancel``,
``client.files.content``):

- ``POST /v1/files`` (multipart: ``purpose=batch`` and ``file``, a JSONL of
  ``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}`` lines) -> a
  ``file`` object; ``GET /v1/files/{id}/content`` -> the file's bytes.
- ``POST /v1/batches`` (``input_file_id``, ``endpoint``, ``completion_window``) -> a ``batch``
  object in ``validating``; ``GET /v1/batches/{id}`` moves it one state per
  ``polls_per_state`` reads: ``validating`` -> ``in_progress`` -> ``finalizing`` ->
  ``completed`` (or ``expired`` when ``answer_limit`` is set, ``failed`` when the input does not
  validate or ``outcome`` is ``"failed"``); ``POST /v1/batches/{id}/cancel`` -> ``cancelling``,
  then ``cancelled`` at the next read. At the end, ``output_file_id`` holds one line per
  answered request (``{"id", "custom_id", "response": {"status_code": 200, "request_id",
  "body": <chat completion>}, "error": null}``) and ``error_file_id`` one per failed one (a
  non-200 ``response`` with an ``error`` body, or ``"response": null, "error": {"code":
  "batch_expired", ...}`` for requests the window did not reach), as the Batch API documents.

Gemini (``google-genai``: ``client.batches.create(model=..., src=[inlined requests])``,
``client.batches.get(name=...)``, ``client.batches.cancel(name=...)``):

- ``POST /{version}/models/{model}:batchGenerateContent`` with ``batch.inputConfig.requests.requests``
  (``{"request": <generateContent body>, "metadata": {...}}``) -> an operation named
  ``batches/{id}`` whose ``metadata.state`` is ``BATCH_STATE_PENDING``; ``GET
  /{version}/batches/{id}`` (OpenAI's batch ids start ``batch_``, Gemini's do not) moves it to ``BATCH_STATE_RUNNING``, then ``BATCH_STATE_SUCCEEDED``
  (``BATCH_STATE_EXPIRED`` with ``answer_limit`` set: no results, as an expired Gemini job has
  none; ``BATCH_STATE_FAILED`` with ``outcome="failed"``), whose ``metadata.output.
  inlinedResponses.inlinedResponses`` holds one ``{"response", "metadata"}`` or ``{"error",
  "metadata"}`` per request, in order (the SDK turns ``BATCH_STATE_*`` into ``JOB_STATE_*``).

Each request in a batch is answered by the server's ``responder`` as an online one would be
(tokens are characters), but logged in ``items`` (kinds ``openai-batch``, ``gemini-batch``),
not in the server's ``requests``: ``server.count("openai")`` counts online calls only.
``item_fault(req)`` (None: none) returns an HTTP status for the requests to fail inside a batch;
``calls`` counts the batch routes (``"openai batches.create"``, ``"gemini batches.get"`` ...).
Nothing moves with the clock: only reads move a batch on, so tests are deterministic.
"""

from __future__ import annotations

import collections
import json
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from typing import TYPE_CHECKING, Any

from .server import FakeRequest, _Fail
from .wire import _gemini_messages, _gemini_reply, _openai_messages, _openai_reply

if TYPE_CHECKING:
    from .server import FakeLLMServer

OPENAI_STEPS = ("validating", "in_progress", "finalizing")
GEMINI_STEPS = ("BATCH_STATE_PENDING", "BATCH_STATE_RUNNING")
EXPIRED_MESSAGE = "This request could not be executed before the completion window expired."


@dataclass
class FakeBatch:
    """One batch job as the fake holds it."""

    id: str
    provider: str  # "openai" or "gemini"
    model: str
    #: (custom id or metadata, request body) in input order
    lines: list[tuple[Any, dict[str, Any]]]
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


class BatchDesk:
    """The fake's batch state and scripting knobs (see the module docstring)."""

    def __init__(self, fake: FakeLLMServer):
        self.fake = fake
        #: reads of a batch before it moves to its next state
        self.polls_per_state = 1
        #: ``"completed"`` or ``"failed"`` (the job fails as a whole)
        self.outcome = "completed"
        #: when set, only that many requests are answered and the batch expires
        self.answer_limit: int | None = None
        #: ``item_fault(req) -> HTTP status | None``: requests that fail inside the batch
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

    # -- routing ---------------------------------------------------------------------------
    def route(self, handler: Any, method: str, path: str) -> bool:
        """Answer ``method path`` when it is a batch route (True), else leave it (False)."""
        p = path.rstrip("/")
        if method == "POST" and p == "/v1/files":
            self._upload(handler)
        elif method == "GET" and p.startswith("/v1/files/") and p.endswith("/content"):
            self._content(handler, p.split("/")[3])
        elif method == "POST" and p == "/v1/batches":
            self._openai_create(handler)
        elif method == "GET" and p.startswith("/v1/batches/batch_"):
            self._openai_get(handler, p.split("/")[3])
        elif method == "POST" and p.startswith("/v1/batches/batch_") and p.endswith("/cancel"):
            self._openai_cancel(handler, p.split("/")[3])
        elif method == "POST" and ":batchGenerateContent" in p:
            self._gemini_create(handler, p.rsplit("/", 1)[-1].split(":", 1)[0])
        elif method == "GET" and p.split("/")[1].startswith("v1") and p.split("/")[2] == "batches":
            self._gemini_get(handler, p.rsplit("/", 1)[-1])
        elif method == "POST" and "/batches/" in p and p.endswith(":cancel"):
            self._gemini_cancel(handler, p.rsplit("/", 1)[-1].split(":", 1)[0])
        else:
            return False
        return True

    def _faulted(self, handler: Any, call: str) -> bool:
        """Count ``call``; answer it with a scripted fault if one is queued (True)."""
        with self._lock:
            self.calls[call] += 1
            status = self.faults[call].popleft() if self.faults[call] else None
        if status is None:
            return False
        self._body(handler)  # read what was sent before answering
        handler._error(call.split()[0], status, f"injected HTTP {status} (fake batch route)")
        return True

    def count(self, call: str) -> int:
        with self._lock:
            return self.calls[call]

    @staticmethod
    def _body(handler: Any) -> bytes:
        n = int(handler.headers.get("Content-Length") or 0)
        return handler.rfile.read(n) if n else b""

    # -- OpenAI ----------------------------------------------------------------------------
    def _upload(self, handler: Any) -> None:
        if self._faulted(handler, "openai files.create"):
            return
        raw = self._body(handler)
        ctype = handler.headers.get("Content-Type", "")
        msg = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {ctype}\r\n\r\n".encode() + raw)
        purpose, name, data = "", "upload", b""
        for part in msg.iter_parts():
            field_name = part.get_param("name", header="content-disposition")
            if field_name == "purpose":
                purpose = part.get_content().strip()
            elif field_name == "file":
                name = part.get_filename() or name
                data = part.get_payload(decode=True) or b""
        if purpose != "batch":
            handler._error("openai", 400, f"purpose must be 'batch' here, not {purpose!r}")
            return
        file_id = self._store_file(name, data)
        handler._send_json(200, self._file_object(file_id, "batch"))

    def _store_file(self, name: str, data: bytes) -> str:
        file_id = f"file-{uuid.uuid4().hex[:24]}"
        with self._lock:
            self.files[file_id] = (name, data)
        return file_id

    def _file_object(self, file_id: str, purpose: str) -> dict[str, Any]:
        name, data = self.files[file_id]
        return {
            "id": file_id,
            "object": "file",
            "bytes": len(data),
            "created_at": int(time.time()),
            "filename": name,
            "purpose": purpose,
            "status": "processed",
        }

    def _content(self, handler: Any, file_id: str) -> None:
        if self._faulted(handler, "openai files.content"):
            return
        if file_id not in self.files:
            handler._error("openai", 404, f"No such File object: {file_id}")
            return
        handler._send_bytes(200, self.files[file_id][1], "application/octet-stream")

    def _openai_create(self, handler: Any) -> None:
        if self._faulted(handler, "openai batches.create"):
            return
        body = json.loads(self._body(handler) or b"{}")
        file_id = body.get("input_file_id", "")
        if file_id not in self.files:
            handler._error("openai", 400, f"input_file_id {file_id!r} not found")
            return
        endpoint = body.get("endpoint")
        lines, invalid, seen = [], [], set()
        for n, text in enumerate(self.files[file_id][1].decode().splitlines(), 1):
            if not text.strip():
                continue
            line = json.loads(text)
            cid = line.get("custom_id")
            if cid in seen or line.get("url") != endpoint or line.get("method") != "POST":
                what = "duplicate custom_id" if cid in seen else "url/method do not match"
                invalid.append({"code": "invalid_request", "message": what, "line": n})
            seen.add(cid)
            lines.append((cid, line.get("body") or {}))
        model = lines[0][1].get("model", "") if lines else ""
        job = FakeBatch(f"batch_{uuid.uuid4().hex[:24]}", "openai", model, lines, invalid=invalid)
        job.input_file_id = file_id
        job.status = OPENAI_STEPS[0]
        with self._lock:
            self.jobs[job.id] = job
        handler._send_json(200, self._openai_object(job, body))

    def _openai_get(self, handler: Any, batch_id: str) -> None:
        if self._faulted(handler, "openai batches.get"):
            return
        job = self.jobs.get(batch_id)
        if job is None:
            handler._error("openai", 404, f"No batch found with id '{batch_id}'.")
            return
        self._advance(job)
        handler._send_json(200, self._openai_object(job))

    def _openai_cancel(self, handler: Any, batch_id: str) -> None:
        if self._faulted(handler, "openai batches.cancel"):
            return
        job = self.jobs.get(batch_id)
        if job is None:
            handler._error("openai", 404, f"No batch found with id '{batch_id}'.")
            return
        with self._lock:
            if job.status in OPENAI_STEPS:
                job.cancelled, job.status = True, "cancelling"
        handler._send_json(200, self._openai_object(job))

    def _openai_object(self, job: FakeBatch, body: dict | None = None) -> dict[str, Any]:
        done = job.status in ("completed", "expired", "cancelled", "failed")
        total = len(job.lines)
        return {
            "id": job.id,
            "object": "batch",
            "endpoint": "/v1/chat/completions",
            "errors": {"object": "list", "data": job.invalid} if job.invalid else None,
            "input_file_id": job.input_file_id,
            "completion_window": (body or {}).get("completion_window", "24h"),
            "status": job.status,
            "output_file_id": job.output_file_id,
            "error_file_id": job.error_file_id,
            "created_at": job.created_at,
            "in_progress_at": job.created_at if job.step >= 1 else None,
            "expires_at": job.created_at + 86400,
            "completed_at": job.created_at if job.status == "completed" else None,
            "failed_at": job.created_at if job.status == "failed" else None,
            "expired_at": job.created_at if job.status == "expired" else None,
            "cancelled_at": job.created_at if job.status == "cancelled" else None,
            "request_counts": {
                "total": total,
                "completed": len(job.output) if done else 0,
                "failed": len(job.errors) if done else 0,
            },
            "metadata": (body or {}).get("metadata"),
        }

    # -- Gemini ----------------------------------------------------------------------------
    def _gemini_create(self, handler: Any, model: str) -> None:
        if self._faulted(handler, "gemini batches.create"):
            return
        body = json.loads(self._body(handler) or b"{}")
        batch = body.get("batch") or {}
        requests = ((batch.get("inputConfig") or {}).get("requests") or {}).get("requests") or []
        lines = [(r.get("metadata"), r.get("request") or {}) for r in requests]
        job = FakeBatch(f"batches/{uuid.uuid4().hex[:20]}", "gemini", model, lines)
        job.status = GEMINI_STEPS[0]
        with self._lock:
            self.jobs[job.id] = job
        handler._send_json(200, self._gemini_object(job, batch.get("displayName")))

    def _gemini_get(self, handler: Any, name: str) -> None:
        if self._faulted(handler, "gemini batches.get"):
            return
        job = self.jobs.get(f"batches/{name}")
        if job is None:
            handler._error("gemini", 404, f"Batch batches/{name} not found.")
            return
        self._advance(job)
        handler._send_json(200, self._gemini_object(job))

    def _gemini_cancel(self, handler: Any, name: str) -> None:
        if self._faulted(handler, "gemini batches.cancel"):
            return
        job = self.jobs.get(f"batches/{name}")
        if job is None:
            handler._error("gemini", 404, f"Batch batches/{name} not found.")
            return
        with self._lock:
            job.cancelled = True
        handler._send_json(200, {})

    def _gemini_object(self, job: FakeBatch, display: str | None = None) -> dict[str, Any]:
        meta: dict[str, Any] = {
            "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch",
            "name": job.id,
            "displayName": display or job.id,
            "model": f"models/{job.model}",
            "state": job.status,
            "createTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(job.created_at)),
            "batchStats": {"requestCount": str(len(job.lines))},
        }
        if job.status == "BATCH_STATE_SUCCEEDED":
            meta["output"] = {"inlinedResponses": {"inlinedResponses": job.output}}
        out: dict[str, Any] = {"name": job.id, "metadata": meta}
        if job.status.endswith(("SUCCEEDED", "FAILED", "EXPIRED", "CANCELLED")):
            out["done"] = True
        return out

    # -- the jobs' progress ----------------------------------------------------------------
    def _advance(self, job: FakeBatch) -> None:
        """One read: move ``job`` on one state every ``polls_per_state`` reads."""
        with self._lock:
            job.reads += 1
            if job.reads % max(1, self.polls_per_state):
                return
            steps = OPENAI_STEPS if job.provider == "openai" else GEMINI_STEPS
            if job.status == "cancelling" or (job.cancelled and job.status in steps):
                job.status = "cancelled" if job.provider == "openai" else "BATCH_STATE_CANCELLED"
                return
            if job.status not in steps:
                return  # finished
            job.step += 1
            if job.provider == "openai" and job.invalid:
                job.status = "failed"
                return
            if job.step < len(steps):
                job.status = steps[job.step]
                return
        self._finish(job)

    def _finish(self, job: FakeBatch) -> None:
        """Answer the batch's requests (outside the lock: the responder may take its own)."""
        openai = job.provider == "openai"
        if self.outcome == "failed":
            job.status = "failed" if openai else "BATCH_STATE_FAILED"
            return
        expired = self.answer_limit is not None
        if expired and not openai:  # an expired Gemini job has no results
            job.status = "BATCH_STATE_EXPIRED"
            return
        output, errors = [], []
        for i, (tag, body) in enumerate(job.lines):
            if expired and i >= (self.answer_limit or 0):
                errors.append(
                    {
                        "id": f"batch_req_{uuid.uuid4().hex[:24]}",
                        "custom_id": tag,
                        "response": None,
                        "error": {"code": "batch_expired", "message": EXPIRED_MESSAGE},
                    }
                )
                continue
            answer = self._answer(job, i, tag, body)
            (output if answer[0] == 200 else errors).append(answer[1])
        job.output, job.errors = output, errors
        if openai:
            jsonl = lambda rows: "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)  # noqa: E731
            if output:
                job.output_file_id = self._store_file("output.jsonl", jsonl(output).encode())
            if errors:
                job.error_file_id = self._store_file("errors.jsonl", jsonl(errors).encode())
            job.status = "expired" if expired else "completed"
        else:
            job.output = output + errors
            job.output.sort(key=lambda r: r.pop("_index"))
            job.status = "BATCH_STATE_SUCCEEDED"

    def _answer(
        self, job: FakeBatch, index: int, tag: Any, body: dict[str, Any]
    ) -> tuple[int, dict]:
        """(status, the output or error row) for one request of ``job``."""
        openai = job.provider == "openai"
        messages = _openai_messages(body) if openai else _gemini_messages(body)
        model = body.get("model", job.model) if openai else job.model
        req = FakeRequest(f"{job.provider}-batch", model, job.id, body, {}, messages)
        with self._lock:
            self.items.append(req)
        status = self.item_fault(req) if self.item_fault is not None else None
        text = ""
        if status is None:
            try:
                text = self.fake.responder(req)
            except _Fail as exc:
                status = exc.fault if isinstance(exc.fault, int) else 500
        req.fault, req.reply = status, (None if status else text)
        served = self.fake.snapshots.get(model, model)
        if openai:
            row: dict[str, Any] = {"id": f"batch_req_{uuid.uuid4().hex[:24]}", "custom_id": tag}
            if status:
                error = {"message": f"HTTP {status} (fake batch item)", "type": "server_error"}
                row["response"] = {
                    "status_code": status,
                    "request_id": uuid.uuid4().hex,
                    "body": {"error": {**error, "param": None, "code": None}},
                }
            else:
                reply = _openai_reply(served, text, len(req.text), len(text))
                row["response"] = {
                    "status_code": 200,
                    "request_id": uuid.uuid4().hex,
                    "body": reply,
                }
            row["error"] = None
            return status or 200, row
        row = {"metadata": tag, "_index": index}
        if status:
            row["error"] = {"code": status, "message": f"HTTP {status} (fake batch item)"}
        else:
            row["response"] = _gemini_reply(served, text, len(req.text), len(text))
        return status or 200, row
