"""``arena compare``: the paired interval by hand, the pairing, stopping, the CLI, Claude seats."""

from __future__ import annotations

import json

import pytest
from claude_tables import api, offline  # noqa: F401  (offline autouse; api serves loopback)
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.cli import main
from arena.league.compare import (
    Comparison,
    Pair,
    at_stop,
    compare,
    looks_allowed,
    seating,
    stop_reason,
)
from arena.league.config import LeagueError
from arena.league.looks import look_ends
from arena.league.standings import paired_interval
from arena.runner import EpisodeRequest
from arena.seats import SeatSpec

BAYES, RANDOM, PRESSURE = SeatSpec("bayes"), SeatSpec("random"), SeatSpec("pressure")
TABLE = EpisodeRequest(deals=6)


def test_paired_interval_by_hand():
    # d = 0.1, 0.3, 0.2, 0.4: mean 0.25; deviations -0.15, 0.05, -0.05, 0.15, squares sum
    # 0.05; s^2 = 0.05 / 3 = 0.016667, s = 0.129099; se = s / sqrt(4) = 0.064550.
    # t(0.975, 3 df) = 3.182446 -> half = 0.205427 -> [0.044573, 0.455427].
    low, high = paired_interval([0.1, 0.3, 0.2, 0.4])
    assert low == pytest.approx(0.044573, abs=1e-6)
    assert high == pytest.approx(0.455427, abs=1e-6)


def test_paired_interval_at_a_look_s_smaller_level():
    # The same pairs at alpha 0.025: t(0.9875, 3 df) = 4.176535,
    # half = 4.176535 * 0.0645497 = 0.269594 -> [-0.019594, 0.519594]: now it holds 0.
    low, high = paired_interval([0.1, 0.3, 0.2, 0.4], alpha=0.025)
    assert low == pytest.approx(-0.019594, abs=1e-6)
    assert high == pytest.approx(0.519594, abs=1e-6)


def test_looks_are_rounds_of_a_tenth_of_the_cap():
    # cap 40 in rounds of 4 pairs: 10 looks; cap 100: rounds of 10 (a tenth), 10 looks;
    # cap 21: rounds of max(4, ceil(2.1)) = 4, ceil(21 / 4) = 6 looks; no target: one look
    assert looks_allowed(40, 4, 0.03) == (4, 10)
    assert looks_allowed(100, 4, 0.03) == (10, 10)
    assert looks_allowed(21, 4, 0.03) == (4, 6)
    assert looks_allowed(20, 4, None) == (20, 1)


def test_seating_rotates_the_compared_seat_and_keeps_the_opponents():
    # table 0: subject at slot 0, then bayes, pressure, bayes; table 6 of 4 seats: slot 2
    assert seating(RANDOM, (BAYES, PRESSURE), 4, 0) == (0, (RANDOM, BAYES, PRESSURE, BAYES))
    assert seating(RANDOM, (BAYES, PRESSURE), 4, 6) == (2, (BAYES, PRESSURE, RANDOM, BAYES))


def test_bayes_beats_random(host):
    result = compare(host, BAYES, RANDOM, TABLE, tables=8)
    assert result.tables == 8
    assert result.ci95[0] > 0
    assert result.verdict() == "A is better"
    assert result.stopped == "cap"


def test_swapping_a_and_b_negates_the_difference(host):
    # the twins are the same tables: B - A is exactly -(A - B), pair by pair
    ab = compare(host, BAYES, RANDOM, TABLE, tables=4, seed=3)
    ba = compare(host, RANDOM, BAYES, TABLE, tables=4, seed=3)
    assert [p.a_score for p in ab.pairs] == [p.b_score for p in ba.pairs]
    assert ba.difference == pytest.approx(-ab.difference)
    assert ba.verdict() == "B is better"


def test_a_seat_against_itself_plays_identically_and_plays_on_to_the_cap(host):
    # bayes is deterministic, so each twin plays the same episode: every pair differs by
    # exactly 0. The interval [0, 0] has no width that says how sure it is, so a target
    # of 0.05 does not stop the run: all 12 tables are played (3 looks of 4), and the
    # verdict says the two played identically
    result = compare(host, BAYES, BAYES, TABLE, tables=12, target=0.05)
    assert result.tables == 12
    assert result.stopped == "cap"
    assert result.ci95 == (0.0, 0.0)
    assert result.verdict() == "A and B played identically: the same score at every table"


def test_no_figure_prints_as_a_negative_zero(capsys):
    # bayes against itself: every difference is 0.0 - 0.0, and a -0.0 anywhere (the mean,
    # an interval's end, the verdict's bound) would print as "-0.0000"
    assert main(["compare", "bayes", "bayes", "--tables", "8", "--deals", "2"]) == 0
    out, err = capsys.readouterr()
    assert "A - B = +0.0000  95% interval [+0.0000, +0.0000]" in out
    assert "-0.0" not in out + err


