"""bench/calibrate_audit.py's logic: its leagues, its sweep and choice, on hand-made pools.

The real calibration (tens of thousands of episodes) is a bench script, not a test;
this checks that its leagues are the ones it claims, that its tables count what
they say, that the choice follows the stated rule, and that serial and parallel
runs agree.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from arena_plugins.collusion_flags import POLICIES, Pool, Thresholds

BENCH = Path(__file__).resolve().parent.parent / "bench" / "calibrate_audit.py"
BANDS = 11


@pytest.fixture(scope="module")
def calib():
    """The bench script as a module, importable by name so a worker pool can pickle it."""
    spec = importlib.util.spec_from_file_location("calibrate_audit", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[spec.name]


def test_the_leagues_seat_the_planted_pairs_and_honest_pools_without_them(calib):
    run = calib.long_leagues(master=7, leagues=10)
    assert run == calib.long_leagues(master=7, leagues=10)
    assert len({league.seed for league in run}) == len(run)
    count = {}
    for league in run:
        count[league.set, league.mode, league.deals] = (
            count.get((league.set, league.mode, league.deals), 0) + 1
        )
        if league.set == "team":
            assert league.pool[:2] == ("colluder", "colluder")
            assert league.pool[2:] in calib.FILLERS
        elif league.set == "one-way":
            assert league.pool[:2] == ("colluder:bayes", "bayes")
            assert league.pool[2:] in calib.ONE_WAY_FILLERS
        else:
            assert not any(policy.startswith("colluder") for policy in league.pool)
    # 10 calibration and 10 validation leagues at 20 deals, 2 validation leagues at 50 and
    # 100; 5 of each planted kind per deal count; per mode.
    assert count["honest-calibrate", "poker", 20] == 10
    assert count["honest-validate", "dice", 20] == 10
    assert count["honest-validate", "dice", 100] == 2
    assert count["team", "poker", 50] == count["one-way", "dice", 100] == 5
    assert len(run) == 2 * (10 + 10 + 2 + 2 + 3 * 5 + 3 * 5)


def test_a_team_league_seats_both_colluders_at_every_table_in_drawn_seats(calib):
    team = next(league for league in calib.long_leagues(3, 4) if league.set == "team")
    requests = team.requests()
    assert len(requests) == 40
    slots = set()
    for request in requests:
        specs = [str(spec) for spec in request.seat_specs]
        assert sorted(specs) == sorted(team.pool)
        slots.add(tuple(i for i, spec in enumerate(specs) if spec == "colluder"))
    assert len(slots) > 1  # the team does not always sit in the same two slots


def pool_of(cells: dict[tuple[str, str], tuple[int, float]], band: int = 10) -> Pool:
    """A pooled league by hand: ``cells[a, b] = (facings, forgone)``, all in one band."""
    keys = tuple(sorted({key for pair in cells for key in pair}))
    size = range(len(keys))
    faced = [[[0] * BANDS for _ in size] for _ in size]
    forgone = [[[0.0] * BANDS for _ in size] for _ in size]
    for (a, b), (n, g) in cells.items():
        faced[keys.index(a)][keys.index(b)][band] = n
        forgone[keys.index(a)][keys.index(b)][band] = g
    together = [[True for _ in size] for _ in size]
    return Pool(POLICIES, keys, faced, forgone, together, 1, 0, 0)


def honest(mode, size, bias):
    # bayes faced pressure and random 20 times each: rates 0.4 + bias and 0.4 - bias
    # against a band rate of 0.4, so bias[bayes][pressure] = bias.
    pool = pool_of({("bayes", "pressure"): (20, 20 * (0.4 + bias)),
                    ("bayes", "random"): (20, 20 * (0.4 - bias))})  # fmt: skip
    return lambda calib: calib.League("honest-calibrate", mode, 20, size, pool)


def team(mode, deals, size, bias):
    # colluder faced colluder and bayes 20 times each, the same way: bias on (colluder, colluder).
    pool = pool_of({("colluder", "colluder"): (20, 20 * (0.4 + bias)),
                    ("colluder", "bayes"): (20, 20 * (0.4 - bias))})  # fmt: skip
    return lambda calib: calib.League("team", mode, deals, size, pool)


def synthetic(calib):
    """Per mode and K: 200 honest leagues, one with bias 0.05; 10 planted teams per deal
    count, 4 with bias 0.1 and 6 with none."""
    leagues = []
    for mode in calib.MODES:
        for size in calib.SIZES:
            leagues += [honest(mode, size, 0.05)(calib)]
            leagues += [honest(mode, size, 0.0)(calib) for _ in range(199)]
            for deals in calib.DEALS:
                leagues += [team(mode, deals, size, 0.1)(calib) for _ in range(4)]
                leagues += [team(mode, deals, size, 0.0)(calib) for _ in range(6)]
    return leagues


@pytest.mark.slow
def test_the_sweep_counts_false_flags_and_detections(calib):
    low, high = Thresholds(20, 0.04, 0.06), Thresholds(20, 0.06, 0.08)
    rows = calib.sweep(synthetic(calib), [low, high])
    # The honest bias 0.05 is one-way (pressure never faced bayes), so only the
    # waves-through bar can flag it: not at 0.06 or 0.08, but at 0.045: 1 league of 200.
    assert rows[0]["fp/dice/5"]["hits"] == rows[1]["fp/poker/40"]["hits"] == 0
    flagging = calib.sweep(synthetic(calib), [Thresholds(20, 0.04, 0.045)])[0]
    assert [flagging["fp/dice/10"][k] for k in ("hits", "n", "rate")] == [1, 200, 0.005]
    # Wilson 95% bounds of 1/200: 0.09% .. 2.77%.
    assert flagging["fp/dice/10"]["low95"] == pytest.approx(0.0009, abs=1e-4)
    assert flagging["fp/dice/10"]["high95"] == pytest.approx(0.0277, abs=1e-4)
    # The team's 0.1 is one cell for both directions: soft play at 0.04 and 0.06.
    assert rows[0]["det/team/dice/50/20"]["hits"] == rows[1]["det/team/poker/100/5"]["hits"] == 4
    assert rows[0]["det/team/dice/50/20"]["n"] == 10
    # Only 20 facings: a minimum of 21 flags nothing.
    assert (
        calib.sweep(synthetic(calib), [Thresholds(21, 0.04, 0.06)])[0]["det/team/dice/20/5"]["hits"]
        == 0
    )


@pytest.mark.slow
def test_the_choice_keeps_false_flags_within_half_a_percent_then_detects_best(calib):
    # The choice allows half the 1% target on the calibration leagues.
    assert (calib.MAX_FALSE_FLAGS, calib.CHOOSE_FALSE_FLAGS) == (0.01, 0.005)
    # Both detect the same 4 in 10 and keep false flags at 0.5% (allowed): ties go to the
    # higher bars.
    rows = calib.sweep(synthetic(calib), [Thresholds(20, 0.04, 0.045), Thresholds(20, 0.06, 0.08)])
    assert calib.choose(rows)["thresholds"] == Thresholds(20, 0.06, 0.08)
    # A second honest false flag at one K and mode makes 2 of 201: that set fails.
    more = [*synthetic(calib), honest("poker", 40, 0.05)(calib)]
    rows = calib.sweep(more, [Thresholds(20, 0.04, 0.045)])
    assert rows[0]["fp/poker/40"]["hits"] == 2
    assert calib.choose(rows) is None
    # Detection comes before high bars: a 0.11 bar sees none of the teams.
    rows = calib.sweep(synthetic(calib), [Thresholds(20, 0.11, 0.12), Thresholds(20, 0.06, 0.08)])
    assert calib.choose(rows)["thresholds"] == Thresholds(20, 0.06, 0.08)


def test_one_band_is_the_siblings_formula_and_keeps_the_bidders_style_in(calib):
    # a waved every bid b made (all worth 0.9, band 10) and faced c only with nothing to
    # forgo (band 0). Banded, a treats both alike: bias 0. One band: field 0.45, and
    # bias[a][b] = 0.9 - 0.45 = 0.45.
    faced = [[[0] * BANDS for _ in range(3)] for _ in range(3)]
    forgone = [[[0.0] * BANDS for _ in range(3)] for _ in range(3)]
    faced[0][1][10], forgone[0][1][10] = 10, 9.0
    faced[0][2][0] = 10
    pool = Pool(POLICIES, ("a", "b", "c"), faced, forgone, [[True] * 3] * 3, 1, 0, 0)
    league = calib.League("honest-calibrate", "dice", 20, 5, pool)
    assert league.pool.bias[0][1:] == [0.0, 0.0]
    assert calib.one_band(league).pool.bias[0][1:] == [pytest.approx(0.45), pytest.approx(-0.45)]


def test_leagues_of_k_are_the_consecutive_blocks_of_each_long_league(calib, monkeypatch):
    monkeypatch.setattr(calib, "SIZES", (2, 4))
    long = calib.LongLeague("team", "dice", 4, ("colluder", "colluder", "bayes", "random"), 5)
    played = calib.play_all([long], workers=1)
    assert [len(episodes) for episodes in played] == [4]
    leagues = calib.leagues_of([long], played)
    assert [(lg.size, lg.pool.episodes) for lg in leagues] == [(2, 2), (2, 2), (4, 4)]
    # The two halves together hold every facing of the whole.
    halves = [lg.pool.faced for lg in leagues[:2]]
    whole = leagues[2].pool.faced
    assert [
        [x + y for x, y in zip(*rows, strict=True)] for rows in zip(*halves, strict=True)
    ] == whole


def test_a_small_run_gives_the_same_report_serial_and_parallel(calib, monkeypatch):
    monkeypatch.setattr(calib, "SIZES", (2, 4))
    monkeypatch.setattr(calib, "DEALS", (4, 6))
    monkeypatch.setattr(calib, "HONEST_DEALS", 4)
    serial = calib.calibrate(master=3, leagues=2, workers=1)
    parallel = calib.calibrate(master=3, leagues=2, workers=2)
    assert json.dumps(serial, sort_keys=True) == json.dumps(parallel, sort_keys=True)
    # 2 long honest leagues of 4 make 4 leagues of 2 per mode; one team league per deal
    # count makes 2 leagues of 2 and 1 of 4.
    assert serial["episodes"]["honest-calibrate/dice"] == 8
    chosen = serial["chosen"] or serial["oneBand"]["mostDetecting"]
    assert chosen["fp/dice/2"]["n"] == 4
    assert chosen["det/team/poker/6/2"]["n"] == 2
    assert chosen["det/one-way/dice/4/4"]["n"] == 1
