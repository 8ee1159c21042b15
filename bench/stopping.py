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

Each look's interval is drawn ``naive`` (95% at every look) or at ``pocock``'s level
(:func:`arena.league.looks.pocock_alpha`); for a rule that stops on one statistic's mean,
``stage-wise`` decides at Pocock's level and reports the stage-wise ordering interval at the
stop (:func:`arena.league.looks.stagewise_interval`, what ``arena compare`` reports).
Coverage is the share of stopped intervals holding the truth, with its binomial standard
error. The width rule on the league's tables is also played in finer rounds
(``--league-rounds``; ``league run --target-ci`` looks after a fortieth of its cap).

Allocation. An allocated league chooses who sits with whom from its results, so resampling
whole tables cannot stand in for it: real tables of every group of four of
``--alloc-pool`` are the world, and simulated allocated leagues draw each table from its
group's tables (:func:`allocation_coverage`); coverage against the balanced schedule's
estimand and against the mix each entrant actually played.

Savings. The pairing's interval against an unpaired one of the same tables, and the
tables a ``--target-ci`` league plays against balanced rounds of the same league (its
plain schedule cut at the first round whose every half-width is within target): equal for
four entrants at four seats, where every table holds all of them; for ``--alloc-pool``
(more entrants than seats) the target league allocates its rounds
(:mod:`arena.league.allocation`).

    python bench/stopping.py --runs 1000 --alloc-runs 500 --league-target 0.025 \
        --league-rounds 30,15,4
