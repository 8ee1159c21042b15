"""Decisions per CPU-second against OpenSpiel's ``liars_dice``: 2 seats x 5 dice, random play.

Issue 13's comparison: the arena playing uniform random seats at a two-seat dice
table, against OpenSpiel's ``liars_dice`` (``players=2, numdice=5``) played by
uniform random bots, once through OpenSpiel's Python API and once through its C++
``evaluate_bots``. ``open_spiel`` is an optional bench extra, never a test
dependency: without it the OpenSpiel rows say ``not installed`` and ours still run.

The rows, all measured in one run (CPU time, best of ``--repeat``):

- ``OpenSpiel C++ evaluate_bots``: per game, ``game.new_initial_state()`` and one
  ``pyspiel.evaluate_bots(state, bots, seed)`` call, the two
  ``make_uniform_random_bot`` bots made once per episode's worth of games (the call
  restarts them): the dice rolls and every decision happen in C++, behind two
  pybind calls a game. Every ratio divides by this row.
- ``OpenSpiel Python loop``: the same game stepped from Python: a chance node is
  sampled by its outcome probabilities and a decision uniformly over
  ``legal_actions()``, both with one seeded ``numpy`` Generator.
- ``ours compiled, run_episode``: :func:`arena.runner.run_episode` with
  ``engine="compiled"``, the log written to a real file, the audit reporters run
  (over the tallies the C table kept as it played: the log is not parsed back) and
  the results built: everything a user's episode costs.
- ``ours compiled, engine+log``: the compiled engine and its event log alone
  (:class:`arena.fast.engine.CompiledEngine` over seats built as the runner builds
  them, the full JSON log written to a file): no parse-back, audit or results.
- ``ours python, run_episode``: the first of ours with ``engine="python"``.

Counting. A decision of ours is one ``bid`` or ``challenge`` record of the log,
counted after the timer stops. ``evaluate_bots`` returns only the returns, but it
plays the state it is handed in place (the binding passes a pointer), so each
game's finished state is kept and, once the timer has stopped, its decisions are
``len(state.history())`` less the ten dice rolls: an exact count of the very games
timed, not an estimate. The Python loop's games are counted the same way.
Keeping the states also leaves their frees outside OpenSpiel's timer, which can
only flatter OpenSpiel.

The workloads are the same in shape, not identical in rules. In both: two seats,
five six-sided dice each, a bid is (quantity, face) with quantity 1..10, a raise
is a higher quantity or the same quantity on a higher face (OpenSpiel's default
``bidding_rule="reset-face"`` is our rule 4), so both ladders hold the same 60
bids; the opening move must be a bid; once the top bid (ten sixes) stands, the
only legal move is the challenge; a random player draws uniformly over every
legal bid plus the challenge. What differs:

- Wilds. OpenSpiel's highest face (6) is wild and counts toward every bid; our
  ``dice`` mode has no wilds (a die counts only for its own face). Random play
  never looks at the dice, so this changes who wins a challenge, not how long a
  deal runs or how much work a decision is.
- One game is one of our deals. OpenSpiel's game ends at the first challenge with
  returns of +1/-1; our episode plays ``--deals`` deals and scores +1/-1 points a
  deal. The per-episode setup (seats, header, result line) is spread over the
  episode's deals; OpenSpiel pays a new state and a pybind call per game.
- The opener. OpenSpiel's player 0 always opens; ours rotates through a seeded
  table order (rule 1). Random play makes the two seats alike, so it costs nothing.
- The bid cap. Ours forces a challenge after ``max_bids`` bids (rule 8); it is set
  to 60, the whole ladder, so it can bind only where OpenSpiel's game also allows
  nothing but the challenge.
- What is produced. OpenSpiel keeps the action history in the state; ours writes
  one JSON line per deal (with every hand) and per decision (with the challenge's
  count, winner and loser) to a file. Dice are rolled one chance node at a time in
  OpenSpiel and drawn by each engine's own seeded generator in ours.

Since the cap never binds early and the wilds do not touch the play, a deal of
ours and a game of OpenSpiel have the same distribution of decisions: with L = 60
bids on the ladder the mean is (L + 1) / L * H_L = 4.758 (H_L the L-th harmonic
number); the ``per game`` column should show it on every row.

Target (issue 13): our compiled engine, writing the full JSON event log
(``ours compiled, engine+log``), at no less than 1.0x OpenSpiel's C++
``evaluate_bots`` in decisions per CPU-second. The lines under the table also give
the full ``run_episode`` row's ratio, which the target does not cover.

The two Python rows play ``--slow-deals`` games an episode, the others ``--deals``.

    python bench/bench_openspiel.py                 # 5 x 20,000 games (5 x 2,000), best of 3
    python bench/bench_openspiel.py --deals 2000 --slow-deals 200 --repeat 1
    python bench/bench_openspiel.py --json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from bench_decisions import compiled_engine_and_log
from rich.console import Console
from rich.table import Table

from arena.fast.choice import NOT_BUILT
from arena.plugins import load
from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatSpec

try:
    import pyspiel
except ImportError:
    pyspiel = None

SEATS, HAND, FACES = 2, 5, 6
LADDER = SEATS * HAND * FACES
"""Distinct bids on the table, in both games: quantities 1..10 times faces 1..6."""
MAX_BIDS = LADDER
"""Our bid cap (rule 8) at the whole ladder, so it never ends a deal OpenSpiel would go on."""
ROLLS = SEATS * HAND
"""OpenSpiel's chance nodes per game: one per die."""
GAME = {"players": SEATS, "numdice": HAND}
SPECS = (SeatSpec.parse("random"),) * SEATS
DECISIONS = ("bid", "challenge")

