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
CLI down, nor its siblings in one distribution. So is one whose hook changes the
registry other than through its ``register`` callback (relabels its entry as another
plugin's, swaps a table): the registry is put back as the plugin found it. Asking for
what a withheld, broken or refused plugin would have provided says which and why
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
from arena.registry import (
    LOCAL,
    Checkpoint,
    DuplicateName,
    PluginInfo,
    Registry,
    RegistryTampered,
    Reporter,
    ReservedName,
    SeatType,
    TalkFilter,
    UnknownName,
    one_line,
    put,
    refusal,
)
from arena.sandbox.discovery import (
    ENTRY_POINT_GROUP,
    FIRST_PARTY_DISTRIBUTION,
    Distribution,
    discover,
)

if TYPE_CHECKING:  # a sandbox worker imports this module: no modes, no numpy, no policy
    from arena.modes import Mode
    from arena.sandbox.policy import SandboxPolicy

__all__ = [  # the registry's names, re-exported for the many readers that import them here
    "ENTRY_POINT_GROUP",
    "FIRST_PARTY_DISTRIBUTION",
    "DuplicateName",
    "PluginInfo",
    "Registry",
    "Reporter",
    "ReservedName",
    "SeatType",
    "TalkFilter",
    "UnknownName",
    "load",
    "new_host",
    "one_line",
]
REGISTRATION_HOOKS = (
    "register_modes",
    "register_seats",
    "register_talk_filters",
    "register_audit_reporters",
)


@attrs.define
class PluginHost:
    """The plugin manager plus what it loaded and registered."""

    manager: pluggy.PluginManager
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
        found = Checkpoint.of(self.registry)
        registered: dict[tuple[str, str], Any] = {}
        try:
            self.manager.register(plugin, name=name)
            self.manager.check_pending()
        except Exception as exc:  # a hostile or broken plugin must not stop the host
            dropped = self._drop(plugin, name, found, registered, one_line(exc))
            return self.registry.record(listed(broken=one_line(exc), dropped=dropped))
        try:
            hooks = self._collect(name, provenance, found, registered)
        except (Exception, SystemExit) as exc:
            dropped = self._drop(plugin, name, found, registered, one_line(exc))
            return self.registry.record(listed(broken=one_line(exc), dropped=dropped))
        return self.registry.record(listed(hooks=hooks))

    def _collect(
        self, name: str, provenance: dict[str, str], found: Checkpoint, registered: dict
    ) -> tuple[str, ...]:
        """Run the plugin's registration hooks, each held to what it passed to ``register``
        (kept in ``registered``) on top of the tables as ``found``."""
        hooks = []
        for hook_name in REGISTRATION_HOOKS:
            for impl in getattr(self.manager.hook, hook_name).get_hookimpls():
                if impl.plugin_name == name:
                    register = self._registrar(hook_name, name, provenance, registered)
                    impl.function(register=register)
                    tampering = found.tampering(self.registry, name, registered)
                    if tampering:
                        raise RegistryTampered(
                            f"{hook_name} changed the registry outside register(): {tampering}"
                        )
                    hooks.append(hook_name)
        return tuple(hooks)

    def _registrar(
        self, hook_name: str, source: str, provenance, registered: dict
    ) -> Callable[..., None]:
        """The ``register`` callback of one hook: each entry put in the registry, and kept
        in ``registered`` as what the plugin may have changed there."""
        reg = self.registry

        def register_mode(mode: Mode) -> None:
            entry = (mode, source)
            put(reg.modes, mode.name, entry, source)
            registered["modes", mode.name] = entry

        def register_seat(
            name, factory, description="", stochastic=False, argument=None, person=None, paid=None
        ) -> None:
            seat = SeatType(
                name,
                factory,
                description,
                stochastic,
                source,
                argument,
                provenance=provenance,
                person=person,
                paid=paid,
            )
            put(reg.seats, name, seat, source)
            registered["seats", name] = seat

        def register_talk_filter(name, apply, order=100) -> None:
            talk_filter = TalkFilter(name, apply, order, source, provenance)
            put(reg.talk_filters, name, talk_filter, source)
            registered["talk_filters", name] = talk_filter

        def register_reporter(name, report, pool=None, compiled=None) -> None:
            reporter = Reporter(name, report, source, pool, provenance, compiled)
            put(reg.reporters, name, reporter, source)
            registered["reporters", name] = reporter

        return {
            "register_modes": register_mode,
            "register_seats": register_seat,
            "register_talk_filters": register_talk_filter,
            "register_audit_reporters": register_reporter,
        }[hook_name]

    def _drop(
        self, plugin: object, name: str, found: Checkpoint, registered: dict, why: str
    ) -> tuple[str, ...]:
        """Undo a partial registration: the plugin unregistered and the tables put back as
        it ``found`` them, whatever it did to them; each name it ``registered`` remembered
        with ``why``. Those names."""
        if self.manager.is_registered(plugin):
            self.manager.unregister(plugin)
        found.restore(self.registry)
        dropped = tuple(dict.fromkeys(key for _, key in registered))
        for key in dropped:
            self.registry.withhold(key, refusal(name, why))
        return dropped

    @property
    def plugins(self) -> list[PluginInfo]:
        return self.registry.plugins


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
    # Imported here, as the describing below: a worker makes a host, and never loads one.
    from arena.sandbox.policy import SandboxPolicy, canonical_name

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
            except KeyboardInterrupt:  # the person's Ctrl-C, not the plugin's fault: stop
                raise
            except BaseException as exc:  # noqa: BLE001 - even SystemExit: report, go on
                broken = one_line(exc)
                host.registry.record(PluginInfo(ep.name, dist.name, dist.version, broken=broken,
                                        selection=selection))  # fmt: skip
                continue
            host.add(plugin, ep.name, dist.name, dist.version, selection)
        _record_withheld(host, dist, "in-process")
    from arena.sandbox.describe import describe_all, sandboxed_plugins

    described = describe_all(host.policy, untrusted, environ)
    for dist in untrusted:
        sandboxed_plugins(host.registry, host.policy, dist, described[dist.name])
        _record_withheld(host, dist, host.policy.isolation)
    return host


def _record_withheld(host: PluginHost, dist: Distribution, isolation: str) -> None:
    for ep, selection in dist.withheld:
        host.registry.record(PluginInfo(ep.name, dist.name, dist.version, isolation=isolation,
                                selection=selection))  # fmt: skip
