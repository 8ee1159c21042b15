"""The schedule: which entrants sit where at which table, and on which seed.

The schedule is a pure function of the league's settings. Table t's seat
draw and then its episode seed come from the league seed's stream for
(LEAGUE, t) alone, never from which worker plays it, so
serial, threads, processes and Ray play the same episodes, and a stopped league
resumes where it stopped. Three ways to form tables:

- ``balanced``: each table seats the entrants who have played least so far
  (ties in a seeded order), so counts never differ by more than one and are
  equal whenever tables x seats is a multiple of the number of entrants;
- ``combinations``: every set of ``seats`` entrants once per round (``tables``
  rounds), seated in a seeded order;
- ``random``: seeded draws, as many tables as asked.

With ``duplicate`` each table is replayed under every rotation of its seats on
the same seed: every entrant then holds every hand and position of those
deals, which cancels card luck. The rotations of a table are one group for the
bootstrap (:mod:`arena.league.standings`).

The fixtures are drawn as they are read (:func:`fixtures`; how many there are is
:attr:`~arena.league.config.LeagueSpec.episodes`), so a league of any size starts its
first table at once and holds no more of its schedule than it plays.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import attrs

from arena import seeding
from arena.league.config import LeagueSpec
from arena.runner import EpisodeRequest

LEAGUE = 4
"""Seed-stream domain of the league schedule (see arena.seeding)."""


@attrs.frozen
class Fixture:
    """One scheduled episode."""

    index: int
    table: int
    rotation: int
    entrants: tuple[str, ...]
    """Entrant names by slot."""
    request: EpisodeRequest


def schedule(spec: LeagueSpec) -> list[Fixture]:
    """The whole schedule in one list, for a league small enough to hold it."""
    return list(fixtures(spec))


def fixtures(spec: LeagueSpec) -> Iterator[Fixture]:
    """The schedule in order, each fixture drawn as it is read."""
    seats = spec.table.seats
    index = 0
    for table, (picks, seed) in enumerate(_DRAWS[spec.schedule](spec)):
        for rotation in range(spec.rotations):
            seated = tuple(spec.entrants[picks[(slot + rotation) % seats]] for slot in range(seats))
            request = attrs.evolve(spec.table, seed=seed, seat_specs=tuple(e.spec for e in seated))
            names = tuple(e.name for e in seated)
            yield Fixture(index, table, rotation, names, request)
            index += 1


Draw = tuple[list[int], int]
"""A table's entrants by slot (indices into the league's entrants) and its episode seed."""


def _balanced(spec: LeagueSpec) -> Iterator[Draw]:
    count = [0] * len(spec.entrants)
    for table in range(spec.tables):
        rng = seeding.stream(spec.seed, LEAGUE, table)
        order = rng.permutation(len(count)).tolist()
        place = {entrant: position for position, entrant in enumerate(order)}
        picks: list[int] = []
        for _ in range(spec.table.seats):
            free = [e for e in order if spec.allow_repeat or e not in picks]
            chosen = min(free, key=lambda e: (count[e], place[e]))
            count[chosen] += 1
            picks.append(chosen)
        yield picks, _seed(rng)


def _combinations(spec: LeagueSpec) -> Iterator[Draw]:
    """Every group of entrants in turn, ``tables`` rounds over."""
    pick = itertools.combinations_with_replacement if spec.allow_repeat else itertools.combinations
    rounds = (pick(range(len(spec.entrants)), spec.table.seats) for _ in range(spec.tables))
    for table, group in enumerate(itertools.chain.from_iterable(rounds)):
        rng = seeding.stream(spec.seed, LEAGUE, table)
        order = rng.permutation(len(group)).tolist()
        yield [group[i] for i in order], _seed(rng)


def _random(spec: LeagueSpec) -> Iterator[Draw]:
    for table in range(spec.tables):
        rng = seeding.stream(spec.seed, LEAGUE, table)
        picks = rng.choice(len(spec.entrants), size=spec.table.seats, replace=spec.allow_repeat)
        yield picks.tolist(), _seed(rng)


def _seed(rng) -> int:
    """The table's episode seed, drawn after its seats from the same stream."""
    return int(rng.integers(2**62))


_DRAWS = {"balanced": _balanced, "combinations": _combinations, "random": _random}
