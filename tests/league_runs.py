"""Running a league into a store file and closing it, shared by the league tests."""

from __future__ import annotations

from arena.league.run import run_league
from arena.league.store import LeagueStore


def play(path, league, host, executor="serial", **options):
    store = LeagueStore(path)
    try:
        return run_league(league, store, host, executor=executor, **options)
    finally:
        store.close()
