"""Paired duplicate groups and the strat-t interval drawn over them.

In a Williams group of an even number of seats each entrant sits right after one other
entrant, its partner, twice (tests/test_league_duplicate.py). Where every group seats the
whole league, the schedule hands each entrant every other as its partner in turn, and
the standings post-stratify each score by its partner: the mean of the partner strata's
means, each 1/(seats - 1) likely by the design, with a t-interval from the pooled
spread within strata on groups - (seats - 1) df (docs/league.md, "How sure the
intervals are").
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter

import attrs
import pytest
from duplicate_leagues import NAMES, entrants, in_table_order, league, predecessors
from hypothesis import given, settings
from hypothesis import strategies as st

from arena import seeding
from arena.cli import main
from arena.league.looks import ALPHA
from arena.league.report import league_report, ranking, separation
from arena.league.schedule import DUPLICATE_SCHEDULE, paired, pairing, schedule
from arena.league.standings import (
    Partners,
    SeatRow,
    Tables,
    head_to_head,
    partners,
    standings,
)
from arena.league.store import LeagueStore, StoreError


def partner_of(rows) -> dict[str, str]:
    """Whom each entrant of one group sits right after twice (rule 5's next position)."""
    found = {}
    for name, counts in predecessors(rows).items():
        (partner, twice), *rest = counts.most_common()
        assert twice == 2 and all(n == 1 for _, n in rest)  # a Williams group
        found[name] = partner
    return found


def test_the_round_robin_of_four_by_hand():
    # The circle method: 3 stays put, 0 1 2 stand on a circle; round r pairs r with 3
    # and r + 1 with r - 1 (mod 3):
    #   round 0: 0-3, 1-2      round 1: 1-3, 2-0      round 2: 2-3, 0-1
    # every two of the four meet once over the three rounds.
    assert pairing(4, 0) == [(0, 3), (1, 2)]
    assert pairing(4, 1) == [(1, 3), (2, 0)]
    assert pairing(4, 2) == [(2, 3), (0, 1)]
    assert pairing(2, 0) == [(0, 1)]


def test_a_small_paired_league_has_its_partners_by_hand():
    # The entrants by index: bayes 0, pressure 1, random 2, bayes#2 3. Table t's
    # partners are round t mod 3 above:
    #   table 0: bayes-bayes#2, pressure-random
    #   table 1: pressure-bayes#2, random-bayes
    #   table 2: random-bayes#2, bayes-pressure
    #   table 3: round 0 again
    fixtures = schedule(league(tables=4))
    by_table = [partner_of([f for f in fixtures if f.table == t]) for t in range(4)]
    bayes, pressure, random, twin = NAMES
    expected = [
        {bayes: twin, twin: bayes, pressure: random, random: pressure},
        {pressure: twin, twin: pressure, random: bayes, bayes: random},
        {random: twin, twin: random, bayes: pressure, pressure: bayes},
    ]
    assert by_table == [*expected, expected[0]]


def test_which_leagues_are_paired():
    # even seats, one entrant a seat, nobody twice at a table
    assert paired(4, 4, False) and paired(2, 2, False) and paired(6, 6, False)
    assert not paired(4, 5, False)  # a larger pool meets at only some tables
    assert not paired(4, 4, True)  # repeats
    assert not paired(3, 3, False) and not paired(5, 5, False)  # no single partner


@settings(max_examples=40, deadline=None)
@given(
    seats=st.sampled_from([2, 4, 6, 8]),
    seed=st.integers(0, 2**62),
    kind=st.sampled_from(["balanced", "random", "combinations"]),
    tables=st.integers(1, 15),
)
def test_partners_even_out_over_consecutive_groups(seats, seed, kind, tables):
    fixtures = schedule(league(seats, tables=tables, seed=seed, schedule=kind))
    groups = [partner_of([f for f in fixtures if f.table == t]) for t in range(tables)]
    names = sorted(groups[0])
    for name in names:
        taken = [group[name] for group in groups]
        # any seats - 1 consecutive groups give the entrant every other as its partner once
        for start in range(tables - seats + 2):
            window = taken[start : start + seats - 1]
            assert sorted(window) == sorted(n for n in names if n != name)
        # so over the league's groups the partners' counts differ by at most one
        counts = Counter(taken)
        spread = [counts[n] for n in names if n != name]
        assert max(spread) - min(spread) <= 1


def test_a_larger_pool_keeps_its_drawn_partners():
    # five entrants at four seats are not paired: each group is the square on its draw p
    # (the plain table's slots), row 0 seating p[w[i]] at table position i, w = 0 1 3 2
    five = league(entrants=entrants((*NAMES, "bayes#3")), tables=6)
    plain = schedule(attrs.evolve(five, duplicate=False))
    duplicate = schedule(five)
    for t, fixture in enumerate(plain):
        p = fixture.entrants
        row = next(f for f in duplicate if f.table == t)
        assert in_table_order(row) == [p[0], p[1], p[3], p[2]]


def ring_rows(seed: int, table: int, episode: int, rings: list[list[str]]) -> list[tuple]:
    """Stored seat rows (episode, table, seed, slot, entrant) that put each ring's entrants
    at table positions 0, 1, 2, 3 of the seed's table order."""
    order = seeding.table_order(seed, 4)
    rows = []
    for e, ring in enumerate(rings):
        for position, name in enumerate(ring):
            rows.append((episode + e, table, seed, order[position], name))
    return rows


WILLIAMS = [list("ABDC"), list("BCAD"), list("CDBA"), list("DACB")]
"""Williams' square on drawn entrants A B C D by table position (w = 0 1 3 2):
row r seats p[(r + w[i]) % 4] at position i."""


def test_partners_come_from_the_stored_seeds_and_slots():
    # By the square: A sits after C (row 0: A at 0, the ring wraps to C), C (row 1),
    # B (row 2) and D (row 3): C twice, A's partner. Likewise B after A, D, D, C: D.
    rows = ring_rows(5, 0, 0, WILLIAMS)
    # group 1 is cut short (three of its four episodes): no partner is known there
    rows += ring_rows(9, 1, 4, WILLIAMS[:3])
    # group 2 had a stand-in for D in its last row: D's own name sat three episodes
    stood = [[n if n != "D" else "D (stand-in)" for n in WILLIAMS[3]]]
    rows += ring_rows(13, 2, 7, WILLIAMS[:3] + stood)
    found = partners(rows, tuple("ABCD"))
    assert {name: found.of[0, name] for name in "ABCD"} == {"A": "C", "C": "A", "B": "D", "D": "B"}
    assert not any(table == 1 for table, _ in found.of)
    assert (2, "D") not in found.of
    # A's others are B C D: C is stratum 1; no partner, stratum -1
    assert found.stratum(0, "A") == 1 and found.stratum(1, "A") == -1


def group_rows(values: dict[str, list[float]]) -> list[SeatRow]:
    """Groups of four episodes in which each entrant scores its group's value each time."""
    return [
        SeatRow(4 * g + r, g, name, scores[g], 0)
        for name, scores in values.items()
        for g in range(len(scores))
        for r in range(4)
    ]


# A's partner B in groups 0 and 1, C in 2 and 3, D in 4 and 5 (the round robin)
PARTNERS = [("AB", "CD")] * 2 + [("AC", "BD")] * 2 + [("AD", "BC")] * 2


def hand_partners(groups: int) -> Partners:
    of = {}
    for g, pairs in enumerate(PARTNERS[:groups]):
        for x, y in pairs:
            of[g, x], of[g, y] = y, x
    return Partners(tuple("ABCD"), of)


A_SCORES = [0.50, 0.60, 0.40, 0.60, 0.70, 0.90]


def test_a_strat_t_interval_by_hand():
    # A by partner: B 0.50 0.60 (mean 0.55), C 0.40 0.60 (0.50), D 0.70 0.90 (0.80).
    # The figure: (0.55 + 0.50 + 0.80) / 3 = 0.616667. Within strata the residuals are
    # +-0.05, +-0.1, +-0.1: 2 (0.0025 + 0.01 + 0.01) = 0.045 over 6 - 3 = 3 df, s^2 = 0.015.
    # SE = sqrt(s^2 (1/2 + 1/2 + 1/2)) / 3 = sqrt(0.0225) / 3 = 0.05; t(0.975, 3) = 3.182446,
    # half = 0.159122: [0.457545, 0.775789].
    values = {"A": A_SCORES, **{n: [0.5] * 6 for n in "BCD"}}
    groups = Tables(range(6), duplicate=True, partners=hand_partners(6))
    a = next(s for s in standings(group_rows(values), groups) if s.entrant == "A")
    assert a.ci95 == pytest.approx((0.457545, 0.775789), abs=1e-6)
    assert (a.ci_method, a.ci_tables, a.ci_coverage) == ("strat-t", 6, "ok")
    assert a.to_json()["ciMethod"] == "strat-t"
    # every partner twice: the figure is the plain mean, 3.7 / 6
    assert a.mean_score == pytest.approx(0.616667, abs=1e-6)
    # B C D do not spread within their strata: a point
    b = next(s for s in standings(group_rows(values), groups) if s.entrant == "B")
    assert b.ci95 == pytest.approx((0.5, 0.5))


def test_five_paired_groups_show_the_partners_mean_their_interval_is_drawn_around():
    # Groups 0-4: B 0.50 0.60 (0.55), C 0.40 0.60 (0.50), D 0.70 (0.70): centre
    # 1.75 / 3 = 0.583333, where the plain mean is 2.8 / 5 = 0.56 (D's group counts once
    # and the others twice). The figure shown is the centre: a plain mean beside a
    # stratified interval could lie outside it.
    # SS 0.005 + 0.02 = 0.025 over 5 - 3 = 2 df, s^2 = 0.0125;
    # SE = sqrt(0.0125 (1/2 + 1/2 + 1)) / 3 = 0.052705, t(0.975, 2) = 4.302653,
    # half = 0.226770: [0.356564, 0.810103]. Five paired groups of four seats: ok.
    values = {"A": A_SCORES[:5], **{n: [0.5] * 5 for n in "BCD"}}
    groups = Tables(range(5), duplicate=True, partners=hand_partners(5))
    a = next(s for s in standings(group_rows(values), groups) if s.entrant == "A")
    assert a.mean_score == pytest.approx(0.583333, abs=1e-6)
    assert a.ci95 == pytest.approx((0.356564, 0.810103), abs=1e-6)
    assert (a.ci_method, a.ci_coverage) == ("strat-t", "ok")


def test_without_every_partner_the_t_interval_stands_in_and_is_marked():
    # Four groups: A's partner D never came (B twice, C twice), so strat-t cannot weigh
    # D's stratum: the t-interval over the 4 group means 0.5 0.6 0.4 0.6 (mean 0.525,
    # s = 0.095743, SE 0.047871, t(0.975, 3) = 3.182446: +-0.152348), under 10 groups.
    values = {"A": A_SCORES[:4], **{n: [0.5] * 4 for n in "BCD"}}
    groups = Tables(range(4), duplicate=True, partners=hand_partners(4))
    a = next(s for s in standings(group_rows(values), groups) if s.entrant == "A")
    assert a.ci95 == pytest.approx((0.372652, 0.677348), abs=1e-6)
    assert (a.ci_method, a.ci_coverage) == ("t", "too few tables")


def test_a_strat_t_head_to_head_by_hand():
    # A takes net 4, 8 | 0, 4 | -4, 0 points from B in groups 0-5, over 4 episodes of 10
    # deals: 40 deals a group, per deal 0.1 0.2 | 0 0.1 | -0.1 0, stratified by A's partner
    # (B, C, D): means 0.15, 0.05, -0.05, centre 0.05; residuals all +-0.05, SS 0.015 over
    # 3 df, s^2 = 0.005, SE = sqrt(0.005 x 1.5) / 3 = 0.028868, half 3.182446 x that =
    # 0.091870: [-0.041870, 0.141870].
    # B against A is stratified by B's partner (A, D, C in turn: others A C D give strata
    # 0 0 2 2 1 1): values -0.1 -0.2 | 0 -0.1 | 0.1 0, means -0.15 (A), 0.05 (C),
    # -0.05 (D): centre -0.05, the same spread: [-0.141870, 0.041870].
    nets = [4, 8, 0, 4, -4, 0]
    taken = [
        (4 * g, "A", "B", n) if n > 0 else (4 * g, "B", "A", -n) for g, n in enumerate(nets) if n
    ]
    seated = [(4 * g + r, g, name, 10) for g in range(6) for r in range(4) for name in "ABCD"]
    groups = Tables(range(6), duplicate=True, partners=hand_partners(6))
    cells = {(h.entrant, h.opponent): h for h in head_to_head(taken, seated, groups)}
    ab, ba = cells["A", "B"], cells["B", "A"]
    assert ab.per_deal == pytest.approx(0.05)  # the centre; 12 / 240 too, with six groups
    assert ba.per_deal == pytest.approx(-0.05)
    assert ab.ci95 == pytest.approx((-0.041870, 0.141870), abs=1e-6)
    assert ba.ci95 == pytest.approx((-0.141870, 0.041870), abs=1e-6)
    assert (ab.ci_method, ab.ci_coverage, ab.to_json()["ciMethod"]) == ("strat-t", "ok", "strat-t")


def run(tmp_path, name: str, pool: str, tables: int) -> dict:
    db = tmp_path / f"{name}.sqlite"
    args = ["--pool", pool, "--tables", str(tables), "--duplicate", "--deals", "4"]
    assert main(["league", "run", *args, "--seed", "3", "--db", str(db)]) == 0
    return league_report(db)


def test_a_paired_league_shows_strat_t_and_a_larger_pool_the_t(tmp_path):
    paired_five = run(tmp_path, "paired5", "bayes,pressure,random,bayes", 5)
    rows = paired_five["standings"] + paired_five["headToHead"]
    assert {(r["ciMethod"], r["ciCoverage"], r["ciTables"]) for r in rows} == {("strat-t", "ok", 5)}
    # four paired groups: strat-t can be drawn (strata 2 1 1, 1 df) but is marked
    paired_four = run(tmp_path, "paired4", "bayes,pressure,random,bayes", 4)
    rows = paired_four["standings"] + paired_four["headToHead"]
    assert {(r["ciMethod"], r["ciCoverage"]) for r in rows} == {("strat-t", "too few tables")}
    # five entrants at four seats: the partners are as drawn, so the t-interval
    pool = run(tmp_path, "pool", "bayes,pressure,random,bayes,bayes", 5)
    assert {r["ciMethod"] for r in pool["standings"] + pool["headToHead"]} == {"t"}


def test_a_league_seated_by_schedule_2_is_refused_in_one_line(tmp_path, capsys):
    args = ["--pool", ",".join(n.partition("#")[0] for n in NAMES), "--tables", "2"]
    args += ["--duplicate", "--deals", "4", "--seed", "11", "--db", str(tmp_path / "l.sqlite")]
    assert main(["league", "run", *args]) == 0
    with sqlite3.connect(tmp_path / "l.sqlite") as db:  # as the arena of schedule 2 stored it
        (text,) = db.execute("SELECT settings FROM league").fetchone()
        stored = json.loads(text) | {"duplicateSchedule": 2}
        db.execute("UPDATE league SET settings = ?", (json.dumps(stored, sort_keys=True),))
    capsys.readouterr()
    assert main(["league", "run", *args]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arena: error: ")
    assert "seated by duplicate schedule 2 (a Latin square with the partners as drawn)" in lines[0]
    assert f"by schedule {DUPLICATE_SCHEDULE}: play it again in a new file" in lines[0]
    # its standings still show, by the t-interval: its partners were not evened out
    report = league_report(tmp_path / "l.sqlite")
    assert {r["ciMethod"] for r in report["standings"]} == {"t"}


def test_other_settings_are_still_refused_as_other_settings(tmp_path):
    spec = league()
    LeagueStore(tmp_path / "l.sqlite").close()
    with sqlite3.connect(tmp_path / "l.sqlite") as db:
        stored = league(seed=12).settings() | {"duplicateSchedule": 2}
        db.execute("INSERT INTO league VALUES (?)", (json.dumps(stored, sort_keys=True),))
    store = LeagueStore(tmp_path / "l.sqlite")
    try:
        with pytest.raises(StoreError, match="other settings"):
            store.check(spec.settings())
    finally:
        store.close()


def test_a_paired_target_league_narrows_by_the_intervals_it_stopped_on(tmp_path):
    """The stop reads the standings (strat-t in a paired league); the report's narrowing
    must draw each look the same way, so its last look is the standings' half-widths."""
    db = tmp_path / "target.sqlite"
    args = ["--pool", "bayes,pressure,random,bayes", "--duplicate", "--deals", "4"]
    args += ["--tables", "40", "--target-ci", "0.2", "--seed", "3", "--db", str(db)]
    assert main(["league", "run", *args]) == 0
    report = league_report(db)
    shown = {s["entrant"]: (s["ci95"][1] - s["ci95"][0]) / 2 for s in report["standings"]}
    assert {s["ciMethod"] for s in report["standings"]} == {"strat-t"}
    last = report["narrowing"][-1]
    assert last["tables"] < 40  # it stopped at the target, before the cap
    assert last["halfWidth"] == pytest.approx(shown, abs=1e-12)
    assert max(shown.values()) <= 0.2


def test_separate_checks_the_pairs_of_the_ranking_the_standings_show():
    # Five paired groups: A's partner-weighted mean is 0.583333 (worked above) where its
    # plain mean is 0.56; B scores 0.57 every time, C 0.2 and D 0.1. The standings rank
    # A (0.583) over B (0.57); a ranking by plain means would put B first. --separate must
    # check the adjacent pairs of the ranking shown: A-B, B-C, C-D.
    values = {"A": A_SCORES[:5], "B": [0.57] * 5, "C": [0.2] * 5, "D": [0.1] * 5}
    seats = [(r.episode, r.table, r.entrant, r.score, 0, 10) for r in group_rows(values)]
    settings = {"tables": 5, "entrants": list("ABCD"), "targetCi": 0.05, "separate": True}
    partnered = hand_partners(5)
    shown = [s["entrant"] for s in ranking(seats, [], ALPHA, partnered)["standings"]]
    assert shown == ["A", "B", "C", "D"]
    pairs = [(p["higher"], p["lower"]) for p in separation(seats, settings, partnered)]
    assert pairs == [("A", "B"), ("B", "C"), ("C", "D")]
