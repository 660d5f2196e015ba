"""One judge call to one provider: build the request, send it, return text and token counts.

A provider turns ``(kind, messages)`` into a *request*: a plain JSON-able dict holding
everything sent (model, messages, decoding settings, structured-output settings). ``kind`` names
the answer's JSON schema in :data:`SCHEMAS`: ``decompose`` and ``entail`` for the scoring judge,
``labels`` for the label judge (:mod:`etclib.studies.labeljudge`), ``causes`` for the cause layer
(:mod:`etclib.studies.causes`). The runner hashes that dict into the
cache key and hands it back to :meth:`complete`. Providers do not retry; the SDK clients are
built with their retries off, and the runner retries with :mod:`etclib.llm.retry`.

Requests are built by :mod:`etclib.llm.chat` from the capability table
(:mod:`etclib.llm.models`), the same code the backends use, so a model gets only what it
accepts: temperature 0 where it takes one (none for GPT-5 / o-series, 1.0 for Gemini 3), the
thinking setting set explicitly (Gemini 2.5 Flash: budget 0), see :meth:`Provider.decoding`.

- ``gemini``: google-genai ``generate_content`` with ``response_mime_type="application/json"``
  and the same JSON Schema as ``response_json_schema`` (no conversion to Gemini's own
  ``Schema`` form; key order is kept, so ``reasoning`` comes before ``label``).
- ``openai``: Chat Completions with ``response_format`` ``json_schema`` (strict) by default;
  ``ETC_JUDGE_OPENAI_FORMAT=json_object`` or ``none`` for OpenAI-compatible servers that lack
  JSON-schema support (models without structured output in the table get ``json_object``).

Every request carries a token limit (:func:`default_max_tokens`, or ``judge_max_tokens``):
room for a judge answer (:data:`ANSWER_TOKENS`) plus, for a model that thinks, room for its
thinking, which reasoning models (GPT-5, o-series, Gemini 2.5/3) spend inside the same limit.
:meth:`Provider.token_limit` and :meth:`Provider.with_token_limit` read and change it, so the
runner can ask a cut answer again with twice the limit.

An answer with no text raises :class:`~etclib.errors.EmptyAnswerError` (see
:mod:`etclib.llm.chat`); the runner retries a blank answer and gives up at once on a safety
block.
"""

from __future__ import annotations

from typing import Any, Protocol

from .. import llm
from ..config import setting
from ..errors import ConfigError, JudgeError
from ..llm import chat
from ..llm.chat import Reply
from ..llm.models import Decoding

__all__ = [
    "ANSWER_TOKENS",
    "DEFAULT_MODELS",
    "DEFAULT_PROVIDER",
    "SCHEMAS",
    "TEMPERATURE",
    "GeminiProvider",
    "OpenAIProvider",
    "Provider",
    "Reply",
    "default_max_tokens",
    "make_provider",
]

#: provider -> default judge model
DEFAULT_MODELS: dict[str, str] = {"gemini": "gemini-2.5-flash", "openai": "gpt-4.1-mini"}
DEFAULT_PROVIDER = "gemini"
TEMPERATURE = 0.0
OPENAI_FORMATS = ("json_schema", "json_object", "none")

#: Tokens a judge answer may take: a decomposition into a few units or an entailment with its
#: short reasoning is 50-300 tokens; the rest is margin.
ANSWER_TOKENS = 1024
#: Room for thinking on top of the answer, by reasoning effort / thinking level. Reasoning
#: models (GPT-5, o-series) count hidden reasoning tokens in ``max_completion_tokens``, Gemini
#: 2.5 / 3 count thinking in ``max_output_tokens``; too little room cuts the answer (or leaves
#: none). ``etclib judge check`` reports the reasoning tokens a model really spends.
THINKING_TOKENS: dict[str, int] = {"minimal": 1024, "low": 4096, "medium": 8192, "high": 16384}
#: Room for thinking when its size is left to the server (a dynamic budget, ``default``).
OPEN_THINKING_TOKENS = 8192


def default_max_tokens(decoding: Decoding) -> int:
    """The token limit a judge request gets: :data:`ANSWER_TOKENS`, plus the thinking room of
    ``decoding`` (a budget's tokens; :data:`THINKING_TOKENS` for a level or effort;
    :data:`OPEN_THINKING_TOKENS` when the server decides; nothing for a model without thinking
    or with thinking off)."""
    kind, value = decoding.info.thinking, decoding.thinking
    if kind == "none":
        return ANSWER_TOKENS
    if kind == "budget":
        if value is None or int(value) < 0:
            return ANSWER_TOKENS + OPEN_THINKING_TOKENS
        return ANSWER_TOKENS + int(value)
    if value is None:
        return ANSWER_TOKENS + OPEN_THINKING_TOKENS
    return ANSWER_TOKENS + THINKING_TOKENS.get(str(value), OPEN_THINKING_TOKENS)


#: JSON Schemas of the answers, by kind (sent as they are to both providers).
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
    # the cause layer (etclib.studies.causes): utterance numbers of the dialogue so far, [] for latent
    "causes": {
        "type": "object",
        "properties": {
            "reasoning": {"type": "string"},
            "causes": {"type": "array", "items": {"type": "integer"}},
        },
        "required": ["reasoning", "causes"],
        "additionalProperties": False,
    },
}


