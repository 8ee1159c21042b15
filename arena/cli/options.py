"""What every ``arena`` subcommand shares: the exit codes, the one-line usage error,
bounded numbers, seat specs, the table options and listings.

Each subcommand lives in its own module beside this one and only reaches here
for these helpers, so commands can grow without touching each other. The parser of
``arena`` itself is built from here too, so this module imports what its helpers need
(the engine, the runner, the log check) only inside the helpers that use it: ``arena
--help`` and a command that uses none of them never import those.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from arena.terminal_text import printable_lines

if TYPE_CHECKING:
    from arena.plugins import PluginHost
    from arena.runner import EpisodeRequest
    from arena.seats import SeatSpec

USAGE_ERROR = 2
RUN_FAILED = 1
"""The exit code of a command that could not finish: a write failed (a full disk)."""


class Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line."""

    def error(self, message: str):
        command = self.prog.removeprefix("arena").strip()
        where = f" (arena {command})" if command else ""
        self.exit(USAGE_ERROR, f"arena: error: {message}{where}\n")


def bounded(kind: Callable, low=None, high=None, *, above=None) -> Callable[[str], object]:
    """A parser for numbers in a range; floats must also be finite (no nan, no inf)."""

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a {kind.__name__}: {text!r}") from None
        if isinstance(value, float) and not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
        if low is not None and value < low or high is not None and value > high:
            span = f"{low}..{high}" if high is not None else f">= {low}"
            raise argparse.ArgumentTypeError(f"{value} is out of range {span}")
        if above is not None and value <= above:
            raise argparse.ArgumentTypeError(f"{value} must be > {above}")
        return value

    return parse


class _Named:
    """An option that, when the command line names it, adds its dest to ``args.given``."""

    def __call__(self, parser, namespace, values, option_string=None):
        namespace.given = getattr(namespace, "given", frozenset()) | {self.dest}
        super().__call__(parser, namespace, values, option_string)


def record_given(parser: argparse.ArgumentParser) -> None:
    """Let ``args.given`` say which of ``parser``'s options the command line named, at
    whatever value: a default cannot tell ``--tables 10`` from no ``--tables`` at all, and
    a flag that a command would drop must be refused, not ignored."""
    parser.set_defaults(given=frozenset())
    for action in parser._actions:
        if action.option_strings and not isinstance(action, _Named):
            action.__class__ = type(f"Named{type(action).__name__}", (_Named, type(action)), {})


def seat_specs(text: str) -> list[SeatSpec]:
    from arena.seats import SeatSpec

    try:
        return [SeatSpec.parse(part) for part in text.split(",")]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_table_options(parser: argparse.ArgumentParser, *, engines: bool = True) -> None:
    """Options that shape every table: the same for one episode and for a league.

    ``engines``: offer ``--engine``; a command whose tables are always watched live
    (``arena serve``) plays them on the Python engine and does not.
    """
    from arena.engine import MAX_DEALS
    from arena.fast.choice import ENGINES
    from arena.rules import DEFAULT_MAX_BIDS, MAX_BIDS_CAP, MAX_SEATS, MIN_SEATS
    from arena.runner import DEFAULT_SEATS

    parser.add_argument(
        "--mode", default="dice", help="game mode plugin: dice, poker, ... (default dice)"
    )
    parser.add_argument(
        "--deals",
        type=bounded(int, 1, MAX_DEALS),
        default=20,
        help=f"deals per episode, 1..{MAX_DEALS} (default 20)",
    )
    parser.add_argument(
        "--seats",
        type=bounded(int, MIN_SEATS, MAX_SEATS),
        default=None,
        help=f"table size, {MIN_SEATS}..{MAX_SEATS} (default: the mode's own, {DEFAULT_SEATS} "
        "for dice and poker)",
    )
    parser.add_argument(
        "--max-bids",
        type=bounded(int, 1, MAX_BIDS_CAP),
        default=DEFAULT_MAX_BIDS,
        help=f"bid cap per deal, 1..{MAX_BIDS_CAP} (default {DEFAULT_MAX_BIDS})",
    )
    parser.add_argument(
        "--talk",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="table talk (default off)",
    )
    if not engines:
        parser.set_defaults(engine="python")
        return
    parser.add_argument(
        "--engine",
        choices=ENGINES,
        default="auto",
        help="auto (default): the compiled engine for tables of scripted seats only "
        "(bayes, pressure, random, colluder) with talk off and no clock, else Python; "
        "python; compiled (refused in one line for any other table). Same log either way",
    )


