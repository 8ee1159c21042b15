"""The schedule: which entrants sit where at which table, and on which seed.

The schedule is a pure function of the league's settings (a ``--target-ci`` league
of more entrants than seats: of its settings and its earlier rounds' results,
:mod:`arena.league.allocation`). Table t's seat
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

With ``duplicate`` each table is replayed ``seats`` times on the same seed, the
drawn entrants placed on the table order (rules.md rule 1, known from the seed)
by the rows of a row-complete Latin square (:func:`duplicate_order`): every
entrant then holds every hand and position of those deals once, which cancels
card luck, and sits after as many different entrants as the rows allow, which
cancels most of the seating (who sits before a seat decides much of its score).
Rotating the entrants over the slots, as this did before
(:data:`DUPLICATE_SCHEDULE` 1), kept much of who sits after whom. With an even
number of seats one entrant, its partner, sits before another twice in a group;
where every group seats the whole league (:func:`paired`), the groups give each
entrant each partner in turn (:func:`partnered`), so the standings can weigh the
partners equally (strat-t, :mod:`arena.league.standings`). The rows of a table are
one group for the intervals.

The fixtures are drawn as they are read (:func:`fixtures`; how many there are is
:attr:`~arena.league.config.LeagueSpec.episodes`), so a league of any size starts its
first table at once and holds no more of its schedule than it plays.
"""

from __future__ import annotations

import functools
import itertools
from collections import Counter
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import attrs

from arena import seeding

if TYPE_CHECKING:  # the store imports this module's DUPLICATE_SCHEDULE, and runner the store
    import numpy as np

    from arena.league.config import LeagueSpec
    from arena.runner import EpisodeRequest

LEAGUE = 4
"""Seed-stream domain of the league schedule (see arena.seeding)."""
DUPLICATE_SCHEDULE = 3
"""How a duplicate table's episodes are seated: 3 by :func:`duplicate_order`'s Latin
square, with the partners evened out over the groups where they are :func:`paired`; the
leagues stored before, by :data:`EARLIER_SCHEDULES`."""
EARLIER_SCHEDULES = {
    1: "rotations of the slots",
    2: "a Latin square with the partners as drawn",
}
"""How a duplicate league stored under an earlier schedule was seated (it is refused on
resume: the same settings would now seat its remaining groups otherwise)."""


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


def fixtures(spec: LeagueSpec, draws: Iterator[Draw] | None = None) -> Iterator[Fixture]:
    """The schedule in order, each fixture drawn as it is read; ``draws`` seats the tables
    instead of the league's schedule (a ``--target-ci`` league's allocated rounds,
    :mod:`arena.league.allocation`)."""
    index = 0
    for table, (picks, seed) in enumerate(draws or table_draws(spec)):
        for rotation in range(spec.rotations):
            slots = _duplicate_row(picks, seed, rotation) if spec.duplicate else picks
            seated = tuple(spec.entrants[e] for e in slots)
            request = attrs.evolve(spec.table, seed=seed, seat_specs=tuple(e.spec for e in seated))
            names = tuple(e.name for e in seated)
            yield Fixture(index, table, rotation, names, request)
            index += 1


def table_draws(spec: LeagueSpec) -> Iterator[Draw]:
    """The schedule's tables: its draws, with the partners evened out where the league's
    groups are :func:`paired`."""
    draws = _DRAWS[spec.schedule](spec)
    if not spec.duplicate or not paired(spec.table.seats, len(spec.entrants), spec.allow_repeat):
        return draws
    return ((partnered(picks, table), seed) for table, (picks, seed) in enumerate(draws))


def paired(seats: int, entrants: int, allow_repeat: bool) -> bool:
    """Whether a duplicate league's groups pair its entrants off: with an even number of
    seats each entrant follows one other, its *partner*, twice in a group (drawn entrants
    k and k + seats/2, :func:`duplicate_order`), and with as many entrants as seats and no
    repeats every group seats them all, so the schedule can give each entrant every other
    as its partner equally often (:func:`partnered`). Odd seat counts have no single
    partner, and a larger pool meets each entrant at only some tables: those groups keep
    their partners as drawn."""
    return seats % 2 == 0 and entrants == seats and not allow_repeat


def partnered(picks: list[int], table: int) -> list[int]:
    """Table ``table``'s drawn entrants (all of the league's, 0..seats-1, in a seeded order)
    placed so that its partners (drawn entrants k and k + seats/2) are the pairs of
    :func:`pairing` ``table`` mod (seats - 1): over any seats - 1 consecutive groups each
    entrant has every other as its partner once. The draw still orders the pairs and
    which of two partners comes first."""
    partner = {}
    for a, b in pairing(len(picks), table % (len(picks) - 1)):
        partner[a], partner[b] = b, a
    firsts: list[int] = []
    for entrant in picks:
        if entrant not in firsts and partner[entrant] not in firsts:
            firsts.append(entrant)
    return firsts + [partner[entrant] for entrant in firsts]


