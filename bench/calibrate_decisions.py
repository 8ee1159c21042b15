"""Show the decision read-out finds planted traits: power at 5, 20 and 100 episodes, and
how often two identical policies' intervals call them different.

Each *trait league* has the pool ``bayes, pressure, random, planted:TRAIT``: four entrants
for four seats, so every table seats each once, in an order drawn per table by the league
schedule (:func:`arena.league.schedule.schedule`). A *long* league has 100 tables; its
consecutive blocks of K tables are leagues of K (every table is its own independent
draw). Each episode is played by :func:`arena.runner.run_episode` with the ``decisions``
reporter alone, and a league's figures come from that reporter's own pooling
(``arena_plugins.decisions.pool``, what ``arena league show --json`` prints under
``["audit"]["decisions"]``).

A trait is *found* in a league when the planted entrant's figure is beyond every other
entrant's in the trait's direction and its 95% interval excludes the bayes entrant's
estimate (:data:`TRAITS`: which figure, which way). Power is the share of leagues where it
is found.

The control league (``bayes, planted:bayes, pressure, random``) seats bayes twice under two
names: a figure *differs* when |a - b| > sqrt(half_a^2 + half_b^2) (half: its interval's
half-width), which for independent estimates with normal errors happens 5% of the time.
Coverage: the share of control leagues whose planted:bayes interval covers bayes's value
pooled over every control episode of the run (the reference).

Every seed derives from the master seed and the league's place in the run, so
``--workers 1`` and ``--workers 2`` print the same figures.

    python bench/calibrate_decisions.py --leagues 6 --workers 2 --out decisions.json
    python bench/calibrate_decisions.py --leagues 1 --workers 1          # a quick look
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from arena.league.config import LeagueSpec, pool_entrants
from arena.league.schedule import schedule
from arena.plugins import load
from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatSpec
from arena_plugins.decisions import FIGURES, SECTION, pool

SIZES = (5, 20, 100)
"""League lengths K, in episodes; the longest is the length of a long league."""
DEALS = 20
FIELD = ("bayes", "pressure", "random")
CONTROL = "planted:bayes"
TRAITS: dict[str, tuple[tuple[str, int], ...]] = {
    "planted:overbids": (("bidChance", -1), ("overreach", +1)),
    "planted:never-challenges": (("missedCatches", +1), ("challengeRate", -1)),
    "planted:targets:pressure": (("targeting", +1),),
    "planted:adapts": (("followsBluffs", +1),),
}
"""Each planted entrant: the figures made for its trait and the way it sits (+1: high)."""

_host = None


def _seed(master: int, *key: int) -> int:
    return int(np.random.SeedSequence(master, spawn_key=key).generate_state(1)[0])


def requests(planted: str, seed: int) -> list[EpisodeRequest]:
    """One long league's tables: the field and ``planted``, each seated once per table."""
    spec = LeagueSpec(
        entrants=pool_entrants(SeatSpec.parse(s) for s in (*FIELD, planted)),
        schedule="random",
        tables=SIZES[-1],
        seed=seed,
        table=EpisodeRequest(deals=DEALS),
    )
    return [fixture.request for fixture in schedule(spec)]


def play(request: EpisodeRequest) -> dict[str, Any]:
    """One episode's results as a league store keeps them, with the decisions section only."""
    global _host
    if _host is None:
        _host = load({})
        for name in set(_host.registry.reporters) - {SECTION}:
            del _host.registry.reporters[name]
    results, _ = run_episode(_host, request, environ={})
    return results.to_json()


def fan_out(work, jobs: Sequence, workers: int) -> list:
    """``[work(job) for job in jobs]`` over ``workers`` forked processes."""
    if workers == 1:
        return [work(job) for job in jobs]
    with multiprocessing.get_context("fork").Pool(workers) as processes:
        return processes.map(work, jobs, chunksize=16)


def leagues_of(long: Sequence[dict[str, Any]]) -> dict[int, list[dict[str, Any]]]:
    """Each league length K: the pooled sections of the long league's blocks of K tables."""
    return {
        size: [pool(long[start : start + size]) for start in range(0, len(long), size)]
        for size in SIZES
    }


def found(league: dict[str, Any], planted: str, figure: str, way: int, spare: str = "") -> bool:
    """The planted figure is beyond every other entrant's (but ``spare``'s), its interval
    clear of bayes's value."""
    entrants = league["entrants"]
    mine = entrants[planted]["figures"][figure]
    if mine["value"] is None or mine["ci"] is None:
        return False
    others = [
        entrants[name]["figures"][figure]["value"]
        for name in entrants
        if name not in (planted, spare)
    ]
    if any(other is None or way * (mine["value"] - other) <= 0 for other in others):
        return False
    bayes = entrants["bayes"]["figures"][figure]["value"]
    low, high = mine["ci"]
    return high < bayes if way < 0 else low > bayes


