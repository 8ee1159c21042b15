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

    def decide(self, view: SeatView) -> Action:
        faces = view.symbols
        width = len(faces)
        first = view.legal.min_bid
        # Bids in rule-4 order are indexed (quantity - 1) * width + face position.
        start = (first[0] - 1) * width + faces.index(first[1]) if first else 0
        bids = view.legal.max_quantity * width - start if first else 0
        choices = bids + (1 if view.legal.can_challenge else 0)
        pick = int(self.rng.integers(choices))
        if pick == bids:
            return Challenge()
        quantity, position = divmod(start + pick, width)
        return Bid(quantity + 1, faces[position])


@hookimpl
def register_seats(register):
    register(
        "random",
        RandomSeat,
        description="Uniform over the legal actions.",
        stochastic=True,
    )
