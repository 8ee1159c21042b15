"""The level each look's interval is drawn at, so that stopping at a look keeps 95%.

A run that looks after every round and stops at a favourable look makes a plain 95%
interval cover less than 95%, if what it stops on depends on where the mean is
(its interval excludes 0, or two entrants' interval lies within the target).
Pocock's boundary (Pocock 1977; Jennison & Turnbull, *Group Sequential Methods*,
2000, table 2.1) draws every look at one level, chosen so that the K look
statistics, Z_k at n_k units, all stay inside +-c together with probability 0.95.
Z_i and Z_j (n_i <= n_j) are the same running sum at two sizes, so
corr(Z_i, Z_j) = sqrt(n_i / n_j), and the chance is the K-dimensional normal
integral over the box [-c, c]^K. Whichever look the run stops at, its interval then
holds the truth with 95% (or more), and unlike a Bonferroni bound (each look at
0.05 / K) the looks' correlation is used, not spent: at 10 equal looks c = 2.555
instead of Bonferroni's 2.807.

Stopping on the half-width alone does not need it: the half-width measures the
spread, not the mean, and bench/stopping.py measured a plain 95% per look to cover
inside 95% +- 2% under that rule (docs/league.md).

The constant is for normal statistics; a look at n units uses Student's t at the same
two-sided level with n - 1 degrees of freedom, as the standings' intervals do.

Pocock's level decides *when* to stop; the interval reported *at* the stop is the
stage-wise ordering interval (:func:`stagewise_interval`; Tsiatis, Rosner & Mehta 1984;
Jennison & Turnbull ch. 8). A run that stops early on "excludes 0" spends little of
Pocock's 5%, so its Pocock interval covers more than 95% (bench/stopping.py measured
97.5-98.1%, the stage-wise interval 93.1-95.6%, docs/league.md). The stage-wise
interval is the set of truths under which what was seen (the look it stopped at, and
its statistic there) is in neither 2.5% tail of the sequential distribution, so it holds
95% whichever look the run stops at.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import attrs
import numpy as np
from scipy import optimize, special, stats

from arena.league.config import league_rounds

ALPHA = 0.05
PRECISION = 1e-4
"""Absolute error the normal integral is computed to: the constant to about 1e-4."""
QUADRATURE = 60
"""Gauss-Laguerre nodes for a noncentral t's chance: to about 1e-4 in the far tails."""
MANY_DF = 100
"""Degrees of freedom past which a noncentral t's chance is taken from a normal."""
SPAN = 12.0
"""Normal scores beyond which a boundary is as good as infinite (a chance under 1e-32)."""
NODES = 81
"""Simpson nodes per stretch of a look's continuation region: at 10 looks of 4 units the
interval's ends lie within 1e-6 of 401 nodes' (a round adds a tenth or more of the units
seen, so each look's kernel has sd >= 0.3)."""


def look_ends(cap: int, size: int) -> tuple[int, ...]:
    """The units played at each look: rounds of ``size`` up to ``cap`` (the last one short)."""
    return tuple(min(end, cap) for end in range(size, cap + size, size))


@functools.cache
def pocock_constant(ends: tuple[int, ...], alpha: float = ALPHA) -> float:
    """The c with P(|Z_k| <= c at every look k) = 1 - alpha, the looks at ``ends`` units."""
    if len(ends) == 1:
        return float(stats.norm.ppf(1 - alpha / 2))
    n = np.asarray(ends, dtype=float)
    correlation = np.sqrt(np.minimum.outer(n, n) / np.maximum.outer(n, n))
    # seeded: the integral is quasi-Monte Carlo, and the same looks must give the same level.
    # A seeded generator, not a frozen distribution: scipy 1.11-1.13 take no abseps there
    normal = type(stats.multivariate_normal)(seed=0)

    def inside(c: float) -> float:
        box = np.full(len(n), c)
        chance = normal.cdf(box, np.zeros(len(n)), correlation, abseps=PRECISION, lower_limit=-box)
        return chance - (1 - alpha)

    # between one look's constant and Bonferroni's (which the correlation only lowers)
    low, high = stats.norm.ppf([1 - alpha / 2, 1 - alpha / (2 * len(n))])
    return float(optimize.brentq(inside, low, high + 0.1, xtol=1e-4))


def pocock_alpha(ends: tuple[int, ...], alpha: float = ALPHA) -> float:
    """Each look's two-sided level under Pocock's boundary: 2 (1 - Phi(c))."""
    return float(2 * stats.norm.sf(pocock_constant(tuple(ends), alpha)))


def league_alpha(tables: int, entrants: int, target: float | None, separate: bool) -> float:
    """Each look's level in a league: one look at 95% without a target, and also with one
    that stops on half-widths alone (measured to hold, see the module); Pocock's over the
    rounds (:func:`~arena.league.config.league_rounds`) when it stops on separation."""
    if target is None or not separate:
        return ALPHA
    size, _ = league_rounds(tables, entrants, separate)
    return pocock_alpha(look_ends(tables, size))


