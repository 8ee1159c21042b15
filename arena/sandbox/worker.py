"""The worker: the only process where a third-party distribution's code runs.

Started by :mod:`arena.sandbox.launch` as ``python -S -m arena.sandbox.worker READ_FD
WRITE_FD``. Before importing anything of a plugin it makes itself undumpable (no
ptrace, no ``/proc/<pid>/mem`` from its own uid's other processes), asks to be
killed with its parent, and sets its resource limits, soft and hard, so plugin
code cannot raise them. Then it reads the ``load`` message and imports the entry
points it names, one by one, and only those: the arena has already applied the
user's selection, and a seat's worker gets only its own plugin. Each entry point's
registrations go back as one frame (:mod:`arena.sandbox.protocol`). Requests
follow, one frame each: ``seat``, ``decide``, ``filter``, ``report``.

Start-up is most of what a sandboxed table costs, so nothing here imports numpy:
its import was most of a worker's start, and it comes with the first draw from a
seat's stream (:class:`_DeferredGenerator`), or with a plugin that imports it. Nor
:mod:`arena.replies` (rule 11's parser, with :mod:`arena.turns`: 5 ms of a worker's
start): only a seat that replies with a :class:`~arena.actions.Bid` or
:class:`~arena.actions.Challenge` object needs it, to send it as a record
(:func:`_answer`); a reply that is already data goes as it is.

Nor does the cyclic garbage collector run while the worker imports its own modules:
everything they make lives as long as the worker, and the passes that walked it were
7% of those imports' CPU (3.5-3.8 of 52-55 ms). :func:`main` freezes their objects out
of every later pass and turns the collector back on before any plugin code runs, so a
plugin's import and its seat meet the collector as anywhere else.
"""

from __future__ import annotations

import gc

if __name__ == "__main__":  # the worker process, not a test importing its functions
    gc.disable()

import ctypes
import functools
import importlib
import os
import resource
import signal
import site
import sys
from typing import Any

from arena.actions import Bid, Challenge
from arena.hookspecs import hookimpl
from arena.plugins import PluginHost, PluginInfo, new_host, one_line
from arena.rules import TableRules
from arena.sandbox.protocol import WorkerCode, read_frame, write_frame
from arena.sandbox.views import ViewReceiver, mode_from_json, mode_to_json
from arena.seats import Reply, SeatContext

PR_SET_DUMPABLE = 4
PR_SET_PDEATHSIG = 1
REQUEST_CAP = 1 << 30
"""What the worker accepts from the arena (an audit reporter gets the whole log)."""


def main(argv: list[str]) -> int:
    read_fd, write_fd = int(argv[0]), int(argv[1])
    gc.freeze()
    gc.enable()
    _harden()
    for directory in os.environ.get("ARENA_SITE_DIRS", "").split(os.pathsep):
        if directory:
            site.addsitedir(directory)  # editable installs are .pth files there
    sys.stdout = sys.stderr  # prints are the plugin's, and never reach the protocol fds
    try:
        code = WorkerCode.from_load_message(read_frame(read_fd, None, REQUEST_CAP))
    except Exception:  # the arena is gone, or did not speak the protocol
        return 1
    host = new_host()
    for name, value in code.entry_points:
        write_frame(write_fd, {"plugin": describe(host, _import(host, code, name, value))})
    write_frame(write_fd, {"ok": True})
    serve(host, read_fd, write_fd)
    return 0


def serve(host: PluginHost, read_fd: int, write_fd: int) -> None:
    """Answer requests until the arena closes the pipe."""
    session = _Session(host)
    while True:
        try:
            message = read_frame(read_fd, None, REQUEST_CAP)
        except Exception:  # the arena is gone or done
            return
        try:
            answer = {"ok": True, **session.handle(message)}
        except Exception as exc:  # reported to the arena, which applies rule 11
            answer = {"ok": False, "error": one_line(exc)[:500]}
        write_frame(write_fd, answer)


