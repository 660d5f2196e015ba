"""Anthropic's Claude: the Messages API through the ``anthropic`` SDK.

Settings: ``ANTHROPIC_API_KEY``, ``ANTHROPIC_BASE_URL``, ``ETC_ANTHROPIC_MODEL``. ``max_tokens``
is always sent (the API requires it), temperature never (API version 2026-10-21, which the 2.x
SDKs send, refuses sampling settings). A 400 "credit balance is too low", a 402
``billing_error`` and a 429 ``enforced_spend_limit_reached`` are used-up quotas. docs/judge.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from etclib.llm.chat import Reply, empty_answer
from etclib.llm.models import ModelInfo
from etclib.llm.providers.base import JSONAnswers, PromptCache, ProviderSpec, Quotas

#: ``max_tokens`` when the caller sets none (the API requires one)
DEFAULT_MAX_TOKENS = 1024
_CLAUDE = dict(temperature=False)
#: thinking switched off (``{"type": "disabled"}``)
_OFF = dict(thinking="budget", thinking_default=0, **_CLAUDE)
#: stop reasons that mean the answer was cut
_CUT = {"max_tokens", "model_context_window_exceeded"}
#: empty answers by stop reason; ``refusal`` is Claude's safety classifiers stopping the answer
_EMPTY = {
    "refusal": "safety",
    "max_tokens": "output_limit",
    "model_context_window_exceeded": "output_limit",
}


def _usage(usage: Any) -> dict[str, int]:
    read = getattr(usage, "cache_read_input_tokens", 0) or 0
    written = getattr(usage, "cache_creation_input_tokens", 0) or 0
    details = getattr(usage, "output_tokens_details", None)
    return {
        "input_tokens": (getattr(usage, "input_tokens", 0) or 0) + read + written,
        "output_tokens": getattr(usage, "output_tokens", 0) or 0,
        "cached_tokens": read,
        "reasoning_tokens": (getattr(details, "thinking_tokens", 0) or 0) if details else 0,
    }


def _thinking(value: int | str) -> dict[str, Any]:
    """The ``thinking`` field for a budget: 0 disabled, -1 adaptive, else that many tokens."""
    budget = int(value)
    if budget == 0:
        return {"type": "disabled"}
    if budget < 0:
        return {"type": "adaptive"}
    return {"type": "enabled", "budget_tokens": budget}


def _error(body: Any) -> dict[str, Any]:
    error = body.get("error") if isinstance(body, dict) else None
    return error if isinstance(error, dict) else {}


class AnthropicSpec(ProviderSpec, JSONAnswers, PromptCache, Quotas):
    name = "anthropic"
    label = "Anthropic Claude"
    description = "Anthropic Claude (Messages API), temperature 0, streaming."
    package = "anthropic"
    sdk_classes = ("anthropic", "Anthropic", "AsyncAnthropic")
    sdk_floor = ("2.0", "output_config structured outputs (API version 2026-10-21)")
    key_settings = ("ANTHROPIC_API_KEY",)
    base_url_setting = "ANTHROPIC_BASE_URL"
    default_endpoint = "https://api.anthropic.com"
    judge_model = "claude-haiku-4-5"
    backend_model = "claude-sonnet-4-5"
    model_setting = "ETC_ANTHROPIC_MODEL"
    unknown_model = _CLAUDE
    #: no sampling settings (module docstring); thinking a ``budget`` (0: disabled); cache writes
    #: billed as ordinary input; ``claude``: the family's fallback (no price)
    models = (
        ModelInfo("claude", "anthropic", thinking="budget", **_CLAUDE),
        ModelInfo("claude-haiku-4-5", "anthropic", price=(1.00, 5.00), cached_input=0.10, **_OFF),
        ModelInfo("claude-sonnet-4-5", "anthropic", price=(3.00, 15.00), cached_input=0.3, **_OFF),
        ModelInfo("claude-opus-4-5", "anthropic", price=(5.00, 25.00), cached_input=0.50, **_OFF),
    )
    hints = {
        "auth": "Check ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL).",
        "connect": "Check ANTHROPIC_BASE_URL.",
        "not_found": "Check the model name (https://docs.anthropic.com/en/docs/about-claude/models).",
        "bad_request": "Check the request settings and the model name.",
        "rate_limit": "Wait and try again, or send fewer requests at a time.",
        "server": "Anthropic's API is overloaded or failing; try again later.",
    }
    quota_pages = (
        "the organisation's credit balance or spend limit",
        "https://console.anthropic.com/settings/billing and "
        "https://console.anthropic.com/settings/limits",
    )
    key_help = (
        "No Anthropic API key: set ANTHROPIC_API_KEY in the environment or in "
        ".streamlit/secrets.toml; get one at https://console.anthropic.com/settings/keys."
    )
    availability_help = "set ANTHROPIC_API_KEY, and optionally ETC_ANTHROPIC_MODEL"

    def request(self, model, messages, decoding, *, max_tokens=None) -> dict[str, Any]:
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        req: dict[str, Any] = {
            "model": model,
            "max_tokens": max_tokens or DEFAULT_MAX_TOKENS,
            "messages": [
                {"role": m["role"], "content": m["content"]}
                for m in messages
                if m["role"] != "system"
            ],
        }
        if system:
            req["system"] = system
        if decoding.thinking is not None:
            req["thinking"] = _thinking(decoding.thinking)
        return req

    def judge_format(self, model: str) -> str:
        from etclib.llm.models import info

        return "json_schema" if info(self.name, model).structured else "prompt"

    def json_request(self, req, kind, schema, fmt) -> dict[str, Any]:
        if fmt == "json_schema":
            req["output_config"] = {"format": {"type": "json_schema", "schema": schema}}
        return req

    def cache_prompt(self, req: dict[str, Any]) -> dict[str, Any]:
        """The system message (the judge's fixed prompt) as a block Anthropic caches after the
        first request."""
        system = req.get("system")
        if isinstance(system, str) and system:
            req["system"] = [
                {"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}
            ]
        return req

    def _reply(self, resp: Any) -> Reply:
        text = "".join(
            getattr(b, "text", "") or ""
            for b in getattr(resp, "content", None) or []
            if getattr(b, "type", None) == "text"
        )
        stop = getattr(resp, "stop_reason", None)
        served = getattr(resp, "model", None)
        reply = Reply(
            text,
            model_version=served,
            finish_reason=stop,
            cut=stop in _CUT,
            **_usage(getattr(resp, "usage", None)),
        )
        if not text.strip():
            reason = _EMPTY.get(stop or "", "empty")
            raise empty_answer(reason, f"model {served}: stop_reason {stop!r}, no text", reply)
        return reply

    def send(self, client: Any, req: dict[str, Any]) -> Reply:
        return self._reply(client.messages.create(**req))

    async def asend(self, client: Any, req: dict[str, Any]) -> Reply:
        return self._reply(await client.messages.create(**req))

    def open_stream(self, client: Any, req: dict[str, Any]) -> Iterable[Any]:
        return client.messages.create(**req, stream=True)

    def chunk_text(self, chunk: Any) -> str:
        if getattr(chunk, "type", None) != "content_block_delta":
            return ""
        delta = chunk.delta
        return (delta.text or "") if getattr(delta, "type", None) == "text_delta" else ""

    def stream_end(self, chunks: list[Any]) -> tuple[Reply, str | None]:
        start = next((c.message for c in chunks if c.type == "message_start"), None)
        tokens = _usage(getattr(start, "usage", None))
        stop = None
        for c in chunks:
            if c.type == "message_delta":
                stop = getattr(c.delta, "stop_reason", None) or stop
                out = getattr(getattr(c, "usage", None), "output_tokens", None)
                if out is not None:
                    tokens["output_tokens"] = out
        reply = Reply("", model_version=getattr(start, "model", None), finish_reason=stop, **tokens)
        return reply, _EMPTY.get(stop or "")

    def quota(self, exc: BaseException, body: Any, status: int) -> str | None:
        error = _error(body)
        kind = error.get("type")
        message = str(error.get("message") or "")
        if status == 400 and kind == "invalid_request_error" and "credit balance" in message:
            return "credit_balance_too_low"
        if status == 402 or kind == "billing_error":
            return "billing_error"
        details = error.get("details") if isinstance(error.get("details"), dict) else {}
        if status == 429 and details.get("error_code") == "enforced_spend_limit_reached":
            return "enforced_spend_limit_reached"
        return None


SPEC = AnthropicSpec()
