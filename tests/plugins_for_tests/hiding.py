"""Tables that differ only in hidden hands: the raw material of the information-hiding tests.

The view tests (test_engine) and the prompt tests (test_claude_prompt) both play two
engines whose modes deal the same cards except for other seats' hands of the last deal,
and check that the observer cannot tell the difference before the reveal.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from arena.modes import Mode
from arena_plugins.dice import DICE
from arena_plugins.poker import POKER


class DealtBy:
    """A mode's ``draw`` that deals from the deal's generator, except hands it is told to swap.

    The engine draws one hand per slot in slot order each deal, so the n-th call is
    (deal n // seats, slot n % seats).
    """

    def __init__(self, seats: int, swaps: dict[tuple[int, int], tuple[int, ...]]):
        self.seats, self.swaps, self.calls = seats, swaps, 0

    def __call__(self, mode: Mode, rng: np.random.Generator) -> tuple[int, ...]:
        deal, slot = divmod(self.calls, self.seats)
        self.calls += 1
        picks = rng.integers(0, len(mode.symbols), size=mode.hand_size).tolist()
        return self.swaps.get((deal, slot), tuple(mode.symbols[i] for i in picks))


@st.composite
def swapped_tables(draw, max_seats: int = 8):
    """(mode, seats, seed, deals, max_bids, observer, swaps): swaps replace every other
    seat's hand in the last deal, the one not yet revealed to the observer."""
    mode = draw(st.sampled_from([DICE, POKER]))
    seats = draw(st.integers(2, max_seats))
    observer = draw(st.integers(0, seats - 1))
    deals = draw(st.integers(1, 3))
    hand = st.tuples(*[st.sampled_from(mode.symbols)] * mode.hand_size)
    swaps = {(deals - 1, slot): draw(hand) for slot in range(seats) if slot != observer}
    seed = draw(st.integers(0, 2**32 - 1))
    max_bids = draw(st.integers(1, 12))
    return mode, seats, seed, deals, max_bids, observer, swaps
