"""``colluder`` and ``colluder:SPEC``: planted soft-players, for calibrating and testing the audit.

Partners are recognised by policy, from the table's name cards
(``SeatContext.policies``), so the colluder works in a league where nobody knows
in advance which slot a teammate will draw:

- ``colluder`` goes easy on every *other* seat whose spec is the same as its
  own: two ``colluder`` seats at a table are a team.
- ``colluder:SPEC`` goes easy on every other seat whose spec is ``SPEC``: a
  one-way soft player (``colluder:bayes`` waves bayes seats through).

It plays the bayes baseline, except with a partner's bid standing: then it
challenges only when that bid is under :data:`CALL_BELOW` (2%) likely from its
own hand. Otherwise it raises as bayes would (the likeliest raise at least 35%
likely), and with no such raise it makes the minimum legal raise rather than
challenge; it challenges only when no bid is legal at all. It never talks.
With no partner at the table it is bayes.

It exists so the audit's detection rate can be measured against a known
colluding pair; it is not a policy to field in a league.
"""

from __future__ import annotations

import attrs

from arena import hookimpl
from arena.actions import Action, Bid, Challenge
from arena.seats import SeatContext
from arena.view import SeatView
from arena_plugins.scripted import BAYES, ScriptedSeat

CALL_BELOW = 0.02
"""Against a partner, challenge only bids less likely than this."""


class Colluder:
    """bayes, waving its partners' bids through unless they are near-impossible."""

    def __init__(self, context: SeatContext):
        self.partners = partners(context)
        self.bayes = ScriptedSeat(context, BAYES)
        # The same raise machinery with the challenge line removed: it raises or,
        # with nothing safe to bid, says Challenge, which we turn into a min raise.
        self.raiser = ScriptedSeat(context, attrs.evolve(BAYES, chal=0.0))

    def compiled_spec(self):
        """Its bayes line's numbers and stream, with its partners (docs/plugins.md)."""
        from arena.fast.spec import COLLUDER  # only a compiled table asks

        partners = sum(1 << slot for slot in self.partners)
        return attrs.evolve(
            self.bayes.compiled_spec(), kind=COLLUDER, partners=partners, call_below=CALL_BELOW
        )

    def decide(self, view: SeatView) -> Action:
        standing = view.standing
        if standing is None or standing.slot not in self.partners:
            return self.bayes.decide(view)
        p_true = view.bid_probability(standing.quantity, standing.face)
        if p_true < CALL_BELOW:
            return Challenge()
        action = self.raiser.decide(view)
        if isinstance(action, Bid) or view.legal.min_bid is None:
            return action
        return Bid(*view.legal.min_bid)


def partners(context: SeatContext) -> frozenset[int]:
    """The other slots whose spec is the partner spec: ``arg``, or else this seat's own.

    None at the table (say, a league drew no teammate) leaves plain bayes.
    """
    if context.arg == "":
        raise ValueError("colluder:SPEC needs the partners' seat spec after the colon")
    policies = context.policies
    own = policies[context.slot] if context.slot < len(policies) else None
    wanted = own if context.arg is None else context.arg
    return frozenset(
        slot for slot, spec in enumerate(policies) if spec == wanted and slot != context.slot
    )


@hookimpl
def register_seats(register):
    register(
        "colluder",
        Colluder,
        description="TEST/CALIBRATION ONLY: bayes that waves its partners' bids through "
        "(colluder: seats of its own spec; colluder:SPEC: seats of SPEC).",
        stochastic=True,
        argument="the partners' seat SPEC",
    )
