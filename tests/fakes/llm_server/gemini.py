"""Gemini's protocols, as ``google-genai`` drives them.

- ``POST /{version}/models/{model}:generateContent`` and ``:streamGenerateContent?alt=sse``;
  the key in ``x-goog-api-key`` (or ``?key=``); errors with Google's ``status`` names and, for
  a 429, the ``google.rpc`` details Gemini sends (``QuotaFailure``, ``Help``, ``RetryInfo``).
- Batch mode: ``POST /{version}/models/{model}:batchGenerateContent`` with inlined requests
  (``batch.inputConfig.requests.requests``: ``{"request", "metadata"}``) -> an operation
  ``batches/{id}`` in ``BATCH_STATE_PENDING``; ``GET /{version}/batches/{id}`` moves it to
  ``BATCH_STATE_RUNNING``, then ``BATCH_STATE_SUCCEEDED`` with one ``{"response", "metadata"}``
  or ``{"error", "metadata"}`` per request, in order (``BATCH_STATE_EXPIRED`` with
  ``answer_limit``: no results, as an expired Gemini job has none); ``POST
  /{version}/batches/{id}:cancel``. The SDK turns ``BATCH_STATE_*`` into ``JOB_STATE_*``.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

from .base import BatchDesk, FakeBatch, FakeRequest, Handler, Wire, pieces

STEPS = ("BATCH_STATE_PENDING", "BATCH_STATE_RUNNING")
ENDS = {s.lower(): f"BATCH_STATE_{s}" for s in ("SUCCEEDED", "FAILED", "EXPIRED", "CANCELLED")}
STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}
HELP = {
    "@type": "type.googleapis.com/google.rpc.Help",
    "links": [
        {
            "description": "Learn more about Gemini API quotas",
            "url": "https://ai.google.dev/gemini-api/docs/rate-limits",
        }
    ],
}


def messages(body: dict[str, Any]) -> list[dict[str, str]]:
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


def response(model: str, text: str, p: int, c: int, finish: str | None = "STOP") -> dict:
    cand: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": text}]}, "index": 0}
    if finish:
        cand["finishReason"] = finish
    usage = {"promptTokenCount": p, "candidatesTokenCount": c, "totalTokenCount": p + c}
    return {"candidates": [cand], "usageMetadata": usage, "modelVersion": model}


def chunks(model: str, text: str, p: int, c: int) -> Iterator[str]:
    parts = pieces(text)
    for i, piece in enumerate(parts):
        last = i == len(parts) - 1
        chunk = response(model, piece, p, c if last else 0, "STOP" if last else None)
        yield json.dumps(chunk, ensure_ascii=False)


def quota_failure(quota: str, model: str, value: str, delay: str) -> list[dict[str, Any]]:
    """The ``details`` of Gemini's 429 for ``quota`` (a per-minute or per-day request quota)."""
    violation = {
        "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
        "quotaId": quota,
        "quotaDimensions": {"location": "global", "model": model},
        "quotaValue": value,
    }
    return [
        {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [violation]},
        HELP,
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay},
    ]


