"""When the CLI says what isolates third-party plugins: where one plays, not on every command.

The line (``arena: note: third-party plugins are isolated by bubblewrap namespaces``, or a
warning when the isolation is weaker) tells a user what protects them while a third
party's code plays. Printed on every command once any third-party plugin was installed,
it stood above ``arena check``, ``show`` and ``plugins`` too, where no third party plays
anything, and a line that is always there is a line nobody reads. So it is printed:

- where a command plays tables (``play``, ``serve``, ``league run``, ``compare``,
  ``exploitability``) and a third party's part would play at them: a seat the command
  line names (or ``$PLAYER_SCRIPTED``, which fills the open seats), the mode, or a talk
  filter or audit reporter, which every table of an episode runs; a league file names its
  entrants in the file, so with one any third-party seat counts;
- and on every command while a distribution is trusted in-process (``--trust``): its
  code was imported into this process as the plugins loaded, whatever the command.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator

from arena.plugins import PluginHost
from arena.registry import Registry, UnknownName
from arena.runner import SetupError, scripted_default
from arena.sandbox.discovery import FIRST_PARTY_DISTRIBUTION
from arena.seats import SeatSpec

EPISODE_COMMANDS = ("play", "serve", "league", "compare")
"""Commands whose tables are whole episodes: every talk filter and reporter plays there."""
SEAT_OPTIONS = ("seat_specs", "offer_specs", "pool", "a", "b", "opponents", "seat")
"""Where a command that plays tables holds the seat specs its command line names."""
OURS = (FIRST_PARTY_DISTRIBUTION, "local")
"""The distributions whose code is not a third party's (``local``: registered by hand)."""


def wanted(args: argparse.Namespace, host: PluginHost) -> bool:
    """Whether the command should say what isolates third-party plugins."""
    if any(info.trust == "trusted" for info in host.plugins):
        return True
    registry = host.registry
    return any(
        registry.provenance_of(part).get("distribution", FIRST_PARTY_DISTRIBUTION) not in OURS
        for part in _table_parts(args, registry)
    )


def _table_parts(args: argparse.Namespace, registry: Registry) -> Iterator[object]:
    """What plays at the command's tables, as far as its command line says (nothing for a
    command that plays none): seat types, talk filters, reporters and the mode's entry,
    each as :meth:`~arena.registry.Registry.provenance_of` reads it."""
    command = args.command
    if command == "league" and getattr(args, "action", None) not in (None, "run"):
        return
    if command not in (*EPISODE_COMMANDS, "exploitability"):
        return
    if command in EPISODE_COMMANDS:
        yield from registry.talk_filters.values()
        yield from registry.reporters.values()
    if getattr(args, "file", None):  # a league file's entrants: any seat may be one
        yield from registry.seats.values()
    named = [*_named_seats(args), *_filler(args)]
    for spec in named:
        try:
            seat = registry.seat_for(spec)[0]
        except UnknownName:  # the command says so, in its own words
            continue
        yield seat
    mode = getattr(args, "mode", None)
    if mode in registry.modes:  # an unknown one the command refuses, in its own words
        yield registry.modes[mode]  # (mode, plugin name): what provenance_of reads


def _named_seats(args: argparse.Namespace) -> Iterator[SeatSpec]:
    """The seat specs the command line names."""
    for option in SEAT_OPTIONS:
        value = getattr(args, option, None)
        for spec in value if isinstance(value, list) else [value]:
            if isinstance(spec, SeatSpec):
                yield spec
            elif isinstance(spec, str):  # exploitability's --seat
                try:
                    parsed = SeatSpec.parse(spec)
                except ValueError:  # the command says so, in its own words
                    continue
                yield parsed


def _filler(args: argparse.Namespace) -> list[SeatSpec]:
    """``$PLAYER_SCRIPTED``, which fills the seats a ``play`` or ``serve`` command line
    leaves open."""
    if args.command not in ("play", "serve"):
        return []
    try:
        return [scripted_default(os.environ)]
    except SetupError:  # the command says so, in its own words
        return []
