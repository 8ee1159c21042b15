"""``arena policies``: the shipped model seat policies, as lines or JSON."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from arena.cli.options import listing, print_rows
from arena_policies import shipped as shipped_policies

if TYPE_CHECKING:
    from arena.plugins import PluginHost


def register(policies: argparse.ArgumentParser) -> None:
    listing(policies, run)


def run(args: argparse.Namespace, host: PluginHost) -> int:
    rows = [
        {
            "name": policy.name,
            "file": policy.source,
            "author": policy.author,
            "description": policy.description,
        }
        for policy in shipped_policies()
    ]
    return print_rows(
        args, rows, lambda row: f"{row['name']:<10} {row['file']:<22} {row['description']}"
    )
