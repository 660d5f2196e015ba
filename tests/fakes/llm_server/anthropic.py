"""Anthropic's Messages API, as the ``anthropic`` SDK drives it.

``POST /v1/messages``: a ``message`` object, or with ``"stream": true`` the named events
``message_start``, ``content_block_start``, ``content_block_delta`` (``text_delta``),
``content_block_stop``, ``message_delta`` (``stop_reason``, output tokens), ``message_stop``.
The key is read from ``Authorization: Bearer`` (the 2.x SDKs) or ``x-api-key``; as API version
2026-10-21 does, a request with ``temperature``, ``top_p`` or ``top_k`` gets a 400 (unless it
names version 2023-06-01). Errors have Anthropic's body (``{"type": "error", "error": {"type":
"rate_limit_error", "message": ...}}``) and a ``request-id``. Prompt caching: a ``system`` text
block with ``cache_control: {"type": "ephemeral"}`` is written to the cache on first sight
(``usage.cache_creation_input_tokens``) and read from it afterwards
(``usage.cache_read_input_tokens``; ``input_tokens`` is the rest of the prompt).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

from .base import FakeRequest, Handler, Wire, pieces

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or [] if isinstance(b, dict))


def _message(model: str, stop: str | None, usage: dict[str, Any], text: str = "") -> dict:
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}] if text else [],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage,
    }


def _events(model: str, text: str, stop: str, usage: dict[str, Any]) -> Iterator[tuple[str, str]]:
    def ev(name: str, **data: Any) -> tuple[str, str]:
        return name, json.dumps({"type": name, **data}, ensure_ascii=False)

    yield ev("message_start", message=_message(model, None, {**usage, "output_tokens": 1}))
    if text:
        yield ev("content_block_start", index=0, content_block={"type": "text", "text": ""})
        yield ev("ping")
        for piece in pieces(text):
            yield ev("content_block_delta", index=0, delta={"type": "text_delta", "text": piece})
        yield ev("content_block_stop", index=0)
    out = {k: usage[k] for k in ("output_tokens", "output_tokens_details")}
    yield ev("message_delta", delta={"stop_reason": stop, "stop_sequence": None}, usage=out)
    yield ev("message_stop")


class Anthropic(Wire):
    name = "anthropic"

    def chat(self, path: str) -> bool:
        return path.rstrip("/").endswith("/v1/messages")

    def parse(self, h: Handler, path: str, body: dict[str, Any]) -> tuple[bool, str, str]:
        auth = (h.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
        key = auth or h.headers.get("x-api-key") or ""
        return bool(body.get("stream")), body.get("model", ""), key

    def messages(self, body: dict[str, Any]) -> list[dict[str, str]]:
        out = [{"role": "system", "content": _text(body["system"])}] if body.get("system") else []
        for m in body.get("messages") or []:
            out.append({"role": m.get("role", "user"), "content": _text(m.get("content"))})
        return out

    def error(self, h, status, message, headers=None) -> None:
        error = {"type": ERROR_TYPES.get(status, "api_error"), "message": message}
        headers = {"request-id": f"req_{uuid.uuid4().hex[:12]}", **(headers or {})}
        h.send_json(status, {"type": "error", "error": error}, headers)

    def refuse(self, h: Handler, req: FakeRequest) -> bool:
        """API version 2026-10-21 refuses sampling settings, even at their defaults (the 2.x
        SDKs send that version and have no such arguments)."""
        version = req.headers.get("anthropic-version") or req.headers.get("Anthropic-Version")
        for name in ("temperature", "top_p", "top_k"):
            if name in req.body and version != "2023-06-01":
                req.fault = 400
                self.error(h, 400, f"{name}: Extra inputs are not permitted")
                return True
        return False

    def _usage(self, h: Handler, req: FakeRequest, c: int) -> dict[str, Any]:
        """Tokens as characters; a ``cache_control`` system block is written, then read."""
        fake = h.fake
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

    def answer(self, h: Handler, req: FakeRequest, model: str, text: str, cut: bool) -> None:
        self._send(h, req, model, text, "max_tokens" if cut else "end_turn")

    def _send(self, h: Handler, req: FakeRequest, model: str, text: str, stop: str) -> None:
        usage = self._usage(h, req, len(text))
        if req.stream:
            h.send_sse(_events(model, text, stop, usage))
        else:
            h.send_json(200, _message(model, stop, usage, text))

    def quota(self, h: Handler, req: FakeRequest) -> None:
        message = (
            "This request would exceed the rate limit for your organization of 50 "
            "requests per minute. For details, refer to: "
            "https://docs.claude.com/en/api/rate-limits."
        )
        self.error(h, 429, message, {"retry-after": f"{h.fake.retry_delay:g}"})

    def insufficient_quota(self, h: Handler, req: FakeRequest) -> None:
        """An organisation whose credit balance is used up."""
        message = (
            "Your credit balance is too low to access the Anthropic API. Please go to "
            "Plans & Billing to upgrade or purchase credits."
        )
        self.error(h, 400, message)

    def overloaded(self, h: Handler, req: FakeRequest) -> None:
        self.error(h, 529, "Overloaded", {"retry-after": f"{h.fake.retry_delay:g}"})

    def safety(self, h: Handler, req: FakeRequest) -> None:
        req.reply = ""
        self._send(h, req, req.model, "", "refusal")


WIRE = Anthropic()
