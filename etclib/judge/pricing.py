"""Approximate list prices and the providers' daily request limits, for the estimate a
pre-flight check (``etclib judge check``, ``etclib predict --check``) reports.

Prices live in the capability table (:data:`etclib.llm.models.MODELS`) and daily limits in the
provider specs (per key tier, ``ETC_JUDGE_TIER``). A model without a price, or a check in which
no call answered, gets no estimate rather than "$0.00". See docs/judge.md, "Before a full run".
"""

from __future__ import annotations

import math

from etclib.core.config import setting
from etclib.llm import models

#: model name prefix -> (USD per 1M input tokens, USD per 1M output tokens). Longest prefix wins.
PRICES: dict[str, tuple[float, float]] = {m.prefix: m.price for m in models.MODELS if m.price}

#: What the estimate says when no call of the check answered.
NO_ESTIMATE = "no answer, no estimate"


def _daily_rows() -> dict[tuple[str, str, str], int]:
    from etclib.llm import providers

    return {
        (spec.name, prefix, tier): n
        for spec in providers.specs()
        for (prefix, tier), n in spec.daily_requests.items()
    }


def _daily_source(provider: str | None = None) -> tuple[str, str]:
    from etclib.llm import providers

    specs = [providers.get(provider)] if provider in providers.REGISTRY else providers.specs()
    found = [s.daily_limits_source for s in specs if s.daily_requests and s.daily_limits_source[0]]
    return found[0] if found else ("the provider's rate-limit page", "")


#: (provider, model prefix, tier) -> requests per day (per project), from the provider specs'
#: ``daily_requests`` (:mod:`etclib.llm.providers`). Longest prefix wins.
DAILY_REQUESTS: dict[tuple[str, str, str], int] = _daily_rows()
#: where the documented limits were read (page, date)
DAILY_LIMITS_SOURCE, DAILY_LIMITS_READ = _daily_source()
TIERS = ("free", "tier1")


#: (input, output) USD per 1M tokens for a model (``models/`` prefix ignored), or None
price = models.price


def cost_usd(
    model: str, input_tokens: float, output_tokens: float, cached_tokens: float = 0
) -> float | None:
    """Estimated cost in USD (``cached_tokens`` of the input at the cached-input price), or
    None when the model's price is unknown."""
    value = models.cost(model, input_tokens, output_tokens, cached_tokens)
    return None if value is None else round(value, 6)


def batch_cost_usd(model: str, input_tokens: float, output_tokens: float) -> float | None:
    """Estimated cost in USD through the provider's batch interface, or None when the model
    has no batch price."""
    value = models.batch_cost(model, input_tokens, output_tokens)
    return None if value is None else round(value, 6)


def cost_text(cost: float | None, answered: bool = True) -> str:
    """``about $1.23``, ``unknown price``, or :data:`NO_ESTIMATE` when nothing answered."""
    if not answered:
        return NO_ESTIMATE
    return "unknown price" if cost is None else f"about ${cost:.2f}"


def key_tier() -> str | None:
    """The key's tier from ``ETC_JUDGE_TIER`` (None when unset)."""
    from etclib.core.errors import ConfigError

    tier = (setting("ETC_JUDGE_TIER") or "").strip().lower()
    if not tier:
        return None
    if tier not in TIERS:
        raise ConfigError(f"ETC_JUDGE_TIER={tier!r}: one of {', '.join(TIERS)}.")
    return tier


def daily_limit(provider: str, model: str, tier: str) -> int | None:
    """Requests per day for ``model`` on ``tier``, or None when none is documented."""
    name = model.removeprefix("models/")
    rows = [
        (prefix, n)
        for (p, prefix, t), n in DAILY_REQUESTS.items()
        if p == provider and t == tier and name.startswith(prefix)
    ]
    return max(rows, key=lambda r: len(r[0]))[1] if rows else None


def daily_limit_note(provider: str, model: str, calls: int, tier: str | None = None) -> str | None:
    """The estimate's line when ``calls`` exceed the daily request limit of the key's tier
    (``tier``, else :func:`key_tier`, else the free tier), or None."""
    named = tier or key_tier()
    checked = named or "free"
    limit = daily_limit(provider, model, checked)
    if limit is None or calls <= limit:
        return None
    days = math.ceil(calls / limit)
    which = f"the {checked} tier" if named else "the free tier (ETC_JUDGE_TIER unset)"
    page, read = _daily_source(provider)
    return (
        f"a full run (about {calls:,} calls) exceeds {which}'s daily limit of {limit:,} requests "
        f"for {model} ({page}{', read ' + read if read else ''}): it would stop at the "
        f"quota and take {days} days of resumed runs; use a paid key"
        + ("" if named else ", and set ETC_JUDGE_TIER to its tier")
    )
