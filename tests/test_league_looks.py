"""The level each look is drawn at (arena.league.looks): Pocock's boundary, checked
against the published constants, and which stopping rule gets which level."""

from __future__ import annotations

import pytest
from scipy import stats

from arena.league.looks import (
    league_alpha,
    look_ends,
    pocock_alpha,
    pocock_constant,
    settled,
)


@pytest.mark.parametrize(
    ("looks", "constant"),
    # Pocock (1977), as tabulated by Jennison & Turnbull, Group Sequential Methods (2000),
    # table 2.1: two-sided 0.05, K equally spaced looks
    [(1, 1.960), (2, 2.178), (3, 2.289), (4, 2.361), (5, 2.413), (10, 2.555)],
)
def test_pocock_constant_matches_the_published_table(looks, constant):
    ends = tuple(range(10, 10 * looks + 1, 10))  # equal rounds of 10 units
    assert pocock_constant(ends) == pytest.approx(constant, abs=2e-3)


def test_the_constant_depends_on_the_spacing_only():
    # corr(Z_i, Z_j) = sqrt(n_i / n_j): rounds of 4 or of 60 are the same looks
    assert pocock_constant((4, 8, 12)) == pytest.approx(pocock_constant((60, 120, 180)), abs=1e-3)


def test_pocock_alpha_is_the_two_sided_tail_of_the_constant():
    # two looks: c = 2.178, so each look at 2 * (1 - Phi(2.178)) = 2 * 0.01470 = 0.0294,
    # wider than one look's 0.05 and narrower than Bonferroni's 0.025
    alpha = pocock_alpha((5, 10))
    assert alpha == pytest.approx(2 * stats.norm.sf(2.178), abs=3e-4)
    assert 0.025 < alpha < 0.05


def test_a_short_last_round_is_a_look_of_its_own():
    # cap 21 in rounds of 4: 4, 8, 12, 16, 20 and the 1-unit remainder at 21
    assert look_ends(21, 4) == (4, 8, 12, 16, 20, 21)
    assert look_ends(40, 4) == tuple(range(4, 41, 4))
    # the last look barely differs from the one before (corr sqrt(20 / 21) = 0.976), so
    # the sixth look costs less than a sixth equal one would
    assert pocock_constant(look_ends(21, 4)) < pocock_constant((4, 8, 12, 16, 20, 24))


def test_which_rule_gets_which_level():
    # no target, or a target on half-widths alone: a plain 95% at every look
    assert league_alpha(600, 4, None, False) == 0.05
    assert league_alpha(600, 4, 0.03, False) == 0.05
    # --separate stops on where the means are: Pocock over rounds of 60, 10 looks
    assert league_alpha(600, 4, 0.03, True) == pytest.approx(pocock_alpha(look_ends(600, 60)))
    assert league_alpha(600, 4, 0.03, True) == pytest.approx(2 * stats.norm.sf(2.555), abs=3e-4)


@pytest.mark.parametrize(
    ("low", "high", "answer"),
    [
        (0.01, 0.2, True),  # excludes 0 above: the higher one is better
        (-0.2, -0.01, True),  # excludes 0 below
        (-0.02, 0.03, True),  # holds 0, inside [-0.03, 0.03]: level to within the target
        (-0.02, 0.04, False),  # holds 0 and reaches past the target
    ],
)
def test_settled(low, high, answer):
    assert settled(low, high, 0.03) is answer
