"""The exact binomial tail every seat and the audit run on (ones not wild: p = 1/len(symbols))."""

from __future__ import annotations

from fractions import Fraction
from math import comb, sqrt

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.probability import (
    at_least,
    bid_probability,
    count,
    face_counts,
    tail_at,
    tail_table,
)

SIXTH, TENTH = Fraction(1, 6), Fraction(1, 10)


def test_need_at_or_below_zero_is_exactly_one():
    # Already satisfied by the own hand: certain, not a tail sum from a negative index.
    for need in (0, -1, -7):
        assert at_least(15, need, SIXTH) == 1.0
    assert at_least(0, 0, SIXTH) == 1.0


def test_need_above_unseen_is_exactly_zero():
    assert at_least(15, 16, SIXTH) == 0.0
    assert at_least(24, 25, TENTH) == 0.0
    assert at_least(0, 1, SIXTH) == 0.0


@pytest.mark.parametrize(
    ("unseen", "need", "p", "exact"),
    [
        # P(X >= 1) = 1 - (5/6)^15 = 0.93509...
        (15, 1, SIXTH, 1 - Fraction(5, 6) ** 15),
        # All 15 unseen dice show the face: (1/6)^15.
        (15, 15, SIXTH, SIXTH**15),
        # Two dice, both the face: 1/36.
        (2, 2, SIXTH, Fraction(1, 36)),
        # Five fair coins, at least three heads: (10 + 5 + 1) / 32 = 1/2.
        (5, 3, Fraction(1, 2), Fraction(1, 2)),
        # 24 unseen digits, at least one given digit: 1 - 0.9^24 = 0.92023...
        (24, 1, TENTH, 1 - Fraction(9, 10) ** 24),
        # At least two of 24: 1 - 0.9^24 - 24 * 0.1 * 0.9^23 = 0.70755...
        (24, 2, TENTH, 1 - Fraction(9, 10) ** 24 - 24 * TENTH * Fraction(9, 10) ** 23),
    ],
)
def test_closed_form_matches_hand_worked_values_to_the_bit(unseen, need, p, exact):
    # Exact in rationals, rounded to a float once: equal to float(exact), bit for bit.
    assert at_least(unseen, need, p) == float(exact)


def test_hand_worked_decimals():
    # 1 - (5/6)^15 - 15 (1/6)(5/6)^14 - 105 (1/6)^2 (5/6)^13 = 1 - .064905 - .194716 - .272603
    assert at_least(15, 3, SIXTH) == pytest.approx(0.467775, abs=1e-6)
    # ... minus 455 (1/6)^3 (5/6)^12 = .236256
    assert at_least(15, 4, SIXTH) == pytest.approx(0.231519, abs=1e-6)
    # 1 - .9^24 - 24 (.1)(.9^23) - 276 (.01)(.9^22) = 1 - .079766 - .212711 - .271797
    assert at_least(24, 3, TENTH) == pytest.approx(0.435726, abs=1e-6)


def test_tail_table_is_at_least_for_every_k_and_decreasing():
    table = tail_table(15, SIXTH)
    assert len(table) == 17  # k = 0 .. unseen + 1
    assert table == tuple(at_least(15, k, SIXTH) for k in range(17))
    assert table[0] == 1.0 and table[-1] == 0.0
    assert all(a > b for a, b in zip(table, table[1:], strict=False))


def test_tail_at_reads_one_at_or_below_zero_and_zero_past_the_unseen_count():
    # Two unseen dice, p = 1/6: the table is k = 0 .. 3,
    # P(>= 0) = 1, P(>= 1) = 1 - (5/6)^2 = 11/36, P(>= 2) = (1/6)^2 = 1/36, P(>= 3) = 0.
    table = tail_table(2, SIXTH)
    assert table == (1.0, 11 / 36, 1 / 36, 0.0)
    assert [tail_at(table, need) for need in (-5, -1, 0)] == [1.0, 1.0, 1.0]
    assert tail_at(table, 1) == 11 / 36
    assert tail_at(table, 2) == 1 / 36  # need == unseen: both dice must show it
    # Past the unseen count no bid can be true: 3, 4 and far beyond all read 0.
    assert [tail_at(table, need) for need in (3, 4, 40)] == [0.0, 0.0, 0.0]


