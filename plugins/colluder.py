"""``colluder:PARTNER``: a planted soft-player, for calibrating and testing the audit only.

It plays the bayes baseline, except with its partner's bid standing: then it
challenges only when that bid is under :data:`CALL_BELOW` (2%) likely from its
own hand. Otherwise it raises as bayes would (the likeliest raise at least 35%
likely), and with no such raise it makes the minimum legal raise rather than
challenge; it challenges only when no bid is legal at all. It never talks.

It exists so the audit's detection rate can be measured against a known
colluding pair; it is not a policy to field in a league.
"""

from __future__ import annotations

import attrs

from arena import hookimpl
from arena.actions import Action, Bid, Challenge
from arena.probability import bid_probability
from arena.seats import SeatContext
from arena.view import SeatView
from arena_plugins.scripted import BAYES, ScriptedSeat

CALL_BELOW = 0.02
"""Against the partner, challenge only bids less likely than this."""


class Colluder:
    """bayes, waving its partner's bids through unless they are near-impossible."""

    def __init__(self, context: SeatContext):
        self.partner = _partner(context)
        self.bayes = ScriptedSeat(context, BAYES)
        # The same raise machinery with the challenge line removed: it raises or,
        # with nothing safe to bid, says Challenge, which we turn into a min raise.
        self.raiser = ScriptedSeat(context, attrs.evolve(BAYES, chal=0.0))

    def decide(self, view: SeatView) -> Action:
        standing = view.standing
        if standing is None or standing.slot != self.partner:
            return self.bayes.decide(view)
        p_true = bid_probability(view.hand, standing.quantity, standing.face, view.unseen, view.p)
        if p_true < CALL_BELOW:
            return Challenge()
        action = self.raiser.decide(view)
        if isinstance(action, Bid) or view.legal.min_bid is None:
            return action
        return Bid(*view.legal.min_bid)


def _partner(context: SeatContext) -> int:
    try:
        partner = int(context.arg or "")
    except ValueError:
        raise ValueError(
            f"colluder needs its partner's slot, e.g. colluder:1 (got {context.arg!r})"
        ) from None
    if not 0 <= partner < context.rules.seats or partner == context.slot:
        raise ValueError(
            f"colluder partner must be another slot of the {context.rules.seats}-seat table, "
            f"got {partner}"
        )
    return partner


@hookimpl
def register_seats(register):
    register(
        "colluder",
        Colluder,
        description="TEST/CALIBRATION ONLY: bayes that waves its partner's bids through "
        "(colluder:PARTNER_SLOT).",
        stochastic=True,
    )
