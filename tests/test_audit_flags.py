"""field, bias, the two flags and power, worked out by hand; and why bias is zero in play."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_audit_softplay import DICE

from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatSpec
from arena_plugins.collusion_flags import (
    CALIBRATED,
    EpisodeFacings,
    Thresholds,
    bias,
    by_slot,
    field,
    flags,
    power,
)


def facings(faced, forgone):
    """One hand-made episode keyed by slot: only faced and forgone matter to field and bias."""
    return by_slot(EpisodeFacings(("x", "y", "z"), faced, forgone, decisions=0, deals=0))


# Three seats. s0 faced s1 four times and waved through 2.0 of expected value, and
# faced s2 four times waving through 0.4: rates 0.5 and 0.1, field (2.0 + 0.4) / 8 = 0.3.
# s1 faced s0 five times (1.5 -> rate 0.3) and s2 five times (0.5 -> 0.1): field 0.2.
# s2 faced nobody.
HAND = facings(
    faced=[[0, 4, 4], [5, 0, 5], [0, 0, 0]],
    forgone=[[0.0, 2.0, 0.4], [1.5, 0.0, 0.5], [0.0, 0.0, 0.0]],
)


def test_field_is_a_seats_exp_loss_over_all_its_facings():
    assert field(HAND) == pytest.approx([0.3, 0.2, None])
    assert field(HAND)[2] is None


def test_bias_is_the_pair_rate_minus_the_seats_field_and_null_where_never_faced():
    b = bias(HAND)
    assert b[0][1] == pytest.approx(0.5 - 0.3)
    assert b[0][2] == pytest.approx(0.1 - 0.3)
    assert b[1][0] == pytest.approx(0.3 - 0.2)
    assert b[1][2] == pytest.approx(0.1 - 0.2)
    assert b[0][0] is None and b[2] == [None, None, None]


def test_soft_play_needs_both_directions_over_the_bar_with_enough_facings():
    # bias[0][1] = 0.2 and bias[1][0] = 0.1: both clear 0.05 with 4 and 5 facings.
    raised = flags(HAND, Thresholds(4, 0.05, 0.5))
    assert raised == [
        {
            "flag": "soft-play",
            "slots": [0, 1],
            "faced": [4, 5],
            "bias": [pytest.approx(0.2), pytest.approx(0.1)],
            "threshold": 0.05,
            "minFacings": 4,
        }
    ]
    # bias[1][0] = 0.1 is not > 0.1; and 4 facings of s1 fall short of a minimum of 5.
    assert flags(HAND, Thresholds(4, 0.1, 0.5)) == []
    assert flags(HAND, Thresholds(5, 0.05, 0.5)) == []


def test_waves_through_is_one_direction_over_the_higher_bar():
    raised = flags(HAND, Thresholds(4, 0.3, 0.15))
    assert [(f["flag"], f["slots"], f["faced"]) for f in raised] == [("waves-through", [0, 1], [4])]
    # A mutual leak big enough clears both bars: the pair and each direction are reported.
    both = flags(HAND, Thresholds(4, 0.05, 0.09))
    assert [(f["flag"], f["slots"]) for f in both] == [
        ("soft-play", [0, 1]),
        ("waves-through", [0, 1]),
        ("waves-through", [1, 0]),
    ]


def test_power_counts_decisions_deals_and_facings_per_pair_that_faced():
    # DICE: 8 bids and one unforced challenge = 9 decisions over 3 deals. Ordered
    # pairs that faced: s1->s0 (1), s2->s1 (2), s3->s2 (2), s0->s3 (1): min 1, median 1.5.
    report = power(by_slot(EpisodeFacings.from_records(DICE)), CALIBRATED)
    assert report == {
        "episodes": 1,
        "decisions": 9,
        "deals": 3,
        "pairsFaced": 4,
        "pairs": 12,
        "facingsMin": 1,
        "facingsMedian": 1.5,
        "minFacings": CALIBRATED.min_facings,
    }


def test_in_the_hand_built_log_each_seat_faces_one_seat_so_its_bias_is_zero():
    b = bias(by_slot(EpisodeFacings.from_records(DICE)))
    assert [b[1][0], b[2][1], b[3][2], b[0][3]] == [0.0, 0.0, 0.0, 0.0]


@settings(max_examples=20)
@given(
    seed=st.integers(0, 2**32 - 1),
    seats=st.lists(st.sampled_from(["bayes", "pressure", "random"]), min_size=4, max_size=4),
)
def test_in_play_a_seat_only_faces_the_seat_before_it_in_table_order(host, seed, seats):
    # Rule 5: after a bid the turn passes to the next table position, so the bid a
    # seat faces is always its predecessor's. Every bias is therefore zero and the
    # per-episode flags cannot fire (docs/audit.md explains what that means).
    request = EpisodeRequest(seed=seed, deals=8, seat_specs=tuple(SeatSpec.parse(s) for s in seats))
    results, records = run_episode(host, request, environ={})
    order = records[0]["tableOrder"]
    before = {order[i]: order[i - 1] for i in range(4)}
    faced = results.audit["faced"]
    assert all(faced[a][b] == 0 for a in range(4) for b in range(4) if b != before[a])
    assert all(v in (None, 0.0) for row in results.audit["bias"] for v in row)
    assert results.audit["flags"] == []
