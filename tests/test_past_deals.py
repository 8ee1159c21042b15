"""A long episode's history in little memory: packed deals read back as the deals they were."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from plugins_for_tests.harness import play_table
from plugins_for_tests.seats import Recording

from arena.rules import TableRules
from arena.seats import SeatContext
from arena.view import History, PastDeal, PastDeals, PublicBid
from arena_plugins.dice import DICE
from arena_plugins.scripted import bayes, pressure


class Small(PastDeals):
    """Packs after four deals, so a short test crosses the boundary many times."""

    RECENT = 2


def past_deal(number: int, draw, big: bool) -> PastDeal:
    top = 10_000 if big else 255
    numbers = st.integers(0, top)
    seats = draw(st.integers(2, 8))
    size = draw(st.integers(1, 6))
    bids = draw(st.lists(st.builds(PublicBid, numbers, numbers, numbers), max_size=5))
    hands = tuple(
        tuple(draw(st.lists(numbers, min_size=size, max_size=size))) for _ in range(seats)
    )
    return PastDeal(
        number, draw(numbers), tuple(bids), draw(numbers), draw(st.booleans()),
        draw(numbers), hands, draw(numbers), draw(numbers),
    )  # fmt: skip


@pytest.mark.slow
@given(st.data())
def test_packed_deals_read_back_equal_to_the_deals_appended(data):
    deals = [past_deal(n, data.draw, big=data.draw(st.booleans())) for n in range(13)]
    kept = Small(deals)
    # 13 deals with RECENT = 2: the first 10 are packed (those that fit), 3 stay recent.
    assert len(kept._packed) == 10
    assert list(kept) == deals
    assert kept[-1] == deals[-1] and kept[3:7] == tuple(deals[3:7])
    assert History(kept, 9) == tuple(deals[:9])


def test_a_deal_that_does_not_fit_a_byte_or_its_position_stays_an_object():
    hands = ((1, 2), (3, 4))
    fits = PastDeal(0, 1, (PublicBid(1, 3, 4),), 0, False, 1, hands, 1, 0)
    big = PastDeal(1, 1, (PublicBid(1, 300, 4),), 0, False, 1, hands, 1, 0)  # quantity 300
    moved = PastDeal(7, 1, (), 0, True, 1, hands, 1, 0)  # deal 7 at position 2
    later = [PastDeal(n, 1, (), 0, True, 1, hands, 1, 0) for n in (3, 4, 5)]
    kept = Small([fits, big, moved, *later])
    # Six deals with RECENT = 2: the first four are packed, or kept where they cannot be.
    assert [type(x) for x in kept._packed] == [bytes, PastDeal, PastDeal, bytes]
    # fits packs as 8 head numbers, one bid's 3 and 4 symbols: 15 bytes.
    assert kept._packed[0] == bytes([1, 0, 0, 1, 1, 0, 2, 1, 1, 3, 4, 1, 2, 3, 4])
    assert list(kept) == [fits, big, moved, *later]


def test_out_of_range_indexes_raise():
    kept = Small([PastDeal(0, 1, (), 0, False, 1, ((1,), (2,)), 1, 0)])
    with pytest.raises(IndexError):
        kept[1]
    with pytest.raises(IndexError):
        kept[-2]


class EqualToAnything:
    def __eq__(self, other):
        return True

    __hash__ = None


def test_a_history_equals_exactly_the_deals_in_its_window():
    hands = ((1, 2), (3, 4))
    d0, d1, d2 = (PastDeal(n, 1, (), 0, True, 1, hands, 1, 0) for n in range(3))
    shared = [d0, d1, d2]
    # The window of length 2 over [d0, d1, d2] holds d0 d1: equal to that tuple, and to
    # another window of those deals over a different list, whatever lies past its end.
    assert History(shared, 2) == (d0, d1)
    assert History(shared, 2) == History([d0, d1])
    assert hash(History(shared, 2)) == hash((d0, d1))
    # Not equal to a window one shorter or one longer, nor to the same length of other deals.
    assert History(shared, 2) != (d0,)
    assert History(shared, 2) != (d0, d1, d2)
    assert History(shared, 2) != History(shared, 3)
    assert History(shared, 2) != (d0, d2)
    # A list is not a tuple: it is compared as any other object, and is unequal.
    assert History(shared, 2) != [d0, d1]
    assert History() == ()
    # An object it does not know decides for itself (History answers NotImplemented).
    assert History(shared, 2) == EqualToAnything()


@pytest.mark.parametrize("seed", [3, 11])
def test_every_view_sees_the_same_history_packed_or_not(monkeypatch, seed):
    """A 30-deal table where deals are packed after 4: each view's history equals the
    one the same table shows with nothing packed, deal for deal."""
    rules = TableRules(mode=DICE, seats=4)

    def table():
        seats = [
            Recording((bayes if slot % 2 else pressure)(SeatContext.derive(seed, slot, rules)))
            for slot in range(4)
        ]
        play_table(seats, DICE, seed=seed, deals=30)
        return [tuple(view.history) for seat in seats for view in seat.views]

    unpacked = table()
    monkeypatch.setattr(PastDeals, "RECENT", 2)
    assert table() == unpacked
    assert max(map(len, unpacked)) == 29  # a view of the last deal sees the 29 before it
