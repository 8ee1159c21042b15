"""``arena league``: rank a pool of policies over many seeded tables."""

from __future__ import annotations

import argparse
import json

from rich.console import Console
from rich.progress import Progress

from arena.cli.options import add_table_options, bounded, seat_specs, table_request
from arena.league import LeagueSpec, run_league
from arena.plugins import PluginHost
from arena.render import standings_table
from arena.store import LeagueStore


def register(commands: argparse._SubParsersAction) -> None:
    league = commands.add_parser("league", help="rank a pool of policies over many mixed tables")
    add_table_options(league)
    league.add_argument(
        "--pool",
        action="extend",
        type=seat_specs,
        required=True,
        metavar="SPEC",
        help="policies to draw tables from; repeat or comma-separate (required)",
    )
    league.add_argument(
        "--tables", type=bounded(int, 1), default=10, help="tables: >= 1 (default 10)"
    )
    league.add_argument("--seed", type=bounded(int, 0), default=0, help="seed, >= 0 (default 0)")
    league.add_argument("--duplicate", action="store_true", help="all seat rotations (default off)")
    league.add_argument(
        "--workers", type=bounded(int, 1), default=1, help="processes: >= 1 (default 1)"
    )
    league.add_argument("--db", default="league.sqlite", help="SQLite file (default league.sqlite)")
    league.add_argument("--json", action="store_true", help="standings as JSON (default: table)")
    league.set_defaults(run=run)


def run(args: argparse.Namespace, host: PluginHost) -> int:
    for spec in args.pool:
        host.registry.seat(spec.name)  # an unknown policy fails now, not in a worker
    spec = LeagueSpec(
        pool=tuple(args.pool),
        tables=args.tables,
        seed=args.seed,
        table=table_request(args),
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
