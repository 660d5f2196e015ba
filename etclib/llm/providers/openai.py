"""OpenAI and OpenAI-compatible servers (vLLM): Chat Completions through the ``openai`` SDK.

Settings: ``OPENAI_API_KEY`` (``EMPTY`` for a server that checks none), ``OPENAI_BASE_URL``,
``ETC_OPENAI_MODEL``; ``ETC_JUDGE_OPENAI_FORMAT=json_object`` or ``none`` for servers without
JSON-schema support. A 429 whose ``code`` is ``insufficient_quota`` is a used-up quota.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from etclib.core.config import setting
from etclib.core.errors import ConfigError, EmptyAnswerError
from etclib.llm import models as table
from etclib.llm.chat import Reply, empty_answer
from etclib.llm.models import OPENAI_DEFAULT_MODEL, Decoding, ModelInfo, half_price, info
from etclib.llm.providers.base import (
    Batch,
    BatchAnswer,
    BatchState,
    JSONAnswers,
    ModelListing,
    ProviderSpec,
    Quotas,
    ServiceTiers,
)

FORMATS = ("json_schema", "json_object", "none")
_REASONING = dict(
    temperature=False,
    token_param="max_completion_tokens",
    thinking="effort",
    thinking_default="low",
)
#: reasoning models that take flex processing
_FLEX = dict(service_tiers=("flex",), **_REASONING)
#: finish reasons of an answer without text, and the empty-answer reason each means
_EMPTY = {"content_filter": "safety", "length": "output_limit"}


def request(
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


def reply(resp: Any) -> Reply:
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
    out = Reply(text, model_version=served, finish_reason=finish, cut=finish == "length", **tokens)
    if not text.strip():
        refusal = getattr(message, "refusal", None)
        if refusal:
            raise empty_answer("refusal", f"model {served}: refusal {refusal!r}", out)
        reason = _EMPTY.get(finish, "empty")
        raise empty_answer(reason, f"model {served}: finish_reason {finish!r}, no text", out)
    return out


class OpenAISpec(ProviderSpec, JSONAnswers, ServiceTiers, Quotas, Batch, ModelListing):
    name = "openai"
    description = "OpenAI or OpenAI-compatible server (vLLM), temperature 0, streaming."
    label = "OpenAI"
    package = "openai"
    sdk_classes = ("openai", "OpenAI", "AsyncOpenAI")
    sdk_floor = ("1.100", "reasoning_effort and max_completion_tokens for GPT-5 and o-series")
    key_settings = ("OPENAI_API_KEY",)
    base_url_setting = "OPENAI_BASE_URL"
    default_endpoint = "https://api.openai.com/v1"
    judge_model = "gpt-4.1-mini"
    backend_model = OPENAI_DEFAULT_MODEL
    model_setting = "ETC_OPENAI_MODEL"
    #: the Batch API bills half the standard rate; flex processing bills the batch rate
    batch_prices_source = ("https://platform.openai.com/docs/guides/batch", "2025-11")
    #: documented: 50,000 requests and 200 MB per input file (some margin kept)
    batch_max_requests = 50_000
    batch_max_bytes = 190_000_000
    models = tuple(
        half_price(m)
        for m in (
            # classic chat models
            ModelInfo("gpt-4.1-nano", "openai", price=(0.10, 0.40), cached_input=0.025),
            ModelInfo("gpt-4.1-mini", "openai", price=(0.40, 1.60), cached_input=0.1),
            ModelInfo("gpt-4.1", "openai", price=(2.00, 8.00), cached_input=0.5),
            ModelInfo("gpt-4o-mini", "openai", price=(0.15, 0.60), cached_input=0.075),
            ModelInfo("gpt-4o", "openai", price=(2.50, 10.00), cached_input=1.25),
            # reasoning models: default temperature only, max_completion_tokens
            ModelInfo("gpt-5-nano", "openai", price=(0.05, 0.40), cached_input=0.005, **_FLEX),
            ModelInfo("gpt-5-mini", "openai", price=(0.25, 2.00), cached_input=0.025, **_FLEX),
            ModelInfo("gpt-5", "openai", price=(1.25, 10.00), cached_input=0.125, **_FLEX),
            ModelInfo(
                "o1-mini",
                "openai",
                structured=False,
                price=(1.10, 4.40),
                cached_input=0.55,
                **_REASONING,
            ),
            ModelInfo("o1", "openai", price=(15.00, 60.00), cached_input=7.5, **_REASONING),
            ModelInfo("o3-mini", "openai", price=(1.10, 4.40), cached_input=0.55, **_REASONING),
            ModelInfo("o3", "openai", price=(2.00, 8.00), cached_input=0.5, **_FLEX),
            ModelInfo("o4-mini", "openai", price=(1.10, 4.40), cached_input=0.275, **_FLEX),
        )
    )
    hints = {
        "auth": "Check OPENAI_API_KEY (and OPENAI_BASE_URL).",
        "connect": "Check OPENAI_BASE_URL and that the server is running.",
        "not_found": "Check the model name against the server's model list.",
        "bad_request": "Check the request settings and the model name.",
        "rate_limit": "Wait and try again, or send fewer requests at a time.",
    }
    quota_pages = (
        "the account's billing quota (no credit left)",
        "https://platform.openai.com/settings/organization/billing/overview and "
        "https://platform.openai.com/usage",
    )
    key_help = (
        "No OpenAI API key: set OPENAI_API_KEY in the environment or in "
        ".streamlit/secrets.toml (for a self-hosted OpenAI-compatible server that checks "
        "no key, set OPENAI_API_KEY=EMPTY and OPENAI_BASE_URL to its /v1 URL)."
    )
    availability_help = (
        "set OPENAI_API_KEY (EMPTY for a vLLM server) and, for a server other than "
        "OpenAI's, OPENAI_BASE_URL and ETC_OPENAI_MODEL"
    )

    def served_models(
        self, base_url: str, api_key: str | None = None, timeout: float = 2.0
    ) -> list[dict[str, Any]]:
        return served_models(base_url, api_key, timeout=timeout)

    def request(self, model, messages, decoding, *, max_tokens=None) -> dict[str, Any]:
        return request(model, messages, decoding, max_tokens=max_tokens)

    def judge_format(self, model: str) -> str:
        fmt = setting("ETC_JUDGE_OPENAI_FORMAT", "json_schema")
        if fmt not in FORMATS:
            raise ConfigError(
                f"ETC_JUDGE_OPENAI_FORMAT={fmt!r} is not valid. Use one of {', '.join(FORMATS)}."
            )
        if fmt == "json_schema" and not info(self.name, model).structured:
            fmt = "json_object"
        return fmt

    def json_request(self, req, kind, schema, fmt) -> dict[str, Any]:
        if fmt == "json_schema":
            req["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": f"etc_{kind}", "strict": True, "schema": schema},
            }
        elif fmt == "json_object":
            req["response_format"] = {"type": "json_object"}
        return req

    def token_limit(self, req: dict[str, Any]) -> int | None:
        return req.get("max_completion_tokens", req.get("max_tokens"))

    def with_token_limit(self, req: dict[str, Any], limit: int) -> dict[str, Any]:
        field = "max_completion_tokens" if "max_completion_tokens" in req else "max_tokens"
        return {**req, field: limit}

    def send(self, client: Any, req: dict[str, Any]) -> Reply:
        return reply(client.chat.completions.create(**req))

    async def asend(self, client: Any, req: dict[str, Any]) -> Reply:
        return reply(await client.chat.completions.create(**req))

    def open_stream(self, client: Any, req: dict[str, Any]) -> Iterable[Any]:
        return client.chat.completions.create(
            **req, stream=True, stream_options={"include_usage": True}
        )

    def chunk_text(self, chunk: Any) -> str:
        return (chunk.choices[0].delta.content or "") if chunk.choices else ""

    def stream_end(self, chunks: list[Any]) -> tuple[Reply, str | None]:
        usage = next((c.usage for c in reversed(chunks) if getattr(c, "usage", None)), None)
        finish = next((c.choices[0].finish_reason for c in reversed(chunks) if c.choices), None)
        out = Reply(
            "",
            input_tokens=(usage.prompt_tokens or 0) if usage else 0,
            output_tokens=(usage.completion_tokens or 0) if usage else 0,
            model_version=getattr(chunks[-1], "model", None) if chunks else None,
        )
        return out, _EMPTY.get(finish or "")

    def online_fields(self, model: str, service_tier: str) -> dict[str, Any]:
        """``service_tier`` where the model takes it (flex processing: o3, o4-mini, GPT-5;
        https://platform.openai.com/docs/guides/flex-processing)."""
        if service_tier not in info(self.name, model).service_tiers:
            takers = [m.prefix for m in table.MODELS if service_tier in m.service_tiers]
            raise ConfigError(
                f"--service-tier {service_tier}: model {model} does not take it "
                f"({service_tier} applies to {', '.join(takers) or 'no model'}); choose one of "
                "those with --judge-model, or leave the option out."
            )
        return {"service_tier": service_tier}

    # -- the Batch API: a JSONL file of requests, one job, an output and an error file --------
    def batch_submit(self, client, model, requests, name) -> str:
        lines = "".join(
            json.dumps(
                {"custom_id": key, "method": "POST", "url": "/v1/chat/completions", "body": req},
                ensure_ascii=False,
            )
            + "\n"
            for key, req in requests
        )
        upload = client.files.create(file=(f"{name}.jsonl", lines.encode("utf-8")), purpose="batch")
        job = client.batches.create(
            input_file_id=upload.id,
            endpoint="/v1/chat/completions",
            completion_window="24h",
            metadata={"etclib": name},
        )
        return str(job.id)

    def batch_read(self, client, batch_id) -> BatchState:
        job = client.batches.retrieve(batch_id)
        counts = job.request_counts
        errors = getattr(getattr(job, "errors", None), "data", None) or []
        error = "; ".join(f"{e.code}: {e.message}" for e in errors[:3])
        if job.status in ("expired", "cancelled") and not error:
            error = f"the batch {job.status}"
        return BatchState(
            job.status,
            job.status in ("completed", "failed", "expired", "cancelled"),
            total=counts.total if counts else 0,
            answered=counts.completed if counts else 0,
            failed=counts.failed if counts else 0,
            error=error if job.status != "completed" else "",
        )

    def batch_answers(self, client, batch_id) -> list[BatchAnswer]:
        from openai.types.chat import ChatCompletion

        job = client.batches.retrieve(batch_id)
        out = []
        for file_id in (job.output_file_id, job.error_file_id):
            if not file_id:
                continue
            for line in client.files.content(file_id).text.splitlines():
                if not line.strip():
                    continue
                row = json.loads(line)
                key, response = str(row.get("custom_id")), row.get("response") or {}
                if response.get("status_code") == 200:
                    try:
                        answer = reply(ChatCompletion.model_validate(response["body"]))
                    except EmptyAnswerError as exc:
                        out.append(BatchAnswer(key, error=f"empty answer ({exc})"))
                        continue
                    out.append(BatchAnswer(key, answer))
                elif response:
                    out.append(BatchAnswer(key, error=f"HTTP {response.get('status_code')}"))
                else:
                    out.append(BatchAnswer(key, error=str((row.get("error") or {}).get("code"))))
        return out

    def quota(self, exc: BaseException, body: Any, status: int) -> str | None:
        codes = {getattr(exc, "code", None), getattr(exc, "type", None)}
        if isinstance(body, dict):
            codes |= {body.get("code"), body.get("type")}
        return "insufficient_quota" if status == 429 and "insufficient_quota" in codes else None


def served_models(
    base_url: str, api_key: str | None = None, timeout: float = 2.0
) -> list[dict[str, Any]]:
    """The models an OpenAI-compatible server at ``base_url`` serves (``GET /models``), as it
    describes them (vLLM adds ``root``, ``parent``, ``max_model_len``: the chat's model card).
    One attempt; the SDK's exception is raised as it is, for :func:`etclib.llm.classify`.
    """
    client = SPEC.client(timeout=float(timeout), base_url=base_url, api_key=api_key or "EMPTY")
    try:
        return [m.model_dump() for m in client.models.list().data]
    finally:
        client.close()


SPEC = OpenAISpec()
