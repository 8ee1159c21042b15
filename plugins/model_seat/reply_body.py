"""A model server's reply body as the JSON object it must be, or a fault of the call that says
what came instead.

A wire reads its SDK's raw response (``with_raw_response``, or ``post`` to an
``httpx2.Response``) and hands the body
here, then reads the fields it needs from plain JSON, checking each one's type:
the SDKs build their reply objects without validating them, so an HTML page, a
string where an object belongs or ``NaN`` in the usage reached the seat as a
Python ``AttributeError``, and rule 11 counted it as the model's illegal move.
Here any of those is :class:`UnreadableReply`: a fault of the call, logged with
the server's own text (bounded, printable), never the model's move, and never
retried (the call was answered, and may have been paid for).
"""

from __future__ import annotations

import json
from typing import Any

from arena_plugins.model_seat.bounded import CallFault

SHOWN_TEXT = 200
"""The most of a server's text a fault line quotes."""


class UnreadableReply(CallFault):
    """A reply that is not what the API answers: not JSON, or not in the API's shape."""

    def __init__(self, why: str, usage: dict[str, int] | None = None):
        super().__init__(f"an unreadable reply: {why}")
        self.usage = usage


def decode(body: bytes) -> dict[str, Any]:
    """``body`` as a JSON object; :class:`UnreadableReply` quoting it otherwise. Only strict
    JSON is taken: ``NaN`` and ``Infinity`` are not JSON, whatever Python's parser allows."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UnreadableReply(
            f"not UTF-8 (byte {error.start}): {quoted(body.decode('utf-8', 'replace'))}"
        ) from None
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError) as error:
        if isinstance(error, json.JSONDecodeError):
            why = f"{error.msg} at character {error.pos}"
        else:
            why = "nested too deep" if isinstance(error, RecursionError) else str(error)
        raise UnreadableReply(f"not JSON ({why}): {quoted(text)}") from None
    if not isinstance(value, dict):
        raise UnreadableReply(f"a JSON {json_type(value)} where an object belongs: {quoted(text)}")
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def quoted(text: str) -> str:
    """A server's text as a fault line quotes it: :func:`words`, in quotes; ``(empty)``."""
    shown = words(text)
    return repr(shown) if shown else "(empty)"


def words(text: str) -> str:
    """A server's text as a line may show it: whitespace runs folded, every character
    printable, at most :data:`SHOWN_TEXT` characters."""
    folded = " ".join(text.split())
    printable = "".join(c if c.isprintable() else "\ufffd" for c in folded[: SHOWN_TEXT + 1])
    return printable if len(printable) <= SHOWN_TEXT else printable[: SHOWN_TEXT - 1] + "…"


def json_type(value: Any) -> str:
    """A JSON value's type as JSON names it (``null``, not ``None``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def field(obj: Any, path: str, kinds: type | tuple[type, ...], optional: bool = False) -> Any:
    """``obj``'s value at the dotted ``path`` if it has one of ``kinds`` (``None`` where
    ``optional`` and absent or null); :class:`UnreadableReply` naming the path otherwise."""
    value = obj
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    if value is None and optional:
        return None
    if isinstance(value, kinds) and not (isinstance(value, bool) and bool not in _tuple(kinds)):
        return value
    raise UnreadableReply(f"{path} is {_described(value)}")


def _tuple(kinds: type | tuple[type, ...]) -> tuple[type, ...]:
    return kinds if isinstance(kinds, tuple) else (kinds,)


def _described(value: Any) -> str:
    if value is None:
        return "missing or null"
    if isinstance(value, (dict, list)):
        return f"a JSON {json_type(value)}"
    return f"a JSON {json_type(value)}, {quoted(json.dumps(value))}"
