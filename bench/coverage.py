"""How often the league's 95% intervals hold the truth, by league size and method, in one run.

Many leagues of the same four scripted entrants (bayes, pressure, random and a
second bayes, ``bayes#2``), each on its own master seed, seated four ways from the
same draws:

- ``plain``: the schedule's plain tables;
- ``balanced``: the same tables seated so that who sits right before whom evens out
  (:func:`balanced_seating`, tried here, not in the schedule);
- ``rotated``: duplicate groups as the schedule seated them before, rotations of the
  slots (duplicate schedule 1);
- ``duplicate``: duplicate groups seated by a Williams square on the table order
  (:func:`arena.league.schedule.duplicate_order`) with the partners (the entrant each
  follows twice) as drawn (duplicate schedule 2, :func:`drawn`);
- ``paired``: duplicate groups as the schedule seats them now, those squares with the
  partners evened out over the groups (:func:`arena.league.schedule.partnered`).

Every league's standings and head-to-head intervals are checked against the truth:

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
standings use (:meth:`arena.league.standings.Tables.ratio_ci`); ``strat-t``
post-stratifies by the seating (:meth:`arena.league.standings.Tables.stratified_ci`): a
plain table by the entrant right before each (a pair by how far apart the two sit), a
duplicate group by each entrant's partner (:func:`arena.league.standings.partners`; a
pair by its first entrant's). Paired groups' strat-t is what the standings draw
(:meth:`arena.league.standings.Tables.intervals`: the t-interval where strat-t cannot be
drawn, at 2 and 3 groups); elsewhere a seating missing from a league's tables gives the
whole range.
Coverage is the share of intervals holding the truth; its standard error is
the spread of each league's covered share over leagues (with one target per
league, the binomial sqrt(p (1 - p) / leagues)). A league of T tables is the
first T tables of the league's 40 (a league with more tables starts with the
same tables), so the sizes of one seed are not independent of each other,
while every cell's leagues are.

Widths compare each duplicate seating with plain at the same number of episodes:
T duplicate groups of 4 episodes against 4T plain tables.

    python bench/coverage.py --leagues 1000 --deals 20 --reference 20000
"""

from __future__ import annotations

import argparse
import itertools
import time
import warnings
from collections import Counter
from collections.abc import Iterable, Iterator

import attrs
import numpy as np
from scipy import stats

from arena import seeding
from arena.league.config import LeagueSpec, pool_entrants
from arena.league.schedule import Draw, Fixture, fixtures
from arena.league.standings import (
    MIN_GROUPS,
    MIN_PAIRED_GROUPS,
    MIN_TABLES,
    PER_DEAL_RANGE,
    SCORE_RANGE,
    Partners,
    Tables,
    partners,
)
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
DUPLICATES = ("rotated", "duplicate")
"""Duplicate groups seated as before: by rotations (:func:`rotated`) and by a Williams
square with partners as drawn (:func:`drawn`)."""
METHODS = ("percentile", "BCa", "boot-t", "t")
KINDS = {
    "plain": (*METHODS, "strat-t"),
    "balanced": ("t", "strat-t"),
    "rotated": METHODS,
    "duplicate": (*METHODS, "strat-t"),
    "paired": ("t", "strat-t"),
}
"""The leagues of each seed and the methods each is measured with."""
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
    strata: np.ndarray
    """(tables, targets): the target's seating at the table, 0-2. A plain table: for an
    entrant's mean the entrant right before it (of the three others), for a pair the
    table positions from its first entrant to its second, less one. A duplicate group:
    its partner (:func:`arena.league.standings.partners`), for a pair its first
    entrant's."""

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


def rotated(spec: LeagueSpec) -> Iterator[Fixture]:
    """The duplicate schedule before (:data:`~arena.league.schedule.DUPLICATE_SCHEDULE` 1):
    rotation r of a plain table moves the entrant of slot (s + r) into slot s."""
    for fixture in fixtures(spec):
        for r in range(spec.table.seats):
            order = [(slot + r) % spec.table.seats for slot in range(spec.table.seats)]
            yield attrs.evolve(
                fixture,
                rotation=r,
                entrants=tuple(fixture.entrants[i] for i in order),
                request=attrs.evolve(
                    fixture.request,
                    seat_specs=tuple(fixture.request.seat_specs[i] for i in order),
                ),
            )


