"""bayes and pressure exactly as rules.md describes them, on hand-built positions.

Four seats of dice unless said otherwise: 15 unseen dice, p = 1/6, so the
chance that a bid needing k more of a face is true is P(X >= k), X ~ Bin(15, 1/6):

    k:  <=0     1       2       3       4       5       6
    P:  1     .9351   .7404   .4678   .2315   .0898   .0274

(need = quantity - own count of that face; ones are not wild.) Thresholds:
bayes challenges under .15, pressure under .25; both bid only raises >= .35.
"""

from __future__ import annotations

import pytest
from plugins_for_tests.harness import context, make_view

from arena.actions import Bid, Challenge
from arena.modes import Mode
from arena.rules import TableRules
from arena_plugins.dice import DICE
from arena_plugins.poker import POKER
from arena_plugins.scripted import BAYES, PRESSURE, bayes, pressure

FOUR = TableRules(mode=DICE, seats=4)
POLICIES = {"bayes": bayes, "pressure": pressure}


def decide(policy: str, hand, bids=(), rules: TableRules = FOUR, seed: int = 0):
    seat = POLICIES[policy](context(rules, slot=0, seed=seed))
    return seat.decide(make_view(rules, hand, bids))


def test_thresholds_are_the_rulebooks():
    assert (BAYES.chal, BAYES.safe, BAYES.pad) == (0.15, 0.35, False)
    assert (PRESSURE.chal, PRESSURE.safe, PRESSURE.pad) == (0.25, 0.35, True)


# --- challenging -------------------------------------------------------------------------


@pytest.mark.parametrize("policy", ["bayes", "pressure"])
def test_both_challenge_a_bid_under_15_percent(policy):
    # Standing 5x6, no six in hand: need 5 -> .0898 < .15 (and < .25).
    assert decide(policy, (1, 2, 3, 4, 5), [(1, 5, 6)]) == Challenge()


def test_between_15_and_25_percent_pressure_calls_and_bayes_raises():
    # Standing 4x6, no six in hand: need 4 -> .2315; bayes keeps playing, pressure calls.
    # bayes' raises at q 5..6 (no face above 6 at q 4): 5x1 needs 5 - 2 = 3 -> .4678 >= .35;
    # 5x2, 5x3, 5x5 need 4 -> .2315; everything else needs more. Only 5x1 is safe.
    hand = (1, 1, 2, 3, 5)
    assert decide("bayes", hand, [(1, 4, 6)]) == Bid(5, 1)
    assert decide("pressure", hand, [(1, 4, 6)]) == Challenge()


@pytest.mark.parametrize("policy", ["bayes", "pressure"])
def test_with_nothing_safe_to_bid_both_challenge(policy):
    # Standing 4x6 with one six in hand: need 3 -> .4678, above both call lines.
    # Raises at q 5..6: every face is held at most once, so need >= 4 -> <= .2315 < .35.
    assert decide(policy, (1, 2, 3, 4, 6), [(1, 4, 6)]) == Challenge()


# --- raising and its tie-breaks ------------------------------------------------------------------


def test_raise_bids_the_likeliest():
    # Standing 3x4 (no four in hand: need 3 -> .4678, not called). Raises q 3..5:
    # 4x2 needs 4 - 3 = 1 -> .9351, the unique best; next are 3x5 and 5x2 at .7404.
    hand = (2, 2, 2, 3, 5)
    assert decide("bayes", hand, [(1, 3, 4)]) == Bid(4, 2)
    # pressure pads the chosen raise by one: 5x2 (legal, 5 <= 20).
    assert decide("pressure", hand, [(1, 3, 4)]) == Bid(5, 2)


def test_tie_on_likelihood_goes_to_the_lower_quantity():
    # Standing 3x3 (no three in hand: need 3 -> .4678). Best raises at .7404 (need 2):
    # 3x4 (one four held), 4x1 and 4x2 (two of each held). Lower quantity wins: 3x4,
    # even though ones and twos are held more often than fours.
    hand = (1, 1, 2, 2, 4)
    assert decide("bayes", hand, [(1, 3, 3)]) == Bid(3, 4)
    assert decide("pressure", hand, [(1, 3, 3)]) == Bid(4, 4)


