"""Do the intervals still cover at 95% when a run stops at a favourable look, and what does
stopping (and allocating rounds) save?

Coverage. One run plays pools of real results, then runs many stopped runs whose units
are drawn with replacement from a pool, so their truth is known exactly: the pool's mean
("unequal") and, for identical entrants, the same values less their mean ("identical":
truth 0 for a difference, the same spread). Two pools:

- pairs: ``--pool`` tables of A and of its twin B on the same deals
  (:func:`arena.league.compare.compare`), for each B in ``--b``; a look's interval is
  the paired t-interval on the pairs' differences;
- league tables: ``--league-pool`` tables of bayes, pressure, random and bayes#2 at
  four seats (every table holds all four); a look's intervals are the standings'
  t-intervals of each entrant's mean score, coverage counted per entrant.

Each run plays rounds (:func:`arena.league.config.rounds`) up to the cap and stops at
the first look its rule accepts:

- ``width``: every half-width <= target (``arena league run --target-ci``);
- ``compare``: half-width <= target or the interval excludes 0 (``arena compare --target-ci``,
  :func:`~arena.league.compare.stop_reason`);
- ``separate``: the difference's interval excludes 0 or lies within [-target, target]
  (``league run --separate``, :func:`arena.league.looks.settled`, on the pairs' differences,
  the same paired t-interval the league draws for an adjacent pair).

Three ways to draw each look's interval: ``naive`` (95% at every look), ``bonferroni``
(1 - 0.05 / K) and ``pocock`` (:func:`arena.league.looks.pocock_alpha`). Coverage is the
share of stopped intervals holding the truth, with its binomial standard error.

Savings. The pairing's interval against an unpaired one of the same tables, and the
tables a ``--target-ci`` league plays against balanced rounds of the same league (its
plain schedule cut at the first round whose every half-width is within target): equal for
four entrants at four seats, where every table holds all of them; for ``--alloc-pool``
(more entrants than seats) the target league allocates its rounds
(:mod:`arena.league.allocation`).

    python bench/stopping.py --runs 2000
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from scipy import stats

from arena.league.compare import ALPHA, compare, looks_allowed, stop_reason
from arena.league.config import LeagueSpec, pool_entrants, rounds
from arena.league.looks import look_ends, pocock_alpha, settled
from arena.league.run import run_league
from arena.league.schedule import fixtures
from arena.league.standings import DIFFERENCE_RANGE, SCORE_RANGE, SeatRow, Tables, standings
from arena.league.store import LeagueStore
from arena.plugins import load
from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatSpec

SEATS = 4
HEADER = "{:<22} rule      method       coverage   +-se {:>9}"
LEAGUE = ("bayes", "pressure", "random", "bayes")

Rule = Callable[[np.ndarray, int, float], bool]
"""Whether a look stops: its intervals (a row per column: low, high), units and target."""


def _half(ci: np.ndarray) -> np.ndarray:
    return (ci[:, 1] - ci[:, 0]) / 2


RULES: dict[str, Rule] = {
    "width": lambda ci, n, target: n >= 2 and bool((_half(ci) <= target).all()),
    "compare": lambda ci, n, target: stop_reason(ci[0, 0], ci[0, 1], n, target) != "cap",
    "separate": lambda ci, n, target: n >= 2 and settled(ci[0, 0], ci[0, 1], target),
}


def methods(ends: tuple[int, ...]) -> dict[str, float]:
    """Each look's two-sided level under each method, for looks at ``ends`` units."""
    return {
        "naive": ALPHA,
        "bonferroni": ALPHA / len(ends),
        "pocock": pocock_alpha(ends),
    }


def stopped(
    units: np.ndarray,
    rng,
    ends: tuple[int, ...],
    alpha: float,
    rule: Rule,
    target: float,
    bounds: tuple[float, float],
) -> tuple[np.ndarray, int]:
    """One resampled run: its intervals at the look where it stopped, and the units played."""
    drawn = units[rng.integers(len(units), size=ends[-1])]
    for end in ends:
        values = drawn[:end]
        ci, _ = Tables(range(end)).ratio_ci(values, np.ones_like(values), bounds, alpha)
        if rule(ci, end, target) or end == ends[-1]:
            return ci, end