def settled(low: float, high: float, width: float) -> bool:
    """An adjacent pair's difference interval [low, high] answers ``--separate``: it excludes
    0 (one is better), or lies within [-width, width] (they are level to within the target)."""
    return low > 0 or high < 0 or (-width <= low and high <= width)


@attrs.frozen
class Look:
    """What a run saw at one look: the units so far, their mean and sd (ddof 1)."""

    units: int
    mean: float
    sd: float
    inner: float = 0.0
    """The |mean| at or below which this look would have stopped inside the boundary (its
    interval within [-W, W], ``--separate``); 0 for a rule with no inner region."""


def z_of_t(t: float | np.ndarray, units: int) -> float | np.ndarray:
    """A t statistic over ``units`` units as the normal score of the same tail."""
    return stats.norm.isf(stats.t.sf(t, units - 1))


def stagewise_interval(
    looks: Sequence[Look],
    look_alpha: float,
    bounds: tuple[float, float],
    alpha: float = ALPHA,
) -> tuple[float, float]:
    """The ``1 - alpha`` stage-wise ordering interval of the mean at the last of ``looks``,
    the look a run stopped at after going on at the others, where its two-sided
    ``look_alpha`` t-interval held 0 (and, with an inner region, reached past it), within
    ``bounds``, the range the mean can lie in.

    A stop (j, z) ranks above the seen (k, z_k) when j < k and it left above (over the
    boundary, or inside an inner region with z > 0), or j = k and z >= z_k. The interval
    is every theta with P_theta(a stop ranking above) within [alpha / 2, 1 - alpha / 2],
    that chance computed by integrating the look statistics on a grid, look by look
    (Armitage, McPherson & Rowe 1969). The variance is unknown, and each look's test was a
    t test: theta's drift is in units of the last look's sd; an earlier look's boundary is
    put where its normal statistic leaves with the chance its t statistic (noncentral
    under theta) left with; the last look's tail is its t statistic's (so one look gives
    the plain t-interval). bench/stopping.py measured this to cover 93.8-95.3% at stops
    after 4 to 40 pairs, where the t boundaries taken as normal ones covered 91-93%.

    Every answer lies within ``bounds``: a last look of one unit rules nothing out, one
    with no spread is the single point it saw, and an end the chance puts past a bound
    is that bound.
    """
    bottom, top = bounds
    last = looks[-1]
    if last.units < 2:
        return bottom, top
    se = last.sd / math.sqrt(last.units)
    if se == 0:
        point = min(max(last.mean, bottom), top)
        return point, point

    def above(theta: float) -> float:
        # the last look's statistic about theta, on the scale of the statistic about 0
        # that the run saw (its drift under theta added back)
        seen = float(z_of_t((last.mean - theta) / se, last.units)) + theta / se
        return _chance_above(looks, look_alpha, theta / last.sd, seen)

    return _solve(above, alpha / 2, last.mean, se, bounds), _solve(
        above, 1 - alpha / 2, last.mean, se, bounds
    )


def _solve(
    increasing, level: float, start: float, step: float, bounds: tuple[float, float]
) -> float:
    """The theta in ``bounds`` where ``increasing(theta)`` crosses ``level``: bracketed from
    ``start`` +- 10 ``step``s, the step doubling each time, and a bound where the crossing
    lies past it."""
    bottom, top = bounds
    low = high = min(max(start, bottom), top)
    reach = 10 * step
    while increasing(low) > level:
        if low == bottom:
            return bottom
        low, reach = max(low - reach, bottom), 2 * reach
    reach = 10 * step
    while increasing(high) < level:
        if high == top:
            return top
        high, reach = min(high + reach, top), 2 * reach
    if low == high:
        return low
    return float(optimize.brentq(lambda theta: increasing(theta) - level, low, high))


def _on_normal_scale(t: float, look: Look, centre: float) -> float:
    """The point of N(centre, 1) below which it lies with the chance that the look's t
    statistic, noncentral by ``centre`` under the theta tried, lies below ``t``.

    The normal score is taken from the smaller of the two tails: a chance near 1, taken
    as ``1 - (small tail)``, loses the tail's digits and can round past 1, where ndtri is
    NaN (scipy 1.17's quadrature nodes gave 1.0000000000000002)."""
    below, above = _noncentral_t_tails(t, look.units - 1, centre)
    score = special.ndtri(below) if below <= above else -special.ndtri(above)
    return centre + float(np.clip(score, -SPAN, SPAN))


