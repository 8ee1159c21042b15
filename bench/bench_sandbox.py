"""What the trust boundary costs: the targets of issues 7 and 21, side by side in one run.

The seat is the example plugin (examples/arena-plugin-example, ``cautious``),
installed for the run as a real distribution in a temporary directory, so the
arena treats it as any third party: discovered from metadata, imported only in
its own worker, under the isolation asked for.

- round trip: one ``decide`` to a worker and back, median and p99 (target: under
  200 us and 1 ms), over a whole episode;
- flat: the median round trip in deals 390-399 over deals 0-9 (target: within 1.2x);
- table: a 4-seat table of sandboxed ``cautious`` seats, decisions per second of
  wall time from its first decision to its last (target: 2,000 or more), and over
  the whole episode with the workers' start, beside the same table in-process
  (the baseline, whole episode);
- start: one worker alone until its seat is built (target: under 100 ms), and a
  table's four started in parallel;
- command: ``arena play --deals 1`` with four sandboxed ``cautious`` seats over the
  same command with the distribution trusted, in-process (target: at most 1.5x),
  each a fresh process, median of ``--runs``, interleaved; the describe cache warm
  (the first, cold run is shown beside it). Beside them, the sandboxed command run
  through ``python -c`` rather than as the arena command, so that its workers start
  with the table and not while the arena imports (:mod:`arena.sandbox.early`): what
  the early start saves.

Figures are wall time on a shared machine; CPU-time ratios (this process and its
children) are printed beside them, as they move less.

    python bench/bench_sandbox.py                     # bwrap if installed, 400 deals
    python bench/bench_sandbox.py --sandbox process --deals 100
"""

from __future__ import annotations

import argparse
import base64
import compileall
import hashlib
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from arena.plugins import load
from arena.runner import EpisodeRequest, run_episode
from arena.sandbox import remote
from arena.sandbox.policy import SandboxPolicy
from arena.sandbox.protocol import WorkerCode
from arena.seats import SeatSpec

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "arena-plugin-example"
LATE_START = "import sys; from arena.cli import main; sys.exit(main(sys.argv[1:]))"
"""The arena's CLI run by ``python -c``: the same command, but this process is not the
``arena`` command (:func:`arena.cli.startup.arena_arguments`), so no worker starts early."""


def install_example(root: Path) -> None:
    """The example as pip installs it: its package, a dist-info with a ``RECORD``
    (so its description is cached as an installed distribution's is), world-readable."""
    root.chmod(0o755)
    (root / "arena_cautious").symlink_to(EXAMPLE / "arena_cautious")
    info = root / "arena_cautious-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: arena-cautious\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[arena]\ncautious = arena_cautious\n")
    listed = sorted(str(p.relative_to(root)) for p in root.rglob("*.py")) + [
        f"{info.name}/METADATA", f"{info.name}/entry_points.txt"
    ]  # fmt: skip
    rows = []
    for relative in listed:
        data = (root / relative).read_bytes()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        rows.append(f"{relative},sha256={digest},{len(data)}\n")
    (info / "RECORD").write_text("".join(rows) + f"{info.name}/RECORD,,\n")
    sys.path.insert(1, str(root))


def command_runs(root: Path, isolation: str, runs: int) -> dict[str, list[tuple[float, float]]]:
    """``arena play --deals 1``, four ``cautious`` seats, sandboxed and trusted, and four
    bayes seats (issue 39's baseline), each run a fresh process: (wall, CPU) seconds per
    run, the sandboxed cold run apart."""
    path = os.pathsep.join(filter(None, (str(root), os.environ.get("PYTHONPATH"))))
    env = os.environ | {"PYTHONPATH": path, "ARENA_CACHE_DIR": str(root / "cache")}
    arguments = ["--sandbox", isolation, "play", "--deals", "1",
                 "--seat", "cautious,cautious,cautious,cautious", "--seed", "1"]  # fmt: skip
    play = [sys.executable, "-m", "arena.cli", *arguments]
    not_the_command = [sys.executable, "-c", LATE_START, *arguments]
    bayes = [*play[: play.index("--seat") + 1], "bayes,bayes,bayes,bayes", "--seed", "1"]
    commands = {"sandboxed": play, "in-process": [*play, "--trust", "arena-cautious"],
                "started with the table": not_the_command, "four bayes": bayes}  # fmt: skip
    found: dict[str, list[tuple[float, float]]] = {"cold": [], **{name: [] for name in commands}}
    for run in range(runs + 1):
        for name, command in commands.items():
            cpu = _children_cpu()
            started = time.perf_counter()
            subprocess.run(command, env=env, check=True, capture_output=True)
            figure = (time.perf_counter() - started, _children_cpu() - cpu)
            found["cold" if run == 0 and name == "sandboxed" else name].append(figure)
    return found


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(decide, samples: list[tuple[int, float, float]]):
    """SandboxedSeat.decide, recording each round trip with the deal it was for."""

    def decide_timed(seat, view):
        started = time.perf_counter()
        try:
            return decide(seat, view)
        finally:
            samples.append((view.deal, time.perf_counter() - started, started))

    return decide_timed


