"""A Claude seat's requests as the JSON bytes sent, each table-record block encoded once.

The seat posts its own bytes (:func:`~arena_plugins.claude.client.create_message`).
Encoding them is a fifth of the SDK call's CPU by deal 160 (a 62 KiB body, about
0.33 ms: JSON-escaping text runs at a few hundred MB/s), and nearly all of it is the
table record. Its blocks stay the same from request to request
(:meth:`~arena_plugins.model_seat.prompt.SeatRecord.blocks`), so a seat's
:class:`RequestBody` keeps each plain record block's JSON and encodes only what
changed: the block the record grew by, the block holding the cache breakpoint, the
turn, and the small rest. The bytes are :func:`message_body`'s, byte for byte.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_json = _ENCODER.encode
PLAIN_TEXT = ("type", "text")
"""The keys, in order, of a text block without a breakpoint (``type`` being ``"text"``):
the blocks kept encoded, by their text."""


def message_body(request: Mapping[str, Any]) -> bytes:
    """A request as the SDK encodes a body: compact UTF-8 JSON, a NaN refused."""
    return _json(request).encode()


class RequestBody:
    """One seat's request bodies: :func:`message_body`, with every plain text block of a
    message but its last (the turn) encoded once for the seat's episode."""

    def __init__(self) -> None:
        self._blocks: dict[str, str] = {}
        """A plain text block's text, and the block's JSON."""

    def __call__(self, request: Mapping[str, Any]) -> bytes:
        messages = ",".join(map(self._message, request["messages"]))
        return _with_encoded(request, "messages", f"[{messages}]").encode()

    def _message(self, message: Mapping[str, Any]) -> str:
        content = message["content"]
        if not isinstance(content, list) or not content:
            return _json(message)
        blocks = [*map(self._block, content[:-1]), _json(content[-1])]
        return _with_encoded(message, "content", f"[{','.join(blocks)}]")

    def _block(self, block: Any) -> str:
        if not isinstance(block, dict) or tuple(block) != PLAIN_TEXT or block["type"] != "text":
            return _json(block)
        text = block["text"]
        encoded = self._blocks.get(text)
        if encoded is None:
            encoded = self._blocks[text] = _json(block)
        return encoded


def _with_encoded(mapping: Mapping[str, Any], key: str, encoded: str) -> str:
    """``mapping``'s JSON object with ``key``'s value given already encoded: the same text
    as encoding it whole (compact separators, the mapping's own key order)."""
    items = (
        f"{_json(name)}:{encoded if name == key else _json(value)}"
        for name, value in mapping.items()
    )
    return "{" + ",".join(items) + "}"
