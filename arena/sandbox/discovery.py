"""What is installed, and which of its entry points the user selected, read from
distribution metadata without importing anything.

``importlib.metadata`` reads ``entry_points.txt`` and ``METADATA`` files; no
plugin code runs here. What each third-party distribution actually registers
is learnt later, from a worker that imports that one distribution's selected
entry points (:func:`arena.sandbox.remote.describe_all`).

Selection holds in every process because it is made here, once: an entry point
that ``ARENA_BLOCK_PLUGINS`` names, or that ``ARENA_LOAD_PLUGINS`` (an allow-list)
leaves out, is never handed to anything that imports. The essentials (the default
mode and rule 11's bayes) are always loaded, as pytest's essential plugins are.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

import attrs

from arena.logs import get_logger

if TYPE_CHECKING:  # a worker imports this module's names, not importlib.metadata's cost
    import importlib.metadata
    from email.message import Message
    from importlib.metadata import EntryPoint

ENTRY_POINT_GROUP = "arena"
FIRST_PARTY_DISTRIBUTION = "liars-arena"
FALLBACK_PLUGIN = "scripted"
"""The essential first-party entry point that registers rule 11's fallback seat."""
ESSENTIAL_PLUGINS = frozenset({"dice", FALLBACK_PLUGIN})
"""First-party entry points the core needs (the default mode, rule 11's bayes): never withheld."""

log = get_logger(__name__)


@attrs.frozen
class Selection:
    """Which entry points load: the block list and the allow-list, from the environment."""

    blocked: frozenset[str] = frozenset()
    allowed: frozenset[str] | None = None
    """``None``: no allow-list, every entry point not blocked loads."""

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> Selection:
        allowed = environ.get("ARENA_LOAD_PLUGINS")
        return cls(_names(environ.get("ARENA_BLOCK_PLUGINS", "")),
                   None if allowed is None else _names(allowed))  # fmt: skip

    def status(self, name: str, first_party: bool) -> str:
        """``essential``, ``allowed`` (named by the allow-list), ``loaded`` (autoload), or
        why it is withheld: ``blocked`` or ``not-allowed``."""
        if first_party and name in ESSENTIAL_PLUGINS:
            return "essential"
        if name in self.blocked:
            return "blocked"
        if self.allowed is None:
            return "loaded"
        return "allowed" if name in self.allowed else "not-allowed"


WITHHELD = {
    "blocked": "blocked by ARENA_BLOCK_PLUGINS",
    "not-allowed": "not named in ARENA_LOAD_PLUGINS",
}
"""Each status that keeps an entry point from loading, and why, as the user reads it."""


@attrs.frozen
class Distribution:
    """One installed distribution with ``arena`` entry points."""

    name: str
    version: str
    entry_points: tuple[EntryPoint, ...]
    """The selected ones, by name: the only ones anything imports."""
    withheld: tuple[tuple[EntryPoint, str], ...] = ()
    """The others, each with its status (a key of :data:`WITHHELD`)."""
    statuses: Mapping[str, str] = attrs.Factory(dict)
    """Each selected entry point's status: ``essential``, ``allowed`` or ``loaded``."""
    metadata: importlib.metadata.Distribution | None = attrs.field(
        default=None, eq=False, repr=False
    )
    """Where its metadata was read, for the describe cache
    (:class:`arena.sandbox.describe.DescriptionCache`)."""

    @property
    def first_party(self) -> bool:
        return self.name == FIRST_PARTY_DISTRIBUTION

    def provenance(self, isolation: str) -> dict[str, str]:
        """Who made a plugin and how it ran, as the log and the results record it."""
        return {"distribution": self.name, "version": self.version, "isolation": isolation}


def discover(environ: Mapping[str, str]) -> list[Distribution]:
    """Installed distributions in name order, first-party first, their entry points split
    by the user's selection (:class:`Selection`)."""
    selection = Selection.from_environ(environ)
    found = []
    for dist, headers in _declaring(ENTRY_POINT_GROUP):
        first_party = headers["Name"] == FIRST_PARTY_DISTRIBUTION
        eps = sorted(dist.entry_points.select(group=ENTRY_POINT_GROUP), key=lambda e: e.name)
        status = {ep.name: selection.status(ep.name, first_party) for ep in eps}
        found.append(
            Distribution(
                headers["Name"],
                headers["Version"] or "",
                tuple(ep for ep in eps if status[ep.name] not in WITHHELD),
                tuple((ep, status[ep.name]) for ep in eps if status[ep.name] in WITHHELD),
                {name: s for name, s in status.items() if s not in WITHHELD},
                dist,
            )
        )
    return sorted(found, key=lambda d: (not d.first_party, d.name))


def _names(text: str) -> frozenset[str]:
    return frozenset(name.strip() for name in text.split(",") if name.strip())


def _declaring(group: str) -> Iterator[tuple[importlib.metadata.Distribution, Message]]:
    """The distributions whose ``entry_points.txt`` has a ``[group]`` section, the first
    of each name on ``sys.path`` (as ``importlib.metadata.entry_points`` takes them),
    each with its metadata's headers (:func:`_headers`).

    A text search of each file spares parsing every other distribution's entry points,
    which was most of the time an ``arena`` command spent finding its plugins.
    """
    import importlib.metadata

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
    from email.parser import HeaderParser

    text = dist.read_text("METADATA") or dist.read_text("PKG-INFO") or dist.read_text("") or ""
    return HeaderParser().parsestr(text.partition("\n\n")[0])


def _normalized(name: str) -> str:
    """A distribution name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()
