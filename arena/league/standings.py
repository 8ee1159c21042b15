"""Ranking with stated confidence: mean scores and head-to-head with 95% intervals, a rating.

The unit of independence is the table, not the episode: the rotations of a
duplicate table share one deck of deals and one table order, so their scores
are correlated. Every figure is therefore a ratio of per-table sums (an
entrant's episode scores over its episodes; the points it took over the deals
it met an opponent), and its interval is a t-interval over tables: the ratio
estimator's linearised standard error from the spread of the per-table
residuals, times Student's t with ``tables - 1`` degrees of freedom. With
equal-sized tables that is exactly the textbook t-interval on table means.
A percentile bootstrap over tables, used before, covers too seldom at the 5 to
10 tables a paid league holds (it ignores that the spread is itself estimated
from few tables); bench/coverage.py measures both. No resampling means the
same league gives the same intervals, in any process.

Below :data:`MIN_TABLES` independent tables the bench found no method that
holds 95%: with five tables a seating that decides much of a score (the seat
after ``random`` collects its lies) is missing from one league in eight, and no
interval drawn from those tables alone can know it. A duplicate group, seated by
a Williams square (:mod:`arena.league.schedule`), cancels most of that seating
and is 0.64-0.74x as wide as plain tables at the same episodes, but what it leaves
(with four seats one entrant follows another twice in a group) still skews a
group's mean at five groups, so groups too need :data:`MIN_GROUPS`. An interval
over fewer is marked ``too few tables`` (and with one table there is no spread to
measure: the interval is the whole range the figure can take).

An entrant's score in an episode is the mean of its seats' scores there (an
entrant holding two seats plays one episode, not two). The rating is a second
view, from openskill's Plackett-Luce model (see docs/league.md for why):
episodes are fed in schedule order, each distinct entrant a one-player team
ranked by its score.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

import attrs
import numpy as np
from openskill.models import PlackettLuce
from scipy import stats

MIN_TABLES = 10
"""Fewest plain tables over which bench/coverage.py measured the intervals to cover at
95% +- 2% (docs/league.md); an interval over fewer is marked :data:`TOO_FEW`."""
MIN_GROUPS = 10
"""The same for duplicate groups (measured apart: 93.0-95.2% at 10 groups, 89.5-94.9% at 5;
groups seated by rotations, before, held only from 40)."""
COVERED = "ok"
TOO_FEW = "too few tables"
TOO_FEW_NOTE = (
    f"* under {MIN_TABLES} tables or {MIN_GROUPS} duplicate groups:"
    " coverage not shown (docs/league.md)"
)
"""The line under a table of figures that holds a marked interval (fits 80 columns)."""
SCORE_RANGE = (0.0, 1.0)
"""rules.md's score: 0.5 + points / (2 deals), points between -deals and +deals."""
DIFFERENCE_RANGE = (-1.0, 1.0)
"""One score less another: each lies in :data:`SCORE_RANGE`."""
PER_DEAL_RANGE = (-1.0, 1.0)
"""Net points one entrant takes from another per deal: one challenge per deal moves one."""


@attrs.frozen
class SeatRow:
    episode: int
    table: int
    entrant: str
    """The standings name: a stand-in seat is ``NAME (stand-in)``, never pooled with NAME."""
    score: float
    points: int


@attrs.frozen
class Standing:
    entrant: str
    episodes: int
    seatings: int
    mean_score: float
    ci95: tuple[float, float]
    ci_tables: int
    """Independent tables (duplicate groups) the interval is drawn from."""
    ci_coverage: str
    """:data:`COVERED`, or :data:`TOO_FEW` for fewer tables than the bench found to hold."""
    rating: float
    """Plackett-Luce ordinal: mu - 3 sigma, a conservative skill estimate."""
    rating_mu: float
    rating_sigma: float
    points: int

    def to_json(self) -> dict:
        return {
            "entrant": self.entrant,
            "episodes": self.episodes,
            "seatings": self.seatings,
            "meanScore": self.mean_score,
            "ci95": list(self.ci95),
            "ciTables": self.ci_tables,
            "ciCoverage": self.ci_coverage,
            "rating": self.rating,
            "ratingMu": self.rating_mu,
            "ratingSigma": self.rating_sigma,
            "points": self.points,
            "standIn": self.entrant.endswith(STAND_IN),
        }