def test_a_zero_width_look_is_never_a_reason_to_stop():
    # [0.2, 0.2]: half-width 0 <= any target, and it excludes 0; with no spread it stops
    # neither way. With spread, the same interval would stop on the target
    assert stop_reason(0.2, 0.2, 8, 0.05, spread=False) == "cap"
    assert stop_reason(0.0, 0.0, 8, 0.05, spread=False) == "cap"
    assert stop_reason(0.2, 0.2, 8, 0.05, spread=True) == "target"
    assert stop_reason(0.1, 0.3, 8, 0.05, spread=True) == "excludes 0"


@settings(max_examples=60, deadline=None)
@given(
    differences=st.lists(
        st.sampled_from([-0.5, -0.25, -0.1, 0.0, 0.0, 0.1, 0.25, 0.5]), min_size=1, max_size=40
    ),
    round_size=st.integers(1, 10),
)
def test_every_stop_gets_a_finite_interval_and_a_verdict(differences, round_size):
    # any differences a run can produce (ties, all equal, one pair, a stop at the cap),
    # in any rounds: the interval at the stop is finite, inside [-1, 1], and the verdict
    # never shows a negative zero
    pairs = tuple(Pair(i, 0, d, 0.0, 0.0, 0) for i, d in enumerate(differences))
    ends = look_ends(len(pairs), round_size)
    low, high = at_stop(pairs, ends)
    assert -1 <= low <= high <= 1
    result = Comparison("a", "b", pairs, 0.0, (low, high), len(ends), 0.05, 0.02, "cap")
    assert "-0.000" not in result.verdict()


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(30))
def test_thirty_seeded_target_runs_of_bayes_against_pressure_reach_a_verdict(host, seed):
    # the CLI's defaults (20 deals, a cap of 20 tables) at --target-ci 0.02: most runs
    # reach the cap, where 5 of 30 crashed on a NaN from the stage-wise interval before
    result = compare(host, BAYES, PRESSURE, EpisodeRequest(deals=20), target=0.02, seed=seed)
    low, high = result.ci95
    assert -1 <= low <= result.difference <= high <= 1
    assert result.verdict()


def test_target_stops_after_a_round_before_the_cap(host):
    # bayes vs random differs by ~0.4 (test above), so a 0.2 target or "excludes 0" is met
    # within a few rounds of 4 tables, well before the cap of 40
    result = compare(host, BAYES, RANDOM, TABLE, tables=40, target=0.2)
    assert result.stopped in ("target", "excludes 0")
    assert result.tables % 4 == 0 and result.tables < 40
    assert result.looks == 10  # 40 tables in rounds of 4
    # it stopped on the look's interval at Pocock's level, and the stage-wise interval
    # it reports agrees: it stopped on "excludes 0" only if 0 lies below the interval
    if result.stopped == "excludes 0":
        assert result.ci95[0] > 0


def test_same_seed_same_pairs(host):
    first = compare(host, PRESSURE, RANDOM, TABLE, tables=3, seed=9)
    again = compare(host, PRESSURE, RANDOM, TABLE, tables=3, seed=9)
    other = compare(host, PRESSURE, RANDOM, TABLE, tables=3, seed=10)
    assert first == again
    assert first.pairs != other.pairs


