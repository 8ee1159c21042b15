"""The event log's header held to its format, before any reader sizes anything by it.

A reader builds what it shows from the first line: a hand's width from ``handSize``, the
table from ``seats``, the bid ladder from ``symbols`` and ``maxBidsPerDeal``. A header
that merely parses (a policy that is an object, a hand of a billion symbols, a cap past
any engine's) would make a reader crash, hang or fill memory, so every reader, checked or
``--unchecked``, refuses one here, in one line. This is the one description of the
header's format in code (docs/event-log.md gives it to a person): each field's JSON type,
then its values. The ranges are the engines' own, since the table the header describes is
built by the classes that build a played one (:class:`~arena.modes.Mode`,
:class:`~arena.rules.TableRules`, :class:`~arena.engine.EpisodeConfig`): a header a writer
made always passes, and one no writer could make never does.
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable
from typing import Any

from arena.engine import EpisodeConfig
from arena.events import READABLE_LOG_VERSIONS, is_seat_record
from arena.modes import from_header
from arena.rules import TableRules
from arena.sandbox.policy import ISOLATIONS
from arena.seats import SeatSpec

FORMAT = "format"
"""The rule a header breaks with a value of the wrong JSON type."""
HEADER = "header"
"""The rule a header breaks with a value no writer makes."""


def is_int(value: Any) -> bool:
    """A JSON integer (``true`` is not one, though Python counts it as 1)."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_int_list(value: Any) -> bool:
    return isinstance(value, list) and all(is_int(x) for x in value)


def _is_text(value: Any) -> bool:
    return isinstance(value, str)


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


def _is_object(value: Any) -> bool:
    return isinstance(value, dict)


def _is_list(value: Any) -> bool:
    return isinstance(value, list)


_FIELDS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "version": ("an integer", is_int),
    "seed": ("an integer", is_int),
    "mode": ("text", _is_text),
    "symbols": ("a list of integers", is_int_list),
    "handSize": ("an integer", is_int),
    "seats": ("a list", _is_list),
    "tableOrder": ("a list of integers", is_int_list),
    "deals": ("an integer", is_int),
    "maxBidsPerDeal": ("an integer", is_int),
    "talk": ("true or false", _is_bool),
    "provenance": ("an object or null", lambda value: value is None or _is_object(value)),
    "wild": ("an integer", is_int),
    "wildCountsItself": ("true or false", _is_bool),
    "raiseRule": ("text", _is_text),
}
"""Each field of the ``episode`` line and its JSON type; the mode's rule fields
(``wild``, ``wildCountsItself``, ``raiseRule``) are written only away from their defaults."""

PROVENANCE_FIELDS = ("distribution", "version", "isolation")
"""What a plugin's provenance holds: who made it, its version, how it ran."""


def header_problem(header: dict[str, Any]) -> tuple[str, str] | None:
    """``(rule, why)`` for the first way ``header`` breaks the format, or ``None``.

    The rule is ``format`` for a value of the wrong JSON type, ``header`` for a value no
    writer makes: a size out of the engines' range, slots out of order, a table order
    that is not one of the slots, a version this reader does not know.
    """
    problem = _type_problem(header)
    if problem is not None:
        return FORMAT, f"episode line: {problem}"
    problem = _value_problem(header)
    return None if problem is None else (HEADER, problem)


def _type_problem(header: dict[str, Any]) -> str | None:
    for key, (kind, fits) in _FIELDS.items():
        if key in header and not fits(header[key]):
            return f"{key} must be {kind}, got {_shown(header[key])}"
    for index, entry in enumerate(header.get("seats", ())):
        where = f"seats[{index}]"
        if not is_seat_record(entry):
            return f'{where} must be {{"slot": INTEGER, "policy": TEXT}}, got {_shown(entry)}'
        if not is_int(entry["slot"]):
            return f"{where}.slot must be an integer, got {_shown(entry['slot'])}"
        if not _is_text(entry["policy"]):
            return f"{where}.policy must be text, got {_shown(entry['policy'])}"
    return _provenance_type_problem(header.get("provenance"))


def _provenance_type_problem(provenance: dict[str, Any] | None) -> str | None:
    """Why a provenance is not ``{"seats": [P, ...], "filters": {NAME: P}, "reporters":
    {NAME: P}}`` with each P ``{distribution, version, isolation}`` of text, or ``None``."""
    if provenance is None:
        return None
    if provenance.keys() != {"seats", "filters", "reporters"}:
        return f"provenance must hold seats, filters and reporters, got {_shown(provenance)}"
    if not _is_list(provenance["seats"]):
        return f"provenance.seats must be a list, got {_shown(provenance['seats'])}"
    entries = [(f"provenance.seats[{i}]", p) for i, p in enumerate(provenance["seats"])]
    for kind in ("filters", "reporters"):
        if not _is_object(provenance[kind]):
            return f"provenance.{kind} must be an object, got {_shown(provenance[kind])}"
        entries += [(f"provenance.{kind}.{name}", p) for name, p in provenance[kind].items()]
    for where, entry in entries:
        if not (
            _is_object(entry)
            and entry.keys() == set(PROVENANCE_FIELDS)
            and all(_is_text(entry[key]) for key in PROVENANCE_FIELDS)
        ):
            fields = ", ".join(PROVENANCE_FIELDS)
            return f"{where} must be {{{fields}}} as text, got {_shown(entry)}"
    return None


def _value_problem(header: dict[str, Any]) -> str | None:
    if header["version"] not in READABLE_LOG_VERSIONS:
        known = ", ".join(map(str, READABLE_LOG_VERSIONS))
        return f"log version {header['version']}; this reader knows versions {known}"
    seats = header["seats"]
    slots = [entry["slot"] for entry in seats]
    if slots != list(range(len(slots))):
        return f"seat entries are slots {_shown(slots)}, not 0..{len(slots) - 1}"
    for entry in seats:
        try:
            SeatSpec.parse(entry["policy"])
        except ValueError as exc:
            return f"seats[{entry['slot']}].policy: {exc}"
    try:  # the table as an engine would build it, by the engines' own ranges
        rules = TableRules(from_header(header), len(seats), header["maxBidsPerDeal"])
        EpisodeConfig(rules, header["seed"], header["deals"], header["talk"])
    except ValueError as exc:
        return str(exc)
    if sorted(header["tableOrder"]) != slots:
        return f"tableOrder {_shown(header['tableOrder'])} is not an order of the slots {slots}"
    return _provenance_value_problem(header.get("provenance"), len(seats))


def _provenance_value_problem(provenance: dict[str, Any] | None, seats: int) -> str | None:
    if provenance is None:
        return None
    if len(provenance["seats"]) != seats:
        return f"provenance names {len(provenance['seats'])} seats for {seats}"
    plugins = [*provenance["filters"].values(), *provenance["reporters"].values()]
    for entry in [*provenance["seats"], *plugins]:
        if entry["isolation"] not in ISOLATIONS:
            return f"isolation {_shown(entry['isolation'])} is not one of {', '.join(ISOLATIONS)}"
    return None


def _shown(value: Any) -> str:
    """A value as a message quotes it: cut short, since a hostile one may be huge."""
    return reprlib.repr(value)
