"""The CLI costs nothing extra: ``arena play`` against ``run_episode`` on the same table.

Both play the same logged bayes/pressure episode in this process, alternately,
timed in CPU seconds: ``run_episode`` with a plugin host loaded once beforehand,
and ``arena.cli.main(["play", ...])`` whole (parsing, loading the plugins, the
episode, one line per deal and the results table, stdout to /dev/null). The
target is ``arena play`` within 1.15x of ``run_episode``, best of ``--repeat``.

    python bench/bench_cli.py                  # 4 seats, 5,000 deals, best of 7
    python bench/bench_cli.py --engine python  # the same on the Python engine
    python bench/bench_cli.py --deals 500 --repeat 3
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
import tempfile
import time
from pathlib import Path

from arena.cli import main as arena
from arena.plugins import load
from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatSpec

TARGET_RATIO = 1.15
SEATS = ("bayes", "pressure", "bayes", "pressure")


def cpu_seconds(play) -> float:
    """CPU time of one run; the garbage the other path left is collected first, or its
    collection would be charged to whichever run it happened in (the CLI leaves more)."""
    gc.collect()
    started = time.process_time()
    play()
    return time.process_time() - started


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=5_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--engine", choices=("auto", "python", "compiled"), default="auto")
    args = parser.parse_args(argv)
    host = load({})
    request = EpisodeRequest(
        mode="dice",
        seed=11,
        deals=args.deals,
        seats=len(SEATS),
        seat_specs=tuple(SeatSpec.parse(name) for name in SEATS),
        engine=args.engine,
    )
    with tempfile.TemporaryDirectory() as scratch:
        log = Path(scratch) / "episode.jsonl"
        command = [
            "play", "--mode", "dice", "--seed", "11", "--deals", str(args.deals),
            "--seat", ",".join(SEATS), "--log", str(log), "--force", "--engine", args.engine,
        ]  # fmt: skip

        def library():
            run_episode(host, request, log_path=log, environ={}, force=True)

        def cli():
            with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
                if arena(command) != 0:
                    raise SystemExit("arena play failed")

        times = {"run_episode": [], "arena play": []}
        for _ in range(args.repeat):
            times["run_episode"].append(cpu_seconds(library))
            times["arena play"].append(cpu_seconds(cli))
    best = {name: min(values) for name, values in times.items()}
    print(f"| path | best CPU s ({args.deals:,} deals, best of {args.repeat}) | ratio |")
    print("|---|---:|---:|")
    for name, seconds in best.items():
        print(f"| {name} | {seconds:.3f} | {seconds / best['run_episode']:.2f} |")
    ratio = best["arena play"] / best["run_episode"]
    verdict = "meets" if ratio <= TARGET_RATIO else "misses"
    print(f"arena play / run_episode: {ratio:.2f}x ({verdict} the {TARGET_RATIO}x target)")
    return 0 if ratio <= TARGET_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
