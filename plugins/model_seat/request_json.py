"""A model seat's requests as the JSON bytes sent, what repeats from request to request
encoded once.

Both wires post bytes they encoded (the SDK client's ``post`` with ``content``), which
are :func:`encoded`'s: compact UTF-8 JSON with NaN refused, as both SDKs encode a body.
By deal 160 encoding a body costs about 0.3 ms (62 KiB: escaping text into JSON runs at
a few hundred MB/s), a sixth of the whole request's CPU, and nearly all of the body is
the table record, which every request repeats: as the same content blocks (Claude,
:meth:`~arena_plugins.model_seat.prompt.SeatRecord.blocks`), or as a text that starts
with the same finished deals (chat completions,
:attr:`~arena_plugins.model_seat.prompt.SeatRecord.finished`). A seat's
:class:`RequestBody` keeps the JSON of each plain text block it has sent and of the
finished record, and encodes only the rest. The bytes are :func:`encoded`'s, byte for
byte (``tests/test_request_json.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from json import JSONEncoder
from typing import Any

_json = JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
PLAIN_TEXT = ("type", "text")
"""The keys, in order, of a text block without a breakpoint (``type`` being ``"text"``):
the blocks kept encoded, by their text."""


def encoded(request: Mapping[str, Any]) -> bytes:
    """A request as the SDKs encode a body: compact UTF-8 JSON, a NaN refused."""
    return _json(request).encode()


class RequestBody:
    """One seat's request bodies, :func:`encoded`'s bytes: of each message, every plain text
    block but its last (the turn) is encoded once for the seat's episode, and a text
    content that starts with ``kept`` (the record's finished deals) has that part's JSON
    extended by what was added since, not encoded again.

    Not an attrs class: a cache that grows in place, one per seat, never shared."""

    def __init__(self) -> None:
        self._blocks: dict[str, str] = {}
        """A plain text block's text, and the block's JSON."""
        self._kept = ""
        self._kept_json = ""
        """The kept text so far, and its JSON without the quotes."""

    def __call__(self, request: Mapping[str, Any], kept: str = "") -> bytes:
        messages = ",".join(self._message(message, kept) for message in request["messages"])
        return _with_encoded(request, "messages", f"[{messages}]").encode()

    def _message(self, message: Mapping[str, Any], kept: str) -> str:
        content = message["content"]
        if isinstance(content, str) and kept and content.startswith(kept):
            return _with_encoded(message, "content", self._text(content, kept))
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

    def _text(self, text: str, kept: str) -> str:
        """``text``'s JSON, for a text that starts with ``kept``. A JSON string escapes
        character by character, so the JSON of ``kept`` is that of the part kept before
        followed by that of what was added."""
        if not kept.startswith(self._kept):  # a record started again
            self._kept, self._kept_json = "", ""
        self._kept_json += _json(kept[len(self._kept) :])[1:-1]
        self._kept = kept
        return f'"{self._kept_json}{_json(text[len(kept) :])[1:]}'


def _with_encoded(mapping: Mapping[str, Any], key: str, encoded: str) -> str:
    """``mapping``'s JSON object with ``key``'s value given already encoded: the same text
    as encoding it whole (compact separators, the mapping's own key order)."""
    items = (
        f"{_json(name)}:{encoded if name == key else _json(value)}"
        for name, value in mapping.items()
    )
    return "{" + ",".join(items) + "}"
