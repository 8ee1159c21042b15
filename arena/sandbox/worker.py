"""The worker: the only process where a third-party distribution's code runs.

Started by :mod:`arena.sandbox.launch` as ``python -m arena.sandbox.worker DIST
READ_FD WRITE_FD``. Before importing anything of DIST it makes itself
undumpable (no ptrace, no ``/proc/<pid>/mem`` from its own uid's other
processes), asks to be killed with its parent, and sets its resource limits,
soft and hard, so plugin code cannot raise them. Then it imports DIST's entry
points, and only those (no other vendor's code shares its sandbox), and says
what they registered. Requests follow, one frame each
(:mod:`arena.sandbox.protocol`): ``seat``, ``decide``, ``filter``, ``report``.
"""

from __future__ import annotations

import ctypes
import functools
import importlib
import os
import resource
import signal
import site
import sys
from typing import Any

import numpy as np

from arena.actions import Bid, Challenge
from arena.hookspecs import hookimpl
from arena.plugins import PluginHost, new_host, one_line
from arena.replies import action_record
from arena.rules import TableRules
from arena.sandbox.discovery import find
from arena.sandbox.protocol import read_frame, write_frame
from arena.sandbox.views import ViewReceiver, mode_from_json, mode_to_json
from arena.seats import Reply, SeatContext

PR_SET_DUMPABLE = 4
PR_SET_PDEATHSIG = 1
REQUEST_CAP = 1 << 30
"""What the worker accepts from the arena (an audit reporter gets the whole log)."""


def main(argv: list[str]) -> int:
    distribution, read_fd, write_fd = argv[0], int(argv[1]), int(argv[2])
    _harden()
    for directory in os.environ.get("ARENA_SITE_DIRS", "").split(os.pathsep):
        if directory:
            site.addsitedir(directory)  # editable installs are .pth files there
    sys.stdout = sys.stderr  # prints are the plugin's, and never reach the protocol fds
    try:
        host = _import(distribution)
        hello = {"ok": True, "registered": describe(host)}
    except BaseException as exc:  # noqa: BLE001 - SystemExit at import is a broken plugin too
        hello = {"ok": False, "error": one_line(exc)}
    write_frame(write_fd, hello)
    if not hello["ok"]:
        return 1
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


def describe(host: PluginHost) -> list[dict[str, Any]]:
    """Per entry point, what it registered, as data: names, descriptions, modes' declarations."""
    registry = host.registry

    def of(table, source):
        return [value for value in table.values() if value.source == source]

    return [
        {
            "name": p.name,
            "hooks": list(p.hooks),
            "broken": p.broken,
            "seats": [
                {
                    "name": s.name,
                    "description": s.description,
                    "stochastic": s.stochastic,
                    "argument": s.argument,
                }
                for s in of(registry.seats, p.name)
            ],
            "modes": [
                {**mode_to_json(m), "data": m.is_data}
                for m, source in registry.modes.values()
                if source == p.name
            ],
            "talkFilters": [
                {"name": f.name, "order": f.order} for f in of(registry.talk_filters, p.name)
            ],
            "reporters": [{"name": r.name} for r in of(registry.reporters, p.name)],
        }
        for p in host.plugins
    ]


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
        rng=np.random.Generator(np.random.PCG64(setup["privateSeed"])),
        arg=setup["arg"],
        talk=setup["talk"],
        policies=tuple(setup["policies"]),
    )
    return registry.seats[setup["name"]].factory(context)


def _import(distribution: str) -> PluginHost:
    host = new_host()
    if ":" in distribution:  # arena.testing's seat under test, named as module:qualname
        module, _, qualname = distribution.partition(":")
        factory = functools.reduce(getattr, qualname.split("."), importlib.import_module(module))
        host.add(_OneSeat(distribution, factory), distribution)
        return host
    dist = find(distribution)
    for ep in dist.entry_points:
        host.add(ep.load(), ep.name, dist.name, dist.version)
    return host


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
