"""The decision read-out (arena.grading, arena_plugins.decisions), hand-worked from the rulebook.

The episode below is written by hand: four seats of one die each (dice, no wild), so a
seat sees its own die and 3 unseen dice, each a given face with chance 1/6. The exact
tails every figure needs, P(at least k of 3 dice show the face):

    k <= 0: 1        k = 1: 1 - (5/6)^3 = 91/216
    k = 2: 3 (1/6)^2 (5/6) + (1/6)^3 = 16/216
    k = 3: (1/6)^3 = 1/216        k >= 4: 0 (only 3 dice unseen)

Table order 0, 1, 2, 3. Each decision's own-hand odds are worked out beside it.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest

from arena import grading
from arena.grading import GRADES, grades, judge
from arena.intervals import jackknife_t, ratio_t, share_kg
from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatSpec
from arena_plugins.decisions import STRATA, follows_bluffs, pool, section, targeting

T_975 = {1: 12.706204736174707, 2: 4.302652729749464}
"""Student's t at 0.975 by degrees of freedom (printed tables: 12.706, 4.303)."""


def header(policies=("p0", "p1", "p2", "p3")) -> dict:
    return {
        "type": "episode",
        "version": 2,
        "seed": 1,
        "mode": "dice",
        "symbols": [1, 2, 3, 4, 5, 6],
        "handSize": 1,
        "seats": [{"slot": s, "policy": p} for s, p in enumerate(policies)],
        "tableOrder": [0, 1, 2, 3],
        "deals": 4,
        "maxBidsPerDeal": 12,
        "talk": False,
    }


def bid(deal, slot, quantity, face, fallback=False) -> dict:
    return {
        "type": "bid",
        "deal": deal,
        "slot": slot,
        "quantity": quantity,
        "face": face,
        "say": None,
        "published": None,
        "notes": None,
        "fallback": fallback,
    }


def challenge(deal, slot, bidder, quantity, face, actual, forced=False) -> dict:
    won = actual < quantity  # rule 6: the challenger wins when the bid is false
    winner, loser = (slot, bidder) if won else (bidder, slot)
    return {
        "type": "challenge",
        "deal": deal,
        "slot": slot,
        "bidder": bidder,
        "quantity": quantity,
        "face": face,
        "actual": actual,
        "forced": forced,
        "fallback": False,
        "winner": winner,
        "loser": loser,
        "say": None,
        "published": None,
        "notes": None,
    }


def deal(number, opener, hands) -> dict:
    return {"type": "deal", "deal": number, "opener": opener, "hands": [[h] for h in hands]}


def episode(policies=("p0", "p1", "p2", "p3")) -> list[dict]:
    return [
        header(policies),
        # deal 0: dice 2, 2, 5, 6
        deal(0, 0, [2, 2, 5, 6]),
        bid(0, 0, 1, 2),  # s0 holds a 2: need 0, p = 1; true (two 2s)
        bid(0, 1, 2, 2),  # s1 faces 1x2 (p 1: raising forgoes nothing); its 2x2 needs 1: 91/216
        challenge(0, 2, 1, 2, 2, actual=2),  # s2 (a 5) faces 2x2: need 2, p 16/216; loses
        # deal 1: dice 3, 4, 4, 1
        deal(1, 1, [3, 4, 4, 1]),
        bid(1, 1, 3, 6),  # s1 has no 6: need 3, p 1/216; false; an opening bid: not graded
        bid(1, 2, 4, 4),  # s2 faces 3x6 at p 1/216: forgoes 1 - 2/216 = 214/216, a mistake;
        #                   its 4x4 needs 3 (it holds one 4): p 1/216; false (two 4s)
        challenge(1, 3, 2, 4, 4, actual=2),  # s3 (a 1) faces 4x4: need 4 > 3, p 0; wins
        # deal 2: dice 6, 6, 6, 6
        deal(2, 2, [6, 6, 6, 6]),
        bid(2, 2, 1, 6),  # s2: p 1; true
        challenge(2, 3, 2, 1, 6, actual=4),  # s3 holds a 6: the bid is certain: a blunder; loses
        # deal 3: dice 1, 2, 3, 4
        deal(3, 3, [1, 2, 3, 4]),
        bid(3, 3, 5, 5),  # s3: 5 fives need 5 of 3 unseen: impossible, a blunder; false
        bid(3, 0, 5, 6, fallback=True),  # s0 (rule 11's move) faces 5x5 at p 0: raising past a
        #                   bid its hand proves false is a blunder, forgoing 1; 5x6 impossible
        challenge(3, 1, 0, 5, 6, actual=0),  # s1 faces 5x6 at p 0; wins
        {"type": "result", "status": "complete", "dealsPlayed": 4, "points": [0, 0, 0, 0]},
    ]


