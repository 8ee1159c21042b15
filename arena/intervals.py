"""Confidence intervals over independent clusters (tables, episodes), drawn without resampling.

Three methods, each a Student t-interval on G independent clusters (G - 1 degrees of
freedom), so a figure pooled over a league says how sure it is by the same rule as the
standings (``docs/league.md``):

- :func:`ratio_t`, for a figure that is a sum over clusters divided by a sum: the
  ratio estimator R = sum(y_g) / sum(x_g), with residuals e_g = y_g - R x_g and
  standard error sqrt(G / (G - 1) * sum(e_g^2)) / sum(x_g) (the linearised, or
  "cluster-robust", variance of a ratio). A cluster with x_g = 0 holds no data.
- :func:`share_kg`, for a share of counts (bluffs over bids): Korn and Graubard's exact
  binomial interval at the ratio estimator's effective sample size, which keeps a width
  where every cluster sits at 0 or at 1 and covers rare events;
- :func:`jackknife_t`, for any other figure of pooled sums (a calibration gap, a
  slope): the delete-one jackknife over clusters, standard error
  sqrt((G - 1) / G * sum((theta_(-g) - mean)^2)).

Each returns ``None`` for the interval when it cannot be drawn (under two clusters, or a
figure undefined once a cluster is left out): never a NaN or an infinity. Whether the
interval covers as claimed is measured, not assumed: ``bench/coverage.py`` for the
standings, ``bench/calibrate_decisions.py`` for the decision read-out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

ALPHA = 0.05
"""Two-sided: 95% intervals unless a caller says otherwise."""


def t_quantile(clusters, alpha: float = ALPHA):
    """Student's t at ``1 - alpha / 2`` with ``clusters - 1`` degrees of freedom (a number,
    or an array of them)."""
    from scipy import stats  # only a command that draws an interval pays scipy's import

    return stats.t.ppf(1 - alpha / 2, np.asarray(clusters) - 1)


def ratio_columns(
    numerators: np.ndarray, denominators: np.ndarray, alpha: float = ALPHA
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Column by column (rows are clusters): the ratio sum(y) / sum(x), its t-interval's
    half-width, and how many clusters held data (``x > 0``). The half-width is infinite
    under two clusters (no spread to measure), and the ratio NaN with no data."""
    y = np.asarray(numerators, dtype=float)
    x = np.asarray(denominators, dtype=float)
    present = x > 0
    clusters = present.sum(0)
    total = x.sum(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = y.sum(0) / total
        residual = np.where(present, y - ratio * x, 0.0)
        spread = np.sqrt(clusters / (clusters - 1) * (residual**2).sum(0))
        half = t_quantile(clusters, alpha) * spread / total
    return ratio, np.where(clusters >= 2, half, np.inf), clusters


def ratio_t(
    numerators: Sequence[float], denominators: Sequence[float], alpha: float = ALPHA
) -> tuple[float | None, tuple[float, float] | None, int]:
    """sum(numerators) / sum(denominators), its ``1 - alpha`` t-interval, and how many
    clusters held data (``denominators > 0``). The estimate is ``None`` with no data, the
    interval ``None`` under two clusters."""
    ratio, half, clusters = ratio_columns(
        np.asarray(numerators, dtype=float)[:, None],
        np.asarray(denominators, dtype=float)[:, None],
        alpha,
    )
    count = int(clusters[0])
    if not np.isfinite(ratio[0]):
        return None, None, count
    value = float(ratio[0])
    if count < 2:
        return value, None, count
    width = float(half[0])
    return value, (value - width, value + width), count


def share_kg(
    successes: Sequence[float], trials: Sequence[float], alpha: float = ALPHA
) -> tuple[float | None, tuple[float, float] | None, int]:
    """A share of counts pooled over clusters, sum(successes) / sum(trials), with Korn and
    Graubard's interval: the exact (Clopper-Pearson) binomial interval at the design's
    effective sample size. n_eff = p(1 - p) / se^2, ``se`` the ratio estimator's
    (:func:`ratio_columns`), at most the trials, and scaled by (z / t)^2 for the G - 1
    degrees of freedom the spread was measured on. Where every cluster sits at the same
    share the spread says nothing, and n_eff is the trials: a share at 0 or 1 still gets an
    interval of width, and a rare event's (one in thousands) lower bound stays below it,
    both of which a ratio-t or a Wilson interval get wrong. ``None`` as :func:`ratio_t`."""
    from scipy import stats

    value, _, clusters = ratio_t(successes, trials, alpha)
    if value is None or clusters < 2:
        return value, None, clusters
    _, half, _ = ratio_columns(
        np.asarray(successes, dtype=float)[:, None],
        np.asarray(trials, dtype=float)[:, None],
        alpha,
    )
    t = float(t_quantile(clusters, alpha))
    n = float(np.sum(trials))
    se = float(half[0]) / t
    spread = value * (1 - value)
    n_eff = min(n, spread / se**2) if se > 0 and spread > 0 else n
    n_eff *= (float(stats.norm.ppf(1 - alpha / 2)) / t) ** 2
    hits = value * n_eff
    low = float(stats.beta.ppf(alpha / 2, hits, n_eff - hits + 1)) if hits > 0 else 0.0
    high = float(stats.beta.ppf(1 - alpha / 2, hits + 1, n_eff - hits)) if value < 1 else 1.0
    return value, (low, high), clusters


def jackknife_t(
    statistic: Callable[[np.ndarray], float | None], parts: np.ndarray, alpha: float = ALPHA
) -> tuple[float | None, tuple[float, float] | None]:
    """``statistic`` of the pooled sums and its ``1 - alpha`` delete-one jackknife t-interval.

    ``parts[g]`` is cluster g's additive tallies (any shape), so the pool is their sum
    and leaving cluster g out is the sum less ``parts[g]``: G + 1 evaluations, not G^2.
    The interval is ``None`` under two clusters, or when ``statistic`` is undefined
    (``None``) once some cluster is left out: then no spread can be measured.
    """
    parts = np.asarray(parts, dtype=float)
    total = parts.sum(axis=0)
    whole = statistic(total)
    if whole is None or len(parts) < 2:
        return whole, None
    left_out = [statistic(total - part) for part in parts]
    if any(value is None for value in left_out):
        return whole, None
    values = np.asarray(left_out, dtype=float)
    n = len(values)
    spread = math.sqrt((n - 1) / n * float(((values - values.mean()) ** 2).sum()))
    half = float(t_quantile(n, alpha)) * spread
    return whole, (whole - half, whole + half)