def table(host, deals: int) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of this process and its children, decisions) for one table."""
    request = EpisodeRequest(seed=1, deals=deals, seat_specs=(SeatSpec("cautious"),) * 4)
    cpu, wall = _cpu(), time.perf_counter()
    _, records = run_episode(host, request, environ={})
    wall, cpu = time.perf_counter() - wall, _cpu() - cpu
    return wall, cpu, sum(r["type"] in ("bid", "challenge") for r in records)


def start_times(policy: SandboxPolicy, setup: dict, repeat: int) -> tuple[float, float, float]:
    """Median seconds to a built seat: one worker alone (wall, and the CPU time of its
    processes), and four started together."""
    code = WorkerCode("arena-cautious", "0.1.0", (("cautious", "arena_cautious"),))
    alone, alone_cpu, four = [], [], []
    for _ in range(repeat):
        started = time.perf_counter()
        seat = remote.SandboxedSeat(policy, code, setup)
        seat.ready()
        alone.append(time.perf_counter() - started)
        alone_cpu.append(_tree_cpu(seat.worker.process.process.pid))
        seat.close()
        started = time.perf_counter()
        seats = [remote.SandboxedSeat(policy, code, setup) for _ in range(4)]
        for seat in seats:
            seat.ready()
        four.append(time.perf_counter() - started)
        for seat in seats:
            seat.close()
    return statistics.median(alone), statistics.median(alone_cpu), statistics.median(four)


def _tree_cpu(pid: int) -> float:
    """CPU seconds of ``pid`` and its descendants so far (bwrap, setpriv's exec, Python)."""
    parents, spent = {}, {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                fields = Path(entry.path, "stat").read_text().rpartition(")")[2].split()
            except OSError:
                continue
            parents[int(entry.name)] = int(fields[1])
            spent[int(entry.name)] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    tree, grown = {pid}, True
    while grown:
        more = {child for child, parent in parents.items() if parent in tree} - tree
        tree |= more
        grown = bool(more)
    return sum(spent.get(p, 0.0) for p in tree)


def compile_sources() -> None:
    """Write the arena's bytecode first, as ``pip install`` does: an editable install
    under ``PYTHONDONTWRITEBYTECODE`` (this machine sets it) has none, and a worker
    cannot write it from inside its sandbox, so every start would compile every arena
    module it imports (about 25 ms of a worker's start here)."""
    import arena
    import arena_plugins

    for package in (arena, arena_plugins):
        compileall.compile_dir(Path(package.__file__).parent, quiet=1)


def _cpu() -> float:
    """This process's CPU and its reaped children's, to the microsecond: ``os.times``
    counts in 10 ms ticks, and a 50-deal table in-process takes less than one."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime + _children_cpu()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sandbox", choices=("bwrap", "process"), default=None)
    parser.add_argument("--deals", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=9, help="worker start samples")
    parser.add_argument("--runs", type=int, default=5, help="arena play runs of each kind")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    compile_sources()
    with tempfile.TemporaryDirectory() as root:
        install_example(Path(root))
        policy = SandboxPolicy.choose(os.environ, args.sandbox)
        sandboxed = load({}, policy)
        trusting = load({}, SandboxPolicy.choose(os.environ, args.sandbox, ("arena-cautious",)))
        samples: list[tuple[int, float, float]] = []
        remote.SandboxedSeat.decide = timed(remote.SandboxedSeat.decide, samples)
        wall, cpu, decisions = table(sandboxed, args.deals)
        base_wall, base_cpu, base_decisions = table(trusting, args.deals)
        setup = {
            "name": "cautious", "slot": 0, "privateSeed": 1, "arg": None, "talk": False,
            "mode": {"name": "dice", "symbols": [1, 2, 3, 4, 5, 6], "handSize": 5,
                     "description": ""},
            "seats": 4, "maxBids": 12, "policies": ["cautious"] * 4,
        }  # fmt: skip
        alone, alone_cpu, four = start_times(policy, setup, args.repeat)
        commands = command_runs(Path(root), policy.isolation, args.runs)
    trips = sorted(seconds for _, seconds, _ in samples)
    early = [s for deal, s, _ in samples if deal < 10]
    late = [s for deal, s, _ in samples if deal >= args.deals - 10]
    playing = samples[-1][2] + samples[-1][1] - samples[0][2]  # first decision to last, warm
    p99 = trips[min(len(trips) - 1, int(0.99 * len(trips)))]
    flat = statistics.median(late) / statistics.median(early)
    rate, base_rate = decisions / playing, base_decisions / base_wall
    play = {name: statistics.median(w for w, _ in runs) for name, runs in commands.items()}
    cpu_of = {name: statistics.median(c for _, c in runs) for name, runs in commands.items()}
    command_ratio = play["sandboxed"] / play["in-process"]
    late_ratio = play["started with the table"] / play["in-process"]
    bayes_ratio = play["sandboxed"] / play["four bayes"]
    out = Table(
        title=f"trust boundary, {policy.isolation}, 4 x cautious, {args.deals} deals",
        caption=f"1-minute load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after",
    )
    for column in ("figure", "measured", "target", "met"):
        out.add_column(column)
    rows = [
        ("round trip median", f"{statistics.median(trips) * 1e6:.0f} us", "< 200 us",
         statistics.median(trips) < 200e-6),
        ("round trip p99", f"{p99 * 1e6:.0f} us", "< 1000 us", p99 < 1e-3),
        (f"deal {args.deals - 10}+ / deal <10", f"{flat:.2f}x", "<= 1.2x", flat <= 1.2),
        ("4 sandboxed seats, workers up", f"{rate:,.0f} decisions/s", ">= 2,000", rate >= 2000),
        ("same, with starting them", f"{decisions / wall:,.0f} decisions/s", "", True),
        ("same table in-process", f"{base_rate:,.0f} decisions/s", "baseline", True),
        ("CPU time, sandboxed / in-process", f"{cpu / base_cpu:.1f}x", "", True),
        ("worker start, one", f"{alone * 1e3:.0f} ms", "< 100 ms", alone < 0.1),
        ("  its CPU time", f"{alone_cpu * 1e3:.0f} ms", "", True),
        ("worker start, four in parallel", f"{four * 1e3:.0f} ms", "", True),
        ("arena play --deals 1, in-process", f"{play['in-process'] * 1e3:.0f} ms", "baseline",
         True),
        ("same, four sandboxed seats", f"{play['sandboxed'] * 1e3:.0f} ms", "", True),
        ("  sandboxed / in-process", f"{command_ratio:.2f}x", "<= 1.5x", command_ratio <= 1.5),
        ("arena play --deals 1, four bayes", f"{play['four bayes'] * 1e3:.0f} ms", "", True),
        ("  sandboxed / four bayes", f"{bayes_ratio:.2f}x", "<= 1.5x", bayes_ratio <= 1.5),
        ("  CPU time, sandboxed / four bayes",
         f"{cpu_of['sandboxed'] / cpu_of['four bayes']:.2f}x", "", True),
        ("  workers started with the table / in-process", f"{late_ratio:.2f}x", "", True),
        ("  CPU time, sandboxed / in-process", f"{cpu_of['sandboxed'] / cpu_of['in-process']:.2f}x",
         "", True),
        ("  CPU time, started with the table / in-process",
         f"{cpu_of['started with the table'] / cpu_of['in-process']:.2f}x", "", True),
        ("  the first run, describe cache cold", f"{play['cold'] * 1e3:.0f} ms", "", True),
    ]  # fmt: skip
    for name, measured, target, met in rows:
        out.add_row(name, measured, target, "yes" if met else "NO")
    Console().print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