def grade_of(challenge, standing_p, standing_need=1, bid_need=1, unseen=15) -> str | None:
    """One decision's grade by name, through the columns' grader."""
    code = grades(
        np.array([challenge]),
        np.array([standing_p], dtype=float),
        np.array([standing_need]),
        np.array([bid_need]),
        unseen,
    )[0]
    return (None, *GRADES)[code]


def test_grades_follow_the_expected_loss_and_what_the_hand_settles():
    # A challenge of a bid 0.8 likely forgoes 2(0.8) - 1 = 0.6 >= 0.5: a mistake.
    assert grade_of(True, 0.8) == "mistake"
    # 0.65: forgoes 0.3, in [0.2, 0.5): an inaccuracy; 0.55 forgoes 0.1: sound.
    assert grade_of(True, 0.65) == "inaccuracy"
    assert grade_of(True, 0.55) is None
    # Its own hand already holds the quantity (need 0): certain, a blunder.
    assert grade_of(True, 1.0, standing_need=0) == "blunder"
    # A raise over a bid 0.3 likely forgoes 1 - 0.6 = 0.4: an inaccuracy; 0.2 forgoes 0.6.
    assert grade_of(False, 0.3) == "inaccuracy"
    assert grade_of(False, 0.2) == "mistake"
    assert grade_of(False, 0.45) is None
    # An opening bid (no standing bid: NaN) is graded only when impossible from its hand.
    assert grade_of(False, math.nan, bid_need=15) is None
    assert grade_of(False, math.nan, bid_need=16) == "blunder"
    # Raising past a bid that needs more than is unseen: challenging wins for certain.
    assert grade_of(False, 0.0, standing_need=16) == "blunder"


def test_each_decision_is_judged_from_its_own_hand():
    [d] = judge(episode())  # one chunk: 11 decisions
    # Decisions are every bid and unforced challenge, in log order.
    assert list(zip(d.ordinal, d.slot, d.challenge, strict=True)) == [
        (0, 0, False), (1, 1, False), (2, 2, True),
        (3, 1, False), (4, 2, False), (5, 3, True),
        (6, 2, False), (7, 3, True),
        (8, 3, False), (9, 0, False), (10, 1, True),
    ]  # fmt: skip
    assert math.isnan(d.standing_p[0])  # an opening bid faces nothing
    assert d.standing_p[1] == 1.0 and d.bid_p[1] == pytest.approx(91 / 216)
    assert d.standing_p[2] == pytest.approx(16 / 216) and not d.won[2]
    assert d.grade[4] == 2 and d.loss[4] == pytest.approx(214 / 216)  # a mistake
    assert d.standing_p[5] == 0.0 and d.won[5] and d.grade[5] == 0
    assert d.grade[7] == 3 and d.standing_need[7] == 0  # challenged a certain bid
    assert d.grade[8] == 3 and d.bid_p[8] == 0.0  # an impossible opening bid
    assert d.grade[9] == 3 and d.fallback[9] and d.loss[9] == 1.0
    # Overreach: quantity - own count - 3 x 1/6. s1's 3x6 with no 6: 3 - 0 - 0.5.
    assert d.overreach[3] == pytest.approx(2.5) and not d.held[3]
    # What a replay marks: the graded decisions, the chance behind each and its loss.
    assert [(o, g) for o, g, _, _ in d.graded()] == [
        (4, "mistake"), (7, "blunder"), (8, "blunder"), (9, "blunder"),
    ]  # fmt: skip
    assert list(d.graded())[0][2:] == (pytest.approx(1 / 216), pytest.approx(214 / 216))