def test_tie_on_likelihood_and_quantity_goes_to_the_face_held_most():
    # Standing 2x1 (need 2 -> .7404). Certain raises (need <= 0 -> exactly 1): 2x2 (three
    # twos held), 2x5 (two fives held) and 3x2. Lower quantity leaves 2x2 and 2x5, both
    # certain; the face held most is 2, although 5 is the higher face.
    hand = (2, 2, 2, 5, 5)
    assert decide("bayes", hand, [(1, 2, 1)]) == Bid(2, 2)
    assert decide("pressure", hand, [(1, 2, 1)]) == Bid(3, 2)


@pytest.mark.parametrize(("policy", "pad"), [("bayes", 0), ("pressure", 1)])
def test_a_tie_that_survives_every_rule_is_broken_by_the_seeded_generator(policy, pad):
    # Standing 2x6 (no six: need 2 -> .7404). Raises at q 3: 3x1 .. 3x5 each need 3 - 1 = 2
    # -> .7404, same quantity, each face held once: a five-way tie only the generator breaks.
    hand, bids = (1, 2, 3, 4, 5), [(1, 2, 6)]
    tied = {Bid(3 + pad, face) for face in (1, 2, 3, 4, 5)}
    picks = [decide(policy, hand, bids, seed=seed) for seed in range(200)]
    assert set(picks) == tied  # each appears: P(one of five never drawn in 200) < 5 * 0.8^200
    # The same seed makes the same choice.
    assert [decide(policy, hand, bids, seed=seed) for seed in range(20)] == picks[:20]


def test_the_tie_break_uses_the_seats_own_stream():
    # Two seats from identically seeded contexts agree move for move over many ties.
    hand, bids = (1, 2, 3, 4, 5), [(1, 2, 6)]
    view = make_view(FOUR, hand, bids)
    a, b = bayes(context(FOUR, seed=42)), bayes(context(FOUR, seed=42))
    assert [a.decide(view) for _ in range(30)] == [b.decide(view) for _ in range(30)]
    other = bayes(context(FOUR, seed=43))
    assert [a.decide(view) for _ in range(30)] != [other.decide(view) for _ in range(30)]


def test_pressure_does_not_pad_past_the_maximum_quantity():
    # A two-symbol mode, one symbol a hand, two seats: max quantity 2, 1 unseen, p = 1/2.
    # Hand (1,), standing 1x1: certain, so not called. Raises: 2x0 needs 2 > 1 unseen -> 0;
    # 2x1 needs 1 -> 1/2 >= .35. Chosen 2x1; padding to 3x1 would exceed 2, so it stays 2x1.
    coin = Mode(name="coin", symbols=(0, 1), hand_size=1)
    rules = TableRules(mode=coin, seats=2)
    assert decide("pressure", (1,), [(1, 1, 1)], rules=rules) == Bid(2, 1)
    assert decide("bayes", (1,), [(1, 1, 1)], rules=rules) == Bid(2, 1)


# --- opening --------------------------------------------------------------------------------------


@pytest.mark.parametrize("policy", ["bayes", "pressure"])
@pytest.mark.parametrize(
    ("seats", "hand", "expected"),
    [
        (4, (3, 3, 5, 5, 5), Bid(5, 5)),  # three fives + floor(15 / 6) = 2
        (2, (6, 6, 1, 2, 3), Bid(2, 6)),  # two sixes + floor(5 / 6) = 0
        (8, (6, 6, 1, 2, 3), Bid(7, 6)),  # two sixes + floor(35 / 6) = 5
        (4, (1, 1, 1, 1, 1), Bid(7, 1)),  # ones count only as ones: 5 + 2
    ],
)
def test_opening_bid_is_face_held_most_at_own_count_plus_expected_share(
    policy, seats, hand, expected
):
    # The opening bid is not a raise, so pressure opens exactly like bayes.
    rules = TableRules(mode=DICE, seats=seats)
    assert decide(policy, hand, rules=rules) == expected


