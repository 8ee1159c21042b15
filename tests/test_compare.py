"""``arena compare``: the paired interval by hand, the pairing, stopping, the CLI, Claude seats."""

from __future__ import annotations

import json

import pytest
from claude_tables import api, offline  # noqa: F401  (offline autouse; api serves loopback)

from arena.cli import main
from arena.league.compare import compare, looks_allowed, seating
from arena.league.config import LeagueError
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


def test_bayes_against_itself_contains_zero(host):
    result = compare(host, BAYES, BAYES, TABLE, tables=6)
    assert result.ci95[0] <= 0 <= result.ci95[1]
    assert result.verdict().startswith("no difference larger than")


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
    assert sorted(data) == ["a", "b", "ci95", "cost", "difference", "tables"]
    assert (data["a"], data["b"], data["tables"], data["cost"]) == ("bayes", "random", 4, 0.0)
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
    for look in seen[:-1]:
        differences = [p.a_score - p.b_score for p in look.pairs]
        assert look.ci95 == pytest.approx(paired_interval(differences, 0.0106), abs=2e-4)
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
