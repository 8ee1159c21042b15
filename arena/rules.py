"""The rulebook as pure functions: legality, the bid cap, challenge resolution, scoring.

Numbers refer to rules.md. Nothing here holds state or does I/O, so the engine,
the baselines, the replay checker and the audit all share one reading of the rules.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import attrs

from arena.modes import Mode

DEFAULT_MAX_BIDS = 12
MIN_SEATS = 2
MAX_SEATS = 8


@attrs.frozen
class StandingBid:
    """The bid on the table: who made it and what it claims."""

    slot: int
    quantity: int
    face: int


@attrs.frozen
class Resolution:
    """Outcome of a challenge (rule 6)."""

    actual: int
    """Count of the bid face across ALL hands."""
    winner: int
    loser: int


@attrs.frozen
class TableRules:
    """The immutable rules of one table: mode, number of seats, bid cap."""

    mode: Mode
    seats: int = attrs.field()
    max_bids: int = attrs.field(default=DEFAULT_MAX_BIDS)

    @seats.validator
    def _check_seats(self, _attribute, value):
        if not MIN_SEATS <= value <= MAX_SEATS:
            raise ValueError(f"seats must be {MIN_SEATS} to {MAX_SEATS}, got {value}")

    @max_bids.validator
    def _check_max_bids(self, _attribute, value):
        if value < 1:
            raise ValueError(f"max bids per deal must be >= 1, got {value}")

    @property
    def max_quantity(self) -> int:
        """Rule 3: seats x hand size (20 for four seats of five dice)."""
        return self.seats * self.mode.hand_size

    @property
    def unseen(self) -> int:
        """Symbols a seat cannot see: everyone else's hands."""
        return (self.seats - 1) * self.mode.hand_size

    def bid_error(self, quantity: int, face: int, standing: StandingBid | None) -> str | None:
        """Why the bid is illegal (rules 3 and 4), or ``None`` when it is legal."""
        if not 1 <= quantity <= self.max_quantity:
            return f"quantity {quantity} is out of range 1..{self.max_quantity}"
        if face not in self.mode.symbols:
            return f"face {face} is not one of {_span(self.mode.symbols)}"
        if standing is not None and not is_raise(quantity, face, standing):
            return (
                f"bid {quantity}x{face} does not raise the standing bid "
                f"{standing.quantity}x{standing.face}"
            )
        return None

    def min_raise(self, standing: StandingBid | None) -> tuple[int, int] | None:
        """The lowest legal bid, or ``None`` when no bid can raise the standing one."""
        faces = self.mode.symbols
        if standing is None:
            return 1, faces[0]
        for face in faces:
            if face > standing.face:
                return standing.quantity, face
        if standing.quantity < self.max_quantity:
            return standing.quantity + 1, faces[0]
        return None

    def lowest_raises(self, standing: StandingBid, depth: int) -> Iterator[tuple[int, int]]:
        """Each face's lowest legal raise, by face, where its quantity is at most q0 + depth.

        Rule 4: a face above the standing one may repeat its quantity; any other needs one more.
        """
        top = min(standing.quantity + depth, self.max_quantity)
        for face in self.mode.symbols:
            quantity = standing.quantity if face > standing.face else standing.quantity + 1
            if quantity <= top:
                yield quantity, face

    def cap_reached(self, bids_made: int) -> bool:
        """Rule 8: after max_bids bids the acting seat may not bid."""
        return bids_made >= self.max_bids


def is_raise(quantity: int, face: int, standing: StandingBid) -> bool:
    """Rule 4: strictly higher quantity, or equal quantity and strictly higher face."""
    return quantity > standing.quantity or (quantity == standing.quantity and face > standing.face)


def resolve(hands: Sequence[Sequence[int]], standing: StandingBid, challenger: int) -> Resolution:
    """Rule 6: the bidder was truthful iff the face shows at least ``quantity`` times."""
    actual = sum(hand.count(standing.face) for hand in hands)
    if actual >= standing.quantity:
        return Resolution(actual=actual, winner=standing.slot, loser=challenger)
    return Resolution(actual=actual, winner=challenger, loser=standing.slot)


def opener(table_order: Sequence[int], deal: int) -> int:
    """Rule 1: deal d opens at table position d mod seats."""
    return table_order[deal % len(table_order)]


def score(points: int, deals_played: int) -> float:
    """score = 0.5 + points / (2 * dealsPlayed), and 0.5 when no deal was played."""
    if deals_played == 0:
        return 0.5
    return 0.5 + points / (2 * deals_played)


def _span(symbols: Sequence[int]) -> str:
    return f"{symbols[0]}..{symbols[-1]}"