def test_opening_in_poker_uses_p_one_tenth():
    # 0 0 0 7 7 1 2 3 at four seats: zeros held most (three); unseen 24, floor(24 / 10) = 2.
    rules = TableRules(mode=POKER, seats=4)
    assert decide("bayes", (0, 0, 0, 7, 7, 1, 2, 3), rules=rules) == Bid(5, 0)


def test_opening_tie_on_face_held_most_is_broken_by_the_generator():
    # Two twos and two fours: 4x2 or 4x4 (2 + floor(15 / 6)), chosen by the seeded generator.
    picks = {decide("bayes", (2, 2, 4, 4, 6), seed=seed) for seed in range(60)}
    assert picks == {Bid(4, 2), Bid(4, 4)}


def test_opening_quantity_stays_within_1_and_the_table_maximum():
    # The clamp: own count + floor(unseen * p) can never exceed seats x hand size (count <=
    # hand size, floor(unseen * p) <= unseen), and the face held most is held at least once,
    # so every opening over every hand of a small mode must land in 1 .. max.
    coin = Mode(name="coin", symbols=(0, 1), hand_size=3)
    for seats in (2, 8):
        rules = TableRules(mode=coin, seats=seats)
        for code in range(8):
            hand = tuple((code >> i) & 1 for i in range(3))
            bid = decide("bayes", hand, rules=rules)
            assert 1 <= bid.quantity <= rules.max_quantity
            assert hand.count(bid.face) == max(hand.count(0), hand.count(1))
            assert bid.quantity == hand.count(bid.face) + (seats - 1) * 3 // 2


# --- poker -------------------------------------------------------------------------------------


def test_poker_position_with_p_one_tenth():
    # Four seats of 8 digits: 24 unseen, X ~ Bin(24, 1/10): P(X>=2) .7075, >=3 .4357,
    # >=4 .2143. Standing 4x9, no nine held: need 4 -> .2143, so pressure calls and bayes
    # does not. bayes' raises at q 5..6: 5x0 needs 5 - 3 = 2 -> .7075, the best.
    rules = TableRules(mode=POKER, seats=4)
    hand = (0, 0, 0, 7, 7, 1, 2, 3)
    assert decide("bayes", hand, [(2, 4, 9)], rules=rules) == Bid(5, 0)
    assert decide("pressure", hand, [(2, 4, 9)], rules=rules) == Challenge()


@pytest.mark.parametrize("policy", ["bayes", "pressure"])
def test_baselines_never_talk_and_never_write_notes(policy):
    positions = [((1, 2, 3, 4, 5), []), ((2, 2, 2, 3, 5), [(1, 3, 4)]), ((1,) * 5, [(1, 9, 6)])]
    for hand, bids in positions:
        action = decide(policy, hand, bids)
        assert (action.say, action.notes) == (None, None)


COIN = Mode(name="coin", symbols=(1, 2), hand_size=1)
"""Two seats of one coin each: quantities 1..2, so padding can reach the maximum."""


def test_pressure_pads_its_raise_up_to_exactly_the_maximum_quantity():
    rules = TableRules(mode=COIN, seats=2)  # max quantity 2, one unseen coin, p = 1/2
    seat = pressure(context(rules, slot=1))
    # Facing 1 x 1 holding a 2: 1 x 1 is true with chance 1/2 >= chal 0.25, so raise.
    # Lowest raises: 1 x 2 (need 0: certain) and 2 x 1 (need 2 of 1 unseen: impossible).
    # The pick is 1 x 2; padded by one it is 2 x 2, which is exactly the maximum: legal.
    assert seat.decide(make_view(rules, (2,), [(0, 1, 1)], slot=1)) == Bid(2, 2)
    # Facing 1 x 2 holding a 2: certain, so raise. Raises: 2 x 1 (need 2 of 1 unseen:
    # impossible) and 2 x 2 (need 1: chance 1/2 >= safe 0.35). The pick is 2 x 2 at the
    # maximum already; padding would make 3 x 2, past it, so it bids 2 x 2 unpadded.
    assert seat.decide(make_view(rules, (2,), [(0, 1, 2)], slot=1)) == Bid(2, 2)
