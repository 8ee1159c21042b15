"""How often the league's 95% intervals hold the truth, by league size and method, in one run.

Many leagues of the same four scripted entrants (bayes, pressure, random and a
second bayes, ``bayes#2``), each on its own master seed, plain and with
``--duplicate``; every league's standings and head-to-head intervals are
checked against the truth:

- identical entrants: bayes and bayes#2 are the same policy, so their
  head-to-head is exactly 0 and their mean scores are equal (to the pooled
  reference value below);
- unequal entrants (pressure, random, and every pair but bayes/bayes#2): the
  truth is a reference league of ``--reference`` plain tables on a seed no
  checked league uses; its own standard error is printed beside it.

Methods: ``percentile`` is the bootstrap the standings used before (2000
resamples of whole tables, 2.5th to 97.5th percentile); ``BCa`` is
scipy.stats.bootstrap's bias-corrected and accelerated bootstrap over tables;
``boot-t`` is the studentized bootstrap (resampled (R* - R) / SE* set the
ends; scipy has no such method, so it is written here); ``t`` is what the
standings use now (:meth:`arena.league.standings.Tables.ratio_ci`).
Coverage is the share of intervals holding the truth; its standard error is
the spread of each league's covered share over leagues (with one target per
league, the binomial sqrt(p (1 - p) / leagues)). A league of T tables is the
first T tables of the league's 40 (a league with more tables starts with the
same tables), so the sizes of one seed are not independent of each other,
while every cell's leagues are.

Widths compare ``--duplicate`` with plain at the same number of episodes:
T duplicate groups of 4 rotations against 4T plain tables.

    python bench/coverage.py --leagues 1000 --deals 20 --reference 20000
"""

from __future__ import annotations

import argparse
import itertools
import time
import warnings

import attrs
import numpy as np
from scipy import stats

from arena import seeding
from arena.league.config import LeagueSpec, pool_entrants
from arena.league.schedule import fixtures
from arena.league.standings import MIN_TABLES, PER_DEAL_RANGE, SCORE_RANGE, Tables
from arena.league.store import challenge_points
from arena.plugins import load
from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatSpec

ENTRANTS = pool_entrants(SeatSpec.parse(n) for n in ("bayes", "pressure", "random", "bayes"))
NAMES = [e.name for e in ENTRANTS]
TWINS = ("bayes", "bayes#2")
PAIRS = [
    TWINS,
    *(pair for other in ("pressure", "random") for pair in ((TWINS[0], other), (TWINS[1], other))),
    ("pressure", "random"),
]
"""Head-to-head targets, one direction per pair (the other is its negative); each twin's
pair with a third entrant sits beside the other twin's."""
PLAIN_SIZES = (2, 3, 5, 10, 20, 40)
DUPLICATE_SIZES = (2, 3, 5, 10, 20, 40)
MOST = 40
METHODS = ("percentile", "BCa", "boot-t", "t")
RESAMPLES = 2000
BENCH = 7
"""Seed-stream domain of this bench's bootstrap resampling (arena.seeding: 0-6 are taken)."""
REFERENCE_SEED = 10**9


@attrs.frozen
class TableSums:
    """Per-table sums of one league: rows are tables (duplicate groups)."""

    scores: np.ndarray
    """(tables, entrants): the entrant's episode scores summed over the table's episodes."""
    episodes: np.ndarray
    net: np.ndarray
    """(tables, pairs): points the pair's first entrant took from its second, net."""
    deals: np.ndarray
    after_random: np.ndarray
    """(tables, entrants): episodes in which the entrant sat right after random in table
    order (rules.md rule 5), which is where random's lies are collected."""
    scores_after_random: np.ndarray

    def head(self, tables: int) -> TableSums:
        return TableSums(*(a[:tables] for a in attrs.astuple(self, recurse=False)))

    @staticmethod
    def stack(leagues: list[TableSums]) -> TableSums:
        """Many leagues' tables as one table set."""
        fields = zip(*(attrs.astuple(sums, recurse=False) for sums in leagues), strict=True)
        return TableSums(*(np.concatenate(field) for field in fields))

    def ratios(self) -> tuple[np.ndarray, np.ndarray]:
        """Every target as (numerator, denominator) rows over tables: means, then pairs."""
        return (
            np.concatenate([self.scores, self.net], axis=1).T,
            np.concatenate([self.episodes, self.deals], axis=1).T,
        )


def play(host, spec: LeagueSpec) -> TableSums:
    """Every table of ``spec``, played in this process on the league's own engine choice."""
    column = {name: i for i, name in enumerate(NAMES)}
    pair = {p: i for i, p in enumerate(PAIRS)}
    widths = (4, 4, len(PAIRS), len(PAIRS), 4, 4)
    sums = TableSums(*(np.zeros((spec.tables, n)) for n in widths))
    for fixture in fixtures(spec):
        results, records = run_episode(host, fixture.request)
        document = results.to_json()
        t = fixture.table
        order = next(iter(records))["tableOrder"]
        before = {order[i]: order[i - 1] for i in range(len(order))}
        for slot, (name, seat) in enumerate(zip(fixture.entrants, document["seats"], strict=True)):
            sums.scores[t, column[name]] += seat["score"]
            sums.episodes[t, column[name]] += 1
            if fixture.entrants[before[slot]] == "random":
                sums.after_random[t, column[name]] += 1
                sums.scores_after_random[t, column[name]] += seat["score"]
        sums.deals[t] += document["dealsPlayed"]
        for (winner, loser), n in challenge_points(records).items():
            a, b = fixture.entrants[winner], fixture.entrants[loser]
            if (a, b) in pair:
                sums.net[t, pair[a, b]] += n
            else:
                sums.net[t, pair[b, a]] -= n
    return sums


