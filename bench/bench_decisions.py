"""Decisions per CPU-second: the arena's full episodes against a bare pure-Python floor.

Every arena figure is a full episode through :func:`arena.runner.run_episode`
with the event log written to a real file: seat building, dealing, views, the
seats' decisions, rule checks, every JSON line and the audit reporters the
installed plugins register (which read the log back, or on a short Python
episode the records as made). The ``no audit`` rows clear the reporters.
Counting the decisions (reading the records) is not timed. Each runs on the
Python engine and on the compiled one (``, compiled``; :mod:`arena.fast`), and
``compiled engine+log`` is the compiled engine alone writing its full log to a
file: seats built, every line written, no parse-back and no audit.

A decision is one ``bid`` or ``challenge`` line of the log: every seat decision
the engine asked for plus every challenge the bid cap forced (rule 8).

The floor is the same game with no arena around it: ``random.Random`` deals the
hands, each decision is uniform over the legal actions by index arithmetic, the
cap forces a challenge and the challenge is counted and scored. ``floor+log``
also writes one compact JSON line per deal and per decision, with the same keys
as the arena's lines, to a file. The ratios are measured in the same run, so
they hold across machines better than the raw figures do.

Targets: (issue 2) bayes/pressure at 100,000 decisions/s or more, and the arena's
random seats at no less than a third of the bare floor (``floor``, which writes no
log; ``vs floor+log`` is the like-for-like ratio), checked for the full rows of the
Python engine; (issue 13) the compiled engine with its full log at 1,000,000/s or
more for bayes/pressure. A tree that predates the compiled engine (the ``--before``
tree of bench_before_after.py) gets the Python rows only.

    python bench/bench_decisions.py                  # default: 4 seats, 5 x 400 deals, best of 3
    python bench/bench_decisions.py --deals 100 --repeat 1
"""

from __future__ import annotations

import argparse
import inspect
import json
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import attrs
from rich.console import Console
from rich.table import Table

from arena.eventlog import EventLog
from arena.plugins import load
from arena.runner import EpisodeRequest, build_config, build_seat, run_episode
from arena.seats import SeatSpec

HAS_ENGINES = "engine" in attrs.fields_dict(EpisodeRequest)
"""This tree has the compiled engine (and EpisodeRequest.engine)."""
OVERWRITE = {"force": True} if "force" in inspect.signature(run_episode).parameters else {}
"""Rewrite each scratch log (a tree older than logs that refuse to be clobbered just does)."""

MODES = {"dice": (tuple(range(1, 7)), 5), "poker": (tuple(range(10)), 8)}
"""Each mode's symbols and hand size, as the dice and poker plugins declare them."""

TARGET_SCRIPTED = 100_000
TARGET_RANDOM_RATIO = 1 / 3
TARGET_COMPILED = 1_000_000


def arena_workload(
    host, mode: str, seats: tuple[str, ...], deals: int, max_bids: int, engine: str | None
):
    """A function playing one logged arena episode per seed; returns how to count its
    decisions (by reading the records the episode returned, after the clock stops).

    ``engine`` None: the tree's only engine (one that predates the choice)."""
    specs = tuple(SeatSpec.parse(name) for name in seats)
    chosen = {} if engine is None else {"engine": engine}

    def play(seed: int, log_path: Path) -> Callable[[], int]:
        request = EpisodeRequest(
            mode=mode, seed=seed, deals=deals, seats=len(seats), seat_specs=specs,
            max_bids=max_bids, **chosen,
        )  # fmt: skip
        _results, records = run_episode(host, request, log_path=log_path, environ={}, **OVERWRITE)
        return lambda: decisions(records)

    return play


def compiled_engine_and_log(host, request: EpisodeRequest, log_path: Path) -> EventLog:
    """The compiled engine alone: seats built as the runner builds them, the full log
    written to ``log_path``; no parse-back, audit or results. Returns the closed log."""
    from arena.fast.engine import CompiledEngine  # exists only where it was built

    config = build_config(host.registry, request)
    policies = tuple(str(spec) for spec in request.seat_specs)
    seats = [
        build_seat(host.registry, config, slot, spec, policies)
        for slot, spec in enumerate(request.seat_specs)
    ]
    event_log = EventLog(log_path, force=True)
    CompiledEngine(config, seats, policies, event_log).play()
    event_log.close()
    return event_log


