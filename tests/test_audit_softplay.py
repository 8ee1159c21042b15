"""The soft-play audit's five figures (rules.md, "Soft-play audit"), worked out by hand.

Every log here is written line by line in the test; the expected figures are
derived in the comments from the rulebook, with the binomial tails computed by
:func:`audit_logs.tail`, which is independent of ``arena.probability``.
"""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from audit_logs import DICE, bid, challenge, deal, episode, result, tail
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.eventlog import read_log
from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatSpec
from arena_plugins.softplay import tally

P15 = {k: tail(15, k, Fraction(1, 6)) for k in range(6)}
# P15[2] = 1 - (5/6)^15 - 15 (1/6)(5/6)^14 = 0.7404 -> 1 - 2p < 0: nothing forgone
# P15[3] = 0.4678 -> 1 - 2p = 0.0644;  P15[4] = 0.2315;  P15[5] = 0.0898 -> 1 - 2p = 0.8205


@pytest.fixture
def dice_log(tmp_path):
    """The log above, written to a file and read back through the checked reader."""
    path = tmp_path / "dice.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in DICE))
    return read_log(path)


def test_faced_counts_every_decision_with_a_bid_standing_but_not_forced_ones(dice_log):
    # s1 faced s0 in deal 0; s2 faced s1 in deals 0 (a fallback bid: still s2's) and 1;
    # s3 faced s2 in deal 1 (a fallback challenge) and deal 2; s0 faced s3 in deal 2.
    # The two forced challenges (s3 in deal 0, s1 in deal 2) are nobody's decision.
    assert tally(dice_log).faced == [
        [0, 0, 0, 1],
        [1, 0, 0, 0],
        [0, 2, 0, 0],
        [0, 0, 2, 0],
    ]


def test_challenged_counts_unforced_challenges_including_a_fallback(dice_log):
    # Only deal 1's challenge was a decision (s3 on s2, made by the fallback).
    assert tally(dice_log).challenged == [
        [0, 0, 0, 0],
        [0, 0, 0, 0],
        [0, 0, 0, 0],
        [0, 0, 1, 0],
    ]


def test_net_moves_one_point_per_challenge_forced_or_not(dice_log):
    # Deal 0 (forced): s3 takes one from s2. Deal 1: s2 takes one back from s3.
    # Deal 2 (forced): s1 takes one from s0.
    net = tally(dice_log).net
    assert net == [
        [0, -1, 0, 0],
        [1, 0, 0, 0],
        [0, 0, 0, 0],
        [0, 0, 0, 0],
    ]
    assert [sum(row) for row in net] == DICE[-1]["points"]


def test_exp_loss_averages_what_raising_forwent_over_all_facings(dice_log):
    exp_loss = tally(dice_log).exp_loss
    # s0 vs s3: one facing, raised over 6x1 holding one 1: need 5 -> 1 - 2 P15[5] = 0.8205.
    assert exp_loss[0][3] == pytest.approx(0.8205, abs=1e-4)
    assert exp_loss[0][3] == pytest.approx(1 - 2 * P15[5])
    # s2 vs s1: two facings, both raised: need 2 (0.7404 -> 0) and need 3 (-> 0.0644); / 2.
    assert exp_loss[2][1] == pytest.approx(0.0322, abs=1e-4)
    assert exp_loss[2][1] == pytest.approx((0 + (1 - 2 * P15[3])) / 2)
    # s3 vs s2: the challenge forwent nothing; the raise over 2x4 held both 4s (p = 1): 0 / 2.
    assert exp_loss[3][2] == 0
    # s1 vs s0: raised over 2x1 with need 2 (p = 0.7404): 0. Pairs that never faced: 0.
    assert exp_loss[1][0] == 0
    assert exp_loss[0][1] == exp_loss[1][2] == exp_loss[3][0] == 0


def test_bands_sort_each_facing_by_what_a_challenge_was_worth(dice_log):
    # Band 0: worth nothing (pTrue >= 1/2); band k: worth ((k - 1) / 10, k / 10].
    # s1 on 2x1 (need 2, .7404) and s2 on 5x3 (need 2): worth 0, band 0, nothing forgone.
    # s2 on 3x6 (need 3, .4678): worth 0.0644, band 1, raised: 0.0644 forgone.
    # s3 calls 4x2 (need 4, .2315): worth 0.537, band 6, challenged: nothing forgone.
    # s3 on 2x4 holding both 4s: band 0. s0 on 6x1 (need 5): worth 0.8205, band 9, raised.
    soft = tally(dice_log)
    cells = {
        (a, b, k): (n, soft.band_forgone[a][b][k])
        for a in range(4)
        for b in range(4)
        for k, n in enumerate(soft.band_faced[a][b])
        if n
    }
    assert cells == {
        (1, 0, 0): (1, 0.0),
        (2, 1, 0): (1, 0.0),
        (2, 1, 1): (1, pytest.approx(1 - 2 * P15[3])),
        (3, 2, 0): (1, 0.0),
        (3, 2, 6): (1, 0.0),
        (0, 3, 9): (1, pytest.approx(1 - 2 * P15[5])),
    }
    assert all(sum(soft.band_faced[a][b]) == soft.faced[a][b] for a in range(4) for b in range(4))
    assert soft.forgone[0][3] == pytest.approx(0.8205, abs=1e-4)


def test_bluff_rate_is_the_share_of_false_bids_fallbacks_included(dice_log):
    # s0: 2x1 true, 7x1 false. s1: 5x3 false, 3x6 true. s2: 5x5 (fallback) false,
    # 4x2 true, 2x4 true. s3: 6x1 false.
    assert tally(dice_log).bluff_rate == [1 / 2, 1 / 2, 1 / 3, 1.0]


