"""What the three chat protocols carry: messages read from a request body, and the reply
bodies (plain, streamed, cut, with reasoning or cached tokens) the fake server answers with.
Tokens are characters, so tests can predict them."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .server import FakeRequest

if TYPE_CHECKING:
    from .server import FakeLLMServer


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
