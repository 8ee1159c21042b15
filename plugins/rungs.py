"""Calibration rungs: variants small enough to enumerate, where exploitability is exact.

Two seats with one six-sided die each and the strict raise of rules.md: 12 bids
on the ladder, so a deal is one game tree of 4,096 bid histories. ``rung1w``
makes the highest face wild for every face, itself included, which is the game
OpenSpiel calls ``liars_dice`` with ``players=2, numdice=1``.
See docs/exploitability.md.
"""

from arena import hookimpl
from arena.modes import Mode

RUNG1 = Mode(
    name="rung1",
    symbols=(1, 2, 3, 4, 5, 6),
    hand_size=1,
    description="Calibration rung: 2 seats, 1 hidden die each, faces 1-6, no wilds.",
    default_seats=2,
)

RUNG1W = Mode(
    name="rung1w",
    symbols=(1, 2, 3, 4, 5, 6),
    hand_size=1,
    description="Calibration rung: 2 seats, 1 hidden die each, faces 1-6; "
    "6 is wild and counts for every face, 6 included.",
    wild=6,
    wild_counts_itself=True,
    default_seats=2,
)


@hookimpl
def register_modes(register):
    register(RUNG1)
    register(RUNG1W)
