"""``nash``: plays the calibration rung's equilibrium (CFR+, :mod:`arena.exploitability.solver`).

Available only where the game is solved exactly (two seats, a rung-sized bid
ladder); anywhere else building the seat fails with the reason, which the CLI
prints as one error line. Draws its action from the equilibrium row of its
information set (position, own hand, bid history) with its own seeded stream.
"""

from __future__ import annotations

import numpy as np

from arena import exploitability, hookimpl
from arena.actions import Action, Bid, Challenge
from arena.exploitability import solver
from arena.seats import SeatContext
from arena.view import SeatView


class NashSeat:
    """The rung's equilibrium strategy, as a seat."""

    def __init__(self, context: SeatContext):
        reason = exploitability.unsolvable_reason(context.rules)
        if reason:
            raise ValueError(f"nash plays only on the calibration rungs (rung1, rung1w): {reason}")
        self.rng = context.rng
        self.game = exploitability.game(context.rules)
        self.strategy = solver.equilibrium(context.rules)

    def decide(self, view: SeatView) -> Action:
        row = self._row(view)
        pick = int(np.searchsorted(np.cumsum(row), self.rng.random(), side="right"))
        return self._action(min(pick, len(row) - 1))

    def action_distribution(self, view: SeatView) -> dict[Action, float]:
        row = self._row(view)
        return {self._action(int(a)): float(row[a]) for a in np.flatnonzero(row > 0)}

    def _row(self, view: SeatView) -> np.ndarray:
        history = self.game.history((bid.quantity, bid.face) for bid in view.bids)
        row = self.strategy[history, self.game.hand_index(view.hand)]
        return row / row.sum()

    def _action(self, column: int) -> Action:
        if column == self.game.challenge:
            return Challenge()
        return Bid(*self.game.ladder[column])


@hookimpl
def register_seats(register):
    register(
        "nash",
        NashSeat,
        description="The rung's equilibrium (CFR+); calibration rungs only.",
        stochastic=True,
    )
