"""Liar's Poker: an 8-digit hidden serial per seat, digits 0-9, p = 1/10.

Digits are rendered as digits (leading zeros kept), never as letters.
"""

from arena import hookimpl
from arena.modes import Mode


def _render_serial(mode: Mode, hand: tuple[int, ...]) -> str:
    return "".join(str(digit) for digit in hand)


POKER = Mode(
    name="poker",
    symbols=tuple(range(10)),
    hand_size=8,
    description="Liar's Poker: an 8-digit hidden serial per seat (leading zeros kept), digits 0-9.",
    render=_render_serial,
)


@hookimpl
def register_modes(register):
    register(POKER)