def test_bluff_rate_is_null_for_a_seat_that_never_bid(tmp_path):
    log = [
        episode("dice", [1, 2, 3, 4, 5, 6], 5, max_bids=12, deals=1),
        deal(0, 0, [[1, 1, 1, 1, 1], [2, 2, 2, 2, 2], [3, 3, 3, 3, 3], [4, 4, 4, 4, 4]]),
        bid(0, 0, 6, 1),  # 1s: 5 < 6, false
        challenge(0, 1, 0, 6, 1, 5, 1, 0),
        result([-1, 1, 0, 0], 1),
    ]
    assert tally(log).bluff_rate == [1.0, None, None, None]


def test_poker_prices_with_p_one_tenth_over_24_unseen_digits():
    # Poker: 4 seats x 8 digits, so a seat cannot see 24 digits, each a 7 with p = 1/10.
    # s2 holds one 7 and raises over s1's 5x7: need 4.
    # P(X >= 4 | 24, 1/10) = 1 - .9^24 - 24(.1)(.9^23) - 276(.01)(.9^22) - 2024(.001)(.9^21)
    #                      = 1 - 0.079766 - 0.212711 - 0.271797 - 0.221464 = 0.214262
    # so expLoss[2][1] = 1 - 2 x 0.214262 = 0.571476. (With dice's p = 1/6 the tail would
    # be 0.584 and nothing forgone.)
    log = [
        episode("poker", list(range(10)), 8, max_bids=12, deals=1),
        deal(
            0,
            0,
            [
                [7, 1, 2, 3, 4, 5, 6, 8],
                [7, 7, 0, 0, 1, 1, 2, 2],
                [7, 9, 9, 3, 3, 4, 4, 5],
                [0, 1, 2, 3, 4, 5, 6, 8],
            ],
        ),  # fmt: skip
        bid(0, 0, 2, 9),  # 9s: 2, true
        bid(0, 1, 5, 7),  # s1 faces 2x9 holding no 9: need 2 (p 0.7075: 0). 7s: 4 < 5, false
        bid(0, 2, 6, 4),  # s2 faces 5x7: need 4. 4s: 1 + 2 + 1 = 4 < 6, false
        challenge(0, 3, 2, 6, 4, 4, 3, 2),
        result([0, 0, -1, 1], 1),
    ]
    soft = tally(log)
    assert soft.exp_loss[2][1] == pytest.approx(0.571476, abs=1e-6)
    assert soft.exp_loss[2][1] == pytest.approx(1 - 2 * tail(24, 4, Fraction(1, 10)))
    assert soft.exp_loss[1][0] == 0
    assert soft.bluff_rate == [0.0, 1.0, 1.0, None]


def test_wild_prices_pTrue_and_bluffs_by_the_wild_ones_counting():
    # Wild (seed 002): 4 seats x 5 dice, 15 unseen; a one counts for every face but ones.
    # s1 faces s0's 3x5 holding one 1 (it counts for 5): need 2 of 15 at p = 1/3, 0.981:
    # nothing forgone. s2 faces s1's 8x4 holding no 4 and no 1: need 8 at p = 1/3,
    # P = 0.088232, so expLoss[2][1] = 1 - 2 x 0.088232 = 0.823537 (at dice's p = 1/6
    # the tail would be 0.0013 and the figure 0.997). s2 converts to ones, 4x1 (half of 8).
    # Table counts: 5s = one 5 (s0) + one 5 (s2) + three ones = 5 >= 3, true;
    # 4s = two 4s + three ones = 5 < 8, false; ones = 3 < 4, false.
    header = episode("wild", [1, 2, 3, 4, 5, 6], 5, max_bids=12, deals=1)
    header |= {"wild": 1, "raiseRule": "wild-ones"}
    log = [
        header,
        deal(0, 0, [[2, 3, 5, 6, 6], [1, 4, 4, 2, 3], [2, 2, 3, 5, 6], [1, 1, 6, 6, 6]]),
        bid(0, 0, 3, 5),
        bid(0, 1, 8, 4),
        bid(0, 2, 4, 1),
        challenge(0, 3, 2, 4, 1, 3, 3, 2),
        result([0, 0, -1, 1], 1),
    ]
    soft = tally(log)
    assert soft.exp_loss[1][0] == 0
    assert soft.exp_loss[2][1] == pytest.approx(0.823537, abs=1e-6)
    assert soft.exp_loss[2][1] == pytest.approx(1 - 2 * tail(15, 8, Fraction(1, 3)))
    assert soft.bluff_rate == [0.0, 1.0, 1.0, None]


def test_audit_lines_already_in_a_log_change_nothing(dice_log):
    flagged = {"type": "audit", "reporter": "flags", "flag": {"flag": "x", "slots": [0, 1]}}
    assert tally([*dice_log, flagged]) == tally(dice_log)


@settings(max_examples=40)
@given(
    seed=st.integers(0, 2**32 - 1),
    mode=st.sampled_from(["dice", "poker"]),
    seats=st.lists(st.sampled_from(["bayes", "pressure", "random"]), min_size=4, max_size=4),
)
def test_net_is_antisymmetric_and_sums_to_each_seats_points(host, seed, mode, seats):
    request = EpisodeRequest(
        mode=mode, seed=seed, deals=6, seat_specs=tuple(SeatSpec.parse(s) for s in seats)
    )
    results, records = run_episode(host, request, environ={})
    net = tally(records).net
    assert all(net[a][b] == -net[b][a] for a in range(4) for b in range(4))
    assert [sum(row) for row in net] == results.points
