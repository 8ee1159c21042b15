"""``arena check``: replay logs through the rules and the seed, one line per violation."""

from __future__ import annotations

import argparse

from arena.check import check_file, check_results
from arena.eventlog import LogError
from arena.plugins import PluginHost
from arena.terminal_text import printable

SHOWN_PER_LOG = 20
"""Violations printed per log; one edit can cascade into many, the first is the cause."""


def register(check: argparse.ArgumentParser) -> None:
    check.add_argument("logs", nargs="+", metavar="LOG", help="event logs to verify")
    check.add_argument(
        "--results",
        metavar="JSON",
        help="results from `arena play --json` that must describe LOG's exact bytes "
        "(one LOG only; default: not checked)",
    )
    check.add_argument(
        "--partial",
        action="store_true",
        help="accept a log with no result line, e.g. an interrupted one (default: refused)",
    )
    check.set_defaults(run=run, parser=check)


def run(args: argparse.Namespace, host: PluginHost) -> int:
    if args.results and len(args.logs) > 1:
        args.parser.error("--results confirms one LOG")
    failed = False
    for path in args.logs:
        try:
            records, violations = check_file(path, registry=host.registry, partial=args.partial)
        except LogError as exc:
            print(printable(str(exc)))
            failed = True
            continue
        if args.results:
            violations += check_results(path, args.results)
        for violation in violations[:SHOWN_PER_LOG]:
            print(printable(f"{path}:{violation.line}: {violation.rule}: {violation.message}"))
        if len(violations) > SHOWN_PER_LOG:
            print(f"{path}: ... and {len(violations) - SHOWN_PER_LOG} more violations")
        if violations:
            failed = True
            continue
        settled = next((r for r in records if r["type"] == "result"), None)
        how = f"{settled['status']}, {settled['dealsPlayed']} deals" if settled else "partial"
        print(printable(f"{path}: ok ({records[0]['mode']} seed {records[0]['seed']}, {how})"))
    return 1 if failed else 0
