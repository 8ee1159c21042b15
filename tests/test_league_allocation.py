"""A ``--target-ci`` league of more entrants than seats allocates its rounds
(arena.league.allocation): by need per dollar, from the rounds before only, resumable."""

from __future__ import annotations

import math
import sqlite3

import attrs
import pytest
from league_runs import play, play_until_interrupted

from arena.league.allocation import FLOOR_USD, Evidence, allocated_draws, stored_evidence
from arena.league.config import LeagueSpec, pool_entrants
from arena.league.report import league_report, report_tables
from arena.league.schedule import fixtures
from arena.runner import EpisodeRequest
from arena.seats import SeatSpec

SIX = pool_entrants(SeatSpec.parse(n) for n in ("bayes", "pressure", "random") * 2)
FOUR = pool_entrants(SeatSpec.parse(n) for n in ("bayes", "pressure", "random", "bayes"))
# 12 tables of 6 entrants: rounds of max(6, ceil(1.2)) = 6 tables, 2 looks
LEAGUE = LeagueSpec(SIX, tables=12, seed=3, table=EpisodeRequest(deals=4), target_ci=0.05)


def test_need_by_hand():
    # half-width 0.06 over 40 tables, target 0.03: it shrinks as 1 / sqrt(n), so it needs
    # n' = 40 * (0.06 / 0.03)^2 = 160 tables, 120 more
    assert Evidence(0.06, 40, 0.0).need(0.03) == pytest.approx(120)
    assert Evidence(0.02, 40, 0.0).need(0.03) == 0  # within the target already
    assert Evidence(0.5, 0, 0.0).need(0.03) == math.inf  # never seated: nothing known
    # a scripted seat costs nothing; the floor keeps need / cost defined
    assert Evidence(0.06, 40, 0.0).cost == FLOOR_USD
    assert Evidence(0.06, 40, 0.25).cost == 0.25


def _evidence(needs: dict[str, float], costs: dict[str, float], calls: list[int]):
    """Evidence whose need (at target 0.05) is ``needs``: half-width 0.05 sqrt(1 + need / 10)
    over 10 tables."""

    def known(table: int) -> dict[str, Evidence]:
        calls.append(table)
        return {
            name: Evidence(0.05 * math.sqrt(1 + need / 10), 10, costs.get(name, 0.0))
            for name, need in needs.items()
        }

    return known


def test_the_neediest_per_dollar_sit_first_and_the_rest_fill_by_cost():
    calls: list[int] = []
    # pressure needs 20 more tables, random 3, bayes 10 but at $1 a table; the rest none.
    # Per dollar: pressure 20 / 1e-6, random 3 / 1e-6, bayes 10 / 1: all three sit at each
    # table while their need lasts, then the fillers, cheapest first: bayes#2 ($0.5) never,
    # while pressure#2, random#2 and (its need spent) random (floor) take turns.
    needs = {"pressure": 20, "random": 3, "bayes": 10, "bayes#2": 0, "pressure#2": 0}
    costs = {"bayes": 1.0, "bayes#2": 0.5}
    draws = list(allocated_draws(LEAGUE, _evidence(needs | {"random#2": 0}, costs, calls)))
    assert calls == [6]  # once, at the second round's start: from tables 0..5 only
    names = [e.name for e in SIX]
    second = [{names[e] for e in picks} for picks, _ in draws[6:]]
    for table, seated in enumerate(second):
        assert len(seated) == 4 and {"pressure", "bayes"} <= seated
        if table < 3:  # random's need of 3 lasts three tables, one filler seat left
            assert "random" in seated and len(seated & {"pressure#2", "random#2"}) == 1
        else:  # two filler seats, never the dear one
            assert seated - {"pressure", "bayes"} < {"random", "pressure#2", "random#2"}


def test_the_first_round_is_the_balanced_schedule_and_seeds_are_its_own():
    balanced = list(fixtures(attrs.evolve(LEAGUE, target_ci=None)))
    allocated = list(fixtures(LEAGUE, allocated_draws(LEAGUE, _evidence({}, {}, []))))
    # table t deals the same cards either way: its seed comes from the same stream
    assert [f.request.seed for f in allocated] == [f.request.seed for f in balanced]
    # round one (tables 0..5) seats whoever has played least, as balanced does
    for mine, theirs in zip(allocated[:6], balanced[:6], strict=True):
        assert set(mine.entrants) == set(theirs.entrants)


def test_four_entrants_at_four_seats_are_seated_exactly_as_before():
    spec = LeagueSpec(FOUR, tables=40, seed=2, target_ci=0.05)
    assert not spec.allocates and "allocation" not in spec.settings()
    needs = {"random": 50, "bayes": 0, "pressure": 3, "bayes#2": 9}
    allocated = list(fixtures(spec, allocated_draws(spec, _evidence(needs, {}, []))))
    assert allocated == list(fixtures(attrs.evolve(spec, target_ci=None)))


