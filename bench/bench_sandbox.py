"""What the trust boundary costs: the four targets of issue 7, side by side in one run.

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
- start: starting a table's four workers in parallel until every seat is built
  (target: under 150 ms), and one worker alone.

Figures are wall time on a shared machine; the CPU-time ratio of the sandboxed
table over the in-process one is printed beside them, as it moves less.

    python bench/bench_sandbox.py                     # bwrap if installed, 400 deals
    python bench/bench_sandbox.py --sandbox process --deals 100
"""

from __future__ import annotations

import argparse
import os
import statistics
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
from arena.seats import SeatSpec

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "arena-plugin-example"


def install_example(root: Path) -> None:
    """The example as an installed distribution: its package plus a dist-info, world-readable."""
    root.chmod(0o755)
    (root / "arena_cautious").symlink_to(EXAMPLE / "arena_cautious")
    info = root / "arena_cautious-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: arena-cautious\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[arena]\ncautious = arena_cautious\n")
    sys.path.insert(1, str(root))


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


def start_times(policy: SandboxPolicy, setup: dict, repeat: int) -> tuple[float, float]:
    """Median seconds to a built seat: one worker alone, and four started together."""
    alone, four = [], []
    for _ in range(repeat):
        started = time.perf_counter()
        seat = remote.SandboxedSeat(policy, "arena-cautious", setup)
        seat.ready()
        alone.append(time.perf_counter() - started)
        seat.close()
        started = time.perf_counter()
        seats = [remote.SandboxedSeat(policy, "arena-cautious", setup) for _ in range(4)]
        for seat in seats:
            seat.ready()
        four.append(time.perf_counter() - started)
        for seat in seats:
            seat.close()
    return statistics.median(alone), statistics.median(four)


def _cpu() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sandbox", choices=("bwrap", "process"), default=None)
    parser.add_argument("--deals", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=3, help="worker start samples")
    args = parser.parse_args()
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
        alone, four = start_times(policy, setup, args.repeat)
    trips = sorted(seconds for _, seconds, _ in samples)
    early = [s for deal, s, _ in samples if deal < 10]
    late = [s for deal, s, _ in samples if deal >= args.deals - 10]
    playing = samples[-1][2] + samples[-1][1] - samples[0][2]  # first decision to last, warm
    p99 = trips[min(len(trips) - 1, int(0.99 * len(trips)))]
    flat = statistics.median(late) / statistics.median(early)
    rate, base_rate = decisions / playing, base_decisions / base_wall
    out = Table(title=f"trust boundary, {policy.isolation}, 4 x cautious, {args.deals} deals")
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
        ("worker start, one", f"{alone * 1e3:.0f} ms", "< 150 ms", alone < 0.15),
        ("worker start, four in parallel", f"{four * 1e3:.0f} ms", "< 150 ms", four < 0.15),
    ]  # fmt: skip
    for name, measured, target, met in rows:
        out.add_row(name, measured, target, "yes" if met else "NO")
    Console().print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
