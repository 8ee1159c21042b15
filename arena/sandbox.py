"""Third-party seats run in a separate, locked-down process.

A policy plugin is untrusted code (Axelrod's in-process strategies read and
rewrote their opponents). A sandboxed seat lives in a worker process
(:mod:`arena.sandbox_worker`) that is sent its :class:`~arena.view.SeatView` as
JSON and answers with a reply; it never shares memory with the engine, so the
other hands are simply not there to read.

Isolation, strongest available first (``ARENA_SANDBOX``):
- ``bwrap`` (default when bubblewrap is installed): new user, network, IPC and
  PID namespaces; only the Python installation and the plugin code are visible,
  read-only; a private ``/tmp``. No network, not even to the host's loopback.
- ``process``: a plain child process (the fallback without bubblewrap, with one
  warning): no shared memory, but the file system and network are not hidden.
- ``off``: in-process, for plugin authors debugging their own seat.

Every mode: a scrubbed environment (no API keys), a memory limit, and a wall
clock per decision. A worker that hangs, dies or overruns is killed; the seat's
decisions then go to rule 11's fallback as faults, and the table goes on.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import structlog

import arena
import arena_plugins
from arena.seats import Reply, SeatUnavailable
from arena.view import LegalActions, PastDeal, PublicBid, SeatView, TalkLine

DEFAULT_DECISION_SECONDS = 10.0
STARTUP_SECONDS = 30.0
DEFAULT_MEMORY_MB = 2048
SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64")
KEPT_ENVIRONMENT = ("PATH", "LANG", "LC_ALL", "PYTHONPATH", "ARENA_BLOCK_PLUGINS")

log = structlog.get_logger(__name__)


@attrs.frozen
class SandboxPolicy:
    """How third-party seats are isolated; read once from the environment."""

    mode: str
    decision_seconds: float = DEFAULT_DECISION_SECONDS
    memory_mb: int = DEFAULT_MEMORY_MB

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] = os.environ) -> SandboxPolicy:
        mode = environ.get("ARENA_SANDBOX", "auto")
        if mode not in ("auto", "bwrap", "process", "off"):
            raise ValueError(f"ARENA_SANDBOX must be auto, bwrap, process or off, not {mode!r}")
        if mode == "auto":
            mode = "bwrap" if shutil.which("bwrap") else "process"
        elif mode == "bwrap" and not shutil.which("bwrap"):
            raise ValueError("ARENA_SANDBOX=bwrap but bubblewrap (bwrap) is not installed")
        try:
            seconds = float(environ.get("ARENA_SANDBOX_TIMEOUT", DEFAULT_DECISION_SECONDS))
            memory = int(environ.get("ARENA_SANDBOX_MEMORY_MB", DEFAULT_MEMORY_MB))
        except ValueError as exc:
            raise ValueError(f"bad sandbox limit: {exc}") from None
        return cls(mode=mode, decision_seconds=seconds, memory_mb=memory)


class SandboxedSeat:
    """A seat whose policy runs in a worker process; speaks JSON lines over pipes."""

    def __init__(self, setup: Mapping[str, Any], policy: SandboxPolicy):
        self.policy = policy
        self.dead: str | None = None
        self._buffer = b""
        self.process = subprocess.Popen(
            [*_isolation_prefix(policy), sys.executable, "-m", "arena.sandbox_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=_scrubbed_environment(policy),
        )
        answer = self._exchange({"setup": dict(setup)}, STARTUP_SECONDS)
        if not answer.get("ok"):
            self.close()
            raise RuntimeError(f"sandboxed seat failed to start: {answer.get('error')}")

    def decide(self, view: SeatView):
        answer = self._exchange({"view": view_to_json(view)}, self.policy.decision_seconds)
        if not answer.get("ok"):
            raise RuntimeError(str(answer.get("error"))[:500])
        if answer.get("usage") is not None:
            return Reply(answer.get("reply"), answer["usage"])
        return answer.get("reply")

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            stream.close()

    def _exchange(self, message: dict, seconds: float) -> dict:
        if self.dead:
            raise SeatUnavailable(self.dead)
        try:
            self.process.stdin.write(json.dumps(message).encode() + b"\n")
            self.process.stdin.flush()
            return json.loads(self._read_line(time.monotonic() + seconds))
        except (OSError, ValueError, TimeoutError) as exc:
            self.dead = f"sandboxed seat stopped answering: {exc}"
            log.warning("sandboxed seat killed", reason=self.dead)
            self.process.kill()
            raise SeatUnavailable(self.dead) from None

    def _read_line(self, deadline: float) -> bytes:
        fd = self.process.stdout.fileno()
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                raise TimeoutError(f"no reply within {self.policy.decision_seconds:g}s")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise OSError("worker exited")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line


def view_to_json(view: SeatView) -> dict[str, Any]:
    return attrs.asdict(view)


def view_from_json(data: Mapping[str, Any]) -> SeatView:
    legal = data["legal"]
    return SeatView(
        **{
            **data,
            "symbols": tuple(data["symbols"]),
            "table_order": tuple(data["table_order"]),
            "hand": tuple(data["hand"]),
            "bids": _bids(data["bids"]),
            "talk": tuple(TalkLine(**line) for line in data["talk"]),
            "history": tuple(_past_deal(deal) for deal in data["history"]),
            "legal": LegalActions(
                can_challenge=legal["can_challenge"],
                min_bid=tuple(legal["min_bid"]) if legal["min_bid"] is not None else None,
                max_quantity=legal["max_quantity"],
            ),
        }
    )


def _bids(items) -> tuple[PublicBid, ...]:
    return tuple(PublicBid(**bid) for bid in items)


def _past_deal(data: Mapping[str, Any]) -> PastDeal:
    hands = tuple(tuple(hand) for hand in data["hands"])
    return PastDeal(**{**data, "bids": _bids(data["bids"]), "hands": hands})


def _scrubbed_environment(policy: SandboxPolicy) -> dict[str, str]:
    """Only what Python needs: API keys and the like never reach plugin code."""
    env = {key: os.environ[key] for key in KEPT_ENVIRONMENT if key in os.environ}
    env.update(HOME="/tmp", PYTHONNOUSERSITE="1", ARENA_SANDBOX_MEMORY_MB=str(policy.memory_mb))
    return env


def _isolation_prefix(policy: SandboxPolicy) -> list[str]:
    if policy.mode != "bwrap":
        return []
    prefix = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session"]
    prefix += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    for path in _visible_paths():
        prefix += ["--ro-bind", path, path]
    for link in SYSTEM_LINKS:
        if os.path.islink(link):  # merged-/usr systems: /lib64 -> usr/lib64 holds the ELF loader
            prefix += ["--symlink", os.readlink(link), link]
    return prefix


def _visible_paths() -> list[str]:
    """System libraries, the Python installation, and the code on the import path.

    The working directory is left out unless the import path needs it, so an
    event log being written there is not readable from the sandbox.
    """
    candidates = ["/usr", "/etc/alternatives", "/etc/ld.so.cache"]
    candidates += [link for link in SYSTEM_LINKS if not os.path.islink(link)]
    candidates += [sys.prefix, sys.base_prefix, sys.exec_prefix]
    candidates += [str(Path(arena.__file__).parent), str(Path(arena_plugins.__file__).parent)]
    candidates += [p for p in sys.path[1:] if p]
    candidates += [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    seen: list[str] = []
    for path in candidates:
        real = os.path.realpath(path)
        if os.path.exists(real) and not any(_within(real, kept) for kept in seen):
            seen = [kept for kept in seen if not _within(kept, real)] + [real]
    return sorted(seen)


def _within(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")
