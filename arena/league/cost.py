"""What a league's model calls cost: tokens by kind, and dollars from a maintained price table.

Every model is priced from ``genai-prices`` (pydantic's price database, the
prices in force today) under the provider its seat declares (Anthropic's for a
Claude seat; OpenAI's, OpenRouter's, Google's... for an ``openai`` seat, from its
``provider=`` or its base URL's host). A seat that declares no provider (a
server the user runs, or a host no table knows) is unpriced: its cost is shown as
such, with why (:attr:`arena.registry.PaidCalls.unpriced`), never as $0, and a league with a budget
refuses it unless its model has a price. A league file's
``[prices."MODEL"]`` overrides any rate of any model, and prices a model the
table does not know. Rates are US dollars per million tokens, by kind:
uncached input, output, cache reads, 5-minute and 1-hour cache writes (the API
reports ``cacheWriteTokens`` as the total and ``cacheWrite1hTokens`` as its
1-hour part). Every price names its source, which the store keeps beside each
seat's dollars. An episode's cost is computed when it is stored, with the
prices in force then.

The table's long-context tiers (a request over 200k input tokens) are not
applied: an arena request is a few thousand tokens, and a seat's usage is a sum
over requests, which a per-request tier cannot be read from.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from functools import cache
from importlib.metadata import version

import attrs

TOKEN_KINDS = ("input", "output", "cacheRead", "cacheWrite")
"""The kinds the store keeps a column for (``cacheWrite`` is every cache write)."""
USAGE_KEYS = {
    "input": "inputTokens",
    "output": "outputTokens",
    "cacheRead": "cacheReadTokens",
    "cacheWrite": "cacheWriteTokens",
    "cacheWrite1h": "cacheWrite1hTokens",
}
"""Each priced kind and its key in a seat's usage (``cacheWrite1h``: the 1-hour part of
``cacheWrite``, absent from older logs)."""
OVERRIDE_SOURCE = "league file"
DEFAULT_PROVIDER = "anthropic"
"""The provider of a paid seat that declares none (:attr:`arena.registry.PaidCalls.provider`)."""
UNPRICED_PREFIX = "unpriced: "
"""How the price source of every model no price covers begins (:func:`unpriced_source`):
its dollars are unknown, not 0, and the readers find its rows by it."""
ONE_HOUR_WRITE_MULTIPLIER = 2.0
"""Anthropic's documented price of a 1-hour cache write: twice the base input price; used
only where a price gives no 1-hour rate of its own (and its source says so)."""


@attrs.frozen
class Price:
    """US dollars per million tokens of each kind, and where the figures came from."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0
    """A 5-minute cache write."""
    cache_write_1h: float | None = None
    """A 1-hour cache write; ``None``: Anthropic's multiplier of the input price."""
    source: str = OVERRIDE_SOURCE

    @property
    def one_hour_write(self) -> float:
        if self.cache_write_1h is None:
            return self.input * ONE_HOUR_WRITE_MULTIPLIER
        return self.cache_write_1h

    @property
    def named_source(self) -> str:
        """The source, saying so when the 1-hour write rate is Anthropic's multiplier."""
        if self.cache_write_1h is None:
            return f"{self.source} (1h cache writes at {ONE_HOUR_WRITE_MULTIPLIER:g}x input)"
        return self.source

    def usd(self, tokens: Mapping[str, int]) -> float:
        """The cost of token counts keyed by :data:`USAGE_KEYS`' kinds (``cacheWrite1h``
        may be absent: an older log's writes are all 5-minute ones)."""
        one_hour = tokens.get("cacheWrite1h", 0)
        return (
            tokens["input"] * self.input
            + tokens["output"] * self.output
            + tokens["cacheRead"] * self.cache_read
            + (tokens["cacheWrite"] - one_hour) * self.cache_write
            + one_hour * self.one_hour_write
        ) / 1e6


RATE_KEYS = {
    "input": "input_mtok",
    "output": "output_mtok",
    "cache_read": "cache_read_mtok",
    "cache_write": "cache_write_mtok",
    "cache_write_1h": "cache_write_1h_mtok",
}
"""Our rate names and genai-prices' price keys for the same kinds."""


@cache
def table_source() -> str:
    """``genai-prices X.Y.Z``: the installed table, named as a price's source."""
    return f"genai-prices {version('genai-prices')}"


@cache
def table_price(model: str, provider: str | None = DEFAULT_PROVIDER) -> Price | None:
    """``model``'s price in genai-prices' table of ``provider`` today, or ``None`` if it has
    none (``provider`` ``None``: a server the user runs, in no table).

    genai-prices (and pydantic under it) is imported here, when a league first prices
    a model: importing it costs a tenth of a second, which no other command should pay."""
    if provider is None:
        return None
    from genai_prices import data_snapshot

    try:
        _provider, info = data_snapshot.get_snapshot().find_provider_model(
            model, None, provider, None
        )
    except LookupError:
        return None
    rates = info.get_prices(datetime.now(tz=timezone.utc))
    found = {ours: _base_rate(getattr(rates, theirs, None)) for ours, theirs in RATE_KEYS.items()}
    one_hour = found["cache_write_1h"]
    if one_hour is None and provider != DEFAULT_PROVIDER:  # the 2x multiplier is Anthropic's
        one_hour = found["cache_write"] or 0.0
    return Price(
        **{k: v or 0.0 for k, v in found.items() if k != "cache_write_1h"},
        cache_write_1h=one_hour,
        source=table_source(),
    )


def _base_rate(rate) -> float | None:
    """A rate as a float; a tiered one (genai-prices' ``TieredPrices``) at its base, the
    rate of a request under the first tier."""
    if rate is None:
        return None
    return float(getattr(rate, "base", rate))


def override(model: str, rates: Mapping[str, float]) -> Price:
    """A league file's ``[prices."MODEL"]``: its rates over the table's (if it has the model)."""
    table = table_price(model)
    if table is None:
        return Price(**rates)
    return attrs.evolve(table, **rates, source=f"{OVERRIDE_SOURCE} over {table_source()}")


def price_of(
    model: str, overrides: Mapping[str, Price], provider: str | None = DEFAULT_PROVIDER
) -> Price | None:
    """The price a league pays for ``model`` from ``provider``: its override, else the
    table's, else ``None``."""
    return overrides.get(model) or table_price(model, provider)


NO_PRICE_KNOWN = "no price known for its endpoint"
"""Why a paid seat that does not say where its calls go is unpriced."""


def unpriced_source(reason: str) -> str:
    """The price source stored for a model no price covers, for ``reason`` (the seat's own
    words, :attr:`arena.registry.PaidCalls.unpriced`)."""
    return f"{UNPRICED_PREFIX}{reason} (no provider)"


"""The price source of a server on this machine, as stored since sources were kept."""


def seat_tokens(seat: Mapping) -> dict[str, int]:
    """A results seat's token counts by kind (all zero for a seat that made no model calls)."""
    usage = seat.get("usage") or {}
    return {kind: int(usage.get(key, 0)) for kind, key in USAGE_KEYS.items()}
