"""Where a ``--target-ci`` league seats its next round: where the intervals narrow most per dollar.

A league of more entrants than seats chooses who plays each table. The balanced
schedule seats whoever has played least; a league with a target wants instead
the entrants whose intervals are furthest from it, and of those the cheapest to
play. After each round, from the tables stored so far, an entrant whose
half-width h over n tables is above the target W needs about
n ((h / W)^2 - 1) more tables (a half-width shrinks as 1 / sqrt(tables)); its
priority is that need per dollar, its cost per table being what its seats cost
so far (a scripted seat costs nothing, so a floor of :data:`FLOOR_USD` keeps the
ratio defined and those seats the cheapest). Each seat of the round's tables goes
to the free entrant of highest priority, whose need then drops by one table;
entrants already within the target fill the seats left, cheapest first, then
least played, then in the table's seeded order.

The round's tables depend on the master seed and the stored results of the rounds
before it only, never on the round itself, so a league stopped mid-round resumes
to the same tables. The table seed and seeded order come from the same stream
(LEAGUE, t) as the balanced schedule's, so table t deals the same cards either way.
With no more entrants than seats (and no repeats) every table seats all of them, and
the allocation is the balanced schedule itself.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import attrs

from arena.league.config import LeagueSpec
from arena.league.schedule import Draw, draw_seed, pick_seats
from arena.league.standings import SeatRow, Tables, standings
from arena.league.store import checked_rows, reading

FLOOR_USD = 1e-6
"""The cost per table counted for an entrant whose seats cost nothing (scripted)."""


@attrs.frozen
class Evidence:
    """What the rounds so far say of one entrant."""

    half_width: float
    tables: int
    usd_per_table: float

    def need(self, target: float) -> float:
        """Tables more this entrant needs for its half-width to reach ``target``."""
        if self.tables == 0:
            return math.inf
        return max(0.0, self.tables * ((self.half_width / target) ** 2 - 1))

    @property
    def cost(self) -> float:
        return max(self.usd_per_table, FLOOR_USD)


Evidences = Callable[[int], Mapping[str, Evidence]]
"""The evidence of every entrant from the tables before the given one."""


def allocated_draws(spec: LeagueSpec, evidence: Evidences) -> Iterator[Draw]:
    """Each table's entrants by slot and its seed, a round at a time (see the module)."""
    names = [e.name for e in spec.entrants]
    count = [0] * len(names)
    need, cost = [0.0] * len(names), [FLOOR_USD] * len(names)

    def priority(entrant: int) -> tuple:  # the neediest per dollar, then the cheapest
        return -need[entrant] / cost[entrant], cost[entrant], count[entrant]

    def seated(entrant: int) -> None:
        need[entrant] = max(0.0, need[entrant] - 1)
        count[entrant] += 1

    for table in range(spec.tables):
        if table % spec.round_tables == 0 and table:  # the first round: nothing known yet
            known = evidence(table)
            missing = Evidence(math.inf, 0, 0.0)
            need = [known.get(name, missing).need(spec.target_ci) for name in names]
            cost = [known.get(name, missing).cost for name in names]
        picks, place, rng = pick_seats(spec, table, priority, seated)
        yield sorted(picks, key=place.get), draw_seed(rng)


def stored_evidence(path: str | Path, before: int, alpha: float) -> dict[str, Evidence]:
    """Each entrant's half-width (at ``alpha``), tables and cost per table over the stored
    tables before ``before``; a stand-in's seats count as its entrant's."""
    with reading(path) as db:
        rows = checked_rows(
            path,
            db.execute(
                "SELECT s.idx, e.tbl, s.entrant, s.score, s.points, s.usd FROM seats s"
                " JOIN episodes e USING (idx) WHERE e.tbl < ? ORDER BY s.idx, s.slot",
                (before,),
            ),
            [int, int, str, (int, float), int, (int, float)],
        )
    usd: dict[str, float] = defaultdict(float)
    tables: dict[str, set[int]] = defaultdict(set)
    for _, table, name, _, _, spent in rows:
        usd[name] += spent
        tables[name].add(table)
    seated = [SeatRow(*row[:5]) for row in rows]
    played = [table for _, table, *_ in rows]
    groups = Tables(played, duplicate=len({r[0] for r in rows}) > len(set(played)), alpha=alpha)
    found = {}
    for s in standings(seated, groups):
        count = len(tables[s.entrant])
        found[s.entrant] = Evidence((s.ci95[1] - s.ci95[0]) / 2, count, usd[s.entrant] / count)
    return found
