"""Rule 11's first half: turn whatever a seat replied into one legal action, or a reason.

Accepted forms: a :class:`Bid` or :class:`Challenge`; a mapping
``{"action": "bid"|"challenge", "quantity", "face", "say", "notes"}`` and no other
key (a reply never speaks for another seat); or text
holding such a JSON object, ``bid Q F``, ``QxF`` or ``challenge``/``liar``.
Anything else is rejected with a reason the seat is shown on its second try.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import attrs

from arena.actions import Action, Bid, Challenge
from arena.rules import StandingBid, TableRules
from arena.turns import why_illegal

MAX_LOGGED_REPLY = 4000
MAX_LOGGED_DEPTH = 32
"""Nesting past this in a rejected reply is not logged: json would recurse through it
when writing and reading, and a real reply is two levels deep."""
REPLY_FIELDS = ("action", "quantity", "face", "say", "notes")

_BID_TEXT = re.compile(r"^\s*(?:bid\s+)?(\d+)\s*(?:x|\*|×|\s)\s*(\d+)\s*[.!]?\s*$", re.IGNORECASE)
_CHALLENGE_TEXT = re.compile(r"^\s*(?:challenge|liar|call)\s*[.!]?\s*$", re.IGNORECASE)


class IllegalReply(ValueError):
    """The reply does not yield exactly one legal action; ``str(e)`` is the reason."""


@attrs.frozen
class Unusable:
    """A reply its seat already knows names no action, with the seat's own reason (a model
    cut off at its token limit mid-call): rule 11 rejects it with that reason as it is,
    rather than a parser's guess at text it was never meant to read, and logs ``text``,
    what the model wrote, as the rejected reply."""

    reason: str
    text: str = ""


def parse_action(reply: Any) -> Action:
    """The action a reply names, checked for shape only (not legality)."""
    if isinstance(reply, (Bid, Challenge)):
        return reply
    if isinstance(reply, Unusable):
        raise IllegalReply(reply.reason)
    if isinstance(reply, str):
        return _parse_text(reply)
    if isinstance(reply, Mapping):
        return _parse_mapping(reply)
    if isinstance(reply, (list, tuple)):
        raise IllegalReply(f"{len(reply)} actions in one reply: exactly one is allowed")
    raise IllegalReply(f"unparseable reply of type {type(reply).__name__}")


def check_legal(
    action: Action, rules: TableRules, standing: StandingBid | None, bids_made: int
) -> Action:
    """Rules 3, 4, 6 and 8 (:func:`arena.turns.why_illegal`) applied to a parsed action;
    returns it or raises."""
    error = why_illegal(action, rules, standing, bids_made)
    if error:
        raise IllegalReply(error)
    return action


def action_record(action: Action) -> dict[str, Any]:
    """An action in the mapping form a seat may reply with (inverse of ``parse_action``)."""
    return {"action": "bid" if isinstance(action, Bid) else "challenge", **attrs.asdict(action)}


def loggable(reply: Any) -> Any:
    """A JSON-able, size-bounded copy of a reply for the ``rejected`` event; a reply that
    is not strict JSON (a NaN or an infinity, which the log's reader refuses) is logged
    as its repr, and one nested past :data:`MAX_LOGGED_DEPTH` (which no encoder or parser
    need follow) by its type alone."""
    if isinstance(reply, (Bid, Challenge)):
        return action_record(reply)
    if isinstance(reply, Unusable):
        return reply.text[:MAX_LOGGED_REPLY]
    if isinstance(reply, str):
        return reply[:MAX_LOGGED_REPLY]
    if _nested_past(reply, MAX_LOGGED_DEPTH):
        return f"a {type(reply).__name__} nested past {MAX_LOGGED_DEPTH} levels"
    try:
        text = json.dumps(reply, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return repr(reply)[:MAX_LOGGED_REPLY]
    return reply if len(text) <= MAX_LOGGED_REPLY else text[:MAX_LOGGED_REPLY]


def _nested_past(value: Any, limit: int) -> bool:
    """Whether lists, tuples or mappings nest more than ``limit`` deep, walked without
    recursion (a hostile reply may nest 100,000 deep)."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth == limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def _parse_text(text: str) -> Action:
    stripped = text.strip()
    if not stripped:  # e.g. a model that spent its max_tokens thinking
        raise IllegalReply("empty reply: no action named (expected 'bid Q F' or 'challenge')")
    if stripped.startswith("{"):
        try:
            return _parse_mapping(json.loads(stripped))
        except json.JSONDecodeError as exc:
            where = "character" if exc.msg.endswith(" at") else "at character"
            raise IllegalReply(f"unparseable JSON reply: {exc.msg} {where} {exc.pos}") from None
        except RecursionError:  # a reply nested past the parser's stack
            raise IllegalReply("unparseable JSON reply: nested too deep") from None
    if _CHALLENGE_TEXT.match(stripped):
        return Challenge()
    match = _BID_TEXT.match(stripped)
    if match:
        return Bid(quantity=int(match[1]), face=int(match[2]))
    raise IllegalReply(f"unparseable reply {stripped[:160]!r}: expected 'bid Q F' or 'challenge'")


def _parse_mapping(reply: Any) -> Action:
    if not isinstance(reply, Mapping):
        raise IllegalReply("unparseable reply: expected a JSON object")
    unknown = sorted(str(key) for key in reply if key not in REPLY_FIELDS)
    if unknown:
        # A reply speaks for its own seat only: a "seat" or "hands" field is refused, not ignored.
        raise IllegalReply(
            f"unknown field {', '.join(unknown)}: a reply holds only {', '.join(REPLY_FIELDS)}"
        )
    say = _optional_text(reply, "say")
    notes = _optional_text(reply, "notes")
    kind = reply.get("action")
    if kind == "challenge":
        return Challenge(say=say, notes=notes)
    if kind == "bid":
        return Bid(_integer(reply, "quantity"), _integer(reply, "face"), say=say, notes=notes)
    raise IllegalReply(f"unknown action {_shown(kind)}: expected 'bid' or 'challenge'")


def _integer(reply: Mapping, key: str) -> int:
    value = reply.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise IllegalReply(f"{key} must be an integer, got {_shown(value)}")
    if isinstance(value, str):
        if not value.strip().isdigit():
            raise IllegalReply(f"{key} must be an integer, got {_shown(value)}")
        value = int(value)
    return value


def _optional_text(reply: Mapping, key: str) -> str | None:
    value = reply.get(key)
    if value is None or isinstance(value, str):
        return value
    raise IllegalReply(f"{key} must be text, got {_shown(value)}")


def _shown(value: Any) -> str:
    """A reply's value as the reason shows it: as JSON writes it (``null``, ``true``,
    ``"3"``), cut to 80 characters; a value JSON cannot write, by its Python repr."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= 80 else text[:79] + "…"