def balanced_seating(spec: LeagueSpec) -> Iterator[Fixture]:
    """Plain tables seated so that who sits right before whom evens out: of the 24 ways to
    seat a table's four entrants on its slots, the one whose (entrant, entrant before it)
    pairs have come least so far, ties in a seeded order."""
    follows: Counter = Counter()
    seats = spec.table.seats
    for fixture in fixtures(spec):
        order = seeding.table_order(fixture.request.seed, seats)
        ways = list(itertools.permutations(range(seats)))
        shuffled = seeding.stream(spec.seed, BENCH, 1, fixture.table).permutation(len(ways))
        rings = [[fixture.entrants[way[slot]] for slot in order] for way in ways]
        pairs = [[(ring[i], ring[i - 1]) for i in range(seats)] for ring in rings]
        best = min(shuffled, key=lambda w: sum(follows[p] for p in pairs[w]))
        way = ways[best]
        follows.update(pairs[best])
        yield attrs.evolve(
            fixture,
            entrants=tuple(fixture.entrants[i] for i in way),
            request=attrs.evolve(
                fixture.request, seat_specs=tuple(fixture.request.seat_specs[i] for i in way)
            ),
        )


def drawn(spec: LeagueSpec) -> Iterator[Draw]:
    """The plain tables' draws as drawn, partners and all (a duplicate league's under
    schedule 2; the schedule now evens its partners out)."""
    for fixture in fixtures(spec):
        yield [NAMES.index(n) for n in fixture.entrants], fixture.request.seed


def play(host, spec: LeagueSpec, schedule: Iterable[Fixture] | None = None) -> TableSums:
    """Every table of ``spec`` (or of ``schedule``, ``spec``'s tables seated otherwise),
    played in this process on the league's own engine choice."""
    column = {name: i for i, name in enumerate(NAMES)}
    pair = {p: i for i, p in enumerate(PAIRS)}
    widths = (4, 4, len(PAIRS), len(PAIRS), 4, 4, 4 + len(PAIRS))
    sums = TableSums(*(np.zeros((spec.tables, n)) for n in widths))
    seatings = []
    for fixture in fixtures(spec) if schedule is None else schedule:
        results, records = run_episode(host, fixture.request)
        document = results.to_json()
        t = fixture.table
        order = next(iter(records))["tableOrder"]
        before = {order[i]: order[i - 1] for i in range(len(order))}
        position = {fixture.entrants[slot]: i for i, slot in enumerate(order)}
        for name in NAMES:
            others = [n for n in NAMES if n != name]
            previous = fixture.entrants[before[fixture.entrants.index(name)]]
            sums.strata[t, column[name]] = others.index(previous)
        for i, (a, b) in enumerate(PAIRS):
            sums.strata[t, 4 + i] = (position[b] - position[a]) % 4 - 1
        for slot, (name, seat) in enumerate(zip(fixture.entrants, document["seats"], strict=True)):
            seatings.append((fixture.index, t, fixture.request.seed, slot, name))
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
    if spec.duplicate:  # a group's seating: each entrant's partner, as the standings find it
        strata = Tables(range(spec.tables), partners=partners(seatings, NAMES)).strata(NAMES)
        sums.strata[:, :4] = strata
        for i, (a, _) in enumerate(PAIRS):
            sums.strata[:, 4 + i] = strata[:, column[a]]
    return sums


def intervals(sums: TableSums, kind: str, method: str, seed: int) -> np.ndarray:
    """(targets, 2): every target's 95% interval by ``method`` over a league seated as
    ``kind``, clipped as the standings clip theirs, to the range each figure can take."""
    bounds = np.array([SCORE_RANGE] * 4 + [PER_DEAL_RANGE] * len(PAIRS))
    return np.clip(_unclipped(sums, kind, method, seed), bounds[:, :1], bounds[:, 1:])


TARGETS = ((slice(0, 4), SCORE_RANGE), (slice(4, None), PER_DEAL_RANGE))
"""The targets' rows (means, then pairs) and the range each can take."""


