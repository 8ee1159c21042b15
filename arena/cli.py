"""The ``arena`` command: play episodes and inspect plugins.

Every user mistake (unknown seat or mode, a bad number, an unwritable path, a
corrupt log) ends in one ``arena: error: ...`` line and exit code 2, never a
traceback. Plugins load lazily, once, when a command needs them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence

import structlog
from rich.console import Console
from rich.progress import Progress

from arena import __version__, logconfig
from arena.audit import (
    audit_events,
    audit_json,
    audit_tables,
    failures,
    league_episodes,
    logged_episodes,
    rewrite_audit_tail,
    run_audit,
    run_pooled,
)
from arena.eventlog import LogError, read_log
from arena.league import LeagueSpec, run_league
from arena.plugins import DuplicateName, PluginHost, UnknownName, load
from arena.render import deal_lines, results_table, standings_table
from arena.results import Results
from arena.rules import DEFAULT_MAX_BIDS, MAX_SEATS, MIN_SEATS
from arena.runner import DEFAULT_SEATS, EpisodeRequest, SetupError, run_episode
from arena.seats import SeatSpec
from arena.store import LeagueStore, StoreError
from arena_policies import shipped as shipped_policies

USAGE_ERROR = 2
USER_ERRORS = (SetupError, UnknownName, DuplicateName, LogError, StoreError)

log = structlog.get_logger(__name__)


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line."""

    def error(self, message: str):
        command = self.prog.removeprefix("arena").strip()
        where = f" (arena {command})" if command else ""
        self.exit(USAGE_ERROR, f"arena: error: {message}{where}\n")


def _bounded(kind: Callable, low=None, high=None, *, above=None) -> Callable[[str], object]:
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a {kind.__name__}: {text!r}") from None
        if low is not None and value < low or high is not None and value > high:
            span = f"{low}..{high}" if high is not None else f">= {low}"
            raise argparse.ArgumentTypeError(f"{value} is out of range {span}")
        if above is not None and value <= above:
            raise argparse.ArgumentTypeError(f"{value} must be > {above}")
        return value

    return parse


