"""``arena plugins``: the installed plugins, what each registers and why any did not load,
as lines or JSON."""

from __future__ import annotations

import argparse
import textwrap
from typing import TYPE_CHECKING

from arena.cli.options import listing, print_rows

if TYPE_CHECKING:
    from arena.plugins import PluginHost


def register(plugins: argparse.ArgumentParser) -> None:
    listing(plugins, run)


def run(args: argparse.Namespace, host: PluginHost) -> int:
    rows = [
        {
            "name": info.name,
            "distribution": info.distribution,
            "version": info.version,
            "trust": info.trust,
            "isolation": info.isolation,
            "hooks": list(info.hooks),
            "reporters": sorted(
                name for name, r in host.registry.reporters.items() if r.source == info.name
            ),
            "broken": info.broken,
            "selection": info.selection,
            "withheld": info.withheld,
            "refused": list(info.refused),
            "dropped": list(info.dropped),
            "modes": list(info.modes),
        }
        for info in host.plugins
    ]
    return print_rows(args, rows, _plugin_line)


SELECTED = {"essential": "essential: always loaded", "allowed": "named in ARENA_LOAD_PLUGINS"}
"""Why a loaded plugin loaded, where the user's selection had a say."""
LISTING_WIDTH = 100
"""``arena plugins`` wraps its lines to this many columns, whatever the names' lengths."""


def _plugin_line(row: dict) -> str:
    if row["withheld"]:
        status = f"NOT LOADED: {row['withheld']}"
    elif row["broken"]:
        status = f"BROKEN: {row['broken']}"
    else:
        status = ", ".join(row["hooks"])
        if row["selection"] in ("essential", "allowed"):
            status += f" ({SELECTED[row['selection']]})"
    if row["dropped"]:
        status += f" (withdrawn: {', '.join(row['dropped'])})"
    if row["reporters"]:
        status += f" (reporters: {', '.join(row['reporters'])})"
    if row["refused"]:
        status += f" (refused: {'; '.join(row['refused'])})"
    if row["modes"]:
        status += (
            f" (modes, not playable without --trust: {', '.join(m['name'] for m in row['modes'])})"
        )
    name, dist, version = row["name"], row["distribution"] or "?", row["version"] or "?"
    where = row["trust"] if row["trust"] != "third-party" else f"third-party, {row['isolation']}"
    head = textwrap.fill(
        f"{name:<15} {dist} {version} [{where}]",
        LISTING_WIDTH,
        subsequent_indent=" " * 4,
        break_on_hyphens=False,
    )
    return textwrap.fill(
        status,
        LISTING_WIDTH,
        initial_indent=head + "  ",
        subsequent_indent=" " * 4,
        break_on_hyphens=False,
    )
