"""Bounded in its deals: the peak memory of ``arena play`` with no ``--log``, short against long.

Each size is the real command, ``arena play --deals N --json`` (four bayes seats,
the results on stdout and nothing saved), in its own child process; its peak
resident memory is the child's own ``ru_maxrss`` (``os.wait4``). An episode with no
log must hold memory bounded in its deals: the target is the long size's peak within
1.1x of the short size's, ten times fewer deals, measured in the same run.

    python bench/bench_memory.py                              # 20,000 vs 200,000 deals
    python bench/bench_memory.py --engine python --short 2000 --long 20000
    PYTHONPATH=/tmp/before python bench/bench_memory.py       # an older tree
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

TARGET_RATIO = 1.1


def peak_of(deals: int, engine: str) -> tuple[int, float]:
    """The child's peak resident bytes and wall seconds for one ``arena play``."""
    argv = [sys.executable, "-m", "arena.cli", "play", "--deals", str(deals), "--json"]
    started = time.monotonic()
    child = subprocess.Popen(
        [*argv, "--engine", engine],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd="/",  # not the checkout: the installed package (or PYTHONPATH) is measured
    )
    _pid, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        sys.exit(f"bench_memory: arena play --deals {deals} failed: {child.stderr.read().decode()}")
    return usage.ru_maxrss * 1024, time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--short", type=int, default=20_000)
    parser.add_argument("--long", type=int, default=200_000)
    parser.add_argument("--engine", default="auto", help="auto (compiled here), python")
    args = parser.parse_args()
    short, short_s = peak_of(args.short, args.engine)
    long, long_s = peak_of(args.long, args.engine)
    ratio = long / short
    mb = 1 << 20
    print(f"engine {args.engine}: arena play --deals N --json, no --log")
    print(f"  {args.short:>9,} deals: peak RSS {short / mb:7.1f} MB ({short_s:.1f} s)")
    print(f"  {args.long:>9,} deals: peak RSS {long / mb:7.1f} MB ({long_s:.1f} s)")
    print(
        f"  ratio {ratio:.3f} (+{(long - short) / mb:.1f} MB for {args.long - args.short:,} more"
        f" deals); target <= {TARGET_RATIO}: {'met' if ratio <= TARGET_RATIO else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