def _unclipped(sums: TableSums, kind: str, method: str, seed: int) -> np.ndarray:
    numerator, denominator = sums.ratios()
    g = numerator.shape[1]
    if method == "t":
        tables = Tables(range(g))
        return np.concatenate(
            [tables.ratio_ci(numerator[rows].T, denominator[rows].T, b)[0] for rows, b in TARGETS]
        )
    strata = sums.strata.astype(int)
    if method == "strat-t" and kind == "paired":  # the standings' own: strat-t, else t
        # the strata are the league's (TableSums.strata, from partners()); the standings
        # weigh them as 1/3 each, one per partner a four-seat entrant can have
        tables = Tables(range(g), duplicate=True, partners=Partners(tuple(NAMES), {}))
        return np.concatenate(
            [
                tables.intervals(numerator[rows].T, denominator[rows].T, b, strata[:, rows])[1]
                for rows, b in TARGETS
            ]
        )
    if method == "strat-t":  # a seating missing from the tables: the whole range
        found, _ = Tables(range(g)).stratified_ci((numerator / denominator).T, strata, 3, (-1, 1))
        return np.where(np.isnan(found), [-np.inf, np.inf], found)
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
    """What drives the spread, and how far each duplicate schedule cancels it."""
    plain = TableSums.stack(kept["plain"])
    others = [NAMES.index(n) for n in NAMES if n != "random"]
    after = plain.scores_after_random[:, others].sum(0) / plain.after_random[:, others].sum(0)
    elsewhere = (plain.scores - plain.scores_after_random)[:, others].sum(0) / (
        plain.episodes - plain.after_random
    )[:, others].sum(0)
    print("\nwhat the seating does, over every league's 40 tables:")
    print(
        "  mean score right after random in table order / elsewhere: "
        + ", ".join(
            f"{NAMES[i]} {a:.3f} / {b:.3f}"
            for i, a, b in zip(others, after, elsewhere, strict=True)
        )
    )
    fours = plain.after_random[: len(plain.after_random) // 4 * 4].reshape(-1, 4, 4).sum(1)
    four = (plain.scores / plain.episodes)[: len(plain.scores) // 4 * 4]
    four = four.reshape(-1, 4, 4).mean(1)
    print(
        "  episodes (of 4) in which an entrant sits right after random, variance over groups:"
        f" 4 plain tables {fours[:, others].var():.2f} (binomial 4 x 1/3 x 2/3 = 0.89)"
    )
    for kind in DUPLICATES:
        duplicate = TableSums.stack(kept[kind])
        group = duplicate.scores / duplicate.episodes
        print(
            f"  {kind}: variance of the same {duplicate.after_random[:, others].var():.2f};"
            " SD of a group's mean score / of the mean of 4 plain tables: "
            + ", ".join(
                f"{n} {group[:, i].std() / four[:, i].std():.2f}" for i, n in enumerate(NAMES)
            )
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
    cells = [(kind, t) for kind in ("plain", "balanced") for t in PLAIN_SIZES]
    cells += [(kind, t) for kind in (*DUPLICATES, "paired") for t in DUPLICATE_SIZES]
    cells = [(cell, m) for cell in cells for m in KINDS[cell[0]]]
    covered = {cell: [] for cell in cells}
    widths = {cell: [] for cell in cells}
    table = EpisodeRequest(deals=args.deals)
    kept = {kind: [] for kind in KINDS}
    for seed in range(args.leagues):
        plain = LeagueSpec(entrants=ENTRANTS, tables=MOST, seed=seed, table=table)
        duplicate = attrs.evolve(plain, duplicate=True)
        played = {
            "plain": play(host, plain),
            "balanced": play(host, plain, balanced_seating(plain)),
            "rotated": play(host, duplicate, rotated(plain)),
            "duplicate": play(host, duplicate, fixtures(duplicate, drawn(plain))),
            "paired": play(host, duplicate),
        }
        for kind, sums in played.items():
            kept[kind].append(sums)
        for (kind, size), method in cells:
            ci = intervals(played[kind].head(size), kind, method, seed)
            with np.errstate(invalid="ignore"):
                covered[(kind, size), method].append((ci[:, 0] <= truth) & (truth <= ci[:, 1]))
            widths[(kind, size), method].append(ci[:, 1] - ci[:, 0])
    print(
        f"\n{args.leagues} leagues per cell, {args.deals} deals a table,"
        f" {time.process_time() - started:.0f} s CPU"
    )
    print("coverage of the 95% intervals, % (SE over leagues); the target is 95 +- 2")
    header = f"| {'league':20} | {'method':10} |" + "".join(f" {g:>15} |" for g in GROUPS)
    print(header)
    print("|" + "---|" * (2 + len(GROUPS)))
    for cell, method in cells:
        hits = np.array(covered[cell, method])
        line = f"| {f'{cell[0]} {cell[1]:>2}':20} | {method:10} |"
        for rows in GROUPS.values():
            share = hits[:, rows].mean(1)
            line += f" {100 * share.mean():5.1f} ({100 * share.std() / np.sqrt(len(share)):.1f}) |"
        print(line)
    why(kept)
    print(
        "\nduplicate vs plain at the same episodes: mean 95% CI width, duplicate / plain"
        " (by the same method; strat-t against plain's t, the standings')"
    )
    for kind, size, method in itertools.product(
        (*DUPLICATES, "paired"), DUPLICATE_SIZES, (*METHODS, "strat-t")
    ):
        if 4 * size in PLAIN_SIZES and method in KINDS[kind]:
            dup = np.nanmean(widths[(kind, size), method], axis=0)
            baseline = "t" if method == "strat-t" else method
            flat = np.nanmean(widths[("plain", 4 * size), baseline], axis=0)
            print(
                f"  {kind} {size} groups x 4 vs {4 * size} tables, {method:10}:"
                f" mean score x{dup[:4].mean() / flat[:4].mean():.2f},"
                f" head-to-head x{dup[4:].mean() / flat[4:].mean():.2f}"
            )
    print(
        f"\nthe standings mark intervals over fewer than {MIN_TABLES} plain tables,"
        f" {MIN_GROUPS} duplicate groups or {MIN_PAIRED_GROUPS[4]} paired four-seat groups"
        " (strat-t)"
    )


if __name__ == "__main__":
    main()