def coverage_cells(label, units, truth, ends, rules, runs, target, bounds) -> None:
    """Print coverage and mean units played for every rule and method on one world."""
    for rule in rules:
        for method, alpha in methods(ends).items():
            rng = np.random.default_rng(7)
            held, played = 0, []
            for _ in range(runs):
                ci, n = stopped(units, rng, ends, alpha, RULES[rule], target, bounds)
                held += int(((ci[:, 0] <= truth) & (truth <= ci[:, 1])).sum())
                played.append(n)
            trials = runs * units.shape[1]
            share = held / trials
            se = np.sqrt(share * (1 - share) / trials)
            mark = "" if abs(share - 0.95) <= 0.02 else "  outside 95 +- 2"
            print(
                f"{label:<22} {rule:<9} {method:<11} {share:>9.3f} {se:>6.3f}"
                f" {np.mean(played):>9.1f}{mark}"
            )


def fixed_units(spread: float, target: float) -> int:
    """Fewest units whose 95% t-interval's half-width, at ``spread``, is <= target."""
    n = 2
    while stats.t.ppf(1 - ALPHA / 2, n - 1) * spread / np.sqrt(n) > target:
        n += 1
    return n


def pair_pools(host, args) -> None:
    size, _ = looks_allowed(args.cap, SEATS, args.target)
    ends = look_ends(args.cap, size)
    print(f"\npairs: cap {args.cap} pairs in rounds of {size}, target half-width {args.target}")
    print(HEADER.format("A vs B, world", "pairs"))
    for b in args.b.split(","):
        start = time.process_time()
        pool = compare(
            host,
            SeatSpec.parse(args.a),
            SeatSpec.parse(b),
            EpisodeRequest(deals=args.deals, seats=SEATS),
            tables=args.pool,
            seed=12345,
        )
        a_scores = np.array([p.a_score for p in pool.pairs])
        b_scores = np.array([p.b_score for p in pool.pairs])
        differences = (a_scores - b_scores)[:, None]
        spread = float(differences.std(ddof=1))
        unpaired = float(np.sqrt(a_scores.var(ddof=1) + b_scores.var(ddof=1)))
        print(
            f"# {args.a} vs {b}: {pool.tables} pairs, {args.deals} deals,"
            f" {time.process_time() - start:.1f}s CPU; mean A - B {differences.mean():+.4f},"
            f" sd {spread:.4f}; unpaired / paired width {unpaired / spread:.2f}"
            f" (sd {unpaired:.4f}); fixed 95% design for the target: "
            f"{fixed_units(spread, args.target)} pairs"
        )
        worlds = {
            "unequal": (differences, differences.mean()),
            "identical": (differences - differences.mean(), 0.0),
        }
        for world, (units, truth) in worlds.items():
            label = f"{args.a}-{b} {world}"
            rules = ("width", "compare", "separate")
            coverage_cells(
                label, units, truth, ends, rules, args.runs, args.target, DIFFERENCE_RANGE
            )


def league_pool(host, args) -> None:
    """Coverage of ``league run --target-ci`` (width only) on resampled four-entrant tables."""
    entrants = pool_entrants(SeatSpec.parse(n) for n in LEAGUE)
    spec = LeagueSpec(
        entrants, tables=args.league_pool, seed=99, table=EpisodeRequest(deals=args.league_deals)
    )
    names = [e.name for e in entrants]
    scores = np.zeros((spec.tables, len(names)))
    for fixture in fixtures(spec):
        for seat in _seats(host, fixture):
            scores[fixture.table, names.index(fixture.entrants[seat["slot"]])] = seat["score"]
    size, _ = rounds(args.league_cap, len(names))
    ends = look_ends(args.league_cap, size)
    print(
        f"\nleague tables: {spec.tables} tables of {', '.join(names)}, {args.league_deals} deals;"
        f" cap {args.league_cap} in rounds of {size}, target {args.league_target};"
        f" sd per table {', '.join(f'{s:.3f}' for s in scores.std(0, ddof=1))}"
    )
    means = scores.mean(0)
    worlds = {
        "unequal": (scores, means),
        "identical": (scores - means + means.mean(), np.full(len(names), means.mean())),
    }
    for world, (units, truth) in worlds.items():
        coverage_cells(
            f"league {world}",
            units,
            truth,
            ends,
            ("width",),
            args.runs,
            args.league_target,
            SCORE_RANGE,
        )


