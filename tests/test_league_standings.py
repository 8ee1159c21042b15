"""Standings with stated confidence: t-intervals over tables, head-to-head, rating, cost."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console
from scipy import stats

from arena.league.cost import TOKEN_KINDS, Price, seat_tokens, table_price
from arena.league.report import ranking, report_tables
from arena.league.standings import TOO_FEW_NOTE, SeatRow, Tables, head_to_head, standings
from arena.web.report import report_html


def test_the_ci_resamples_whole_tables_not_rotations():
    # Two duplicate tables of four rotations each. Entrant a scores 1.0 in every
    # rotation of table 0 and 0.0 in every rotation of table 1: mean 0.5.
    # Over the 2 tables: table means 1.0 and 0.0, s = 0.7071, SE = s / sqrt(2) = 0.5,
    # t(0.975, 1 df) = 12.706: 0.5 +- 6.35, clipped to the score's range [0, 1].
    # Had the 8 rotations been taken as independent: s = sqrt(8 * 0.25 / 7) = 0.5345,
    # SE = 0.189, t(0.975, 7) = 2.365: 0.5 +- 0.447 = [0.053, 0.947].
    rows = [SeatRow(t * 4 + r, t, "a", 1.0 - t, 0) for t in (0, 1) for r in range(4)]
    rows += [SeatRow(t * 4 + r, t, "b", float(t), 0) for t in (0, 1) for r in range(4)]
    a, b = sorted(standings(rows), key=lambda s: s.entrant)
    assert a.mean_score == pytest.approx(0.5) and a.episodes == 8
    assert a.ci95 == (0.0, 1.0)
    assert b.ci95 == (0.0, 1.0)


def test_an_entrant_with_two_seats_plays_one_episode():
    # Episode 0: a holds two seats scoring 0.75 and 0.25 -> a's episode score 0.5;
    # episode 1: a scores 1.0 -> mean (0.5 + 1.0) / 2 = 0.75 over 2 episodes, 3 seatings.
    rows = [
        SeatRow(0, 0, "a", 0.75, 2),
        SeatRow(0, 0, "a", 0.25, -2),
        SeatRow(0, 0, "b", 0.5, 0),
        SeatRow(1, 1, "a", 1.0, 3),
        SeatRow(1, 1, "b", 0.0, -3),
    ]
    a = next(s for s in standings(rows) if s.entrant == "a")
    assert (a.episodes, a.seatings, a.points) == (2, 3, 3)
    assert a.mean_score == pytest.approx(0.75)


def test_a_certain_winner_has_a_narrow_interval_and_the_higher_rating():
    # a beats b at every one of 10 tables by the same margin: the table means do not
    # spread, so both intervals collapse to the point; the rating follows.
    rows = [SeatRow(t, t, "a", 0.8, 1) for t in range(10)]
    rows += [SeatRow(t, t, "b", 0.2, -1) for t in range(10)]
    a, b = standings(rows)
    assert a.entrant == "a" and a.ci95 == pytest.approx((0.8, 0.8))
    assert b.ci95 == pytest.approx((0.2, 0.2))
    assert a.rating > b.rating and a.rating_mu > 25 > b.rating_mu


def test_no_rows_are_no_standings():
    # A league with no stored episode yet (one just started, or every table failed):
    # no entrant has a score, so the table is empty rather than a division by zero.
    assert standings([]) == []
    assert standings(iter(())) == []


def test_head_to_head_counts_points_taken_per_deal_met():
    # Table 0, one episode of 10 deals with a, b, c: a took 3 points from b and b
    # took 1 from a: a vs b = (3 - 1) / 10 = +0.2 per deal, b vs a = -0.2.
    # Table 1, 5 deals, a and c only: c took 2 from a: c vs a = (2 - 0) / (10 + 5).
    seated = [(0, 0, "a", 10), (0, 0, "b", 10), (0, 0, "c", 10), (1, 1, "a", 5), (1, 1, "c", 5)]
    taken = [(0, "a", "b", 3), (0, "b", "a", 1), (1, "c", "a", 2)]
    cells = {(h.entrant, h.opponent): h for h in head_to_head(taken, seated, Tables([0, 1]))}
    assert cells["a", "b"].per_deal == pytest.approx(0.2)
    assert cells["b", "a"].per_deal == pytest.approx(-0.2)
    assert (cells["a", "b"].took, cells["a", "b"].gave, cells["a", "b"].deals) == (3, 1, 10)
    assert cells["c", "a"].per_deal == pytest.approx(2 / 15)
    assert cells["b", "c"].per_deal == 0.0 and cells["b", "c"].deals == 10
    # b met a only at table 0: one table shows no spread, so nothing is ruled out and
    # the interval is the whole range of net points per deal, [-1, +1].
    assert cells["b", "a"].ci95 == (-1.0, 1.0) and cells["b", "a"].ci_tables == 1
    # c vs a at both tables: R = 2/15; residuals 0 - 10R = -4/3 and 2 - 5R = +4/3;
    # SE = sqrt(2/1 * 32/9) / 15 = 0.178, t(0.975, 1) = 12.706: past both ends.
    assert cells["c", "a"].ci95 == (-1.0, 1.0) and cells["c", "a"].ci_tables == 2


def test_cost_uses_the_price_of_each_token_kind():
    # Sonnet 4.6 list prices per million tokens: input 3, output 15, cache read 0.30,
    # cache write 3.75. 1000 input + 200 output + 5000 read + 2000 written:
    # (1000 * 3 + 200 * 15 + 5000 * 0.3 + 2000 * 3.75) / 1e6 = 15000 / 1e6 = 0.015.
    seat = {
        "usage": {
            "inputTokens": 1000,
            "outputTokens": 200,
            "cacheReadTokens": 5000,
            "cacheWriteTokens": 2000,
            "calls": 3,
        }
    }
    assert table_price("claude-sonnet-4-6").usd(seat_tokens(seat)) == pytest.approx(0.015)
    assert Price(output=10.0).usd(seat_tokens(seat)) == pytest.approx(0.002)
    assert seat_tokens({"usage": None}) == dict.fromkeys(
        ("input", "output", "cacheRead", "cacheWrite", "cacheWrite1h"), 0
    )


def _one_episode_per_table(scores_of_a: list[float]) -> list[SeatRow]:
    """Table t holds one episode in which a scores ``scores_of_a[t]`` and b the rest."""
    rows = [SeatRow(t, t, "a", s, 0) for t, s in enumerate(scores_of_a)]
    return rows + [SeatRow(t, t, "b", 1.0 - s, 0) for t, s in enumerate(scores_of_a)]


def test_the_interval_is_a_t_interval_on_table_means_with_tables_minus_one_df():
    # Five tables, a's table means 0.6, 0.7, 0.5, 0.8, 0.4: mean 3.0 / 5 = 0.6;
    # deviations 0, +.1, -.1, +.2, -.2, squares sum to 0.10; s^2 = 0.10 / 4 = 0.025,
    # s = 0.158114; SE = s / sqrt 5 = 0.0707107; t(0.975, 4 df) = 2.776445;
    # half-width 2.776445 * 0.0707107 = 0.196324: [0.403676, 0.796324].
    # (A normal 1.96 would give the narrower [0.461, 0.739].)
    a = next(s for s in standings(_one_episode_per_table([0.6, 0.7, 0.5, 0.8, 0.4])))
    assert a.entrant == "a" and a.mean_score == pytest.approx(0.6)
    assert a.ci95 == pytest.approx((0.403676, 0.796324), abs=1e-6)
    # five tables is under the ten at which the bench measured coverage: marked
    assert a.ci_tables == 5 and a.to_json()["ciCoverage"] == "too few tables"


def test_head_to_head_is_a_t_interval_over_the_tables_the_pair_met():
    # Five tables of 10 deals with a and b. a took from b: 2, 1, 1, 0, 3 and b from a:
    # 0, 1, 0, 1, 0, so net per table +2, 0, +1, -1, +3, per deal .2, 0, .1, -.1, .3:
    # R = 5 / 50 = 0.1. With equal deals the ratio's SE is the table means' SE:
    # deviations .1, -.1, 0, -.2, .2 -> s^2 = 0.10 / 4 = 0.025, SE = 0.0707107,
    # times t(0.975, 4) = 2.776445: 0.1 +- 0.196324 = [-0.096324, 0.296324].
    seated = [(t, t, name, 10) for t in range(5) for name in ("a", "b")]
    took_a, took_b = [2, 1, 1, 0, 3], [0, 1, 0, 1, 0]
    taken = [(t, "a", "b", n) for t, n in enumerate(took_a) if n]
    taken += [(t, "b", "a", n) for t, n in enumerate(took_b) if n]
    cells = {(h.entrant, h.opponent): h for h in head_to_head(taken, seated, Tables(range(5)))}
    assert cells["a", "b"].per_deal == pytest.approx(0.1)
    assert cells["a", "b"].ci95 == pytest.approx((-0.096324, 0.296324), abs=1e-6)
    assert cells["b", "a"].ci95 == pytest.approx((-0.296324, 0.096324), abs=1e-6)
    assert cells["a", "b"].ci_tables == 5


def test_a_duplicate_group_is_one_unit_and_its_rotations_pair_up():
    # Five duplicate tables of 4 rotations. In every table a scores 0.2, 0.8, 0.4, 0.6
    # over the rotations (the seat's luck), mean 0.5 at every table: the table means do
    # not spread, so the interval is the point 0.5, over 5 tables, not 20. Had the 20
    # rotations been units: s^2 = 5 * (.09 + .09 + .01 + .01) / 19 = 0.05263, SE = 0.0513,
    # t(0.975, 19) = 2.093: 0.5 +- 0.107.
    rotations = [0.2, 0.8, 0.4, 0.6]
    rows = [SeatRow(4 * t + r, t, "a", s, 0) for t in range(5) for r, s in enumerate(rotations)]
    rows += [
        SeatRow(4 * t + r, t, "b", 1 - s, 0) for t in range(5) for r, s in enumerate(rotations)
    ]
    a = next(s for s in standings(rows) if s.entrant == "a")
    assert a.episodes == 20 and a.ci_tables == 5
    assert a.ci95 == pytest.approx((0.5, 0.5))


def test_an_interval_over_fewer_than_ten_tables_is_marked_too_few():
    # Four tables: a's means 0.6, 0.7, 0.5, 0.8 -> mean 0.65, deviations -.05, .05, -.15,
    # .15, s^2 = 0.05 / 3 = 0.016667, SE = 0.129099 / 2 = 0.0645497, t(0.975, 3) = 3.182446:
    # 0.65 +- 0.205427. The interval is still given, marked: no coverage was measured.
    a = next(s for s in standings(_one_episode_per_table([0.6, 0.7, 0.5, 0.8])))
    assert a.ci95 == pytest.approx((0.444573, 0.855427), abs=1e-6)
    assert (a.ci_tables, a.to_json()["ciCoverage"]) == (4, "too few tables")
    # bench/coverage.py measured 95% +- 2 from ten tables (docs/league.md): 9 marked, 10 not
    nine, ten = ([0.6, 0.7, 0.5, 0.8, 0.4] * 2)[:9], [0.6, 0.7, 0.5, 0.8, 0.4] * 2
    assert next(iter(standings(_one_episode_per_table(nine)))).to_json()["ciCoverage"] == (
        "too few tables"
    )
    assert next(iter(standings(_one_episode_per_table(ten)))).to_json()["ciCoverage"] == "ok"
    # one table: no spread to measure, so the interval is the score's whole range
    lone = next(s for s in standings(_one_episode_per_table([0.9])))
    assert lone.ci95 == (0.0, 1.0) and lone.to_json()["ciCoverage"] == "too few tables"


def test_duplicate_groups_are_marked_until_ten_of_them():
    # bench/coverage.py (docs/league.md): duplicate groups seated by the Williams square
    # cover 89.5-94.9% at 5 groups and 93.0-95.2% at 10, within 95% +- 2 from 10, as
    # plain tables. A league of duplicate tables is one whose tables hold several
    # episodes (its replays).
    def seats(groups: int, rotations: int) -> list[tuple]:
        # (episode, table, entrant, score, points, deals played); a's group means vary
        return [
            (g * rotations + r, g, n, s + 0.01 * (g % 3), 0, 10)
            for g in range(groups)
            for r in range(rotations)
            for n, s in (("a", 0.6), ("b", 0.4))
        ]

    def marks(groups: int, rotations: int) -> set[str]:
        return {row["ciCoverage"] for row in ranking(seats(groups, rotations), [])["standings"]}

    assert marks(10, 1) == {"ok"}  # ten plain tables
    assert marks(9, 1) == {"too few tables"}
    assert marks(5, 4) == marks(9, 2) == {"too few tables"}  # 20 and 18 episodes, grouped
    assert marks(10, 4) == {"ok"}


def _shown(seats: list[tuple]) -> str:
    """The terminal tables of a league of these seat rows, as text."""
    report = ranking(seats, []) | {
        "cost": {
            "tokens": dict.fromkeys(TOKEN_KINDS, 0),
            "usd": 0.0,
            "byEntrant": {},
            "byPrice": [],
        }
    }
    console = Console(record=True, width=160)
    for table in report_tables(report, "x.sqlite"):
        console.print(table)
    return console.export_text()


def test_league_show_marks_an_interval_over_too_few_tables_and_says_why():
    # (episode, table, entrant, score, points, deals played)
    def seats(tables: int) -> list[tuple]:
        return [(t, t, n, s, 0, 10) for t in range(tables) for n, s in (("a", 0.6), ("b", 0.4))]

    few, enough = _shown(seats(9)), _shown(seats(10))
    assert "[0.600, 0.600]*" in few and TOO_FEW_NOTE in " ".join(few.split())
    assert "[0.600, 0.600]" in enough and "*" not in enough and "fewer than" not in enough


@given(
    means=st.lists(st.floats(0.0, 1.0), min_size=2, max_size=12),
    episodes=st.integers(1, 4),
)
def test_equal_tables_give_scipys_t_interval_on_table_means_clipped_to_the_range(means, episodes):
    # Tables of ``episodes`` episodes each, a scoring its table's mean in every one:
    # the ratio interval must be scipy's own t-interval of the table means.
    rows = [
        SeatRow(episodes * t + e, t, "a", m, 0)
        for t, m in enumerate(means)
        for e in range(episodes)
    ]
    a = next(iter(standings(rows)))
    centre, spread = np.mean(means), stats.sem(means)
    low, high = (
        (centre, centre)
        if spread == 0
        else stats.t.interval(0.95, len(means) - 1, loc=centre, scale=spread)
    )
    assert a.ci95 == pytest.approx((max(low, 0.0), min(high, 1.0)), abs=1e-9)


def test_the_same_league_gives_the_same_intervals_whatever_order_its_rows_come_in():
    rows = _one_episode_per_table([0.6, 0.7, 0.5, 0.8, 0.4, 0.55])
    forward = [s.to_json() for s in standings(rows)]
    assert [s.to_json() for s in standings(rows[::-1])] == forward
    assert [s.to_json() for s in standings(rows)] == forward


def _report_data(seats: list[tuple]) -> dict:
    """The data the HTML report page (arena report) lays out, for these seat rows."""
    document = ranking(seats, []) | {
        "league": {"episodesStored": len(seats) // 2},
        "audit": {},
        "cost": {
            "tokens": dict.fromkeys([*TOKEN_KINDS, "total"], 0),
            "usd": 0.0,
            "byEntrant": {},
            "byPrice": [],
        },
    }
    page = report_html(document, [], source="x.sqlite")
    embedded = re.search(r'<script id="report-data" type="application/json">(.*?)</script>', page)
    return json.loads(embedded.group(1))


def test_the_html_report_carries_the_too_few_note_only_when_an_interval_is_marked():
    def seats(tables: int) -> list[tuple]:
        return [(t, t, n, s, 0, 10) for t in range(tables) for n, s in (("a", 0.6), ("b", 0.4))]

    few, enough = _report_data(seats(9)), _report_data(seats(10))
    assert few["ciNote"] == TOO_FEW_NOTE
    assert [s["ciCoverage"] for s in few["standings"]] == ["too few tables"] * 2
    assert enough["ciNote"] is None
    assert [s["ciCoverage"] for s in enough["standings"]] == ["ok"] * 2
