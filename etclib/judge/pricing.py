"""Approximate list prices of judge models, for the cost estimate a run reports.

Prices are US dollars per million tokens (input, output), standard paid tier, taken from the
providers' public price pages in 2025; they change, and discounts (batch, cached input) and
long-context surcharges are ignored. Treat the estimate as an order of magnitude. They live in
the capability table (:data:`etclib.llm.models.MODELS`), beside what each model accepts, so a
priced model always has known settings (GPT-5 gets no temperature, and so on). A model not in
the table (self-hosted, new families) gets no estimate.
"""

from __future__ import annotations

from ..llm import models

#: model name prefix -> (USD per 1M input tokens, USD per 1M output tokens). Longest prefix wins.
PRICES: dict[str, tuple[float, float]] = {m.prefix: m.price for m in models.MODELS if m.price}


def price(model: str) -> tuple[float, float] | None:
    """(input, output) USD per 1M tokens for ``model`` (``models/`` prefix ignored), or None."""
    return models.price(model)


def cost_usd(model: str, input_tokens: int, output_tokens: int) -> float | None:
    """Estimated cost in USD, or None when the model's price is unknown."""
    p = price(model)
    if p is None:
        return None
    return round((input_tokens * p[0] + output_tokens * p[1]) / 1_000_000, 6)
