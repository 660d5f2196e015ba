"""Google's Gemini Developer API through the ``google-genai`` SDK.

Settings: ``GEMINI_API_KEY`` (or ``GOOGLE_API_KEY``), ``ETC_GEMINI_BASE_URL``,
``ETC_GEMINI_MODEL``. Thinking is set explicitly (a budget for Gemini 2.5, a level for Gemini 3).
A 429 whose ``QuotaFailure`` names a per-day quota is a used-up quota; a per-minute one stays a
rate limit (its ``RetryInfo`` delay is honoured).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from etclib.core.errors import EmptyAnswerError
from etclib.llm.chat import Reply, empty_answer
from etclib.llm.models import Decoding, ModelInfo, half_price
from etclib.llm.providers.base import (
    DEFAULT_TIMEOUT,
    Batch,
    BatchAnswer,
    BatchState,
    JSONAnswers,
    ProviderSpec,
    Quotas,
)

#: a batch job's states that do not change again (the SDK's names)
_FINISHED = ("JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_EXPIRED", "JOB_STATE_CANCELLED")

_GEMINI = dict(token_param="max_output_tokens")
#: thinking switched off by default (a budget of 0)
_OFF = dict(thinking="budget", thinking_default=0, **_GEMINI)
#: finish reasons that mean the answer was withheld
_BLOCKED = {
    "SAFETY",
    "RECITATION",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "IMAGE_SAFETY",
    "LANGUAGE",
}


def request(
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


def sdk_config(config: dict[str, Any]) -> Any:
    """A plain config dict (from :func:`request`) as ``types.GenerateContentConfig``;
    ``DependencyError`` "upgrade google-genai to >= X" when the installed SDK is too old to take
    a field (:mod:`etclib.llm.sdk`)."""
    from google.genai import types

    try:
        return types.GenerateContentConfig(**config)
    except ValueError as exc:  # pydantic's ValidationError: the SDK refused a field client-side
        from etclib.llm.sdk import too_old

        old = too_old("google-genai", exc)
        if old is None:
            raise
        raise old from exc


def text(resp: Any) -> str:
    """The answer text of a response or chunk (thought parts left out)."""
    for cand in (getattr(resp, "candidates", None) or [])[:1]:
        parts = (cand.content.parts if cand.content else None) or []
        return "".join(p.text for p in parts if p.text and not getattr(p, "thought", False))
    return ""


def _finish(resp: Any) -> str | None:
    """The first candidate's finish reason as a plain name (``STOP``, ``SAFETY`` ...)."""
    for cand in (getattr(resp, "candidates", None) or [])[:1]:
        finish = getattr(cand, "finish_reason", None)
        if finish is not None:
            return str(getattr(finish, "value", finish))
    return None


def _empty_reason(resp: Any) -> tuple[str, str]:
    """``(reason, detail)`` for a response with no text."""
    feedback = getattr(resp, "prompt_feedback", None)
    blocked = getattr(feedback, "block_reason", None) if feedback is not None else None
    if blocked:
        return "safety", f"prompt blocked: {getattr(blocked, 'value', blocked)}"
    if not getattr(resp, "candidates", None):
        return "no_candidate", "no candidate in the response"
    finish = _finish(resp)
    meta = getattr(resp, "usage_metadata", None)
    thoughts = getattr(meta, "thoughts_token_count", None) if meta is not None else None
    if finish in _BLOCKED:
        return "safety", f"finishReason {finish}"
    if finish == "MAX_TOKENS":
        return "output_limit", f"finishReason MAX_TOKENS, thinking tokens {thoughts}"
    return "empty", f"finishReason {finish}, no text"


def _usage(resp: Any) -> dict[str, int]:
    """Tokens of a response; thinking tokens count as output (billed so) and as reasoning."""
    meta = getattr(resp, "usage_metadata", None)
    if meta is None:
        return {}
    thoughts = getattr(meta, "thoughts_token_count", 0) or 0
    return {
        "input_tokens": meta.prompt_token_count or 0,
        "output_tokens": (meta.candidates_token_count or 0) + thoughts,
        "reasoning_tokens": thoughts,
        "cached_tokens": getattr(meta, "cached_content_token_count", 0) or 0,
    }


def reply(resp: Any) -> Reply:
    """The :class:`Reply` of a response; EmptyAnswerError for no text."""
    answer = text(resp)
    served = getattr(resp, "model_version", None)
    finish = _finish(resp)
    cut = finish == "MAX_TOKENS"
    out = Reply(answer, model_version=served, finish_reason=finish, cut=cut, **_usage(resp))
    if not answer.strip():
        reason, detail = _empty_reason(resp)
        raise empty_answer(reason, f"model {served}: {detail}", out)
    return out


