"""Wild-ones Liar's Dice (the seed-002 game): five dice, ones wild except in a bid on ones.

Declared as data only: a one counts toward every other face, so p = 1/3 for
faces 2-6 and 1/6 for ones, and the raise rule converts between ones and the
other faces (to ones: half the quantity, rounded up; away from ones: double
plus one). See docs/rules.md and arena.rules for the exact ladder.
"""

from arena import hookimpl
from arena.modes import WILD_ONES, Mode

WILD = Mode(
    name="wild",
    symbols=(1, 2, 3, 4, 5, 6),
    hand_size=5,
    description="Wild-ones Liar's Dice: 5 hidden dice per seat, faces 1-6; "
    "ones are wild except in a bid on ones.",
    wild=1,
    wild_counts_itself=False,
    raise_rule=WILD_ONES,
)


@hookimpl
def register_modes(register):
    register(WILD)
