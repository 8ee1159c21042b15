"""Human-readable views of an episode for the terminal: one line a deal, a results table."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from rich import box
from rich.table import Table

from arena.results import Results


def deal_lines(records: list[dict[str, Any]]) -> Iterator[str]:
    """One compact line per finished deal, from the full-information log."""
    bids: list[str] = []
    opener = None
    for record in records:
        kind = record["type"]
        if kind == "deal":
            bids, opener = [], record["opener"]
        elif kind == "bid":
            mark = "*" if record["fallback"] else ""
            bids.append(f"s{record['slot']}:{record['quantity']}x{record['face']}{mark}")
        elif kind == "challenge":
            how = "forced" if record["forced"] else "challenges"
            yield (
                f"deal {record['deal']:>3}  opener s{opener}  {' '.join(bids)}  | "
                f"s{record['slot']} {how} {record['quantity']}x{record['face']}: "
                f"actual {record['actual']}, s{record['winner']} +1, s{record['loser']} -1"
            )


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