class GeminiSpec(ProviderSpec, JSONAnswers, Quotas, Batch):
    name = "gemini"
    description = "Google Gemini (google-genai), temperature 0, streaming."
    label = "Google Gemini"
    package = "google-genai"
    sdk_floor = ("1.51", "ThinkingConfig.thinking_level for Gemini 3")
    key_settings = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    base_url_setting = "ETC_GEMINI_BASE_URL"
    default_endpoint = "https://generativelanguage.googleapis.com"
    judge_model = "gemini-2.5-flash"
    backend_model = "gemini-2.5-flash"
    model_setting = "ETC_GEMINI_MODEL"
    #: thinking models spend output tokens on thoughts: the model's own limit by default
    backend_max_tokens = None
    token_param = "max_output_tokens"
    #: batch mode bills half the standard rate
    batch_prices_source = ("https://ai.google.dev/gemini-api/docs/batch-mode", "2025-11")
    #: documented: inlined requests up to 20 MB per batch (some margin kept)
    batch_max_requests = 10_000
    batch_max_bytes = 18_000_000
    models = tuple(
        half_price(m)
        for m in (
            ModelInfo(
                "gemini-3",
                "gemini",
                fixed_temperature=1.0,
                thinking="level",
                thinking_default="low",
                price=(2.00, 12.00),
                cached_input=0.2,
                **_GEMINI,
            ),
            ModelInfo(
                "gemini-2.5-pro",
                "gemini",
                thinking="budget",
                thinking_default=128,
                thinking_min=128,
                price=(1.25, 10.00),
                cached_input=0.125,
                **_GEMINI,
            ),
            ModelInfo(
                "gemini-2.5-flash-lite", "gemini", price=(0.10, 0.40), cached_input=0.01, **_OFF
            ),
            ModelInfo("gemini-2.5-flash", "gemini", price=(0.30, 2.50), cached_input=0.03, **_OFF),
            ModelInfo("gemini-2.0-flash-lite", "gemini", price=(0.075, 0.30), **_GEMINI),
            ModelInfo(
                "gemini-2.0-flash", "gemini", price=(0.10, 0.40), cached_input=0.025, **_GEMINI
            ),
        )
    )
    hints = {
        "auth": "Check GEMINI_API_KEY (or GOOGLE_API_KEY) and its permissions.",
        "connect": "Check ETC_GEMINI_BASE_URL.",
        "not_found": "Check the model name.",
        "bad_request": "Check the request settings and the model name.",
        "rate_limit": "Wait and try again, or send fewer requests at a time.",
    }
    quota_pages = (
        "the daily request quota",
        "https://aistudio.google.com/usage (limits: https://ai.google.dev/gemini-api/docs/rate-limits)",
    )
    #: Google's free tier and tier 1 (changed without notice, as in December 2025)
    daily_requests = {
        ("gemini-2.5-pro", "free"): 100,
        ("gemini-2.5-flash", "free"): 250,
        ("gemini-2.5-flash-lite", "free"): 1000,
        ("gemini-2.0-flash", "free"): 200,
        ("gemini-2.0-flash-lite", "free"): 200,
        ("gemini-2.5-pro", "tier1"): 10_000,
        ("gemini-2.5-flash", "tier1"): 10_000,
        ("gemini-2.5-flash-lite", "tier1"): 10_000,
    }
    daily_limits_source = ("https://ai.google.dev/gemini-api/docs/rate-limits", "2025-11")
    key_help = (
        "No Gemini API key: set GEMINI_API_KEY (or GOOGLE_API_KEY) in the environment or "
        "in .streamlit/secrets.toml; get one at https://aistudio.google.com/apikey."
    )
    availability_help = "set GEMINI_API_KEY (or GOOGLE_API_KEY), and optionally ETC_GEMINI_MODEL"

    def client(
        self,
        *,
        async_: bool = False,
        timeout: float = DEFAULT_TIMEOUT,
        api_key: str | None = None,
        base_url: str | None = None,
        connect_timeout: float | None = None,
    ) -> Any:
        """A ``google.genai.Client`` (its ``.aio`` is the async client) making one attempt per
        request; google-genai has one timeout for the whole request (``connect_timeout`` is not
        told apart)."""
        key = self.require_key(api_key)
        genai = self.sdk("google.genai")
        types = genai.types
        options = types.HttpOptions(
            base_url=base_url or self.base_url() or None,
            timeout=max(1, int(timeout * 1000)),
            retry_options=types.HttpRetryOptions(attempts=1),
        )
        return genai.Client(api_key=key, vertexai=False, http_options=options)

    async def aclose(self, client: Any) -> None:
        """``client.aio.aclose()`` exists from google-genai 1.39 (below the floor in
        etclib.llm.sdk); with an older SDK the transport is released when collected."""
        close = getattr(getattr(client, "aio", None), "aclose", None)
        if close is not None:
            await close()

    def request(self, model, messages, decoding, *, max_tokens=None) -> dict[str, Any]:
        return request(model, messages, decoding, max_tokens=max_tokens)

    def json_request(self, req, kind, schema, fmt) -> dict[str, Any]:
        req["config"]["response_mime_type"] = "application/json"
        # google-genai takes a JSON Schema as it is (response_json_schema): the OpenAI form,
        # key order kept (``reasoning`` before ``label``)
        req["config"]["response_json_schema"] = schema
        return req

    def token_limit(self, req: dict[str, Any]) -> int | None:
        return req["config"].get("max_output_tokens")

    def with_token_limit(self, req: dict[str, Any], limit: int) -> dict[str, Any]:
        return {**req, "config": {**req["config"], "max_output_tokens": limit}}

    def _args(self, req: dict[str, Any]) -> dict[str, Any]:
        return {**req, "config": sdk_config(req["config"])}

    def send(self, client: Any, req: dict[str, Any]) -> Reply:
        return reply(client.models.generate_content(**self._args(req)))

    async def asend(self, client: Any, req: dict[str, Any]) -> Reply:
        return reply(await client.aio.models.generate_content(**self._args(req)))

    def open_stream(self, client: Any, req: dict[str, Any]) -> Iterable[Any]:
        # a generator: the request goes out at first iteration, inside stream_with_retries
        return client.models.generate_content_stream(**self._args(req))

    def chunk_text(self, chunk: Any) -> str:
        return text(chunk)

    def stream_end(self, chunks: list[Any]) -> tuple[Reply, str | None]:
        if not chunks:
            return Reply(""), "no_candidate"
        last = chunks[-1]
        usage = _usage(last)
        tokens = {k: usage[k] for k in ("input_tokens", "output_tokens") if k in usage}
        out = Reply("", model_version=getattr(last, "model_version", None), **tokens)
        return out, _empty_reason(last)[0]

    # -- batch mode: inlined requests, inlined responses in the same order ---------------------
    def batch_submit(self, client, model, requests, name) -> str:
        src = [
            {
                "contents": req["contents"],
                "config": sdk_config(req["config"]),
                "metadata": {"key": key},
            }
            for key, req in requests
        ]
        job = client.batches.create(model=model, src=src, config={"display_name": name})
        return str(job.name)

    @staticmethod
    def _state(job: Any) -> str:
        state = getattr(job, "state", None)
        return str(getattr(state, "value", state) or "")

    def batch_read(self, client, batch_id) -> BatchState:
        job = client.batches.get(name=batch_id)
        state = self._state(job)
        error = getattr(job, "error", None)
        text = ""
        if state in ("JOB_STATE_FAILED", "JOB_STATE_EXPIRED", "JOB_STATE_CANCELLED"):
            text = getattr(error, "message", None) or f"the batch ended {state}"
        return BatchState(state, state in _FINISHED, error=text)

    def batch_answers(self, client, batch_id) -> list[BatchAnswer]:
        job = client.batches.get(name=batch_id)
        responses = getattr(getattr(job, "dest", None), "inlined_responses", None) or []
        out = []
        for item in responses:
            key = str((item.metadata or {}).get("key"))
            if item.error is not None or item.response is None:
                code = getattr(item.error, "code", None)
                out.append(BatchAnswer(key, error=f"HTTP {code}" if code else "no response"))
                continue
            try:
                out.append(BatchAnswer(key, reply(item.response)))
            except EmptyAnswerError as exc:
                out.append(BatchAnswer(key, error=f"empty answer ({exc})"))
        return out

    def quota(self, exc: BaseException, body: Any, status: int) -> str | None:
        error = body.get("error", body) if isinstance(body, dict) else None
        details = error.get("details") if isinstance(error, dict) else None
        for d in details if isinstance(details, list) else []:
            if not (isinstance(d, dict) and str(d.get("@type", "")).endswith("rpc.QuotaFailure")):
                continue
            for v in d.get("violations") or []:
                quota = str((v or {}).get("quotaId") or "") if isinstance(v, dict) else ""
                if "PerDay" in quota:
                    return quota
        return None


SPEC = GeminiSpec()
