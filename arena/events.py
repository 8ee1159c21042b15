"""The event log's vocabulary: one frozen class per kind of line.

A record is the JSON object of one line: ``{"type": ..., <fields in camelCase>}``.
The log is the server-side, full-information record of an episode (hands
included) and is never shown to a seat. ``docs/event-log.md`` documents it;
bump :data:`LOG_VERSION` on any change a reader could trip over.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from typing import Any, ClassVar

import attrs
import orjson

LOG_VERSION = 2
"""Version 2 added the header's ``provenance`` and mode rule fields and the
``interrupted`` line; a version 1 log (no such fields or lines) still reads."""
READABLE_LOG_VERSIONS = (1, 2)


def _tuple(items) -> tuple:
    """A list as a tuple. Any other value (a number, text or object where a log line
    holds a list) is kept as read, so that the check (:mod:`arena.check`) names the field
    it breaks instead of a reader failing on the conversion."""
    return tuple(items) if isinstance(items, (list, tuple)) else items


def _tuple2(rows) -> tuple[tuple, ...]:
    """Rows as a tuple of tuples, as :func:`_tuple` makes each. Tuples of tuples (the hands
    the engine deals every deal) are kept as they are, at a third of the cost."""
    if type(rows) is tuple and set(map(type, rows)) <= _TUPLES:
        return rows
    return tuple(map(_tuple, rows)) if isinstance(rows, (list, tuple)) else rows


_TUPLES = {tuple}


THOUGHT = "thinking"
REDACTED = "redacted"


@attrs.frozen
class Thought:
    """One block of a model's reasoning behind a reply, as the API returned it."""

    kind: str = attrs.field(validator=attrs.validators.in_((THOUGHT, REDACTED)))
    """``thinking`` (its text, summarised or full) or ``redacted`` (encrypted: no text)."""
    text: str | None = None

    def to_record(self) -> dict[str, Any]:
        if self.kind == REDACTED:
            return {"type": REDACTED}
        return {"type": THOUGHT, "text": self.text}

    @classmethod
    def from_record(cls, record: Any) -> Thought:
        if isinstance(record, Thought):
            return record
        if not isinstance(record, dict) or set(record) not in ({"type"}, {"type", "text"}):
            raise ValueError(f"a thinking block is {{type, text}} or {{type}}, got {record!r}")
        kind, text = record["type"], record.get("text")
        shown = kind == THOUGHT and isinstance(text, str)
        if not (shown or (kind == REDACTED and "text" not in record)):
            raise ValueError(f"bad thinking block {record!r}")
        return cls(kind, text)


def _thoughts(blocks) -> tuple[Thought, ...] | None:
    if blocks is None:
        return None
    if isinstance(blocks, (str, bytes, dict)) or not hasattr(blocks, "__iter__"):
        raise ValueError(f"thinking is a list of blocks, got {blocks!r}")
    return tuple(map(Thought.from_record, blocks))


def _thought_records(thoughts: tuple[Thought, ...]) -> list[dict[str, Any]]:
    return [thought.to_record() for thought in thoughts]


def _thinking_field():
    """A decision's reasoning: written only when the seat returned some, so a log of seats
    that do not think reads byte for byte as before."""
    return attrs.field(
        default=None, converter=_thoughts, metadata={"optional_record": _thought_records}
    )


@attrs.frozen
class SeatEntry:
    """Which policy sits in a slot."""

    slot: int
    policy: str


def _seat_entries(items) -> tuple[SeatEntry, ...]:
    """Seat records as :class:`SeatEntry`; a value of another shape is kept as read, as
    :func:`_tuple` keeps one, for the check to name."""
    if not isinstance(items, (list, tuple)):
        return items
    return tuple(SeatEntry(**x) if is_seat_record(x) else x for x in items)


def is_seat_record(value: Any) -> bool:
    """Whether a header's seat entry is ``{"slot": ..., "policy": ...}``, of any values."""
    return isinstance(value, dict) and value.keys() == attrs.fields_dict(SeatEntry).keys()


class Event:
    """Base of every log line; subclasses are frozen attrs classes with a TYPE.

    They are declared ``slots=False``: attrs' ``__init__`` of a frozen class then writes
    each field straight into the instance dict, where a slotted one calls
    ``object.__setattr__`` once per field. The engine makes an event for every line of
    every log, and that is a third of a ``bid`` event's cost; frozen is frozen either way.
    """

    TYPE: ClassVar[str]

    def to_record(self) -> dict[str, Any]:
        return _RECORD_MAKERS[type(self)](self)


