"""Audit sections as rich tables for the terminal, never raw JSON (``arena audit``).

Every title, heading and cell is literal text (:func:`arena.terminal_text.cell`): a
reporter's section names, a flag's fields and a policy's name are shown, never read as
Rich markup or obeyed as terminal escapes.
"""

from __future__ import annotations

from collections.abc import Iterator
from numbers import Number
from typing import Any

from rich.table import Table
from rich.text import Text

from arena.terminal_text import cell


def audit_tables(
    sections: dict[str, Any], labels: list[str], self_pairs: bool = False
) -> list[Table | Text]:
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
        pairs.add_column(cell(column), justify="right")
    for a, first in enumerate(labels):
        for b, second in enumerate(labels):
            if a != b or self_pairs:
                pairs.add_row(
                    cell(first), cell(second), *(_cell(v[a][b]) for v in matrices.values())
                )
    seat_table = Table(title="per seat")
    for column in ("seat", *per_seat):
        seat_table.add_column(cell(column), justify="right")
    for index, label in enumerate(labels):
        seat_table.add_row(cell(label), *(_cell(v[index]) for v in per_seat.values()))
    parts: list[Table | Text] = [
        table for table, shown in ((pairs, matrices), (seat_table, per_seat)) if shown
    ]
    for name, value in sections.items():
        if name not in matrices and name not in per_seat:
            parts.append(_other_section(name, value, labels))
    return parts


def _other_section(name: str, value: Any, labels: list[str]) -> Table | Text:
    if isinstance(value, str) or value is None:
        return cell(f"{name}: {_format(value)}")
    if _is_per_seat_objects(value, len(labels)):
        return _seats_table(name, value["seats"], labels)
    if isinstance(value, list) and all(isinstance(item, dict) for item in value):
        if not value:
            return cell(f"{name}: none")
        return _rows_table(name, value)
    if (
        isinstance(value, dict)
        and value
        and all(_is_banded(v, len(labels)) for v in value.values())
    ):
        return _banded_table(name, value, labels)
    table = Table(title=cell(name))
    table.add_column("figure")
    table.add_column("value", justify="right")
    for key, item in _flatten(value):
        table.add_row(cell(key or name), _cell(item))
    return table


def _is_per_seat_objects(value: Any, seats: int) -> bool:
    """A section whose ``seats`` holds one object per seat (the decision read-out)."""
    rows = value.get("seats") if isinstance(value, dict) else None
    return isinstance(rows, list) and len(rows) == seats and all(isinstance(r, dict) for r in rows)


def _seats_table(name: str, rows: list[dict[str, Any]], labels: list[str]) -> Table:
    """One object per seat, transposed: a row per scalar figure (nested objects' figures
    by dotted name), a column per seat, so four seats fit 80 columns. Lists (bins, per
    opponent rows) are left to ``--json``."""
    table = Table(title=cell(f"{name} (per seat; lists in --json)"))
    table.add_column("figure")
    for label in labels:
        table.add_column(cell(label), justify="right")
    flat = [dict(_flatten(row)) for row in rows]
    for key in dict.fromkeys(key for row in flat for key in row):
        if "[" not in key:
            table.add_row(cell(key), *(_cell(row.get(key)) for row in flat))
    return table


def _rows_table(name: str, rows: list[dict[str, Any]]) -> Table:
    """A list of objects (e.g. flags): one row each, one column per key."""
    table = Table(title=cell(name))
    columns = list(dict.fromkeys(key for row in rows for key in row))
    for column in columns:
        table.add_column(cell(column), justify="left" if column == "flag" else "right")
    for row in rows:
        table.add_row(*(_cell(row.get(column)) for column in columns))
    return table


def _banded_table(name: str, section: dict[str, Any], labels: list[str]) -> Table:
    """Pair-by-band figures (``x[a][b][k]``): the rows where any figure is non-zero."""
    table = Table(title=cell(f"{name} (per ordered pair and band; all-zero rows left out)"))
    for column in ("a", "b", "band", *section):
        table.add_column(cell(column), justify="right")
    figures = list(section.values())
    for a, first in enumerate(labels):
        for b, second in enumerate(labels):
            for band in range(len(figures[0][a][b])):
                cells = [figure[a][b][band] for figure in figures]
                if any(cells):
                    table.add_row(cell(first), cell(second), str(band), *map(_cell, cells))
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


def _cell(value: Any) -> Text:
    return cell(_format(value))


def _format(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, list):
        return ", ".join(_format(item) for item in value)
    if isinstance(value, dict):
        return ", ".join(f"{key}={_format(item)}" for key, item in value.items())
    return str(value)
