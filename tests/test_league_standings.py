"""Standings with stated confidence: t-intervals over tables, head-to-head, rating, cost."""

from __future__ import annotations

import pytest

from arena.league.cost import Price, seat_tokens, table_price
from arena.league.standings import SeatRow, Tables, head_to_head, standings


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
