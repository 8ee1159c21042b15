"""Finding, loading and indexing plugins.

Every plugin, first-party or not, comes from the ``arena`` entry-point group of
an installed distribution. Loading is forgiving: a plugin that fails to import,
implements a misspelled hook (``check_pending``) or fails while registering is
reported as broken and skipped, so one bad plugin never takes the CLI down.

Environment switches, for tests and for users:
``ARENA_DISABLE_PLUGIN_AUTOLOAD=1`` loads no entry points at all;
``ARENA_BLOCK_PLUGINS=a,b`` skips the named entry points.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from importlib.metadata import entry_points
from typing import Any

import attrs
import pluggy
import structlog

from arena import hookspecs
from arena.modes import Mode

ENTRY_POINT_GROUP = "arena"
FIRST_PARTY_DISTRIBUTION = "liars-arena"
REGISTRATION_HOOKS = (
    "register_modes",
    "register_seats",
    "register_talk_filters",
    "register_audit_reporters",
)

log = structlog.get_logger(__name__)


class UnknownName(LookupError):
    """A mode, seat, filter or reporter name nobody registered."""


class DuplicateName(ValueError):
    """Two plugins registered the same name."""


@attrs.frozen
class PluginInfo:
    """One entry point as ``arena plugins`` reports it."""

    name: str
    distribution: str | None
    version: str | None
    hooks: tuple[str, ...] = ()
    broken: str | None = None
    """Why it was skipped, or ``None`` when it loaded."""

    @property
    def trust(self) -> str:
        """``first-party``; ``local`` (registered by hand, in-process); or ``third-party``,
        whose seats run sandboxed (:mod:`arena.sandbox`)."""
        if self.distribution is None:
            return "local"
        return "first-party" if self.distribution == FIRST_PARTY_DISTRIBUTION else "third-party"


@attrs.frozen
class SeatType:
    name: str
    factory: Callable[..., Any]
    description: str = ""
    stochastic: bool = False
    source: str = ""
    argument: str | None = None
    """What the ``name:ARG`` part means, or ``None``: the seat takes no argument."""


@attrs.frozen
class TalkFilter:
    name: str
    apply: Callable[[str, int], str | None]
    order: int = 100
    source: str = ""


@attrs.frozen
class Reporter:
    name: str
    report: Callable[[list[dict]], Any]
    source: str = ""
    pool: Callable[[list[dict]], Any] | None = None
    """``pool(episodes)``: the section over many episodes' results (``arena audit A B``)."""


@attrs.define
class Registry:
    """Everything the loaded plugins registered, by stable name."""

    modes: dict[str, tuple[Mode, str]] = attrs.Factory(dict)
    seats: dict[str, SeatType] = attrs.Factory(dict)
    talk_filters: dict[str, TalkFilter] = attrs.Factory(dict)
    reporters: dict[str, Reporter] = attrs.Factory(dict)

    def mode(self, name: str) -> Mode:
        return _lookup(self.modes, name, "mode")[0]

    def seat(self, name: str) -> SeatType:
        return _lookup(self.seats, name, "seat")

    def ordered_talk_filters(self) -> list[TalkFilter]:
        return sorted(self.talk_filters.values(), key=lambda f: (f.order, f.name))


@attrs.define
class PluginHost:
    """The plugin manager plus what it loaded and registered."""

    manager: pluggy.PluginManager
    plugins: list[PluginInfo] = attrs.Factory(list)
    registry: Registry = attrs.Factory(Registry)

    def add(self, plugin: object, name: str, distribution=None, version=None) -> PluginInfo:
        """Register one plugin object and collect what it registers; never raises."""
        try:
            self.manager.register(plugin, name=name)
            self.manager.check_pending()
        except Exception as exc:  # a hostile or broken plugin must not stop the host
            self._drop(plugin, name)
            return self._record(PluginInfo(name, distribution, version, broken=_one_line(exc)))
        try:
            hooks = self._collect(name)
        except Exception as exc:
            self._drop(plugin, name)
            return self._record(PluginInfo(name, distribution, version, broken=_one_line(exc)))
        return self._record(PluginInfo(name, distribution, version, hooks=hooks))

    def trust(self, plugin_name: str) -> str:
        """The trust level of the plugin registered under ``plugin_name``."""
        for info in self.plugins:
            if info.name == plugin_name:
                return info.trust
        return "local"

    def _collect(self, name: str) -> tuple[str, ...]:
        found = []
        for hook_name in REGISTRATION_HOOKS:
            for impl in getattr(self.manager.hook, hook_name).get_hookimpls():
                if impl.plugin_name == name:
                    impl.function(register=self._registrar(hook_name, name))
                    found.append(hook_name)
        return tuple(found)

    def _registrar(self, hook_name: str, source: str) -> Callable[..., None]:
        reg = self.registry

        def register_mode(mode: Mode) -> None:
            _put(reg.modes, mode.name, (mode, source), source)

        def register_seat(name, factory, description="", stochastic=False, argument=None) -> None:
            seat = SeatType(name, factory, description, stochastic, source, argument)
            _put(reg.seats, name, seat, source)

        def register_talk_filter(name, apply, order=100) -> None:
            _put(reg.talk_filters, name, TalkFilter(name, apply, order, source), source)

        def register_reporter(name, report, pool=None) -> None:
            _put(reg.reporters, name, Reporter(name, report, source, pool), source)

        return {
            "register_modes": register_mode,
            "register_seats": register_seat,
            "register_talk_filters": register_talk_filter,
            "register_audit_reporters": register_reporter,
        }[hook_name]

    def _drop(self, plugin: object, name: str) -> None:
        """Undo a partial registration: the plugin and everything it registered."""
        if self.manager.is_registered(plugin):
            self.manager.unregister(plugin)
        for table in attrs.astuple(self.registry, recurse=False):
            for key in [k for k, v in table.items() if _source_of(v) == name]:
                del table[key]

    def _record(self, info: PluginInfo) -> PluginInfo:
        if info.broken:
            log.warning("plugin skipped", plugin=info.name, reason=info.broken)
        self.plugins.append(info)
        return info


def new_host() -> PluginHost:
    """A host with the hookspecs and nothing registered."""
    manager = pluggy.PluginManager("arena")
    manager.add_hookspecs(hookspecs)
    return PluginHost(manager=manager)


def load(environ: Mapping[str, str] = os.environ) -> PluginHost:
    """A host with every installed ``arena`` entry point loaded, as the environment allows."""
    host = new_host()
    if environ.get("ARENA_DISABLE_PLUGIN_AUTOLOAD"):
        return host
    blocked = {n.strip() for n in environ.get("ARENA_BLOCK_PLUGINS", "").split(",") if n.strip()}
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        if ep.name in blocked:
            continue
        dist = ep.dist.name if ep.dist else None
        version = ep.dist.version if ep.dist else None
        try:
            plugin = ep.load()
        except Exception as exc:  # an uninstallable plugin is reported, not fatal
            host._record(PluginInfo(ep.name, dist, version, broken=_one_line(exc)))
            continue
        host.add(plugin, ep.name, dist, version)
    return host


def _put(table: dict, name: str, value: Any, source: str) -> None:
    if name in table:
        raise DuplicateName(
            f"{name!r} is registered by both {_source_of(table[name])!r} and {source!r}"
        )
    table[name] = value


def _source_of(value: Any) -> str:
    return value[1] if isinstance(value, tuple) else value.source


def _lookup(table: dict, name: str, kind: str):
    if name not in table:
        known = ", ".join(sorted(table)) or "none installed"
        raise UnknownName(f"unknown {kind} {name!r} (known: {known})")
    return table[name]


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")
