"""Whole episodes of bayes seats, each seat's views recorded: what the prompt-cache and
wire-record tests render requests from."""

from __future__ import annotations

import attrs
from plugins_for_tests.seats import Recording

from arena import seeding
from arena.engine import Engine, EpisodeConfig
from arena.rules import TableRules
from arena.seats import SeatContext
from arena_plugins.scripted import bayes


class Talking:
    """Plays bayes and says something on every turn, so talk-on episodes carry talk."""

    def __init__(self, inner):
        self.inner = inner

    def decide(self, view):
        return attrs.evolve(self.inner.decide(view), say=f"deal {view.deal}")


def episode_views(mode, seats, seed, deals, talk):
    """Every view each seat was shown over one episode of bayes seats."""
    rules = TableRules(mode=mode, seats=seats, max_bids=8)
    config = EpisodeConfig(rules=rules, seed=seed, deals=deals, talk=talk)
    table = [
        Recording(Talking(bayes(SeatContext.derive(seed, s, rules, seeding.SEAT))))
        for s in range(seats)
    ]
    fallbacks = [bayes(SeatContext.derive(seed, s, rules, seeding.FALLBACK)) for s in range(seats)]
    Engine(config, table, ["bayes"] * seats, fallbacks, lambda event: None).play()
    return [seat.views for seat in table]