def compiled_workload(host, mode: str, seats: tuple[str, ...], deals: int, max_bids: int):
    """The compiled engine alone per seed (:func:`compiled_engine_and_log`); returns how to
    count its decisions."""
    specs = tuple(SeatSpec.parse(name) for name in seats)

    def play(seed: int, log_path: Path) -> Callable[[], int]:
        request = EpisodeRequest(
            mode=mode, seed=seed, deals=deals, seats=len(seats), seat_specs=specs,
            max_bids=max_bids, engine="compiled",
        )  # fmt: skip
        event_log = compiled_engine_and_log(host, request, log_path)
        # Every line but the header, the deal lines and the result is a decision.
        return lambda: event_log.count - deals - 2

    return play


def decisions(records) -> int:
    return sum(1 for r in records if r["type"] in ("bid", "challenge"))


def floor_workload(mode: str, seats: int, deals: int, max_bids: int, log: bool):
    """The bare game loop: random play with nothing around it (optionally a JSON line each)."""
    symbols, hand_size = MODES[mode]
    top = seats * hand_size

    def play(seed: int, log_path: Path) -> Callable[[], int]:
        rng = random.Random(seed)
        order = list(range(seats))
        rng.shuffle(order)
        points = [0] * seats
        decisions = 0
        with open(log_path, "w", encoding="utf-8") as out:
            write = out.write if log else None
            for deal in range(deals):
                hands = [rng.choices(symbols, k=hand_size) for _ in range(seats)]
                position = deal % seats
                if write:
                    opener = order[position]
                    write(_line({"type": "deal", "deal": deal, "opener": opener, "hands": hands}))
                standing = None  # (bidder, quantity, face)
                bids = 0
                while True:
                    slot = order[position]
                    decisions += 1
                    bid = _random_bid(rng, standing, symbols, top) if bids < max_bids else None
                    if bid is None:
                        bidder, quantity, face = standing
                        actual = sum(hand.count(face) for hand in hands)
                        winner, loser = (bidder, slot) if actual >= quantity else (slot, bidder)
                        points[winner] += 1
                        points[loser] -= 1
                        if write:
                            write(_line({
                                "type": "challenge", "deal": deal, "slot": slot, "bidder": bidder,
                                "quantity": quantity, "face": face, "actual": actual,
                                "forced": bids == max_bids, "fallback": False, "winner": winner,
                                "loser": loser, "say": None, "published": None, "notes": None,
                            }))  # fmt: skip
                        break
                    standing = (slot, *bid)
                    bids += 1
                    if write:
                        write(_line({
                            "type": "bid", "deal": deal, "slot": slot, "quantity": bid[0],
                            "face": bid[1], "say": None, "published": None, "notes": None,
                            "fallback": False,
                        }))  # fmt: skip
                    position = (position + 1) % seats
        return lambda: decisions

    return play


def _random_bid(rng: random.Random, standing, symbols, top: int) -> tuple[int, int] | None:
    """Uniform over the legal bids plus challenge (when legal); ``None`` means challenge."""
    width = len(symbols)
    # Bids in rule-4 order are indexed (quantity - 1) * width + face position.
    start = 0 if standing is None else (standing[1] - 1) * width + symbols.index(standing[2]) + 1
    bids = top * width - start
    pick = rng.randrange(bids + (standing is not None))
    if pick == bids:
        return None
    quantity, index = divmod(start + pick, width)
    return quantity + 1, symbols[index]


_encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def _line(record: dict) -> str:
    return _encode(record) + "\n"


def best_rate(
    play: Callable[[int, Path], Callable[[], int]], episodes: int, repeat: int, scratch: Path
):
    """Best decisions per CPU-second over ``repeat`` runs of ``episodes`` seeded episodes,
    and the count (CPU time: the machine is shared, and other work inflates wall time).

    The decisions are counted after the clock stops: an episode's records are parsed
    when read, and reading them is the bench's work, not the episode's."""
    best = 0.0
    for _ in range(repeat):
        started = time.process_time()
        counts = [play(seed, scratch / f"episode-{seed}.jsonl") for seed in range(episodes)]
        elapsed = time.process_time() - started
        decisions = sum(count() for count in counts)
        best = max(best, decisions / elapsed)
    return best, decisions