@attrs.frozen(kw_only=True, slots=False)
class EpisodeStarted(Event):
    """First line: everything needed to replay the episode's rules."""

    TYPE: ClassVar[str] = "episode"
    version: int = LOG_VERSION
    seed: int
    mode: str
    symbols: tuple[int, ...] = attrs.field(converter=_tuple)
    hand_size: int
    seats: tuple[SeatEntry, ...] = attrs.field(converter=_seat_entries)
    table_order: tuple[int, ...] = attrs.field(converter=_tuple)
    deals: int
    max_bids_per_deal: int
    talk: bool
    provenance: dict[str, Any] | None = None
    """Who made each plugin at the table and how it ran: ``seats`` (by slot), ``filters``
    and ``reporters`` (by name), each ``{distribution, version, isolation}``."""
    wild: int | None = attrs.field(default=None, metadata={"omit_default": True})
    """The mode's rule data (:meth:`arena.modes.Mode.header_fields`); left out of the
    line at their defaults, so a dice or poker log reads as it always did."""
    wild_counts_itself: bool = attrs.field(default=False, metadata={"omit_default": True})
    raise_rule: str = attrs.field(default="strict", metadata={"omit_default": True})


@attrs.frozen(slots=False)
class DealStarted(Event):
    """Rule 1: the hands of deal ``deal`` in slot order, and who opens."""

    TYPE: ClassVar[str] = "deal"
    deal: int
    opener: int
    hands: tuple[tuple[int, ...], ...] = attrs.field(converter=_tuple2)


@attrs.frozen(slots=False)
class Rejected(Event):
    """Rule 11: a reply that did not yield one legal action, and why."""

    TYPE: ClassVar[str] = "rejected"
    deal: int
    slot: int
    reason: str
    reply: Any
    thinking: tuple[Thought, ...] | None = _thinking_field()
    """The rejected reply's reasoning."""


@attrs.frozen(slots=False)
class Fault(Event):
    """A seat could not answer at all (e.g. its API stayed down); not an illegal move."""

    TYPE: ClassVar[str] = "fault"
    deal: int
    slot: int
    reason: str


@attrs.frozen(slots=False)
class Usage(Event):
    """Token accounting one model call reported (LLM seats only)."""

    TYPE: ClassVar[str] = "usage"
    deal: int
    slot: int
    input_tokens: int
    output_tokens: int
    """Thinking included: it is billed as output."""
    cache_read_tokens: int
    cache_write_tokens: int
    """Every cache write, whatever its lifetime."""
    cache_write_1h_tokens: int = attrs.field(
        default=0, metadata={"key": "cacheWrite1hTokens", "omit_default": True}
    )
    """The part of ``cache_write_tokens`` written with the 1-hour lifetime (left out at 0,
    like the next, so a log whose calls report neither reads as it always did)."""
    thinking_tokens: int = attrs.field(default=0, metadata={"omit_default": True})
    """The part of ``output_tokens`` the model spent thinking, as the API reports it."""
    shape: str | None = attrs.field(default=None, metadata={"omit_default": True})
    """The request shape of the call (:attr:`arena.seats.Reply.shape`), where the wire has
    several; left out otherwise."""


@attrs.frozen(slots=False)
class BidMade(Event):
    """A legal bid was applied (rules 3-5)."""

    TYPE: ClassVar[str] = "bid"
    deal: int
    slot: int
    quantity: int
    face: int
    say: str | None
    """What the seat said."""
    published: str | None
    """What the table saw after the talk filters (``None`` when talk is off)."""
    notes: str | None
    fallback: bool
    """Rule 11: the bayes baseline moved for the seat."""
    thinking: tuple[Thought, ...] | None = _thinking_field()
    """The reasoning the model returned with this reply (never shown to any seat)."""


@attrs.frozen(slots=False)
class ChallengeMade(Event):
    """A challenge resolved (rule 6); ``forced`` when the bid cap made it (rule 8)."""

    TYPE: ClassVar[str] = "challenge"
    deal: int
    slot: int
    bidder: int
    quantity: int
    face: int
    actual: int
    forced: bool
    fallback: bool
    winner: int
    loser: int
    say: str | None
    published: str | None
    notes: str | None
    thinking: tuple[Thought, ...] | None = _thinking_field()


