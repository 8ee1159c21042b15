"""``arena show LOG``: a saved episode printed as ``arena play`` prints one: its deals, then
the same results table (:mod:`arena.render`), then any audit flags in the log's tail."""

from __future__ import annotations

import argparse

from arena.audit import run_audit
from arena.cli.options import add_log_check_options, load_log, log_check_mark
from arena.cli.play import write_lines
from arena.plugins import PluginHost
from arena.render import READ_OUT, deal_lines, read_out_lines, settled_lines


def register(show: argparse.ArgumentParser) -> None:
    show.add_argument("log", metavar="LOG", help="event log written by `arena play --log`")
    show.add_argument(
        "--decisions",
        action="store_true",
        help="one line per decision, as `arena play --watch` prints them, with each seat's"
        " private thinking under its decision (default: per deal)",
    )
    show.add_argument(
        "--read-out",
        action="store_true",
        help="after the results, each seat's decisions against the exact odds of its own hand"
        " (docs/decisions.md; default: not shown)",
    )
    add_log_check_options(show)
    show.set_defaults(run=run)


def run(args: argparse.Namespace, host: PluginHost) -> int:
    records = load_log(args, host, args.log)
    mark = log_check_mark(args)
    if mark:
        print(f"{mark.upper()}: this log was not fully verified against the rules")
    write_lines(
        [
            *deal_lines(records, every_decision=args.decisions, thinking=True),
            *settled_lines(records),
        ]
    )
    if args.read_out:
        sections = run_audit(host.registry.reporters.values(), records)
        policies = [seat["policy"] for seat in records[0]["seats"]]
        write_lines(read_out_lines(sections.get(READ_OUT), policies))
    return 0
