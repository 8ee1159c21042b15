"""What a league's model calls cost: tokens by kind, and dollars from a price table per model.

Prices are US dollars per million tokens, by kind: uncached input, output,
cache reads and cache writes (5-minute writes). The defaults are the published
list prices at the time of writing; a league file overrides any of them under
``[prices."MODEL"]``. An episode's cost is computed when it is stored, with the
prices in force then.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

TOKEN_KINDS = ("input", "output", "cacheRead", "cacheWrite")
USAGE_KEYS = dict(
    zip(
        TOKEN_KINDS,
        ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens"),
        strict=True,
    )
)


@attrs.frozen
class Price:
    """US dollars per million tokens of each kind."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0

    def usd(self, tokens: Mapping[str, int]) -> float:
        """The cost of token counts keyed by :data:`TOKEN_KINDS`."""
        per_million = (self.input, self.output, self.cache_read, self.cache_write)
        return (
            sum(tokens[kind] * rate for kind, rate in zip(TOKEN_KINDS, per_million, strict=True))
            / 1e6
        )


DEFAULT_PRICES: dict[str, Price] = {
    "claude-opus-4-6": Price(5.0, 25.0, 0.50, 6.25),
    "claude-sonnet-4-6": Price(3.0, 15.0, 0.30, 3.75),
    "claude-sonnet-4-5": Price(3.0, 15.0, 0.30, 3.75),
    "claude-haiku-4-5": Price(1.0, 5.0, 0.10, 1.25),
}


def seat_tokens(seat: Mapping) -> dict[str, int]:
    """A results seat's token counts by kind (all zero for a seat that made no model calls)."""
    usage = seat.get("usage") or {}
    return {kind: int(usage.get(key, 0)) for kind, key in USAGE_KEYS.items()}


def price_of(model: str | None, prices: Mapping[str, Price]) -> Price:
    """The model's price; a model the table does not know costs nothing but is named at start."""
    return prices.get(model, Price()) if model else Price()
