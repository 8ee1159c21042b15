"""Finding, loading and indexing plugins, on the right side of the trust boundary.

Every plugin comes from the ``arena`` entry-point group of an installed
distribution. Discovery reads metadata only (:mod:`arena.sandbox.discovery`).
This project's own distribution is imported here, in the arena; so is a
distribution the user trusts (``--trust DIST``, ``ARENA_TRUST``). Every other
distribution is imported only inside its own sandboxed worker, which reports
what it registers; its seats, talk filters and reporters then run there too
(:mod:`arena.sandbox`), and its modes are listed as data but not played.

Names: a first-party name is reserved, and a third party registering it is
refused with both distributions named. Two third parties registering one name
keep it as ``DIST:NAME`` each, and the bare name asks which. A plugin that
fails to import (even with ``SystemExit``), crashes, hangs or breaks while
registering is reported as broken and skipped, so one bad plugin never takes the
CLI down, nor its siblings in one distribution. Asking for what a withheld, broken
or refused plugin would have provided says which and why
(:attr:`Registry.withheld`), not "unknown".

Environment switches, for tests and for users (:class:`~arena.sandbox.discovery.Selection`):
``ARENA_DISABLE_PLUGIN_AUTOLOAD=1`` loads no entry points at all;
``ARENA_BLOCK_PLUGINS=a,b`` skips the named entry points; ``ARENA_LOAD_PLUGINS=a,b``
loads only those (and the essentials). A skipped entry point is imported nowhere.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs
import pluggy

from arena import hookspecs, logs
from arena.sandbox.discovery import (
    ENTRY_POINT_GROUP,
    FIRST_PARTY_DISTRIBUTION,
    WITHHELD,
    Distribution,
    discover,
)
from arena.sandbox.policy import SandboxPolicy, canonical_name

if TYPE_CHECKING:  # a sandbox worker imports this module: no modes, no numpy
    from arena.modes import Mode
    from arena.sandbox.protocol import WorkerCode

__all__ = ["ENTRY_POINT_GROUP", "FIRST_PARTY_DISTRIBUTION", "load", "new_host"]
LOCAL = {"distribution": "local", "version": "", "isolation": "in-process"}
"""Provenance of a plugin registered by hand (tests, the conformance kit)."""
REGISTRATION_HOOKS = (
    "register_modes",
    "register_seats",
    "register_talk_filters",
    "register_audit_reporters",
)

log = logs.get_logger(__name__)


class UnknownName(LookupError):
    """A mode, seat, filter or reporter name nobody registered."""


class DuplicateName(ValueError):
    """Two plugins registered the same name."""


class ReservedName(DuplicateName):
    """A third party registered a name this project's own plugins hold."""


@attrs.frozen
class PluginInfo:
    """One entry point as ``arena plugins`` reports it."""

    name: str
    distribution: str | None
    version: str | None
    hooks: tuple[str, ...] = ()
    broken: str | None = None
    """Why it was skipped, or ``None`` when it loaded."""
    isolation: str = "in-process"
    """Where its code runs: ``in-process``, ``bwrap`` or ``process``."""
    refused: tuple[str, ...] = ()
    """Registrations refused (a reserved name), one line each."""
    modes: tuple[dict, ...] = ()
    """Modes an untrusted distribution declares: listed as data, not played without --trust."""
    selection: str = "loaded"
    """``loaded``, ``essential``, ``allowed``, or a key of :data:`WITHHELD`: never imported."""
    dropped: tuple[str, ...] = ()
    """Names it registered before it broke, withdrawn with it."""

    @property
    def withheld(self) -> str | None:
        """Why the user's selection kept it from loading, or ``None``."""
        return WITHHELD.get(self.selection)

    def unavailable(self) -> str | None:
        """Why it provides nothing (withheld or broken), as one line naming it, or ``None``."""
        why = self.withheld or (f"broken: {self.broken}" if self.broken else None)
        where = f" ({self.distribution} {self.version})" if self.distribution else ""
        return f"plugin {self.name!r}{where} is {why}" if why else None

    @property
    def trust(self) -> str:
        """``first-party``; ``local`` (registered by hand, in-process); ``trusted`` (a third
        party the user let in-process); or ``third-party``, sandboxed (:mod:`arena.sandbox`)."""
        if self.distribution is None:
            return "local"
        if self.distribution == FIRST_PARTY_DISTRIBUTION:
            return "first-party"
        return "trusted" if self.isolation == "in-process" else "third-party"


