"""The two scripted baselines of rules.md: ``bayes`` and ``pressure``.

Both read only their own hand. They challenge a standing bid that is under
``chal`` likely to be true; otherwise they enumerate the raises q0 .. q0+2 on
every face, keep those at least ``safe`` likely, and bid the likeliest (ties:
lower quantity, then the face held most, then the seat's seeded generator).
With nothing safe to bid they challenge. They open on the face held most (ties
by the generator) at their own count plus floor(unseen * p), clamped to
1 .. seats x hand size. ``pressure`` pads its chosen raise by one quantity
whenever that stays legal; it does not pad its opening bid, which is not a raise.

``bayes`` is also rule 11's fallback and the no-credentials stand-in, which is
why the core may import this module directly.
"""

from __future__ import annotations

import math

import attrs

from arena import hookimpl
from arena.actions import Action, Bid, Challenge
from arena.probability import tail_table
from arena.rules import StandingBid, TableRules
from arena.seats import SeatContext
from arena.view import SeatView

RAISE_DEPTH = 2
"""Raises are enumerated at quantities q0 .. q0 + RAISE_DEPTH."""


@attrs.frozen
class Thresholds:
    """The knobs that tell the baselines apart."""

    chal: float
    """Challenge a standing bid less likely than this."""
    safe: float
    """Only bid raises at least this likely."""
    pad: bool = False
    """Add one to the chosen raise's quantity when that stays legal."""


BAYES = Thresholds(chal=0.15, safe=0.35)
PRESSURE = Thresholds(chal=0.25, safe=0.35, pad=True)


class ScriptedSeat:
    """A baseline policy: exactly one legal action per turn, no talk, no notes."""

    def __init__(self, context: SeatContext, thresholds: Thresholds):
        self.rules: TableRules = context.rules
        self.rng = context.rng
        self.thresholds = thresholds
        rules = self.rules
        tail = tail_table(rules.unseen, rules.mode.p)
        self.chance = {
            need: tail[min(max(need, 0), len(tail) - 1)]
            for need in range(1 - rules.mode.hand_size, rules.max_quantity + 1)
        }
        """P(the bid is true) by need = quantity - own count, for every bid a table allows."""
        self.expected = math.floor(rules.unseen * rules.mode.p)
        """The unseen symbols' expected share of one face, which an opening bid adds."""

    def decide(self, view: SeatView) -> Action:
        counts = {face: view.hand.count(face) for face in view.symbols}
        standing = view.standing
        if standing is None:
            return self._open(counts)
        if self._likelihood(counts, standing.quantity, standing.face) < self.thresholds.chal:
            return Challenge()
        raise_ = self._best_raise(counts, standing)
        if raise_ is None:
            return Challenge()
        quantity, face = raise_
        if self.thresholds.pad and quantity + 1 <= self.rules.max_quantity:
            quantity += 1
        return Bid(quantity, face)

    def _open(self, counts: dict[int, int]) -> Bid:
        most = max(counts.values())
        face = self._pick([f for f, n in counts.items() if n == most])
        quantity = min(max(counts[face] + self.expected, 1), self.rules.max_quantity)
        return Bid(quantity, face)

    def _best_raise(self, counts: dict[int, int], standing: StandingBid) -> tuple[int, int] | None:
        """The likeliest safe raise after the tie-breaks, or ``None`` when none is safe.

        More of a face is never likelier, and the first tie-break prefers the lower
        quantity, so of a face's raises q0 .. q0 + 2 only its lowest legal one can
        win or tie: enumerating those alone picks the same raise from the same ties.
        """
        # rank: likelihood, then the lower quantity, then the face held most.
        safe = [
            ((likelihood, -quantity, counts[face]), quantity, face)
            for quantity, face in self.rules.lowest_raises(standing, RAISE_DEPTH)
            if (likelihood := self._likelihood(counts, quantity, face)) >= self.thresholds.safe
        ]
        if not safe:
            return None
        best = max(rank for rank, _quantity, _face in safe)
        return self._pick([(quantity, face) for rank, quantity, face in safe if rank == best])

    def _likelihood(self, counts: dict[int, int], quantity: int, face: int) -> float:
        return self.chance[quantity - counts[face]]

    def _pick(self, options: list):
        """The seeded generator breaks a tie that survives every rule."""
        if len(options) == 1:
            return options[0]
        return options[int(self.rng.integers(len(options)))]


def bayes(context: SeatContext) -> ScriptedSeat:
    return ScriptedSeat(context, BAYES)


def pressure(context: SeatContext) -> ScriptedSeat:
    return ScriptedSeat(context, PRESSURE)


@hookimpl
def register_seats(register):
    register("bayes", bayes, description="Tuned baseline: chal 0.15, safe 0.35.", stochastic=True)
    register(
        "pressure",
        pressure,
        description="Aggressive baseline: chal 0.25, safe 0.35, pads its raise by one.",
        stochastic=True,
    )
