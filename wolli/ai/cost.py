"""Dollar cost of a response from the model's catalog prices (dollars per million tokens)."""

from __future__ import annotations

from .types import Model, Usage


def calculate_cost(model: Model, usage: Usage) -> Usage:
    """Fill ``usage.cost`` in place from ``model.cost`` and return ``usage``."""
    price = model.cost
    cost = usage.cost
    cost.input = usage.input * price.input / 1_000_000
    cost.output = usage.output * price.output / 1_000_000
    cost.cache_read = usage.cache_read * price.cache_read / 1_000_000
    cost.cache_write = usage.cache_write * price.cache_write / 1_000_000
    cost.total = cost.input + cost.output + cost.cache_read + cost.cache_write
    return usage