def _seat_specs(text: str) -> list[SeatSpec]:
    try:
        return [SeatSpec.parse(part) for part in text.split(",")]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="arena", description="Liar's Dice / Liar's Poker arena.")
    parser.add_argument("--version", action="version", version=f"arena {__version__}")
    parser.add_argument(
        "-v", "--verbose", action="count", default=0, help="more log output (-vv: debug)"
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    play = commands.add_parser("play", help="play one episode")
    _add_table_options(play)
    play.add_argument("--seed", type=_bounded(int, 0), default=0, help="master seed (default 0)")
    play.add_argument(
        "--seat",
        dest="seat_specs",
        action="extend",
        type=_seat_specs,
        default=[],
        metavar="SPEC",
        help="seat policy, by slot: name or name:arg; repeat or comma-separate. "
        "Unfilled seats play $PLAYER_SCRIPTED (default bayes)",
    )
    play.add_argument("--clock", type=_bounded(float, above=0), default=None, metavar="SECONDS")
    play.add_argument("--log", metavar="PATH", help="write the full event log (JSON Lines) here")
    play.add_argument("--json", action="store_true", help="print the results as JSON on stdout")
    play.set_defaults(run=_play)

    league = commands.add_parser("league", help="rank a pool of policies over many mixed tables")
    _add_table_options(league)
    league.add_argument(
        "--pool",
        action="extend",
        type=_seat_specs,
        required=True,
        metavar="SPEC",
        help="policies to draw tables from; repeat or comma-separate",
    )
    league.add_argument("--tables", type=_bounded(int, 1), default=10, help="tables to draw")
    league.add_argument("--seed", type=_bounded(int, 0), default=0, help="master seed")
    league.add_argument(
        "--duplicate", action="store_true", help="replay each table under every seat rotation"
    )
    league.add_argument("--workers", type=_bounded(int, 1), default=1, help="parallel processes")
    league.add_argument("--db", default="league.sqlite", help="SQLite results file (resumable)")
    league.add_argument("--json", action="store_true", help="print the standings as JSON")
    league.set_defaults(run=_league)

    audit = commands.add_parser(
        "audit", help="recompute an episode's audit from its log, or pool many by policy"
    )
    audit.add_argument(
        "logs",
        nargs="*",
        metavar="LOG",
        help="event logs written by `arena play --log`; two or more are pooled by policy",
    )
    audit.add_argument("--league", metavar="DB", help="pool a league's finished episodes by policy")
    audit.add_argument(
        "--json",
        action="store_true",
        help="print results.audit exactly as the episode did (or the pooled audit as JSON)",
    )
    audit.add_argument(
        "--append",
        action="store_true",
        help="also write the flags to the log's tail as audit events (replacing any there)",
    )
    audit.set_defaults(run=_audit, parser=audit)

    policies = commands.add_parser("policies", help="list the shipped Claude policies")
    policies.add_argument("--json", action="store_true", help="machine-readable output")
    policies.set_defaults(run=_policies)

    plugins = commands.add_parser("plugins", help="list installed plugins")
    plugins.add_argument("--json", action="store_true", help="machine-readable output")
    plugins.set_defaults(run=_plugins)
    return parser


def _add_table_options(parser: argparse.ArgumentParser) -> None:
    """Options that shape every table: the same for one episode and for a league."""
    parser.add_argument("--mode", default="dice", help="game mode plugin (dice, poker, ...)")
    parser.add_argument(
        "--deals", type=_bounded(int, 1), default=20, help="deals per episode (default 20)"
    )
    parser.add_argument(
        "--seats",
        type=_bounded(int, MIN_SEATS, MAX_SEATS),
        default=DEFAULT_SEATS,
        help="table size",
    )
    parser.add_argument(
        "--max-bids", type=_bounded(int, 1), default=DEFAULT_MAX_BIDS, help="bid cap per deal"
    )
    parser.add_argument(
        "--talk", action=argparse.BooleanOptionalAction, default=False, help="table talk"
    )


def _table_request(args: argparse.Namespace, **episode) -> EpisodeRequest:
    """The request the table options describe, plus what only one episode has."""
    return EpisodeRequest(
        mode=args.mode,
        deals=args.deals,
        seats=args.seats,
        max_bids=args.max_bids,
        talk=args.talk,
        **episode,
    )


def _print_rows(args: argparse.Namespace, rows: list[dict], line: Callable[[dict], str]) -> int:
    """A listing: JSON with ``--json``, else one line per row."""
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    console = Console(soft_wrap=True)
    for row in rows:
        console.print(line(row), highlight=False, markup=False)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logconfig.configure(args.verbose)
    try:
        return args.run(args, load())
    except USER_ERRORS as exc:
        print(f"arena: error: {exc}", file=sys.stderr)
        return USAGE_ERROR
    except KeyboardInterrupt:
        print("arena: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `arena play --json | head`: the reader left, not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _play(args: argparse.Namespace, host: PluginHost) -> int:
    request = _table_request(
        args, seed=args.seed, seat_specs=tuple(args.seat_specs), clock=args.clock
    )
    results, records = run_episode(host, request, log_path=args.log)
    _warn_stand_ins(results)
    if args.json:
        print(json.dumps(results.to_json(), indent=2))
        return 0
    console = Console(soft_wrap=True)
    for line in deal_lines(records):
        console.print(line, highlight=False, markup=False)
    console.print(results_table(results))
    return 0


def _league(args: argparse.Namespace, host: PluginHost) -> int:
    for spec in args.pool:
        host.registry.seat(spec.name)  # an unknown policy fails now, not in a worker
    spec = LeagueSpec(
        pool=tuple(args.pool),
        tables=args.tables,
        seed=args.seed,
        table=_table_request(args),
        duplicate=args.duplicate,
    )
    host.registry.mode(spec.table.mode)
    store = LeagueStore(args.db)
    try:
        with Progress(transient=True, disable=args.json) as bar:
            task = bar.add_task("episodes", total=None)
            table = run_league(
                spec,
                store,
                workers=args.workers,
                progress=lambda done, total: bar.update(task, completed=done, total=total),
            )
    finally:
        store.close()
    if args.json:
        print(json.dumps([row.to_json() for row in table], indent=2))
        return 0
    Console().print(standings_table(table, args.db))
    return 0


def _audit(args: argparse.Namespace, host: PluginHost) -> int:
    if bool(args.logs) == bool(args.league):
        args.parser.error("give one or more event logs, or --league DB")
    if args.league or len(args.logs) > 1:
        if args.append:
            args.parser.error("--append rewrites a single LOG")
        return _pooled_audit(args, host)
    records = read_log(args.logs[0])
    sections = run_audit(host.registry.reporters.values(), records)
    if args.append:
        rewrite_audit_tail(args.logs[0], audit_events(sections))
    if args.json:
        print(audit_json(sections))
        return 0
    console = Console(soft_wrap=True)
    for part in audit_tables(sections, [str(seat["slot"]) for seat in records[0]["seats"]]):
        console.print(part, highlight=False, markup=False)
    return 0


def _pooled_audit(args: argparse.Namespace, host: PluginHost) -> int:
    """Each pooling reporter's section over many episodes (docs/audit.md)."""
    reporters = host.registry.reporters.values()
    if args.league:
        episodes = league_episodes(args.league)
    else:
        episodes = logged_episodes(reporters, args.logs)
    pooled = run_pooled(reporters, episodes)
    failed = failures(pooled)
    if failed:
        source = args.league or ", ".join(args.logs)
        raise LogError(f"{source}: pooled audit failed ({'; '.join(failed)})")
    if args.json:
        print(json.dumps(pooled, indent=2))
        return 0
    console = Console(soft_wrap=True)
    for name, section in pooled.items():
        console.print(f"== {name}, pooled over {len(episodes)} episodes", markup=False)
        if not isinstance(section, dict) or "policies" not in section:
            console.print(json.dumps(section), highlight=False, markup=False)
            continue
        figures = {key: value for key, value in section.items() if key != "policies"}
        for part in audit_tables(figures, section["policies"], self_pairs=True):
            console.print(part, highlight=False, markup=False)
    return 0


def _warn_stand_ins(results: Results) -> None:
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


def _policies(args: argparse.Namespace, host: PluginHost) -> int:
    rows = [
        {
            "name": policy.name,
            "file": policy.source,
            "author": policy.author,
            "description": policy.description,
        }
        for policy in shipped_policies()
    ]
    return _print_rows(
        args, rows, lambda row: f"{row['name']:<10} {row['file']:<22} {row['description']}"
    )


def _plugins(args: argparse.Namespace, host: PluginHost) -> int:
    rows = [
        {
            "name": info.name,
            "distribution": info.distribution,
            "version": info.version,
            "trust": info.trust,
            "hooks": list(info.hooks),
            "reporters": sorted(
                name for name, r in host.registry.reporters.items() if r.source == info.name
            ),
            "broken": info.broken,
        }
        for info in host.plugins
    ]
    return _print_rows(args, rows, _plugin_line)


def _plugin_line(row: dict) -> str:
    status = f"BROKEN: {row['broken']}" if row["broken"] else ", ".join(row["hooks"])
    if row["reporters"]:
        status += f" (reporters: {', '.join(row['reporters'])})"
    name, dist, version = row["name"], row["distribution"] or "?", row["version"] or "?"
    return f"{name:<12} {dist} {version} [{row['trust']}]  {status}"


if __name__ == "__main__":
    sys.exit(main())
