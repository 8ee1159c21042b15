"""``random`` is uniform over exactly the legal actions of the position."""

from __future__ import annotations

from collections import Counter

from plugins_for_tests.harness import context, make_view

from arena.actions import Bid, Challenge
from arena.rules import TableRules
from arena_plugins.dice import DICE
from arena_plugins.poker import POKER
from arena_plugins.random_seat import RandomSeat

TWO = TableRules(mode=DICE, seats=2)  # max quantity 10

# Upper 0.1% points of the chi-square distribution (scipy.stats.chi2.ppf(0.999, df)).
CHI2_999 = {8: 26.124, 11: 31.264, 21: 46.797, 59: 98.324}


def legal_by_hand(rules: TableRules, standing: tuple[int, int] | None) -> set:
    """Rules 3 and 4 enumerated directly: every bid in range that raises, plus challenge."""
    faces = rules.mode.symbols
    bids = {
        Bid(q, f)
        for q in range(1, rules.max_quantity + 1)
        for f in faces
        if standing is None or q > standing[0] or (q == standing[0] and f > standing[1])
    }
    return bids if standing is None else bids | {Challenge()}


def draws(rules: TableRules, standing, count: int, seed: int = 0) -> Counter:
    seat = RandomSeat(context(rules, seed=seed))
    bids = [] if standing is None else [(1, *standing)]
    view = make_view(rules, rules.mode.symbols[: rules.mode.hand_size], bids)
    return Counter(seat.decide(view) for _ in range(count))


def chi_square(counts: Counter, support: set) -> float:
    expected = sum(counts.values()) / len(support)
    return sum((counts[a] - expected) ** 2 / expected for a in support)


def test_uniform_over_the_nine_legal_actions_near_the_top():
    # Standing 9x4 at two seats: 9x5, 9x6, 10x1..10x6 and challenge = 9 actions.
    support = legal_by_hand(TWO, (9, 4))
    assert len(support) == 9
    counts = draws(TWO, (9, 4), 9 * 1000)
    assert set(counts) == support  # nothing illegal, nothing legal missing
    # Under uniformity the statistic is chi-square with 8 degrees of freedom; a correct seat
    # exceeds 26.12 one time in a thousand (and the seed is fixed). A seat that never
    # challenges, or doubles one bid, scores in the hundreds.
    assert chi_square(counts, support) < CHI2_999[8]


def test_uniform_over_all_sixty_opening_bids_and_never_an_opening_challenge():
    support = legal_by_hand(TWO, None)
    assert len(support) == 60  # quantities 1..10 x faces 1..6
    counts = draws(TWO, None, 60 * 200)
    assert set(counts) == support
    assert chi_square(counts, support) < CHI2_999[59]  # 59 degrees of freedom


def test_uniform_in_poker_with_zero_as_a_face():
    # Two seats of 8 digits: max 16. Standing 15x8: 15x9, 16x0..16x9 and challenge = 12.
    rules = TableRules(mode=POKER, seats=2)
    support = legal_by_hand(rules, (15, 8))
    assert len(support) == 12 and Bid(16, 0) in support
    counts = draws(rules, (15, 8), 12 * 800)
    assert set(counts) == support
    assert chi_square(counts, support) < CHI2_999[11]


def test_uniform_mid_table():
    # Four seats (max 20), standing 17x3: 17x4..17x6, 18..20 x 1..6 (21 bids) and challenge.
    rules = TableRules(mode=DICE, seats=4)
    support = legal_by_hand(rules, (17, 3))
    assert len(support) == 22
    counts = draws(rules, (17, 3), 22 * 500)
    assert set(counts) == support
    assert chi_square(counts, support) < CHI2_999[21]


def test_only_challenge_when_no_bid_can_raise():
    # Standing 10x6 at two seats: nothing raises it.
    assert draws(TWO, (10, 6), 50) == Counter({Challenge(): 50})


def test_same_seed_same_draws():
    a = draws(TWO, (9, 4), 300, seed=5)
    assert a == draws(TWO, (9, 4), 300, seed=5)
    assert a != draws(TWO, (9, 4), 300, seed=6)