def test_bid_probability_conditions_on_the_own_hand_and_ones_are_not_wild():
    # Two fives in hand, bid 4x5: need 2 more among 15 unseen.
    assert bid_probability((5, 5, 1, 2, 3), 4, 5, 15, SIXTH) == at_least(15, 2, SIXTH)
    # Five ones do not help a bid on fives: need 1 among 15, 1 - (5/6)^15, not certainty.
    assert bid_probability((1, 1, 1, 1, 1), 1, 5, 15, SIXTH) == float(1 - Fraction(5, 6) ** 15)
    # Holding the whole quantity already: exactly 1.
    assert bid_probability((5, 5, 5, 2, 2), 3, 5, 15, SIXTH) == 1.0


ROLLS = 200_000


@pytest.mark.parametrize(
    ("faces", "hand_size"),
    [(6, 5), (10, 8)],
    ids=["dice p=1/6", "poker p=1/10"],
)
def test_closed_form_against_monte_carlo_rolls(faces, hand_size):
    """Every (unseen, k) a 2..8-seat table can ask, against 200,000 seeded rolls.

    Tolerance: the Monte Carlo frequency of an event with probability P has
    standard error sqrt(P (1 - P) / N). We allow 5 standard errors plus one
    roll's worth (1 / N, the granularity of a frequency, which matters when P is
    near 0 or 1). A correct formula fails one comparison with probability
    about 6e-7; over the ~400 comparisons here that is under 3e-4 for a random
    seed, and the seed is fixed, so the test is deterministic. A wrong formula
    is off by far more: an off-by-one in k moves P by up to 0.4.
    """
    rng = np.random.default_rng(20240601)
    p = Fraction(1, faces)
    for others in range(1, 8):
        unseen = others * hand_size
        rolls = rng.integers(0, faces, size=(ROLLS, unseen), dtype=np.int8)
        shown = np.count_nonzero(rolls == 0, axis=1)
        at_least_k = np.bincount(shown, minlength=unseen + 2)[::-1].cumsum()[::-1]
        for k in range(unseen + 2):
            exact = at_least(unseen, k, p)
            observed = at_least_k[k] / ROLLS
            tolerance = 5 * sqrt(exact * (1 - exact) / ROLLS) + 1 / ROLLS
            assert abs(observed - exact) <= tolerance, (unseen, k, exact, observed)


def test_closed_form_agrees_with_an_independent_sum():
    # The complement, summed from the bottom, must give the same rational.
    for unseen in (5, 15, 35):
        for k in range(unseen + 1):
            below = sum(comb(unseen, i) * SIXTH**i * (1 - SIXTH) ** (unseen - i) for i in range(k))
            assert at_least(unseen, k, SIXTH) == float(1 - below)


def test_face_counts_by_hand():
    # Wild-ones dice (1 wild): hand 1 1 3 5 5 counts 2 ones, and for 3 its one 3 plus
    # the two wild ones = 3, for 5 its two plus two = 4, for 2 none plus two = 2.
    assert face_counts((1, 1, 3, 5, 5), range(1, 7), wild=1) == {1: 2, 2: 2, 3: 3, 4: 2, 5: 4, 6: 2}
    # No wild: only the face itself.
    assert face_counts((1, 1, 3, 5, 5), range(1, 7)) == {1: 2, 2: 0, 3: 1, 4: 0, 5: 2, 6: 0}


@given(
    st.lists(st.integers(1, 6), max_size=12),
    st.one_of(st.none(), st.integers(1, 6)),
)
def test_face_counts_is_count_for_every_face(hand, wild):
    hand = tuple(hand)
    assert face_counts(hand, range(1, 7), wild) == {f: count(hand, f, wild) for f in range(1, 7)}
