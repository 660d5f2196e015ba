"""One chat request to OpenAI-compatible servers or Gemini: build it, read the reply, count it.

The judge (:mod:`etclib.judge.providers`, structured output and caching on top) and the
backends (:mod:`etclib.backends._api`, streaming on top) both build their requests through the
provider codecs (:mod:`etclib.llm.providers`), which use these helpers, so the capability table (:mod:`etclib.llm.models`) decides for both what a
model gets: temperature or none, ``max_tokens`` or ``max_completion_tokens``, the thinking
setting. Replies are read here too, so both see the same :class:`Reply` (text, tokens, the
served model snapshot, the finish reason) and the same rule for empty answers:

**An empty answer is an error, never an empty string.** :func:`openai_reply` and
:func:`gemini_reply` raise :class:`~etclib.errors.EmptyAnswerError` with a ``reason``:
``safety`` (Gemini ``finishReason`` SAFETY and kin, a blocked prompt, OpenAI
``content_filter``), ``refusal`` (OpenAI ``message.refusal``), ``output_limit`` (the token limit
was reached before any text: output spent on thinking), ``no_candidate`` (no choice or
candidate at all) or ``empty`` (finished with no text). The judge counts such an answer as a
failed request (item error); the backends write an empty prediction and count it by reason
(see :class:`Usage` and ``etclib predict``'s notes); the chat shows the error.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..errors import EmptyAnswerError
from .models import Decoding

#: Gemini finish reasons that mean the answer was withheld.
GEMINI_BLOCKED = {
    "SAFETY",
    "RECITATION",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "IMAGE_SAFETY",
    "LANGUAGE",
}
#: Finish reasons that mean the token limit stopped the answer.
CUT_REASONS = frozenset({"length", "MAX_TOKENS"})
REASON_TEXT = {
    "safety": "blocked by the provider's safety filter",
    "refusal": "the model refused",
    "output_limit": "the output limit was reached before any text, e.g. spent on thinking",
    "no_candidate": "no answer candidate",
    "empty": "no text",
}


@dataclass
class Reply:
    """What one successful call returned."""

    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    model_version: str | None = None
    finish_reason: str | None = None
    #: output tokens spent on thinking / hidden reasoning (part of ``output_tokens``)
    reasoning_tokens: int = 0
    #: input tokens served from the provider's prompt cache (part of ``input_tokens``)
    cached_tokens: int = 0

    #: set by a codec whose finish reasons are not in :data:`CUT_REASONS`: whether the token
    #: limit stopped the answer (None: judge by ``finish_reason``)
    truncated: bool | None = None

    @property
    def cut(self) -> bool:
        """The answer stopped at the token limit (OpenAI ``finish_reason: "length"``, Gemini
        ``MAX_TOKENS``, or what a codec said in ``truncated``): its text is a truncated
        answer, even when it happens to parse."""
        if self.truncated is not None:
            return self.truncated
        return self.finish_reason in CUT_REASONS


def empty_answer(reason: str, detail: str = "", reply: Reply | None = None) -> EmptyAnswerError:
    """The error for an empty answer (``reason`` as in the module docstring); ``reply`` (its
    tokens and served model, for usage counts) is kept as the error's ``reply``."""
    err = EmptyAnswerError(
        f"The model returned no answer: {REASON_TEXT[reason]}.", reason=reason, detail=detail
    )
    err.reply = reply or Reply("")  # type: ignore[attr-defined]
    return err


# --- requests ------------------------------------------------------------------------------------


def openai_request(
    model: str,
    messages: list[dict[str, str]],
    decoding: Decoding,
    *,
    max_tokens: int | None = None,
) -> dict[str, Any]:
    """Chat Completions arguments: temperature only where the model takes one, the model's
    token-limit field, ``reasoning_effort`` for reasoning models."""
    req: dict[str, Any] = {"model": model, "messages": messages}
    if decoding.temperature is not None:
        req["temperature"] = decoding.temperature
    if max_tokens is not None:
        req[decoding.info.token_param] = max_tokens
    if decoding.info.thinking == "effort" and decoding.thinking is not None:
        req["reasoning_effort"] = decoding.thinking
    return req


