"""Running a league into a store file and closing it, shared by the league tests."""

from __future__ import annotations

import subprocess
import sys

import pytest

from arena.league.run import run_league
from arena.league.store import LeagueStore


def play(path, league, host, executor="serial", **options):
    store = LeagueStore(path)
    try:
        return run_league(league, store, host, executor=executor, **options)
    finally:
        store.close()


def play_until_interrupted(path, league, host, after: int, **options) -> None:
    """``league`` into ``path``, stopped by a Ctrl-C once ``after`` tables are done."""

    def interrupt(progress):
        if progress.done >= after:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        play(path, league, host, progress=interrupt, **options)


def league_process(db, *args: str, **popen) -> subprocess.Popen:
    """``arena league run --db DB --json ARGS`` in its own process group, as a terminal runs
    a job; its output piped as text unless ``popen`` says otherwise."""
    options = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True} | popen
    return subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "league", "run", "--db", str(db), "--json", *args],
        start_new_session=True,
        **options,
    )
