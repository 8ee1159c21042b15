"""``arena show LOG``: a saved episode printed as ``arena play`` prints one."""

from __future__ import annotations

import argparse

from arena.cli.play import write_lines
from arena.cli.replay import load_log
from arena.plugins import PluginHost
from arena.render import deal_lines, settled_lines


def register(commands: argparse._SubParsersAction) -> None:
    show = commands.add_parser("show", help="print a saved event log as `arena play` prints it")
    show.add_argument("log", metavar="LOG", help="event log written by `arena play --log`")
    show.add_argument(
        "--decisions",
        action="store_true",
        help="one line per decision, as `arena play --watch` prints them",
    )
    show.set_defaults(run=run)


def run(args: argparse.Namespace, host: PluginHost) -> int:
    records = load_log(args.log)
    write_lines([*deal_lines(records, every_decision=args.decisions), *settled_lines(records)])
    return 0
