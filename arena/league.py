"""Leagues: many mixed tables drawn from a pool of policies, ranked by mean episode score.

The schedule is a pure function of the league's settings: table i's seats and
seed come from the master seed's stream for i alone, so a league gives the same
results serial or parallel, and a stopped league resumes where it stopped (its
finished episodes are in the SQLite store). With ``duplicate``, each drawn table
is replayed under every rotation of its seats on the same seed: every policy
then holds every hand and position of those deals, which cancels card luck.
"""

from __future__ import annotations

import multiprocessing
import statistics
from collections.abc import Callable, Iterator, Sequence

import attrs

from arena import seeding
from arena.plugins import PluginHost, load
from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatSpec
from arena.store import LeagueStore

LEAGUE = 4
"""Seed-stream domain of the league schedule (see arena.seeding)."""


@attrs.frozen
class LeagueSpec:
    """Everything that determines a league's schedule."""

    pool: tuple[SeatSpec, ...]
    tables: int
    seed: int = 0
    table: EpisodeRequest = EpisodeRequest()
    """Mode, deals, seats, bid cap and talk of every table (its seed and seats are drawn)."""
    duplicate: bool = False

    def settings(self) -> dict:
        """The JSON form stored with the league, to refuse resuming a different one."""
        table = self.table
        return {
            "pool": [str(s) for s in self.pool],
            "tables": self.tables,
            "seed": self.seed,
            "mode": table.mode,
            "deals": table.deals,
            "seats": table.seats,
            "maxBids": table.max_bids,
            "talk": table.talk,
            "duplicate": self.duplicate,
        }


@attrs.frozen
class Fixture:
    """One scheduled episode."""

    index: int
    table: int
    rotation: int
    request: EpisodeRequest


@attrs.frozen
class Standing:
    policy: str
    episodes: int
    """Seatings: a policy drawn twice at one table counts twice."""
    mean_score: float
    stderr: float
    """Standard error of the mean episode score (0 with fewer than two episodes)."""
    points: int

    def to_json(self) -> dict:
        return {
            "policy": self.policy,
            "episodes": self.episodes,
            "meanScore": self.mean_score,
            "stderr": self.stderr,
            "points": self.points,
        }


def schedule(spec: LeagueSpec) -> list[Fixture]:
    fixtures: list[Fixture] = []
    seats = spec.table.seats
    for table in range(spec.tables):
        rng = seeding.stream(spec.seed, LEAGUE, table)
        picks = rng.choice(len(spec.pool), size=seats, replace=len(spec.pool) < seats).tolist()
        seed = int(rng.integers(2**62))
        for rotation in range(seats if spec.duplicate else 1):
            specs = tuple(spec.pool[picks[(slot + rotation) % seats]] for slot in range(seats))
            request = attrs.evolve(spec.table, seed=seed, seat_specs=specs)
            fixtures.append(Fixture(len(fixtures), table, rotation, request))
    return fixtures


def run_league(
    spec: LeagueSpec,
    store: LeagueStore,
    workers: int = 1,
    progress: Callable[[int, int], None] = lambda done, total: None,
) -> list[Standing]:
    """Play every fixture the store does not have yet, then rank the pool."""
    store.start(spec.settings())
    fixtures = schedule(spec)
    pending = [f for f in fixtures if f.index not in store.finished()]
    done = len(fixtures) - len(pending)
    progress(done, len(fixtures))
    for fixture, results in _play_all(pending, workers):
        store.save(fixture.index, fixture.table, fixture.rotation, results)
        done += 1
        progress(done, len(fixtures))
    return standings(store.seat_rows())


def standings(rows: Sequence[tuple[str, int, float]]) -> list[Standing]:
    """Rank policies by mean episode score (rules.md), best first; ties by name."""
    by_policy: dict[str, list[tuple[int, float]]] = {}
    for policy, points, score in rows:
        by_policy.setdefault(policy, []).append((points, score))
    table = [
        Standing(
            policy=policy,
            episodes=len(entries),
            mean_score=statistics.fmean(s for _, s in entries),
            stderr=statistics.stdev(s for _, s in entries) / len(entries) ** 0.5
            if len(entries) > 1
            else 0.0,
            points=sum(p for p, _ in entries),
        )
        for policy, entries in by_policy.items()
    ]
    return sorted(table, key=lambda s: (-s.mean_score, s.policy))


def _play_all(fixtures: list[Fixture], workers: int) -> Iterator[tuple[Fixture, dict]]:
    if workers <= 1 or len(fixtures) <= 1:
        host = load()
        for fixture in fixtures:
            yield fixture, _play(host, fixture)
        return
    context = multiprocessing.get_context("spawn")
    with context.Pool(workers, initializer=_init_worker) as pool:
        yield from zip(fixtures, pool.imap(_play_in_worker, fixtures), strict=True)


def _play(host: PluginHost, fixture: Fixture) -> dict:
    results, _ = run_episode(host, fixture.request)
    return results.to_json()


_worker_host: PluginHost | None = None


def _init_worker() -> None:
    global _worker_host
    _worker_host = load()


def _play_in_worker(fixture: Fixture) -> dict:
    return _play(_worker_host, fixture)
