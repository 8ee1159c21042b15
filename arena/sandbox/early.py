"""Which workers a table will need, known from its seat specs before the arena is ready.

``arena play`` names its seats on the command line, and the describe cache
(:mod:`arena.sandbox.describe`) says which untrusted entry point registers each name.
That is all a seat's worker needs to start, so :mod:`arena.cli.startup` calls
:func:`start` before the CLI imports the engine, the plugin host and the rest, and the
workers start while it does (:mod:`arena.sandbox.pool`).

The workers wait for this module's own imports, so they stay clear of the table's: the
modes, views and rules (:mod:`arena.seats` names them for type checking only, and
:mod:`~arena.sandbox.remote` and :mod:`~arena.sandbox.describe` import the views where
a seat or a data mode needs them). They were a quarter of those imports, 10 ms before
the first worker started.

This is a guess made early, never a decision: the names are resolved among the
cached descriptions alone (no in-process plugin is imported for it), and a worker
started for a name the table resolves otherwise is simply never taken. A
distribution not in the cache is described by the table's own start, as before.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from arena.registry import Registry, UnknownName
from arena.sandbox.describe import DescriptionCache, sandboxed_plugins
from arena.sandbox.discovery import discover
from arena.sandbox.policy import SandboxPolicy
from arena.sandbox.pool import EARLY_WORKERS
from arena.sandbox.protocol import WorkerCode
from arena.sandbox.remote import Worker
from arena.seats import SeatSpec


def start(
    seat_specs: Sequence[str],
    sandbox: str | None = None,
    trust: Sequence[str] = (),
    environ: Mapping[str, str] = os.environ,
) -> None:
    """Start the workers of the sandboxed seats among ``seat_specs`` (``--seat`` values,
    comma-separated), under the policy ``--sandbox`` and ``--trust`` choose."""
    try:
        policy = SandboxPolicy.choose(environ, sandbox, tuple(trust))
        specs = [SeatSpec.parse(part) for text in seat_specs for part in text.split(",")]
    except ValueError:  # a bad option or sandbox setting: the command's own parse says so
        return
    if policy.isolation == "in-process" or environ.get("ARENA_DISABLE_PLUGIN_AUTOLOAD"):
        return
    try:
        codes = _sandboxed_codes(_cached_descriptions(policy, environ), specs)
    except Exception:  # noqa: BLE001 - a guess: the command's own load meets it, and says so
        return
    if codes:
        EARLY_WORKERS.start(policy, codes, Worker)


def _sandboxed_codes(registry: Registry, specs: Sequence[SeatSpec]) -> list[WorkerCode]:
    """What each sandboxed seat's worker would be started with, seat by seat."""
    codes = []
    for spec in specs:
        try:
            seat_type, _ = registry.seat_for(spec)
        except UnknownName:  # a first-party or trusted seat, or one not described yet
            continue
        if seat_type.sandboxed:
            codes.append(seat_type.code)
    return codes


def _cached_descriptions(policy: SandboxPolicy, environ: Mapping[str, str]) -> Registry:
    """A registry of what the cache says untrusted distributions register (stand-ins only:
    nothing is imported, nor any worker started, to fill it)."""
    registry = Registry()
    cache = DescriptionCache.at(environ)
    for dist in discover(environ):
        if dist.first_party or policy.isolation_of(dist.name) == "in-process":
            continue
        described = cache.read(cache.key(dist, policy))
        if described is not None:
            sandboxed_plugins(registry, policy, dist, described)
    return registry
