"""Solve the first-party rungs' equilibria with CFR+ and write them where the package ships them.

    python bench/solve_rungs.py            # every first-party rung (minutes of CPU each)
    python bench/solve_rungs.py rung1      # one

Each file is named by the game's digest (``arena.exploitability.solver.game_key``),
so a change to a rung's rules leaves the old file unread. The exploitability of
what is written is measured by the exact best response and printed.
"""

from __future__ import annotations

import logging
import sys
import time

import numpy as np
import structlog

from arena.exploitability import exploitability, game, solver
from arena.rules import TableRules
from arena_plugins.rungs import RUNG1, RUNG1W

RUNGS = {mode.name: mode for mode in (RUNG1, RUNG1W)}


def main(names: list[str]) -> int:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.INFO))
    solver.SHIPPED.mkdir(exist_ok=True)
    for name in names or list(RUNGS):
        rules = TableRules(mode=RUNGS[name], seats=2)
        started = time.process_time()
        strategy = solver.solve(game(rules))
        seconds = time.process_time() - started
        path = solver.SHIPPED / f"{name}-{solver.game_key(rules)}.npz"
        np.savez_compressed(path, strategy=strategy)
        gap = exploitability(game(rules), strategy).exploitability
        print(f"{name}: exploitability {gap:.3e} after {seconds:.0f} s CPU -> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