def test_a_forced_challenge_is_no_decision_but_keeps_the_ordinal():
    records = episode()
    forced = records.index(next(r for r in records if r["type"] == "challenge"))
    records[forced] = challenge(0, 2, 1, 2, 2, actual=2, forced=True)
    [d] = judge(records)
    ordinals = list(d.ordinal)
    assert 2 not in ordinals
    assert ordinals[:3] == [0, 1, 3]


def test_judging_in_chunks_changes_no_tally(monkeypatch):
    # 11 decisions in chunks of 3: four chunks, the ordinals in order across them, and the
    # section's counts the same as in one chunk.
    chunks = list(judge(episode(), chunk=3))
    assert [len(c.ordinal) for c in chunks] == [3, 3, 3, 2]
    assert [o for c in chunks for o in c.ordinal] == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    whole = section(episode())
    monkeypatch.setattr(grading.judge, "__defaults__", (3,))  # the reporter's judge, chunked
    assert section(episode()) == whole


def test_every_figure_of_the_hand_written_episode():
    seats = section(episode())["seats"]
    s0, s1, s2, s3 = seats
    # s0: bids 1x2 (p 1, true, held, overreach -0.5) and 5x6 (p 0, false, not held,
    # overreach 5 - 0 - 0.5 = 4.5); one facing (5x5 at p 0): a missed catch forgoing 1.
    assert s0["bids"] == 2 and s0["fallbacks"] == 1 and s0["decisions"] == 2
    assert s0["grades"] == {"inaccuracy": 0, "mistake": 0, "blunder": 1}
    assert s0["figures"] == {
        "bidChance": 0.5,  # (1 + 0) / 2
        "bluffRate": 0.5,
        "heldFace": 0.5,
        "overreach": 2.0,  # (-0.5 + 4.5) / 2
        "challengeRate": 0.0,  # 0 of 1 facing
        "challengeAccuracy": None,  # no challenge
        "againstHand": None,
        "missedCatches": 1.0,  # 1 of 1 facing under 1/2
        "forgonePerFacing": 1.0,  # 1 / 1
        "calibrationGap": 0.0,  # bin 9: 1 bid, p 1, true; bin 0: 1 bid, p 0, false
    }  # no followsBluffs or targeting: in one episode a seat faces only the seat before it
    f1 = s1["figures"]
    # s1: 2x2 (p 91/216, true, held, overreach 0.5), 3x6 (p 1/216, false, 2.5); facings:
    # 1x2 at p 1 (raised: no loss), 5x6 at p 0 (challenged, won).
    assert f1["bidChance"] == pytest.approx((91 / 216 + 1 / 216) / 2)
    assert (f1["bluffRate"], f1["heldFace"], f1["overreach"]) == (0.5, 0.5, 1.5)
    assert (f1["challengeRate"], f1["challengeAccuracy"], f1["againstHand"]) == (0.5, 1.0, 0.0)
    assert (f1["missedCatches"], f1["forgonePerFacing"]) == (0.0, 0.0)  # 0 of 1 catchable
    # Bin 4 (p 0.42): 1 bid, true; bin 0 (p 0.005): 1 bid, false:
    # (|1 - 91/216| + |0 - 1/216|) / 2 = (125 + 1) / 432.
    assert f1["calibrationGap"] == pytest.approx(126 / 432)
    assert s1["calibration"][4] == [1, pytest.approx(91 / 216), 1]
    f2 = s2["figures"]
    # s2: challenged 2x2 at p 16/216 (lost); raised over 3x6 at p 1/216 with 4x4 (p 1/216,
    # false); opened 1x6 (p 1, true). Forgone: 1 - 2/216 over 2 facings.
    assert s2["grades"] == {"inaccuracy": 0, "mistake": 1, "blunder": 0}
    assert f2["bidChance"] == pytest.approx((1 / 216 + 1) / 2)
    assert (f2["bluffRate"], f2["heldFace"], f2["overreach"]) == (0.5, 1.0, 1.0)
    assert (f2["challengeRate"], f2["challengeAccuracy"], f2["againstHand"]) == (0.5, 0.0, 0.0)
    assert f2["missedCatches"] == 0.5  # both facings under 1/2; raised at one
    assert f2["forgonePerFacing"] == pytest.approx(214 / 216 / 2)
    assert f2["calibrationGap"] == pytest.approx(1 / 432)  # bin 0: |0 - 1/216| over 2 bids
    f3 = s3["figures"]
    # s3: challenged 4x4 at p 0 (won) and 1x6 at p 1 (lost: against its hand, certain);
    # opened 5x5, impossible.
    assert s3["againstHand"] == 1 and s3["againstCertain"] == 1
    assert s3["grades"] == {"inaccuracy": 0, "mistake": 0, "blunder": 2}
    assert (f3["bidChance"], f3["bluffRate"], f3["heldFace"], f3["overreach"]) == (
        0.0,
        1.0,
        0.0,
        4.5,
    )
    assert (f3["challengeRate"], f3["challengeAccuracy"], f3["againstHand"]) == (1.0, 0.5, 0.5)
    assert (f3["missedCatches"], f3["forgonePerFacing"]) == (0.0, 0.0)
    # Facings by opponent: each seat faced only the seat before it in table order.
    assert [[sum(row) for row in s["faced"]] for s in seats] == [
        [0, 0, 0, 1], [2, 0, 0, 0], [0, 2, 0, 0], [0, 0, 2, 0],
    ]  # fmt: skip
    # ... by band of the bid's chance (20 bands of 0.05): s1 faced 1x2 at p 1 (band 19)
    # and 5x6 at p 0 (band 0), both from s0.
    assert [band for band, n in enumerate(s1["faced"][0]) if n] == [0, 19]
    assert [band for band, n in enumerate(s1["challenged"][0]) if n] == [0]