def league_savings(host, names: list[str], cap: int, target: float, args) -> None:
    """Tables a ``--target-ci`` league plays (allocated when the pool is larger than the
    table) against balanced rounds: the same league's plain schedule, cut at the first round
    whose every half-width (at the same plain 95%) is within target."""
    entrants = pool_entrants(SeatSpec.parse(n) for n in names)
    table = EpisodeRequest(deals=args.league_deals)
    print(
        f"\nleague of {', '.join(e.name for e in entrants)} at {table.seats} seats;"
        f" {args.league_deals} deals; cap {cap}; target {target}"
    )
    print(f"{'seed':>4} {'target league':>14} {'stopped':>8} {'balanced rounds':>16}")
    played = {"target": [], "balanced": []}
    for seed in range(args.league_seeds):
        spec = LeagueSpec(entrants, tables=cap, seed=seed, table=table, target_ci=target)
        state = _played(spec, host)
        plain = LeagueSpec(entrants, tables=cap, seed=seed, table=table)
        rows = [_seat_row(f, seat) for f in fixtures(plain) for seat in _seats(host, f)]
        balanced = next(
            (
                end
                for end in look_ends(cap, spec.round_tables)
                if all(
                    (s.ci95[1] - s.ci95[0]) / 2 <= target
                    for s in standings([r for r in rows if r.table < end])
                )
            ),
            None,
        )
        played["target"].append(state.done)
        played["balanced"].append(balanced or cap)
        shown = balanced or f">{cap}"
        print(f"{seed:>4} {state.done:>14} {state.stopped or 'cap':>8} {shown:>16}")
    if played["target"]:
        ratio = np.mean(played["target"]) / np.mean(played["balanced"])
        print(
            f"mean tables: target league {np.mean(played['target']):.1f},"
            f" balanced rounds {np.mean(played['balanced']):.1f} (ratio {ratio:.2f})"
        )


def _played(spec: LeagueSpec, host):
    with tempfile.TemporaryDirectory() as folder:
        store = LeagueStore(Path(folder) / "league.sqlite")
        try:
            return run_league(spec, store, host)
        finally:
            store.close()


def _seats(host, fixture):
    return run_episode(host, fixture.request)[0].to_json()["seats"]


def _seat_row(fixture, seat) -> SeatRow:
    name = fixture.entrants[seat["slot"]]
    return SeatRow(fixture.index, fixture.table, name, seat["score"], seat["points"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", default="bayes")
    parser.add_argument("--b", default="pressure,random", help="each B compared with A")
    parser.add_argument("--pool", type=int, default=400)
    parser.add_argument("--deals", type=int, default=10)
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--cap", type=int, default=40)
    parser.add_argument("--target", type=float, default=0.04)
    parser.add_argument("--league-pool", type=int, default=600)
    parser.add_argument("--league-seeds", type=int, default=3)
    parser.add_argument("--league-cap", type=int, default=600)
    parser.add_argument("--league-target", type=float, default=0.03)
    parser.add_argument("--league-deals", type=int, default=20)
    parser.add_argument("--alloc-pool", default="bayes,pressure,random,bayes,pressure,random")
    parser.add_argument("--alloc-cap", type=int, default=900)
    args = parser.parse_args()
    host = load()
    pair_pools(host, args)
    league_pool(host, args)
    league_savings(host, list(LEAGUE), args.league_cap, args.league_target, args)
    league_savings(host, args.alloc_pool.split(","), args.alloc_cap, args.league_target, args)


if __name__ == "__main__":
    main()
