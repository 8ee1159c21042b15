"""The two things a seat can do: bid or challenge.

``say`` (table talk, published only when talk is on) and ``notes`` (private,
shown back to the same seat) ride on either action; rule 10.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class Bid:
    """Claim: at least ``quantity`` symbols across all hands show ``face``."""

    quantity: int
    face: int
    say: str | None = None
    """Cheap talk attached to the action."""
    notes: str | None = None
    """Replaces the seat's private notes when not ``None``."""


@attrs.frozen
class Challenge:
    """Call the standing bid; every hand is revealed (rule 6)."""

    say: str | None = None
    notes: str | None = None


Action = Bid | Challenge
