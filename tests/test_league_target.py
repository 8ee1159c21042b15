"""``arena league run --target-ci``: rounds, the level per look, allocation, stopping, resuming."""

from __future__ import annotations

import json
import sqlite3

import attrs
import numpy as np
import pytest
from league_runs import play, play_until_interrupted
from scipy import stats

from arena.cli import main
from arena.league.config import (
    LeagueError,
    LeagueSpec,
    league_from_mapping,
    league_rounds,
    pool_entrants,
    rounds,
)
from arena.league.report import league_report, report_tables, separation
from arena.runner import EpisodeRequest
from arena.seats import SeatSpec
from arena.web.report import report_figures

ENTRANTS = pool_entrants(SeatSpec.parse(n) for n in ("bayes", "pressure", "random", "bayes"))
TARGET = LeagueSpec(ENTRANTS, tables=120, seed=1, table=EpisodeRequest(deals=6), target_ci=0.08)


def test_rounds_are_a_tenth_of_the_cap_and_at_least_one_table_per_entrant():
    # 600 tables, 4 entrants: rounds of max(4, 60) = 60, 10 looks
    assert rounds(600, 4) == (60, 10)
    # 20 tables: a tenth is 2 < 4 entrants, so rounds of 4 and ceil(20 / 4) = 5 looks
    assert rounds(20, 4) == (4, 5)
    # 7 tables: rounds of 4, the second one short (3 tables): 2 looks
    assert rounds(7, 4) == (4, 2)


def test_a_league_on_half_widths_alone_looks_after_a_fortieth_of_its_cap():
    # no bound on the looks is paid for: 600 tables in rounds of max(4, 600 / 40) = 15,
    # 40 looks; --separate pays Pocock's level for its looks: a tenth, 60, 10 looks
    assert league_rounds(600, 4, separate=False) == (15, 40)
    assert league_rounds(600, 4, separate=True) == (60, 10)
    # 120 tables: a fortieth is 3 < 4 entrants, so rounds of 4 and 30 looks
    assert (TARGET.round_tables, TARGET.looks) == (4, 30)
    separate = attrs.evolve(TARGET, separate=True)
    assert (separate.round_tables, separate.looks) == (12, 10)


def test_a_league_without_a_target_stores_the_settings_it_always_did():
    # an old league file resumes: no new key appears in its settings
    plain = LeagueSpec(ENTRANTS, tables=12, seed=1)
    assert "targetCi" not in plain.settings() and plain.looks == 1
    assert TARGET.settings()["targetCi"] == 0.08 and TARGET.settings()["looks"] == 30


def _episodes(path) -> list[tuple]:
    with sqlite3.connect(path) as db:
        return list(db.execute("SELECT idx, tbl, seed, results FROM episodes ORDER BY idx"))


def test_stops_at_a_round_before_the_cap_with_every_half_width_at_the_target(tmp_path, host):
    path = tmp_path / "target.sqlite"
    state = play(path, TARGET, host)
    assert state.stopped == "target"
    assert state.done < TARGET.tables and state.done % TARGET.round_tables == 0
    report = league_report(path)
    assert report["league"]["stopped"] == "target"
    assert report["league"]["stoppedAfterTables"] == state.done
    for row in report["standings"]:
        assert (row["ci95"][1] - row["ci95"][0]) / 2 <= 0.08
    # The level, worked from the seats alone: every table seats each of the 4 entrants once,
    # so random's interval is the t-interval on its table scores. The league stops on
    # half-widths alone, which bench/stopping.py measured to hold at a plain 95% per look:
    # mean +- t(0.975, n - 1) * s / sqrt(n).
    with sqlite3.connect(path) as db:
        scores = [s for (s,) in db.execute("SELECT score FROM seats WHERE entrant = 'random'")]
    n = len(scores)
    half = stats.t.ppf(0.975, n - 1) * np.std(scores, ddof=1) / np.sqrt(n)
    (random_row,) = [row for row in report["standings"] if row["entrant"] == "random"]
    assert random_row["ci95"] == pytest.approx([np.mean(scores) - half, np.mean(scores) + half])
    title = report_tables(report, "target.sqlite")[0].title
    assert "stopped: target met after" in title and "30 looks at 95.00%" in title


def test_a_stopped_league_resumes_to_the_same_tables(tmp_path, host):
    whole = tmp_path / "whole.sqlite"
    play(whole, TARGET, host)

    broken = tmp_path / "broken.sqlite"
    play_until_interrupted(broken, TARGET, host, 30)  # inside the eighth round of 4 (28 to 32)
    assert 30 <= len(_episodes(broken)) < len(_episodes(whole))
    resumed = play(broken, TARGET, host)
    assert resumed.stopped == "target"
    assert _episodes(broken) == _episodes(whole)
    again = play(broken, TARGET, host)  # already met: nothing more is played
    assert again.stopped == "target" and _episodes(broken) == _episodes(whole)


def test_the_cap_ends_a_league_whose_target_is_out_of_reach(tmp_path, host):
    spec = LeagueSpec(ENTRANTS, tables=8, seed=2, table=EpisodeRequest(deals=4), target_ci=0.001)
    path = tmp_path / "cap.sqlite"
    state = play(path, spec, host)
    assert (state.stopped, state.done) == (None, 8)
    assert league_report(path)["league"]["stopped"] == "cap"


