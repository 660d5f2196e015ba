"""Approximate list prices of judge models, for the cost estimate a run reports.

Prices are US dollars per million tokens (input, output), standard paid tier, taken from the
providers' public price pages in 2025; they change, and discounts (batch, cached input) and
long-context surcharges are ignored. Treat the estimate as an order of magnitude. A model not in
the table (self-hosted, new snapshots with other names) gets no estimate.
"""

from __future__ import annotations

#: model name prefix -> (USD per 1M input tokens, USD per 1M output tokens). Longest prefix wins.
PRICES: dict[str, tuple[float, float]] = {
    "gemini-2.5-pro": (1.25, 10.00),
    "gemini-2.5-flash-lite": (0.10, 0.40),
    "gemini-2.5-flash": (0.30, 2.50),
    "gemini-2.0-flash-lite": (0.075, 0.30),
    "gemini-2.0-flash": (0.10, 0.40),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-5-nano": (0.05, 0.40),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5": (1.25, 10.00),
}


def price(model: str) -> tuple[float, float] | None:
    """(input, output) USD per 1M tokens for ``model`` (``models/`` prefix ignored), or None."""
    name = model.removeprefix("models/")
    best = max((p for p in PRICES if name.startswith(p)), key=len, default=None)
    return PRICES[best] if best else None


def cost_usd(model: str, input_tokens: int, output_tokens: int) -> float | None:
    """Estimated cost in USD, or None when the model's price is unknown."""
    p = price(model)
    if p is None:
        return None
    return round((input_tokens * p[0] + output_tokens * p[1]) / 1_000_000, 6)
