"""Does ``arena compare --target-ci`` still cover at 95% when it stops at a favourable look?

One run plays a pool of real pairs (``--pool`` tables of A and of B on the same deals,
:func:`arena.league.compare.compare`), then runs many comparisons whose pairs are drawn
with replacement from that pool, so their truth is known exactly: the pool's mean
difference ("unequal") and, for identical entrants, the same differences less their
mean ("identical": truth 0, the same spread). Each comparison plays rounds of
a tenth of the cap (at least ``seats`` pairs), up to the cap, and stops as ``arena compare`` does
(:func:`~arena.league.compare.stop_reason`). Two ways to draw each look's interval:

- ``bonferroni``: what ``arena compare`` does, each look at 1 - 0.05 / K (K looks);
- ``naive``: each look at 95%, as if it were the only one.

Coverage is the share of stopped intervals holding the truth, with its binomial
standard error. Also: the pairs a stopped comparison played against the pairs a fixed
design needs for the same half-width, and the paired interval's width against an
unpaired one (A and B on independent tables: the pairs' shared luck no longer cancels).

    python bench/stopping.py --pool 400 --deals 10 --runs 2000 --cap 40 --target 0.04
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy import stats

from arena.league.compare import ALPHA, compare, looks_allowed, paired_interval, stop_reason
from arena.league.config import LeagueSpec, pool_entrants
from arena.league.run import run_league
from arena.league.schedule import fixtures
from arena.league.standings import SeatRow, standings
from arena.league.store import LeagueStore
from arena.plugins import load
from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatSpec


def stopped_interval(
    differences: np.ndarray, rng, cap: int, size: int, target: float, looks: int
) -> tuple[float, float, int]:
    """One resampled comparison: its interval where it stopped, and the pairs it played."""
    drawn = rng.choice(differences, size=cap, replace=True)
    played = 0
    while True:
        played = min(cap, played + size)
        low, high = paired_interval(drawn[:played], ALPHA / looks)
        if stop_reason(low, high, played, target) != "cap" or played >= cap:
            return low, high, played


def fixed_pairs(spread: float, target: float) -> int:
    """Fewest pairs whose 95% t-interval's half-width, at the pool's spread, is <= target."""
    n = 2
    while stats.t.ppf(1 - ALPHA / 2, n - 1) * spread / np.sqrt(n) > target:
        n += 1
    return n


def league_savings(host, seeds: int, cap: int, target: float, deals: int) -> None:
    """Tables a ``--target-ci`` league played, against the fewest tables of a fixed 95%
    league (the first n tables of the same schedule) whose every half-width is <= target."""
    entrants = pool_entrants(SeatSpec.parse(n) for n in ("bayes", "pressure", "random", "bayes"))
    print(f"\nleague of bayes, pressure, random, bayes; {deals} deals; cap {cap}; target {target}")
    print(f"{'seed':>4} {'stopped':>8} {'tables':>7} {'fixed 95%':>10}")
    with tempfile.TemporaryDirectory() as folder:
        for seed in range(seeds):
            table = EpisodeRequest(deals=deals)
            spec = LeagueSpec(entrants, tables=cap, seed=seed, table=table, target_ci=target)
            store = LeagueStore(Path(folder) / f"{seed}.sqlite")
            try:
                state = run_league(spec, store, host)
            finally:
                store.close()
            plain = LeagueSpec(entrants, tables=cap, seed=seed, table=table)
            rows = [_seat_row(f, seat) for f in fixtures(plain) for seat in _seats(host, f)]
            fixed = next(
                (
                    n
                    for n in range(4, cap + 1)
                    if all(
                        (s.ci95[1] - s.ci95[0]) / 2 <= target
                        for s in standings([r for r in rows if r.table < n])
                    )
                ),
                None,
            )
            print(f"{seed:>4} {state.stopped or 'cap':>8} {state.done:>7} {fixed or '>cap':>10}")


def _seats(host, fixture):
    return run_episode(host, fixture.request)[0].to_json()["seats"]


def _seat_row(fixture, seat) -> SeatRow:
    name = fixture.entrants[seat["slot"]]
    return SeatRow(fixture.index, fixture.table, name, seat["score"], seat["points"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", default="bayes")
    parser.add_argument("--b", default="pressure")
    parser.add_argument("--pool", type=int, default=400)
    parser.add_argument("--deals", type=int, default=10)
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--cap", type=int, default=40)
    parser.add_argument("--target", type=float, default=0.04)
    parser.add_argument("--league-seeds", type=int, default=3)
    parser.add_argument("--league-cap", type=int, default=600)
    parser.add_argument("--league-target", type=float, default=0.03)
    parser.add_argument("--league-deals", type=int, default=20)
    args = parser.parse_args()
    seats = 4
    host = load()
    start = time.process_time()
    pool = compare(
        host,
        SeatSpec.parse(args.a),
        SeatSpec.parse(args.b),
        EpisodeRequest(deals=args.deals, seats=seats),
        tables=args.pool,
        seed=12345,
    )
    print(
        f"pool: {pool.tables} pairs of {args.a} vs {args.b}, {args.deals} deals,"
        f" {time.process_time() - start:.1f}s CPU"
    )
    a = np.array([p.a_score for p in pool.pairs])
    b = np.array([p.b_score for p in pool.pairs])
    differences = a - b
    spread = differences.std(ddof=1)
    print(f"pool mean A - B = {differences.mean():+.4f}, sd of a pair's difference {spread:.4f}")
    unpaired = np.sqrt(a.var(ddof=1) + b.var(ddof=1))
    print(
        f"interval width, unpaired / paired, same number of tables: {unpaired / spread:.2f}"
        f" (sd {unpaired:.4f} vs {spread:.4f})"
    )
    worlds = {
        "unequal": (differences, differences.mean()),
        "identical": (differences - differences.mean(), 0.0),
    }
    print(
        f"\n{args.runs} comparisons per cell, cap {args.cap} pairs, target half-width {args.target}"
    )
    print(
        f"{'world':<10} {'method':<11} {'coverage':>9} {'+-se':>6} {'mean pairs':>11} {'fixed':>6}"
    )
    for world, (values, truth) in worlds.items():
        size, looks_at_cap = looks_allowed(args.cap, seats, args.target)
        for method, looks in (("bonferroni", looks_at_cap), ("naive", 1)):
            rng = np.random.default_rng(7)
            held, played = 0, []
            for _ in range(args.runs):
                low, high, n = stopped_interval(values, rng, args.cap, size, args.target, looks)
                held += low <= truth <= high
                played.append(n)
            coverage = held / args.runs
            se = np.sqrt(coverage * (1 - coverage) / args.runs)
            print(
                f"{world:<10} {method:<11} {coverage:>9.3f} {se:>6.3f}"
                f" {np.mean(played):>11.1f} {fixed_pairs(values.std(ddof=1), args.target):>6}"
            )
    league_savings(host, args.league_seeds, args.league_cap, args.league_target, args.league_deals)


if __name__ == "__main__":
    main()