def intervals(sums: TableSums, method: str, seed: int) -> np.ndarray:
    """(targets, 2): every target's 95% interval by ``method``, clipped as the standings
    clip theirs, to the range each figure can take."""
    bounds = np.array([SCORE_RANGE] * 4 + [PER_DEAL_RANGE] * len(PAIRS))
    return np.clip(_unclipped(sums, method, seed), bounds[:, :1], bounds[:, 1:])


def _unclipped(sums: TableSums, method: str, seed: int) -> np.ndarray:
    numerator, denominator = sums.ratios()
    if method == "t":
        tables = Tables(range(numerator.shape[1]))
        parts = [
            tables.ratio_ci(numerator[rows].T, denominator[rows].T, bounds)[0]
            for rows, bounds in ((slice(0, 4), SCORE_RANGE), (slice(4, None), PER_DEAL_RANGE))
        ]
        return np.concatenate(parts)
    rng = seeding.stream(seed, BENCH)
    g = numerator.shape[1]
    weights = rng.multinomial(g, np.full(g, 1 / g), size=RESAMPLES)
    if method == "percentile":
        with np.errstate(invalid="ignore", divide="ignore"):
            values = (weights @ numerator.T) / (weights @ denominator.T)
        return np.nanpercentile(values, [2.5, 97.5], axis=0).T
    if method == "boot-t":
        return _bootstrap_t(numerator, denominator, weights)
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # BCa of a table set with no spread: NaN, counted
        result = stats.bootstrap(
            (numerator, denominator),
            lambda n, d, axis: n.sum(axis) / d.sum(axis),
            paired=True,
            vectorized=True,
            axis=-1,
            n_resamples=RESAMPLES,
            method="BCa",
            random_state=rng,
        )
    interval = result.confidence_interval
    return np.stack([interval.low, interval.high], axis=-1)


def _bootstrap_t(numerator: np.ndarray, denominator: np.ndarray, weights: np.ndarray):
    """The studentized bootstrap of the ratio: resampled (R* - R) / SE* sets the ends."""

    def ratio_and_error(w):
        y, x = w @ numerator.T, w @ denominator.T
        ratio = y / x
        square = w @ (numerator**2).T - 2 * ratio * (w @ (numerator * denominator).T)
        square += ratio**2 * (w @ (denominator**2).T)
        g = numerator.shape[1]
        return ratio, np.sqrt(np.maximum(g / (g - 1) * square, 0.0)) / x

    with np.errstate(invalid="ignore", divide="ignore"):
        ratio, error = ratio_and_error(np.ones((1, numerator.shape[1])))
        resampled, resampled_error = ratio_and_error(weights)
        pivot = (resampled - ratio) / resampled_error
        pivot = np.where(resampled == ratio, 0.0, pivot)
        # no interpolation: a resample of one table has an infinite pivot, kept as one
        low_q, high_q = np.nanpercentile(pivot, [2.5, 97.5], axis=0, method="inverted_cdf")
        interval = np.stack([ratio[0] - high_q * error[0], ratio[0] - low_q * error[0]], -1)
    return np.where(error[0][:, None] == 0, ratio[0][:, None], interval)


def truths(host, tables: int, deals: int) -> tuple[np.ndarray, np.ndarray]:
    """Every target's true value and its standard error, from the reference league."""
    spec = LeagueSpec(
        entrants=ENTRANTS, tables=tables, seed=REFERENCE_SEED, table=EpisodeRequest(deals=deals)
    )
    numerator, denominator = play(host, spec).ratios()
    value = numerator.sum(1) / denominator.sum(1)
    residual = numerator - value[:, None] * denominator
    error = np.sqrt(tables / (tables - 1) * (residual**2).sum(1)) / denominator.sum(1)
    # the twins are one policy: pool their means and the pairs each makes with a third
    # (roughly halving the variance: SE / sqrt 2), and their head-to-head is 0 exactly
    for rows in ([NAMES.index(n) for n in TWINS], [5, 6], [7, 8]):
        value[rows] = value[rows].mean()
        error[rows] = error[rows].mean() / np.sqrt(2)
    value[4], error[4] = 0.0, 0.0
    return value, error


