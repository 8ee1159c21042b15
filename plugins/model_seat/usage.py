"""A model call's token counts in the engine's ``usage`` vocabulary, whatever the wire.

Each wire reads its API's own usage object and says here what each count is;
the engine logs one ``usage`` line per call, and a league prices the kinds
(:mod:`arena.league.cost`). Input is the uncached part only: cache reads and
writes are their own kinds. Thinking (reasoning) tokens are output tokens,
counted again apart.
"""

from __future__ import annotations


def usage(
    input_tokens: int,
    output_tokens: int,
    *,
    cache_read: int = 0,
    cache_write: int = 0,
    cache_write_1h: int = 0,
    thinking: int = 0,
) -> dict[str, int]:
    """The engine's ``usage`` mapping; a count the API does not report is 0."""
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_read_tokens": cache_read,
        "cache_write_tokens": cache_write,
        "cache_write_1h_tokens": cache_write_1h,
        "thinking_tokens": thinking,
    }