def gemini_request(
    model: str,
    messages: list[dict[str, str]],
    decoding: Decoding,
    *,
    max_tokens: int | None = None,
) -> dict[str, Any]:
    """``generate_content`` arguments as plain JSON (``config`` a dict the SDK validates): the
    system message becomes ``system_instruction``, assistant turns role ``model``."""
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    contents = [
        {"role": "model" if m["role"] == "assistant" else "user", "parts": [{"text": m["content"]}]}
        for m in messages
        if m["role"] != "system"
    ]
    config: dict[str, Any] = {}
    if system:
        config["system_instruction"] = system
    if decoding.temperature is not None:
        config["temperature"] = decoding.temperature
    if max_tokens is not None:
        config["max_output_tokens"] = max_tokens
    if decoding.thinking is not None:
        key = "thinking_budget" if decoding.info.thinking == "budget" else "thinking_level"
        config["thinking_config"] = {key: decoding.thinking}
    return {"model": model, "contents": contents, "config": config}


def gemini_config(config: dict[str, Any]) -> Any:
    """A plain config dict (from :func:`gemini_request`) as ``types.GenerateContentConfig``;
    ``DependencyError`` "upgrade google-genai to >= X" when the installed SDK is too old to take
    a field (:mod:`etclib.llm.sdk`)."""
    from google.genai import types

    config = dict(config)
    try:
        if isinstance(config.get("response_schema"), dict):
            config["response_schema"] = types.Schema.model_validate(config["response_schema"])
        return types.GenerateContentConfig(**config)
    except ValueError as exc:  # pydantic's ValidationError: the SDK refused a field client-side
        from .sdk import too_old

        old = too_old("google-genai", exc)
        if old is None:
            raise
        raise old from exc


# --- replies -------------------------------------------------------------------------------------


def openai_reply(resp: Any) -> Reply:
    """The :class:`Reply` of a Chat Completions response; EmptyAnswerError for no text."""
    usage = getattr(resp, "usage", None)
    served = getattr(resp, "model", None)
    details = getattr(usage, "completion_tokens_details", None) if usage else None
    prompt = getattr(usage, "prompt_tokens_details", None) if usage else None
    tokens = {
        "input_tokens": (getattr(usage, "prompt_tokens", 0) or 0) if usage else 0,
        "output_tokens": (getattr(usage, "completion_tokens", 0) or 0) if usage else 0,
        "reasoning_tokens": (getattr(details, "reasoning_tokens", 0) or 0) if details else 0,
        "cached_tokens": (getattr(prompt, "cached_tokens", 0) or 0) if prompt else 0,
    }
    if not getattr(resp, "choices", None):
        raise empty_answer(
            "no_candidate", f"model {served}: no choice", Reply("", model_version=served, **tokens)
        )
    choice = resp.choices[0]
    message = choice.message
    text = (message.content or "") if message is not None else ""
    finish = getattr(choice, "finish_reason", None)
    reply = Reply(text, model_version=served, finish_reason=finish, **tokens)
    if not text.strip():
        refusal = getattr(message, "refusal", None)
        if refusal:
            raise empty_answer("refusal", f"model {served}: refusal {refusal!r}", reply)
        reason = {"content_filter": "safety", "length": "output_limit"}.get(finish, "empty")
        raise empty_answer(reason, f"model {served}: finish_reason {finish!r}, no text", reply)
    return reply


def openai_chunk_text(chunk: Any) -> str:
    """The text delta of one streamed Chat Completions chunk."""
    return (chunk.choices[0].delta.content or "") if chunk.choices else ""


def gemini_text(resp: Any) -> str:
    """The answer text of a Gemini response or chunk (thought parts left out)."""
    for cand in (getattr(resp, "candidates", None) or [])[:1]:
        parts = (cand.content.parts if cand.content else None) or []
        return "".join(p.text for p in parts if p.text and not getattr(p, "thought", False))
    return ""


def gemini_finish(resp: Any) -> str | None:
    """The first candidate's finish reason as a plain name (``STOP``, ``SAFETY`` ...)."""
    for cand in (getattr(resp, "candidates", None) or [])[:1]:
        finish = getattr(cand, "finish_reason", None)
        if finish is not None:
            return str(getattr(finish, "value", finish))
    return None


def gemini_empty_reason(resp: Any) -> tuple[str, str]:
    """``(reason, detail)`` for a Gemini response with no text."""
    feedback = getattr(resp, "prompt_feedback", None)
    blocked = getattr(feedback, "block_reason", None) if feedback is not None else None
    if blocked:
        return "safety", f"prompt blocked: {getattr(blocked, 'value', blocked)}"
    if not getattr(resp, "candidates", None):
        return "no_candidate", "no candidate in the response"
    finish = gemini_finish(resp)
    meta = getattr(resp, "usage_metadata", None)
    thoughts = getattr(meta, "thoughts_token_count", None) if meta is not None else None
    if finish in GEMINI_BLOCKED:
        return "safety", f"finishReason {finish}"
    if finish == "MAX_TOKENS":
        return "output_limit", f"finishReason MAX_TOKENS, thinking tokens {thoughts}"
    return "empty", f"finishReason {finish}, no text"


