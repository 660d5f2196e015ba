"""Google's Gemini Developer API through the ``google-genai`` SDK.

Settings: ``GEMINI_API_KEY`` (or ``GOOGLE_API_KEY``); ``ETC_GEMINI_BASE_URL`` overrides the
endpoint (a proxy, or the loopback fake server in tests). The system message becomes the
``system_instruction``; the judge asks for JSON with ``response_mime_type`` and the answer's
JSON Schema as ``response_json_schema`` (as google-genai takes it; no conversion to Gemini's own
``Schema`` form). A 429 whose ``google.rpc.QuotaFailure`` names a per-day quota
(``GenerateRequestsPerDayPerProjectPerModel-FreeTier``) is a used-up quota; a per-minute one
stays a rate limit (its ``RetryInfo`` delay is honoured).

As the ``gemini`` backend (:class:`etclib.backends._api.HostedBackend`):
The prompt's system message becomes the ``system_instruction``; the user message the content.
Thinking is set explicitly (``thinking_config``), so answers and cost do not depend on a server
default: Gemini 2.5 Flash / Flash-Lite get a budget of 0 (no thinking; the model then spends
its output on the answer), 2.5 Pro the smallest budget it accepts (128), Gemini 3 thinking
level ``low`` and temperature 1.0 (Google's guidance for Gemini 3); see
:mod:`etclib.llm.models`. The signature names the thinking setting sent.

Settings (environment or ``.streamlit/secrets.toml``):

- ``GEMINI_API_KEY`` (or ``GOOGLE_API_KEY``): the key.
- ``ETC_GEMINI_BASE_URL``: another endpoint (a proxy; the loopback fake server in tests).
- ``ETC_GEMINI_MODEL``: the model name (default ``gemini-2.5-flash``); the ``model`` option wins.

Options: ``model``, ``max_new_tokens`` (``max_output_tokens``; default: the model's own limit,
because thinking models spend output tokens on thoughts), ``thinking`` (a budget in tokens for
Gemini 2.5, a level for Gemini 3, ``default`` for the server's default; default: the table's),
``batch_size`` (requests in flight, default 8), ``retries`` (on 429, 5xx, timeouts; the delay
Gemini suggests in a 429's RetryInfo is honoured; default 4), ``retry_wait``, ``timeout``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .. import chat
from ..chat import Reply
from ..models import ModelInfo, half_price
from .base import DEFAULT_TIMEOUT, BatchAnswer, BatchState, ProviderSpec

#: a batch job's states that do not change again (the SDK's names)
_FINISHED = ("JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_EXPIRED", "JOB_STATE_CANCELLED")

_GEMINI = dict(token_param="max_output_tokens")


class GeminiSpec(ProviderSpec):
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
    batch_label = "Gemini batch mode"
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
                "gemini-2.5-flash-lite",
                "gemini",
                thinking="budget",
                thinking_default=0,
                price=(0.10, 0.40),
                cached_input=0.01,
                **_GEMINI,
            ),
            ModelInfo(
                "gemini-2.5-flash",
                "gemini",
                thinking="budget",
                thinking_default=0,
                price=(0.30, 2.50),
                cached_input=0.03,
                **_GEMINI,
            ),
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
        try:
            from google import genai
            from google.genai import types
        except ImportError as exc:
            raise self.missing_sdk(exc) from exc
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
        return chat.gemini_request(model, messages, decoding, max_tokens=max_tokens)

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
        return {**req, "config": chat.gemini_config(req["config"])}

    def send(self, client: Any, req: dict[str, Any]) -> Reply:
        return chat.gemini_reply(client.models.generate_content(**self._args(req)))

    async def asend(self, client: Any, req: dict[str, Any]) -> Reply:
        return chat.gemini_reply(await client.aio.models.generate_content(**self._args(req)))

    def open_stream(self, client: Any, req: dict[str, Any]) -> Iterable[Any]:
        # a generator: the request goes out at first iteration, inside stream_with_retries
        return client.models.generate_content_stream(**self._args(req))

    def chunk_text(self, chunk: Any) -> str:
        return chat.gemini_text(chunk)

    def stream_end(self, chunks: list[Any]) -> tuple[Reply, str | None]:
        if not chunks:
            return Reply(""), "no_candidate"
        last = chunks[-1]
        tokens_in, tokens_out = chat.gemini_tokens(last)
        reply = Reply("", tokens_in, tokens_out, getattr(last, "model_version", None))
        return reply, chat.gemini_empty_reason(last)[0]

    # -- batch mode: inlined requests, inlined responses in the same order ---------------------
    def batch_submit(self, client, model, requests, name) -> str:
        src = [
            {
                "contents": req["contents"],
                "config": chat.gemini_config(req["config"]),
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
        from ...errors import EmptyAnswerError

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
                out.append(BatchAnswer(key, chat.gemini_reply(item.response)))
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
