"""What is installed, read from distribution metadata without importing anything.

``importlib.metadata`` reads ``entry_points.txt`` and ``METADATA`` files; no
plugin code runs here. What each third-party distribution actually registers
is learnt later, from a worker that imports that one distribution
(:func:`arena.sandbox.remote.describe`).
"""

from __future__ import annotations

import importlib.metadata
import re
from collections.abc import Iterator, Mapping
from email.message import Message
from email.parser import HeaderParser
from importlib.metadata import EntryPoint

import attrs

from arena.logs import get_logger

ENTRY_POINT_GROUP = "arena"
FIRST_PARTY_DISTRIBUTION = "liars-arena"

log = get_logger(__name__)


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
    found = []
    for dist, headers in _declaring(ENTRY_POINT_GROUP):
        eps = [
            e for e in dist.entry_points.select(group=ENTRY_POINT_GROUP) if e.name not in blocked
        ]
        if eps:
            ordered = tuple(sorted(eps, key=lambda e: e.name))
            found.append(Distribution(headers["Name"], headers["Version"] or "", ordered))
    return sorted(found, key=lambda d: (not d.first_party, d.name))


def _declaring(group: str) -> Iterator[tuple[importlib.metadata.Distribution, Message]]:
    """The distributions whose ``entry_points.txt`` has a ``[group]`` section, the first
    of each name on ``sys.path`` (as ``importlib.metadata.entry_points`` takes them),
    each with its metadata's headers (:func:`_headers`).

    A text search of each file spares parsing every other distribution's entry points,
    which was most of the time an ``arena`` command spent finding its plugins.
    """
    names = set()
    for dist in importlib.metadata.distributions():
        try:
            text = dist.read_text("entry_points.txt")
            if not text or f"[{group}]" not in text:
                continue
            headers = _headers(dist)
        except (OSError, UnicodeDecodeError) as exc:
            _skip(dist, f"{type(exc).__name__}: {exc}")
            continue
        if not headers["Name"]:
            _skip(dist, "its metadata has no Name")
            continue
        name = _normalized(headers["Name"])
        if name not in names:
            names.add(name)
            yield dist, headers


def _skip(dist: importlib.metadata.Distribution, reason: str) -> None:
    """A distribution whose metadata cannot be read is left out, not fatal to discovery."""
    log.warning("plugin distribution skipped", under=str(dist.locate_file("")), reason=reason)


def _headers(dist: importlib.metadata.Distribution) -> Message:
    """The headers of the distribution's metadata, where ``Name`` and ``Version`` are,
    read as ``Distribution.metadata`` reads the file but without its body: the body is
    the project's long description (this project's README), and parsing it was a
    fifth of the time an ``arena`` command spent finding its plugins."""
    text = dist.read_text("METADATA") or dist.read_text("PKG-INFO") or dist.read_text("") or ""
    return HeaderParser().parsestr(text.partition("\n\n")[0])


def _normalized(name: str) -> str:
    """A distribution name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def find(distribution: str) -> Distribution:
    """The installed distribution of that name (the worker's view of its own code)."""
    for dist in discover({}):
        if dist.name == distribution:
            return dist
    raise LookupError(
        f"no installed distribution {distribution!r} readable by the worker's uid "
        "has arena entry points (install plugins where every user can read them)"
    )
