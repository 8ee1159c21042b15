"""The rulebook as pure functions: legality, the bid cap, challenge resolution, scoring.

Numbers refer to rules.md. Nothing here holds state or does I/O, so the engine,
the baselines, the replay checker and the audit all share one reading of the rules.

The mode's raise rule decides rule 4. Both rules order every bid on one *ladder*
(a bid is legal iff it stands higher on the ladder than the standing bid), which
is what the random seat draws from and the exploitability tree enumerates:

- ``strict``: by quantity, then face.
- ``wild-ones`` (wild symbol w): bids on other faces are strict among themselves;
  a bid on w needs more w than the standing w bid; from a bid of q0 on another
  face, a bid on w needs at least ceil(q0 / 2); from a bid of q0 on w, a bid on
  another face needs at least 2 q0 + 1. So q of w sits just above 2q of the top
  face and below 2q + 1 of the lowest other face.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import cache

import attrs

from arena.modes import WILD_ONES, Mode
from arena.probability import count

DEFAULT_MAX_BIDS = 12
MAX_BIDS_CAP = 2**31 - 1
"""The highest bid cap a table takes: the compiled engine holds it in a C int. A cap
past the longest raise ladder never binds, so this bounds nothing a table can play."""
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
        if not 1 <= value <= MAX_BIDS_CAP:
            raise ValueError(f"max bids per deal must be 1 to {MAX_BIDS_CAP}, got {value}")

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
        if standing is not None and quantity < self.lowest_quantity(face, standing):
            reason = (
                f"bid {quantity}x{face} does not raise the standing bid "
                f"{standing.quantity}x{standing.face}"
            )
            if self.mode.raise_rule == WILD_ONES and (face == self.mode.wild) != (
                standing.face == self.mode.wild
            ):
                least = self.lowest_quantity(face, standing)
                reason += f" (a bid on {face} needs at least {least})"
            return reason
        return None

    def lowest_quantity(self, face: int, standing: StandingBid) -> int:
        """Rule 4 by the mode's raise rule: the least quantity on ``face`` that raises ``standing``.

        May exceed :attr:`max_quantity`, in which case no bid on that face is legal.
        """
        q0, f0 = standing.quantity, standing.face
        wild = self.mode.wild
        if self.mode.raise_rule == WILD_ONES and (face == wild or f0 == wild):
            if face == f0:
                return q0 + 1
            if face == wild:
                return -(-q0 // 2)  # to the wild face: half, rounded up
            return 2 * q0 + 1  # away from the wild face: double plus one
        return q0 if face > f0 else q0 + 1

    @property
    def ladder(self) -> tuple[tuple[int, int], ...]:
        """Every bid the table allows, lowest first: legal iff higher than the standing bid."""
        return _ladder(self.mode.symbols, self.max_quantity, self.mode.raise_rule, self.mode.wild)

    def rank(self, quantity: int, face: int) -> int:
        """The bid's place on :attr:`ladder`."""
        return _ranks(self.mode.symbols, self.max_quantity, self.mode.raise_rule, self.mode.wild)[
            quantity, face
        ]

    def min_raise(self, standing: StandingBid | None) -> tuple[int, int] | None:
        """The lowest legal bid, or ``None`` when no bid can raise the standing one."""
        ladder = self.ladder
        if standing is None:
            return ladder[0]
        above = self.rank(standing.quantity, standing.face) + 1
        return ladder[above] if above < len(ladder) else None

    def lowest_raises(self, standing: StandingBid) -> Iterator[tuple[int, int]]:
        """Each face's lowest legal raise, by face (faces with none are left out)."""
        for face in self.mode.symbols:
            quantity = max(self.lowest_quantity(face, standing), 1)
            if quantity <= self.max_quantity:
                yield quantity, face

    def cap_reached(self, bids_made: int) -> bool:
        """Rule 8: after max_bids bids the acting seat may not bid."""
        return bids_made >= self.max_bids


def is_raise(quantity: int, face: int, standing: StandingBid) -> bool:
    """Rule 4 (strict): strictly higher quantity, or equal quantity and strictly higher face."""
    return quantity > standing.quantity or (quantity == standing.quantity and face > standing.face)


def resolve(
    hands: Sequence[Sequence[int]], standing: StandingBid, challenger: int, *, wild: int | None
) -> Resolution:
    """Rule 6: the bidder was truthful iff at least ``quantity`` symbols count for the face.

    ``wild`` is the mode's wild symbol or None, and is required: a caller that forgot
    it would count a wild mode's hands as if nothing were wild.
    """
    actual = sum(count(hand, standing.face, wild) for hand in hands)
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


@cache
def _ladder(
    symbols: tuple[int, ...], max_quantity: int, raise_rule: str, wild: int | None
) -> tuple[tuple[int, int], ...]:
    bids = [(q, f) for q in range(1, max_quantity + 1) for f in symbols]
    if raise_rule != WILD_ONES:
        return tuple(bids)
    top = len(symbols)

    # q of the wild face sits just above 2q of the top other face (see the module docstring).
    def place(bid: tuple[int, int]) -> tuple[int, int]:
        quantity, face = bid
        return (2 * quantity, top) if face == wild else (quantity, symbols.index(face))

    return tuple(sorted(bids, key=place))


@cache
def _ranks(
    symbols: tuple[int, ...], max_quantity: int, raise_rule: str, wild: int | None
) -> dict[tuple[int, int], int]:
    return {bid: i for i, bid in enumerate(_ladder(symbols, max_quantity, raise_rule, wild))}
