"""Dollar cost of a response from the model's catalog prices (dollars per million tokens),
and the running totals of many responses (the footer, ``/session``, RPC stats, exports)."""

from __future__ import annotations

from ..base.records import record
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


@record(slots=True)
class UsageTotals:
    """Token and dollar totals over many responses; :meth:`add` one response's usage."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0
    responses: int = 0
    # The providers' own totals where they gave one (some count tokens the four fields do
    # not, e.g. reasoning), else the sum of the four.
    reported_total: int = 0

    @property
    def tokens(self) -> int:
        """Input, output, cache read and cache write, summed."""
        return self.input + self.output + self.cache_read + self.cache_write

    def add(self, usage: Usage) -> None:
        self.input += usage.input
        self.output += usage.output
        self.cache_read += usage.cache_read
        self.cache_write += usage.cache_write
        self.reported_total += usage.total_tokens or (
            usage.input + usage.output + usage.cache_read + usage.cache_write)
        self.cost += usage.cost.total
        self.responses += 1
