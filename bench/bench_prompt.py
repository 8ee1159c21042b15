"""A model seat's prompt text per request, over a long episode: rendered afresh against kept.

Issue 39: ``record()`` renders every finished deal on every request, so a seat's prompt
costs more with every deal played and an episode's prompts cost quadratically. A seat
that keeps a :class:`~arena_plugins.model_seat.prompt.SeatRecord` renders each finished
deal once. Both are timed here in one run, request by request in turn, on the views
four bayes seats were shown over one episode (talk on, so the turn's tail carries talk):

- ``fresh``: the rules (their odds table computed again, as before it was cached),
  ``"".join(record(view, mode))`` and the turn: the text an OpenAI-compatible wire
  sends, as every request built it before;
- ``kept``: the rules, ``SeatRecord.text`` and the turn.

Each figure is process CPU time per request, the best of ``--repeat`` passes over the
same views, for the requests of the first ten deals, the ten around the middle and
the last ten, and averaged over the episode.

    python bench/bench_prompt.py                      # 160 deals, dice, best of 5
    python bench/bench_prompt.py --deals 400 --mode poker
"""

from __future__ import annotations

import argparse
import time

import attrs

from arena import seeding
from arena.engine import Engine, EpisodeConfig
from arena.rules import TableRules
from arena.seats import SeatContext
from arena_plugins.dice import DICE
from arena_plugins.model_seat import prompt
from arena_plugins.model_seat.prompt import SeatRecord, record, rules_in_brief, turn
from arena_plugins.poker import POKER
from arena_plugins.scripted import bayes
from arena_plugins.wild import WILD

MODES = {mode.name: mode for mode in (DICE, POKER, WILD)}


class Shown:
    """Plays bayes, says a line every turn, and keeps every view it was shown."""

    def __init__(self, inner):
        self.inner = inner
        self.views = []

    def decide(self, view):
        self.views.append(view)
        return attrs.evolve(self.inner.decide(view), say=f"deal {view.deal}")


def views_of(mode, deals: int, seed: int) -> list:
    rules = TableRules(mode=mode, seats=4, max_bids=12)
    table = [Shown(bayes(SeatContext.derive(seed, s, rules, seeding.SEAT))) for s in range(4)]
    fallbacks = [bayes(SeatContext.derive(seed, s, rules, seeding.FALLBACK)) for s in range(4)]
    config = EpisodeConfig(rules=rules, seed=seed, deals=deals, talk=True)
    Engine(config, table, ["bayes"] * 4, fallbacks, lambda event: None).play()
    return [seat.views for seat in table]


def fresh(seats: list, mode) -> list[float]:
    times = []
    for views in seats:
        for view in views:
            start = time.process_time()
            prompt._chances.cache_clear()
            rules_in_brief(view, mode) + "".join(record(view, mode)) + turn(view, mode)
            times.append(time.process_time() - start)
    return times


def kept(seats: list, mode) -> list[float]:
    times = []
    for views in seats:
        held = SeatRecord()
        for view in views:
            start = time.process_time()
            rules_in_brief(view, mode) + held.text(view, mode) + turn(view, mode)
            times.append(time.process_time() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=160)
    parser.add_argument("--mode", choices=sorted(MODES), default="dice")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    mode = MODES[args.mode]
    seats = views_of(mode, args.deals, args.seed)
    deal_of = [view.deal for views in seats for view in views]
    best = {"fresh": None, "kept": None}
    for _ in range(args.repeat):  # in turn, so both see the same load
        for name, run in (("fresh", fresh), ("kept", kept)):
            times = run(seats, mode)
            best[name] = times if best[name] is None else list(map(min, best[name], times))
    middle = args.deals // 2
    spans = {
        "deals 0-9": range(0, 10),
        f"deals {middle - 5}-{middle + 4}": range(middle - 5, middle + 5),
        f"deals {args.deals - 10}-{args.deals - 1}": range(args.deals - 10, args.deals),
        "whole episode": range(args.deals),
    }
    print(f"{args.mode}, {args.deals} deals, {len(deal_of)} requests, best of {args.repeat}")
    print(f"{'requests':<16} {'fresh us':>10} {'kept us':>10} {'fresh/kept':>11}")
    for label, span in spans.items():
        picked = [i for i, deal in enumerate(deal_of) if deal in span]
        a = sum(best["fresh"][i] for i in picked) / len(picked) * 1e6
        b = sum(best["kept"][i] for i in picked) / len(picked) * 1e6
        print(f"{label:<16} {a:>10.1f} {b:>10.1f} {a / b:>10.1f}x")


if __name__ == "__main__":
    main()
