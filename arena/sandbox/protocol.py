"""The wire between the arena and a worker: length-prefixed JSON frames on dedicated fds.

The arena speaks first: a ``load`` message (:class:`WorkerCode`) says which entry
points the worker imports. The worker answers one ``plugin`` frame per entry point,
in order, and then ``{"ok": true}``: a worker that dies or hangs while importing
one names it by the frames that never came. Requests follow, one frame each.

Never fd 0, 1 or 2: whatever plugin code prints (or writes straight to fd 1)
lands in the worker's captured stderr, not in the protocol. A frame is a 4-byte
big-endian length and that many bytes of UTF-8 JSON. The length comes first, so
a reader refuses an oversized frame before reading it, and reads the body into
one preallocated buffer: linear time, whatever the sender does.
"""

from __future__ import annotations

import json
import os
import select
import struct
import time
from typing import Any

import attrs

HEADER = struct.Struct(">I")
REPLY_CAP = 64 * 1024
"""Largest frame a worker may send (a decision's reply is a few hundred bytes)."""


@attrs.frozen
class WorkerCode:
    """What one worker imports: entry points of one distribution, as ``(name, value)``."""

    distribution: str
    version: str
    entry_points: tuple[tuple[str, str], ...]
    factory: bool = False
    """The one entry point is a seat factory's ``module:qualname``, registered as a seat of
    that name (:mod:`arena.testing`'s seat under test), not a plugin."""

    @classmethod
    def seat_factory(cls, qualified: str) -> WorkerCode:
        return cls(qualified, "", ((qualified, qualified),), factory=True)

    def only(self, name: str) -> WorkerCode:
        """The same distribution with just the entry point ``name``: a seat's worker
        imports the plugin that registered it, and nothing else of its distribution."""
        return attrs.evolve(self, entry_points=tuple(e for e in self.entry_points if e[0] == name))

    @classmethod
    def from_load_message(cls, message: dict[str, Any]) -> WorkerCode:
        entry_points = tuple((name, value) for name, value in message["entryPoints"])
        return cls(message["distribution"], message["version"], entry_points, message["factory"])

    def load_message(self) -> dict[str, Any]:
        return {
            "op": "load",
            "distribution": self.distribution,
            "version": self.version,
            "entryPoints": [list(entry) for entry in self.entry_points],
            "factory": self.factory,
        }


ENTRY_FIELDS = {
    "seats": {"name": str, "description": str, "stochastic": bool, "argument": (str, type(None))},
    "modes": {"name": str, "symbols": list, "handSize": int, "description": str, "data": bool},
    "talkFilters": {"name": str, "order": int},
    "reporters": {"name": str},
}
"""What each kind of registration in a ``plugin`` frame holds, and the types (the worker
runs third-party code: a frame is data to check, never trusted)."""


def is_description(plugin: Any) -> bool:
    """Whether ``plugin`` is one entry point's description as the worker makes it."""
    if not isinstance(plugin, dict) or not isinstance(plugin.get("name"), str):
        return False
    if not isinstance(plugin.get("broken"), (str, type(None))):
        return False
    names = (plugin.get("hooks"), plugin.get("dropped", []))
    if not all(isinstance(n, list) and all(isinstance(x, str) for x in n) for n in names):
        return False
    for kind, fields in ENTRY_FIELDS.items():
        entries = plugin.get(kind)
        if not isinstance(entries, list):
            return False
        for entry in entries:
            if not isinstance(entry, dict) or not all(
                isinstance(entry.get(field), kinds) for field, kinds in fields.items()
            ):
                return False
    return True


class ProtocolError(Exception):
    """The other side broke the protocol: closed, timed out, oversized or not JSON."""


class ReplyTimeout(ProtocolError):
    """The deadline passed before the whole frame arrived."""


def encode(message: Any, from_arena: bool = False) -> bytes:
    header, body = _frame(message, from_arena)
    return header + body


def write_frame(fd: int, message: Any, from_arena: bool = False) -> None:
    """The header first, on its own: a reader refuses an oversized frame from it at once,
    and a 100 MB body is never copied once more to sit behind it.

    ``from_arena``: the arena's frames are written by orjson, which the arena imports
    anyway (a worker's start would pay 12 ms for it), in a sixth of the stdlib's time
    for a view, and may hold attrs value objects (a view's parts), sent as their fields.
    """
    for part in _frame(message, from_arena):
        data = memoryview(part)
        while data:
            data = data[os.write(fd, data) :]


def _frame(message: Any, from_arena: bool) -> tuple[bytes, bytes]:
    body = _by_orjson(message) if from_arena else None
    if body is None:
        default = _fields_or_repr if from_arena else repr
        body = json.dumps(message, separators=(",", ":"), default=default).encode()
    return HEADER.pack(len(body)), body


def _by_orjson(message: Any) -> bytes | None:
    """``None`` where orjson refuses (an int past 64 bits, a lone surrogate in a talk
    line): the stdlib writes those."""
    import orjson  # the arena's, imported with its event log: never a worker's

    try:
        return orjson.dumps(message, default=_fields_or_repr)
    except orjson.JSONEncodeError:
        return None


def _fields_or_repr(value: Any) -> Any:
    """An attrs value object as its fields (orjson and the stdlib come back for the
    values that need it in turn); anything else JSON has no type for, as its repr."""
    if attrs.has(type(value)):
        return attrs.asdict(value, recurse=False)
    return repr(value)


def read_frame(fd: int, deadline: float | None, cap: int, on_idle=None) -> Any:
    """One message from ``fd`` by ``deadline`` (``time.monotonic``), at most ``cap`` bytes.

    ``on_idle(timeout)`` is called while waiting, so the caller can drain other
    pipes (the worker's stderr) without a thread.
    """
    header = _read_exactly(fd, HEADER.size, deadline, on_idle)
    (size,) = HEADER.unpack(header)
    if size > cap:
        raise ProtocolError(f"reply of {size} bytes is over the {cap}-byte cap")
    body = _read_exactly(fd, size, deadline, on_idle)
    try:
        return json.loads(body)
    except ValueError as exc:
        raise ProtocolError(f"reply is not JSON: {exc}") from None


def _read_exactly(fd: int, size: int, deadline: float | None, on_idle) -> bytes:
    buffer = bytearray(size)
    view = memoryview(buffer)
    filled = 0
    while filled < size:
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ReplyTimeout("no reply within the deadline")
            if not _wait_readable(fd, remaining, on_idle):
                continue
        count = os.readv(fd, [view[filled:]])
        if count == 0:
            raise ProtocolError("the worker closed its pipe")
        filled += count
    return bytes(buffer)


def _wait_readable(fd: int, timeout: float, on_idle) -> bool:
    if on_idle is not None:
        return on_idle(fd, timeout)
    return bool(select.select([fd], [], [], timeout)[0])