@attrs.frozen(slots=False)
class EpisodeSettled(Event):
    """Last line of play: how the episode ended and the scores, indexed by slot."""

    TYPE: ClassVar[str] = "result"
    status: str
    deals_played: int
    points: tuple[int, ...] = attrs.field(converter=_tuple)
    score: tuple[float, ...] = attrs.field(converter=_tuple)


@attrs.frozen(slots=False)
class Audit(Event):
    """After ``result``: one flag an audit reporter raised; a diagnostic, never a score."""

    TYPE: ClassVar[str] = "audit"
    reporter: str
    """The reporter whose section holds the flag (see docs/audit.md)."""
    flag: dict[str, Any]
    """The flag as it appears in ``results.audit``."""


@attrs.frozen(slots=False)
class Interrupted(Event):
    """Last line of a log the run could not finish: a signal, or a failed write.

    Its presence tells a reader the log was stopped, not that it is still being written.
    """

    TYPE: ClassVar[str] = "interrupted"
    reason: str
    """``SIGINT``, ``SIGTERM``, or ``write error: ...``."""


EVENT_TYPES: dict[str, type[Event]] = {
    cls.TYPE: cls
    for cls in (
        EpisodeStarted,
        DealStarted,
        Rejected,
        Fault,
        Usage,
        BidMade,
        ChallengeMade,
        EpisodeSettled,
        Audit,
        Interrupted,
    )
}


def from_record(record: dict[str, Any]) -> Event:
    """The event a JSON record describes; ``ValueError`` when it describes none."""
    cls = EVENT_TYPES.get(record.get("type"))
    if cls is None:
        raise ValueError(f"unknown event type {record.get('type')!r}")
    by_key = {key: attr for attr, key in _keys(cls)}
    fields = {by_key[k]: v for k, v in record.items() if k in by_key}
    missing = sorted(k for k, attr in by_key.items() if attr not in {*fields, *_defaulted(cls)})
    unknown = sorted(set(record) - set(by_key) - {"type"})
    if missing or unknown:
        raise ValueError(f"{cls.TYPE} event: missing {missing}, unknown {unknown}")
    return cls(**fields)


def to_line(event: Event) -> str:
    """The event as one compact JSON line (no trailing newline)."""
    return encode_line(event)[:-1].decode("utf-8")


def encode_line(event: Event) -> bytes:
    """The event's line as the log holds it: UTF-8, with its newline.

    Any text round-trips: the line separators a JSON string may hold raw (U+0085,
    U+2028, U+2029) are written escaped, so even a reader that splits on every Unicode
    line break (``str.splitlines``, a naive tool) sees one record a line, and so are
    lone surrogates (a JSON reply may hold ``"\\ud800"``), which no UTF-8 file can hold
    raw. Other text is written as it is; a log without such characters is unchanged.
    """
    kind = type(event)
    return encode_record(kind, _RECORD_MAKERS[kind](event))


def encode_record(kind: type[Event], record: dict[str, Any]) -> bytes:
    """:func:`encode_line` of an event of class ``kind`` whose record is already made."""
    fast = _fast_line(kind, record)
    if fast is not None:
        return fast if fast.isascii() else _SEPARATORS_BYTES.sub(_escape_bytes, fast)
    text = _ENCODER.encode(record)
    if not text.isascii():
        text = _UNSAFE_TEXT.sub(_escape_text, text)
    return (text + "\n").encode("utf-8")


def _fast_line(kind: type[Event], record: dict[str, Any]) -> bytes | None:
    """The line by orjson, with its newline, or ``None`` where the stdlib must write it.

    The per-decision events are encoded by orjson, which writes the same bytes as
    the stdlib encoder below for their ints, bools, nulls and strings at a tenth of
    the cost. Events that may hold floats (whose exponents the two spell
    differently: ``1e-05`` against ``1e-5``) or any reply a seat sent keep the stdlib
    encoder, as does a value orjson refuses (an int past 64 bits, a lone surrogate).
    """
    if kind in _FLOATLESS:
        try:
            return orjson.dumps(record, default=_plain, option=orjson.OPT_APPEND_NEWLINE)
        except orjson.JSONEncodeError:
            pass
    return None


