"""Human-readable views for the terminal: an episode's deals or decisions, results,
standings and audit tables."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from numbers import Number
from typing import Any

import attrs
from rich import box
from rich.table import Table

from arena.results import Results


def deal_lines(records: Iterable[dict[str, Any]], every_decision: bool = False) -> Iterator[str]:
    """Per finished deal: one compact line, the hands the challenge revealed, the published talk.

    With ``every_decision``, one line per thing that happened, as ``arena play --watch``
    prints them live.
    """
    narrator = Narrator(every_decision)
    for record in records:
        yield from narrator.lines(record)


NO_LINES: tuple[str, ...] = ()


@attrs.define
class Narrator:
    """Turns log records, fed one at a time as they happen, into terminal lines.

    Only what the table saw is printed (bids, published talk, the reveal at the
    challenge) plus rule 11's marks and token use; private notes and raw talk stay in the log.
    """

    every_decision: bool = False
    """Print each decision as it comes (``--watch``) rather than one summary per deal."""
    _deal: int = 0
    _opener: int = 0
    _hands: list = attrs.Factory(list)
    _bids: list[str] = attrs.Factory(list)
    _talk: list[str] = attrs.Factory(list)
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
            return [self._at(f"s{record['slot']} rejected: {record['reason']}")]
        if kind == "fault":
            return [self._at(f"s{record['slot']} fault: {record['reason']}")]
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
        said = self._said(record)
        if not self.every_decision:
            return NO_LINES
        bid = f"{quantity}x{face}"
        fallback = " (rule 11 fallback)" if record["fallback"] else ""
        return [self._at(f"s{slot} bids {bid}{fallback}"), *said]

    def _challenge(self, record: dict[str, Any]) -> Sequence[str]:
        how = "forced" if record["forced"] else "challenges"
        outcome = (
            f"s{record['slot']} {how} {record['quantity']}x{record['face']}: "
            f"actual {record['actual']}, s{record['winner']} +1, s{record['loser']} -1"
        )
        said = self._said(record)
        reveal = self._reveal_line()
        if self.every_decision:
            return [self._at(outcome), *said, reveal]
        summary = f"deal {self._deal:>3}  opener s{self._opener}  {' '.join(self._bids)}"
        return [f"{summary}  | {outcome}", reveal, *self._talk]

    def _reveal_line(self) -> str:
        symbols = [symbol for hand in self._hands for symbol in hand]
        if self._reveal is not None and self._reveal[1] == len(symbols):
            return self._reveal[0] % tuple(symbols)
        hands = " | ".join(f"s{slot} {' '.join(map(str, h))}" for slot, h in enumerate(self._hands))
        return f"{'':10}hands  {hands}"

    def _said(self, record: dict[str, Any]) -> Sequence[str]:
        """The published talk of a decision (none when talk is off or filtered away)."""
        if record["published"] is None:
            return NO_LINES
        line = f"{'':10}s{record['slot']} says: {record['published']}"
        self._talk.append(line)
        return [line]

    def _at(self, text: str) -> str:
        return f"deal {self._deal:>3}  {text}"


def settled_lines(records: list[dict[str, Any]]) -> list[str]:
    """How a saved episode ended: each seat's points and score, then the flags in its tail."""
    seats = records[0]["seats"]
    result = next((r for r in records if r["type"] == "result"), None)
    if result is None:
        deals = sum(r["type"] == "deal" for r in records)
        return [f"no result line: the episode stops after {deals} deal(s)"]
    width = max(len(seat["policy"]) for seat in seats)
    lines = [f"{result['status']}, {result['dealsPlayed']} deals"]
    lines += [
        f"  s{seat['slot']}  {seat['policy']:<{width}}  points {points:+d}  score {score:.3f}"
        for seat, points, score in zip(seats, result["points"], result["score"], strict=True)
    ]
    lines += [
        f"audit flag ({r['reporter']}): {json.dumps(r['flag'], sort_keys=True)}"
        for r in records
        if r["type"] == "audit"
    ]
    return lines


def results_table(results: Results) -> Table:
    """One row a seat; a stand-in is marked ``*`` and explained under the table."""
    table = Table(
        title=f"{results.mode} seed {results.seed}: {results.status}, {results.deals_played} deals",
        box=box.SIMPLE_HEAD,
    )
    table.add_column("slot", justify="right")
    table.add_column("policy", no_wrap=True)
    for column in ("points", "score", "asked", "rejected", "fallback", "fault"):
        table.add_column(column, justify="right", min_width=len(column))
    for seat in results.seats:
        table.add_row(
            str(seat.slot),
            seat.policy + (" *" if seat.stand_in else ""),
            f"{seat.points:+d}",
            f"{seat.score:.3f}",
            str(seat.decisions),
            str(seat.rejected),
            str(seat.fallbacks),
            str(seat.faults),
        )
    stand_ins = [f"* seat {s.slot}: {s.stand_in}" for s in results.seats if s.stand_in]
    table.caption = "\n".join(stand_ins) or None
    return table


