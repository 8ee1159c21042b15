"""A model call's token counts in the engine's ``usage`` vocabulary, whatever the wire, checked
at the wire.

Each wire reads its API's own usage object and says here what each count is;
the engine logs one ``usage`` line per call, and a league prices the kinds
(:mod:`arena.league.cost`). Input is the uncached part only: cache reads and
writes are their own kinds. Thinking (reasoning) tokens are output tokens,
counted again apart.

A server's counts are hostile input: a negative count made a league's cost
negative and let it play past its budget, ``1e308`` overflowed the cost and the
store, and cached tokens past the prompt inflated the cost. :func:`checked_usage`
takes only what a real API can report: whole numbers from 0 to
:data:`MAX_TOKENS`, parts no larger than their wholes. Anything else is the
call's :class:`~arena_plugins.model_seat.reply_body.UnreadableReply`, its raw
values quoted in the log.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from arena_plugins.model_seat.reply_body import UnreadableReply, quoted

MAX_TOKENS = 100_000_000
"""More tokens than any model reads or writes in one call (context windows run to about
10 million): a count past it is a server's error, not usage."""


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


def rate_tokens(used: Mapping[str, int]) -> int:
    """The tokens of a call that a client-side tokens-per-minute limit counts
    (:mod:`arena.limits`): input, output (thinking inside it) and cache writes; cache reads
    are left out, as Anthropic's input limits leave them."""
    return used["input_tokens"] + used["output_tokens"] + used["cache_write_tokens"]


def count(reported: Mapping[str, Any], name: str, raw: Any) -> int:
    """``reported[name]`` as a token count, 0 when absent or null; :class:`UnreadableReply`
    quoting ``raw`` (the whole usage object) for anything but a whole number from 0 to
    :data:`MAX_TOKENS` (a float is taken only when it is whole)."""
    value = reported.get(name) if isinstance(reported, Mapping) else None
    if value is None:
        return 0
    whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if isinstance(value, bool) or not whole or not 0 <= value <= MAX_TOKENS:
        raise UnreadableReply(f"usage {name} is not a token count: {shown(raw)}")
    return int(value)


def part_of(part: int, whole: int, part_name: str, whole_name: str, raw: Any) -> int:
    """``part``, checked to be no more than ``whole`` (cached tokens are part of the prompt,
    reasoning tokens part of the output)."""
    if part > whole:
        raise UnreadableReply(f"usage {part_name} is more than {whole_name}: {shown(raw)}")
    return part


def shown(raw: Any) -> str:
    """A usage object as a fault line quotes it."""
    try:
        return quoted(json.dumps(raw, allow_nan=True, sort_keys=True))
    except (TypeError, ValueError, RecursionError):
        return quoted(repr(raw))
