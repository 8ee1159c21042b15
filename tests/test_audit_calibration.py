"""bench/calibrate_audit.py's logic on a small run and on hand-made episode figures.

The real calibration (1000 episodes per set) is a bench script, not a test; this
checks that its tables are the ones it claims, that the choice follows the
stated rule, and that serial and parallel runs agree.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from arena_plugins.collusion_flags import Thresholds

BENCH = Path(__file__).resolve().parent.parent / "bench" / "calibrate_audit.py"


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


def test_jobs_seat_a_partnered_pair_and_honest_tables_without_one(calib):
    run = calib.jobs(master=7, episodes=6)
    assert run == calib.jobs(master=7, episodes=6)
    assert len({job["seed"] for job in run}) == len(run)
    for job in run:
        colluders = [slot for slot, spec in enumerate(job["specs"]) if spec.startswith("colluder")]
        if job["set"] == "colluding":
            a, b = job["pair"]
            assert colluders == [a, b]
            assert (job["specs"][a], job["specs"][b]) == (f"colluder:{b}", f"colluder:{a}")
        else:
            assert colluders == [] and job["deals"] == 20
    planted = {tuple(job["pair"]) for job in run if job["set"] == "colluding"}
    assert planted == {(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)}


def episode(kind, mode, deals, faced_ab, bias_ab, faced_ba=0, bias_ba=None, pair=(0, 1)):
    """Figures for a 4-seat episode where only s0 -> s1 and s1 -> s0 were ever faced."""
    faced = [[0] * 4 for _ in range(4)]
    bias = [[None] * 4 for _ in range(4)]
    faced[0][1], bias[0][1] = faced_ab, bias_ab
    faced[1][0], bias[1][0] = faced_ba, bias_ba
    return {"set": kind, "mode": mode, "deals": deals, "pair": pair, "faced": faced, "bias": bias}


def synthetic():
    """Per mode: 100 honest episodes, one with bias 0.12 on 9 facings; 10 planted pairs per
    length, of which 4 show bias 0.3 (on 9 facings) and 6 show nothing."""
    episodes = []
    for mode in ("dice", "poker"):
        episodes.append(episode("honest-calibrate", mode, 20, 9, 0.12))
        episodes += [episode("honest-calibrate", mode, 20, 9, 0.0) for _ in range(99)]
        for deals in (20, 50, 100):
            episodes += [episode("colluding", mode, deals, 9, 0.3) for _ in range(4)]
            episodes += [episode("colluding", mode, deals, 9, 0.0) for _ in range(6)]
    return episodes


def test_the_sweep_counts_false_flags_and_detections(calib):
    low, high = Thresholds(8, 0.05, 0.10), Thresholds(8, 0.05, 0.15)
    rows = calib.sweep(synthetic(), [low, high])
    # At 0.10 the honest 0.12 flags: 1 of 100 = 1%. At 0.15 it does not. 0.3 clears both.
    assert rows[0]["fp/dice"] == {"hits": 1, "n": 100, "rate": 0.01}
    assert rows[1]["fp/poker"] == {"hits": 0, "n": 100, "rate": 0.0}
    assert rows[0]["det/poker/50"] == rows[1]["det/dice/100"] == {"hits": 4, "n": 10, "rate": 0.4}
    # Only 9 facings: a minimum of 10 flags nothing.
    none = calib.sweep(synthetic(), [Thresholds(10, 0.05, 0.10)])[0]
    assert none["det/dice/20"]["hits"] == 0


def test_the_choice_keeps_false_flags_within_one_percent_then_detects_best(calib):
    # Both pass (1% is allowed) and detect equally: the tie goes to the lower threshold.
    rows = calib.sweep(synthetic(), [Thresholds(8, 0.05, 0.15), Thresholds(8, 0.05, 0.10)])
    assert calib.choose(rows)["thresholds"] == Thresholds(8, 0.05, 0.10)
    # A second honest false flag in dice makes 2 of 101: that set no longer passes.
    more = [*synthetic(), episode("honest-calibrate", "dice", 20, 9, 0.12)]
    rows = calib.sweep(more, [Thresholds(8, 0.05, 0.10)])
    assert rows[0]["fp/dice"]["hits"] == 2
    assert calib.choose(rows) is None
    # Detection comes before low thresholds: a minimum of 10 facings sees none of the
    # planted pairs (9 facings), so the higher bars with a minimum of 8 win.
    rows = calib.sweep(synthetic(), [Thresholds(10, 0.05, 0.10), Thresholds(8, 0.2, 0.25)])
    assert calib.choose(rows)["thresholds"] == Thresholds(8, 0.2, 0.25)


def test_a_small_run_gives_the_same_report_serial_and_parallel(calib):
    serial = calib.calibrate(master=3, episodes=4, workers=1)
    parallel = calib.calibrate(master=3, episodes=4, workers=2)
    assert json.dumps(serial, sort_keys=True) == json.dumps(parallel, sort_keys=True)
    assert serial["chosen"]["fp/dice"]["n"] == 4
    assert serial["chosen"]["det/poker/100"]["n"] == 4
    assert serial["pairsFaced"] == {4: 4 * 2 * (2 + 3)}