def opponent(faced: dict, challenged: dict, bids=0, false=0) -> list[float]:
    """An opponent row: facings and challenges by band of the bid's chance, then its bids."""
    return [
        *(faced.get(band, 0) for band in range(STRATA)),
        *(challenged.get(band, 0) for band in range(STRATA)),
        bids,
        false,
    ]


def test_follows_bluffs_is_the_slope_of_challenges_beyond_the_own_odds():
    # All facings in one band (2: chance 0.10-0.15): the seat's rate there is 5 / 10 = 0.5,
    # so the excess is each opponent's rate less 0.5: A 1/4 - 1/2 = -0.25, B 0.25, C 0.
    # Bluff rates x = 0.25, 0.75, 0.5, weights 4, 4, 2: x mean 0.5, excess mean 0;
    # slope = (4 (-.25)(-.25) + 4 (.25)(.25)) / (4 (.0625) + 4 (.0625)) = 1.
    rows = [
        opponent({2: 4}, {2: 1}, bids=4, false=1),
        opponent({2: 4}, {2: 3}, bids=4, false=3),
        opponent({2: 2}, {2: 1}, bids=4, false=2),
    ]
    assert follows_bluffs(_array(rows)) == pytest.approx(1.0)
    # The same rates, explained by the odds: A's bids all in band 0, every one challenged;
    # B's in band 10, none. The seat challenges by its own odds alone: excess 0, slope 0.
    odds = [opponent({0: 4}, {0: 4}, bids=4, false=3), opponent({10: 4}, {}, bids=4, false=1)]
    assert follows_bluffs(_array(odds)) == pytest.approx(0.0)
    assert targeting(_array(odds)) == pytest.approx(0.0)
    # Opponents who bluff alike: no slope to draw.
    alike = [opponent({2: 4}, {2: 1}, bids=4, false=1), opponent({2: 4}, {2: 3}, 4, 1)]
    assert follows_bluffs(_array(alike)) is None


