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
(with four seats one entrant, its partner, follows another twice in a group) still
skews a group's mean at five groups, so groups too need :data:`MIN_GROUPS`. Where
every group seats the whole league the schedule hands out the partners in turn
(:func:`arena.league.schedule.paired`), and the intervals are post-stratified by
partner (strat-t, :meth:`Tables.stratified_ci`, each partner found from the stored
seeds and slots by :func:`partners`): those held from :data:`MIN_PAIRED_GROUPS`. An
interval over fewer is marked ``too few tables`` (and with one table there is no
spread to measure: the interval is the whole range the figure can take).

An entrant's score in an episode is the mean of its seats' scores there (an
entrant holding two seats plays one episode, not two). The rating is a second
view, from openskill's Plackett-Luce model (see docs/league.md for why):
episodes are fed in schedule order, each distinct entrant a one-player team
ranked by its score.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence

import attrs
import numpy as np
from openskill.models import PlackettLuce

from arena import seeding
from arena.intervals import ratio_columns

MIN_TABLES = 10
"""Fewest plain tables over which bench/coverage.py measured the intervals to cover at
95% +- 2% (docs/league.md); an interval over fewer is marked :data:`TOO_FEW`."""
MIN_GROUPS = 10
"""The same for duplicate groups (measured apart: 93.0-95.2% at 10 groups, 89.5-94.9% at 5;
groups seated by rotations, before, held only from 40)."""
MIN_PAIRED_GROUPS = {4: 5}
"""The same for strat-t over paired groups, by seat count: measured with four seats only
(94.2-96.1% at 5 to 40 groups); other seat counts are marked as :data:`MIN_GROUPS`."""
COVERED = "ok"
TOO_FEW = "too few tables"
T, STRAT_T = "t", "strat-t"
"""Which method drew an interval (``ciMethod``)."""
TOO_FEW_NOTE = (
    f"* under {MIN_TABLES} tables or groups ({MIN_PAIRED_GROUPS[4]} paired):"
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
    ci_method: str
    """:data:`T` or :data:`STRAT_T`."""
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
            "ciMethod": self.ci_method,
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
    ci_method: str

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
            "ciMethod": self.ci_method,
        }


STAND_IN = " (stand-in)"


@attrs.frozen
class Partners:
    """Each entrant's partner in each group of a paired duplicate league
    (:func:`arena.league.schedule.paired`): the entrant it sits right after twice there."""

    entrants: tuple[str, ...]
    """The league's entrants, one per seat: each one's partner is one of the others."""
    of: Mapping[tuple[int, str], str]
    """(table, entrant) to its partner, where the entrant sat every episode of a whole group."""

    @property
    def levels(self) -> int:
        """How many partners an entrant can have."""
        return len(self.entrants) - 1

    def stratum(self, table: int, entrant: str) -> int:
        """The entrant's partner at ``table`` as an index among the others, -1 if unknown."""
        others = [name for name in self.entrants if name != entrant]
        partner = self.of.get((table, entrant))
        return others.index(partner) if partner in others else -1


def partners(
    seatings: Iterable[tuple[int, int, int, int, str]], entrants: Sequence[str]
) -> Partners:
    """Every entrant's partner in every group, from the stored seats: (episode, table,
    episode seed, slot, entrant). An episode's table order is rules.md rule 1's permutation
    of its seed; an entrant's partner in a group is the one it sits right after most, known
    when one does so most and the entrant sat all of the group's ``len(entrants)`` episodes
    (a group cut short, or with a stand-in, has none)."""
    slots: dict[int, dict[int, str]] = defaultdict(dict)
    where = {}
    for episode, table, seed, slot, entrant in seatings:
        slots[episode][slot] = entrant
        where[episode] = (table, seed)
    episodes: Counter = Counter()
    followed: dict[tuple[int, str], Counter] = defaultdict(Counter)
    for episode, seated in slots.items():
        table, seed = where[episode]
        episodes[table] += 1
        ring = [seated[slot] for slot in seeding.table_order(seed, len(seated))]
        for i, name in enumerate(ring):
            followed[table, name][ring[i - 1]] += 1
    found = {}
    for (table, name), before in followed.items():
        (partner, most), *rest = before.most_common(2)
        whole = episodes[table] == before.total() == len(entrants)
        if whole and (not rest or rest[0][1] < most):
            found[table, name] = partner
    return Partners(tuple(entrants), found)


