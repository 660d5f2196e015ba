"""What one chat call returns and costs: :class:`Reply`, the empty-answer rule, :class:`Usage`.

**An empty answer is an error, never an empty string.** A provider's codec raises
:func:`empty_answer` with a reason (a key of :data:`REASON_TEXT`): the judge counts it as a
failed request, the backends write an empty prediction and count it by reason.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from etclib.core.errors import EmptyAnswerError, JudgeError

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
    #: the token limit stopped the answer: its text is a truncated answer, even when it parses
    cut: bool = False


def empty_answer(reason: str, detail: str = "", reply: Reply | None = None) -> EmptyAnswerError:
    """The error for an empty answer (``reason`` as in the module docstring); ``reply`` (its
    tokens and served model, for usage counts) is kept as the error's ``reply``."""
    err = EmptyAnswerError(
        f"The model returned no answer: {REASON_TEXT[reason]}.", reason=reason, detail=detail
    )
    err.reply = reply or Reply("")  # type: ignore[attr-defined]
    return err


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
        """The counts and ``cost_usd`` (None: unknown price). Tokens count only calls made in
        this run, not answers from etclib's cache."""
        from etclib.llm.models import cost as priced

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


def answer_object(text: str | None, who: str = "The answer") -> Any:
    """The JSON object in a labelling answer (code fences and text around it ignored); JudgeError
    naming ``who`` when there is none or it is not valid JSON."""
    match = re.search(r"\{.*\}", text or "", flags=re.S)
    if not match:
        raise JudgeError(f"{who} has no JSON object: {(text or '')[:80]!r}.")
    try:
        return json.loads(match.group(0))
    except json.JSONDecodeError as exc:
        raise JudgeError(f"{who} is not valid JSON ({exc.msg}): {text[:80]!r}.") from None