def pairing(seats: int, round_: int) -> list[tuple[int, int]]:
    """Round ``round_`` (0..seats-2) of the circle method's round robin of ``seats``
    (even) players: seats - 1 is fixed, and the others stand on a circle, where round r
    pairs r with seats - 1 and r + i with r - i (mod seats - 1). Every two players meet in
    exactly one round."""
    ring = seats - 1
    pairs = [(round_, ring)]
    pairs += [((round_ + i) % ring, (round_ - i) % ring) for i in range(1, seats // 2)]
    return pairs


def _duplicate_row(picks: list[int], seed: int, row: int) -> list[int]:
    """Row ``row`` of a duplicate table: table position i (slot ``order[i]``) gets the
    entrant ``picks[(row + w[i]) % seats]``, w being :func:`duplicate_order`."""
    order = seeding.table_order(seed, len(picks))
    slots = [0] * len(picks)
    for position, offset in enumerate(duplicate_order(len(picks))):
        slots[order[position]] = picks[(row + offset) % len(picks)]
    return slots


@functools.cache
def duplicate_order(seats: int) -> tuple[int, ...]:
    """The first ordering w of 0..seats-1 (w[0] = 0) whose cyclic steps w[i] - w[i-1]
    (mod seats) repeat least (the least sum of squared step counts).

    Row r seats entrant (r + w[i]) mod seats at table position i, a Latin square: each
    entrant holds each position once. The entrant before x there is x less a step, so
    over the rows x follows each other entrant once per step that differs from x by it:
    for an even number of seats the steps are every nonzero value once and seats/2 once
    more (Williams' row-complete square, e.g. 0, 1, 3, 2: x follows x-2 twice and the
    others once), where rotating the seats (w = 0, 1, 2, 3) repeats one step four times.
    """
    rest = itertools.permutations(range(1, seats))

    def repeats(w: tuple[int, ...]) -> int:
        steps = Counter((w[i] - w[i - 1]) % seats for i in range(seats))
        return sum(n * n for n in steps.values())

    return min(((0, *w) for w in rest), key=repeats)


Draw = tuple[list[int], int]
"""A table's entrants by slot (indices into the league's entrants) and its episode seed."""


def pick_seats(
    spec: LeagueSpec,
    table: int,
    priority: Callable[[int], tuple],
    picked: Callable[[int], None],
) -> tuple[list[int], dict[int, int], np.random.Generator]:
    """Table ``table``'s entrants, a seat at a time: the free entrant whose ``priority``
    is lowest, ties by the table's seeded order, then ``picked(it)`` (which may change the
    priorities of the next seat). Also each entrant's place in that order, and the
    table's stream, from which its episode seed is drawn next (:func:`draw_seed`)."""
    rng = seeding.stream(spec.seed, LEAGUE, table)
    order = rng.permutation(len(spec.entrants)).tolist()
    place = {entrant: position for position, entrant in enumerate(order)}
    picks: list[int] = []
    for _ in range(spec.table.seats):
        free = [e for e in order if spec.allow_repeat or e not in picks]
        chosen = min(free, key=lambda e: (*priority(e), place[e]))
        picked(chosen)
        picks.append(chosen)
    return picks, place, rng


def _balanced(spec: LeagueSpec) -> Iterator[Draw]:
    """Each seat to the entrant seated least so far."""
    count = [0] * len(spec.entrants)

    def seated(entrant: int) -> None:
        count[entrant] += 1

    for table in range(spec.tables):
        picks, _, rng = pick_seats(spec, table, lambda e: (count[e],), seated)
        yield picks, draw_seed(rng)


def _combinations(spec: LeagueSpec) -> Iterator[Draw]:
    """Every group of entrants in turn, ``tables`` rounds over."""
    pick = itertools.combinations_with_replacement if spec.allow_repeat else itertools.combinations
    rounds = (pick(range(len(spec.entrants)), spec.table.seats) for _ in range(spec.tables))
    for table, group in enumerate(itertools.chain.from_iterable(rounds)):
        rng = seeding.stream(spec.seed, LEAGUE, table)
        order = rng.permutation(len(group)).tolist()
        yield [group[i] for i in order], draw_seed(rng)


def _random(spec: LeagueSpec) -> Iterator[Draw]:
    for table in range(spec.tables):
        rng = seeding.stream(spec.seed, LEAGUE, table)
        picks = rng.choice(len(spec.entrants), size=spec.table.seats, replace=spec.allow_repeat)
        yield picks.tolist(), draw_seed(rng)


def draw_seed(rng) -> int:
    """The table's episode seed, drawn after its seats from the same stream."""
    return int(rng.integers(2**62))


_DRAWS = {"balanced": _balanced, "combinations": _combinations, "random": _random}
