"""An episode for the terminal, in plain text: its deals or decisions and its results.

Plain lines and buffered writes: ``arena play`` prints one summary a deal, and a
rich print per line would cost more than the deal (the audit's tables are in
:mod:`arena.audit_tables`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain
from typing import Any

import attrs

from arena.results import Results, SeatResult, shapes_by_slot
from arena.terminal_text import printable


def deal_lines(
    records: Iterable[dict[str, Any]], every_decision: bool = False, thinking: bool = False
) -> Iterator[str]:
    """Per finished deal: one compact line, the hands the challenge revealed, the published talk.

    With ``every_decision``, one line per thing that happened, as ``arena play --watch``
    prints them live; with ``thinking`` too, each decision's private reasoning under it
    (a spectator's reading of a saved log: ``arena show --decisions``).
    """
    narrator = Narrator(every_decision, thinking)
    for record in records:
        yield from narrator.lines(record)


NO_LINES: tuple[str, ...] = ()


@attrs.define
class Narrator:
    """Turns log records, fed one at a time as they happen, into terminal lines.

    Only what the table saw is printed (bids, published talk, the reveal at the
    challenge) plus rule 11's marks and token use; private notes and raw talk stay in the log.
    A seat's thinking is printed only when asked for: never live, where a person may be
    playing a seat at the same terminal.
    """

    every_decision: bool = False
    """Print each decision as it comes (``--watch``) rather than one summary per deal."""
    thinking: bool = False
    """With ``every_decision``: each decision's thinking under it, a line of text a line."""
    _deal: int = 0
    _opener: int = 0
    _hands: list = attrs.Factory(list)
    _bids: list[str] = attrs.Factory(list)
    _talk: list[str] = attrs.Factory(list)
    deals_ended: int = 0
    """Challenges read so far: the deals that have ended."""
    _reveal: tuple[str, int] | None = None
    """The reveal line as one format for the episode's shape (seats x hand size), and how
    many symbols it takes, made from its header: a deal's hands are then one ``%`` of
    their symbols, not a join each."""

    def lines(self, record: dict[str, Any]) -> Sequence[str]:
        kind = record["type"]
        if kind == "bid":  # the commonest first: this runs once a record
            return self._bid(record)
        if kind == "challenge":
            return self._challenge(record)
        if kind == "deal":
            self._deal, self._opener = record["deal"], record["opener"]
            self._hands, self._bids, self._talk = record["hands"], [], []
            return [self._at(f"s{self._opener} opens")] if self.every_decision else NO_LINES
        if kind == "episode":
            hand = " ".join(["%d"] * record["handSize"])
            slots = " | ".join(f"s{slot} {hand}" for slot in range(len(record["seats"])))
            self._reveal = f"{'':10}hands  {slots}", len(record["seats"]) * record["handSize"]
            return NO_LINES
        if not self.every_decision:
            return NO_LINES
        if kind == "rejected":
            return [
                self._at(f"s{record['slot']} rejected: {printable(record['reason'])}"),
                *self._thought(record),
            ]
        if kind == "fault":
            return [self._at(f"s{record['slot']} fault: {printable(record['reason'])}")]
        if kind == "usage":
            return [
                self._at(
                    f"s{record['slot']} used {record['inputTokens']} input tokens "
                    f"({record['cacheReadTokens']} cached), {record['outputTokens']} output"
                )
            ]
        return []

    def _bid(self, record: dict[str, Any]) -> Sequence[str]:
        slot, quantity, face = record["slot"], record["quantity"], record["face"]
        mark = "*" if record["fallback"] else ""
        self._bids.append(f"s{slot}:{quantity}x{face}{mark}")
        said = NO_LINES if record["published"] is None else self._said(record)
        if not self.every_decision:
            return NO_LINES
        bid = f"{quantity}x{face}"
        fallback = " (rule 11 fallback)" if record["fallback"] else ""
        return [self._at(f"s{slot} bids {bid}{fallback}"), *self._thought(record), *said]

    def _challenge(self, record: dict[str, Any]) -> Sequence[str]:
        self.deals_ended += 1
        how = "forced" if record["forced"] else "challenges"
        outcome = (
            f"s{record['slot']} {how} {record['quantity']}x{record['face']}: "
            f"actual {record['actual']}, s{record['winner']} +1, s{record['loser']} -1"
        )
        said = NO_LINES if record["published"] is None else self._said(record)
        reveal = self._reveal_line()
        if self.every_decision:
            return [self._at(outcome), *self._thought(record), *said, reveal]
        summary = f"deal {self._deal:>3}  opener s{self._opener}  {' '.join(self._bids)}"
        return [f"{summary}  | {outcome}", reveal, *self._talk]

    def _reveal_line(self) -> str:
        symbols = tuple(chain.from_iterable(self._hands))
        if self._reveal is not None and self._reveal[1] == len(symbols):
            return self._reveal[0] % symbols
        hands = " | ".join(f"s{slot} {' '.join(map(str, h))}" for slot, h in enumerate(self._hands))
        return f"{'':10}hands  {hands}"

    def _said(self, record: dict[str, Any]) -> Sequence[str]:
        """The published talk of a decision that has some (none with talk off or filtered away)."""
        line = f"{'':10}s{record['slot']} says: {printable(record['published'])}"
        self._talk.append(line)
        return [line]

    def _thought(self, record: dict[str, Any]) -> list[str]:
        """A decision's thinking blocks, in order, each line of their text indented under it;
        its control characters escaped (:func:`printable`), so it cannot drive the terminal."""
        if not self.thinking or not record.get("thinking"):
            return []
        lines = []
        for block in record["thinking"]:
            if block["type"] == "redacted":
                lines.append(f"{'':10}s{record['slot']} thinking: (redacted)")
                continue
            for number, text in enumerate(block["text"].splitlines() or [""]):
                lead = "thinking:" if number == 0 else "         "
                lines.append(f"{'':10}s{record['slot']} {lead} {printable(text)}")
        return lines

    def _at(self, text: str) -> str:
        return f"deal {self._deal:>3}  {text}"


def settled_lines(records: Sequence[dict[str, Any]]) -> list[str]:
    """How a saved episode ended: the results table ``arena play`` printed at its end
    (:func:`results_lines`, from :func:`logged_results`), then the flags in its tail."""
    results = logged_results(records)
    if results is None:
        deals = sum(r["type"] == "deal" for r in records)
        return [f"no result line: the episode stops after {deals} deal(s)"]
    flags = [
        f"audit flag ({r['reporter']}): {json.dumps(r['flag'], sort_keys=True)}"
        for r in records
        if r["type"] == "audit"
    ]
    return ["", *results_lines(results), *flags]


def logged_results(records: Sequence[dict[str, Any]]) -> Results | None:
    """The results a saved log holds (``None`` without a ``result`` line): the result
    line's points and scores, and each seat's rule-11 counts from the lines, as the engine
    tallied them: a decision is a move the seat was asked for (every bid, every challenge
    the cap did not force, a fallback's included), a fallback a move marked so, a rejection
    or a fault a line of its own. A log does not say whether a policy stood in for a seat,
    so no seat is marked as one."""
    result = next((r for r in records if r["type"] == "result"), None)
    if result is None:
        return None
    header = records[0]
    counts = {field: [0] * len(header["seats"]) for field in _TALLIES}
    for record in records:
        kind = record["type"]
        if kind == "bid" or (kind == "challenge" and not record["forced"]):
            counts["decisions"][record["slot"]] += 1
            counts["fallbacks"][record["slot"]] += record["fallback"]
        elif kind == "rejected":
            counts["rejected"][record["slot"]] += 1
        elif kind == "fault":
            counts["faults"][record["slot"]] += 1
    shapes = shapes_by_slot(records, len(header["seats"]))
    seats = tuple(
        SeatResult(
            slot=seat["slot"],
            policy=seat["policy"],
            points=result["points"][slot],
            score=result["score"][slot],
            **{field: counted[slot] for field, counted in counts.items()},
            shapes=shapes[slot],
        )
        for slot, seat in enumerate(header["seats"])
    )
    return Results(
        seed=header["seed"],
        mode=header["mode"],
        status=result["status"],
        deals_played=result["dealsPlayed"],
        seats=seats,
    )


_TALLIES = ("decisions", "rejected", "fallbacks", "faults")
"""The :class:`~arena.results.SeatResult` fields :func:`logged_results` counts from the lines."""


RESULTS_COLUMNS = ("slot", "policy", "points", "score", "asked", "rejected", "fallback", "fault")


def results_lines(results: Results) -> list[str]:
    """A title, then one row a seat under aligned headings; a stand-in is marked ``*`` and
    explained under the table."""
    rows = [
        (
            str(seat.slot),
            printable(seat.policy) + (" *" if seat.stand_in else ""),
            f"{seat.points:+d}",
            f"{seat.score:.3f}",
            str(seat.decisions),
            str(seat.rejected),
            str(seat.fallbacks),
            str(seat.faults),
        )
        for seat in results.seats
    ]
    heading, *table = aligned(RESULTS_COLUMNS, rows)
    title = f"{results.mode} seed {results.seed}: {results.status}, {results.deals_played} deals"
    stand_ins = [f"* seat {s.slot}: {printable(s.stand_in)}" for s in results.seats if s.stand_in]
    shapes = [
        f"  seat {s.slot} asked in shapes: "
        + ", ".join(f"{printable(shape)} {calls}" for shape, calls in s.shapes.items())
        for s in results.seats
        if s.shapes
    ]
    return [title, heading, *table, *stand_ins, *shapes]


def aligned(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Headings, a rule and the rows, each column as wide as its widest cell: the second
    column (a policy) reads left to right, the figures align right."""
    widths = [max(len(cell) for cell in column) for column in zip(columns, *rows, strict=True)]

    def line(cells: Sequence[str]) -> str:
        return (
            "  "
            + "  ".join(
                cell.ljust(width) if column == 1 else cell.rjust(width)
                for column, (cell, width) in enumerate(zip(cells, widths, strict=True))
            ).rstrip()
        )

    rule = "  " + "  ".join("-" * width for width in widths)
    return [line(columns), rule, *map(line, rows)]


READ_OUT = "decisions"
"""The decision read-out's audit section (the ``decisions`` reporter)."""

READ_OUT_COLUMNS = (
    ("bids", "bids", None),
    ("bluff", "bluffRate", "figures"),
    ("chance", "bidChance", "figures"),
    ("gap", "calibrationGap", "figures"),
    ("chal", "challenges", None),
    ("won", "challengeAccuracy", "figures"),
    ("vs hand", "againstHand", "figures"),
    ("missed", "missedCatches", "figures"),
    ("forgone", "forgonePerFacing", "figures"),
    ("?!", "inaccuracy", "grades"),
    ("?", "mistake", "grades"),
    ("??", "blunder", "grades"),
)
"""The decision read-out's table (``arena play --read-out``, ``arena show --read-out``):
heading, key and where in a seat's section the key is (docs/decisions.md)."""


def read_out_lines(section: Any, policies: Sequence[str]) -> list[str]:
    """The ``decisions`` audit section as one short row per seat, or one line saying why
    there is none (the reporter is not installed, or failed)."""
    if not isinstance(section, dict) or not isinstance(section.get("seats"), list):
        why = section if isinstance(section, str) else "no decisions section in the audit"
        return ["", f"decision read-out: {printable(str(why))}"]
    rows = []
    for slot, (policy, seat) in enumerate(zip(policies, section["seats"], strict=True)):
        cells = []
        for _, key, part in READ_OUT_COLUMNS:
            value = (seat.get(part) or {}).get(key) if part else seat.get(key)
            cells.append("-" if value is None else f"{value:.3f}" if isinstance(value, float)
                         else str(value))  # fmt: skip
        rows.append((str(slot), printable(policy), *cells))
    title = (
        "decision read-out (each seat against the exact odds of its own hand; docs/decisions.md)"
    )
    return ["", title, *aligned(("slot", "policy", *(c[0] for c in READ_OUT_COLUMNS)), rows)]
