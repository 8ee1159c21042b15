"""Numbers as the arena prints them.

A figure that rounds to zero prints as zero: ``-0.000`` would show a direction that the
data do not have (a mean of -1e-9, or the -0.0 that a subtraction leaves), so every
signed figure a person reads goes through :func:`fixed`.
"""

from __future__ import annotations


def fixed(value: float, places: int, sign: bool = False) -> str:
    """``value`` to ``places`` decimals (with its sign, ``+`` included, when ``sign``),
    never as a negative zero."""
    rounded = round(value, places) + 0.0  # -0.0 + 0.0 is 0.0
    return f"{rounded:{'+' if sign else ''}.{places}f}"