class Tables:
    """The independent units of a league: row ``index[t]`` of every per-table sum is table t.

    ``duplicate`` when each unit is a duplicate group (several episodes of one table),
    whose fewest units to hold 95% the bench measured apart from plain tables'; with
    ``partners`` the groups are paired and their intervals post-stratified by partner
    where every group's partner is known (:meth:`intervals`).
    """

    def __init__(
        self,
        tables: Sequence[int],
        duplicate: bool = False,
        alpha: float = 0.05,
        partners: Partners | None = None,
    ):
        self.index = {table: i for i, table in enumerate(sorted(set(tables)))}
        self.fewest = MIN_GROUPS if duplicate else MIN_TABLES
        self.alpha = alpha
        """Each interval's two-sided level: a league that may stop at a look draws each look
        at :func:`arena.league.looks.league_alpha`."""
        self.partners = partners

    def coverage(self, tables: int, method: str = T) -> str:
        """``ok`` where the bench measured intervals over ``tables`` such units to hold."""
        fewest = self.fewest
        if method == STRAT_T:
            fewest = MIN_PAIRED_GROUPS.get(len(self.partners.entrants), MIN_GROUPS)
        return COVERED if tables >= fewest else TOO_FEW

    def strata(self, names: Sequence[str]) -> np.ndarray | None:
        """(tables, names): each entrant's partner at each table (:meth:`Partners.stratum`);
        None when the groups are not paired."""
        if self.partners is None:
            return None
        found = np.full((len(self.index), len(names)), -1)
        for table, row in self.index.items():
            for column, name in enumerate(names):
                found[row, column] = self.partners.stratum(table, name)
        return found

    def intervals(
        self,
        numerator: np.ndarray,
        denominator: np.ndarray,
        bounds: tuple[float, float],
        strata: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each column's estimate and its interval: sum(numerator) / sum(denominator) with
        :meth:`ratio_ci`'s t-interval, or, for each column whose every table's stratum is
        known and where one can be drawn, :meth:`stratified_ci`'s mean of the strata's means
        with its interval: the figure shown is always the one its interval is drawn around.
        Also how many tables each column's data came from, and which method drew it
        (:data:`T`, :data:`STRAT_T`)."""
        ci, tables = self.ratio_ci(numerator, denominator, bounds)
        with np.errstate(invalid="ignore", divide="ignore"):
            estimate = numerator.sum(0) / denominator.sum(0)
        ci = ci.copy()
        methods = np.full(len(tables), T, dtype=object)
        if strata is None:
            return estimate, ci, tables, methods
        present = denominator > 0
        known = (strata >= 0) | ~present
        with np.errstate(invalid="ignore", divide="ignore"):
            values = np.where(present, numerator / denominator, np.nan)
        levels = self.partners.levels
        stratified, centre = self.stratified_ci(
            values, np.where(present, strata, -1), levels, bounds
        )
        drawn = known.all(0) & np.isfinite(stratified).all(1)
        ci[drawn], methods[drawn], estimate[drawn] = stratified[drawn], STRAT_T, centre[drawn]
        return estimate, ci, tables, methods

    def stratified_ci(
        self, values: np.ndarray, strata: np.ndarray, levels: int, bounds: tuple[float, float]
    ) -> tuple[np.ndarray, np.ndarray]:
        """(columns, 2): each column's ``1 - alpha`` strat-t interval, clipped to ``bounds``
        (rows are tables; a table's stratum 0..levels-1, -1 where the column has no data),
        and (columns,): the figure it is drawn around.

        The figure is the mean of the strata's means, each stratum 1/``levels`` likely by
        the design; with G tables, n_h in stratum h and s^2 the spread within strata pooled
        over G - levels df, it is that mean +- t(1 - alpha/2, G - levels) sqrt(s^2 sum 1/n_h)
        / levels. NaN where a stratum has no table or no df is left.
        """
        found = np.full((values.shape[1], 2), np.nan)
        centre = np.full(values.shape[1], np.nan)
        for column in range(values.shape[1]):
            seen = strata[:, column] >= 0
            h, y = strata[seen, column], values[seen, column]
            counts = np.bincount(h, minlength=levels)
            df = len(y) - levels
            if counts.min() == 0 or df < 1:
                continue
            means = np.bincount(h, weights=y, minlength=levels) / counts
            spread = ((y - means[h]) ** 2).sum() / df
            from scipy import stats  # here: importing standings must not cost every command scipy

            t = stats.t.ppf(1 - self.alpha / 2, df)
            half = t * np.sqrt(spread * (1 / counts).sum()) / levels
            centre[column] = means.mean()
            found[column] = np.clip([centre[column] - half, centre[column] + half], *bounds)
        return found, centre

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
        standard error is sqrt(G / (G - 1) * sum(e_g^2)) / sum(x_g) over the G tables
        (:func:`arena.intervals.ratio_columns`, which the decision read-out's figures draw
        by too); under two tables nothing is ruled out.
        """
        alpha = self.alpha if alpha is None else alpha
        ratio, half, tables = ratio_columns(numerator, denominator, alpha)
        low, high = bounds
        interval = np.stack([np.clip(ratio - half, low, high), np.clip(ratio + half, low, high)])
        return interval.T, tables


def paired_interval(
    differences: Sequence[float], alpha: float | None = None
) -> tuple[float, float]:
    """The ``1 - alpha`` t-interval (by default :class:`Tables`' 95%) of the mean of
    ``differences``, one per pair (a compared table, or a table two entrants both sat at):
    under two, nothing is ruled out."""
    values = np.asarray(differences, dtype=float)[:, None]
    if len(values) < 2:
        return DIFFERENCE_RANGE
    ci, _ = Tables(range(len(values))).ratio_ci(
        values, np.ones_like(values), DIFFERENCE_RANGE, alpha
    )
    return float(ci[0, 0]), float(ci[0, 1])


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
    means, ci, tables, methods = groups.intervals(sums, counts, SCORE_RANGE, groups.strata(names))
    ratings = rate(by_episode)
    table = [
        Standing(
            entrant=name,
            episodes=int(counts[:, i].sum()),
            seatings=seatings[name],
            mean_score=float(means[i]),
            ci95=(float(ci[i, 0]), float(ci[i, 1])),
            ci_tables=int(tables[i]),
            ci_coverage=groups.coverage(int(tables[i]), methods[i]),
            ci_method=methods[i],
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
    strata = groups.strata(names)  # a pair by its first entrant's partner
    if strata is not None:
        strata = np.repeat(strata[:, :, None], e, axis=2).reshape(n, -1)
    per_deal, ci, met, methods = groups.intervals(
        net.reshape(n, -1), deals.reshape(n, -1), PER_DEAL_RANGE, strata
    )
    per_deal, ci = per_deal.reshape(e, e), ci.reshape(e, e, 2)
    met, methods = met.reshape(e, e), methods.reshape(e, e)
    totals, played = took.sum(0), deals.sum(0)
    return [
        HeadToHead(
            entrant=a,
            opponent=b,
            deals=int(played[i, j]),
            took=int(totals[i, j]),
            gave=int(totals[j, i]),
            per_deal=float(per_deal[i, j]),
            ci95=(float(ci[i, j, 0]), float(ci[i, j, 1])),
            ci_tables=int(met[i, j]),
            ci_coverage=groups.coverage(int(met[i, j]), methods[i, j]),
            ci_method=methods[i, j],
        )
        for i, a in enumerate(names)
        for j, b in enumerate(names)
        if a != b and played[i, j] > 0
    ]
