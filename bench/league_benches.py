"""League figures, each measured side by side in one run (docs/league.md, README).

concurrency  Claude tables against the loopback Messages API (tests/messages_server.py,
             run as its own process) with an injected latency per call: one table of
             4 Claude seats, then N such tables at concurrency N in threads. Target:
             N tables in under 2x the wall time of one.
efficiency   A scripted league at 1 and at 2 worker processes: episodes per second and
             parallel efficiency (rate at 2 / (2 x rate at 1)). Target 85%. Wall time is
             the only honest clock for parallelism, so on a shared machine the figure
             moves with the load; the CPU seconds per episode are printed beside it.
ci           The CI width of the same league (same entrants, same number of episodes)
             with and without duplicate seating: mean 95% CI width over entrants.

    python bench/league_benches.py concurrency --tables 32 --latency 0.2 --deals 3
    python bench/league_benches.py efficiency --episodes 64 --deals 20
    python bench/league_benches.py ci --tables 40 --deals 20
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import attrs

from arena.league.config import Entrant, LeagueSpec, pool_entrants
from arena.league.report import league_report
from arena.league.run import run_league
from arena.league.store import LeagueStore
from arena.plugins import load
from arena.runner import EpisodeRequest
from arena.seats import SeatSpec

ROOT = Path(__file__).resolve().parent.parent
CLAUDES = ("claude:honest", "claude:bluffer", "claude:tracker", "claude:policies/honest.md")
SCRIPTED = ("bayes", "pressure", "random", "bayes")  # the second bayes is entrant bayes#2


def entrants(names) -> tuple[Entrant, ...]:
    return pool_entrants(SeatSpec.parse(n) for n in names)


def timed_league(spec: LeagueSpec, executor: str, warm: int = 0) -> tuple[float, float, Path]:
    """Wall and CPU seconds (this process and its children) to play ``spec`` from scratch.

    With ``warm``, the clock starts once ``warm`` episodes are stored, so worker
    start-up (seconds of imports per spawned process) is left out of the rate.
    """
    db = Path(tempfile.mkdtemp(prefix="league-bench")) / "l.sqlite"
    host = load()
    store = LeagueStore(db)
    start = {"wall": time.perf_counter(), "cpu": _cpu()}

    def clock(state) -> None:
        if state.done == warm and "warm" not in start:
            start.update(warm=True, wall=time.perf_counter(), cpu=_cpu())

    try:
        run_league(spec, store, host, executor=executor, progress=clock)
    finally:
        store.close()
    return time.perf_counter() - start["wall"], _cpu() - start["cpu"], db


def _cpu() -> float:
    own, children = os.times(), os.times()
    return own.user + own.system + children.children_user + children.children_system


def concurrency(args) -> None:
    server = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "tests/messages_server.py"),
            "--port",
            "0",
            "--latency",
            str(args.latency),
        ],  # fmt: skip
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = server.stdout.readline().split(" on ")[1].split()[0]
        os.environ |= {"ANTHROPIC_API_KEY": "bench", "ANTHROPIC_BASE_URL": url}
        import anthropic  # noqa: F401  (the seats import it lazily: not on the clock)

        table = EpisodeRequest(deals=args.deals, talk=True)
        # Four Claude entrants, four seats: every table seats all four (balanced).
        one = LeagueSpec(entrants=entrants(CLAUDES), tables=1, table=table)
        many = attrs.evolve(one, tables=args.tables, concurrency=args.tables)
        single, _, _ = timed_league(one, "serial")
        together, _, _ = timed_league(many, "thread")
    finally:
        server.terminate()
        server.wait()
    print(f"latency {args.latency * 1000:.0f} ms per call, {args.deals} deals a table")
    print(f"1 table:                          {single:6.2f} s")
    print(f"{args.tables} tables at concurrency {args.tables}:    {together:6.2f} s")
    print(f"ratio: {together / single:.2f}x the wall time of one table (target < 2x)")


def efficiency(args) -> None:
    spec = LeagueSpec(
        entrants=entrants(SCRIPTED), tables=args.episodes, table=EpisodeRequest(deals=args.deals)
    )
    warm = 4  # episodes before the clock starts: every worker has started and played
    timed = args.episodes - warm
    rates = {}
    for workers in (1, 2):
        executor = "process" if workers > 1 else "serial"
        wall, cpu, _ = timed_league(attrs.evolve(spec, concurrency=workers), executor, warm)
        rates[workers] = timed / wall
        print(
            f"{workers} process{'es' if workers > 1 else ''}: {timed} episodes in {wall:6.2f} s"
            f" = {rates[workers]:6.1f} episodes/s"
            + (f" ({cpu / timed * 1000:.1f} ms CPU per episode)" if workers == 1 else "")
        )
    league = rates[2] / (2 * rates[1])
    control = _control_efficiency()
    print(f"parallel efficiency: {league:.0%} (target 85%)")
    print(
        f"control, a pure-Python busy loop in 1 vs 2 processes on this machine now: {control:.0%};"
        f" the league's efficiency relative to what the machine gave: {league / control:.0%}"
    )


def _burn(n: int) -> int:
    total = 0
    for i in range(n):
        total += i * i
    return total


def _control_efficiency(n: int = 4_000_000) -> float:
    """What two processes get from this machine right now (1.0: two free cores)."""
    start = time.perf_counter()
    _burn(n)
    _burn(n)
    one = time.perf_counter() - start
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        pool.map(_burn, [1, 1])
        start = time.perf_counter()
        pool.map(_burn, [n, n])
        two = time.perf_counter() - start
    return one / (2 * two)


def ci(args) -> None:
    # Four entrants at four-seat tables: everyone plays every table, so what is left to
    # chance is the cards and the seats, exactly what duplicate seating is meant to cancel.
    plain = LeagueSpec(
        entrants=entrants(SCRIPTED), tables=args.tables, table=EpisodeRequest(deals=args.deals)
    )
    runs = (
        (f"{args.tables} tables", plain),
        (
            f"{args.tables // 4} tables x 4 rotations",
            attrs.evolve(plain, tables=args.tables // 4, duplicate=True),
        ),
        (f"{args.tables} tables x 4 rotations", attrs.evolve(plain, duplicate=True)),
    )
    widths = []
    for label, spec in runs:
        _, _, db = timed_league(spec, "serial")
        rows = league_report(db)["standings"]
        widths.append(sum(r["ci95"][1] - r["ci95"][0] for r in rows) / len(rows))
        print(f"{label:28}: {rows[0]['episodes']:4} episodes, mean 95% CI width {widths[-1]:.4f}")
    print(
        f"duplicate seating: CI width x{widths[1] / widths[0]:.2f} for the same episodes,"
        f" x{widths[2] / widths[0]:.2f} for the same tables"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    benches = parser.add_subparsers(dest="bench", required=True)
    one = benches.add_parser("concurrency")
    one.add_argument("--tables", type=int, default=32)
    one.add_argument("--latency", type=float, default=0.2)
    one.add_argument("--deals", type=int, default=3)
    two = benches.add_parser("efficiency")
    two.add_argument("--episodes", type=int, default=64)
    two.add_argument("--deals", type=int, default=20)
    three = benches.add_parser("ci")
    three.add_argument("--tables", type=int, default=40)
    three.add_argument("--deals", type=int, default=20)
    args = parser.parse_args()
    {"concurrency": concurrency, "efficiency": efficiency, "ci": ci}[args.bench](args)


if __name__ == "__main__":
    main()