def audit_tables(
    sections: dict[str, Any], labels: list[str], self_pairs: bool = False
) -> list[Table | str]:
    """The audit as tables, never raw JSON: one row per ordered pair for every matrix
    section, one row per seat for every per-seat list, one row per pair and band for
    banded sections, one row per flag, and the remaining figures by name.

    ``labels`` name the rows and columns: slots for one episode, policies for a pool,
    where ``self_pairs`` keeps the diagonal (two seats of one policy face each other).
    """
    seats = len(labels)
    matrices = {n: v for n, v in sections.items() if _is_matrix(v, seats)}
    per_seat = {n: v for n, v in sections.items() if _is_row(v, seats) and n not in matrices}
    pairs = Table(title="per ordered pair (a faces b's bids)")
    for column in ("a", "b", *matrices):
        pairs.add_column(column, justify="right")
    for a, first in enumerate(labels):
        for b, second in enumerate(labels):
            if a != b or self_pairs:
                pairs.add_row(first, second, *(_cell(v[a][b]) for v in matrices.values()))
    seat_table = Table(title="per seat")
    for column in ("seat", *per_seat):
        seat_table.add_column(column, justify="right")
    for index, label in enumerate(labels):
        seat_table.add_row(label, *(_cell(v[index]) for v in per_seat.values()))
    parts: list[Table | str] = [
        table for table, shown in ((pairs, matrices), (seat_table, per_seat)) if shown
    ]
    for name, value in sections.items():
        if name not in matrices and name not in per_seat:
            parts.append(_other_section(name, value, labels))
    return parts


def _other_section(name: str, value: Any, labels: list[str]) -> Table | str:
    if isinstance(value, str) or value is None:
        return f"{name}: {_cell(value)}"
    if isinstance(value, list) and all(isinstance(item, dict) for item in value):
        if not value:
            return f"{name}: none"
        return _rows_table(name, value)
    if (
        isinstance(value, dict)
        and value
        and all(_is_banded(v, len(labels)) for v in value.values())
    ):
        return _banded_table(name, value, labels)
    table = Table(title=name)
    table.add_column("figure")
    table.add_column("value", justify="right")
    for key, item in _flatten(value):
        table.add_row(key or name, _cell(item))
    return table


def _rows_table(name: str, rows: list[dict[str, Any]]) -> Table:
    """A list of objects (e.g. flags): one row each, one column per key."""
    table = Table(title=name)
    columns = list(dict.fromkeys(key for row in rows for key in row))
    for column in columns:
        table.add_column(column, justify="left" if column == "flag" else "right")
    for row in rows:
        table.add_row(*(_cell(row.get(column)) for column in columns))
    return table


def _banded_table(name: str, section: dict[str, Any], labels: list[str]) -> Table:
    """Pair-by-band figures (``x[a][b][k]``): the rows where any figure is non-zero."""
    table = Table(title=f"{name} (per ordered pair and band; all-zero rows left out)")
    for column in ("a", "b", "band", *section):
        table.add_column(column, justify="right")
    figures = list(section.values())
    for a, first in enumerate(labels):
        for b, second in enumerate(labels):
            for band in range(len(figures[0][a][b])):
                cells = [figure[a][b][band] for figure in figures]
                if any(cells):
                    table.add_row(first, second, str(band), *(_cell(c) for c in cells))
    return table


def _flatten(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _flatten(item, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list) and any(isinstance(item, (list, dict)) for item in value):
        for index, item in enumerate(value):
            yield from _flatten(item, f"{prefix}[{index}]")
    else:
        yield prefix, value


def _is_row(value: Any, seats: int) -> bool:
    return (
        isinstance(value, list)
        and len(value) == seats
        and not any(isinstance(x, (list, dict)) for x in value)
    )


def _is_matrix(value: Any, seats: int) -> bool:
    return (
        isinstance(value, list)
        and len(value) == seats
        and all(_is_row(row, seats) for row in value)
    )


def _is_banded(value: Any, seats: int) -> bool:
    return (
        isinstance(value, list)
        and len(value) == seats
        and all(
            isinstance(row, list)
            and len(row) == seats
            and all(
                isinstance(cell, list) and all(isinstance(x, Number) for x in cell) for cell in row
            )
            for row in value
        )
    )


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, list):
        return ", ".join(_cell(item) for item in value)
    if isinstance(value, dict):
        return ", ".join(f"{key}={_cell(item)}" for key, item in value.items())
    return str(value)
