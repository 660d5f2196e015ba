"""One judge call to one provider: build the request, send it, return text and token counts.

A provider turns ``(kind, messages)`` into a *request*: a plain JSON-able dict holding
everything sent (model, messages, temperature, structured-output settings). ``kind`` names the
answer's JSON schema in :data:`SCHEMAS`: ``decompose`` and ``entail`` for the scoring judge,
``labels`` for the label judge (:mod:`etclib.labeljudge`). The runner hashes that dict into the
cache key and hands it back to :meth:`complete`. Providers do not retry; the SDK clients are
built with their retries off (see :mod:`etclib.llm`).

- ``gemini``: google-genai ``generate_content`` with ``response_mime_type="application/json"``
  and a ``response_schema``; temperature 0 unless the request asks for another.
- ``openai``: Chat Completions with ``response_format`` ``json_schema`` (strict) by default;
  ``ETC_JUDGE_OPENAI_FORMAT=json_object`` or ``none`` for OpenAI-compatible servers that lack
  JSON-schema support. Temperature 0 unless the request asks for another.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from .. import llm
from ..config import setting
from ..errors import ConfigError, JudgeError

#: provider -> default judge model
DEFAULT_MODELS: dict[str, str] = {"gemini": "gemini-2.5-flash", "openai": "gpt-4.1-mini"}
DEFAULT_PROVIDER = "gemini"
TEMPERATURE = 0.0
OPENAI_FORMATS = ("json_schema", "json_object", "none")

#: JSON Schemas of the answers, by kind (OpenAI form; Gemini's is derived below).
SCHEMAS: dict[str, dict[str, Any]] = {
    "decompose": {
        "type": "object",
        "properties": {"units": {"type": "array", "items": {"type": "string"}}},
        "required": ["units"],
        "additionalProperties": False,
    },
    "entail": {
        "type": "object",
        "properties": {
            "reasoning": {"type": "string"},
            "label": {"type": "string", "enum": ["Supported", "Neutral", "Not Supported"]},
        },
        "required": ["reasoning", "label"],
        "additionalProperties": False,
    },
    "labels": {
        "type": "object",
        "properties": {"labels": {"type": "array", "items": {"type": "string"}}},
        "required": ["labels"],
        "additionalProperties": False,
    },
}


def _gemini_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """OpenAPI-subset schema as Gemini's ``response_schema`` takes it (ordered properties)."""
    out: dict[str, Any] = {"type": schema["type"].upper()}
    if "enum" in schema:
        out["enum"] = list(schema["enum"])
    if "items" in schema:
        out["items"] = _gemini_schema(schema["items"])
    if "properties" in schema:
        out["properties"] = {k: _gemini_schema(v) for k, v in schema["properties"].items()}
        out["required"] = list(schema.get("required", []))
        out["property_ordering"] = list(schema["properties"])
    return out


@dataclass
class Reply:
    """What one successful call returned."""

    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    model_version: str | None = None


class Provider(Protocol):
    """The small interface the runner needs."""

    name: str
    model: str

    def request(
        self, kind: str, messages: list[dict[str, str]], *, temperature: float = TEMPERATURE
    ) -> dict[str, Any]: ...

    async def complete(self, request: dict[str, Any]) -> Reply: ...

    async def aclose(self) -> None: ...


class OpenAIProvider:
    """Chat Completions through the ``openai`` SDK (OpenAI, vLLM, other compatible servers)."""

    name = "openai"

    def __init__(self, model: str, *, timeout: float, response_format: str | None = None):
        self.model = model
        fmt = response_format or setting("ETC_JUDGE_OPENAI_FORMAT", "json_schema")
        if fmt not in OPENAI_FORMATS:
            raise ConfigError(
                f"ETC_JUDGE_OPENAI_FORMAT={fmt!r} is not valid. Use one of "
                f"{', '.join(OPENAI_FORMATS)}."
            )
        self.response_format = fmt
        self.client = llm.openai_client(async_=True, timeout=timeout)

    @property
    def endpoint(self) -> str:
        return str(self.client.base_url)

    def request(
        self, kind: str, messages: list[dict[str, str]], *, temperature: float = TEMPERATURE
    ) -> dict[str, Any]:
        req: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": temperature,
        }
        if self.response_format == "json_schema":
            req["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": f"etc_{kind}", "strict": True, "schema": SCHEMAS[kind]},
            }
        elif self.response_format == "json_object":
            req["response_format"] = {"type": "json_object"}
        return req

    async def complete(self, request: dict[str, Any]) -> Reply:
        resp = await self.client.chat.completions.create(**request)
        if not resp.choices:
            return Reply("", model_version=getattr(resp, "model", None))
        usage = resp.usage
        return Reply(
            text=resp.choices[0].message.content or "",
            input_tokens=(usage.prompt_tokens or 0) if usage else 0,
            output_tokens=(usage.completion_tokens or 0) if usage else 0,
            model_version=getattr(resp, "model", None),
        )

    async def aclose(self) -> None:
        await self.client.close()


class GeminiProvider:
    """``generate_content`` through the ``google-genai`` SDK (Gemini Developer API)."""

    name = "gemini"

    def __init__(self, model: str, *, timeout: float):
        self.model = model
        self.client = llm.gemini_client(timeout=timeout)

    @property
    def endpoint(self) -> str:
        return llm.endpoint("gemini")

    def request(
        self, kind: str, messages: list[dict[str, str]], *, temperature: float = TEMPERATURE
    ) -> dict[str, Any]:
        system = "\n".join(m["content"] for m in messages if m["role"] == "system")
        contents = [
            {
                "role": "model" if m["role"] == "assistant" else "user",
                "parts": [{"text": m["content"]}],
            }
            for m in messages
            if m["role"] != "system"
        ]
        return {
            "model": self.model,
            "contents": contents,
            "config": {
                "system_instruction": system,
                "temperature": temperature,
                "response_mime_type": "application/json",
                "response_schema": _gemini_schema(SCHEMAS[kind]),
            },
        }

    async def complete(self, request: dict[str, Any]) -> Reply:
        from google.genai import types

        config = dict(request["config"])
        config["response_schema"] = types.Schema.model_validate(config["response_schema"])
        resp = await self.client.aio.models.generate_content(
            model=request["model"],
            contents=request["contents"],
            config=types.GenerateContentConfig(**config),
        )
        text = ""
        for cand in (resp.candidates or [])[:1]:
            parts = (cand.content.parts if cand.content else None) or []
            text = "".join(p.text for p in parts if p.text and not getattr(p, "thought", False))
        meta = resp.usage_metadata
        out_tokens = 0
        if meta is not None:
            out_tokens = (meta.candidates_token_count or 0) + (meta.thoughts_token_count or 0)
        return Reply(
            text=text,
            input_tokens=(meta.prompt_token_count or 0) if meta is not None else 0,
            output_tokens=out_tokens,
            model_version=resp.model_version,
        )

    async def aclose(self) -> None:
        await self.client.aio.aclose()


def make_provider(name: str, model: str | None = None, *, timeout: float) -> Provider:
    """Build provider ``name`` (``gemini`` or ``openai``); missing keys raise JudgeError."""
    if name not in DEFAULT_MODELS:
        raise JudgeError(
            f"Unknown judge provider {name!r}. Available: {', '.join(DEFAULT_MODELS)}."
        )
    try:
        if name == "openai":
            return OpenAIProvider(model or DEFAULT_MODELS[name], timeout=timeout)
        return GeminiProvider(model or DEFAULT_MODELS[name], timeout=timeout)
    except ConfigError as exc:
        raise JudgeError(f"The {name} judge is not configured. {exc}") from exc
