"""Linear in deals: the CPU time per deal of a long episode against a short one.

Each size is one bayes/pressure episode through :func:`arena.runner.run_episode`
with its full event log written to a file, played in a fresh child process so
its peak resident memory (``ru_maxrss``) is its own. The episode's time must be
linear in its deals: the target is a per-deal time at the long size within 1.2x
of the short size's, measured in the same run.

    python bench/bench_long.py                        # 1,000 vs 100,000 deals
    python bench/bench_long.py --engine compiled      # the compiled engine (arena.fast)
    python bench/bench_long.py --short 500 --long 20000
    PYTHONPATH=/tmp/before python bench/bench_long.py --long 25000   # an older tree
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

TARGET_RATIO = 1.2

CHILD = """
import json, resource, sys, time
import attrs
from arena.plugins import load
from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatSpec

deals, log_path, engine = int(sys.argv[1]), sys.argv[2], sys.argv[3]
host = load({})
specs = tuple(SeatSpec.parse(n) for n in ("bayes", "pressure", "bayes", "pressure"))
chosen = {"engine": engine} if "engine" in attrs.fields_dict(EpisodeRequest) else {}
request = EpisodeRequest(mode="dice", seed=7, deals=deals, seats=4, seat_specs=specs, **chosen)
started = time.process_time()
results, records = run_episode(host, request, log_path=log_path, environ={}, force=True)
cpu = time.process_time() - started
decisions = sum(1 for r in records if r["type"] in ("bid", "challenge"))
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"deals": results.deals_played, "cpu": cpu, "decisions": decisions, "peak": peak}))
"""


def measure(deals: int, directory: Path, engine: str) -> dict:
    log = directory / f"long-{deals}.jsonl"
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(deals), str(log), engine],
        cwd=directory,  # not the checkout: with -c, the working directory comes first on sys.path
        check=True,
        capture_output=True,
        text=True,
    )
    figures = json.loads(out.stdout)
    log.unlink()
    return figures


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--short", type=int, default=1_000, help="deals of the short episode")
    parser.add_argument("--long", type=int, default=100_000, help="deals of the long episode")
    parser.add_argument(
        "--engine",
        choices=("python", "compiled"),
        default="python",
        help="the engine (an older tree without the choice plays its only one)",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        rows = [measure(deals, Path(scratch), args.engine) for deals in (args.short, args.long)]
    print("| deals | CPU s | us/deal | decisions/CPU-s | peak RSS MB |")
    print("|---:|---:|---:|---:|---:|")
    for row in rows:
        print(
            f"| {row['deals']:,} | {row['cpu']:.2f} | {1e6 * row['cpu'] / row['deals']:.0f} "
            f"| {row['decisions'] / row['cpu']:,.0f} | {row['peak'] / 2**20:.0f} |"
        )
    short, long = (row["cpu"] / row["deals"] for row in rows)
    ratio = long / short
    verdict = "meets" if ratio <= TARGET_RATIO else "misses"
    print(f"per-deal time, long/short: {ratio:.2f}x ({verdict} the {TARGET_RATIO}x target)")
    return 0 if ratio <= TARGET_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
