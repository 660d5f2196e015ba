"""What each hosted model accepts: one small capability table, and the settings etclib sends.

A wrong setting is a 400 from the server, so each family's row says what a request may carry.
Thinking is set explicitly where a model has it, so scores and cost do not depend on a server
default. A model is looked up by the longest matching name prefix (dated snapshots find their
family); an unknown one gets :func:`default_info`. docs/judge.md, "What each model is sent".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from etclib.core.errors import ConfigError


@dataclass(frozen=True)
class ModelInfo:
    """One family of models and what its requests may carry."""

    prefix: str
    provider: str
    #: accepts a temperature other than its default (False: send none)
    temperature: bool = True
    #: the temperature to send whatever the caller wants (Gemini 3: 1.0), or None
    fixed_temperature: float | None = None
    #: the request field that limits the answer's length
    token_param: str = "max_tokens"
    structured: bool = True
    #: ``none``, ``budget``, ``level`` or ``effort``
    thinking: str = "none"
    #: what etclib sends for thinking by default (an int budget, a level/effort name)
    thinking_default: int | str | None = None
    #: smallest budget the model accepts (``budget`` models)
    thinking_min: int = 0
    price: tuple[float, float] | None = None
    #: USD per 1M cached input tokens (None: billed as ordinary input)
    cached_input: float | None = None
    #: (input, output) USD per 1M tokens through the provider's batch interface (None: no
    #: batch price known; where it was read: the provider spec's ``batch_prices_source``)
    batch_price: tuple[float, float] | None = None
    #: the OpenAI ``service_tier`` values besides the default the model accepts (``flex``)
    service_tiers: tuple[str, ...] = ()
    #: False for :func:`default_info`'s guess
    known: bool = True


#: The OpenAI model etclib uses when none is named (the ``openai`` provider's backend model,
#: the chat's label, the docs): GPT-4.1 pinned to the snapshot of the paper's baseline. Named
#: here only; everything else reads it.
OPENAI_DEFAULT_MODEL = "gpt-4.1-2025-04-14"

#: The capability table, filled by the provider registry (:mod:`etclib.llm.providers`) from
#: each provider spec's ``models``; longest prefix wins. Read it as :data:`MODELS`.
_ROWS: list[ModelInfo] = []
#: provider -> the token-limit field of a model not in the table
_TOKEN_PARAMS: dict[str, str] = {}
#: provider -> other fields of a model not in the table
_UNKNOWN: dict[str, dict[str, Any]] = {}


def install(
    provider: str,
    rows: tuple[ModelInfo, ...],
    token_param: str = "max_tokens",
    unknown: dict[str, Any] | None = None,
) -> None:
    """Add ``provider``'s rows (once), its token-limit field and what else a model of it not
    in the table gets (``unknown``: :class:`ModelInfo` fields, e.g. ``temperature=False``)."""
    _TOKEN_PARAMS[provider] = token_param
    _UNKNOWN[provider] = dict(unknown or {})
    known = {(m.provider, m.prefix) for m in _ROWS}
    _ROWS.extend(m for m in rows if (m.provider, m.prefix) not in known)


def __getattr__(name: str) -> Any:
    if name == "MODELS":
        return tuple(_ROWS)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


THINKING_KINDS = ("none", "budget", "level", "effort")
LEVELS = {"level": ("low", "high"), "effort": ("minimal", "low", "medium", "high")}


def default_info(provider: str, model: str) -> ModelInfo:
    """The documented guess for a model not in :data:`MODELS` (see the module docstring)."""
    token = _TOKEN_PARAMS.get(provider, "max_tokens")
    return ModelInfo(model, provider, token_param=token, known=False, **_UNKNOWN.get(provider, {}))


def info(provider: str, model: str) -> ModelInfo:
    """The row of :data:`MODELS` for ``model`` (longest prefix of its provider), else the
    default for an unknown model."""
    name = model.removeprefix("models/")
    rows = [m for m in _ROWS if m.provider == provider and name.startswith(m.prefix)]
    if not rows:
        return default_info(provider, model)
    return max(rows, key=lambda m: len(m.prefix))


def _priced(model: str) -> ModelInfo | None:
    name = model.removeprefix("models/")
    rows = [m for m in _ROWS if m.price and name.startswith(m.prefix)]
    return max(rows, key=lambda m: len(m.prefix)) if rows else None


def price(model: str) -> tuple[float, float] | None:
    """(input, output) USD per 1M tokens for ``model`` (any provider), or None."""
    row = _priced(model)
    return row.price if row else None


def cached_price(model: str) -> float | None:
    """USD per 1M cached input tokens for ``model``: the table's, else its input price (no
    discount known), else None (no price)."""
    row = _priced(model)
    if row is None or row.price is None:
        return None
    return row.cached_input if row.cached_input is not None else row.price[0]


def cost(
    model: str, input_tokens: float, output_tokens: float, cached_tokens: float = 0
) -> float | None:
    """USD for ``input_tokens`` (of which ``cached_tokens`` served from the provider's prompt
    cache, billed at :func:`cached_price`) and ``output_tokens``; None when the price is unknown."""
    p = price(model)
    if p is None:
        return None
    cached = min(max(cached_tokens, 0), input_tokens)
    return (
        (input_tokens - cached) * p[0] + cached * (cached_price(model) or 0) + output_tokens * p[1]
    ) / 1_000_000


def batch_cost(model: str, input_tokens: float, output_tokens: float) -> float | None:
    """USD for the tokens when answered through the provider's batch interface (its
    ``batch_price``); None when the model has no batch price."""
    row = _priced(model)
    if row is None or row.batch_price is None:
        return None
    return (input_tokens * row.batch_price[0] + output_tokens * row.batch_price[1]) / 1_000_000


def half_price(row: ModelInfo) -> ModelInfo:
    """``row`` with a batch price of half its price (OpenAI's Batch API and Gemini's batch mode
    both bill 50% of the standard rate)."""
    from dataclasses import replace

    if row.price is None:
        return row
    return replace(row, batch_price=(row.price[0] / 2, row.price[1] / 2))


@dataclass(frozen=True)
class Decoding:
    """The decoding settings one model gets, as sent and as the signature names them.

    ``temperature`` is what is sent (None: the field is left out, the model's default);
    ``thinking`` what is sent for thinking (None: nothing).
    """

    info: ModelInfo
    temperature: float | None
    thinking: int | str | None

    def temperature_label(self) -> str:
        return "default" if self.temperature is None else f"{self.temperature:g}"

    def thinking_label(self) -> str:
        kind = self.info.thinking
        if kind == "none":
            return "none"
        if self.thinking is None:
            return "default"
        return f"{kind}={self.thinking}"

    def signature(self) -> str:
        """``temperature:0|thinking:budget=0`` (``temperature:default`` when none is sent)."""
        return f"temperature:{self.temperature_label()}|thinking:{self.thinking_label()}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "temperature": self.temperature_label(),
            "thinking": self.thinking_label(),
            "token_param": self.info.token_param,
            "known_model": self.info.known,
        }


def decoding(
    provider: str, model: str, *, temperature: float = 0.0, thinking: Any = None, where: str = ""
) -> Decoding:
    """The settings to send to ``model`` when the caller wants ``temperature`` and ``thinking``.

    ``thinking``: None for the table's default, ``"default"`` to send nothing (the server's
    default, named in the signature), an int budget (``budget`` models) or a level / effort
    name. A thinking value the model cannot take is a ConfigError naming ``where`` (the option).
    """
    row = info(provider, model)
    if not row.temperature:
        temp: float | None = None
    elif row.fixed_temperature is not None:
        temp = row.fixed_temperature
    else:
        temp = float(temperature)
    return Decoding(row, temp, _thinking(row, thinking, where or "thinking"))


def _thinking(row: ModelInfo, value: Any, where: str) -> int | str | None:
    if value is None or value == "":
        return row.thinking_default
    text = str(value).strip().lower()
    if text == "default":
        return None
    if row.thinking == "none":
        raise ConfigError(
            f"{where}={value!r}: model {row.prefix!r} has no thinking setting etclib knows of; "
            "leave it unset (or 'default')."
        )
    if row.thinking == "budget":
        try:
            budget = int(text)
        except ValueError:
            raise ConfigError(
                f"{where}={value!r}: {row.prefix} takes a thinking budget in tokens "
                f"(an integer >= {row.thinking_min}, or 'default')."
            ) from None
        if budget < row.thinking_min and budget != -1:
            raise ConfigError(
                f"{where}={budget}: {row.prefix} needs a thinking budget of at least "
                f"{row.thinking_min} tokens (-1: dynamic)."
            )
        return budget
    choices = LEVELS[row.thinking]
    if text not in choices:
        raise ConfigError(
            f"{where}={value!r}: {row.prefix} takes one of {', '.join(choices)} (or 'default')."
        )
    return text
