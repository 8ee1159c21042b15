"""Duplicate leagues of scripted entrants, as the duplicate and paired tests build them."""

from __future__ import annotations

from collections import Counter

from arena import seeding
from arena.league.config import Entrant, LeagueSpec
from arena.runner import EpisodeRequest
from arena.seats import SeatSpec

NAMES = ("bayes", "pressure", "random", "bayes#2")


def entrants(names) -> tuple[Entrant, ...]:
    return tuple(Entrant(name, SeatSpec.parse(name.partition("#")[0])) for name in names)


def league(seats: int = 4, **overrides) -> LeagueSpec:
    names = (*NAMES, *(f"bayes#{n}" for n in range(3, seats)))[:seats]
    settings = dict(
        entrants=entrants(names),
        tables=2,
        seed=11,
        duplicate=True,
        table=EpisodeRequest(deals=4, seats=seats),
    )
    return LeagueSpec(**{**settings, **overrides})


def in_table_order(fixture) -> list[str]:
    """The fixture's entrants by table position (rules.md rule 1's permutation)."""
    order = seeding.table_order(fixture.request.seed, len(fixture.entrants))
    return [fixture.entrants[slot] for slot in order]


def predecessors(rows) -> dict[str, Counter]:
    """How often each entrant sits right after each other one (rule 5's next position)."""
    before: dict[str, Counter] = {}
    for row in rows:
        seated = in_table_order(row)
        for i, name in enumerate(seated):
            before.setdefault(name, Counter())[seated[i - 1]] += 1
    return before
