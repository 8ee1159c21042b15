"""The level each look is drawn at (arena.league.looks): Pocock's boundary, checked
against the published constants, and which stopping rule gets which level; the stage-wise
interval at the stop, checked by hand (one look) and by a brute-force simulation of the
sequential run (two looks)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, special, stats

from arena.league.looks import (
    Look,
    _noncentral_t_tails,
    _on_normal_scale,
    league_alpha,
    look_ends,
    pocock_alpha,
    pocock_constant,
    settled,
    stagewise_interval,
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


def test_stagewise_with_one_look_is_the_plain_t_interval():
    # differences 0.1, 0.3, -0.1, 0.5: mean 0.2; squared deviations 0.01 + 0.01 + 0.09 +
    # 0.09 = 0.2, sd sqrt(0.2 / 3) = 0.25820, se 0.12910; t(3, 0.975) = 3.18245, so the
    # half-width is 0.41085 and the interval [-0.21085, 0.61085] (the per-look level is
    # unused: nothing was looked at before)
    assert stagewise_interval([Look(4, 0.2, 0.25820)], 0.01, (-1, 1)) == pytest.approx(
        (-0.21085, 0.61085), abs=1e-4
    )


def _simulated_above(theta, ends, boundary, inner, seen, rng, runs=400_000):
    """Brute force: the chance, under mean ``theta`` (sd 1), that a two-look run stops
    ranking above a stop at look 2 with z = ``seen``: it leaves look 1 above the boundary,
    or inside the inner region above 0, or goes on and its look-2 z is at least ``seen``."""
    first, second = ends
    sum_1 = rng.normal(theta * first, np.sqrt(first), runs)
    sum_2 = sum_1 + rng.normal(theta * (second - first), np.sqrt(second - first), runs)
    z_1, z_2 = sum_1 / np.sqrt(first), sum_2 / np.sqrt(second)
    on = (np.abs(z_1) <= boundary) & (np.abs(z_1) > inner)
    above = (z_1 > boundary) | ((z_1 > 0) & (z_1 <= inner)) | (on & (z_2 >= seen))
    return above.mean()


@pytest.mark.parametrize("inner", [0.0, 0.5])
def test_stagewise_two_looks_against_a_simulated_run(inner):
    # looks at 400 and 800 units of sd 1 at Pocock's level for them (c about 2.178; the
    # t boundary at 399 df is 2.186); the run went on at look 1 (and, with an inner region,
    # its |z| was over 0.5: its |mean| over 0.5 / sqrt(400)) and stopped at look 2 with
    # z = 2.5 (mean 2.5 / sqrt(800)). At the interval's ends the simulated chance of a stop
    # ranking above must be 2.5% and 97.5%. Units this many make t and z the same to
    # about 1e-4, so the simulation draws normals.
    ends, seen = (400, 800), 2.5
    alpha = pocock_alpha(ends)
    boundary = stats.t.isf(alpha / 2, 399)
    looks = [Look(400, 0.0, 1.0, inner / np.sqrt(400)), Look(800, seen / np.sqrt(800), 1.0)]
    low, high = stagewise_interval(looks, alpha, (-1, 1))
    rng = np.random.default_rng(20261202)
    # standard error of a simulated chance near 0.025: sqrt(0.025 * 0.975 / 4e5) = 0.00025
    assert _simulated_above(low, ends, boundary, inner, seen, rng) == pytest.approx(
        0.025, abs=0.0015
    )
    assert _simulated_above(high, ends, boundary, inner, seen, rng) == pytest.approx(
        0.975, abs=0.0015
    )
    # the naive lower end (2.5 - 1.96) / sqrt(800) = 0.0191 leaves out the runs that left
    # above at look 1: under it a stop ranking above is likelier than 2.5%, so the test
    # can fail, and the stage-wise end lies below it
    naive = (seen - 1.96) / np.sqrt(800)
    assert _simulated_above(naive, ends, boundary, inner, seen, rng) > 0.035
    assert low < naive


def _run_to_boundary(values, ends, alpha):
    """The looks of a run that stops once Pocock's interval excludes 0 (or at the cap), and
    whether it stopped on the boundary."""
    seen = [Look(n, values[:n].mean(), values[:n].std(ddof=1)) for n in ends]
    for k, look in enumerate(seen):
        t = look.mean * np.sqrt(look.units) / look.sd
        if abs(t) > stats.t.isf(alpha / 2, look.units - 1):
            return seen[: k + 1], True
    return seen, False


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), shift=st.floats(-0.3, 0.3))
def test_stagewise_agrees_with_a_stop_on_excludes_0(seed, shift):
    # a run of up to 5 looks of 6 units stops once Pocock's interval excludes 0; the
    # stage-wise interval at that stop excludes 0 on the same side (under 0, the chance of
    # a stop ranking above is at most the boundary's 2.5% above); negating every unit
    # negates the interval
    ends = look_ends(30, 6)
    alpha = pocock_alpha(ends)
    units = np.random.default_rng(seed).normal(shift, 0.2, 30)
    seen, on_boundary = _run_to_boundary(units, ends, alpha)
    low, high = stagewise_interval(seen, alpha, (-1, 1))
    assert low < seen[-1].mean < high
    if on_boundary:
        assert (low > 0) if seen[-1].mean > 0 else (high < 0)
    mirrored, _ = _run_to_boundary(-units, ends, alpha)
    assert len(mirrored) == len(seen)
    assert stagewise_interval(mirrored, alpha, (-1, 1)) == pytest.approx((-high, -low), abs=1e-6)


@pytest.mark.parametrize(
    ("df", "tolerance"),
    # the quadrature's 60 nodes hold 1e-4 from 3 degrees of freedom on (at 1 and 2 the
    # sqrt(V) kink at 0 costs digits: 0.0074 and 0.0006 at worst); past MANY_DF = 100 the
    # Abramowitz & Stegun normal approximation holds 3e-4
    [(1, 0.01), (2, 1e-3), (3, 1e-4), (5, 1e-4), (9, 1e-4), (40, 1e-4), (100, 1e-4)]
    + [(101, 3e-4), (400, 3e-4)],
)
def test_noncentral_t_tails_match_scipy_where_scipy_is_finite(df, tolerance):
    # each tail on its own against scipy's nct, over t and centre both within +-6
    grid = np.linspace(-6, 6, 25)
    for t in grid:
        for centre in grid:
            below, above = _noncentral_t_tails(t, df, centre)
            cdf, sf = stats.nct.cdf(t, df, centre), stats.nct.sf(t, df, centre)
            if np.isfinite(cdf) and np.isfinite(sf):
                assert below == pytest.approx(cdf, abs=tolerance), (t, centre)
                assert above == pytest.approx(sf, abs=tolerance), (t, centre)


def test_a_chance_that_rounds_past_1_still_gives_a_finite_normal_score():
    # at 11 degrees of freedom, t = -2.4 and centre -12 the lower tail's 60 weighted
    # normal chances add up to 1.0000000000000002 (ndtri of that is NaN: the fault that
    # crashed arena compare at its cap). The upper tail, P(Z - 12 > -2.4 sqrt(V / 11)), is
    # 2.2443e-17 both by scipy's nct.sf and by integrating Phi(-12 + 2.4 sqrt(v / 11))
    # against the chi-square(11) density with quad; the score is taken from it:
    # -Phi^-1(2.2443e-17) = 8.3994, so the point on N(-12, 1) is -12 + 8.3994 = -3.6006
    below, above = _noncentral_t_tails(-2.4, 11, -12.0)
    assert below > 1 - 1e-12
    assert above == pytest.approx(2.2443e-17, rel=1e-4)
    point = _on_normal_scale(-2.4, Look(12, 0.0, 1.0), -12.0)
    assert point == pytest.approx(-3.6006, abs=1e-3)


def test_the_scipy_numerics_the_intervals_rely_on():
    # ndtri is finite inside (0, 1), infinite at its ends and NaN past them: the tails
    # are kept within [0, 1] and the score clipped, so no NaN reaches brentq
    assert special.ndtri(0.5) == 0
    assert special.ndtri(0.975) == pytest.approx(1.959964, abs=1e-6)
    assert special.ndtri(0.0) == -np.inf and special.ndtri(1.0) == np.inf
    assert np.isnan(special.ndtri(1.0000000000000002))
    # ndtr and ndtri invert each other to 1e-9 on the lower side, down to -12 (SPAN), but
    # not on the upper: Phi(8) = 1 - 6e-16 keeps one digit of its tail, so the round trip
    # misses by 8e-3. Hence each score is taken from the smaller tail
    xs = np.linspace(-12, 0, 25)
    assert special.ndtri(special.ndtr(xs)) == pytest.approx(xs, abs=1e-9)
    assert abs(special.ndtri(special.ndtr(8.0)) - 8.0) > 1e-3
    assert -special.ndtri(special.ndtr(-8.0)) == pytest.approx(8.0, abs=1e-9)
    # brentq refuses a NaN rather than guessing: why every chance must stay finite
    with pytest.raises(ValueError, match="NaN"):
        optimize.brentq(lambda x: np.nan if x < 0 else x, -1, 1)
    # Gauss-Laguerre weights for x^(df/2 - 1) e^-x are positive, and sum to Gamma(df / 2)
    x, w = special.roots_genlaguerre(60, 11 / 2 - 1)
    assert (w > 0).all() and w.sum() == pytest.approx(special.gamma(11 / 2), rel=1e-10)
    # nct agrees with the central t at centre 0: t(3) has P(T <= 3.18245) = 0.975
    assert stats.nct.cdf(3.18245, 3, 0.0) == pytest.approx(0.975, abs=1e-5)


def test_one_unit_at_the_last_look_rules_nothing_out():
    # one unit has no spread: every mean in the range is as likely as it saw
    assert stagewise_interval([Look(1, 0.3, 0.0)], 0.05, (-1, 1)) == (-1, 1)


def test_no_spread_at_the_last_look_is_the_point_it_saw():
    # four equal differences of 0.25: sd 0, the interval is the point [0.25, 0.25]
    assert stagewise_interval([Look(4, 0.25, 0.0)], 0.05, (-1, 1)) == (0.25, 0.25)


def test_an_interval_past_the_range_stops_at_its_edge():
    # mean 0.9 over 4 units of sd 0.5: the plain t half-width is 3.18245 * 0.25 = 0.796,
    # so the upper end 1.696 lies past the range's 1: it is 1, and the lower end 0.104 is
    # the t-interval's own
    low, high = stagewise_interval([Look(4, 0.9, 0.5)], 0.05, (-1, 1))
    assert high == 1
    assert low == pytest.approx(0.9 - 0.79561, abs=1e-4)


def test_an_earlier_look_with_one_unit_or_no_spread_was_a_look_that_went_on():
    # a run that went on at a look of one unit, and at one with no spread (a zero-width
    # interval, never a reason to stop), gives at its stop an interval within the range
    # that holds its mean
    looks = [Look(1, 0.5, 0.0), Look(4, 0.25, 0.0, inner=0.1), Look(8, 0.2, 0.3)]
    low, high = stagewise_interval(looks, 0.02, (-1, 1))
    assert -1 <= low < 0.2 < high <= 1


@st.composite
def _runs(draw):
    """Any sequence of looks a run can produce: units rising from 1, means and sds
    anywhere in the difference range (ties, zero spread, one unit, a huge last look),
    inner regions from none to past the boundary."""
    count = draw(st.integers(1, 8))
    units = sorted(draw(st.sets(st.integers(1, 2000), min_size=count, max_size=count)))
    means = st.floats(-1, 1, allow_nan=False)
    sds = st.one_of(st.just(0.0), st.floats(1e-12, 2, allow_nan=False))
    inners = st.one_of(st.just(0.0), st.floats(0, 1, allow_nan=False))
    looks = [Look(n, draw(means), draw(sds), draw(inners)) for n in units]
    return looks, draw(st.sampled_from([0.05, 0.0294, 0.0158, 0.001]))


@settings(max_examples=150, deadline=None)
@given(run=_runs())
def test_every_run_gets_a_finite_interval_within_the_range(run):
    looks, look_alpha = run
    low, high = stagewise_interval(looks, look_alpha, (-1, 1))
    assert np.isfinite(low) and np.isfinite(high)
    assert -1 <= low <= high <= 1
