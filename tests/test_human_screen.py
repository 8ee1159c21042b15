"""What a person is shown at a decision, checked against hand-worked positions.

Every expected number below is worked out in the comments from the rulebook: the
bid (q, f) is true when at least q - (own count of f) of the 15 unseen dice of a
4-seat dice table show f, each with p = 1/6 (ones are not wild).
"""

from __future__ import annotations

from fractions import Fraction
from math import comb

import attrs
from hypothesis import given
from hypothesis import strategies as st
from plugins_for_tests.harness import context, make_view

from arena.rules import TableRules
from arena.view import PastDeal, PublicBid
from arena_plugins.dice import DICE
from arena_plugins.human.screen import Advisor, build_screen, percent

RULES = TableRules(mode=DICE, seats=4)
POLICIES = ("human", "bayes", "bayes", "pressure")


def tail(need: int, unseen: int = 15, p: Fraction = Fraction(1, 6)) -> float:
    """P(at least ``need`` of ``unseen`` show the face), summed by hand."""
    if need <= 0:
        return 1.0
    return float(sum(comb(unseen, k) * p**k * (1 - p) ** (unseen - k) for k in range(need, 16)))


def screen_for(hand, bids, slot=0, history=()):
    view = attrs.evolve(make_view(RULES, hand, bids, slot=slot), history=history)
    return build_screen(view, RULES, POLICIES, Advisor(context(RULES, slot)))


def test_standing_bid_probability_is_conditioned_on_the_hand():
    # Hand 2 2 3 5 6 facing 3x2: two 2s are in hand, so one of the 15 unseen must be a 2:
    # 1 - (5/6)^15 = 0.935095...
    screen = screen_for((2, 2, 3, 5, 6), [(3, 3, 2)])
    assert screen.standing.probability == float(1 - Fraction(5, 6) ** 15)
    assert screen.standing.text == "93.51%"


def test_worth_considering_is_each_faces_lowest_raise_and_the_next_two():
    # Facing 3x2: faces 3..6 may repeat quantity 3 (rule 4), faces 1 and 2 need 4.
    screen = screen_for((2, 2, 3, 5, 6), [(3, 3, 2)])
    expected = {(q, f) for f in (3, 4, 5, 6) for q in (3, 4, 5)} | {
        (q, f) for f in (1, 2) for q in (4, 5, 6)
    }
    assert {(o.quantity, o.face) for o in screen.options} == expected


def test_options_carry_the_exact_tail_sorted_likeliest_first():
    hand = (2, 2, 3, 5, 6)
    screen = screen_for(hand, [(3, 3, 2)])
    for option in screen.options:
        assert option.probability == tail(option.quantity - hand.count(option.face))
    # 4x2 needs 2 more 2s; 3x4 needs 3 4s (none in hand); 6x1 needs all 6 from the unseen.
    by_bid = {(o.quantity, o.face): o.probability for o in screen.options}
    assert by_bid[(4, 2)] == tail(2) > by_bid[(3, 4)] == tail(3) > by_bid[(6, 1)] == tail(6)
    ranks = [(-o.probability, o.quantity, o.face) for o in screen.options]
    assert ranks == sorted(ranks)


def test_bayes_choice_is_marked_once_and_is_what_the_baseline_would_bid():
    # 3x2 is 93.5% likely (>= chal 0.15), so bayes raises. The likeliest raises need 2 more:
    # 3x3, 3x5, 3x6 (one held each) and 4x2 (two held) at tail(2) = 0.7040...; the lower
    # quantity wins, and 3, 5 and 6 are each held once, so the generator picks among them.
    screen = screen_for((2, 2, 3, 5, 6), [(3, 3, 2)])
    marked = [(o.quantity, o.face) for o in screen.options if o.bayes]
    assert len(marked) == 1 and marked[0] in {(3, 3), (3, 5), (3, 6)}
    assert not screen.bayes_challenges


def test_bayes_challenge_is_marked_when_the_standing_bid_is_unlikely():
    # 9x4 with no 4 in hand: 9 of 15 unseen must be 4s, far under chal 0.15.
    screen = screen_for((2, 2, 3, 5, 6), [(3, 9, 4)])
    assert screen.bayes_challenges and not any(o.bayes for o in screen.options)
    assert screen.standing.probability == tail(9) < 0.15


def test_table_is_in_order_with_points_from_the_finished_deals():
    # Deal 0: slot 1 won against slot 0; deal 1: slot 0 won against slot 3.
    history = (
        PastDeal(0, 0, (PublicBid(1, 3, 4),), 0, False, 5, ((),) * 4, 1, 0),
        PastDeal(1, 1, (PublicBid(3, 9, 6),), 0, False, 2, ((),) * 4, 0, 3),
    )
    screen = screen_for((1, 2, 3, 4, 5), [(1, 2, 2)], slot=2, history=history)
    assert [(s.slot, s.points) for s in screen.table] == [(0, 0), (1, 1), (2, 0), (3, -1)]
    assert [s.policy for s in screen.table] == list(POLICIES)
    assert [s.you for s in screen.table] == [False, False, True, False]
    assert screen.last_deal == history[-1]


def test_opening_turn_offers_bids_around_even_odds_and_no_challenge():
    # Holding three 4s, q x 4 needs q - 3 of 15: 5x4 needs 2 (tail 0.70), 6x4 needs 3 (0.47),
    # so 5 is the highest even-odds quantity and the band is 4, 5, 6.
    screen = screen_for((4, 4, 4, 1, 2), [])
    assert screen.standing is None and not screen.can_challenge and screen.can_bid
    fours = sorted(o.quantity for o in screen.options if o.face == 4)
    assert fours == [4, 5, 6]


@given(
    hand=st.lists(st.integers(1, 6), min_size=5, max_size=5),
    quantity=st.integers(1, 20),
    face=st.integers(1, 6),
)
def test_every_shown_number_is_the_modes_bid_probability(hand, quantity, face):
    screen = screen_for(tuple(hand), [(3, quantity, face)])
    shown = [screen.standing, *screen.options]
    for chance in shown:
        exact = DICE.bid_probability(tuple(hand), chance.quantity, chance.face, 15)
        assert chance.probability == exact
        assert chance.text == f"{exact * 100:.2f}%" == percent(exact)
    for o in screen.options:  # rules 3 and 4: in range and a strict raise
        assert 1 <= o.quantity <= 20
        assert o.quantity > quantity or (o.quantity == quantity and o.face > face)
