"""The two things a seat can do: bid or challenge.

``say`` (table talk, published only when talk is on) and ``notes`` (private,
shown back to the same seat) ride on either action; rule 10.
"""

from __future__ import annotations

import attrs

# Frozen without slots, as the events are (arena.events.Event says why): a seat makes an
# action every turn, and attrs' __init__ then writes the fields without a call apiece.


@attrs.frozen(slots=False)
class Bid:
    """Claim: at least ``quantity`` symbols across all hands show ``face``."""

    quantity: int
    face: int
    say: str | None = None
    """Cheap talk attached to the action."""
    notes: str | None = None
    """Replaces the seat's private notes when not ``None``."""


@attrs.frozen(slots=False)
class Challenge:
    """Call the standing bid; every hand is revealed (rule 6)."""

    say: str | None = None
    notes: str | None = None


Action = Bid | Challenge
