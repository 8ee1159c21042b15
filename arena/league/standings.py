"""Ranking with stated confidence: mean scores with bootstrap CIs, head-to-head, a rating.

The unit of independence is the table, not the episode: the rotations of a
duplicate table share one deck of deals, so their scores are correlated, and
treating them as independent would understate the uncertainty. The bootstrap
therefore resamples whole tables (with all their rotations) with replacement
and recomputes every figure on each resample; the 95% interval is the 2.5th
to 97.5th percentile of the resampled values. Its generator is seeded, so the
same league gives the same intervals.

An entrant's score in an episode is the mean of its seats' scores there (an
entrant holding two seats plays one episode, not two). The rating is a second
view, from openskill's Plackett-Luce model (see docs/league.md for why):
episodes are fed in schedule order, each distinct entrant a one-player team
ranked by its score.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Iterable, Sequence

import attrs
import numpy as np
from openskill.models import PlackettLuce

from arena import seeding

BOOTSTRAP = 6
"""Seed-stream domain of the bootstrap's resampling (see arena.seeding)."""
RESAMPLES = 2000


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

    def to_json(self) -> dict:
        return {
            "entrant": self.entrant,
            "opponent": self.opponent,
            "deals": self.deals,
            "took": self.took,
            "gave": self.gave,
            "pointsPerDeal": self.per_deal,
            "ci95": list(self.ci95),
        }


STAND_IN = " (stand-in)"


class Resampler:
    """Bootstrap weights over tables: replicate b counts table t ``weights[b, t]`` times."""

    def __init__(self, tables: Sequence[int], resamples: int = RESAMPLES, seed: int = 0):
        self.index = {table: i for i, table in enumerate(sorted(set(tables)))}
        n = len(self.index)
        rng = seeding.stream(seed, BOOTSTRAP)
        self.weights = rng.multinomial(n, np.full(n, 1 / n), size=resamples)

    def ratio_ci(self, numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
        """95% interval of sum(numerator) / sum(denominator) per column; rows are tables."""
        with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
            # a column with no data in any resample (an entrant against itself) is NaN
            warnings.simplefilter("ignore", RuntimeWarning)
            values = (self.weights @ numerator) / (self.weights @ denominator)
            low, high = np.nanpercentile(values, [2.5, 97.5], axis=0)
        return np.stack([low, high], axis=-1)


def standings(rows: Iterable[SeatRow], resampler: Resampler | None = None) -> list[Standing]:
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
    resampler = resampler or Resampler(list(table_of.values()))
    sums = np.zeros((len(resampler.index), len(names)))
    counts = np.zeros_like(sums)
    for episode, scores in by_episode.items():
        t = resampler.index[table_of[episode]]
        for name, values in scores.items():
            sums[t, column[name]] += sum(values) / len(values)
            counts[t, column[name]] += 1
    means = sums.sum(0) / counts.sum(0)
    ci = resampler.ratio_ci(sums, counts)
    ratings = rate(by_episode)
    table = [
        Standing(
            entrant=name,
            episodes=int(counts[:, i].sum()),
            seatings=seatings[name],
            mean_score=float(means[i]),
            ci95=(float(ci[i, 0]), float(ci[i, 1])),
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
    resampler: Resampler,
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
    n, e = len(resampler.index), len(names)
    took = np.zeros((n, e, e))
    deals = np.zeros((n, e, e))
    for episode, group in present.items():
        t = resampler.index[tables[episode]]
        for a in group:
            for b in group:
                if a != b:
                    deals[t, column[a], column[b]] += deals_of[episode]
    for episode, winner, loser, count in taken:
        if winner != loser:
            took[resampler.index[tables[episode]], column[winner], column[loser]] += count
    net = took - took.transpose(0, 2, 1)
    ci = resampler.ratio_ci(net.reshape(n, -1), deals.reshape(n, -1)).reshape(e, e, 2)
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
        )
        for i, a in enumerate(names)
        for j, b in enumerate(names)
        if a != b and played[i, j] > 0
    ]
