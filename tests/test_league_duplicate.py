"""Duplicate tables: every entrant holds every hand once and follows as many others as it can.

The seating that decides most of a scripted entrant's score is who sits right before
it in table order (rules.md rule 1: a seeded permutation of the slots; rule 5: the turn
moves to the next table position). A duplicate group replays one seed, so its table
order is fixed; these tests place entrants on it by hand and check the schedule's rows.
"""

from __future__ import annotations

import json
import sqlite3

import pytest
from duplicate_leagues import NAMES, in_table_order, league, predecessors
from hypothesis import given
from hypothesis import strategies as st

from arena.cli import main
from arena.league.config import LeagueSpec
from arena.league.schedule import DUPLICATE_SCHEDULE, duplicate_order, schedule
from arena.league.store import LeagueStore, StoreError
from arena.seats import SeatSpec


def test_four_seats_follow_williams_square():
    # The six orderings with w[0] = 0 and their cyclic steps w[i] - w[i-1] mod 4 (the
    # last from w[3] back to w[0]), scored by the sum of squared step counts:
    #   0 1 2 3: 1 1 1 1 -> 16      0 1 3 2: 1 2 3 2 -> 1 + 4 + 1 = 6
    #   0 2 1 3: 2 3 2 1 -> 6       0 2 3 1: 2 1 2 3 -> 6
    #   0 3 1 2: 3 2 1 2 -> 6       0 3 2 1: 3 3 3 3 -> 16
    # The first scoring 6 is 0 1 3 2, Williams' square; rotating the seats (0 1 2 3)
    # repeats one step four times: each entrant would follow the same one in every row.
    assert duplicate_order(4) == (0, 1, 3, 2)
    # two seats: one row swaps them; there is nothing else to vary
    assert duplicate_order(2) == (0, 1)


def test_each_row_places_the_drawn_entrants_on_the_table_order_by_hand():
    rows = [f for f in schedule(league()) if f.table == 0]
    assert len(rows) == 4 and len({f.request.seed for f in rows}) == 1
    # Row r puts the drawn entrant p[(r + w[i]) % 4] at table position i, w = 0, 1, 3, 2.
    # With p = A B C D, by table position:
    #   row 0: A B D C    row 1: B C A D    row 2: C D B A    row 3: D A C B
    # so row 0 in table order names them: A, B, D, C.
    a, b, d, c = in_table_order(rows[0])
    expected = [[a, b, d, c], [b, c, a, d], [c, d, b, a], [d, a, c, b]]
    assert [in_table_order(f) for f in rows] == expected
    # each seat plays its entrant's policy: bayes#2 is the bayes seat under its own name
    for fixture in rows:
        policies = tuple(SeatSpec.parse(n.partition("#")[0]) for n in fixture.entrants)
        assert fixture.request.seat_specs == policies


def test_every_entrant_holds_every_hand_once_and_follows_every_other_entrant():
    rows = [f for f in schedule(league()) if f.table == 1]
    # slot s holds hand s (rule 1 deals by slot): across the 4 rows each slot is
    # every entrant once
    for slot in range(4):
        assert sorted(f.entrants[slot] for f in rows) == sorted(NAMES)
    # From the square above, A's predecessor (the position before, wrapping) is C in
    # row 0, C in row 1, B in row 2 and D in row 3: C twice (A - 2), B and D once.
    for name, before in predecessors(rows).items():
        assert name not in before
        assert sorted(before.values()) == [1, 1, 2]


@given(seats=st.integers(2, 8), seed=st.integers(0, 2**62))
def test_a_duplicate_table_is_a_latin_square_on_its_table_order(seats, seed):
    rows = [f for f in schedule(league(seats, tables=1, seed=seed))]
    assert len(rows) == seats
    for slot in range(seats):  # every entrant holds every hand once
        assert len({f.entrants[slot] for f in rows}) == seats
    for position in range(seats):  # and sits at every table position once
        assert len({in_table_order(f)[position] for f in rows}) == seats
    if seats % 2 == 0:
        # Williams: over the rows x follows every other entrant once and x - seats/2 a
        # second time, so it sits after all seats - 1 others
        for before in predecessors(rows).values():
            assert sorted(before.values()) == [1] * (seats - 2) + [2]


def test_a_plain_league_keeps_its_seating():
    # Only duplicate tables changed: a plain table's slots are its draw, one episode a
    # table, so plain leagues stored before resume as they were.
    plain = schedule(league(duplicate=False, tables=3))
    assert [f.rotation for f in plain] == [0, 0, 0]
    first = schedule(league(tables=3))
    assert [f.request.seed for f in plain] == [first[4 * t].request.seed for t in range(3)]
    for t, fixture in enumerate(plain):
        group = first[4 * t : 4 * t + 4]
        assert set(fixture.entrants) == set(group[0].entrants)


def stored_before(path, spec: LeagueSpec) -> None:
    """A league file as the arena before DUPLICATE_SCHEDULE wrote it: the settings only."""
    LeagueStore(path).close()
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO league VALUES (?)", (json.dumps(spec.settings(), sort_keys=True),))


def test_a_duplicate_league_stored_by_the_old_schedule_is_refused_in_one_line(tmp_path):
    spec = league()
    stored_before(tmp_path / "old.sqlite", spec)
    store = LeagueStore(tmp_path / "old.sqlite")
    try:
        with pytest.raises(StoreError, match="seated by duplicate schedule 1") as refused:
            store.check(spec.settings())
        assert f"by schedule {DUPLICATE_SCHEDULE}: play it again in a new file" in str(refused)
    finally:
        store.close()


def test_a_plain_league_stored_before_still_resumes(tmp_path):
    spec = league(duplicate=False)
    stored_before(tmp_path / "old.sqlite", spec)
    store = LeagueStore(tmp_path / "old.sqlite")
    try:
        store.check(spec.settings())  # the same text: no refusal
        with pytest.raises(StoreError, match="other settings"):
            store.check(league(duplicate=False, seed=12).settings())
    finally:
        store.close()


def test_the_cli_refuses_the_old_duplicate_league_with_one_error_line(tmp_path, capsys):
    args = ["--pool", ",".join(n.partition("#")[0] for n in NAMES), "--tables", "2"]
    args += ["--duplicate", "--deals", "4", "--seed", "11", "--db", str(tmp_path / "l.sqlite")]
    assert main(["league", "run", *args]) == 0
    with sqlite3.connect(tmp_path / "l.sqlite") as db:  # as the old arena had stored it
        (text,) = db.execute("SELECT settings FROM league").fetchone()
        settings = json.loads(text)
        assert settings.pop("duplicateSchedule") == DUPLICATE_SCHEDULE
        db.execute("UPDATE league SET settings = ?", (json.dumps(settings, sort_keys=True),))
    capsys.readouterr()
    code = main(["league", "run", *args])
    err = capsys.readouterr().err
    assert code == 2  # a user error, as resuming with other settings is
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arena: error: ")
    assert "seated by duplicate schedule 1" in lines[0]
