"""What is installed, read from distribution metadata without importing anything.

``importlib.metadata`` reads ``entry_points.txt`` and ``METADATA`` files; no
plugin code runs here. What each third-party distribution actually registers
is learnt later, from a worker that imports that one distribution
(:func:`arena.sandbox.remote.describe`).
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib.metadata import EntryPoint, entry_points

import attrs

ENTRY_POINT_GROUP = "arena"
FIRST_PARTY_DISTRIBUTION = "liars-arena"


@attrs.frozen
class Distribution:
    """One installed distribution with ``arena`` entry points."""

    name: str
    version: str
    entry_points: tuple[EntryPoint, ...]

    @property
    def first_party(self) -> bool:
        return self.name == FIRST_PARTY_DISTRIBUTION

    def provenance(self, isolation: str) -> dict[str, str]:
        """Who made a plugin and how it ran, as the log and the results record it."""
        return {"distribution": self.name, "version": self.version, "isolation": isolation}


def discover(environ: Mapping[str, str]) -> list[Distribution]:
    """Installed distributions in name order, first-party first; ``ARENA_BLOCK_PLUGINS`` applied."""
    blocked = {n.strip() for n in environ.get("ARENA_BLOCK_PLUGINS", "").split(",") if n.strip()}
    grouped: dict[tuple[str, str], list[EntryPoint]] = {}
    named: dict[object, tuple[str, str]] = {}
    """Each distribution's (name, version), read once: each read parses its METADATA."""
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in blocked:
            continue
        if ep.dist is None:
            dist = ("unknown", "unknown")
        elif (dist := named.get(ep.dist)) is None:
            metadata = ep.dist.metadata
            dist = named[ep.dist] = (metadata["Name"], metadata["Version"])
        grouped.setdefault(dist, []).append(ep)
    found = [
        Distribution(name, version, tuple(sorted(eps, key=lambda e: e.name)))
        for (name, version), eps in grouped.items()
    ]
    return sorted(found, key=lambda d: (not d.first_party, d.name))


def find(distribution: str) -> Distribution:
    """The installed distribution of that name (the worker's view of its own code)."""
    for dist in discover({}):
        if dist.name == distribution:
            return dist
    raise LookupError(
        f"no installed distribution {distribution!r} readable by the worker's uid "
        "has arena entry points (install plugins where every user can read them)"
    )
