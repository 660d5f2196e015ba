"""One judge call to one provider: build the request, send it, return text and token counts.

A provider turns ``(kind, messages)`` into a *request*, a plain JSON-able dict of everything
sent, which the runner hashes into the cache key. ``kind`` names the answer's JSON schema in
:data:`SCHEMAS`. Every registered provider can judge (:class:`SpecProvider`), using the
capabilities its spec has. Providers do not retry: the runner does. docs/judge.md says more.
"""

from __future__ import annotations

from typing import Any, Protocol

from etclib import llm
from etclib.core.errors import ConfigError, JudgeError
from etclib.core.registry import unknown
from etclib.llm.chat import Reply
from etclib.llm.models import Decoding
from etclib.llm.providers import JSONAnswers, PromptCache, ProviderSpec, ServiceTiers

__all__ = [
    "ANSWER_TOKENS",
    "DEFAULT_MODELS",
    "DEFAULT_PROVIDER",
    "SCHEMAS",
    "TEMPERATURE",
    "Provider",
    "Reply",
    "SpecProvider",
    "build",
    "default_max_tokens",
    "make_provider",
]

#: provider -> default judge model (from each provider's spec)
DEFAULT_MODELS: dict[str, str] = {spec.name: spec.judge_model for spec in llm.providers.specs()}
DEFAULT_PROVIDER = "gemini"
TEMPERATURE = 0.0

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


#: JSON Schemas of the answers, by kind (OpenAI form; each spec sends it in its own field).
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


class SpecProvider:
    """A judge on any registered provider: the spec builds the client, writes the request
    (asking for a JSON answer of the kind's schema) and reads the reply."""

    def __init__(
        self,
        spec: ProviderSpec,
        model: str,
        *,
        timeout: float,
        thinking: Any = None,
        max_tokens: int | None = None,
        service_tier: str | None = None,
    ):
        self.spec = spec
        self.name = spec.name
        self.model = model
        self.thinking = thinking
        decoding = self.decoding()  # a thinking value the model cannot take fails now
        self.max_tokens = max_tokens or default_max_tokens(decoding)
        self.response_format = (
            spec.judge_format(model) if isinstance(spec, JSONAnswers) else "prompt"
        )
        #: added to each online call, outside the hashed request (OpenAI's ``service_tier``)
        self.online = _online_fields(spec, model, service_tier)
        self.timeout = timeout
        self.client = spec.client(async_=True, timeout=timeout)

    @property
    def endpoint(self) -> str:
        return self.spec.endpoint(self.client)

    def decoding(self, temperature: float = TEMPERATURE) -> Decoding:
        return llm.decoding(
            self.name,
            self.model,
            temperature=temperature,
            thinking=self.thinking,
            where="judge_thinking",
        )

    def request(
        self, kind: str, messages: list[dict[str, str]], *, temperature: float = TEMPERATURE
    ) -> dict[str, Any]:
        spec = self.spec
        req = spec.request(
            self.model, messages, self.decoding(temperature), max_tokens=self.max_tokens
        )
        if isinstance(spec, JSONAnswers):
            req = spec.json_request(req, kind, SCHEMAS[kind], self.response_format)
        return spec.cache_prompt(req) if isinstance(spec, PromptCache) else req

    def token_limit(self, request: dict[str, Any]) -> int | None:
        return self.spec.token_limit(request)

    def with_token_limit(self, request: dict[str, Any], limit: int) -> dict[str, Any]:
        return self.spec.with_token_limit(request, limit)

    async def complete(self, request: dict[str, Any]) -> Reply:
        return await self.spec.asend(self.client, {**request, **self.online})

    async def aclose(self) -> None:
        await self.spec.aclose(self.client)


def _online_fields(spec: ProviderSpec, model: str, service_tier: str | None) -> dict[str, Any]:
    if not service_tier:
        return {}
    if not isinstance(spec, ServiceTiers):
        raise ConfigError(
            f"--service-tier {service_tier}: the {spec.label} provider has no service tiers; "
            "leave the option out."
        )
    return spec.online_fields(model, service_tier)


def settings_hint(provider: str, option: str) -> str:
    """What to check when the judge's calls to ``provider`` fail for good."""
    if provider not in llm.providers.REGISTRY:
        return "check the provider's key, endpoint and model"
    spec = llm.providers.get(provider)
    return f"check {spec.key_settings[0]}, {spec.base_url_setting} and the model name ({option})"


def build(
    name: str,
    model: str | None = None,
    *,
    timeout: float,
    thinking: Any = None,
    max_tokens: int | None = None,
    service_tier: str | None = None,
) -> Provider:
    """The judge on provider ``name`` (its spec's default model unless ``model``); an unknown
    name, a missing key or a service tier the model does not take raises ConfigError."""
    spec = llm.providers.get(name)
    return SpecProvider(
        spec,
        model or spec.judge_model,
        timeout=timeout,
        thinking=thinking,
        max_tokens=max_tokens,
        service_tier=service_tier,
    )


def make_provider(name: str, model: str | None = None, **options: Any) -> Provider:
    """:func:`build`, but an unknown name or a missing key raises JudgeError. ``max_tokens``:
    the token limit (None: :func:`default_max_tokens`); ``service_tier``: OpenAI's ``flex`` for
    each online call, where the model takes it."""
    if name not in llm.providers.REGISTRY:
        raise JudgeError(unknown("judge provider", name, list(llm.providers.names())))
    try:
        return build(name, model, **options)
    except ConfigError as exc:
        raise JudgeError(f"The {name} judge is not configured. {exc}") from exc
