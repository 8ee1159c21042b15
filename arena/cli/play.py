"""``arena play``: one episode, its deals on the terminal and its results."""

from __future__ import annotations

import argparse
import json
import sys

from rich.console import Console

from arena.cli.options import add_table_options, bounded, seat_specs, table_request
from arena.plugins import PluginHost
from arena.render import deal_lines, results_table
from arena.results import Results
from arena.runner import run_episode


def register(commands: argparse._SubParsersAction) -> None:
    play = commands.add_parser("play", help="play one episode")
    add_table_options(play)
    play.add_argument(
        "--seed", type=bounded(int, 0), default=0, help="master seed, >= 0 (default 0)"
    )
    play.add_argument(
        "--seat",
        dest="seat_specs",
        action="extend",
        type=seat_specs,
        default=[],
        metavar="SPEC",
        help="seat policy, by slot: name or name:arg; repeat or comma-separate. "
        "Unfilled seats play $PLAYER_SCRIPTED (default bayes)",
    )
    play.add_argument(
        "--clock",
        type=bounded(float, above=0),
        default=None,
        metavar="SECONDS",
        help="episode clock: finite seconds > 0, checked at deal boundaries (default: none)",
    )
    play.add_argument(
        "--log",
        metavar="PATH",
        help="write the full event log (JSON Lines) here, via PATH.part (default: not saved)",
    )
    play.add_argument(
        "--force", action="store_true", help="overwrite an existing --log file (default: refuse)"
    )
    play.add_argument(
        "--json", action="store_true", help="print the results as JSON on stdout (default: table)"
    )
    play.set_defaults(run=run)


def run(args: argparse.Namespace, host: PluginHost) -> int:
    request = table_request(
        args, seed=args.seed, seat_specs=tuple(args.seat_specs), clock=args.clock
    )
    results, records = run_episode(host, request, log_path=args.log, force=args.force)
    warn_stand_ins(results)
    if args.json:
        print(json.dumps(results.to_json(), indent=2))
        return 0
    console = Console(soft_wrap=True)
    for line in deal_lines(records):
        console.print(line, highlight=False, markup=False)
    console.print(results_table(results))
    return 0


def warn_stand_ins(results: Results) -> None:
    """One stderr line naming the seats another policy played throughout, and why."""
    by_reason: dict[str, list[str]] = {}
    for seat in results.seats:
        if seat.stand_in:
            by_reason.setdefault(seat.stand_in, []).append(f"{seat.slot} ({seat.policy})")
    if by_reason:
        parts = [
            f"seat{'s' if len(seats) > 1 else ''} {', '.join(seats)}: {why}"
            for why, seats in by_reason.items()
        ]
        print(f"arena: warning: {'; '.join(parts)}", file=sys.stderr)