def from_line(text: str) -> Any:
    """A line (or a JSON array of lines) parsed as the stdlib parses it.

    orjson, except where it would differ: it refuses ``NaN`` and reads an int past
    64 bits as a float, so text that may hold one (:func:`may_hold_long_int`) goes to
    the stdlib, as does anything orjson refuses.
    """
    return json.loads(text) if may_hold_long_int(text) else parse_fast(text)


def parse_fast(text: str) -> Any:
    """orjson's parse, or the stdlib's where orjson refuses; for text known to hold no
    int past 64 bits (such an int would come back as a float)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def may_hold_long_int(line: str | bytes) -> bool:
    """Whether a line has a run of 19 digits, which every int past 64 bits has."""
    pattern = _LONG_DIGITS if isinstance(line, str) else _LONG_DIGITS_BYTES
    return pattern.search(line) is not None


def _escape_text(match: re.Match) -> str:
    return f"\\u{ord(match[0]):04x}"


def _escape_bytes(match: re.Match) -> bytes:
    return _ESCAPED_SEPARATORS[match[0]]


def _plain(value: Any) -> Any:
    if attrs.has(type(value)):
        return attrs.asdict(value)
    raise TypeError(f"not JSON-able: {type(value).__name__}")


# Built once: json.dumps with non-default options builds a new encoder on every call.
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=_plain)
_UNSAFE_TEXT = re.compile("[\u0085\u2028\u2029\ud800-\udfff]")
"""What the log writes as ``\\uXXXX`` (see :func:`encode_line`). Outside its strings a
JSON line is ASCII, so every match is inside a string, where the escape means the same."""
_ESCAPED_SEPARATORS = {
    char.encode("utf-8"): f"\\u{ord(char):04x}".encode() for char in "\u0085\u2028\u2029"
}
_SEPARATORS_BYTES = re.compile(b"|".join(_ESCAPED_SEPARATORS))
_LONG_DIGITS = re.compile(r"\d{19}")
_LONG_DIGITS_BYTES = re.compile(rb"[0-9]{19}")
_FLOATLESS = frozenset({EpisodeStarted, DealStarted, BidMade, ChallengeMade, Fault, Usage})
"""Events whose fields are all ints, bools, strings, None and tuples of those."""
BOUNDED_INTS = frozenset({DealStarted, BidMade, ChallengeMade, Fault})
"""Events whose ints the engine bounds (deals, slots, legal bids, hands): never past
64 bits, so their lines need no :func:`may_hold_long_int` check."""


@cache
def _keys(cls: type) -> tuple[tuple[str, str], ...]:
    return tuple((f.name, f.metadata.get("key") or _camel(f.name)) for f in attrs.fields(cls))


class _RecordMakers(dict):
    """Each event class's ``to_record``, written once per class as one dict display.

    The log encodes a record per line, and a display (``{"type": "bid", "deal":
    event.deal, ...}``) builds it in a quarter of the time of a generic loop over
    the fields. The source is made from the class's own attrs fields, never from data.
    """

    def __missing__(self, cls: type) -> Callable[[Event], dict[str, Any]]:
        optional = {
            f.name: f.metadata["optional_record"]
            for f in attrs.fields(cls)
            if "optional_record" in f.metadata
        }
        items = "".join(
            f", {key!r}: event.{name}" for name, key in _keys(cls) if name not in optional
        )
        lines = [f"def to_record(event):\n    record = {{'type': {cls.TYPE!r}{items}}}\n"]
        for name, key in _keys(cls):  # last fields, left out when None
            if name in optional:
                lines.append(
                    f"    if event.{name} is not None:\n"
                    f"        record[{key!r}] = optional[{name!r}](event.{name})\n"
                )
        keys = dict(_keys(cls))
        omitted = tuple(
            (keys[f.name], f.default) for f in attrs.fields(cls) if f.metadata.get("omit_default")
        )
        if omitted:  # the mode's rule data and usage's parts, left out at their defaults
            lines.append(
                "    for key, default in omitted:\n"
                "        if record[key] == default:\n"
                "            del record[key]\n"
            )
        namespace: dict[str, Any] = {"omitted": omitted, "optional": optional}
        exec("".join(lines) + "    return record\n", namespace)
        maker = self[cls] = namespace["to_record"]
        return maker


_RECORD_MAKERS = _RecordMakers()


@cache
def _defaulted(cls: type) -> frozenset[str]:
    return frozenset(f.name for f in attrs.fields(cls) if f.default is not attrs.NOTHING)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)