def test_targeting_is_the_spread_of_the_excess_over_opponents():
    # One band; challenges only the first of two opponents: rate 5 / 10 = 0.5, excess
    # +0.5 and -0.5, each over 5 facings: sqrt((5 (.25) + 5 (.25)) / 10) = 0.5.
    only = [opponent({3: 5}, {3: 5}), opponent({3: 5}, {})]
    assert targeting(_array(only)) == pytest.approx(0.5)
    # 3 of 4 against 1 of 4: rate 1/2, excess +-0.25: sqrt(8 (.0625) / 8) = 0.25.
    tilted = [opponent({3: 4}, {3: 3}), opponent({3: 4}, {3: 1})]
    assert targeting(_array(tilted)) == pytest.approx(0.25)
    # One opponent faced: nothing to compare.
    assert targeting(_array([opponent({3: 4}, {3: 3}), opponent({}, {})])) is None


def _array(rows):
    return np.array(rows, dtype=float)


Z_975 = 1.959963984540054
"""The normal's 0.975 quantile (printed tables: 1.960)."""


def exact(p: float, n_eff: float) -> tuple[float, float]:
    """Clopper-Pearson at ``n_eff`` trials with ``p n_eff`` hits, by the beta quantiles."""
    from scipy.stats import beta

    hits = p * n_eff
    low = beta.ppf(0.025, hits, n_eff - hits + 1) if hits > 0 else 0.0
    high = beta.ppf(0.975, hits + 1, n_eff - hits) if p < 1 else 1.0
    return low, high


def test_a_share_at_one_in_every_episode_still_has_an_interval():
    # 5 of 5 in each of three episodes: no spread, so the ratio-t's interval would be [1, 1].
    # Korn-Graubard: n_eff = the 15 trials x (z / t(2))^2 = 15 (1.960 / 4.303)^2 = 3.1126,
    # all hits; Beta(3.1126, 1)'s 2.5% point is 0.025^(1 / 3.1126) = 0.3057.
    value, ci, clusters = share_kg([5, 5, 5], [5, 5, 5])
    assert (value, clusters) == (1.0, 3)
    n_eff = 15 * (Z_975 / T_975[2]) ** 2
    assert ci == pytest.approx((0.025 ** (1 / n_eff), 1.0))
    assert ci[0] == pytest.approx(0.3057, abs=1e-4)
    # None of 100 in each of five: n_eff = 500 (1.960 / 2.776)^2 = 249.16; Beta(1, 249.16)'s
    # 97.5% point is 1 - 0.025^(1 / 249.16) = 0.01470.
    value, ci, _ = share_kg([0] * 5, [100] * 5)
    assert value == 0.0 and ci[0] == 0.0
    assert ci[1] == pytest.approx(1 - 0.025 ** (1 / (500 * (Z_975 / 2.7764451051977987) ** 2)))
    assert ci[1] == pytest.approx(0.01470, abs=1e-5)


def test_ratio_t_is_the_ratio_estimators_interval():
    # y = (1, 0), x = (2, 1): R = 1/3; residuals 1 - 2/3 = 1/3 and 0 - 1/3 = -1/3;
    # se = sqrt(2 / 1 * 2/9) / 3 = (2/3) / 3; half = t(0.975, 1) * 2/9.
    value, ci, clusters = ratio_t([1, 0], [2, 1])
    half = T_975[1] * 2 / 9
    assert (value, clusters) == (pytest.approx(1 / 3), 2)
    assert ci == pytest.approx((1 / 3 - half, 1 / 3 + half))
    # One cluster: an estimate, no interval; no data: neither.
    assert ratio_t([1], [2]) == (0.5, None, 1)
    assert ratio_t([0, 0], [0, 0]) == (None, None, 0)


