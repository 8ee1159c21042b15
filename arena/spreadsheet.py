"""CSV cells a spreadsheet opens as text, never as a formula.

A spreadsheet runs a cell that starts with ``=``, ``+``, ``-`` or ``@`` (and, in
some, a tab or a carriage return) as a formula: an entrant named
``=HYPERLINK(...)`` would become a link, ``+cmd`` a command. OWASP's CSV
injection guidance: prefix such a cell with a single quote, which the
spreadsheet shows as text. Only text is neutralised: a number (a negative score,
``-0.25``) is written as the number it is, since it was never text a person chose.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: Any) -> Any:
    """``value`` as a CSV cell: text that a spreadsheet would run gets a leading ``'``."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def safe_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A CSV row (column -> value) with every cell :func:`safe_cell`."""
    return {column: safe_cell(value) for column, value in row.items()}