def differ(a: dict[str, Any], b: dict[str, Any]) -> bool | None:
    """Two figures' intervals say they differ; None when either has no interval."""
    if a["ci"] is None or b["ci"] is None:
        return None
    half_a, half_b = (a["ci"][1] - a["ci"][0]) / 2, (b["ci"][1] - b["ci"][0]) / 2
    return abs(a["value"] - b["value"]) > math.hypot(half_a, half_b)


def covers(figure: dict[str, Any], reference: float | None) -> bool | None:
    if figure["ci"] is None or reference is None:
        return None
    return figure["ci"][0] <= reference <= figure["ci"][1]


def share(hits: Sequence[bool | None]) -> dict[str, Any]:
    counted = [hit for hit in hits if hit is not None]
    return {
        "hits": sum(counted),
        "n": len(counted),
        "rate": sum(counted) / len(counted) if counted else None,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--leagues", type=int, default=6, help="long leagues per pool")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--seed", type=int, default=38)
    parser.add_argument("--out", help="write every rate as JSON here")
    args = parser.parse_args(argv)

    pools = (*TRAITS, CONTROL)
    jobs = [
        request
        for p, planted in enumerate(pools)
        for i in range(args.leagues)
        for request in requests(planted, _seed(args.seed, p, i))
    ]
    started, cpu = time.perf_counter(), time.process_time()
    played = fan_out(play, jobs, args.workers)
    wall = time.perf_counter() - started
    size = SIZES[-1]
    longs = [played[i : i + size] for i in range(0, len(played), size)]
    by_pool = {
        planted: [leagues_of(longs[p * args.leagues + i]) for i in range(args.leagues)]
        for p, planted in enumerate(pools)
    }
    power = {
        f"{planted} {figure}{' (but random)' if spare else ''}": {
            k: share(
                [
                    found(lg, planted, figure, way, spare)
                    for long in by_pool[planted]
                    for lg in long[k]
                ]
            )
            for k in SIZES
        }
        for planted, figures in TRAITS.items()
        for figure, way in figures
        for spare in ("", "random")
    }
    control = by_pool[CONTROL]
    everything = pool(
        [results for i in range(args.leagues) for results in longs[len(TRAITS) * args.leagues + i]]
    )
    reference = everything["entrants"]["bayes"]["figures"]
    false_difference, coverage = {}, {}
    for figure in FIGURES:
        false_difference[figure], coverage[figure] = {}, {}
        for k in SIZES:
            leagues = [lg["entrants"] for long in control for lg in long[k]]
            false_difference[figure][k] = share(
                [
                    differ(e["bayes"]["figures"][figure], e[CONTROL]["figures"][figure])
                    for e in leagues
                ]
            )
            coverage[figure][k] = share(
                [covers(e[CONTROL]["figures"][figure], reference[figure]["value"]) for e in leagues]
            )
    report = {
        "command": " ".join(sys.argv),
        "episodes": len(jobs),
        "deals": DEALS,
        "leagues": {k: args.leagues * size // k for k in SIZES},
        "wallSeconds": round(wall, 1),
        "mainCpuSeconds": round(time.process_time() - cpu, 1),
        "power": power,
        "falseDifference": false_difference,
        "coverage": coverage,
    }
    print(table(report))
    if args.out:
        with open(args.out, "w") as out:
            json.dump(report, out, indent=1)
    return 0


def _cell(rate: dict[str, Any]) -> str:
    return "-" if rate["rate"] is None else f"{rate['rate']:.2f} ({rate['n']})"


def table(report: dict[str, Any]) -> str:
    """The report as markdown tables (the form docs/decisions.md keeps)."""
    head = "| | " + " | ".join(f"K = {k}" for k in SIZES) + " |\n|---|" + "---|" * len(SIZES)
    lines = [
        f"{report['episodes']} episodes of {report['deals']} deals, leagues per K"
        f" {report['leagues']}, {report['wallSeconds']} s",
        "",
        "Power (share of leagues where found, (leagues)):",
        "",
        head,
    ]
    lines += [
        f"| {name} | " + " | ".join(_cell(r) for r in row.values()) + " |"
        for name, row in report["power"].items()
    ]
    for title, key in (
        (
            "Identical policies (bayes, planted:bayes): share of leagues called different:",
            "falseDifference",
        ),
        (
            "Coverage: share of leagues whose planted:bayes interval covers the reference:",
            "coverage",
        ),
    ):
        lines += ["", title, "", head]
        lines += [
            f"| {name} | " + " | ".join(_cell(r) for r in row.values()) + " |"
            for name, row in report[key].items()
        ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