@pytest.mark.parametrize("value", [0, -0.1, "wide", True, float("inf")])
def test_a_bad_target_in_a_league_file_is_one_line(value):
    data = {"entrants": {"a": "bayes", "b": "pressure"}, "league": {"target_ci": value}}
    with pytest.raises(LeagueError, match="target_ci must be a finite number > 0"):
        league_from_mapping(data | {"table": {"seats": 2}})


def test_a_target_needs_the_balanced_schedule():
    with pytest.raises(LeagueError, match="balanced"):
        LeagueSpec(ENTRANTS, schedule="random", target_ci=0.1)


def test_cli_target_run_and_show(tmp_path, capsys):
    db = str(tmp_path / "cli.sqlite")
    argv = ["league", "run", "--pool", "bayes,pressure,random,bayes", "--deals", "6"]
    argv += ["--tables", "120", "--seed", "1", "--target-ci", "0.08", "--db", db, "--json"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert "target met" in err
    assert json.loads(out)["league"]["stopped"] == "target"
    assert main(["league", "show", db]) == 0
    shown = " ".join(capsys.readouterr().out.split())  # the title wraps at the terminal width
    assert "stopped: target met after" in shown


def test_cli_bad_target_is_one_line(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["league", "run", "--pool", "bayes,pressure", "--target-ci", "-1"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("arena: error: ") and err.count("\n") == 1


def test_the_report_shows_the_intervals_narrowing_and_where_the_league_stopped(tmp_path, host):
    path = tmp_path / "narrowing.sqlite"
    state = play(path, TARGET, host)
    report = league_report(path)
    looks = report["narrowing"]
    # one look per round of 4 tables, up to where it stopped
    assert [look["tables"] for look in looks] == list(range(4, state.done + 1, 4))
    # it stopped at the first look where every half-width met the target, not later
    for look in looks[:-1]:
        assert max(look["halfWidth"].values()) > 0.08
    final = {s["entrant"]: (s["ci95"][1] - s["ci95"][0]) / 2 for s in report["standings"]}
    assert looks[-1]["halfWidth"] == pytest.approx(final)
    for name, half in final.items():
        assert half < looks[0]["halfWidth"][name]  # many times the tables: narrower
    figure = report_figures(report, [])["narrowing-plot"]
    drawn = {trace["name"]: trace["y"] for trace in figure["data"]}
    assert drawn["random"] == pytest.approx([look["halfWidth"]["random"] for look in looks])
    assert any("stopped: target met" in a["text"] for a in figure["layout"]["annotations"])


def test_a_league_without_a_target_has_no_narrowing(tmp_path, host):
    path = tmp_path / "plain.sqlite"
    play(path, LeagueSpec(ENTRANTS, tables=4, seed=1, table=EpisodeRequest(deals=3)), host)
    report = league_report(path)
    assert "narrowing" not in report and report["league"]["stopped"] == "cap"
    assert report_figures(report, [])["narrowing-plot"] is None


def test_separation_of_an_adjacent_pair_by_hand():
    # x and y at three tables: x 0.8, 0.6, 0.7; y 0.5, 0.5, 0.3 -> d = 0.3, 0.1, 0.4;
    # mean 0.266667; deviations 0.033333, -0.166667, 0.133333, squares sum 0.046667;
    # s^2 = 0.023333, s = 0.152753, se = s / sqrt(3) = 0.088192; one look:
    # t(0.975, 2 df) = 4.302653 -> half 4.302653 * 0.0881917 = 0.379458 -> [-0.112791, 0.646125]
    seats = [
        (2 * t + i, t, name, score, 0, 6)
        for t, pair in enumerate([(0.8, 0.5), (0.6, 0.5), (0.7, 0.3)])
        for i, (name, score) in enumerate(zip("xy", pair, strict=True))
    ]
    settings = {"looks": 1, "targetCi": 0.4}
    (pair,) = separation(seats, settings)
    assert (pair["higher"], pair["lower"], pair["tables"]) == ("x", "y", 3)
    assert pair["difference"] == pytest.approx(0.266667, abs=1e-6)
    assert pair["ci95"] == pytest.approx([-0.112791, 0.646125], abs=1e-6)
    assert not pair["settled"]  # holds 0, and reaches past 0.4
    (wider,) = separation(seats, settings | {"targetCi": 0.7})
    assert wider["settled"]  # inside [-0.7, 0.7]: level within the target


def test_separate_stops_once_every_adjacent_pair_is_settled(tmp_path, host):
    spec = attrs.evolve(TARGET, target_ci=0.15, separate=True)
    path = tmp_path / "separate.sqlite"
    state = play(path, spec, host)
    assert state.stopped == "target" and state.done < spec.tables
    report = league_report(path)
    assert [p["higher"] for p in report["separation"]] == [
        s["entrant"] for s in report["standings"][:-1]
    ]
    assert all(p["settled"] for p in report["separation"])


def test_separate_needs_a_target():
    with pytest.raises(LeagueError, match="separate needs target_ci"):
        LeagueSpec(ENTRANTS, separate=True)
    data = {"entrants": {"a": "bayes", "b": "pressure"}, "table": {"seats": 2}}
    with pytest.raises(LeagueError, match="separate must be true or false"):
        league_from_mapping(data | {"league": {"target_ci": 0.1, "separate": "yes"}})
