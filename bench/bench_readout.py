"""What the decision read-out (the ``decisions`` audit reporter) costs a whole episode.

Whole ``run_episode`` calls with the log written to a file, each engine, with every
installed reporter and with ``decisions`` blocked (``ARENA_BLOCK_PLUGINS``), interleaved
and best of N in CPU time, so the ratio holds on a loaded machine. The read-out's own
cost per decision is the difference over the decisions played.

    python bench/bench_readout.py                    # 5 episodes x 400 deals, best of 5
    python bench/bench_readout.py --deals 20 --episodes 60
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from arena.plugins import load
from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatSpec

SEATS = tuple(SeatSpec(name) for name in ("bayes", "pressure", "bayes", "pressure"))


def episodes(host, engine: str, count: int, deals: int, log: Path) -> tuple[float, int]:
    """CPU seconds for ``count`` episodes, and the decisions they made."""
    made = 0
    start = time.process_time()
    for seed in range(count):
        request = EpisodeRequest(seed=seed, deals=deals, seat_specs=SEATS, engine=engine)
        results, _ = run_episode(host, request, log, environ={}, force=True)
        made += sum(seat.decisions for seat in results.seats)
    return time.process_time() - start, made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=5)
    parser.add_argument("--deals", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    hosts = {"with": load(), "without": load({"ARENA_BLOCK_PLUGINS": "decisions"})}
    with tempfile.TemporaryDirectory() as scratch:
        log = Path(scratch) / "bench.jsonl"
        for engine in ("python", "compiled"):
            best = dict.fromkeys(hosts, float("inf"))
            for _ in range(args.repeat):
                for name, host in hosts.items():  # interleaved: both see the same load
                    seconds, made = episodes(host, engine, args.episodes, args.deals, log)
                    best[name] = min(best[name], seconds)
            extra = (best["with"] - best["without"]) / made * 1e6
            print(
                f"{engine:8} {args.episodes} x {args.deals} deals, {made} decisions: "
                f"without {made / best['without']:,.0f}/CPU-s, with {made / best['with']:,.0f}"
                f"/CPU-s, ratio {best['without'] / best['with']:.2f}; "
                f"the read-out {extra:.2f} us a decision"
            )


if __name__ == "__main__":
    main()
