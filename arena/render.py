"""Human-readable views of an episode for the terminal: its deals or decisions, a results table."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

import attrs
from rich import box
from rich.table import Table

from arena.league import Standing
from arena.results import Results


def deal_lines(records: Iterable[dict[str, Any]], every_decision: bool = False) -> Iterator[str]:
    """Per finished deal: one compact line, the hands the challenge revealed, the published talk.

    With ``every_decision``, one line per thing that happened, as ``arena play --watch``
    prints them live.
    """
    narrator = Narrator(every_decision)
    for record in records:
        yield from narrator.lines(record)


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

    def lines(self, record: dict[str, Any]) -> list[str]:
        kind = record["type"]
        if kind == "deal":
            self._deal, self._opener = record["deal"], record["opener"]
            self._hands, self._bids, self._talk = record["hands"], [], []
            return [self._at(f"s{self._opener} opens")] if self.every_decision else []
        if kind == "bid":
            return self._bid(record)
        if kind == "challenge":
            return self._challenge(record)
        if not self.every_decision:
            return []
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

    def _bid(self, record: dict[str, Any]) -> list[str]:
        slot, bid = record["slot"], f"{record['quantity']}x{record['face']}"
        mark = "*" if record["fallback"] else ""
        self._bids.append(f"s{slot}:{bid}{mark}")
        said = self._said(record)
        if not self.every_decision:
            return []
        fallback = " (rule 11 fallback)" if record["fallback"] else ""
        return [self._at(f"s{slot} bids {bid}{fallback}"), *said]

    def _challenge(self, record: dict[str, Any]) -> list[str]:
        how = "forced" if record["forced"] else "challenges"
        outcome = (
            f"s{record['slot']} {how} {record['quantity']}x{record['face']}: "
            f"actual {record['actual']}, s{record['winner']} +1, s{record['loser']} -1"
        )
        said = self._said(record)
        hands = " | ".join(f"s{slot} {' '.join(map(str, h))}" for slot, h in enumerate(self._hands))
        reveal = f"{'':10}hands  {hands}"
        if self.every_decision:
            return [self._at(outcome), *said, reveal]
        summary = f"deal {self._deal:>3}  opener s{self._opener}  {' '.join(self._bids)}"
        return [f"{summary}  | {outcome}", reveal, *self._talk]

    def _said(self, record: dict[str, Any]) -> list[str]:
        """The published talk of a decision (none when talk is off or filtered away)."""
        if record["published"] is None:
            return []
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


def standings_table(standings: list[Standing], source: str) -> Table:
    table = Table(title=f"league standings ({source}): ranked by mean episode score")
    for column in ("rank", "policy", "episodes", "mean score", "± stderr", "points"):
        table.add_column(column, justify="left" if column == "policy" else "right")
    for rank, row in enumerate(standings, start=1):
        table.add_row(
            str(rank),
            row.policy,
            str(row.episodes),
            f"{row.mean_score:.3f}",
            f"{row.stderr:.3f}",
            f"{row.points:+d}",
        )
    return table
