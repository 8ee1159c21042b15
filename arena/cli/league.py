"""``arena league run|show|export``: rank entrants over many seeded tables, then report.

``arena league run FILE.toml`` reads a league file (docs/league.md); without a
file the ``--pool`` flags describe the league, and ``arena league --pool ...``
(the older form) still runs one.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.text import Text

from arena.cli.options import add_table_options, record_given, seat_specs, table_request
from arena.league.config import (
    SCHEDULES,
    SETTINGS,
    Budget,
    LeagueError,
    LeagueSpec,
    pool_entrants,
    read_league_file,
)
from arena.league.executors import EXECUTORS, ExecutorFailed, choose_executor
from arena.league.store import LeagueStore, league_files
from arena.outputs import Outputs
from arena.plugins import PluginHost
from arena.terminal_text import printable

if TYPE_CHECKING:
    from arena.league.run import Progress as LeagueProgress

DEFAULT_DB = "league.sqlite"
FILE_DESCRIBES = (
    *("tables", "seed", "schedule", "duplicate", "allow_repeat"),
    *("mode", "deals", "seats", "max_bids", "talk", "engine"),
)
"""What a league file describes (its [league] and [table]): with a file, these flags would
be dropped, so they are refused; the run's own flags (budget, target, executor) apply."""


def register(league: argparse.ArgumentParser) -> None:
    add_run_options(league, with_file=False)
    actions = league.add_subparsers(dest="action", parser_class=type(league))
    run_parser = actions.add_parser("run", help="play a league (resumes a stopped one)")
    add_run_options(run_parser, with_file=True)
    show = actions.add_parser("show", help="standings, head-to-head and cost of a league file")
    show.add_argument("db", metavar="DB")
    show.add_argument(
        "--json", action="store_true", help="print the report as JSON (default: tables)"
    )
    show.add_argument(
        "--read-out",
        action="store_true",
        help="also each entrant's decisions against the exact odds, with 95%% intervals "
        "(docs/decisions.md; --json always has them; default: not shown)",
    )
    show.set_defaults(run=show_league)
    export = actions.add_parser("export", help="write a league's figures and logs for other tools")
    export.add_argument("db", metavar="DB")
    export.add_argument(
        "--csv",
        metavar="DIR",
        help="standings, head_to_head and cost as CSV (default: not written)",
    )
    export.add_argument(
        "--json", metavar="FILE", help="the report as JSON ('-': stdout; default: not written)"
    )
    export.add_argument(
        "--logs",
        metavar="DIR",
        help="every episode's event log as JSON Lines (default: not written)",
    )
    export.set_defaults(run=export_league, parser=export)


def add_run_options(parser: argparse.ArgumentParser, with_file: bool) -> None:
    if with_file:
        parser.add_argument("file", nargs="?", metavar="FILE.toml", help="the league file")
        parser.add_argument(
            "--allow-policy",
            action="append",
            default=[],
            metavar="PATH",
            help="let the league file name this policy file (repeatable; a model seat sends"
            " its policy to its server, so a league file may name only shipped policies"
            " otherwise; default: none)",
        )
    add_table_options(parser)
    parser.add_argument(
        "--pool",
        action="extend",
        type=seat_specs,
        metavar="SPEC",
        help="entrants (without a league file); repeat or comma-separate (required "
        "without a league file)",
    )
    parser.add_argument(
        "--tables", type=setting("tables"), default=10, help="tables to draw, >= 1 (default 10)"
    )
    parser.add_argument(
        "--seed", type=setting("seed"), default=0, help="master seed, >= 0 (default 0)"
    )
    parser.add_argument(
        "--schedule",
        choices=SCHEDULES,
        default="balanced",
        help="how tables are drawn (default balanced)",
    )
    parser.add_argument(
        "--duplicate",
        action="store_true",
        help="replay each table once per seat, every entrant in every seat (default off)",
    )
    parser.add_argument(
        "--allow-repeat",
        action="store_true",
        help="one entrant may hold two seats at a table (default off)",
    )
    parser.add_argument("--db", help=f"SQLite league file (resumable; default {DEFAULT_DB})")
    parser.add_argument(
        "--executor",
        choices=EXECUTORS,
        help="where tables run (default: ray with --address, process with --workers, else"
        " thread); a flag the executor does not apply is refused",
    )
    parser.add_argument(
        "--concurrency",
        type=setting("concurrency"),
        help="tables in flight (threads, Ray tasks; with --workers W, spread over W processes"
        " in threads), >= 1 (default: --workers, else the league file's, else 1)",
    )
    parser.add_argument(
        "--workers",
        type=setting("concurrency"),
        help="worker processes, >= 1, each playing its share of --concurrency tables at once"
        " (default: --concurrency, one table each)",
    )
    parser.add_argument("--address", help="Ray cluster address (default: a local Ray instance)")
    parser.add_argument(
        "--target-ci",
        type=setting("target_ci"),
        metavar="W",
        help="W > 0: play rounds of tables (a fortieth of --tables, a tenth with --separate;"
        " at least one per entrant) and"
        " stop once every entrant's interval has half-width <= W; --tables is then the cap;"
        " with more entrants than seats each round seats those furthest from W, per dollar"
        " (default: play all --tables)",
    )
    parser.add_argument(
        "--separate",
        action="store_true",
        help="with --target-ci: stop once every adjacent pair in the ranking is separated or"
        " within W of each other (default: every half-width <= W)",
    )
    parser.add_argument(
        "--budget-usd",
        type=setting("budget_usd"),
        help="stop before passing it, >= 0 (default: none)",
    )
    parser.add_argument(
        "--budget-tokens",
        type=setting("budget_tokens"),
        help="stop before passing it, >= 0 (default: none)",
    )
    parser.add_argument(
        "--allow-stand-in",
        action="store_true",
        help="run Claude entrants without a key as bayes, marked as stand-ins (default: refuse)",
    )
    parser.add_argument(
        "--allow-upgrade",
        action="store_true",
        help="resume although an entrant's plugin version changed (default: refuse)",
    )
    parser.add_argument(
        "--json", action="store_true", help="print the report as JSON (default: tables)"
    )
    parser.set_defaults(run=run)
    record_given(parser)