class Provider(Protocol):
    """The small interface the runner needs."""

    name: str
    model: str
    endpoint: str

    def decoding(self, temperature: float = TEMPERATURE) -> Decoding: ...

    def request(
        self, kind: str, messages: list[dict[str, str]], *, temperature: float = TEMPERATURE
    ) -> dict[str, Any]: ...

    async def complete(self, request: dict[str, Any]) -> Reply: ...

    async def aclose(self) -> None: ...

    # optional (the runner asks a cut answer again with twice the limit only when present):
    # def token_limit(self, request) -> int | None
    # def with_token_limit(self, request, limit: int) -> dict[str, Any]


class OpenAIProvider:
    """Chat Completions through the ``openai`` SDK (OpenAI, vLLM, other compatible servers)."""

    name = "openai"

    def __init__(
        self,
        model: str,
        *,
        timeout: float,
        response_format: str | None = None,
        thinking: Any = None,
        max_tokens: int | None = None,
    ):
        self.model = model
        self.thinking = thinking
        decoding = self.decoding()  # a thinking value the model cannot take fails now
        self.max_tokens = max_tokens or default_max_tokens(decoding)
        fmt = response_format or setting("ETC_JUDGE_OPENAI_FORMAT", "json_schema")
        if fmt not in OPENAI_FORMATS:
            raise ConfigError(
                f"ETC_JUDGE_OPENAI_FORMAT={fmt!r} is not valid. Use one of "
                f"{', '.join(OPENAI_FORMATS)}."
            )
        if fmt == "json_schema" and not llm.info("openai", model).structured:
            fmt = "json_object"
        self.response_format = fmt
        self.client = llm.openai_client(async_=True, timeout=timeout)

    @property
    def endpoint(self) -> str:
        return str(self.client.base_url)

    def decoding(self, temperature: float = TEMPERATURE) -> Decoding:
        return llm.decoding(
            "openai",
            self.model,
            temperature=temperature,
            thinking=self.thinking,
            where="judge_thinking",
        )

    def request(
        self, kind: str, messages: list[dict[str, str]], *, temperature: float = TEMPERATURE
    ) -> dict[str, Any]:
        decoding = self.decoding(temperature)
        req = chat.openai_request(self.model, messages, decoding, max_tokens=self.max_tokens)
        if self.response_format == "json_schema":
            req["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": f"etc_{kind}", "strict": True, "schema": SCHEMAS[kind]},
            }
        elif self.response_format == "json_object":
            req["response_format"] = {"type": "json_object"}
        return req

    def token_limit(self, request: dict[str, Any]) -> int | None:
        return request.get(self.decoding().info.token_param)

    def with_token_limit(self, request: dict[str, Any], limit: int) -> dict[str, Any]:
        return {**request, self.decoding().info.token_param: limit}

    async def complete(self, request: dict[str, Any]) -> Reply:
        return chat.openai_reply(await self.client.chat.completions.create(**request))

    async def aclose(self) -> None:
        await self.client.close()


class GeminiProvider:
    """``generate_content`` through the ``google-genai`` SDK (Gemini Developer API)."""

    name = "gemini"

    def __init__(
        self, model: str, *, timeout: float, thinking: Any = None, max_tokens: int | None = None
    ):
        self.model = model
        self.thinking = thinking
        self.max_tokens = max_tokens or default_max_tokens(self.decoding())
        self.client = llm.gemini_client(timeout=timeout)

    @property
    def endpoint(self) -> str:
        return llm.endpoint("gemini")

    def decoding(self, temperature: float = TEMPERATURE) -> Decoding:
        return llm.decoding(
            "gemini",
            self.model,
            temperature=temperature,
            thinking=self.thinking,
            where="judge_thinking",
        )

    def request(
        self, kind: str, messages: list[dict[str, str]], *, temperature: float = TEMPERATURE
    ) -> dict[str, Any]:
        req = chat.gemini_request(
            self.model, messages, self.decoding(temperature), max_tokens=self.max_tokens
        )
        req["config"]["response_mime_type"] = "application/json"
        # google-genai takes a JSON Schema as it is (response_json_schema): the OpenAI form
        req["config"]["response_json_schema"] = SCHEMAS[kind]
        return req

    def token_limit(self, request: dict[str, Any]) -> int | None:
        return request["config"].get("max_output_tokens")

    def with_token_limit(self, request: dict[str, Any], limit: int) -> dict[str, Any]:
        return {**request, "config": {**request["config"], "max_output_tokens": limit}}

    async def complete(self, request: dict[str, Any]) -> Reply:
        resp = await self.client.aio.models.generate_content(
            model=request["model"],
            contents=request["contents"],
            config=chat.gemini_config(request["config"]),
        )
        return chat.gemini_reply(resp)

    async def aclose(self) -> None:
        await llm.aclose_gemini(self.client)


def make_provider(
    name: str,
    model: str | None = None,
    *,
    timeout: float,
    thinking: Any = None,
    max_tokens: int | None = None,
) -> Provider:
    """Build provider ``name`` (``gemini`` or ``openai``); missing keys raise JudgeError.
    ``max_tokens``: the token limit (None: :func:`default_max_tokens`)."""
    if name not in DEFAULT_MODELS:
        raise JudgeError(
            f"Unknown judge provider {name!r}. Available: {', '.join(DEFAULT_MODELS)}."
        )
    try:
        if name == "openai":
            return OpenAIProvider(
                model or DEFAULT_MODELS[name],
                timeout=timeout,
                thinking=thinking,
                max_tokens=max_tokens,
            )
        return GeminiProvider(
            model or DEFAULT_MODELS[name], timeout=timeout, thinking=thinking, max_tokens=max_tokens
        )
    except ConfigError as exc:
        raise JudgeError(f"The {name} judge is not configured. {exc}") from exc
