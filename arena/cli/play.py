"""``arena play``: one episode, its deals (or, with ``--watch``, each decision live) and results."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from arena.cli.options import add_seating_options, add_table_options, bounded, table_request
from arena.plugins import PluginHost
from arena.render import READ_OUT, Narrator, deal_lines, read_out_lines, results_lines
from arena.results import Results
from arena.runner import run_episode
from arena.terminal_text import printable, printable_lines, spec_text


def register(play: argparse.ArgumentParser) -> None:
    add_table_options(play)
    add_seating_options(
        play,
        "seat policy, by slot: name or name:arg; repeat or comma-separate. "
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
    play.add_argument(
        "--read-out",
        action="store_true",
        help="after the results, each seat's decisions against the exact odds of its own "
        "hand: bluff rate, calibration, challenges, missed catches, grades (docs/decisions.md;"
        " default: not shown)",
    )
    play.add_argument(
        "--watch",
        action="store_true",
        help="print each decision as it happens (bids, published talk, reveals, token use; "
        "default: one line per deal)",
    )
    play.set_defaults(run=run)


def run(args: argparse.Namespace, host: PluginHost) -> int:
    request = table_request(
        args, seed=args.seed, seat_specs=tuple(args.seat_specs), clock=args.clock
    )
    # A person at the table sees the other seats' moves as they are made, as that seat may;
    # --watch is the spectator's feed and never runs beside a human seat.
    persons = [host.registry.seat_for(spec)[0].person for spec in request.seat_specs]
    people = [slot for slot, person in enumerate(persons) if person is not None]
    on_record = on_deals = None
    if args.watch:
        on_record = watcher()
    elif people:
        viewer = people[0] if len(people) == 1 else None  # several at one keyboard: public only
        feed = persons[people[0]].feed(host.registry.mode(request.mode), request.deals, viewer)
        on_record = live_printer(feed)
    else:  # --json prints the results alone, but a long run still shows its progress
        on_deals = DealPrinter(request.deals, not args.json, shows_progress())
    try:
        results, records = run_episode(
            host,
            request,
            log_path=args.log,
            on_record=on_record,
            on_deals=on_deals,
            force=args.force,
        )
    finally:
        if on_deals is not None:
            on_deals.close()
    warn_stand_ins(results)
    if args.json:
        print(json.dumps(results.to_json(), indent=2))
        return 0
    if people:
        write_lines(deal_lines(records))
    write_lines(["", *results_lines(results)])
    if args.read_out:
        policies = [seat.policy for seat in results.seats]
        write_lines(read_out_lines(results.audit.get(READ_OUT), policies))
    return 0


def live_printer(feed: Callable[[dict], Any]) -> Callable[[dict], None]:
    """A record callback printing, as each record is logged, the line a person's seat
    declares they may see of it (:attr:`arena.registry.Person.feed`)."""

    def show(record: dict) -> None:
        news = feed(record)
        if news is not None:
            print(printable_lines(f"· {news.text}"), flush=True)

    return show


def watcher() -> Callable[[dict], None]:
    """A record callback that prints each decision's lines at once (seats may be slow)."""
    narrator = Narrator(every_decision=True)

    def show(record: dict) -> None:
        lines = narrator.lines(record)
        if lines:
            write_lines(lines)
            sys.stdout.flush()

    return show


def shows_progress() -> bool:
    """A ``deal N/M`` line on stderr when it is a terminal and the deal lines go elsewhere
    (on a terminal, the deal lines as they come are the progress)."""
    return sys.stderr.isatty() and not sys.stdout.isatty()


PROGRESS_STEPS = 200
"""A long episode's progress line is redrawn this many times at most."""
PROGRESS_CLEAR = "\r\033[K"


@attrs.define
class DealPrinter:
    """``run_episode``'s ``on_deals``: the deals' lines on stdout as they finish and, if
    asked, one ``deal N/M`` line kept up to date on stderr."""

    deals: int
    shows_lines: bool
    shows_progress: bool
    _shown: int = 0
    """The progress step last drawn."""

    def __call__(self, lines: str, finished: int) -> None:
        if self.shows_lines:
            sys.stdout.write(lines)
        if self.shows_progress and finished * PROGRESS_STEPS // self.deals > self._shown:
            self._shown = finished * PROGRESS_STEPS // self.deals
            sys.stderr.write(f"{PROGRESS_CLEAR}arena: deal {finished:,}/{self.deals:,}")
            sys.stderr.flush()

    def close(self) -> None:
        """Clear the progress line, before the results or an error takes the terminal."""
        if self._shown:
            sys.stderr.write(PROGRESS_CLEAR)
            sys.stderr.flush()


def write_lines(lines: Iterable[str]) -> None:
    """Plain buffered writes: a rich print per line costs far more than the line."""
    sys.stdout.write("".join(line + "\n" for line in lines))


def warn_stand_ins(results: Results) -> None:
    """One stderr line naming the seats another policy played throughout, and why."""
    by_reason: dict[str, list[str]] = {}
    for seat in results.seats:
        if seat.stand_in:
            by_reason.setdefault(printable(seat.stand_in), []).append(
                f"{seat.slot} ({spec_text(seat.policy)})"
            )
    if by_reason:
        parts = [
            f"seat{'s' if len(seats) > 1 else ''} {', '.join(seats)}: {why}"
            for why, seats in by_reason.items()
        ]
        print(f"arena: warning: {'; '.join(parts)}", file=sys.stderr)