CPP = "OpenSpiel C++ evaluate_bots"
TARGET_ROW = "ours compiled, engine+log"
FULL_ROW = "ours compiled, run_episode"
TARGET_VS_CPP = 1.0

Run = Callable[[int, int, Path], tuple[float, int]]
"""``run(episode, games, scratch)``: plays ``games`` games (deals) as episode number
``episode`` and returns (CPU seconds, decisions), timing only the play."""


def expected_decisions(ladder: int = LADDER) -> float:
    """Mean decisions per deal under uniform random play: (L + 1) / L * H_L.

    With k bids left above the standing one a deal lasts H_(k+1) more decisions, and
    the opening bid picks k uniformly from 0..L-1.
    """
    return (ladder + 1) / ladder * sum(1 / k for k in range(1, ladder + 1))


def _request(episode: int, deals: int, engine: str) -> EpisodeRequest:
    return EpisodeRequest(
        mode="dice",
        seed=episode,
        deals=deals,
        seats=SEATS,
        seat_specs=SPECS,
        max_bids=MAX_BIDS,
        engine=engine,
    )


def _count(records) -> int:
    return sum(1 for record in records if record["type"] in DECISIONS)


def ours_full(host, engine: str) -> Run:
    """A whole :func:`run_episode`: seats, engine, log file, audit, results."""

    def run(episode: int, deals: int, scratch: Path) -> tuple[float, int]:
        request = _request(episode, deals, engine)
        path = scratch / f"{engine}-{episode}.jsonl"
        started = time.process_time()
        _results, records = run_episode(host, request, log_path=path, environ={}, force=True)
        elapsed = time.process_time() - started
        return elapsed, _count(records)

    return run


def ours_engine_and_log(host) -> Run:
    """The compiled engine writing its log to a file, with seats built as the runner does."""

    def run(episode: int, deals: int, scratch: Path) -> tuple[float, int]:
        request = _request(episode, deals, "compiled")
        path = scratch / f"engine-{episode}.jsonl"
        started = time.process_time()
        event_log = compiled_engine_and_log(host, request, path)
        elapsed = time.process_time() - started
        return elapsed, _count(event_log.records())

    return run


def _decisions(states) -> int:
    """Each finished game's actions less its dice rolls."""
    return sum(len(state.history()) for state in states) - ROLLS * len(states)


def openspiel_cpp(game) -> Run:
    """One ``evaluate_bots`` call per game; the states are kept to be counted untimed."""

    def run(episode: int, games: int, _scratch: Path) -> tuple[float, int]:
        states = []
        keep = states.append
        first = episode * games
        started = time.process_time()
        bots = [
            pyspiel.make_uniform_random_bot(player, episode * SEATS + player)
            for player in range(SEATS)
        ]
        for seed in range(first, first + games):
            state = game.new_initial_state()
            pyspiel.evaluate_bots(state, bots, seed)
            keep(state)
        elapsed = time.process_time() - started
        return elapsed, _decisions(states)

    return run


def openspiel_python(game) -> Run:
    """The game stepped from Python: chance by its probabilities, decisions uniform."""

    def run(episode: int, games: int, _scratch: Path) -> tuple[float, int]:
        states = []
        keep = states.append
        started = time.process_time()
        rng = np.random.default_rng(episode)
        for _ in range(games):
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    outcomes, probabilities = zip(*state.chance_outcomes(), strict=True)
                    state.apply_action(rng.choice(outcomes, p=probabilities))
                else:
                    legal = state.legal_actions()
                    state.apply_action(legal[rng.integers(len(legal))])
            keep(state)
        elapsed = time.process_time() - started
        return elapsed, _decisions(states)

    return run


