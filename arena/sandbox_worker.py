"""The process a sandboxed seat runs in (started by :mod:`arena.sandbox`).

Protocol, JSON lines: the parent sends ``{"setup": {...}}`` once, then
``{"view": {...}}`` per decision; the worker answers each with ``{"ok": true,
"reply": ..., "usage": ...}`` or ``{"ok": false, "error": "..."}``. The plugin's
own prints go to stderr so they cannot corrupt the protocol stream.
"""

from __future__ import annotations

import json
import os
import resource
import sys
from typing import Any

from arena.actions import Bid, Challenge
from arena.plugins import load
from arena.replies import action_record
from arena.runner import EpisodeRequest, build_config, build_seat
from arena.sandbox import view_from_json
from arena.seats import Reply, SeatSpec


def main() -> int:
    protocol = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
    sys.stdout = sys.stderr
    _limit_memory()
    seat = None
    for line in sys.stdin:
        message = json.loads(line)
        try:
            if "setup" in message:
                seat = _build(message["setup"])
                answer: dict[str, Any] = {"ok": True}
            else:
                answer = _answer(seat.decide(view_from_json(message["view"])))
        except Exception as exc:  # reported to the parent, which applies rule 11
            answer = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        protocol.write(json.dumps(answer, default=repr) + "\n")
    return 0


def _build(setup: dict[str, Any]):
    host = load()
    request = EpisodeRequest(
        mode=setup["mode"],
        seed=setup["seed"],
        seats=setup["seats"],
        max_bids=setup["maxBids"],
        talk=setup["talk"],
    )
    config = build_config(host.registry, request)
    spec = SeatSpec.parse(setup["spec"])
    return build_seat(host.registry, config, setup["slot"], spec, tuple(setup["policies"]))


def _answer(reply: Any) -> dict[str, Any]:
    usage = None
    if isinstance(reply, Reply):
        reply, usage = reply.content, reply.usage
    if isinstance(reply, (Bid, Challenge)):
        reply = action_record(reply)
    return {"ok": True, "reply": reply, "usage": usage}


def _limit_memory() -> None:
    megabytes = int(os.environ.get("ARENA_SANDBOX_MEMORY_MB", "2048"))
    limit = megabytes * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


if __name__ == "__main__":
    sys.exit(main())
