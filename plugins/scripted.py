"""The two scripted baselines of rules.md: ``bayes`` and ``pressure``.

Both read only their own hand. They challenge a standing bid that is under
``chal`` likely to be true; otherwise they enumerate the raises q0 .. q0+2 on
every face, keep those at least ``safe`` likely, and bid the likeliest (ties:
lower quantity, then the face held most, then the seat's seeded generator).
With nothing safe to bid they challenge. They open on the face held most (ties
by the generator) at their own count plus floor(unseen * p), clamped to
1 .. seats x hand size. Counts, p and the raises follow the mode: with wilds a
face's count includes the wilds and its p is the face's own (1/3 or 1/6 in the
wild-ones game), and under the wild-ones raise rule a face's lowest raise may
be a conversion (its window of three quantities starts there). ``pressure``
pads its chosen raise by one quantity whenever that stays legal; it does not
pad its opening bid, which is not a raise.

``bayes`` is also rule 11's fallback and the no-credentials stand-in, which is
why this entry point is essential: the registry always has it
(:meth:`arena.registry.Registry.fallback`).
"""

from __future__ import annotations

from functools import cache

import attrs

from arena import hookimpl
from arena.actions import Action, Bid, Challenge
from arena.probability import face_counts, likelihoods
from arena.rules import StandingBid, TableRules
from arena.seats import SeatContext
from arena.view import PublicBid, SeatView


@attrs.frozen
class Thresholds:
    """The knobs that tell the baselines apart."""

    chal: float
    """Challenge a standing bid less likely than this."""
    safe: float
    """Only bid raises at least this likely."""
    pad: bool = False
    """Add one to the chosen raise's quantity when that stays legal."""


CHALLENGE = Challenge()
"""The one challenge the baselines make (no talk, no notes): immutable, so shared."""
BAYES = Thresholds(chal=0.15, safe=0.35)
PRESSURE = Thresholds(chal=0.25, safe=0.35, pad=True)


class ScriptedSeat:
    """A baseline policy: exactly one legal action per turn, no talk, no notes."""

    def __init__(self, context: SeatContext, thresholds: Thresholds):
        self.rules: TableRules = context.rules
        self.rng = context.rng
        self.thresholds = thresholds
        self.chance, self.expected = likelihoods(self.rules)
        self.lowest = lowest_raises(self.rules)
        self.wild = self.rules.mode.wild

    def compiled_spec(self):
        """This seat as the compiled engine plays it (docs/plugins.md)."""
        from arena.fast.spec import SCRIPTED, CompiledSeat, stream_state  # a compiled table asks

        line = self.thresholds
        return CompiledSeat(
            SCRIPTED, **stream_state(self.rng), chal=line.chal, safe=line.safe, pad=line.pad
        )

    def decide(self, view: SeatView) -> Action:
        choices = self._choices(view)
        return _action(choices[0] if len(choices) == 1 else self._pick(choices))

    def action_distribution(self, view: SeatView) -> dict[Action, float]:
        """The exact distribution :meth:`decide` draws from: the seeded tie-break is uniform."""
        choices = self._choices(view)
        return {_action(choice): 1 / len(choices) for choice in choices}

    def _choices(self, view: SeatView) -> list[tuple[int, int] | None]:
        """The (quantity, face) bids the line allows here, or ``[None]`` to challenge; more
        than one only when the generator breaks a tie (the action is built for the one drawn)."""
        counts = face_counts(view.hand, view.symbols, self.wild)
        bids = view.bids
        if not bids:
            return self._open(counts)
        standing = bids[-1]
        quantity, face = standing.quantity, standing.face
        if self.chance[face][quantity - counts[face]] < self.thresholds.chal:
            return [None]
        raises = self._best_raises(counts, standing)
        if not raises:
            return [None]
        if self.thresholds.pad:
            top = self.rules.max_quantity
            raises = [(q + 1 if q + 1 <= top else q, face) for q, face in raises]
        return raises

    def _open(self, counts: dict[int, int]) -> list[tuple[int, int] | None]:
        most = max(counts.values())
        top = self.rules.max_quantity
        expected = self.expected
        return [
            (min(max(n + expected[face], 1), top), face) for face, n in counts.items() if n == most
        ]

    def _best_raises(self, counts: dict[int, int], standing: PublicBid) -> list[tuple[int, int]]:
        """The likeliest safe raises after the rule-based tie-breaks (empty when none is safe).

        More of a face is never likelier, and the first tie-break prefers the lower
        quantity, so of a face's raises only its lowest legal one can win or tie:
        enumerating those alone picks the same raise from the same ties.
        """
        lowest = self.lowest[standing.quantity, standing.face]
        chance, safe = self.chance, self.thresholds.safe
        # rank: likelihood, then the lower quantity, then the face held most.
        best_rank, best = None, []
        for quantity, face in lowest:
            held = counts[face]
            likelihood = chance[face][quantity - held]
            if likelihood < safe:
                continue
            rank = (likelihood, -quantity, held)
            if best_rank is None or rank > best_rank:
                best_rank, best = rank, [(quantity, face)]
            elif rank == best_rank:
                best.append((quantity, face))
        return best

    def _pick(self, options: list):
        """The seeded generator breaks a tie that survives every rule: two options or more
        (:meth:`decide` takes a single option itself: most turns have one, and this is a
        call per turn)."""
        return options[int(self.rng.integers(len(options)))]


def _action(choice: tuple[int, int] | None) -> Action:
    return CHALLENGE if choice is None else Bid(*choice)


class LowestRaises(dict):
    """Each face's lowest legal raise (:meth:`TableRules.lowest_raises`) by the standing
    bid's (quantity, face), worked out the first time any seat at such a table meets it."""

    def __init__(self, rules: TableRules):
        super().__init__()
        self.rules = rules

    def __missing__(self, key: tuple[int, int]) -> tuple[tuple[int, int], ...]:
        raises = self[key] = tuple(self.rules.lowest_raises(StandingBid(0, *key)))
        return raises


@cache
def lowest_raises(rules: TableRules) -> LowestRaises:
    """The table's :class:`LowestRaises`, shared by every scripted seat at such a table."""
    return LowestRaises(rules)


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
