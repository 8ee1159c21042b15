"""The CLI costs nothing extra: ``arena play`` against ``run_episode`` on the same table.

In this process (the default), alternately, timed in CPU seconds, best of
``--repeat`` at each size in ``--deals``, the same logged bayes/pressure episode played by:
- ``run_episode`` with a plugin host loaded once beforehand (a program playing many
  tables pays the loading once);
- ``load`` then ``run_episode`` (what a program playing one table pays, past its imports);
- ``arena.cli.main(["play", ...])`` whole: parsing, loading the plugins, the episode,
  two lines per deal and the results table, stdout to /dev/null.
The target is ``arena play`` at 0.85x of the library or better (within 1.15x of its
time); the ratio is printed against both library rows.

What ``arena play`` adds to ``run_episode`` is a cost per command (the parser, finding
and registering the plugins) and a cost per deal (its lines): fitted as
``play - run_episode = fixed + per_deal x deals`` through the smallest and the
largest size, both are printed, since the fixed part decides the ratio of a
short episode on a fast engine.

With ``--processes``, each side is instead a fresh interpreter, as a user runs it: the
``arena play`` command against a script that imports the library, loads the plugins
and calls ``run_episode``, each best of ``--repeat`` in the child's CPU seconds. Both
then also pay Python's start and their imports; their bytecode is written on a first
run that is not timed (this machine sets ``PYTHONDONTWRITEBYTECODE``, which would have
both compile every source, every run).

    python bench/bench_cli.py                  # compiled: 5,000, 20,000 and 100,000 deals
    python bench/bench_cli.py --engine python --deals 5000
    python bench/bench_cli.py --deals 1 --repeat 30   # the fixed cost alone
    python bench/bench_cli.py --processes --deals 1 5000 100000 --repeat 15
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from arena.cli import main as arena
from arena.plugins import load
from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatSpec

TARGET = 0.85
"""arena play's speed against the library's, at least."""
SEATS = ("bayes", "pressure", "bayes", "pressure")
PLAY = "arena play"


def cpu_seconds(play) -> float:
    """CPU time of one run; the garbage the other path left is collected first, or its
    collection would be charged to whichever run it happened in (the CLI leaves more)."""
    gc.collect()
    started = time.process_time()
    play()
    return time.process_time() - started


def best_times(host, deals: int, engine: str, repeat: int, scratch: Path) -> dict[str, float]:
    """Each side's best CPU seconds on one table of ``deals``, by name, ``arena play`` last."""
    request = EpisodeRequest(
        mode="dice",
        seed=11,
        deals=deals,
        seats=len(SEATS),
        seat_specs=tuple(SeatSpec.parse(name) for name in SEATS),
        engine=engine,
    )
    log = scratch / "episode.jsonl"
    command = [
        "play", "--mode", "dice", "--seed", "11", "--deals", str(deals),
        "--seat", ",".join(SEATS), "--log", str(log), "--force", "--engine", engine,
    ]  # fmt: skip

    def library():
        run_episode(host, request, log_path=log, environ={}, force=True)

    def loading_library():
        run_episode(load({}), request, log_path=log, environ={}, force=True)

    def cli():
        with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
            if arena(command) != 0:
                raise SystemExit("arena play failed")

    sides = {"run_episode": library, "load + run_episode": loading_library, PLAY: cli}
    times: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(repeat):
        for name, play in sides.items():
            times[name].append(cpu_seconds(play))
    return {name: min(seconds) for name, seconds in times.items()}


LIBRARY_SCRIPT = """
import sys
from arena.plugins import load
from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatSpec

mode, seed, deals, seats, log, engine = sys.argv[1:]
specs = tuple(SeatSpec.parse(name) for name in seats.split(","))
request = EpisodeRequest(
    mode=mode, seed=int(seed), deals=int(deals), seats=len(specs), seat_specs=specs,
    engine=engine,
)
run_episode(load(), request, log_path=log, force=True)
"""
CLI_SCRIPT = "import sys; from arena.cli import main; sys.exit(main(sys.argv[1:]))"


def child_cpu_seconds(name: str, argv: list[str], environ: dict[str, str]) -> float:
    """User plus system CPU seconds of one child process, run to its end."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, env=environ, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{name} exited {done.returncode}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def process_times(deals: int, engine: str, repeat: int, scratch: Path) -> dict[str, float]:
    """The library script's and ``arena play``'s best CPU seconds, each a fresh process."""
    log = str(scratch / "episode.jsonl")
    seats = ",".join(SEATS)
    library = [sys.executable, "-c", LIBRARY_SCRIPT, "dice", "11", str(deals), seats, log, engine]
    cli = [
        sys.executable, "-c", CLI_SCRIPT, "play", "--mode", "dice", "--seed", "11",
        "--deals", str(deals), "--seat", seats, "--log", log, "--force", "--engine", engine,
    ]  # fmt: skip
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    child_cpu_seconds("the library script", library, environ)  # writes the bytecode both read
    child_cpu_seconds("arena play", cli, environ)
    library_times, cli_times = [], []
    for _ in range(repeat):
        library_times.append(child_cpu_seconds("the library script", library, environ))
        cli_times.append(child_cpu_seconds("arena play", cli, environ))
    return {"a script: load + run_episode": min(library_times), PLAY: min(cli_times)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, nargs="+", default=[5_000, 20_000, 100_000])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--engine", choices=("auto", "python", "compiled"), default="auto")
    parser.add_argument(
        "--processes", action="store_true", help="each side a fresh process, as a user runs it"
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        if args.processes:
            best = {
                d: process_times(d, args.engine, args.repeat, Path(scratch)) for d in args.deals
            }
        else:
            host = load({})
            best = {
                d: best_times(host, d, args.engine, args.repeat, Path(scratch)) for d in args.deals
            }
    sides = list(next(iter(best.values())))
    baselines = sides[:-1]
    where = "each a fresh process" if args.processes else "in this process"
    print(f"engine {args.engine}, {where}, best of {args.repeat}, CPU seconds")
    ratios = [f"speed vs {name}" for name in baselines]
    print(f"| deals | {' | '.join(sides)} | {' | '.join(ratios)} |")
    print(f"|---:|{'---:|' * len(sides)}{'---|' * len(ratios)}")
    for deals, seconds in best.items():
        cells = [f"{seconds[name]:.4f}" for name in sides]
        for name in baselines:
            speed = seconds[name] / seconds[PLAY]
            cells.append(f"{speed:.3f}x {'met' if speed >= TARGET else 'missed'}")
        print(f"| {deals:,} | {' | '.join(cells)} |")
    if len(best) > 1 and not args.processes:  # a process's start is too noisy for a fit
        (short, at_short), (long, at_long) = min(best.items()), max(best.items())
        added_short = at_short[PLAY] - at_short["run_episode"]
        added_long = at_long[PLAY] - at_long["run_episode"]
        per_deal = (added_long - added_short) / (long - short)
        fixed = added_short - per_deal * short
        run_per_deal = (at_long["run_episode"] - at_short["run_episode"]) / (long - short)
        print(
            f"arena play adds {fixed * 1e3:.1f} ms a command and {per_deal * 1e6:.2f} us a deal "
            f"to run_episode ({per_deal / run_per_deal:.0%} of its cost a deal)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