def test_jackknife_t_by_hand():
    # Clusters (1, 2), (3, 4), (5, 9); statistic sum(a) / sum(b): whole 9/15 = 0.6.
    # Left out: 8/13, 6/11, 4/6; mean m; se = sqrt(2/3 * sum((v - m)^2)); half = t(2) se.
    left = [8 / 13, 6 / 11, 4 / 6]
    mean = sum(left) / 3
    se = math.sqrt(2 / 3 * sum((v - mean) ** 2 for v in left))
    value, ci = jackknife_t(lambda t: t[0] / t[1], [[1, 2], [3, 4], [5, 9]])
    assert value == pytest.approx(0.6)
    assert ci == pytest.approx((0.6 - T_975[2] * se, 0.6 + T_975[2] * se))
    # Undefined with a cluster left out: no interval.
    assert jackknife_t(lambda t: t[0] / t[1] if t[1] else None, [[1, 2], [0, 0]])[1] is None


def results(records) -> dict:
    return {"seats": records[0]["seats"], "audit": {"decisions": section(records)}}


def test_pooling_sums_each_entrants_seats_per_episode():
    # Entrant X is s0 of episode A and s3 of episode B (the same hand-written play).
    a = results(episode(("X", "P", "Q", "R")))
    b = results(episode(("S", "T", "U", "X")))
    x = pool([a, b])["entrants"]["X"]
    assert x["episodes"] == 2
    # overreach: A's s0 4.0 over 2 bids, B's s3 4.5 over 1: R = 8.5 / 3; residuals
    # 4 - 2R = -5/3 and 4.5 - R = 5/3; se = sqrt(2 * 50/9) / 3 = 10/9; half = t(1) 10/9.
    overreach = x["figures"]["overreach"]
    assert overreach["value"] == pytest.approx(8.5 / 3)
    half = T_975[1] * 10 / 9
    assert overreach["ci"] == pytest.approx([8.5 / 3 - half, 8.5 / 3 + half])
    assert (overreach["ciMethod"], overreach["n"]) == ("ratio-t", 3)
    assert overreach["coverage"] == "too few episodes"  # 2, under the bench's 20
    # bluffRate, a share of counts: 1 of 2 bids in A, 1 of 1 in B, p = 2/3. The ratio
    # estimator's se: residuals 1 - 2p = -1/3 and 1 - p = 1/3, sqrt(2 * 2/9) / 3 = 2/9; its
    # effective sample size p(1 - p) / se^2 = (2/9) / (4/81) = 4.5, at most the 3 bids: 3.
    # Korn-Graubard scales it by (z / t(1))^2 for the one degree of freedom.
    bluff = x["figures"]["bluffRate"]
    assert bluff["value"] == pytest.approx(2 / 3) and bluff["ciMethod"] == "korn-graubard"
    assert bluff["ci"] == pytest.approx(exact(2 / 3, 3 * (Z_975 / T_975[1]) ** 2))
    # Grades add up: A's s0 one blunder, B's s3 two.
    assert x["grades"] == {"inaccuracy": 0, "mistake": 0, "blunder": 3, "decisions": 5}
    # blunderRate: 1 of 2 decisions in A, 2 of 3 in B: p = 3/5; residuals 1 - 2p = -1/5 and
    # 2 - 3p = 1/5, se = sqrt(2 * 2/25) / 5 = 2/25; n_eff = (6/25) / (4/625) = 37.5, so 5.
    blunders = x["figures"]["blunderRate"]
    assert blunders["value"] == pytest.approx(3 / 5) and blunders["n"] == 5
    assert blunders["ci"] == pytest.approx(exact(3 / 5, 5 * (Z_975 / T_975[1]) ** 2))
    assert x["figures"]["mistakeRate"]["value"] == 0.0
    # Calibration: bin 0 holds A's 5x6 and B's 5x5 (p 0, false), bin 9 A's 1x2 (true).
    assert x["calibration"][0] == {
        "low": 0.0, "high": 0.1, "bids": 2, "meanChance": 0.0, "trueRate": 0.0,
    }  # fmt: skip
    assert x["calibration"][9]["trueRate"] == 1.0
    # X faced R once in A (R's 5x5) and U twice in B; U bluffed 1 of 2 bids.
    assert x["opponents"]["R"]["faced"] == 1 and x["opponents"]["U"]["faced"] == 2
    assert x["opponents"]["U"]["challengeRate"] == 1.0
    assert x["opponents"]["U"]["bluffRate"] == 0.5


