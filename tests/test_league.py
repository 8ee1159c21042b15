"""Leagues: a deterministic schedule, serial == parallel, resumable SQLite storage, ranking."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

import pytest

from arena.league import LeagueSpec, run_league, schedule, standings
from arena.runner import EpisodeRequest
from arena.seats import SeatSpec
from arena.store import LeagueStore, StoreError

POOL = tuple(SeatSpec.parse(name) for name in ("bayes", "pressure", "random"))


def spec(**overrides) -> LeagueSpec:
    settings = dict(pool=POOL, tables=4, seed=11, table=EpisodeRequest(deals=6), duplicate=False)
    return LeagueSpec(**{**settings, **overrides})


def rows(path) -> list[tuple]:
    with sqlite3.connect(path) as db:
        return list(db.execute("SELECT * FROM episodes ORDER BY idx")) + list(
            db.execute("SELECT * FROM seats ORDER BY idx, slot")
        )


def play(path, league, workers=1):
    store = LeagueStore(path)
    try:
        return run_league(league, store, workers=workers)
    finally:
        store.close()


def test_a_table_depends_only_on_the_master_seed_and_its_index():
    # Drawing more tables must not change the tables already drawn.
    short, long = schedule(spec(tables=3)), schedule(spec(tables=7))
    assert long[:3] == short
    assert len({f.request.seed for f in long}) == 7


def test_duplicate_replays_each_table_under_every_rotation():
    fixtures = schedule(spec(tables=2, duplicate=True))
    assert len(fixtures) == 2 * 4
    first = [f for f in fixtures if f.table == 0]
    assert {f.request.seed for f in first} == {first[0].request.seed}
    # Rotation r moves the policy of slot (s + r) into slot s, so every drawn
    # seating visits every slot exactly once.
    drawn = first[0].request.seat_specs
    for fixture in first:
        r = fixture.rotation
        assert fixture.request.seat_specs == tuple(drawn[(s + r) % 4] for s in range(4))


def test_serial_and_parallel_leagues_store_the_same_rows(tmp_path):
    serial = play(tmp_path / "serial.sqlite", spec(), workers=1)
    parallel = play(tmp_path / "parallel.sqlite", spec(), workers=2)
    assert serial == parallel
    assert rows(tmp_path / "serial.sqlite") == rows(tmp_path / "parallel.sqlite")


def test_an_interrupted_league_resumes_to_the_same_result(tmp_path):
    whole = play(tmp_path / "whole.sqlite", spec())
    cut = tmp_path / "cut.sqlite"
    play(cut, spec())
    with sqlite3.connect(cut) as db:  # lose the last two episodes, as a crash would
        db.execute("DELETE FROM seats WHERE idx >= 2")
        db.execute("DELETE FROM episodes WHERE idx >= 2")
    assert play(cut, spec()) == whole
    assert rows(cut) == rows(tmp_path / "whole.sqlite")


def test_resuming_with_other_settings_is_refused(tmp_path):
    play(tmp_path / "l.sqlite", spec())
    with pytest.raises(StoreError, match="other settings"):
        play(tmp_path / "l.sqlite", spec(seed=12))


def test_standings_rank_by_mean_episode_score():
    # a: scores 0.75 and 0.25 -> mean 0.5, stdev 0.3536, stderr 0.3536 / sqrt(2) = 0.25
    # b: one score 0.6 -> mean 0.6, stderr 0 (a single episode has none)
    table = standings([("a", 5, 0.75), ("b", 2, 0.6), ("a", -5, 0.25)])
    assert [row.policy for row in table] == ["b", "a"]
    assert table[1].mean_score == pytest.approx(0.5)
    assert table[1].stderr == pytest.approx(0.25)
    assert table[1].points == 0 and table[1].episodes == 2
    assert table[0].stderr == 0.0


def test_every_seat_of_the_league_is_zero_sum(tmp_path):
    play(tmp_path / "l.sqlite", spec(tables=5))
    with sqlite3.connect(tmp_path / "l.sqlite") as db:
        sums = [s for (s,) in db.execute("SELECT SUM(points) FROM seats GROUP BY idx")]
    assert sums == [0] * 5


@pytest.mark.parametrize(
    "args, message",
    [
        (["--pool", "bayes,nobody"], "unknown seat 'nobody'"),
        (["--pool", "bayes", "--mode", "chess"], "unknown mode 'chess'"),
        (["--pool", "bayes", "--db", "{tmp}/not-a-db"], "not a league database"),
    ],
)
def test_league_errors_are_one_line(tmp_path, args, message):
    (tmp_path / "not-a-db").write_text("this is not sqlite, " * 100)
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    proc = subprocess.run(
        [sys.executable, "-m", "arena.cli", "league", "--tables", "1", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arena: error:") and message in lines[0]