@attrs.frozen
class SeatType:
    name: str
    factory: Callable[..., Any] | None
    """Builds the seat in this process; ``None`` for a seat that lives in a worker."""
    description: str = ""
    stochastic: bool = False
    source: str = ""
    argument: str | None = None
    """What the ``name:ARG`` part means, or ``None``: the seat takes no argument."""
    provenance: dict[str, str] = LOCAL
    """``distribution``, ``version`` and ``isolation``, as the log and results record them."""
    code: WorkerCode | None = None
    """What its worker imports, for a seat that lives in a worker."""

    @property
    def sandboxed(self) -> bool:
        return self.factory is None


@attrs.frozen
class TalkFilter:
    name: str
    apply: Callable[[str, int], str | None]
    order: int = 100
    source: str = ""
    provenance: dict[str, str] = LOCAL


@attrs.frozen
class Reporter:
    name: str
    report: Callable[[list[dict]], Any]
    source: str = ""
    pool: Callable[[list[dict]], Any] | None = None
    """``pool(episodes)``: the section over many episodes' results (``arena audit A B``)."""
    provenance: dict[str, str] = LOCAL


@attrs.define
class Registry:
    """Everything the loaded plugins registered, by stable name."""

    modes: dict[str, tuple[Mode, str]] = attrs.Factory(dict)
    seats: dict[str, SeatType] = attrs.Factory(dict)
    talk_filters: dict[str, TalkFilter] = attrs.Factory(dict)
    reporters: dict[str, Reporter] = attrs.Factory(dict)

    def mode(self, name: str) -> Mode:
        return self._lookup(self.modes, name, "mode")[0]

    ambiguous: dict[str, list[str]] = attrs.Factory(dict)
    """Bare names two third parties registered, to their ``DIST:NAME`` forms."""
    withheld: dict[str, str] = attrs.Factory(dict)
    """Names nobody provides, and why: a refused registration's name, and the name of an
    entry point that was withheld or broken (what it would have registered is unknown,
    and its own name is what a user most likely asks for)."""
    broken: list[str] = attrs.Factory(list)
    """Why each broken plugin is broken: any unknown name may be one of theirs."""
    sources: dict[str, dict[str, str]] = attrs.Factory(dict)
    """Each plugin's provenance by its name (a mode's entry holds only its plugin's name)."""

    def seat(self, name: str) -> SeatType:
        if name in self.ambiguous:
            raise UnknownName(
                f"seat {name!r} is registered by several distributions; "
                f"name one of: {', '.join(self.ambiguous[name])}"
            )
        return self._lookup(self.seats, name, "seat")

    def _lookup(self, table: dict, name: str, kind: str):
        if name in table:
            return table[name]
        if name in self.withheld:
            raise UnknownName(f"{kind} {name!r} is unavailable: {self.withheld[name]}")
        known = ", ".join(sorted(table)) or "none installed"
        broken = f"; broken, providing nothing: {'; '.join(self.broken)}" if self.broken else ""
        raise UnknownName(f"unknown {kind} {name!r} (known: {known}){broken}")

    def provenance_of(self, value: Any) -> dict[str, str]:
        """Who registered a table's ``value``: its own provenance, or a mode's plugin's."""
        if hasattr(value, "provenance"):
            return value.provenance
        return self.sources.get(_source_of(value), LOCAL)

    def withhold(self, name: str, why: str) -> None:
        """Remember why ``name`` is not available; the first reason given stands."""
        self.withheld.setdefault(name, why)

    def seat_for(self, spec):
        """The seat type and plain spec of ``spec``, which may be ``DIST:NAME[:ARG]``."""
        if spec.name not in self.seats and spec.arg and spec.name not in self.ambiguous:
            name, sep, arg = spec.arg.partition(":")
            qualified = f"{spec.name}:{name}"
            if qualified in self.seats:
                return self.seats[qualified], attrs.evolve(spec, arg=arg if sep else None)
        return self.seat(spec.name), spec

    def ordered_talk_filters(self) -> list[TalkFilter]:
        return sorted(self.talk_filters.values(), key=lambda f: (f.order, f.name))


