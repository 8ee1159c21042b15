"""``arena compare A B``: a paired comparison of two seats (:mod:`arena.league.compare`).

Prints A - B, its 95% interval, the tables played and their cost, and a one-line
verdict; ``--json`` prints the figures as one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from arena.cli.options import add_table_options, bounded, seat_specs, table_request
from arena.figures import fixed
from arena.league.config import MAX_CONCURRENCY
from arena.league.standings import STAND_IN
from arena.plugins import PluginHost
from arena.seats import SeatSpec

if TYPE_CHECKING:
    from arena.league.compare import Comparison

DEFAULT_TABLES = 20
MAX_TABLES = 10_000


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "a", type=_one_seat, metavar="A", help="seat spec, e.g. bayes or claude:..."
    )
    parser.add_argument("b", type=_one_seat, metavar="B", help="seat spec to compare A against")
    add_table_options(parser)
    parser.add_argument(
        "--opponents",
        type=seat_specs,
        default=None,
        metavar="SPEC,...",
        help="the other seats, in turn (default bayes,pressure)",
    )
    parser.add_argument(
        "--tables",
        type=bounded(int, 2, MAX_TABLES),
        default=DEFAULT_TABLES,
        help=f"tables to draw, each played by A and by B; with --target-ci the most "
        f"(2..{MAX_TABLES}, default {DEFAULT_TABLES})",
    )
    parser.add_argument(
        "--target-ci",
        type=bounded(float, above=0),
        metavar="W",
        help="W > 0: stop after a round once the interval's half-width is at most W or it "
        "excludes 0 (default: play all --tables)",
    )
    parser.add_argument(
        "--seed", type=bounded(int, 0), default=0, help="master seed, >= 0 (default 0)"
    )
    parser.add_argument(
        "--concurrency",
        type=bounded(int, 1, MAX_CONCURRENCY),
        default=1,
        help=f"tables in flight in threads, for seats that wait on the network (Claude), "
        f"1..{MAX_CONCURRENCY}; the result is the same (default 1)",
    )
    parser.add_argument(
        "--allow-stand-in",
        action="store_true",
        help="play a Claude seat without a key as bayes, a marked stand-in (default: refuse)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON (default: text)")
    parser.set_defaults(run=run)


def _one_seat(text: str) -> SeatSpec:
    specs = seat_specs(text)
    if len(specs) != 1:
        raise argparse.ArgumentTypeError(f"one seat spec, not {len(specs)}: {text!r}")
    return specs[0]


def _cost(result: Comparison) -> str:
    """The cost as the text shows it: dollars, the unpriced models named beside them, or
    only those when nothing called is priced (never a silent $0)."""
    unpriced = ", ".join(result.unpriced)
    if result.cost is None:
        return f"unpriced ({unpriced})"
    return f"${result.cost:.4f}" + (f" (and unpriced: {unpriced})" if unpriced else "")


def _show_look(result: Comparison) -> None:
    """With a target, each look on stderr: the interval narrowing round by round (at
    Pocock's level before the stop, stage-wise at it)."""
    if result.looks > 1:
        low, high = result.ci95
        print(
            f"arena: {result.tables} tables: A - B = {fixed(result.difference, 4, sign=True)}"
            f" [{fixed(low, 4, sign=True)}, {fixed(high, 4, sign=True)}]",
            file=sys.stderr,
        )


def run(args: argparse.Namespace, host: PluginHost) -> int:
    # scipy comes with the comparison: only this command pays for it, never --help
    from arena.league.compare import DEFAULT_OPPONENTS, compare

    opponents = list(DEFAULT_OPPONENTS) if args.opponents is None else args.opponents
    result = compare(
        host,
        args.a,
        args.b,
        table_request(args),
        opponents=opponents,
        tables=args.tables,
        target=args.target_ci,
        seed=args.seed,
        progress=_show_look,
        concurrency=args.concurrency,
        allow_stand_in=args.allow_stand_in,
    )
    if args.json:
        print(json.dumps(result.to_json()))
        return 0
    low, high = result.ci95
    a, b = (f"{name}{STAND_IN * result.stand_in(i)}" for i, name in enumerate((result.a, result.b)))
    print(f"A = {a}, B = {b}")
    print(
        f"A - B = {fixed(result.difference, 4, sign=True)}  95% interval"
        f" [{fixed(low, 4, sign=True)}, {fixed(high, 4, sign=True)}]"
    )
    print(
        f"{result.tables} tables, each played by A and by B ({2 * result.tables} episodes);"
        f" cost {_cost(result)}"
        + f", {result.tokens:,} tokens; stopped: {result.stopped}"
        + (
            f" (each of up to {result.looks} looks at {1 - result.look_alpha:.2%}, Pocock's"
            " level; the interval is the stage-wise one at the stop, 95%)"
            if result.looks > 1
            else ""
        )
    )
    print(result.verdict())
    return 0
