"""What a call cost, from the configured price table (USD per million tokens)."""

from __future__ import annotations

from prchain.llm.config import Price


def price_for(prices: dict[str, Price], model: str) -> Price | None:
    """The model's own price, else the `*` fallback, else None (the call is recorded as free)."""
    return prices.get(model) or prices.get("*")


def cost_usd(
    prices: dict[str, Price], model: str, prompt_tokens: int, completion_tokens: int
) -> float:
    price = price_for(prices, model)
    if price is None:
        return 0.0
    return (
        prompt_tokens * price.prompt_per_million + completion_tokens * price.completion_per_million
    ) / 1e6
