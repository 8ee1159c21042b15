"""Rule 1's dealing: one batch of words per deal gives the hands hand-by-hand dealing gives."""

from __future__ import annotations

from types import SimpleNamespace

from hypothesis import given
from hypothesis import strategies as st

from arena import seeding
from arena_plugins.dice import DICE
from arena_plugins.poker import POKER


def one_by_one(streams: seeding.DealStreams, deal: int, seats: int, symbols, hand_size: int):
    """Each hand by uniform_indices, in slot order: the definition the batch must equal."""
    rng = streams.for_deal(deal)
    return tuple(
        tuple(symbols[i] for i in seeding.uniform_indices(rng, len(symbols), hand_size))
        for _ in range(seats)
    )


@given(
    st.integers(0, 2**62), st.integers(0, 10**6), st.integers(2, 8), st.sampled_from([DICE, POKER])
)
def test_a_batch_deal_is_the_hand_by_hand_deal(seed, deal, seats, mode):
    streams = seeding.DealStreams(seed)
    expected = one_by_one(streams, deal, seats, mode.symbols, mode.hand_size)
    assert streams.hands(deal, seats, mode) == expected
    assert len(expected) == seats and all(len(hand) == mode.hand_size for hand in expected)


def test_a_word_that_needs_redrawing_sends_the_deal_back_to_hand_by_hand():
    # With n = 2**62 + 1 symbols, 2**64 mod n = 2**62 - 3, so every word at or above
    # 2**64 - 2**62 + 3 (about a quarter of them) is redrawn: among twelve words one
    # almost surely is (1 - (3/4)**12 = 97%), and then the batch gives up.
    symbols = range(2**62 + 1)
    huge = SimpleNamespace(
        draws_uniformly=True,
        symbols=symbols,
        hand_size=3,
        draw_hand=lambda rng: tuple(
            symbols[i] for i in seeding.uniform_indices(rng, len(symbols), 3)
        ),
    )
    streams = seeding.DealStreams(5)
    assert seeding.uniform_hands(streams.for_deal(0), symbols, 3, 4) is None
    assert streams.hands(0, 4, huge) == one_by_one(streams, 0, 4, symbols, 3)


@given(st.integers(0, 2**62), st.integers(0, 10**6), st.sampled_from([DICE, POKER]))
def test_deals_in_a_row_are_the_deals_dealt_alone(seed, first, mode):
    # One DealStreams steps from each deal to the next (relative advance); each deal must
    # equal the same deal dealt hand by hand from its own start, and so must a deal
    # asked out of order (a fresh start) after them.
    streams = seeding.DealStreams(seed)
    for deal in [first, first + 1, first + 2, first + 7, first + 8]:
        assert streams.hands(deal, 4, mode) == one_by_one(
            seeding.DealStreams(seed), deal, 4, mode.symbols, mode.hand_size
        )


def test_a_deal_two_after_the_last_starts_afresh_not_one_stride_on():
    # After hands(0) the generator stands 20 words into deal 0's stretch (4 seats x 5
    # dice). Deal 2 starts 2 x 2**64 words in: a relative advance of 2**64 - 20 would
    # land on deal 1's start instead, so only deal - 1 may step on; deal 2 starts afresh.
    streams = seeding.DealStreams(7)
    streams.hands(0, 4, DICE)
    dealt = streams.hands(2, 4, DICE)
    assert dealt == one_by_one(seeding.DealStreams(7), 2, 4, DICE.symbols, DICE.hand_size)
    # ... and deal 1's hands (where a wrong step would land) are not deal 2's.
    assert dealt != one_by_one(seeding.DealStreams(7), 1, 4, DICE.symbols, DICE.hand_size)
