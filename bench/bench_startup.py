"""What starting a command costs, in the child's CPU time, against ``arena plugins``.

Issue 39: ``arena --help`` took 0.90 s of CPU where ``arena plugins`` took 0.29 s, because
building every subcommand's parser imported the league report and scipy, then (at
0.38-0.51 s) the engine, the runner, the log check and numpy; and a table with a Claude
seat starts at 1.7-1.8 s, most of it ``import anthropic``. Each command here is a fresh
interpreter, run in turn with the others (so all see the same load), ``--rounds`` times
after one untimed round that writes bytecode (``PYTHONDONTWRITEBYTECODE`` is unset for
the children, so it is written even where the shell sets it); each figure is the
child's user + system time (``os.wait4``), median and min, and the median's ratio to
``arena plugins`` in the same run, since this shared machine's speed moves between runs.

``arena play --help`` is a subcommand's own help: it imports that subcommand's module
and what its parser needs (the table options' bounds, from the engine and the runner).

    python bench/bench_startup.py                  # 7 rounds
    python bench/bench_startup.py --rounds 15
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

ARENA = [sys.executable, "-m", "arena.cli"]
COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "arena plugins": [*ARENA, "plugins"],
    "arena --help": [*ARENA, "--help"],
    "arena play --help": [*ARENA, "play", "--help"],
    "import anthropic": [sys.executable, "-c", "import anthropic"],
    "import the Claude seat": [sys.executable, "-c", "import arena_plugins.claude.seat"],
}
BASELINE = "arena plugins"
ENVIRON = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
"""The children's environment: the untimed round writes the bytecode every round reads."""


def child_cpu(command: list[str]) -> float:
    """The finished child's user + system seconds."""
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENVIRON
    )
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise SystemExit(f"{command} exited {process.returncode}")
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    for command in COMMANDS.values():  # untimed: bytecode written, caches warm
        child_cpu(command)
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(args.rounds):
        for name, command in COMMANDS.items():
            times[name].append(child_cpu(command))
    base = statistics.median(times[BASELINE])
    print(f"child CPU s (user + sys), {args.rounds} rounds in turn")
    print(f"{'command':<30} {'median':>8} {'min':>8} {'vs ' + BASELINE:>18}")
    for name, seconds in times.items():
        middle = statistics.median(seconds)
        print(f"{name:<30} {middle:>8.3f} {min(seconds):>8.3f} {middle / base:>17.2f}x")


if __name__ == "__main__":
    main()