def why(kept: dict[str, list[TableSums]]) -> None:
    """What drives the spread, and why duplicate rotations do not cancel it."""
    plain, duplicate = (TableSums.stack(kept[kind]) for kind in ("plain", "duplicate"))
    others = [NAMES.index(n) for n in NAMES if n != "random"]
    after = plain.scores_after_random[:, others].sum(0) / plain.after_random[:, others].sum(0)
    elsewhere = (plain.scores - plain.scores_after_random)[:, others].sum(0) / (
        plain.episodes - plain.after_random
    )[:, others].sum(0)
    print("\nwhy duplicate seating does not tighten, over every league's 40 tables:")
    print(
        "  mean score right after random in table order / elsewhere: "
        + ", ".join(
            f"{NAMES[i]} {a:.3f} / {b:.3f}"
            for i, a, b in zip(others, after, elsewhere, strict=True)
        )
    )
    fours = plain.after_random[: len(plain.after_random) // 4 * 4].reshape(-1, 4, 4).sum(1)
    print(
        "  rotations (of 4) in which an entrant sits right after random, variance over groups:"
        f" duplicate {duplicate.after_random[:, others].var():.2f},"
        f" 4 plain tables {fours[:, others].var():.2f} (binomial 4 x 1/3 x 2/3 = 0.89;"
        " rotations that balanced who follows whom would give 0)"
    )
    group = duplicate.scores / duplicate.episodes
    four = (plain.scores / plain.episodes)[: len(plain.scores) // 4 * 4]
    four = four.reshape(-1, 4, 4).mean(1)
    print(
        "  spread (SD) of a duplicate group's mean score / of the mean of 4 plain tables: "
        + ", ".join(f"{n} {group[:, i].std() / four[:, i].std():.2f}" for i, n in enumerate(NAMES))
    )


GROUPS = {
    "identical h2h": [4 + PAIRS.index(TWINS)],
    "identical means": [NAMES.index(n) for n in TWINS],
    "unequal means": [NAMES.index(n) for n in NAMES if n not in TWINS],
    "unequal h2h": [4 + i for i, p in enumerate(PAIRS) if p != TWINS],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leagues", type=int, default=1000, help="leagues per cell")
    parser.add_argument("--deals", type=int, default=20, help="deals per table")
    parser.add_argument("--reference", type=int, default=20000, help="tables of the truth")
    args = parser.parse_args()
    host = load()
    started = time.process_time()
    truth, truth_error = truths(host, args.reference, args.deals)
    print(f"truth from {args.reference} plain tables of {args.deals} deals (value +- SE):")
    for i, name in enumerate([*NAMES, *(f"{a} vs {b}" for a, b in PAIRS)]):
        print(f"  {name:22} {truth[i]:+.4f} +- {truth_error[i]:.4f}")
    cells = [("plain", t) for t in PLAIN_SIZES] + [("duplicate", t) for t in DUPLICATE_SIZES]
    covered = {(cell, m): [] for cell in cells for m in METHODS}
    widths = {(cell, m): [] for cell in cells for m in METHODS}
    table = EpisodeRequest(deals=args.deals)
    kept = {"plain": [], "duplicate": []}
    for seed in range(args.leagues):
        plain = LeagueSpec(entrants=ENTRANTS, tables=MOST, seed=seed, table=table)
        played = {
            "plain": play(host, plain),
            "duplicate": play(host, attrs.evolve(plain, duplicate=True)),
        }
        for kind, sums in played.items():
            kept[kind].append(sums)
        for (kind, size), method in itertools.product(cells, METHODS):
            ci = intervals(played[kind].head(size), method, seed)
            with np.errstate(invalid="ignore"):
                covered[(kind, size), method].append((ci[:, 0] <= truth) & (truth <= ci[:, 1]))
            widths[(kind, size), method].append(ci[:, 1] - ci[:, 0])
    print(
        f"\n{args.leagues} leagues per cell, {args.deals} deals a table,"
        f" {time.process_time() - started:.0f} s CPU"
    )
    print("coverage of the 95% intervals, % (SE over leagues); the target is 95 +- 2")
    header = f"| {'league':17} | {'method':10} |" + "".join(f" {g:>15} |" for g in GROUPS)
    print(header)
    print("|" + "---|" * (2 + len(GROUPS)))
    for cell, method in itertools.product(cells, METHODS):
        hits = np.array(covered[cell, method])
        line = f"| {f'{cell[0]} {cell[1]:>2} tables':17} | {method:10} |"
        for rows in GROUPS.values():
            share = hits[:, rows].mean(1)
            line += f" {100 * share.mean():5.1f} ({100 * share.std() / np.sqrt(len(share)):.1f}) |"
        print(line)
    why(kept)
    print("\nduplicate vs plain at the same episodes: mean 95% CI width, duplicate / plain")
    for size in (s for s in DUPLICATE_SIZES if 4 * s in PLAIN_SIZES):
        for method in METHODS:
            dup = np.nanmean(widths[("duplicate", size), method], axis=0)
            flat = np.nanmean(widths[("plain", 4 * size), method], axis=0)
            print(
                f"  {size} groups x 4 vs {4 * size} tables, {method:10}:"
                f" mean score x{dup[:4].mean() / flat[:4].mean():.2f},"
                f" head-to-head x{dup[4:].mean() / flat[4:].mean():.2f}"
            )
    print(f"\nthe standings mark intervals over fewer than {MIN_TABLES} tables")


if __name__ == "__main__":
    main()
