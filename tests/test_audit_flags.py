"""field, expected, bias, the two flags and power, worked out by hand; and why bias is
zero in play."""

from __future__ import annotations

import pytest
from audit_logs import DICE
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatSpec
from arena_plugins.collusion_flags import (
    CALIBRATED,
    SLOTS,
    EpisodeFacings,
    Thresholds,
    by_slot,
    flags,
    pool,
    power,
)

BANDS = 11  # band 0 (nothing to forgo) and bands 1..10 of the challenge's worth


def episode(cells: dict[tuple[int, int, int], tuple[int, float]], seats: int = 3):
    """A hand-made episode: ``cells[a, b, band] = (facings, forgone)``; every other cell 0."""
    faced = [[[0] * BANDS for _ in range(seats)] for _ in range(seats)]
    forgone = [[[0.0] * BANDS for _ in range(seats)] for _ in range(seats)]
    for (a, b, k), (n, g) in cells.items():
        faced[a][b][k], forgone[a][b][k] = n, g
    return EpisodeFacings(("x", "y", "z")[:seats], faced, forgone, decisions=0, deals=0)


# Three seats; bands 3 (a challenge worth 0.2 .. 0.3) and 8 (worth 0.7 .. 0.8).
# s0 faced s1 4 times: 2 bids worth 0.75 in band 8, both waved through (1.5), and
#   2 worth 0.25 in band 3, both waved (0.5): expLoss[0][1] = 2.0 / 4 = 0.5.
# s0 faced s2 4 times, all worth 0.25 in band 3, one waved: expLoss[0][2] = 0.25 / 4 = 0.0625.
#   field[0] = (2.0 + 0.25) / 8 = 0.28125.
#   s0's band rates: band 8: 1.5 / 2 = 0.75; band 3: (0.5 + 0.25) / 6 = 0.125.
#   expected[0][1] = (2 x 0.75 + 2 x 0.125) / 4 = 0.4375 -> bias[0][1] = 0.0625
#     (s1's bids were more beatable; against field[0] the bias would read 0.21875)
#   expected[0][2] = 0.125 -> bias[0][2] = 0.0625 - 0.125 = -0.0625
# s1 faced s0 4 times in band 8 (0.75 each), waving all 4 (3.0): expLoss[1][0] = 0.75,
#   and s2 4 times in band 8, waving one (0.75): expLoss[1][2] = 0.1875.
#   field[1] = 3.75 / 8 = 0.46875 = its band 8 rate = expected[1][0] = expected[1][2]
#   bias[1][0] = 0.28125, bias[1][2] = -0.28125.
# s2 faced nobody.
HAND = by_slot(
    episode(
        {
            (0, 1, 8): (2, 1.5),
            (0, 1, 3): (2, 0.5),
            (0, 2, 3): (4, 0.25),
            (1, 0, 8): (4, 3.0),
            (1, 2, 8): (4, 0.75),
        }
    )
)


def test_field_is_a_seats_exp_loss_over_all_its_facings():
    assert HAND.field == pytest.approx([0.28125, 0.46875, None])
    assert HAND.field[2] is None


def test_expected_is_the_seats_own_band_rates_weighted_by_the_pairs_facings():
    assert HAND.expected == [
        [None, pytest.approx(0.4375), pytest.approx(0.125)],
        [pytest.approx(0.46875), None, pytest.approx(0.46875)],
        [None, None, None],
    ]


def test_bias_is_the_pair_rate_minus_the_expected_rate_and_null_where_never_faced():
    b = HAND.bias
    assert b[0][1] == pytest.approx(0.0625)
    assert b[0][2] == pytest.approx(-0.0625)
    assert b[1][0] == pytest.approx(0.28125)
    assert b[1][2] == pytest.approx(-0.28125)
    assert b[0][0] is None and b[2] == [None, None, None]


def test_with_every_facing_in_one_band_expected_is_the_field():
    # The sibling's formula: s0 faced s1 4 times (2.0 forgone) and s2 4 times (0.4), all
    # in band 5: rates 0.5 and 0.1, field and expected 2.4 / 8 = 0.3, biases 0.2 and -0.2.
    one = by_slot(episode({(0, 1, 5): (4, 2.0), (0, 2, 5): (4, 0.4)}))
    assert one.expected[0] == [None, pytest.approx(0.3), pytest.approx(0.3)]
    assert one.bias[0] == [None, pytest.approx(0.2), pytest.approx(-0.2)]


def test_soft_play_needs_both_directions_over_the_bar_with_enough_facings():
    # bias[0][1] = 0.0625 and bias[1][0] = 0.28125: both clear 0.05 with 4 facings each.
    raised = flags(HAND, Thresholds(4, 0.05, 0.5))
    assert raised == [
        {
            "flag": "soft-play",
            "slots": [0, 1],
            "faced": [4, 4],
            "bias": [pytest.approx(0.0625), pytest.approx(0.28125)],
            "threshold": 0.05,
            "minFacings": 4,
        }
    ]
    # bias[0][1] = 0.0625 is not > 0.07; and 4 facings fall short of a minimum of 5.
    assert flags(HAND, Thresholds(4, 0.07, 0.5)) == []
    assert flags(HAND, Thresholds(5, 0.05, 0.5)) == []


def test_waves_through_is_one_direction_over_the_higher_bar():
    raised = flags(HAND, Thresholds(4, 0.1, 0.2))
    assert [(f["flag"], f["slots"], f["faced"]) for f in raised] == [("waves-through", [1, 0], [4])]
    # A mutual leak big enough clears both bars: the pair and each direction are reported.
    both = flags(HAND, Thresholds(4, 0.05, 0.06))
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
    b = by_slot(EpisodeFacings.from_records(DICE)).bias
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


@settings(max_examples=20)
@given(seed=st.integers(0, 2**32), seats=st.integers(2, 6))
def test_one_episode_by_slot_is_the_pool_of_that_episode(host, seed, seats):
    """by_slot takes the episode's numbers as they are; pooling the one episode (every
    cell summed, exactly rounded) gives the same figures, flags and power."""
    specs = (SeatSpec("colluder"), SeatSpec("random"), SeatSpec("colluder"))
    request = EpisodeRequest(seed=seed, deals=30, seats=seats, seat_specs=specs[:seats])
    _, records = run_episode(host, request, environ={})
    facings = EpisodeFacings.from_records(records)
    quick, pooled = by_slot(facings), pool([facings], SLOTS, lambda _, slot: slot)
    assert (quick.keys, quick.together) == (pooled.keys, pooled.together)
    assert (quick.band_faced, quick.band_forgone) == (pooled.band_faced, pooled.band_forgone)
    low = Thresholds(min_facings=1, soft_play=-1.0, waves_through=-1.0)
    assert flags(quick, low) == flags(pooled, low) and flags(quick, low)
    assert power(quick, CALIBRATED) == power(pooled, CALIBRATED)
