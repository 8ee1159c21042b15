"""``random``: uniform over the legal actions. For tests, benchmarks and sanity floors."""

from __future__ import annotations

from arena import hookimpl
from arena.actions import Action, Bid, Challenge
from arena.seats import SeatContext
from arena.view import SeatView


class RandomSeat:
    """Draws one action uniformly from every legal bid plus challenge (when allowed)."""

    def __init__(self, context: SeatContext):
        self.rng = context.rng
        self.rules = context.rules

    def compiled_spec(self):
        """This seat as the compiled engine plays it (docs/plugins.md)."""
        from arena.fast.spec import RANDOM, CompiledSeat, stream_state  # a compiled table asks

        return CompiledSeat(RANDOM, **stream_state(self.rng))

    def decide(self, view: SeatView) -> Action:
        ladder = self.rules.ladder
        first = view.legal.min_bid
        # Every legal bid is the ladder from the lowest legal one up (see arena.rules).
        start = self.rules.rank(*first) if first else len(ladder)
        bids = len(ladder) - start
        choices = bids + (1 if view.legal.can_challenge else 0)
        pick = int(self.rng.integers(choices))
        if pick == bids:
            return Challenge()
        return Bid(*ladder[start + pick])

    def action_distribution(self, view: SeatView) -> dict[Action, float]:
        """The exact distribution :meth:`decide` draws from: uniform over the legal actions."""
        first = view.legal.min_bid
        bids = self.rules.ladder[self.rules.rank(*first) :] if first else ()
        actions: list[Action] = [Bid(*bid) for bid in bids]
        if view.legal.can_challenge:
            actions.append(Challenge())
        return dict.fromkeys(actions, 1 / len(actions))


@hookimpl
def register_seats(register):
    register(
        "random",
        RandomSeat,
        description="Uniform over the legal actions.",
        stochastic=True,
    )
