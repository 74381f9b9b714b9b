"""What a model call cost: the provider's own figure, else tokens times a listed price, else None.

The table holds list prices in USD per million tokens (input, output), as the vendors published
them for the default models; update it here, in one place, when a price changes. A model that is
not in the table, or a call without token counts, has no cost: never a guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

PER_MILLION = 1_000_000

# model name -> (USD per million input tokens, USD per million output tokens)
PRICES: Mapping[str, tuple[float, float]] = {
    "claude-sonnet-4-5": (3.00, 15.00),
    "claude-haiku-4-5": (1.00, 5.00),
    "claude-opus-4-1": (15.00, 75.00),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gemini-2.5-flash": (0.30, 2.50),
    "gemini-2.5-pro": (1.25, 10.00),
}


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def cost_usd(model: str | None, usage: Mapping[str, Any]) -> float | None:
    """The call's cost: as reported, else from the price table; None when neither is known."""
    reported = usage.get("cost_usd")
    if isinstance(reported, int | float) and not isinstance(reported, bool) and reported >= 0:
        return float(reported)
    price = PRICES.get(model or "")
    tokens_in, tokens_out = _count(usage.get("input_tokens")), _count(usage.get("output_tokens"))
    if price is None or tokens_in is None or tokens_out is None:
        return None
    return (tokens_in * price[0] + tokens_out * price[1]) / PER_MILLION