def gemini_tokens(resp: Any) -> tuple[int, int]:
    """(input, output) tokens of a Gemini response; thinking tokens count as output (billed so)."""
    meta = getattr(resp, "usage_metadata", None)
    if meta is None:
        return 0, 0
    out = (meta.candidates_token_count or 0) + (getattr(meta, "thoughts_token_count", 0) or 0)
    return meta.prompt_token_count or 0, out


def gemini_thoughts(resp: Any) -> int:
    """Thinking tokens of a Gemini response (``thoughts_token_count``; 0 when none)."""
    meta = getattr(resp, "usage_metadata", None)
    return (getattr(meta, "thoughts_token_count", 0) or 0) if meta is not None else 0


def gemini_reply(resp: Any) -> Reply:
    """The :class:`Reply` of a Gemini response; EmptyAnswerError for no text."""
    text = gemini_text(resp)
    tokens_in, tokens_out = gemini_tokens(resp)
    served = getattr(resp, "model_version", None)
    reply = Reply(text, tokens_in, tokens_out, served, gemini_finish(resp), gemini_thoughts(resp))
    meta = getattr(resp, "usage_metadata", None)
    reply.cached_tokens = (getattr(meta, "cached_content_token_count", 0) or 0) if meta else 0
    if not text.strip():
        reason, detail = gemini_empty_reason(resp)
        raise empty_answer(reason, f"model {served}: {detail}", reply)
    return reply


# --- usage ---------------------------------------------------------------------------------------


@dataclass
class Usage:
    """What calls cost: API calls (every attempt), answers served without a call, retries,
    tokens, the model snapshots the server said it served, and empty answers by reason.
    Safe to update from several threads (:meth:`add` and :meth:`note` take a lock)."""

    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    failed_requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    #: of ``input_tokens``, those served from the provider's prompt cache (a lower price)
    cached_tokens: int = 0
    #: of ``output_tokens``, those spent on thinking / hidden reasoning
    reasoning_tokens: int = 0
    #: the most output tokens (thinking included) one call took
    max_output_tokens: int = 0
    #: answers cut by the token limit (each asked again once with twice the limit)
    cut_answers: int = 0
    model_versions: set[str] = field(default_factory=set)
    empty_answers: Counter = field(default_factory=Counter)
    latency_s: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, reply: Reply | None = None, *, latency: float = 0.0, call: bool = True) -> None:
        """Count one call (``call=False``: only the reply's tokens and served model)."""
        with self._lock:
            self.calls += int(call)
            self.latency_s += latency
            if reply is not None:
                self.input_tokens += reply.input_tokens
                self.output_tokens += reply.output_tokens
                self.reasoning_tokens += reply.reasoning_tokens
                self.cached_tokens += reply.cached_tokens
                self.max_output_tokens = max(self.max_output_tokens, reply.output_tokens)
                if reply.model_version:
                    self.model_versions.add(reply.model_version)

    def note(self, *, retries: int = 0, failed: int = 0, empty: str | None = None) -> None:
        with self._lock:
            self.retries += retries
            self.failed_requests += failed
            if empty:
                self.empty_answers[empty] += 1

    def report(self, model: str) -> dict[str, Any]:
        """``calls, cache_hits, retries, input_tokens, output_tokens, cached_tokens,
        reasoning_tokens, cut_answers, cost_usd`` (None = unknown price; cached input tokens at
        the cached-input price). Tokens count only calls made in this run, not answers from
        etclib's cache; ``cached_tokens`` (read from the provider's prompt cache) are part of
        ``input_tokens``, ``reasoning_tokens`` part of ``output_tokens``."""
        from .models import cost as priced

        cost = priced(model, self.input_tokens, self.output_tokens, self.cached_tokens)
        cost = None if cost is None else round(cost, 6)
        return {
            "calls": self.calls,
            "cache_hits": self.cache_hits,
            "retries": self.retries,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cached_tokens": self.cached_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "cut_answers": self.cut_answers,
            "cost_usd": cost,
        }
