"""The fake server's HTTP routes: OpenAI Chat Completions, Gemini ``generateContent`` and
Anthropic Messages (plain and streamed), with the scripted faults; the batch routes are
delegated to :mod:`.batch`."""

from __future__ import annotations

import json
import socket
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from .server import FakeLLMServer, FakeRequest, _Fail
from .wire import (
    _anthropic_events,
    _anthropic_messages,
    _anthropic_reply,
    _anthropic_usage,
    _full_reply,
    _gemini_chunks,
    _gemini_messages,
    _gemini_reply,
    _openai_chunks,
    _openai_messages,
    _openai_reply,
)


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError)):
            return  # the client went away (a cancelled or timed-out request): not an error
        super().handle_error(request, client_address)


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
        if self.fake.batches.route(self, "GET", path):
            return
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
        if self.fake.batches.route(self, "POST", path):
            return
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
