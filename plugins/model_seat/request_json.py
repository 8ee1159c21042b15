"""A model seat's requests as the JSON bytes sent, what repeats from request to request
encoded once.

Both wires post bytes they encoded (the SDK client's ``post`` with ``content``), which
are :func:`encoded`'s: compact UTF-8 JSON with NaN refused, as both SDKs encode a body.
By deal 160 encoding a body costs about 0.3 ms (62 KiB: escaping text into JSON runs at
a few hundred MB/s), a sixth of the whole request's CPU, and nearly all of the body is
the table record, which every request repeats: as the same leading content blocks
(Claude, :meth:`~arena_plugins.model_seat.prompt.SeatRecord.blocks`), or as a text that
starts with the same finished deals (chat completions,
:attr:`~arena_plugins.model_seat.prompt.SeatRecord.finished`). A seat's
:class:`RequestBody` keeps the UTF-8 JSON of a message's leading plain text blocks and
of the finished record, encodes only the rest, and joins the pieces once. The bytes
are :func:`encoded`'s, byte for byte (``tests/test_request_json.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from json import JSONEncoder
from typing import Any

_json = JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
PLAIN_TEXT = ("type", "text")
"""The keys, in order, of a text block without a breakpoint (``type`` being ``"text"``,
``text`` a string): the blocks whose JSON is kept."""


def encoded(request: Mapping[str, Any]) -> bytes:
    """A request as the SDKs encode a body: compact UTF-8 JSON, a NaN refused."""
    return _json(request).encode()


def _bytes(value: Any) -> bytes:
    return _json(value).encode()


class _Blocks:
    """One message's leading plain text blocks, as last sent, and their JSON joined by
    commas."""

    __slots__ = ("blocks", "json")

    def __init__(self) -> None:
        self.blocks: list[dict[str, Any]] = []
        self.json = bytearray()


class RequestBody:
    """One seat's request bodies, :func:`encoded`'s bytes.

    Of each message (by its place in ``messages``), the plain text blocks it starts with
    are kept encoded: a later request whose content starts with the same blocks, in the
    same key order, has their JSON joined in as it is, and only the blocks after them are
    encoded (the plain ones among them then kept too; never the last, the turn). A text
    content that starts with ``kept`` (the record's finished deals) has that part's JSON
    extended by what was added since, not encoded again.

    Not an attrs class: a cache that grows in place, one per seat, never shared."""

    def __init__(self) -> None:
        self._blocks: dict[int, _Blocks] = {}
        self._kept = ""
        self._kept_json = bytearray()
        """The kept text so far, and its JSON without the quotes."""

    def __call__(self, request: Mapping[str, Any], kept: str = "") -> bytes:
        messages = request.get("messages") if isinstance(request, dict) else None
        if not isinstance(messages, list) or not _str_keys(request):
            return encoded(request)
        listed: list[bytes | bytearray] = [b"["]
        for place, message in enumerate(messages):
            if place:
                listed.append(b",")
            listed += self._message(place, message, kept)
        listed.append(b"]")
        return b"".join(_object(request, "messages", listed))

    def _message(self, place: int, message: Any, kept: str) -> list[bytes | bytearray]:
        content = message.get("content") if isinstance(message, dict) else None
        if content is None or not _str_keys(message):
            return [_bytes(message)]
        if isinstance(content, str) and kept and content.startswith(kept):
            value = [b'"', self._text(kept), _bytes(content[len(kept) :])[1:]]
        elif isinstance(content, list) and content:
            value = [b"[", *self._content(place, content), b"]"]
        else:
            return [_bytes(message)]
        return _object(message, "content", value)

    def _content(self, place: int, content: list[Any]) -> list[bytes | bytearray]:
        """``content``'s blocks' JSON joined by commas, without the brackets."""
        held = self._blocks.get(place)
        count = len(held.blocks) if held else 0
        if not held or count >= len(content) or not _same_plain(content[:count], held.blocks):
            held = self._blocks[place] = _Blocks()
            count = 0
        fresh = []
        for block in content[count:-1]:
            if not fresh and _plain(block):
                held.json += b"," + _bytes(block) if held.blocks else _bytes(block)
                held.blocks.append(block)
            else:
                fresh.append(_bytes(block))
        fresh.append(_bytes(content[-1]))
        joined = b",".join(fresh)
        return [held.json, b",", joined] if held.blocks else [joined]

    def _text(self, kept: str) -> bytearray:
        """``kept``'s JSON without the quotes. A JSON string escapes character by
        character, so the JSON of ``kept`` is that of the part kept before followed by
        that of what was added."""
        if not kept.startswith(self._kept):  # a record started again
            self._kept, self._kept_json = "", bytearray()
        self._kept_json += _bytes(kept[len(self._kept) :])[1:-1]
        self._kept = kept
        return self._kept_json


def _object(
    mapping: dict[str, Any], key: str, value: list[bytes | bytearray]
) -> list[bytes | bytearray]:
    """``mapping``'s JSON object as pieces, ``key``'s value given already encoded: the same
    bytes as encoding it whole (compact separators, the mapping's own key order)."""
    pieces: list[bytes | bytearray] = []
    for name, item in mapping.items():
        pieces += (b"," if pieces else b"{", _bytes(name), b":")
        if name == key:
            pieces += value
        else:
            pieces.append(_bytes(item))
    pieces.append(b"}")
    return pieces


def _plain(block: Any) -> bool:
    return (
        isinstance(block, dict)
        and tuple(block) == PLAIN_TEXT
        and block["type"] == "text"
        and type(block["text"]) is str
    )


def _same_plain(blocks: list[Any], kept: list[dict[str, Any]]) -> bool:
    """Whether ``blocks`` are ``kept``, plain text blocks, again: equal, and each with
    ``type`` first (equal dicts may order their keys otherwise, which JSON shows). Both
    checks run in C, a few microseconds for 160 blocks."""
    return blocks == kept and all(map("type".__eq__, map(next, map(iter, blocks))))


def _str_keys(mapping: dict[str, Any]) -> bool:
    """Whether every key is a string, so its JSON is the key's own (the encoder writes
    another key, ``1`` or ``True``, as a string it makes)."""
    return all(type(name) is str for name in mapping)
