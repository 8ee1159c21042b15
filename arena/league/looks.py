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
"""

from __future__ import annotations

import functools

import numpy as np
from scipy import optimize, stats

from arena.league.config import rounds

ALPHA = 0.05
PRECISION = 1e-4
"""Absolute error the normal integral is computed to: the constant to about 1e-4."""


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
    # seeded: the integral is quasi-Monte Carlo, and the same looks must give the same level
    looks = stats.multivariate_normal(np.zeros(len(n)), correlation, seed=0, abseps=PRECISION)

    def inside(c: float) -> float:
        return looks.cdf(np.full(len(n), c), lower_limit=np.full(len(n), -c)) - (1 - alpha)

    # between one look's constant and Bonferroni's (which the correlation only lowers)
    low, high = stats.norm.ppf([1 - alpha / 2, 1 - alpha / (2 * len(n))])
    return float(optimize.brentq(inside, low, high + 0.1, xtol=1e-4))


def pocock_alpha(ends: tuple[int, ...], alpha: float = ALPHA) -> float:
    """Each look's two-sided level under Pocock's boundary: 2 (1 - Phi(c))."""
    return float(2 * stats.norm.sf(pocock_constant(tuple(ends), alpha)))


def league_alpha(tables: int, entrants: int, target: float | None, separate: bool) -> float:
    """Each look's level in a league: one look at 95% without a target, and also with one
    that stops on half-widths alone (measured to hold, see the module); Pocock's over the
    rounds (:func:`~arena.league.config.rounds`) when it stops on separation."""
    if target is None or not separate:
        return ALPHA
    size, _ = rounds(tables, entrants)
    return pocock_alpha(look_ends(tables, size))


def settled(low: float, high: float, width: float) -> bool:
    """An adjacent pair's difference interval [low, high] answers ``--separate``: it excludes
    0 (one is better), or lies within [-width, width] (they are level to within the target)."""
    return low > 0 or high < 0 or (-width <= low and high <= width)
