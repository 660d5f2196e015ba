"""OpenAI's protocols, as the ``openai`` SDK drives them.

- Chat Completions: ``POST /v1/chat/completions`` (JSON, or with ``"stream": true`` Server-Sent
  Events ending in ``data: [DONE]``, a usage chunk when ``stream_options.include_usage``).
  Reasoning models (``reasoning_models``) refuse ``temperature`` other than 1 and
  ``max_tokens`` with OpenAI's 400 bodies (``unsupported_value``, ``unsupported_parameter``).
- ``GET /v1/models`` lists ``models`` (with ``model_fields[name]`` added, as vLLM adds ``root``
  and ``parent``; 401 without ``api_key`` when one is set and ``models_check_key``);
  ``models_fault`` (``"hang"`` or a status) fails it; ``model_probes`` counts it.
- Files and the Batch API: ``POST /v1/files`` (a JSONL of requests, ``purpose=batch``),
  ``GET /v1/files/{id}/content``, ``POST /v1/batches``, ``GET /v1/batches/{id}``,
  ``POST /v1/batches/{id}/cancel``: ``validating`` -> ``in_progress`` -> ``finalizing`` ->
  ``completed`` (``expired`` with ``answer_limit``, its unanswered requests ``batch_expired``
  in the error file; ``failed`` when the input does not validate), as the Batch API documents.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any

from .base import BatchDesk, FakeBatch, FakeRequest, Handler, Wire, pieces

ENDS = {s: s for s in ("completed", "failed", "expired", "cancelled")}
STEPS = ("validating", "in_progress", "finalizing")
EXPIRED = "This request could not be executed before the completion window expired."


def messages(body: dict[str, Any]) -> list[dict[str, str]]:
    out = []
    for m in body.get("messages") or []:
        content = m.get("content")
        if isinstance(content, list):  # content parts
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        role = m.get("role", "user")
        out.append({"role": "system" if role == "developer" else role, "content": content or ""})
    return out


def completion(
    model: str,
    text: str | None,
    p: int,
    c: int,
    finish: str = "stop",
    reasoning: int = 0,
    cached: int = 0,
) -> dict[str, Any]:
    """A chat completion; ``c`` output tokens, ``reasoning`` of them spent on reasoning."""
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": finish,
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": p,
            "completion_tokens": c,
            "total_tokens": p + c,
            "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": reasoning,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        },
    }


def chunks(
    model: str, text: str, p: int, c: int, usage: bool, finish: str = "stop"
) -> Iterator[str]:
    cid, created = f"chatcmpl-{uuid.uuid4().hex[:12]}", int(time.time())

    def chunk(choices: list, **extra: Any) -> str:
        obj = {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": choices,
            **extra,
        }
        return json.dumps(obj, ensure_ascii=False)

    def delta(d: dict, finish: str | None) -> str:
        return chunk([{"index": 0, "delta": d, "finish_reason": finish}])

    yield delta({"role": "assistant", "content": ""}, None)
    for piece in pieces(text):
        yield delta({"content": piece}, None)
    yield delta({}, finish)
    if usage:
        yield chunk([], usage={"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c})
    yield "[DONE]"


class OpenAI(Wire):
    name = "openai"
    base_path = "/v1"

    def chat(self, path: str) -> bool:
        return path.rstrip("/").endswith("/chat/completions")

    def parse(self, h: Handler, path: str, body: dict[str, Any]) -> tuple[bool, str, str]:
        key = (h.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
        return bool(body.get("stream")), body.get("model", ""), key

    def messages(self, body: dict[str, Any]) -> list[dict[str, str]]:
        return messages(body)

    def error(self, h, status, message, headers=None, error: dict | None = None) -> None:
        kinds = {401: "invalid_request_error", 429: "rate_limit_exceeded"}
        error = error or {
            "message": message,
            "type": kinds.get(status, "server_error"),
            "param": None,
            "code": None,
        }
        h.send_json(status, {"error": error}, {**h.fake.error_headers, **(headers or {})})

    def refuse(self, h: Handler, req: FakeRequest) -> bool:
        """OpenAI's 400s for a reasoning model (GPT-5, o-series), bodies as the API sends them."""
        if not req.model.startswith(tuple(h.fake.reasoning_models)):
            return False
        body = req.body
        if "temperature" in body and body["temperature"] != 1:
            value = body["temperature"]
            shown = int(value) if float(value).is_integer() else value
            param, code = "temperature", "unsupported_value"
            message = (
                f"Unsupported value: 'temperature' does not support {shown} with this model. "
                "Only the default (1) value is supported."
            )
        elif "max_tokens" in body:
            param, code = "max_tokens", "unsupported_parameter"
            message = (
                "Unsupported parameter: 'max_tokens' is not supported with this model. "
                "Use 'max_completion_tokens' instead."
            )
        else:
            return False
        req.fault = 400
        error = {"message": message, "type": "invalid_request_error", "param": param, "code": code}
        self.error(h, 400, message, error=error)
        return True

    def answer(self, h: Handler, req: FakeRequest, model: str, text: str, cut: bool) -> None:
        p, c = len(req.text), len(text)
        if req.stream:
            usage = bool((req.body.get("stream_options") or {}).get("include_usage"))
            h.send_sse(chunks(model, text, p, c, usage))
            return
        reasoning, cached = h.fake.reasoning_tokens, min(h.fake.cached_tokens, p)
        finish = "length" if cut else "stop"
        h.send_json(200, completion(model, text, p, c + reasoning, finish, reasoning, cached))

    def quota(self, h: Handler, req: FakeRequest) -> None:
        error = {
            "message": "Rate limit reached for requests per min. Please try again later.",
            "type": "requests",
            "param": None,
            "code": "rate_limit_exceeded",
        }
        self.error(h, 429, "", {"retry-after": f"{h.fake.retry_delay:g}"}, error=error)

    def insufficient_quota(self, h: Handler, req: FakeRequest) -> None:
        error = {
            "message": "You exceeded your current quota, please check your plan and billing "
            "details. For more information on this error, read the docs: "
            "https://platform.openai.com/docs/guides/error-codes/api-errors.",
            "type": "insufficient_quota",
            "param": None,
            "code": "insufficient_quota",
        }
        self.error(h, 429, "", error=error)

    def safety(self, h: Handler, req: FakeRequest) -> None:
        req.reply = ""
        p = len(req.text)
        if req.stream:
            h.send_sse(chunks(req.model, "", p, 0, False, "content_filter"))
        else:
            h.send_json(200, completion(req.model, None, p, 0, "content_filter"))

    # -- models, files and batches ---------------------------------------------------------
    def route(self, h: Handler, method: str, path: str) -> bool:
        p = path.rstrip("/")
        parts = p.split("/")
        if method == "GET" and p == "/v1/models":
            self._models(h)
        elif method == "POST" and p == "/v1/files":
            self._upload(h)
        elif method == "GET" and p.startswith("/v1/files/") and p.endswith("/content"):
            self._content(h, parts[3])
        elif method == "POST" and p == "/v1/batches":
            self._create(h)
        elif method == "GET" and p.startswith("/v1/batches/batch_"):
            self._batch(h, parts[3], cancel=False)
        elif method == "POST" and p.startswith("/v1/batches/batch_") and p.endswith("/cancel"):
            self._batch(h, parts[3], cancel=True)
        else:
            return False
        return True

    def _models(self, h: Handler) -> None:
        fake = h.fake
        fake.model_probes += 1
        key = (h.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
        if fake.models_check_key and fake.api_key not in (None, key):
            self.error(h, 401, "Unauthorized")  # as vLLM's --api-key and OpenAI do
            return
        if fake.models_fault == "hang":
            fake._sleep(fake.hang_seconds)
        elif isinstance(fake.models_fault, int):
            self.error(h, fake.models_fault, "models route failed")
            return
        data = [
            {
                "id": m,
                "object": "model",
                "created": 0,
                "owned_by": "fake",
                **fake.model_fields.get(m, {}),
            }
            for m in fake.models
        ]
        h.send_json(200, {"object": "list", "data": data})

    def _upload(self, h: Handler) -> None:
        desk = h.fake.batches
        if desk.faulted(h, self, "files.create"):
            return
        ctype = h.headers.get("Content-Type", "")
        form = f"Content-Type: {ctype}\r\n\r\n".encode() + h.raw_body()
        purpose, name, data = "", "upload", b""
        for part in BytesParser(policy=HTTP).parsebytes(form).iter_parts():
            field_name = part.get_param("name", header="content-disposition")
            if field_name == "purpose":
                purpose = part.get_content().strip()
            elif field_name == "file":
                name = part.get_filename() or name
                data = part.get_payload(decode=True) or b""
        if purpose != "batch":
            self.error(h, 400, f"purpose must be 'batch' here, not {purpose!r}")
            return
        file_id = desk.store_file(name, data)
        h.send_json(
            200,
            {
                "id": file_id,
                "object": "file",
                "bytes": len(data),
                "created_at": int(time.time()),
                "filename": name,
                "purpose": "batch",
                "status": "processed",
            },
        )

    def _content(self, h: Handler, file_id: str) -> None:
        desk = h.fake.batches
        if desk.faulted(h, self, "files.content"):
            return
        if file_id not in desk.files:
            self.error(h, 404, f"No such File object: {file_id}")
            return
        h.send_bytes(200, desk.files[file_id][1], "application/octet-stream")

    def _create(self, h: Handler) -> None:
        desk = h.fake.batches
        if desk.faulted(h, self, "batches.create"):
            return
        body = json.loads(h.raw_body() or b"{}")
        file_id = body.get("input_file_id", "")
        if file_id not in desk.files:
            self.error(h, 400, f"input_file_id {file_id!r} not found")
            return
        lines, invalid, seen = [], [], set()
        for n, text in enumerate(desk.files[file_id][1].decode().splitlines(), 1):
            if not text.strip():
                continue
            line = json.loads(text)
            cid = line.get("custom_id")
            if (
                cid in seen
                or line.get("url") != body.get("endpoint")
                or line.get("method") != "POST"
            ):
                what = "duplicate custom_id" if cid in seen else "url/method do not match"
                invalid.append({"code": "invalid_request", "message": what, "line": n})
            seen.add(cid)
            lines.append((cid, line.get("body") or {}))
        model = lines[0][1].get("model", "") if lines else ""
        job = FakeBatch(f"batch_{uuid.uuid4().hex[:24]}", self.name, model, lines, STEPS, ENDS)
        job.invalid, job.input_file_id = invalid, file_id
        job.info = {"completion_window": body.get("completion_window", "24h")}
        job.info["metadata"] = body.get("metadata")
        desk.add(job)
        h.send_json(200, self._object(job))

    def _batch(self, h: Handler, batch_id: str, cancel: bool) -> None:
        desk = h.fake.batches
        if desk.faulted(h, self, "batches.cancel" if cancel else "batches.get"):
            return
        job = desk.jobs.get(batch_id)
        if job is None:
            self.error(h, 404, f"No batch found with id '{batch_id}'.")
        else:
            desk.cancel(job, "cancelling") if cancel else desk.read(job, self._finish)
            h.send_json(200, self._object(job))

    def _object(self, job: FakeBatch) -> dict[str, Any]:
        done = job.status in ENDS
        return {
            "id": job.id,
            "object": "batch",
            "endpoint": "/v1/chat/completions",
            "errors": {"object": "list", "data": job.invalid} if job.invalid else None,
            "input_file_id": job.input_file_id,
            "completion_window": job.info["completion_window"],
            "status": job.status,
            "output_file_id": job.output_file_id,
            "error_file_id": job.error_file_id,
            "created_at": job.created_at,
            "in_progress_at": job.created_at if job.step >= 1 else None,
            "expires_at": job.created_at + 86400,
            **{f"{end}_at": job.created_at if job.status == end else None for end in ENDS},
            "request_counts": {
                "total": len(job.lines),
                "completed": len(job.output) if done else 0,
                "failed": len(job.errors) if done else 0,
            },
            "metadata": job.info["metadata"],
        }

    def _finish(self, desk: BatchDesk, job: FakeBatch, expired: bool) -> None:
        """The output file (one line per answered request) and the error file (one per failed
        or, when the job expired, unreached request)."""
        for i, (cid, body) in enumerate(job.lines):
            row: dict[str, Any] = {"id": f"batch_req_{uuid.uuid4().hex[:24]}", "custom_id": cid}
            if expired and i >= (desk.answer_limit or 0):
                error = {"code": "batch_expired", "message": EXPIRED}
                job.errors.append({**row, "response": None, "error": error})
                continue
            req, served = desk.answer(job, body.get("model", job.model), body, messages(body))
            if req.fault:
                error = {"message": f"HTTP {req.fault} (fake batch item)", "type": "server_error"}
                answer = {"error": {**error, "param": None, "code": None}}
            else:
                text = req.reply or ""
                answer = completion(served, text, len(req.text), len(text))
            status = req.fault or 200
            row["response"] = {
                "status_code": status,
                "request_id": uuid.uuid4().hex,
                "body": answer,
            }
            row["error"] = None
            (job.errors if req.fault else job.output).append(row)
        if job.output:
            job.output_file_id = desk.store_file("output.jsonl", _jsonl(job.output))
        if job.errors:
            job.error_file_id = desk.store_file("errors.jsonl", _jsonl(job.errors))
        job.status = "expired" if expired else "completed"


def _jsonl(rows: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()


WIRE = OpenAI()