def workloads(host, unaudited, mode: str, deals: int, max_bids: int) -> dict[str, Callable]:
    """The rows of one mode, floor first: every ratio divides by a row measured before it."""
    rows = {
        "floor": floor_workload(mode, 4, deals, max_bids, log=False),
        "floor+log": floor_workload(mode, 4, deals, max_bids, log=True),
    }
    for name, seats in (
        ("random", ("random",) * 4),
        ("bayes/pressure", ("bayes", "pressure", "bayes", "pressure")),
    ):
        python = "python" if HAS_ENGINES else None
        rows[name] = arena_workload(host, mode, seats, deals, max_bids, python)
        rows[f"{name}, no audit"] = arena_workload(unaudited, mode, seats, deals, max_bids, python)
        if HAS_ENGINES:
            rows[f"{name}, compiled"] = arena_workload(
                host, mode, seats, deals, max_bids, "compiled"
            )
            rows[f"{name}, compiled engine+log"] = compiled_workload(
                host, mode, seats, deals, max_bids
            )
    return rows


def misses(mode: str, rates: dict[str, float]) -> list[str]:
    """The issue's targets this mode missed."""
    missed = []
    if rates["random"] < TARGET_RANDOM_RATIO * rates["floor"]:
        missed.append(f"{mode}: random below 1/3 of the floor")
    if rates["bayes/pressure"] < TARGET_SCRIPTED:
        missed.append(f"{mode}: bayes/pressure below {TARGET_SCRIPTED:,}/s")
    compiled = rates.get("bayes/pressure, compiled engine+log")
    if compiled is not None and compiled < TARGET_COMPILED:
        missed.append(f"{mode}: compiled bayes/pressure below {TARGET_COMPILED:,}/s")
    return missed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=5, help="episodes per run (seeds 0..N-1)")
    parser.add_argument("--deals", type=int, default=400, help="deals per episode")
    parser.add_argument("--repeat", type=int, default=3, help="runs per row; the best counts")
    parser.add_argument("--max-bids", type=int, default=12, help="bid cap per deal")
    parser.add_argument("--mode", choices=sorted(MODES), action="append", help="default: both")
    parser.add_argument(
        "--json", action="store_true", help="print {mode: {workload: rate}} as JSON, no table"
    )
    args = parser.parse_args(argv)
    host, unaudited = load(), load()
    unaudited.registry.reporters.clear()
    table = Table(
        title=f"4 seats, {args.episodes} episodes x {args.deals} deals, log on, "
        f"best of {args.repeat}"
    )
    for column in ("mode", "workload", "decisions", "decisions/s", "us/decision"):
        left = column in ("mode", "workload")
        table.add_column(column, justify="left" if left else "right", no_wrap=left)
    table.add_column("vs floor", justify="right")
    table.add_column("vs floor+log", justify="right")
    missed = []
    measured = {}
    with tempfile.TemporaryDirectory() as scratch:
        for mode in args.mode or sorted(MODES):
            rates = measured[mode] = {}
            rows = workloads(host, unaudited, mode, args.deals, args.max_bids)
            for name, play in rows.items():
                rate, decisions = best_rate(play, args.episodes, args.repeat, Path(scratch))
                rates[name] = rate
                table.add_row(
                    mode,
                    name,
                    f"{decisions:,}",
                    f"{rate:,.0f}",
                    f"{1e6 / rate:.1f}",
                    f"{rate / rates['floor']:.2f}",
                    f"{rate / rates['floor+log']:.2f}" if "floor+log" in rates else "",
                )
            missed += misses(mode, rates)
    if args.json:
        print(json.dumps(measured))
        return 0
    console = Console(width=max(Console().width, 110))
    console.print(table)
    console.print("targets: " + ("met" if not missed else "missed: " + "; ".join(missed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