@attrs.define
class PluginHost:
    """The plugin manager plus what it loaded and registered."""

    manager: pluggy.PluginManager
    plugins: list[PluginInfo] = attrs.Factory(list)
    registry: Registry = attrs.Factory(Registry)
    policy: SandboxPolicy | None = None
    """The sandbox settings, fixed before any third-party code ran; ``None`` in a worker."""
    untrusted_missing: tuple[str, ...] = ()
    """Distributions the policy trusts that are not installed (a typo trusts nothing)."""

    def add(
        self, plugin: object, name: str, distribution=None, version=None, selection="loaded"
    ) -> PluginInfo:
        """Register one plugin object, in this process, and collect what it registers.

        Never raises: a plugin that fails is recorded as broken.
        """
        listed = functools.partial(PluginInfo, name, distribution, version, selection=selection)
        provenance = LOCAL
        if distribution is not None:
            provenance = {
                "distribution": distribution,
                "version": version or "",
                "isolation": "in-process",
            }
        self.registry.sources[name] = provenance
        try:
            self.manager.register(plugin, name=name)
            self.manager.check_pending()
        except Exception as exc:  # a hostile or broken plugin must not stop the host
            dropped = self._drop(plugin, name, one_line(exc))
            return self._record(listed(broken=one_line(exc), dropped=dropped))
        try:
            hooks = self._collect(name, provenance)
        except (Exception, SystemExit) as exc:
            dropped = self._drop(plugin, name, one_line(exc))
            return self._record(listed(broken=one_line(exc), dropped=dropped))
        return self._record(listed(hooks=hooks))

    def _collect(self, name: str, provenance: dict[str, str]) -> tuple[str, ...]:
        found = []
        for hook_name in REGISTRATION_HOOKS:
            for impl in getattr(self.manager.hook, hook_name).get_hookimpls():
                if impl.plugin_name == name:
                    impl.function(register=self._registrar(hook_name, name, provenance))
                    found.append(hook_name)
        return tuple(found)

    def _registrar(self, hook_name: str, source: str, provenance) -> Callable[..., None]:
        reg = self.registry

        def register_mode(mode: Mode) -> None:
            _put(reg.modes, mode.name, (mode, source), source)

        def register_seat(name, factory, description="", stochastic=False, argument=None) -> None:
            seat = SeatType(
                name, factory, description, stochastic, source, argument, provenance=provenance
            )
            _put(reg.seats, name, seat, source)

        def register_talk_filter(name, apply, order=100) -> None:
            _put(reg.talk_filters, name, TalkFilter(name, apply, order, source, provenance), source)

        def register_reporter(name, report, pool=None) -> None:
            _put(reg.reporters, name, Reporter(name, report, source, pool, provenance), source)

        return {
            "register_modes": register_mode,
            "register_seats": register_seat,
            "register_talk_filters": register_talk_filter,
            "register_audit_reporters": register_reporter,
        }[hook_name]

    def _drop(self, plugin: object, name: str, why: str) -> tuple[str, ...]:
        """Undo a partial registration: the plugin and everything it registered, each name
        remembered with ``why``; returns those names."""
        if self.manager.is_registered(plugin):
            self.manager.unregister(plugin)
        registry, dropped = self.registry, []
        for table in (registry.modes, registry.seats, registry.talk_filters, registry.reporters):
            for key in [k for k, v in table.items() if _source_of(v) == name]:
                del table[key]
                registry.withhold(key, refusal(name, why))
                dropped.append(key)
        return tuple(dropped)

    def _record(self, info: PluginInfo) -> PluginInfo:
        why = info.unavailable()
        if why:
            self.registry.withhold(info.name, why)
        if info.broken:
            log.warning("plugin skipped", plugin=info.name, reason=info.broken)
            self.registry.broken.append(why)
        self.plugins.append(info)
        return info