class Gemini(Wire):
    name = "gemini"

    def chat(self, path: str) -> bool:
        return ":generateContent" in path or ":streamGenerateContent" in path

    def parse(self, h: Handler, path: str, body: dict[str, Any]) -> tuple[bool, str, str]:
        query = urlsplit(h.path).query
        key = h.headers.get("x-goog-api-key") or parse_qs(query).get("key", [""])[0]
        model = path.rsplit("/", 1)[-1].split(":", 1)[0]
        return ":streamGenerateContent" in path, model, key

    def messages(self, body: dict[str, Any]) -> list[dict[str, str]]:
        return messages(body)

    def settings(self, body: dict[str, Any]) -> dict[str, Any]:
        return dict(body.get("generationConfig") or {})

    def error(self, h, status, message, headers=None, details: list | None = None) -> None:
        error: dict[str, Any] = {
            "code": status,
            "message": message,
            "status": STATUS_NAMES.get(status, "UNKNOWN"),
        }
        if details:
            error["details"] = details
        h.send_json(status, {"error": error}, headers)

    def answer(self, h: Handler, req: FakeRequest, model: str, text: str, cut: bool) -> None:
        p, c = len(req.text), len(text)
        if req.stream:
            h.send_sse(chunks(model, text, p, c))
            return
        body = response(model, text, p, c, "MAX_TOKENS" if cut else "STOP")
        usage = body["usageMetadata"]
        if h.fake.reasoning_tokens:
            usage["thoughtsTokenCount"] = h.fake.reasoning_tokens
            usage["totalTokenCount"] += h.fake.reasoning_tokens
        if h.fake.cached_tokens:
            usage["cachedContentTokenCount"] = min(h.fake.cached_tokens, p)
        h.send_json(200, body)

    def quota(self, h: Handler, req: FakeRequest) -> None:
        delay = h.fake.retry_delay
        quota = "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"
        message = (
            "You exceeded your current quota, please check your plan and billing details. "
            f"Please retry in {delay}s."
        )
        self.error(h, 429, message, details=quota_failure(quota, req.model, "10", f"{delay:g}s"))

    def insufficient_quota(self, h: Handler, req: FakeRequest) -> None:
        """The per-day request quota, with a RetryInfo as Gemini sends it (waiting does not
        help)."""
        quota = "GenerateRequestsPerDayPerProjectPerModel-FreeTier"
        message = (
            "You exceeded your current quota, please check your plan and billing details. "
            "For more information on this error, head to: "
            "https://ai.google.dev/gemini-api/docs/rate-limits."
        )
        self.error(h, 429, message, details=quota_failure(quota, req.model, "250", "41s"))

    def safety(self, h: Handler, req: FakeRequest) -> None:
        req.reply = ""
        p = len(req.text)
        ratings = [
            {"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"},
            {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True},
        ]
        body = {
            "candidates": [{"finishReason": "SAFETY", "index": 0, "safetyRatings": ratings}],
            "usageMetadata": {"promptTokenCount": p, "totalTokenCount": p},
            "modelVersion": req.model,
        }
        if req.stream:
            h.send_sse(iter([json.dumps(body)]))
        else:
            h.send_json(200, body)

    # -- batch mode ------------------------------------------------------------------------
    def route(self, h: Handler, method: str, path: str) -> bool:
        p = path.rstrip("/")
        if method == "POST" and ":batchGenerateContent" in p:
            self._create(h, p.rsplit("/", 1)[-1].split(":", 1)[0])
        elif method == "GET" and re.fullmatch(r"/v1\w*/batches/(?!batch_)[^/:]+", p):
            self._batch(h, p.rsplit("/", 1)[-1], cancel=False)
        elif method == "POST" and "/batches/" in p and p.endswith(":cancel"):
            self._batch(h, p.rsplit("/", 1)[-1].split(":", 1)[0], cancel=True)
        else:
            return False
        return True

    def _create(self, h: Handler, model: str) -> None:
        desk = h.fake.batches
        if desk.faulted(h, self, "batches.create"):
            return
        batch = json.loads(h.raw_body() or b"{}").get("batch") or {}
        requests = ((batch.get("inputConfig") or {}).get("requests") or {}).get("requests") or []
        lines = [(r.get("metadata"), r.get("request") or {}) for r in requests]
        job = FakeBatch(f"batches/{uuid.uuid4().hex[:20]}", self.name, model, lines, STEPS, ENDS)
        job.info["displayName"] = batch.get("displayName") or job.id
        desk.add(job)
        h.send_json(200, self._operation(job))

    def _batch(self, h: Handler, name: str, cancel: bool) -> None:
        desk = h.fake.batches
        if desk.faulted(h, self, "batches.cancel" if cancel else "batches.get"):
            return
        job = desk.jobs.get(f"batches/{name}")
        if job is None:
            self.error(h, 404, f"Batch batches/{name} not found.")
        elif cancel:
            desk.cancel(job)
            h.send_json(200, {})
        else:
            desk.read(job, self._finish)
            h.send_json(200, self._operation(job))

    def _operation(self, job: FakeBatch) -> dict[str, Any]:
        meta: dict[str, Any] = {
            "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch",
            "name": job.id,
            "displayName": job.info["displayName"],
            "model": f"models/{job.model}",
            "state": job.status,
            "createTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(job.created_at)),
            "batchStats": {"requestCount": str(len(job.lines))},
        }
        if job.status == ENDS["succeeded"]:
            meta["output"] = {"inlinedResponses": {"inlinedResponses": job.output}}
        out: dict[str, Any] = {"name": job.id, "metadata": meta}
        if job.status in ENDS.values():
            out["done"] = True
        return out

    def _finish(self, desk: BatchDesk, job: FakeBatch, expired: bool) -> None:
        if expired:  # an expired Gemini job has no results
            job.status = ENDS["expired"]
            return
        for tag, body in job.lines:
            req, served = desk.answer(job, job.model, body, messages(body))
            if req.fault:
                error = {"code": req.fault, "message": f"HTTP {req.fault} (fake batch item)"}
                job.output.append({"metadata": tag, "error": error})
            else:
                text = req.reply or ""
                body = response(served, text, len(req.text), len(text))
                job.output.append({"metadata": tag, "response": body})
        job.status = ENDS["succeeded"]


WIRE = Gemini()