def setting(name: str) -> Callable[[str], int | float]:
    """The flag's parser for the league-file setting ``name``: its text read as a number,
    then held to the setting's own check (:data:`arena.league.config.SETTINGS`)."""
    number = SETTINGS[name]

    def parse(text: str) -> int | float:
        try:
            value = int(text) if number.whole else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be {number}, got {text!r}") from None
        try:
            return number.check(value, name)
        except LeagueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


def league_spec(args: argparse.Namespace, host: PluginHost) -> LeagueSpec:
    """The league the file or the flags describe, with the command line's overrides."""
    file = getattr(args, "file", None)
    if file:
        if args.pool:
            raise LeagueError("give a league file or --pool, not both")
        spec = read_league_file(file, host.registry.seats, args.allow_policy)
        if dropped := sorted(set(FILE_DESCRIBES) & args.given):
            flags = ", ".join(f"--{dest.replace('_', '-')}" for dest in dropped)
            raise LeagueError(
                f"{flags}: the league file {file} describes the league; change it there"
                " (these flags describe a --pool league)"
            )
    else:
        if not args.pool:
            raise LeagueError("give a league file or --pool SPEC,...")
        if getattr(args, "allow_policy", None):
            raise LeagueError(
                "--allow-policy lets a league file name a policy file; --pool names its own"
            )
        spec = LeagueSpec(
            entrants=pool_entrants(args.pool),
            tables=args.tables,
            seed=args.seed,
            table=table_request(args),
            schedule=args.schedule,
            duplicate=args.duplicate,
            # as the --pool form always did: a pool smaller than a table fills it by repeats
            allow_repeat=args.allow_repeat or len(args.pool) < args.seats,
        )
    budget = Budget(
        args.budget_usd if args.budget_usd is not None else spec.budget.usd,
        args.budget_tokens if args.budget_tokens is not None else spec.budget.tokens,
    )
    concurrency = args.concurrency or args.workers or spec.concurrency
    target = args.target_ci if args.target_ci is not None else spec.target_ci
    separate = args.separate or spec.separate
    return attrs.evolve(
        spec, budget=budget, concurrency=concurrency, target_ci=target, separate=separate
    )


def run(args: argparse.Namespace, host: PluginHost) -> int:
    from arena.league.report import league_report  # scipy: only commands that report pay it
    from arena.league.run import run_league  # the report's, as above

    flags = {"workers": args.workers, "concurrency": args.concurrency, "address": args.address}
    executor = choose_executor(args.executor, flags)
    spec = league_spec(args, host)
    db = args.db or DEFAULT_DB
    store = LeagueStore(db)
    try:
        with _progress_bar(disable=args.json) as show:
            state = run_league(
                spec,
                store,
                host,
                executor=executor,
                address=args.address,
                workers=args.workers,
                allow_stand_in=args.allow_stand_in,
                allow_upgrade=args.allow_upgrade,
                progress=show,
            )
    except KeyboardInterrupt:
        store.close()
        _leave_now()
    except ExecutorFailed as exc:  # every stored episode is committed: the league resumes
        print(f"arena: error: {exc}", file=sys.stderr)
        return 1
    finally:
        store.close()
    if state.stopped == "budget":
        print(
            f"arena: budget reached after {state.done} of {state.total} episodes"
            f" (${state.usd:.4f}, {state.tokens:,} tokens); resume with a higher budget",
            file=sys.stderr,
        )
        if not state.done:  # nothing to report: not a success either
            return 1
    elif state.stopped == "target":
        met = "every adjacent pair separated or within" if spec.separate else "every half-width <="
        print(
            f"arena: target met: {met} {spec.target_ci} after"
            f" {state.done // spec.rotations} of {spec.tables} tables",
            file=sys.stderr,
        )
    report = league_report(db, list(host.registry.reporters.values()))
    code = _print_report(report, db, args.json)
    note = fault_note(report)
    if note:  # the last line, where it is seen
        sys.stdout.flush()
        print(f"arena: warning: {printable(note)}", file=sys.stderr)
    return code