def new_host() -> PluginHost:
    """A host with the hookspecs and nothing registered."""
    manager = pluggy.PluginManager("arena")
    manager.add_hookspecs(hookspecs)
    return PluginHost(manager=manager)


def load(
    environ: Mapping[str, str] = os.environ, policy: SandboxPolicy | None = None
) -> PluginHost:
    """A host with every selected installed plugin, each on its side of the boundary.

    ``policy`` (default: from ``environ``) is fixed here, before any third-party
    code runs. Our own distribution and trusted ones are imported in this process
    first, so their names are taken before any untrusted registration is looked at.
    Entry points the selection withholds are listed, and imported nowhere.
    """
    host = new_host()
    host.policy = policy or SandboxPolicy.choose(environ)
    if environ.get("ARENA_DISABLE_PLUGIN_AUTOLOAD"):
        return host
    untrusted = []
    installed = discover(environ)
    unknown = host.policy.trusted - {canonical_name(dist.name) for dist in installed}
    host.untrusted_missing = tuple(sorted(unknown))
    for dist in installed:
        if not dist.first_party and host.policy.isolation_of(dist.name) != "in-process":
            untrusted.append(dist)
            continue
        if not dist.first_party and dist.entry_points:  # trusted code may log through structlog
            logs.structlog()
        for ep in dist.entry_points:
            selection = dist.statuses[ep.name]
            try:
                plugin = ep.load()
            except BaseException as exc:  # noqa: BLE001 - even SystemExit: report, go on
                broken = one_line(exc)
                host._record(PluginInfo(ep.name, dist.name, dist.version, broken=broken,
                                        selection=selection))  # fmt: skip
                continue
            host.add(plugin, ep.name, dist.name, dist.version, selection)
        _record_withheld(host, dist, "in-process")
    # Imported here so a worker, which imports this module, does not load the host side.
    from arena.sandbox.describe import describe_all, sandboxed_plugins

    described = describe_all(host.policy, untrusted, environ)
    for dist in untrusted:
        sandboxed_plugins(host, dist, described[dist.name])
        _record_withheld(host, dist, host.policy.isolation)
    return host


def _record_withheld(host: PluginHost, dist: Distribution, isolation: str) -> None:
    for ep, selection in dist.withheld:
        host._record(PluginInfo(ep.name, dist.name, dist.version, isolation=isolation,
                                selection=selection))  # fmt: skip


def put_third_party(registry: Registry, table: dict, name: str, value: Any, dist: str) -> None:
    """Register an untrusted distribution's ``name``: reserved names refused, clashes qualified."""
    holder = registry.provenance_of(table[name]) if name in table else None
    if holder is not None and holder["distribution"] == dist:
        raise DuplicateName(
            f"{name!r} is registered by both {_source_of(table[name])!r} and "
            f"{_source_of(value)!r} of {dist!r}"
        )
    if holder is not None:
        held = holder["distribution"]
        if held in (FIRST_PARTY_DISTRIBUTION, "local") or holder["isolation"] == "in-process":
            raise ReservedName(f"{name!r} is reserved by {held!r}; {dist!r} may not register it")
        registry.ambiguous[name] = [f"{held}:{name}"]
        table[f"{held}:{name}"] = table.pop(name)
    if name in registry.ambiguous:
        registry.ambiguous[name].append(f"{dist}:{name}")
        name = f"{dist}:{name}"
    table[name] = value


def _put(table: dict, name: str, value: Any, source: str) -> None:
    if name in table:
        raise DuplicateName(
            f"{name!r} is registered by both {_source_of(table[name])!r} and {source!r}"
        )
    table[name] = value


def _source_of(value: Any) -> str:
    return value[1] if isinstance(value, tuple) else value.source


def refusal(plugin: str, why: str) -> str:
    """Why a name ``plugin`` registered is not available, as a lookup of it says."""
    return f"plugin {plugin!r} was refused: {why}"


def one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")