@attrs.frozen
class HeadToHead:
    """What ``entrant`` took from ``opponent`` over the deals they sat at one table."""

    entrant: str
    opponent: str
    deals: int
    took: int
    gave: int
    per_deal: float
    """(took - gave) / deals."""
    ci95: tuple[float, float]
    ci_tables: int
    """Independent tables (duplicate groups) at which the two met."""
    ci_coverage: str
    """As :attr:`Standing.ci_coverage`."""

    def to_json(self) -> dict:
        return {
            "entrant": self.entrant,
            "opponent": self.opponent,
            "deals": self.deals,
            "took": self.took,
            "gave": self.gave,
            "pointsPerDeal": self.per_deal,
            "ci95": list(self.ci95),
            "ciTables": self.ci_tables,
            "ciCoverage": self.ci_coverage,
        }


STAND_IN = " (stand-in)"


class Tables:
    """The independent units of a league: row ``index[t]`` of every per-table sum is table t.

    ``duplicate`` when each unit is a duplicate group (several episodes of one table),
    whose fewest units to hold 95% the bench measured apart from plain tables'.
    """

    def __init__(self, tables: Sequence[int], duplicate: bool = False, alpha: float = 0.05):
        self.index = {table: i for i, table in enumerate(sorted(set(tables)))}
        self.fewest = MIN_GROUPS if duplicate else MIN_TABLES
        self.alpha = alpha
        """Each interval's two-sided level: a league that may stop at a look draws each look
        at :func:`arena.league.looks.league_alpha`."""

    def coverage(self, tables: int) -> str:
        """``ok`` where the bench measured intervals over ``tables`` such units to hold."""
        return COVERED if tables >= self.fewest else TOO_FEW

    def ratio_ci(
        self,
        numerator: np.ndarray,
        denominator: np.ndarray,
        bounds: tuple[float, float],
        alpha: float | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """``1 - alpha`` t-intervals of sum(numerator) / sum(denominator) per column (rows are
        tables, clipped to ``bounds``), and how many tables each column's data came from.

        A table where a column has no data (an entrant who did not sit there) is not one
        of its tables. The ratio R's residual at table g is e_g = y_g - R x_g; its
        standard error is sqrt(G / (G - 1) * sum(e_g^2)) / sum(x_g) over the G tables.
        """
        alpha = self.alpha if alpha is None else alpha
        present = denominator > 0
        tables = present.sum(0)
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = numerator.sum(0) / denominator.sum(0)
            residual = np.where(present, numerator - ratio * denominator, 0.0)
            spread = np.sqrt(tables / (tables - 1) * (residual**2).sum(0))
            half = stats.t.ppf(1 - alpha / 2, tables - 1) * spread / denominator.sum(0)
        low, high = bounds
        # fewer than two tables: no spread to measure, so nothing is ruled out
        half = np.where(tables >= 2, half, np.inf)
        interval = np.stack([np.clip(ratio - half, low, high), np.clip(ratio + half, low, high)])
        return interval.T, tables


def standings(rows: Iterable[SeatRow], groups: Tables | None = None) -> list[Standing]:
    """Entrants by mean episode score, best first (ties by name)."""
    rows = list(rows)
    if not rows:
        return []
    by_episode: dict[int, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    table_of, points, seatings = {}, defaultdict(int), defaultdict(int)
    for row in rows:
        by_episode[row.episode][row.entrant].append(row.score)
        table_of[row.episode] = row.table
        points[row.entrant] += row.points
        seatings[row.entrant] += 1
    names = sorted(points)
    column = {name: i for i, name in enumerate(names)}
    groups = groups or Tables(
        list(table_of.values()), duplicate=len(table_of) > len(set(table_of.values()))
    )
    sums = np.zeros((len(groups.index), len(names)))
    counts = np.zeros_like(sums)
    for episode, scores in by_episode.items():
        t = groups.index[table_of[episode]]
        for name, values in scores.items():
            sums[t, column[name]] += sum(values) / len(values)
            counts[t, column[name]] += 1
    means = sums.sum(0) / counts.sum(0)
    ci, tables = groups.ratio_ci(sums, counts, SCORE_RANGE)
    ratings = rate(by_episode)
    table = [
        Standing(
            entrant=name,
            episodes=int(counts[:, i].sum()),
            seatings=seatings[name],
            mean_score=float(means[i]),
            ci95=(float(ci[i, 0]), float(ci[i, 1])),
            ci_tables=int(tables[i]),
            ci_coverage=groups.coverage(int(tables[i])),
            rating=float(ratings[name].ordinal()),
            rating_mu=float(ratings[name].mu),
            rating_sigma=float(ratings[name].sigma),
            points=points[name],
        )
        for i, name in enumerate(names)
    ]
    return sorted(table, key=lambda s: (-s.mean_score, s.entrant))


def rate(by_episode: dict[int, dict[str, list[float]]]) -> dict:
    """Plackett-Luce ratings after every episode in schedule order."""
    model = PlackettLuce()
    ratings = {}
    for episode in sorted(by_episode):
        scores = {name: sum(v) / len(v) for name, v in sorted(by_episode[episode].items())}
        for name in scores:
            ratings.setdefault(name, model.rating(name=name))
        if len(scores) < 2:
            continue
        teams = [[ratings[name]] for name in scores]
        for name, (rated,) in zip(
            scores, model.rate(teams, scores=list(scores.values())), strict=True
        ):
            ratings[name] = rated
    return ratings


def head_to_head(
    taken: Iterable[tuple[int, str, str, int]],
    seated: Iterable[tuple[int, int, str, int]],
    groups: Tables,
) -> list[HeadToHead]:
    """Every ordered pair of entrants who met: points taken each way, net per deal, with CI.

    ``taken``: (episode, winner entrant, loser entrant, points); ``seated``:
    (episode, table, entrant, deals played), one row per entrant per episode.
    """
    tables: dict[int, int] = {}
    present: dict[int, set[str]] = defaultdict(set)
    deals_of: dict[int, int] = {}
    for episode, table, entrant, deals in seated:
        tables[episode], deals_of[episode] = table, deals
        present[episode].add(entrant)
    names = sorted({name for group in present.values() for name in group})
    column = {name: i for i, name in enumerate(names)}
    n, e = len(groups.index), len(names)
    took = np.zeros((n, e, e))
    deals = np.zeros((n, e, e))
    for episode, group in present.items():
        t = groups.index[tables[episode]]
        for a in group:
            for b in group:
                if a != b:
                    deals[t, column[a], column[b]] += deals_of[episode]
    for episode, winner, loser, count in taken:
        if winner != loser:
            took[groups.index[tables[episode]], column[winner], column[loser]] += count
    net = took - took.transpose(0, 2, 1)
    ci, met = groups.ratio_ci(net.reshape(n, -1), deals.reshape(n, -1), PER_DEAL_RANGE)
    ci, met = ci.reshape(e, e, 2), met.reshape(e, e)
    totals, played, net_total = took.sum(0), deals.sum(0), net.sum(0)
    return [
        HeadToHead(
            entrant=a,
            opponent=b,
            deals=int(played[i, j]),
            took=int(totals[i, j]),
            gave=int(totals[j, i]),
            per_deal=float(net_total[i, j] / played[i, j]),
            ci95=(float(ci[i, j, 0]), float(ci[i, j, 1])),
            ci_tables=int(met[i, j]),
            ci_coverage=groups.coverage(int(met[i, j])),
        )
        for i, a in enumerate(names)
        for j, b in enumerate(names)
        if a != b and played[i, j] > 0
    ]
