"""``planted:TRAIT``: seats with one known trait, planted to show the decision read-out finds it.

Each plays the bayes baseline except for its trait, so the figure made for that trait
is the one thing that sets it apart (``bench/calibrate_decisions.py`` measures how often
it does, ``docs/decisions.md`` has the figures):

- ``planted:overbids`` pads every bid bayes would make by :data:`PAD` of its face (less
  when the cap is nearer): its bids sit past what its hand supports (``overreach``,
  ``bidChance``).
- ``planted:never-challenges`` raises where bayes would challenge (its lowest legal
  raise when bayes has no safe one), and challenges only when no bid is legal
  (``missedCatches``, ``challengeRate``).
- ``planted:targets:SPEC`` challenges only bids of seats whose spec is ``SPEC``, whenever
  its own hand makes them under :data:`TARGET_BELOW` likely; everyone else's bids it
  raises as ``never-challenges`` does (``targeting``).
- ``planted:adapts`` keeps each opponent's record from the revealed deals (false bids
  over bids, rule 6 reveals every hand) and challenges a bid under ``0.15 + 0.5 x
  record`` likely by its own hand, bayes's line for an opponent who never bluffs
  (``followsBluffs``).
- ``planted:bayes`` is bayes under another name: the identical-policy control.

It exists to calibrate the read-out; it is not a policy to field in a league.
"""

from __future__ import annotations

import attrs

from arena import hookimpl
from arena.actions import Action, Bid, Challenge
from arena.probability import count
from arena.seats import SeatContext
from arena.view import SeatView
from arena_plugins.scripted import BAYES, ScriptedSeat

PAD = 2
"""How many of its face ``overbids`` adds to bayes's bid."""
TARGET_BELOW = 0.5
"""``targets:SPEC`` challenges a target's bid under this likely (its own hand): wherever
challenging is worth something."""
ADAPT_FROM, ADAPT_SLOPE = BAYES.chal, 0.5
"""``adapts`` challenges a bid under ADAPT_FROM + ADAPT_SLOPE x the bidder's record."""

TRAITS = ("overbids", "never-challenges", "targets:SPEC", "adapts", "bayes")


class Planted:
    """bayes, but for one trait (see the module docstring)."""

    def __init__(self, context: SeatContext):
        trait, _, target = (context.arg or "").partition(":")
        if trait not in {t.split(":")[0] for t in TRAITS} or (trait == "targets") != bool(target):
            raise ValueError(f"planted:TRAIT needs one of {', '.join(TRAITS)}")
        self.trait = trait
        self.rules = context.rules
        self.bayes = ScriptedSeat(context, BAYES)
        # bayes's raise line with its challenge line removed: it raises, or says Challenge
        # when nothing is safe, which a seat that would not challenge makes a min raise.
        self.raiser = ScriptedSeat(context, attrs.evolve(BAYES, chal=0.0))
        self.targets = frozenset(
            slot
            for slot, spec in enumerate(context.policies)
            if spec == target and slot != context.slot
        )
        self.record: dict[int, list[int]] = {}
        """Per opponent slot: [bids, false bids] over the revealed deals read so far."""
        self.read = 0

    def decide(self, view: SeatView) -> Action:
        standing = view.standing
        if self.trait == "overbids":
            return self._padded(self.bayes.decide(view), view)
        if self.trait == "bayes" or standing is None:
            return self.bayes.decide(view)
        p_true = view.bid_probability(standing.quantity, standing.face)
        if self.trait == "targets" and standing.slot in self.targets:
            return Challenge() if p_true < TARGET_BELOW else self._raise(view)
        if self.trait == "adapts":
            return Challenge() if p_true < self._line(view, standing.slot) else self._raise(view)
        return self._raise(view)  # never-challenges, and targets facing anyone else

    def _raise(self, view: SeatView) -> Action:
        """bayes's raise; its lowest legal one when nothing is safe; a challenge only when
        no bid is legal."""
        action = self.raiser.decide(view)
        if isinstance(action, Bid) or view.legal.min_bid is None:
            return action
        return Bid(*view.legal.min_bid)

    def _padded(self, action: Action, view: SeatView) -> Action:
        if not isinstance(action, Bid):
            return action
        quantity = min(action.quantity + PAD, self.rules.max_quantity)
        return Bid(quantity, action.face)

    def _line(self, view: SeatView, bidder: int) -> float:
        """Where ``adapts`` challenges ``bidder``: bayes's line plus its bluff record."""
        for deal in view.history[self.read :]:
            table = [symbol for hand in deal.hands for symbol in hand]
            for bid in deal.bids:
                mine = self.record.setdefault(bid.slot, [0, 0])
                mine[0] += 1
                mine[1] += count(table, bid.face, view.wild) < bid.quantity
        self.read = len(view.history)
        bids, false = self.record.get(bidder, (0, 0))
        return ADAPT_FROM + ADAPT_SLOPE * (false / bids if bids else 0.0)


@hookimpl
def register_seats(register):
    register(
        "planted",
        Planted,
        description="TEST/CALIBRATION ONLY: bayes with one planted trait, for the decision "
        "read-out (planted:overbids, never-challenges, targets:SPEC, adapts, bayes).",
        stochastic=True,
        argument="the TRAIT: overbids, never-challenges, targets:SPEC, adapts or bayes",
    )
