"""Liar's Dice: five six-sided dice per seat, faces 1-6, p = 1/6 (ones are not wild)."""

from arena import hookimpl
from arena.modes import Mode

DICE = Mode(
    name="dice",
    symbols=(1, 2, 3, 4, 5, 6),
    hand_size=5,
    description="Liar's Dice: 5 hidden dice per seat, faces 1-6; ones are not wild.",
)


@hookimpl
def register_modes(register):
    register(DICE)