def add_seating_options(parser: argparse.ArgumentParser, seat_help: str) -> None:
    """What one table has beyond its shape: the master seed and the seats by slot."""
    parser.add_argument(
        "--seed", type=bounded(int, 0), default=0, help="master seed, >= 0 (default 0)"
    )
    parser.add_argument(
        "--seat",
        dest="seat_specs",
        action="extend",
        type=seat_specs,
        default=[],
        metavar="SPEC",
        help=seat_help,
    )


def table_request(args: argparse.Namespace, **episode) -> EpisodeRequest:
    """The request the table options describe, plus what only one episode has.

    ``args.seats`` must be resolved first (:func:`arena.cli.running.resolve_seats`).
    """
    from arena.runner import EpisodeRequest

    return EpisodeRequest(
        mode=args.mode,
        deals=args.deals,
        seats=args.seats,
        max_bids=args.max_bids,
        talk=args.talk,
        engine=args.engine,
        **episode,
    )


def listing(parser: argparse.ArgumentParser, run: Callable[..., int]) -> None:
    """A listing command's one flag (``--json``) and what runs it (:func:`print_rows`)."""
    parser.add_argument(
        "--json", action="store_true", help="machine-readable output (default: one line each)"
    )
    parser.set_defaults(run=run)


def print_rows(args: argparse.Namespace, rows: list[dict], line: Callable[[dict], str]) -> int:
    """A listing: JSON with ``--json``, else one line per row, shown as text (a plugin's
    name or description is a third party's and may hold escape sequences)."""
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    sys.stdout.write("".join(printable_lines(line(row)) + "\n" for row in rows))
    return 0


def add_log_check_options(parser: argparse.ArgumentParser) -> None:
    """How a command that reads saved logs treats one that fails ``arena check``."""
    parser.add_argument(
        "--unchecked",
        action="store_true",
        help="skip `arena check`'s replay of the rules, for forensics; the output says so "
        "(default: a log that fails the check is refused)",
    )
    parser.add_argument(
        "--partial",
        action="store_true",
        help="read a log with no result line (e.g. interrupted); the output says so "
        "(default: refused)",
    )


def load_log(args: argparse.Namespace, host: PluginHost, path: str) -> list[dict]:
    """A saved log's records, verified first unless ``--unchecked`` (see ``arena check``)."""
    from arena.check import load_checked

    return load_checked(
        path, unchecked=args.unchecked, partial=args.partial, registry=host.registry
    )


def load_distinct_logs(
    args: argparse.Namespace, host: PluginHost, paths: list[str]
) -> list[tuple[str, list[dict]]]:
    """Many saved logs, each verified, each episode once: a copy is dropped with a warning,
    since pooling or ranking it twice would count its seats twice."""
    from arena.check import distinct_episodes

    logs, duplicates = distinct_episodes((path, load_log(args, host, path)) for path in paths)
    for warning in duplicates:
        print(f"arena: warning: {warning}", file=sys.stderr)
    return logs


def log_check_mark(args: argparse.Namespace) -> str | None:
    """``unchecked``, ``partial``, both joined by ``+``, or None for a fully checked read."""
    marks = [name for name in ("unchecked", "partial") if getattr(args, name)]
    return "+".join(marks) or None