def fault_note(report: dict) -> str | None:
    """One line naming each entrant whose turns rule 11's fallback played after its seat
    could not be reached (``faultTurns``), or ``None`` when there were none: those turns,
    and the scores they made, are bayes's, not the entrant's."""
    faulted = {name: turns for name, turns in report.get("faultTurns", {}).items() if turns}
    if not faulted:
        return None
    each = ", ".join(f"{name} {turns}" for name, turns in faulted.items())
    return (
        f"bayes (rule 11's fallback) played {sum(faulted.values())} turns after API faults"
        f" ({each}); those turns count in the standings as the entrant's"
    )


def _leave_now() -> None:
    """Ctrl-C: every stored episode is committed and the file closed, so exit at once.

    Tables still in flight are daemon threads, often blocked on the network; the
    interpreter's orderly shutdown took a second or more to get past them, and
    nothing they hold needs saving (their episodes replay on resume).
    """
    print("arena: interrupted", file=sys.stderr, flush=True)
    sys.stdout.flush()
    os._exit(130)


def show_league(args: argparse.Namespace, host: PluginHost) -> int:
    from arena.league.report import league_report  # scipy: only commands that report pay it

    report = league_report(args.db, list(host.registry.reporters.values()))
    return _print_report(report, args.db, args.json, args.read_out)


def export_league(args: argparse.Namespace, host: PluginHost) -> int:
    """Every file asked for is put in place together once all are written, never over the
    league file (:mod:`arena.outputs`)."""
    from arena.league.report import csv_files, episode_logs, league_report  # scipy, as above

    if not (args.csv or args.json or args.logs):
        args.parser.error("give --csv DIR, --json FILE and/or --logs DIR")
    with Outputs(inputs=league_files(args.db)) as outputs:
        for path in {args.csv, args.logs, args.json} - {None, "-"}:
            outputs.check(path)
        report = league_report(args.db, list(host.registry.reporters.values()))
        if args.csv:
            folder = outputs.folder(args.csv)
            for name, text in csv_files(report).items():
                outputs.write(folder / name, text)
        if args.logs:
            folder = outputs.folder(args.logs)
            for name, text in episode_logs(args.db):
                outputs.write(folder / name, text)
        if args.json and args.json != "-":
            outputs.write(args.json, json.dumps(report, indent=2))
    if args.json == "-":
        print(json.dumps(report, indent=2))
    return 0


def _print_report(report: dict, source: str, as_json: bool, read_out: bool = False) -> int:
    from arena.league.report import (  # scipy: only commands that report pay it
        read_out_table,
        report_tables,
    )

    if as_json:
        print(json.dumps(report, indent=2))
        return 0
    console = Console()
    for table in report_tables(report, source):
        console.print(table)
    note = fault_note(report)
    if note:
        console.print(Text(printable(note), style="bold red"))
    for entrant, shapes in report.get("requestShapes", {}).items():
        each = ", ".join(f"{shape} {calls}" for shape, calls in shapes.items())
        console.print(Text(printable(f"request shapes of {entrant}: {each}")))
    if read_out:
        console.print(read_out_table(report))
    return 0


class _progress_bar:
    """The run's progress line on stderr, when stderr is a terminal: episodes, ETA,
    requests in flight, retries, fallbacks, cost. Disabled (``--json``) or off a terminal
    it is never started: rich 14 wrote a blank line on leaving even a disabled bar (to
    stdout, ahead of the JSON), and one before an error line."""

    def __init__(self, disable: bool):
        console = Console(stderr=True)
        self.disable = disable or not console.is_terminal
        self.bar = Progress(
            TextColumn("episodes"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            TextColumn("{task.fields[status]}"),
            transient=True,
            disable=self.disable,
            console=console,
        )
        self.task = self.bar.add_task("league", total=None, status="")

    def __enter__(self):
        if not self.disable:
            self.bar.__enter__()
        return self.update

    def __exit__(self, *exc_info):
        if not self.disable:
            self.bar.__exit__(*exc_info)

    def update(self, state: LeagueProgress) -> None:
        status = (
            f"in flight {state.in_flight_requests}  retries {state.retries}"
            f"  fallbacks {state.fallbacks}  {state.tokens:,} tokens  ${state.usd:.4f}"
        )
        self.bar.update(self.task, completed=state.done, total=state.total, status=status)
