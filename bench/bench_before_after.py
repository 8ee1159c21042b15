"""The Python engine before and after a change, side by side in one run.

``bench/bench_decisions.py --json`` runs twice per round in child processes, once
on an older tree of the code (``--before``, e.g. an unpacked ``git archive`` of
main before the change) and once on this one, alternating, so both see the
same machine load; each child also measures the lean floor, so every row is
shown against its own run's ``floor+log`` as well as before against after.
All rates are decisions per CPU-second with the full event log written.

    git archive 228c3f7 | tar -x -C /tmp/before
    python bench/bench_before_after.py --before /tmp/before      # 2 rounds x best of 3
    python bench/bench_before_after.py --before /tmp/before --deals 20 --episodes 60
    python bench/bench_before_after.py --before /tmp/before --cli --deals 3000 --rounds 7
    python bench/bench_before_after.py --before /tmp/before --exploitability bayes --rounds 7

``--cli`` times whole ``arena play --engine python`` processes instead (start-up, plugin
discovery, the episode with its log, the read-out and the results), in the child's CPU
seconds, best of the rounds; ``--exploitability SEAT`` times ``arena exploitability``
(rung1w) the same way. The older tree runs with this checkout's installed entry
points, so a plugin or reporter it lacks is skipped with a warning (less work on its side).

The compiled engine's rows (which an older tree lacks) are left out: see
bench_decisions.py for them. A tree that has ``arena/fast`` still needs its extension
built (``python setup.py build_ext --inplace`` in it), as bench_decisions.py runs it.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

DECISIONS = Path(__file__).with_name("bench_decisions.py")
ROWS = ("floor+log", "random", "bayes/pressure")


def import_path(tree: Path, scratch: Path) -> Path:
    """A directory importing ``tree`` as it installs: ``arena``, and ``arena_plugins`` and
    ``arena_policies`` from its ``plugins/`` and ``policies/`` (pyproject's package-dir),
    so the older tree's plugins run too, not the installed checkout's."""
    for name, folder in PACKAGES.items():
        (scratch / name).symlink_to(tree / folder)
    return scratch


PACKAGES = {"arena": "arena", "arena_plugins": "plugins", "arena_policies": "policies"}


def measure(tree: Path, passthrough: list[str]) -> dict:
    """One bench_decisions run importing the game from ``tree``."""
    with tempfile.TemporaryDirectory() as scratch:
        environ = os.environ | {"PYTHONPATH": str(import_path(tree, Path(scratch)))}
        out = subprocess.run(
            [sys.executable, str(DECISIONS), "--json", *passthrough],
            env=environ,
            capture_output=True,
            text=True,
        )
    if out.returncode:  # e.g. a tree whose compiled engine is not built
        last = (out.stderr.strip().splitlines() or ["no output"])[-1]
        raise SystemExit(f"bench_decisions.py failed on {tree}: {last}")
    return json.loads(out.stdout.splitlines()[-1])


def command_cpu(tree: Path, arguments: list[str]) -> float:
    """CPU seconds (user+sys) of one ``arena`` command importing ``tree``, run from a
    scratch directory (``{scratch}`` in ``arguments`` names it) so the working tree's own
    ``arena`` is not on the path."""
    with tempfile.TemporaryDirectory() as scratch:
        environ = os.environ | {"PYTHONPATH": str(import_path(tree, Path(scratch)))}
        command = [sys.executable, "-m", "arena.cli"]
        command += [argument.format(scratch=scratch) for argument in arguments]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run(command, env=environ, cwd=scratch, capture_output=True, text=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode:
        last = (out.stderr.strip().splitlines() or ["no output"])[-1]
        raise SystemExit(f"arena {arguments[0]} failed on {tree}: {last}")
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def compare_cli(before: Path, after: Path, arguments: list[str], rounds: int) -> None:
    """Both trees' ``arena`` command alternating, best of ``rounds`` each, their bytecode
    written first: under ``PYTHONDONTWRITEBYTECODE`` (this machine sets it) a tree with
    stale or no bytecode compiles its modules on every run, which moved the ratio by 10-20%."""
    for tree in (before, after):
        for folder in PACKAGES.values():
            compileall.compile_dir(tree / folder, quiet=1)
    cpu: dict[Path, list[float]] = {before: [], after: []}
    for _ in range(rounds):
        for tree in cpu:
            cpu[tree].append(command_cpu(tree, arguments))
    old, new = min(cpu[before]), min(cpu[after])
    print(f"| command | before CPU s | after CPU s | after rate / before (best of {rounds}) |")
    print("|---|---:|---:|---:|")
    shown = " ".join(a for a in arguments if a != "--log" and "{scratch}" not in a)
    print(f"| arena {shown} | {old:.3f} | {new:.3f} | {old / new:.2f} |")


def best(runs: list[dict]) -> dict:
    return {
        mode: {row: max(run[mode][row] for run in runs) for row in runs[0][mode]}
        for mode in runs[0]
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="the older tree's root")
    parser.add_argument("--rounds", type=int, default=2, help="alternating rounds; best counts")
    parser.add_argument("--deals", default="400")
    parser.add_argument("--episodes", default="3")
    parser.add_argument(
        "--repeat", default="3", help="runs per child, best counts (as bench_decisions.py)"
    )
    parser.add_argument(
        "--cli", action="store_true", help="time whole `arena play` processes instead"
    )
    parser.add_argument(
        "--exploitability", metavar="SEAT", help="time `arena exploitability --seat SEAT`"
    )
    args = parser.parse_args(argv)
    here = Path(__file__).resolve().parent.parent
    if args.exploitability:
        compare_cli(
            args.before, here, ["exploitability", "--seat", args.exploitability], args.rounds
        )
        return 0
    if args.cli:
        play = ["play", "--engine", "python", "--deals", args.deals, "--seed", "7"]
        compare_cli(args.before, here, [*play, "--log", "{scratch}/play.jsonl"], args.rounds)
        return 0
    passthrough = ["--deals", args.deals, "--episodes", args.episodes, "--repeat", args.repeat]
    runs: dict[str, list[dict]] = {"before": [], "after": []}
    for _ in range(args.rounds):
        runs["before"].append(measure(args.before, passthrough))
        runs["after"].append(measure(here, passthrough))
    before, after = best(runs["before"]), best(runs["after"])
    print("| mode | workload | before/CPU-s | vs floor+log | after/CPU-s | vs floor+log | ratio |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for mode in after:
        for row in ROWS:
            old, new = before[mode][row], after[mode][row]
            print(
                f"| {mode} | {row} | {old:,.0f} | {old / before[mode]['floor+log']:.2f} "
                f"| {new:,.0f} | {new / after[mode]['floor+log']:.2f} | {new / old:.2f} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
