"""``arena audit``: an episode's audit recomputed from its log, or many pooled by policy."""

from __future__ import annotations

import argparse
import json

from rich.console import Console

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
from arena.plugins import PluginHost


def register(commands: argparse._SubParsersAction) -> None:
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
    audit.set_defaults(run=run, parser=audit)


def run(args: argparse.Namespace, host: PluginHost) -> int:
    if bool(args.logs) == bool(args.league):
        args.parser.error("give one or more event logs, or --league DB")
    if args.league or len(args.logs) > 1:
        if args.append:
            args.parser.error("--append rewrites a single LOG")
        return _pooled(args, host)
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


def _pooled(args: argparse.Namespace, host: PluginHost) -> int:
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