def test_two_seats_of_one_entrant_are_one_cluster():
    x = pool([results(episode(("X", "X", "Q", "R")))])["entrants"]["X"]
    # s0 and s1 together: 4 bids, 2 false.
    assert x["episodes"] == 1 and x["figures"]["bluffRate"]["value"] == 0.5
    assert x["figures"]["bluffRate"]["ci"] is None  # one episode: no spread to measure
    assert "why" in x["figures"]["bluffRate"]


def test_an_episode_without_the_section_is_one_clear_error():
    with pytest.raises(ValueError, match="episode 0 has no results.audit.decisions"):
        pool([{"seats": header()["seats"], "audit": {}}])


def test_the_reporter_runs_on_a_played_log_through_the_cli(tmp_path):
    log = tmp_path / "a.jsonl"
    played = subprocess.run(
        [sys.executable, "-m", "arena.cli", "play", "--deals", "40", "--seed", "5"]
        + ["--seat", "bayes", "--seat", "random", "--seat", "pressure", "--seat", "bayes"]
        + ["--log", str(log)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert played.returncode == 0, played.stderr
    audited = subprocess.run(
        [sys.executable, "-m", "arena.cli", "audit", str(log), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert audited.returncode == 0, audited.stderr
    seats = json.loads(audited.stdout)["decisions"]["seats"]
    records = [json.loads(line) for line in log.read_text().splitlines()]
    # Independent counts from the log: each seat's bids and its unforced challenges.
    for slot, seat in enumerate(seats):
        bids = [r for r in records if r["type"] == "bid" and r["slot"] == slot]
        chosen = [
            r for r in records if r["type"] == "challenge" and r["slot"] == slot and not r["forced"]
        ]
        assert seat["bids"] == len(bids)
        assert seat["challenges"] == len(chosen)
        assert seat["decisions"] == len(bids) + len(chosen)
    # The random seat (slot 1) bids far past its hand, the baselines do not.
    assert seats[1]["figures"]["overreach"] > seats[0]["figures"]["overreach"]


@pytest.mark.parametrize("mode", ["dice", "wild"])
def test_the_compiled_engines_read_out_is_the_python_engines_across_chunks(host, mode, tmp_path):
    # 3,000 deals of four seats make over 8,192 decisions: the compiled engine folds its C
    # table's rows in the same chunks as judging the log does, to the same float sums.
    specs = tuple(SeatSpec(s) for s in ("bayes", "pressure", "random", "colluder"))
    sections, logs = {}, {}
    for engine in ("compiled", "python"):
        request = EpisodeRequest(mode=mode, seed=5, deals=3000, seat_specs=specs, engine=engine)
        log = tmp_path / f"{engine}.jsonl"
        results, _ = run_episode(host, request, log, environ={})
        assert results.engine == engine
        sections[engine], logs[engine] = results.audit["decisions"], log.read_bytes()
    assert logs["compiled"] == logs["python"]
    assert sum(seat["decisions"] for seat in sections["python"]["seats"]) > 8192
    assert sections["compiled"] == sections["python"]
