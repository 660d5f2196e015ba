"""What each hosted model accepts: one small capability table, and the settings etclib sends.

Models differ in what a request may carry, and a wrong setting is a 400 from the server:

- **temperature**: GPT-5 and the o-series accept only their default (1) and answer 400 to
  ``temperature=0``; Gemini 3's guidance is to keep the default 1.0; the others take 0.
- **token limit**: ``max_tokens`` for the classic chat models, ``max_completion_tokens`` for
  GPT-5 and the o-series (which refuse ``max_tokens``), ``max_output_tokens`` for Gemini.
- **structured output**: JSON-schema answers (OpenAI ``response_format``, Gemini
  ``response_schema``).
- **thinking**: ``budget`` (Gemini 2.5: ``thinking_config.thinking_budget``, tokens; 0 turns
  it off where the model allows), ``level`` (Gemini 3: ``thinking_level``), ``effort``
  (OpenAI reasoning models: ``reasoning_effort``), or ``none``.

etclib always sets thinking explicitly where a model has it, so that scores and cost do not
depend on a server default: ``thinking`` below is what the judge and the backends send unless
told otherwise (``"default"`` sends nothing and says so in the signature). The choices: no
thinking where the model allows it (Gemini 2.5 Flash and Flash-Lite: budget 0; the judge's
questions are short classifications with worked examples, and thinking tokens are billed as
output and add latency), the smallest budget where it cannot be turned off (Gemini 2.5 Pro:
128), ``low`` for Gemini 3 and the OpenAI reasoning models.

A model is looked up by the longest matching name prefix (``models/`` ignored), so dated
snapshots (``gpt-4.1-2025-04-14``) find their family. **Unknown models** (a vLLM server's
model, a new family) get :func:`default_info`: a classic chat model that takes temperature 0
and ``max_tokens``, has no thinking setting, and gets structured output as the caller asks.
If such a model refuses a setting, the call fails with
:class:`~etclib.errors.UnsupportedSettingError` naming it (``etclib judge check`` and
``etclib predict --check`` find this with three calls); add the model's family to
:data:`MODELS` (one line) to use it. Prices (USD per 1M input / output / cached input tokens,
list prices of 2025, standard tier: https://openai.com/api/pricing and
https://ai.google.dev/gemini-api/docs/pricing, read 2025-11) live in the same rows, so every
priced model has known capabilities. Cached input is the provider's price for prompt tokens it
served from its prompt cache (OpenAI's automatic caching of prompts over 1,024 tokens, Gemini's
implicit caching), reported per call and billed at that price by :func:`cost`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError


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
    #: False for :func:`default_info`'s guess
    known: bool = True


#: The OpenAI model etclib uses when none is named (the ``openai`` backend, the chat's label,
#: the docs): GPT-4.1 pinned to the snapshot of the paper's baseline. Named here only; everything
#: else reads it.
OPENAI_DEFAULT_MODEL = "gpt-4.1-2025-04-14"

_REASONING = dict(
    temperature=False,
    token_param="max_completion_tokens",
    thinking="effort",
    thinking_default="low",
)
_GEMINI = dict(token_param="max_output_tokens")

#: The capability table; longest prefix wins.
MODELS: tuple[ModelInfo, ...] = (
    # OpenAI classic chat models
    ModelInfo("gpt-4.1-nano", "openai", price=(0.10, 0.40), cached_input=0.025),
    ModelInfo("gpt-4.1-mini", "openai", price=(0.40, 1.60), cached_input=0.1),
    ModelInfo("gpt-4.1", "openai", price=(2.00, 8.00), cached_input=0.5),
    ModelInfo("gpt-4o-mini", "openai", price=(0.15, 0.60), cached_input=0.075),
    ModelInfo("gpt-4o", "openai", price=(2.50, 10.00), cached_input=1.25),
    # OpenAI reasoning models: default temperature only, max_completion_tokens
    ModelInfo("gpt-5-nano", "openai", price=(0.05, 0.40), cached_input=0.005, **_REASONING),
    ModelInfo("gpt-5-mini", "openai", price=(0.25, 2.00), cached_input=0.025, **_REASONING),
    ModelInfo("gpt-5", "openai", price=(1.25, 10.00), cached_input=0.125, **_REASONING),
    ModelInfo(
        "o1-mini", "openai", structured=False, price=(1.10, 4.40), cached_input=0.55, **_REASONING
    ),
    ModelInfo("o1", "openai", price=(15.00, 60.00), cached_input=7.5, **_REASONING),
    ModelInfo("o3-mini", "openai", price=(1.10, 4.40), cached_input=0.55, **_REASONING),
    ModelInfo("o3", "openai", price=(2.00, 8.00), cached_input=0.5, **_REASONING),
    ModelInfo("o4-mini", "openai", price=(1.10, 4.40), cached_input=0.275, **_REASONING),
    # Gemini
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
    ModelInfo("gemini-2.0-flash", "gemini", price=(0.10, 0.40), cached_input=0.025, **_GEMINI),
)

THINKING_KINDS = ("none", "budget", "level", "effort")
LEVELS = {"level": ("low", "high"), "effort": ("minimal", "low", "medium", "high")}


def default_info(provider: str, model: str) -> ModelInfo:
    """The documented guess for a model not in :data:`MODELS` (see the module docstring)."""
    token = "max_output_tokens" if provider == "gemini" else "max_tokens"
    return ModelInfo(model, provider, token_param=token, known=False)


def info(provider: str, model: str) -> ModelInfo:
    """The row of :data:`MODELS` for ``model`` (longest prefix of its provider), else the
    default for an unknown model."""
    name = model.removeprefix("models/")
    rows = [m for m in MODELS if m.provider == provider and name.startswith(m.prefix)]
    if not rows:
        return default_info(provider, model)
    return max(rows, key=lambda m: len(m.prefix))


def _priced(model: str) -> ModelInfo | None:
    name = model.removeprefix("models/")
    rows = [m for m in MODELS if m.price and name.startswith(m.prefix)]
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