def _noncentral_t_tails(t: float, df: int, centre: float) -> tuple[float, float]:
    """P(T <= t) and P(T > t) for T = (Z + centre) / sqrt(V / df), V chi-square on ``df``,
    each computed on its own: the mean of Phi(+-(t sqrt(V / df) - centre)) over V, by
    Gauss-Laguerre quadrature (scipy's nct.cdf returns NaN at some points this needs);
    past :data:`MANY_DF`, the normal approximation of Abramowitz & Stegun 26.7.10."""
    if df > MANY_DF:
        score = (t * (1 - 1 / (4 * df)) - centre) / math.sqrt(1 + t * t / (2 * df))
        return float(special.ndtr(score)), float(special.ndtr(-score))
    roots, weights = _chi_square_nodes(df)
    shifted = t * roots - centre
    return float(weights @ special.ndtr(shifted)), float(weights @ special.ndtr(-shifted))


@functools.cache
def _chi_square_nodes(df: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes sqrt(V / df) and weights for an expectation over V ~ chi-square(df)."""
    x, w = special.roots_genlaguerre(QUADRATURE, df / 2 - 1)
    return np.sqrt(2 * x / df), w / w.sum()  # the weights sum to Gamma(df / 2)


def _region(look: Look, look_alpha: float, centre: float) -> tuple[float, float, float, float]:
    """Where a run went on at a look, on the normal scale of its statistic: lower end, inner
    lower and upper ends (equal with no inner region), upper end. A look of one unit has
    no spread to test, and a look with no spread no interval to stop on (a zero-width
    interval is never a reason to stop): the run went on wherever its statistic was."""
    if look.units < 2:
        return centre - SPAN, centre, centre, centre + SPAN
    t = float(stats.t.isf(look_alpha / 2, look.units - 1))
    inner = (
        min(look.inner * math.sqrt(look.units) / look.sd, t) if look.inner > 0 < look.sd else 0.0
    )
    return (
        _on_normal_scale(-t, look, centre),
        _on_normal_scale(-inner, look, centre),
        _on_normal_scale(inner, look, centre),
        _on_normal_scale(t, look, centre),
    )


def _simpson(stretches: list[tuple[float, float]]) -> tuple[np.ndarray, np.ndarray]:
    nodes, weights = [], []
    for low, high in stretches:
        w = np.full(NODES, 2.0)
        w[1::2] = 4.0
        w[0] = w[-1] = 1.0
        nodes.append(np.linspace(low, high, NODES))
        weights.append(w * (high - low) / (NODES - 1) / 3)
    return np.concatenate(nodes), np.concatenate(weights)


def _chance_above(looks: Sequence[Look], look_alpha: float, drift: float, seen: float) -> float:
    """P(a stop ranking above the last look's ``seen`` Z) when each unit adds ``drift`` to
    the mean in sd units: the look statistics Z_j = S_j / sqrt(n_j) of a running sum S.
    Each earlier look's boundary is put where Z_j leaves with the chance its t test
    (noncentral t under the drift) left with."""
    total = 0.0
    nodes = weights = density = None
    previous = 0
    for index, look in enumerate(looks):
        n = look.units
        centre = drift * math.sqrt(n)
        if nodes is None:  # the first look: Z_1 ~ N(drift sqrt(n_1), 1)
            z = _Kernel(np.array([centre]), 1.0, np.array([1.0]))
        else:  # Z_j sqrt(n_j) = Z_{j-1} sqrt(n_{j-1}) + N(drift dn, dn)
            centres = (nodes * math.sqrt(previous) + drift * (n - previous)) / math.sqrt(n)
            z = _Kernel(centres, math.sqrt((n - previous) / n), weights * density)
        if index == len(looks) - 1:
            return total + z.between(seen, math.inf)
        low, inner_low, inner_high, high = _region(look, look_alpha, centre)
        total += z.between(high, math.inf)
        if inner_high > inner_low:
            total += z.between(_on_normal_scale(0.0, look, centre), inner_high)
            nodes, weights = _simpson([(low, inner_low), (inner_high, high)])
        else:
            nodes, weights = _simpson([(low, high)])
        density = z.density(nodes)
        previous = n
    raise ValueError("no looks")


@attrs.frozen
class _Kernel:
    """A look's statistic as a mixture: normals at ``centres`` with sd ``spread``, weighted
    by ``mass`` (the chance of each node of the look before, continuing)."""

    centres: np.ndarray
    spread: float
    mass: np.ndarray

    def between(self, low: float, high: float) -> float:
        # ndtr, not stats.norm: this runs thousands of times per interval
        below = special.ndtr((high - self.centres) / self.spread)
        return float(self.mass @ (below - special.ndtr((low - self.centres) / self.spread)))

    def density(self, z: np.ndarray) -> np.ndarray:
        kernel = np.exp(-0.5 * ((z[:, None] - self.centres) / self.spread) ** 2)
        return kernel @ self.mass / (self.spread * math.sqrt(2 * math.pi))