def best_rate(run: Run, episodes: int, games: int, repeat: int, scratch: Path):
    """Best decisions per CPU-second over ``repeat`` runs of ``episodes`` x ``games``,
    and that run's decisions (CPU time: the machine is shared, and other work inflates
    wall time)."""
    best, best_decisions = 0.0, 0
    for _ in range(repeat):
        elapsed, decisions = 0.0, 0
        for episode in range(episodes):
            seconds, count = run(episode, games, scratch)
            elapsed += seconds
            decisions += count
        if decisions / elapsed > best:
            best, best_decisions = decisions / elapsed, decisions
    return best, best_decisions


def workloads(host, fast: int, slow: int) -> dict[str, tuple[Run | str, int]]:
    """Each row's run (or why it cannot run) and its games per episode, C++ first:
    every ratio divides by it."""
    if pyspiel is None:
        game = None
        cpp = python = "not installed"
    else:
        game = pyspiel.load_game("liars_dice", GAME)
        cpp, python = openspiel_cpp(game), openspiel_python(game)
    compiled = "not built" if NOT_BUILT else None
    return {
        CPP: (cpp, fast),
        "OpenSpiel Python loop": (python, slow),
        FULL_ROW: (compiled or ours_full(host, "compiled"), fast),
        TARGET_ROW: (compiled or ours_engine_and_log(host), fast),
        "ours python, run_episode": (ours_full(host, "python"), slow),
    }


def verdict(rates: dict[str, float | None]) -> str:
    """The target's lines: met or missed, and the full episode's ratio beside it."""
    cpp = rates.get(CPP)
    if cpp is None or rates.get(TARGET_ROW) is None:
        return "target: not checked (needs open_spiel and the compiled engine)"
    ratio = rates[TARGET_ROW] / cpp
    state = "met" if ratio >= TARGET_VS_CPP else "missed"
    lines = [f"target {state}: {TARGET_ROW} at {ratio:.2f}x C++ (needs {TARGET_VS_CPP:.1f}x)"]
    full = rates.get(FULL_ROW)
    if full:
        lines.append(f"not in the target: {FULL_ROW} at {full / cpp:.2f}x C++")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=5, help="episodes per run (seeds 0..N-1)")
    parser.add_argument(
        "--deals", type=int, default=20_000, help="deals (games) per episode, compiled and C++ rows"
    )
    parser.add_argument(
        "--slow-deals",
        type=int,
        default=2_000,
        help="deals (games) per episode, the two Python rows",
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs per row; the best counts")
    parser.add_argument(
        "--json",
        action="store_true",
        help="print {workload: {games, decisions, rate, vs_cpp}} as JSON (null: not run), no table",
    )
    args = parser.parse_args(argv)
    host = load()
    table = Table(
        title=f"liars_dice, {SEATS} seats x {HAND} dice, uniform random play, best of {args.repeat}"
    )
    for column in ("workload", "games", "decisions", "per game", "decisions/s", "us/decision"):
        left = column == "workload"
        table.add_column(column, justify="left" if left else "right", no_wrap=left)
    table.add_column("vs C++", justify="right")
    rates: dict[str, float | None] = {}
    measured: dict[str, dict | None] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for name, (run, games) in workloads(host, args.deals, args.slow_deals).items():
            if isinstance(run, str):
                rates[name] = measured[name] = None
                table.add_row(name, run, "", "", "", "", "")
                continue
            rate, decisions = best_rate(run, args.episodes, games, args.repeat, Path(scratch))
            total = args.episodes * games
            rates[name] = rate
            cpp = rates.get(CPP)
            measured[name] = {
                "games": total,
                "decisions": decisions,
                "rate": rate,
                "vs_cpp": rate / cpp if cpp else None,
            }
            table.add_row(
                name,
                f"{total:,}",
                f"{decisions:,}",
                f"{decisions / total:.3f}",
                f"{rate:,.0f}",
                f"{1e6 / rate:.2f}",
                f"{rate / cpp:.2f}" if cpp else "",
            )
    if args.json:
        print(json.dumps(measured))
        return 0
    console = Console(width=max(Console().width, 110))
    console.print(table)
    console.print(
        f"per game: decisions per OpenSpiel game or per deal of ours; uniform random play "
        f"expects {expected_decisions():.3f}"
    )
    console.print(verdict(rates))
    return 0


if __name__ == "__main__":
    sys.exit(main())