"""

from __future__ import annotations

import argparse
import itertools
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import attrs
import numpy as np
from scipy import stats

from arena.league.allocation import Evidence, allocated_draws
from arena.league.compare import compare, looks_allowed, stop_reason
from arena.league.config import LeagueSpec, pool_entrants, rounds
from arena.league.looks import (
    ALPHA,
    Look,
    look_ends,
    pocock_alpha,
    settled,
    stagewise_interval,
)
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
    # a zero-width interval (every pair alike) stops nothing, as in compare
    "compare": lambda ci, n, target: (
        stop_reason(ci[0, 0], ci[0, 1], n, target, spread=ci[0, 1] > ci[0, 0]) != "cap"
    ),
    "separate": lambda ci, n, target: n >= 2 and settled(ci[0, 0], ci[0, 1], target),
}


def methods(ends: tuple[int, ...], rule: str, columns: int) -> dict[str, float]:
    """Each look's two-sided level under each method, for looks at ``ends`` units; the
    stage-wise interval (decided at Pocock's level, drawn at the stop) for a rule that
    stops on one statistic's mean."""
    found = {"naive": ALPHA, "pocock": pocock_alpha(ends)}
    if rule != "width" and columns == 1:
        found["stage-wise"] = pocock_alpha(ends)
    return found


def stopped(
    units: np.ndarray,
    rng,
    ends: tuple[int, ...],
    alpha: float,
    rule: Rule,
    target: float,
    bounds: tuple[float, float],
    stagewise: bool = False,
) -> tuple[np.ndarray, int]:
    """One resampled run: its intervals at the look where it stopped (the stage-wise one
    with ``stagewise``), and the units played."""
    drawn = units[rng.integers(len(units), size=ends[-1])]
    seen = []
    for end in ends:
        values = drawn[:end]
        ci, _ = Tables(range(end)).ratio_ci(values, np.ones_like(values), bounds, alpha)
        if stagewise:
            seen.append(_look(values[:, 0], rule, target, alpha))
        if rule(ci, end, target) or end == ends[-1]:
            if stagewise:
                ci = np.array([stagewise_interval(seen, alpha, bounds)])
            return ci, end


def _look(values: np.ndarray, rule: Rule, target: float, alpha: float) -> Look:
    """A look as the stage-wise interval needs it; under ``separate`` its inner region: the
    |mean| at which the interval would lie within [-target, target]."""
    n, sd = len(values), float(values.std(ddof=1)) if len(values) > 1 else 0.0
    inner = 0.0
    if rule is RULES["separate"] and n > 1:
        inner = max(0.0, target - float(stats.t.isf(alpha / 2, n - 1)) * sd / np.sqrt(n))
    return Look(n, float(values.mean()), sd, inner)


def coverage_cells(label, units, truth, ends, rules, runs, target, bounds, naive=False) -> None:
    """Print coverage and mean units played for every rule and method (or the ``naive``
    one alone) on one world."""
    for rule in rules:
        levels = {"naive": ALPHA} if naive else methods(ends, rule, units.shape[1])
        for method, alpha in levels.items():
            rng = np.random.default_rng(7)
            held, played = 0, []
            for _ in range(runs):
                ci, n = stopped(
                    units, rng, ends, alpha, RULES[rule], target, bounds, method == "stage-wise"
                )
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
    print(
        f"\nleague tables: {spec.tables} tables of {', '.join(names)}, {args.league_deals} deals;"
        f" cap {args.league_cap}, target {args.league_target};"
        f" sd per table {', '.join(f'{s:.3f}' for s in scores.std(0, ddof=1))}"
    )
    means = scores.mean(0)
    worlds = {
        "unequal": (scores, means),
        "identical": (scores - means + means.mean(), np.full(len(names), means.mean())),
    }
    default, _ = rounds(args.league_cap, len(names))
    sizes = [default] + [int(n) for n in args.league_rounds.split(",") if int(n) != default]
    for size in sizes:
        print(f"# rounds of {size} ({len(look_ends(args.league_cap, size))} looks)")
        for world, (units, truth) in worlds.items():
            coverage_cells(
                f"league {world} r{size}",
                units,
                truth,
                look_ends(args.league_cap, size),
                ("width",),
                args.runs,
                args.league_target,
                SCORE_RANGE,
                naive=size != default,  # Pocock's level is for at most MAX_LOOKS looks
            )


def allocation_coverage(host, args) -> None:
    """Coverage of an allocated ``--target-ci`` league's standings at its stop.

    Real tables of every group of four of the ``--alloc-pool`` entrants (``--alloc-ref``
    each, seats in seeded order) are the world. A simulated league seats each round by
    :func:`~arena.league.allocation.allocated_draws` from its own rows so far and draws each
    table's scores from its group's tables; it stops at the first round whose every
    half-width is within target (the standings' 95% t-intervals, as ``league run``). Two
    truths per entrant: the balanced schedule's estimand (its mean score over the groups a
    long balanced league seats it in, each group's mean from the world) and the estimand of
    the mix it played (the mean, over the tables it sat at, of its group's mean there).
    """
    entrants = pool_entrants(SeatSpec.parse(n) for n in args.alloc_pool.split(","))
    names = [e.name for e in entrants]
    table = EpisodeRequest(deals=args.league_deals)
    world: dict[frozenset, list[dict[str, float]]] = {}
    rng = np.random.default_rng(2026)
    start = time.process_time()
    for group in itertools.combinations(range(len(names)), table.seats):
        key = frozenset(names[e] for e in group)
        world[key] = []
        for _ in range(args.alloc_ref):
            slots = [entrants[e] for e in rng.permutation(list(group))]
            request = attrs.evolve(
                table, seed=int(rng.integers(2**62)), seat_specs=tuple(e.spec for e in slots)
            )
            seats = run_episode(host, request)[0].to_json()["seats"]
            world[key].append({slots[s["slot"]].name: s["score"] for s in seats})
    group_mean = {
        key: {name: float(np.mean([t[name] for t in tables])) for name in key}
        for key, tables in world.items()
    }
    long = LeagueSpec(entrants, tables=args.alloc_balanced, seed=1, table=table)
    seated: dict[str, list[float]] = {name: [] for name in names}
    for fixture in fixtures(long):
        key = frozenset(fixture.entrants)
        for name in key:
            seated[name].append(group_mean[key][name])
    balanced = {name: float(np.mean(values)) for name, values in seated.items()}
    spec = LeagueSpec(
        entrants, tables=args.alloc_cap, seed=0, table=table, target_ci=args.league_target
    )
    print(
        f"\nallocated league of {', '.join(names)}: {args.alloc_ref} real tables of each of"
        f" {len(world)} groups ({time.process_time() - start:.1f}s CPU); cap {spec.tables} in"
        f" rounds of {spec.round_tables}, target {spec.target_ci}; {args.alloc_runs} leagues"
    )
    print(
        "balanced estimand " + ", ".join(f"{name} {value:.4f}" for name, value in balanced.items())
    )
    held = {"balanced": 0, "played mix": 0}
    tables_played, gap = [], []
    for run in range(args.alloc_runs):
        shown, played_mean, count = _allocated_run(
            attrs.evolve(spec, seed=run), world, group_mean, np.random.default_rng(run)
        )
        tables_played.append(count)
        for s in shown:
            low, high = s.ci95
            held["balanced"] += int(low <= balanced[s.entrant] <= high)
            held["played mix"] += int(low <= played_mean[s.entrant] <= high)
            gap.append(played_mean[s.entrant] - balanced[s.entrant])
    trials = args.alloc_runs * len(names)
    for truth, count in held.items():
        share = count / trials
        se = np.sqrt(share * (1 - share) / trials)
        mark = "" if abs(share - 0.95) <= 0.02 else "  outside 95 +- 2"
        print(f"coverage of the {truth:<11} estimand {share:.3f} +-{se:.3f}{mark}")
    print(
        f"tables played {np.mean(tables_played):.1f} of {spec.tables}; played mix less"
        f" balanced estimand: mean {np.mean(gap):+.4f}, largest |{np.max(np.abs(gap)):.4f}|"
    )


def _allocated_run(spec: LeagueSpec, world, group_mean, rng):
    """One simulated allocated league: its standings at the stop, each entrant's played-mix
    estimand, and the tables played."""
    rows: list[SeatRow] = []
    mix: dict[str, list[float]] = {e.name: [] for e in spec.entrants}

    def evidence(before: int) -> dict[str, Evidence]:
        return {
            s.entrant: Evidence((s.ci95[1] - s.ci95[0]) / 2, s.ci_tables, 0.0)
            for s in standings(rows)
        }

    names = [e.name for e in spec.entrants]
    shown = []
    for index, (picks, _) in enumerate(allocated_draws(spec, evidence)):
        key = frozenset(names[e] for e in picks)
        scores = world[key][rng.integers(len(world[key]))]
        for name in key:
            rows.append(SeatRow(index, index, name, scores[name], 0))
            mix[name].append(group_mean[key][name])
        if (index + 1) % spec.round_tables == 0 or index + 1 == spec.tables:
            shown = standings(rows)
            if all((s.ci95[1] - s.ci95[0]) / 2 <= spec.target_ci for s in shown):
                break
    return shown, {name: float(np.mean(v)) for name, v in mix.items()}, index + 1


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


PARTS = {
    "pairs": pair_pools,
    "league": league_pool,
    "allocation": allocation_coverage,
    "savings": lambda host, args: league_savings(
        host, list(LEAGUE), args.league_cap, args.league_target, args
    ),
    "allocated-savings": lambda host, args: league_savings(
        host, args.alloc_pool.split(","), args.alloc_cap, args.league_target, args
    ),
}


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
    parser.add_argument("--alloc-ref", type=int, default=200, help="real tables per group")
    parser.add_argument("--alloc-balanced", type=int, default=6000, help="tables of balanced")
    parser.add_argument("--alloc-runs", type=int, default=1000)
    parser.add_argument(
        "--league-rounds", default="15,4", help="round sizes for the width rule, besides a tenth"
    )
    parser.add_argument("--parts", default=",".join(PARTS), help="which parts to run")
    args = parser.parse_args()
    host = load()
    for part in args.parts.split(","):
        PARTS[part](host, args)


if __name__ == "__main__":
    main()