def test_json_shape(capsys):
    assert main(["compare", "bayes", "random", "--deals", "4", "--tables", "4", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    keys = ["a", "b", "ci95", "cost", "difference", "stopped", "tables", "unpriced", "verdict"]
    assert sorted(data) == keys
    assert data["unpriced"] == []  # no model called: nothing left out of the cost
    assert (data["a"], data["b"], data["tables"], data["cost"]) == ("bayes", "random", 4, 0.0)
    assert (data["stopped"], data["verdict"]) == ("cap", "A is better")  # bayes by +0.4
    low, high = data["ci95"]
    assert low <= data["difference"] <= high


def test_text_output_names_the_verdict(capsys):
    assert main(["compare", "bayes", "random", "--deals", "6", "--tables", "8"]) == 0
    out = capsys.readouterr().out
    assert "A - B = +" in out and "8 tables" in out
    assert out.rstrip().endswith("A is better")


@pytest.mark.parametrize(
    "argv",
    [
        ["compare", "bayes", "nosuch"],
        ["compare", "bayes,random", "pressure"],
        ["compare", "bayes", "random", "--tables", "1"],
        ["compare", "bayes", "random", "--target-ci", "0"],
        ["compare", "bayes", "random", "--target-ci", "nan"],
        ["compare", "bayes", "random", "--opponents", "human"],
        ["compare", "claude:honest", "bayes"],  # no key: Claude would be played by bayes
        ["compare", "bayes"],
    ],
)
def test_bad_input_is_one_line(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        code = main(argv)
        raise SystemExit(code)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("arena: error: ") and err.count("\n") == 1


def test_a_keyless_claude_seat_plays_as_a_stand_in_when_allowed(capsys):
    # the refusal names --allow-stand-in, and compare takes it: Claude is then played by
    # bayes, so claude:honest against bayes is bayes against its twin, exactly 0 at each pair
    assert main(["compare", "claude:honest", "bayes", "--tables", "4", "--deals", "3"]) == 2
    assert "--allow-stand-in" in capsys.readouterr().err
    argv = ["compare", "claude:honest", "bayes", "--tables", "4", "--deals", "3", "--json"]
    assert main([*argv, "--allow-stand-in"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["tables"], shown["difference"], shown["cost"]) == (4, 0.0, 0.0)
    assert main(argv[:-1] + ["--allow-stand-in"]) == 0  # the text names the stand-in
    assert "A = claude:honest (stand-in), B = bayes\n" in capsys.readouterr().out


def test_a_target_draws_each_look_at_pocock_s_level(host):
    # cap 40 in rounds of 4: ten equal looks, Pocock's c = 2.555 (Jennison & Turnbull,
    # table 2.1), so each look at 2 * (1 - Phi(2.555)) = 0.0106, not Bonferroni's 0.005
    seen = []
    result = compare(host, BAYES, PRESSURE, TABLE, tables=40, target=0.001, progress=seen.append)
    assert result.looks == 10 and result.stopped == "cap"
    assert result.look_alpha == pytest.approx(0.0106, abs=3e-4)
    # each look before the stop shows the interval the stop is decided on, at that level
    # (the level itself held to the table above; at 4 pairs, 3 df, an end moves by 4e-4
    # between alpha 0.0106 and scipy 1.11's integral's 0.01058, so the level is taken exact)
    for look in seen[:-1]:
        differences = [p.a_score - p.b_score for p in look.pairs]
        assert look.ci95 == pytest.approx(paired_interval(differences, result.look_alpha))
    # at the stop it reports the stage-wise interval instead: having looked nine times
    # without stopping, the last look's 95% is nearly the plain one, inside Pocock's
    differences = [p.a_score - p.b_score for p in result.pairs]
    pocock_low, pocock_high = paired_interval(differences, 0.0106)
    low, high = result.ci95
    assert seen[-1] == result and pocock_low < low < result.difference < high < pocock_high


def test_no_opponents_is_refused(host):
    with pytest.raises(LeagueError, match="at least one opponent"):
        compare(host, BAYES, RANDOM, TABLE, opponents=())


@pytest.mark.usefixtures("api")
def test_two_claude_prompts_on_the_loopback_api(host):
    honest = SeatSpec.parse("claude:honest")
    bluffer = SeatSpec.parse("claude:bluffer?model=claude-haiku-4-5")
    table = EpisodeRequest(deals=2)
    result = compare(host, honest, bluffer, table, tables=2)
    assert result.tables == 2
    assert result.tokens > 0 and result.usd > 0  # every decision was a priced API call
    low, high = result.ci95
    assert low <= result.difference <= high
    against_bayes = compare(host, honest, BAYES, table, tables=2)
    assert against_bayes.tokens > 0


def test_threads_play_the_pairs_serial_plays(host):
    serial = compare(host, PRESSURE, RANDOM, TABLE, tables=6, seed=4)
    threads = compare(host, PRESSURE, RANDOM, TABLE, tables=6, seed=4, concurrency=3)
    assert threads == serial


def test_each_look_is_shown_on_stderr_with_a_target(capsys):
    argv = ["compare", "bayes", "random", "--deals", "6", "--tables", "40", "--target-ci", "0.2"]
    assert main(argv) == 0
    looks = [line for line in capsys.readouterr().err.splitlines() if "tables: A - B" in line]
    # rounds of 4 pairs (a tenth of 40): one line per look, 4, 8, ... tables
    assert looks and all(
        line.startswith(f"arena: {4 * (i + 1)} tables:") for i, line in enumerate(looks)
    )


@pytest.mark.usefixtures("api")
def test_claude_pairs_in_threads_score_as_serial(host):
    honest = SeatSpec.parse("claude:honest")
    table = EpisodeRequest(deals=2)
    serial = compare(host, honest, BAYES, table, tables=2)
    threads = compare(host, honest, BAYES, table, tables=2, concurrency=2)
    # token counts follow the server's prompt cache, which sees the requests in another
    # order; the scores do not
    assert [(p.a_score, p.b_score) for p in threads.pairs] == [
        (p.a_score, p.b_score) for p in serial.pairs
    ]