def describe(host: PluginHost, plugin: PluginInfo) -> dict[str, Any]:
    """What one entry point registered, as data: names, descriptions, modes' declarations."""
    registry = host.registry

    def of(table):
        return [value for value in table.values() if value.source == plugin.name]

    return {
        "name": plugin.name,
        "hooks": list(plugin.hooks),
        "broken": plugin.broken,
        "dropped": list(plugin.dropped),
        "seats": [
            {
                "name": s.name,
                "description": s.description,
                "stochastic": s.stochastic,
                "argument": s.argument,
            }
            for s in of(registry.seats)
        ],
        "modes": [
            {**mode_to_json(m), "data": m.is_data}
            for m, source in registry.modes.values()
            if source == plugin.name
        ],
        "talkFilters": [{"name": f.name, "order": f.order} for f in of(registry.talk_filters)],
        "reporters": [{"name": r.name} for r in of(registry.reporters)],
    }


class _Session:
    def __init__(self, host: PluginHost):
        self.registry = host.registry
        self.seat = None
        self.views = ViewReceiver()

    def handle(self, message: dict[str, Any]) -> dict[str, Any]:
        op = message["op"]
        if op == "seat":
            self.seat = build_seat(self.registry, message)
            return {}
        if op == "decide":
            return _answer(self.seat.decide(self.views.decode(message["view"])))
        if op == "filter":
            apply = self.registry.talk_filters[message["name"]].apply
            return {"text": apply(message["text"], message["speaker"])}
        if op == "report":
            return {"section": self.registry.reporters[message["name"]].report(message["records"])}
        raise ValueError(f"unknown request {op!r}")


def build_seat(registry, setup: dict[str, Any]):
    """The seat from its own factory, given only public facts and its private stream."""
    rules = TableRules(
        mode=mode_from_json(setup["mode"]), seats=setup["seats"], max_bids=setup["maxBids"]
    )
    context = SeatContext(
        slot=setup["slot"],
        rules=rules,
        rng=_DeferredGenerator(setup["privateSeed"]),
        arg=setup["arg"],
        talk=setup["talk"],
        policies=tuple(setup["policies"]),
    )
    return registry.seats[setup["name"]].factory(context)


def _import(host: PluginHost, code: WorkerCode, name: str, value: str) -> PluginInfo:
    """Import one entry point and register what it provides; whatever it raises, even
    ``SystemExit``, makes it broken and leaves its siblings to load."""
    try:
        module, _, qualname = value.partition(":")
        target = importlib.import_module(module.strip())
        if qualname:
            target = functools.reduce(getattr, qualname.strip().split("."), target)
    except BaseException as exc:  # noqa: BLE001 - an exit at import is a broken plugin too
        return host.registry.record(
            PluginInfo(name, code.distribution, code.version, broken=one_line(exc))
        )
    if code.factory:
        return host.add(_OneSeat(name, target), name)
    return host.add(target, name, code.distribution, code.version)


class _DeferredGenerator:
    """The seat's private stream, a numpy ``Generator`` built when first used: most seats'
    workers never import numpy otherwise, and importing it was most of their start."""

    def __init__(self, seed: int):
        self._seed = seed
        self._generator = None

    def __getattr__(self, name: str) -> Any:
        if self._generator is None:
            import numpy as np

            self._generator = np.random.Generator(np.random.PCG64(self._seed))
        return getattr(self._generator, name)


class _OneSeat:
    """A plugin registering one factory under its own ``module:qualname``."""

    def __init__(self, name: str, factory):
        self.name, self.factory = name, factory

    @hookimpl
    def register_seats(self, register):
        register(self.name, self.factory)


def _answer(reply: Any) -> dict[str, Any]:
    usage = None
    if isinstance(reply, Reply):
        reply, usage = reply.content, reply.usage
    if isinstance(reply, (Bid, Challenge)):
        from arena.replies import action_record  # only for such a reply: see the module's doc

        reply = action_record(reply)
    return {"reply": reply, "usage": usage}


def _harden() -> None:
    """Undumpable, and limits no plugin can raise: set soft and hard before any import."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # the arena killed: so is the worker
    memory_mb, processes, cpu_seconds = map(int, os.environ["ARENA_WORKER_LIMITS"].split(","))
    for limit, value in (
        (resource.RLIMIT_AS, memory_mb << 20),
        (resource.RLIMIT_NPROC, processes),
        (resource.RLIMIT_CPU, cpu_seconds),
        (resource.RLIMIT_CORE, 0),
    ):
        if value or limit != resource.RLIMIT_NPROC:  # no own uid: the user's count is not ours
            resource.setrlimit(limit, (value, value))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