def test_allocation_is_stored_in_the_settings_only_where_it_applies():
    assert LEAGUE.allocates and LEAGUE.settings()["allocation"] == 1
    assert "allocation" not in attrs.evolve(LEAGUE, target_ci=None).settings()


def _tables(path) -> list[tuple]:
    with sqlite3.connect(path) as db:
        episodes = db.execute("SELECT idx, tbl, seed, results FROM episodes ORDER BY idx")
        seats = db.execute("SELECT idx, slot, entrant FROM seats ORDER BY idx, slot")
        return [list(episodes), list(seats)]


SPREAD = LeagueSpec(SIX, tables=120, seed=5, table=EpisodeRequest(deals=6), target_ci=0.06)


def test_an_allocated_league_resumes_to_the_same_tables(tmp_path, host):
    whole = tmp_path / "whole.sqlite"
    state = play(whole, SPREAD, host)
    assert state.stopped == "target" and state.done < SPREAD.tables

    broken = tmp_path / "broken.sqlite"
    play_until_interrupted(broken, SPREAD, host, 32)  # inside the sixth round of 6 (30 to 35)
    assert 32 <= len(_tables(broken)[0]) < len(_tables(whole)[0])
    play(broken, SPREAD, host)
    assert _tables(broken) == _tables(whole)


def test_a_round_goes_to_the_entrants_that_need_it(tmp_path, host):
    spec = LeagueSpec(SIX, tables=200, seed=5, table=EpisodeRequest(deals=10), target_ci=0.04)
    path = tmp_path / "allocated.sqlite"
    play(path, spec, host)
    # rounds of max(6 entrants, 200 / 40) = 6 tables; the second (tables 6..11) is seated
    # from the first's results
    assert spec.round_tables == 6
    need = {name: e.need(0.04) for name, e in stored_evidence(path, 6, 0.05).items()}
    with sqlite3.connect(path) as db:
        seated = dict(
            db.execute(
                "SELECT s.entrant, COUNT(*) FROM seats s JOIN episodes e USING (idx)"
                " WHERE e.tbl BETWEEN 6 AND 11 GROUP BY s.entrant"
            )
        )
    # 6 tables x 4 seats = 24 seats: the four neediest each need more than 6 tables, so
    # each takes a seat at every table of the round and the two others sit at none
    neediest = sorted(need, key=need.get, reverse=True)[:4]
    assert all(need[name] > 6 for name in neediest)
    assert seated == dict.fromkeys(neediest, 6)


def test_league_show_says_an_allocated_mean_is_against_the_opponents_met(tmp_path, host):
    # bench/stopping.py: an allocated league's intervals cover the mean against the mix
    # of opponents its rounds chose (96.9%), not a balanced schedule's (71.9%)
    allocated, plain = tmp_path / "allocated.sqlite", tmp_path / "plain.sqlite"
    play(allocated, LEAGUE, host)
    play(plain, attrs.evolve(LEAGUE, entrants=FOUR), host)
    shown = report_tables(league_report(allocated), "allocated.sqlite")[0].title
    assert "mean episode score against the opponents it met (allocated rounds)," in shown
    assert "opponents it met" not in report_tables(league_report(plain), "plain.sqlite")[0].title


def test_a_need_under_one_table_is_spent_at_its_first_seat():
    # pressure needs 0.6 of a table, the rest nothing. Round one (tables 0..5) seats each
    # of the six entrants 4 times (24 seats). At table 6 pressure sits first, by need; its
    # need then drops to max(0, 0.6 - 1) = 0, and from table 7 every seat goes to the
    # least played: 48 seats over six entrants, 8 each, so pressure sits at 4 of the
    # round's 6 tables. Were its need never spent, it would sit at all 6
    needs = dict.fromkeys((e.name for e in SIX), 0.0) | {"pressure": 0.6}
    draws = list(allocated_draws(LEAGUE, _evidence(needs, {}, [])))
    names = [e.name for e in SIX]
    second = [{names[e] for e in picks} for picks, _ in draws[6:]]
    assert "pressure" in second[0]
    assert sum("pressure" in seated for seated in second) == 4


def test_stored_evidence_is_the_standings_half_width(tmp_path, host):
    # the allocation's half-widths are the standings' own: over the same tables, at the
    # same level, each entrant's (high - low) / 2 of league show's ci95, with its tables
    # and its cost per table (a scripted league costs nothing)
    spec = attrs.evolve(LEAGUE, target_ci=None, tables=12)
    path = tmp_path / "balanced.sqlite"
    play(path, spec, host)
    shown = {row["entrant"]: row for row in league_report(path)["standings"]}
    evidence = stored_evidence(path, spec.tables, 0.05)
    assert set(evidence) == set(shown)
    for name, found in evidence.items():
        low, high = shown[name]["ci95"]
        assert found.half_width == pytest.approx((high - low) / 2, rel=1e-12)
        assert 0 < found.half_width < 1
        assert found.tables == 8  # 12 tables x 4 seats over 6 entrants
        assert found.usd_per_table == 0
