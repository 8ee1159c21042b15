"""The wild-ones game of seed 002, from the seed's own text, each case worked by hand.

"A die counts toward f if it shows f or shows a 1", "ones are not wild for
themselves, so there p really is 1/6", "switching to ones lets you halve the
count (rounded up), switching away costs double plus one", and "holding two
4s, a bid of 2x4 is already true - probability exactly 1".

Our exact reading of the conversions (written down in docs/rules.md): between
faces 2-6 the strict raise of rule 4; ones after ones need more ones; from
q0 of another face, a bid on ones needs at least ceil(q0 / 2); from q0 ones,
a bid on another face needs at least 2 q0 + 1.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from math import comb, sqrt

import numpy as np
import pytest
from plugins_for_tests.harness import context

from arena.actions import Bid
from arena.modes import WILD_ONES, Mode
from arena.probability import at_least
from arena.rules import StandingBid, TableRules, resolve
from arena.view import LegalActions, SeatView
from arena_plugins.scripted import bayes
from arena_plugins.wild import WILD

TABLE = TableRules(mode=WILD, seats=4)
THIRD, SIXTH = Fraction(1, 3), Fraction(1, 6)


def bid(quantity: int, face: int, slot: int = 1) -> StandingBid:
    return StandingBid(slot, quantity, face)


def legal(quantity: int, face: int, standing: StandingBid) -> bool:
    return TABLE.bid_error(quantity, face, standing) is None


def test_counting_a_one_counts_for_every_other_face_but_not_twice_for_ones():
    hand = (1, 1, 4, 4, 6)
    # Face 4: the two 4s and the two ones = 4. Face 6: one 6 and two ones = 3.
    assert WILD.count(hand, 4) == 4
    assert WILD.count(hand, 6) == 3
    # Face 5: no 5s, but the two ones count = 2.
    assert WILD.count(hand, 5) == 2
    # A bid on ones counts the ones only: 2.
    assert WILD.count(hand, 1) == 2


def test_rule_6_challenge_counts_the_wilds_across_all_hands():
    hands = ((1, 2, 3, 4, 5), (1, 1, 6, 6, 2), (3, 3, 3, 3, 3), (5, 5, 5, 5, 5))
    # Face 6 across the table: two 6s + three ones = 5. A bid of 5x6 is true, 6x6 is false.
    assert resolve(hands, bid(5, 6), challenger=2, wild=1).actual == 5
    assert resolve(hands, bid(5, 6), challenger=2, wild=1).winner == 1
    assert resolve(hands, bid(6, 6), challenger=2, wild=1).winner == 2
    # Ones: three of them, nothing else counts.
    assert resolve(hands, bid(3, 1), challenger=2, wild=1).actual == 3


def test_p_is_one_third_for_other_faces_and_one_sixth_for_ones():
    # A die counts toward 4 if it shows 4 or 1: 2 of 6 faces. Toward 1: only a 1.
    assert WILD.face_p(4) == THIRD
    assert WILD.face_p(2) == THIRD
    assert WILD.face_p(1) == SIXTH


def test_the_exact_tail_uses_each_faces_own_p():
    # Holding (2, 3, 5, 6, 6): a bid of 3x4 needs 3 of the 15 unseen dice to count for 4.
    # P(X >= 3), X ~ Bin(15, 1/3) = 1 - sum_{i<3} C(15,i) (1/3)^i (2/3)^(15-i).
    expected = 1 - sum(comb(15, i) * THIRD**i * (1 - THIRD) ** (15 - i) for i in range(3))
    assert WILD.bid_probability((2, 3, 5, 6, 6), 3, 4, 15) == float(expected)
    # A bid of 3x1 from the same hand: 3 ones of 15 at p = 1/6.
    expected_ones = 1 - sum(comb(15, i) * SIXTH**i * (1 - SIXTH) ** (15 - i) for i in range(3))
    assert WILD.bid_probability((2, 3, 5, 6, 6), 3, 1, 15) == float(expected_ones)


def test_a_bid_already_met_by_your_own_hand_is_exactly_one():
    # "Holding two 4s, a bid of 2x4 is already true - probability exactly 1".
    assert WILD.bid_probability((4, 4, 2, 3, 5), 2, 4, 15) == 1.0
    # One 4 and a one: also two that count for 4.
    assert WILD.bid_probability((4, 1, 2, 3, 5), 2, 4, 15) == 1.0
    # ... but a one does not make 2x1 true from (4, 1, ...): one 1 of 15 unseen is still needed.
    assert WILD.bid_probability((4, 1, 2, 3, 5), 2, 1, 15) == float(1 - (1 - SIXTH) ** 15)


def test_rule_4_switching_to_ones_may_halve_rounded_up():
    # From 5x4: half of 5 rounded up is 3, so 3x1 is legal and 2x1 is not.
    assert legal(3, 1, bid(5, 4))
    assert not legal(2, 1, bid(5, 4))
    # From 4x6: half of 4 is exactly 2.
    assert legal(2, 1, bid(4, 6))
    assert not legal(1, 1, bid(4, 6))
    # From 1x2: half of 1 rounded up is 1.
    assert legal(1, 1, bid(1, 2))
    # The reason names the conversion's minimum.
    assert "at least 3" in TABLE.bid_error(2, 1, bid(5, 4))


def test_rule_4_switching_away_from_ones_needs_double_plus_one():
    # From 2x1: 2 * 2 + 1 = 5 of any other face; 4 is not enough, even of the top face.
    assert legal(5, 2, bid(2, 1))
    assert not legal(4, 6, bid(2, 1))
    # From 3x1: 7 of another face.
    assert legal(7, 3, bid(3, 1))
    assert not legal(6, 6, bid(3, 1))
    assert "at least 7" in TABLE.bid_error(6, 6, bid(3, 1))


def test_rule_4_ones_after_ones_need_more_and_other_faces_stay_strict():
    assert legal(3, 1, bid(2, 1))
    assert not legal(2, 1, bid(2, 1))
    # Between faces 2-6 the strict raise: same quantity needs a higher face.
    assert legal(5, 5, bid(5, 4))
    assert not legal(5, 3, bid(5, 4))
    assert legal(6, 2, bid(5, 4))


def test_the_ladder_orders_every_bid_exactly_as_the_raise_rule_does():
    # Legal iff higher on the ladder, for every pair of the 120 bids of a 4-seat table.
    bids = TABLE.ladder
    assert sorted(bids) == sorted(itertools.product(range(1, 21), range(1, 7)))
    for low, high in itertools.product(bids, repeat=2):
        standing = StandingBid(0, *low)
        assert legal(*high, standing) == (TABLE.rank(*high) > TABLE.rank(*low)), (low, high)
    # 2x1 sits just above 4x6 and below 5x2 (double plus one).
    assert TABLE.rank(4, 6) + 1 == TABLE.rank(2, 1) == TABLE.rank(5, 2) - 1


def test_the_lowest_raise_after_a_bid_on_the_top_face_is_the_ones_conversion():
    # After 4x6 the lowest bid is 2x1 (half of 4), not 5x2.
    assert TABLE.min_raise(bid(4, 6)) == (2, 1)


def test_a_wild_ones_mode_needs_a_wild_that_is_not_wild_for_itself():
    with pytest.raises(ValueError, match="wild-ones"):
        Mode(name="x", symbols=(1, 2, 3), hand_size=2, raise_rule=WILD_ONES)
    with pytest.raises(ValueError, match="not one of its symbols"):
        Mode(name="x", symbols=(1, 2, 3), hand_size=2, wild=7)


def test_bayes_opens_with_the_wild_counts_and_p_one_third():
    # Hand (1, 4, 4, 2, 3): face 4 counts 2 + the one = 3, more than any other face.
    # Opening: own count 3 + floor(15 * 1/3) = 3 + 5 = 8, on face 4.
    seat = bayes(context(TABLE))
    view = SeatView(
        slot=0, deal=0, mode="wild", symbols=WILD.symbols, hand_size=5, seats=4,
        table_order=(0, 1, 2, 3), opener=0, max_bids=12, hand=(1, 4, 4, 2, 3), bids=(),
        talk=(), history=(), notes=None, notes_truncated=False,
        legal=LegalActions(False, (1, 2), 20), talk_enabled=False,
        wild=1, raise_rule=WILD_ONES,
    )  # fmt: skip
    assert seat.decide(view) == Bid(8, 4)
    assert seat.action_distribution(view) == {Bid(8, 4): 1.0}


ROLLS = 200_000


def test_the_exact_tail_against_sampled_rolls_of_the_wild_game():
    """Seed 002 checked its closed form against 200,000 rolls; so do we, for every (n, k).

    Tolerance as in test_probability: 5 standard errors plus one roll's granularity.
    """
    rng = np.random.default_rng(66)
    for unseen in (5, 10, 15, 20, 35):
        rolls = rng.integers(1, 7, size=(ROLLS, unseen), dtype=np.int8)
        for face, counted in ((4, (rolls == 4) | (rolls == 1)), (1, rolls == 1)):
            shown = np.count_nonzero(counted, axis=1)
            at_least_k = np.bincount(shown, minlength=unseen + 2)[::-1].cumsum()[::-1]
            for k in range(unseen + 2):
                exact = at_least(unseen, k, WILD.face_p(face))
                observed = at_least_k[k] / ROLLS
                tolerance = 5 * sqrt(exact * (1 - exact) / ROLLS) + 1 / ROLLS
                assert abs(observed - exact) <= tolerance, (unseen, face, k, exact, observed)
