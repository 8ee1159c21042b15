"""``arena audit``: an episode's audit recomputed from its log, or many pooled by policy."""

from __future__ import annotations

import argparse
import json

from rich.console import Console

from arena.audit import (
    audit_events,
    audit_json,
    failures,
    logged_episodes,
    rewrite_audit_tail,
    run_audit,
    run_pooled,
)
from arena.audit_tables import audit_tables
from arena.cli.options import (
    add_log_check_options,
    load_distinct_logs,
    load_log,
    log_check_mark,
)
from arena.eventlog import LogError
from arena.league.store import league_results
from arena.plugins import PluginHost
from arena.terminal_text import cell


def register(audit: argparse.ArgumentParser) -> None:
    audit.add_argument(
        "logs",
        nargs="*",
        metavar="LOG",
        help="event logs written by `arena play --log`; two or more are pooled by policy",
    )
    audit.add_argument(
        "--league", metavar="DB", help="pool a league's finished episodes by policy (default: none)"
    )
    audit.add_argument(
        "--json",
        action="store_true",
        help="print results.audit exactly as the episode did, or the pooled audit, as JSON "
        "(default: tables)",
    )
    audit.add_argument(
        "--append",
        action="store_true",
        help="also write the flags to the log's tail as audit events, replacing any there "
        "(default off)",
    )
    add_log_check_options(audit)
    audit.set_defaults(run=run, parser=audit)


def run(args: argparse.Namespace, host: PluginHost) -> int:
    if bool(args.logs) == bool(args.league):
        args.parser.error("give one or more event logs, or --league DB")
    if args.league or len(args.logs) > 1:
        if args.append:
            args.parser.error("--append rewrites a single LOG")
        return _pooled(args, host)
    records = load_log(args, host, args.logs[0])
    sections = run_audit(host.registry.reporters.values(), records)
    if args.append:
        rewrite_audit_tail(args.logs[0], audit_events(sections))
    if args.json:
        print(audit_json(_marked(args, sections)))
        return 0
    console = Console(soft_wrap=True)
    _print_mark(args, console)
    for part in audit_tables(sections, [str(seat["slot"]) for seat in records[0]["seats"]]):
        console.print(part, highlight=False, markup=False)
    return 0


def _marked(args: argparse.Namespace, document: dict) -> dict:
    """The JSON output, with a ``logCheck`` key when the logs were not fully checked."""
    mark = log_check_mark(args)
    return {"logCheck": mark, **document} if mark else document


def _print_mark(args: argparse.Namespace, console: Console) -> None:
    if args.unchecked:
        console.print("UNCHECKED: the logs were not verified against the rules", markup=False)
    if args.partial:
        console.print("PARTIAL: logs without a result line are included", markup=False)


def _pooled(args: argparse.Namespace, host: PluginHost) -> int:
    """Each pooling reporter's section over many episodes (docs/audit.md).

    A league's episodes are read here and handed to the audit, which sits a layer
    below the league and never reads one itself."""
    reporters = host.registry.reporters.values()
    if args.league:
        episodes = league_results(args.league)
    else:
        logs = load_distinct_logs(args, host, args.logs)
        episodes = logged_episodes(reporters, [records for _, records in logs])
    pooled = run_pooled(reporters, episodes)
    failed = failures(pooled)
    if failed:
        source = args.league or ", ".join(args.logs)
        raise LogError(f"{source}: pooled audit failed ({'; '.join(failed)})")
    if args.json:
        print(json.dumps(_marked(args, pooled), indent=2))
        return 0
    console = Console(soft_wrap=True)
    _print_mark(args, console)
    for name, section in pooled.items():
        console.print(cell(f"== {name}, pooled over {len(episodes)} episodes"))
        if not isinstance(section, dict) or "policies" not in section:
            for part in audit_tables({name: section}, []):
                console.print(part, highlight=False, markup=False)
            continue
        figures = {key: value for key, value in section.items() if key != "policies"}
        for part in audit_tables(figures, section["policies"], self_pairs=True):
            console.print(part, highlight=False, markup=False)
    return 0
