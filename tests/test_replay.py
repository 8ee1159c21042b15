"""The independent referee: it accepts honest logs and catches every kind of tampering.

A referee that passes everything proves nothing, so each of its checks is
shown failing on a log altered in exactly that respect: first on a short log
written by hand from the rulebook, then on engine logs with rule 11 in play.
"""

from __future__ import annotations

import copy
import json
import re

import pytest
from referee import RefereeError, replay

from arena.eventlog import read_log
from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatSpec


def bid(deal, slot, q, f, fallback=False, say=None, published=None):
    return {
        "type": "bid",
        "deal": deal,
        "slot": slot,
        "quantity": q,
        "face": f,
        "say": say,
        "published": published,
        "notes": None,
        "fallback": fallback,
    }


def challenge(deal, slot, bidder, q, f, actual, forced, winner, loser, fallback=False):
    return {
        "type": "challenge",
        "deal": deal,
        "slot": slot,
        "bidder": bidder,
        "quantity": q,
        "face": f,
        "actual": actual,
        "forced": forced,
        "fallback": fallback,
        "winner": winner,
        "loser": loser,
        "say": None,
        "published": None,
        "notes": None,
    }


def hand_written() -> list[dict]:
    """Two seats, table order [1, 0], a cap of 2 bids, two deals, worked by hand.

    Deal 0 opens at position 0 = slot 1. Slot 1 bids 2x2, slot 0 bids 3x2; the cap is
    reached, so position 0 (slot 1) is forced to challenge. Twos on the table: two in
    slot 0's hand, one in slot 1's = 3 >= 3, so the bidder (slot 0) wins.
    Deal 1 opens at position 1 = slot 0, which bids 3x5; slot 1 challenges. Fives: three,
    all in slot 0's hand, 3 >= 3: slot 0 wins again. Points [2, -2]; over 2 deals the
    scores are 0.5 + 2/4 = 1.0 and 0.5 - 2/4 = 0.0.
    """
    return [
        {
            "type": "episode",
            "version": 2,
            "seed": 0,
            "mode": "dice",
            "symbols": [1, 2, 3, 4, 5, 6],
            "handSize": 5,
            "seats": [{"slot": 0, "policy": "alice"}, {"slot": 1, "policy": "bob"}],
            "tableOrder": [1, 0],
            "deals": 2,
            "maxBidsPerDeal": 2,
            "talk": False,
        },
        {"type": "deal", "deal": 0, "opener": 1, "hands": [[2, 2, 3, 4, 5], [2, 6, 6, 1, 1]]},
        bid(0, 1, 2, 2),
        bid(0, 0, 3, 2),
        challenge(0, 1, 0, 3, 2, actual=3, forced=True, winner=0, loser=1),
        {"type": "deal", "deal": 1, "opener": 0, "hands": [[5, 5, 5, 1, 2], [3, 3, 4, 4, 6]]},
        bid(1, 0, 3, 5),
        challenge(1, 1, 0, 3, 5, actual=3, forced=False, winner=0, loser=1),
        {
            "type": "result",
            "status": "complete",
            "dealsPlayed": 2,
            "points": [2, -2],
            "score": [1.0, 0.0],
        },
    ]


def test_the_hand_written_log_is_a_valid_event_log_and_passes(tmp_path):
    path = tmp_path / "hand.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in hand_written()), encoding="utf-8")
    records = read_log(path)  # the arena's own reader accepts it as a log
    summary = replay(records)
    assert summary.points == [2, -2]
    assert summary.decisions_per_deal == [3, 2]
    assert (summary.forced, summary.deals_played, summary.status) == (1, 2, "complete")


def test_audit_flags_may_trail_the_result():
    records = hand_written() + [{"type": "audit", "reporter": "flags", "flag": {"pair": [0, 1]}}]
    assert replay(records).points == [2, -2]


def tamper(change) -> list[dict]:
    records = copy.deepcopy(hand_written())
    change(records)
    return records


def put(index, **fields):
    def change(records):
        records[index].update(fields)

    return change


def drop(index):
    def change(records):
        del records[index]

    return change


def insert(index, record):
    def change(records):
        records.insert(index, record)

    return change


TAMPERING = {
    "table order not a permutation": (put(0, tableOrder=[1, 1]), "rule 1: table order"),
    "wrong opener": (put(1, opener=0), "rule 1: deal 0 opens at slot 0"),
    "wrong seat acts": (put(2, slot=0), "it is slot 1's turn"),
    "a turn skipped": (put(3, slot=1), "it is slot 0's turn"),
    "quantity zero": (put(2, quantity=0), "rule 3: quantity 0 outside 1..10"),
    "quantity above seats x hand": (put(3, quantity=11), "rule 3: quantity 11 outside 1..10"),
    "face out of range": (put(2, face=7), "rule 3: face 7"),
    "equal bid": (put(3, quantity=2, face=2), "rule 4: 2x2 does not strictly raise 2x2"),
    "lower face": (put(3, quantity=2, face=1), "rule 4: 2x1 does not strictly raise 2x2"),
    "bid past the cap": (insert(4, bid(0, 1, 4, 2)), "rule 8: a bid after the cap"),
    "cap reached, not forced": (put(4, forced=False), "rule 8: forced is False"),
    "forced before the cap": (put(7, forced=True), "rule 8: forced is True"),
    "forced challenge marked fallback": (put(4, fallback=True), "forced challenge marked"),
    "challenge names another bid": (put(4, quantity=2), "the standing bid is 3x2"),
    "opening challenge": (
        lambda r: (r.pop(6), r[6].update(slot=0)),
        "rule 3: a challenge with no standing bid",
    ),
    "wrong count": (put(4, actual=4), "rule 6: actual 4, the hands hold 3"),
    "hands changed under the count": (
        put(1, hands=[[2, 2, 3, 4, 5], [6, 6, 6, 1, 1]]),
        "rule 6: actual 3, the hands hold 2",
    ),
    "winner and loser swapped": (put(7, winner=1, loser=0), "rule 6: 3x5 against an actual 3"),
    "short hand": (put(5, hands=[[5, 5, 5, 1], [3, 3, 4, 4, 6]]), "hand [5, 5, 5, 1] is not 5"),
    "deal skipped": (put(5, deal=2), "deal 2 where 1 is due"),
    "deal left open": (drop(7), "settled in the middle of a deal"),
    "fallback without a rejection": (put(6, fallback=True), "rule 11: fallback is True"),
    "wrong points": (put(8, points=[1, -1]), "points [1, -1] != [2, -2]"),
    "wrong score": (put(8, score=[0.75, 0.25]), "score [0.75, 0.25] != 0.5 + points"),
    "complete too early": (put(8, dealsPlayed=1), "dealsPlayed 1, 2 resolved"),
    "deadline with every deal played": (put(8, status="deadline"), "rule 9: deadline"),
    "no result": (drop(8), "no result line"),
    "a line after the result": (insert(9, bid(1, 0, 4, 5)), "a line after the result"),
    "an audit flag before the result": (
        insert(8, {"type": "audit", "reporter": "flags", "flag": {}}),
        "an audit flag before the result",
    ),
    "talk published with talk off": (put(6, say="hi", published="hi"), "talk published"),
    "unknown record": (insert(2, {"type": "wink", "deal": 0}), "unknown record type 'wink'"),
    "third rejection": (
        lambda r: [
            r.insert(2, {"type": "rejected", "deal": 0, "slot": 1, "reason": "x", "reply": "x"})
            for _ in range(3)
        ],
        "rule 11: a third ask",
    ),
    "rejection without a reason": (
        insert(2, {"type": "rejected", "deal": 0, "slot": 1, "reason": " ", "reply": "?"}),
        "without a reason",
    ),
    "rejection of a seat not on turn": (
        insert(2, {"type": "rejected", "deal": 0, "slot": 0, "reason": "x", "reply": "?"}),
        "it is slot 1's turn",
    ),
    "forced seat was asked": (
        insert(4, {"type": "rejected", "deal": 0, "slot": 1, "reason": "x", "reply": "?"}),
        "the seat was asked although the cap forces",
    ),
}


@pytest.mark.parametrize("case", sorted(TAMPERING))
def test_the_referee_catches(case):
    change, message = TAMPERING[case]
    with pytest.raises(RefereeError, match=re.escape(message)):
        replay(tamper(change))


def test_two_rejections_then_a_marked_fallback_pass():
    def retried(records):
        for _ in range(2):
            records.insert(
                2, {"type": "rejected", "deal": 0, "slot": 1, "reason": "bad", "reply": "?"}
            )
        records[4]["fallback"] = True

    # The fallback move is checked against bayes' line: slot 1 holds 2 6 6 1 1 and opens.
    # Its most-held faces are 1 and 6 (two each); 2 + floor(5 / 6) = 2: 2x1 or 2x6, not 2x2.
    with pytest.raises(RefereeError, match="bayes at slot 1"):
        replay(tamper(retried))

    def retried_bayes_move(records):
        retried(records)
        records[4].update(quantity=2, face=6)
        records[5].update(quantity=3, face=6)  # slot 0 raises 2x6 to 3x6
        records[6].update(quantity=3, face=6, actual=2, winner=1, loser=0)
        records[-1].update(points=[0, 0], score=[0.5, 0.5])

    summary = replay(tamper(retried_bayes_move))
    assert summary.fallbacks == [0, 1] and summary.rejected == [0, 2]


def test_a_missing_fallback_mark_after_two_rejections_is_caught():
    def retried_unmarked(records):
        for _ in range(2):
            records.insert(
                2, {"type": "rejected", "deal": 0, "slot": 1, "reason": "bad", "reply": "?"}
            )

    with pytest.raises(RefereeError, match=r"rule 11: fallback is False after 2 rejection"):
        replay(tamper(retried_unmarked))


def test_a_fault_means_an_immediate_fallback():
    def faulted(records):
        records.insert(2, {"type": "fault", "deal": 0, "slot": 1, "reason": "down"})

    with pytest.raises(RefereeError, match="fallback is False after 0 rejection"):
        replay(tamper(faulted))


# --- engine logs ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def lively(misbehaving_host):
    """An engine episode with rejections, faults, fallbacks and forced challenges in it."""
    specs = tuple(SeatSpec(n) for n in ("misbehaving", "bayes", "misbehaving", "pressure"))
    for seed in range(100):
        request = EpisodeRequest(seed=seed, deals=8, seats=4, seat_specs=specs, max_bids=5)
        results, records = run_episode(misbehaving_host, request, environ={})
        kinds = {r["type"] for r in records}
        forced = any(r.get("forced") for r in records)
        fell_back = any(r.get("fallback") for r in records)
        if {"rejected", "fault"} <= kinds and forced and fell_back:
            return results.to_json(), records
    raise AssertionError("no seed under 100 exercised every rule-11 path")


def test_an_engine_log_with_rule_11_in_play_passes(lively):
    results, records = lively
    summary = replay(records, results)
    assert sum(summary.fallbacks) >= 1 and sum(summary.rejected) >= 1 and sum(summary.faults) >= 1
    assert summary.forced >= 1 and summary.baseline_moves_checked >= 1


def test_the_referee_catches_a_fallback_that_is_not_bayes_move(lively):
    results, records = lively
    records = copy.deepcopy(records)
    top = records[0]["handSize"] * len(records[0]["seats"])
    fallback = next(
        r for r in records if r["type"] == "bid" and r["fallback"] and r["quantity"] < top
    )
    # One more of the same face: still a legal raise, but never bayes' line, which bids
    # the lowest quantity among its likeliest raises (or opens at a fixed quantity).
    fallback["quantity"] += 1
    with pytest.raises(RefereeError, match=f"line {records.index(fallback) + 1}: bayes at slot"):
        replay(records)


def test_the_referee_catches_results_that_disagree_with_the_log(lively):
    results, records = lively
    for key, value in [("decisions", -1), ("rejected", 99), ("fallbacks", 99), ("faults", 99)]:
        bad = copy.deepcopy(results)
        bad["seats"][0][key] = value
        with pytest.raises(RefereeError, match="results seat 0"):
            replay(records, bad)
    bad = copy.deepcopy(results)
    bad["status"] = "deadline"
    with pytest.raises(RefereeError, match="results status"):
        replay(records, bad)


def wild_written(second_bid: tuple[int, int]) -> list[dict]:
    """The wild-ones game by hand: one deal, two seats, ones wild except in a bid on ones.

    Slot 0 opens 5x4, slot 1 bids ``second_bid``, slot 0 challenges. Hands: slot 0
    [1, 4, 4, 2, 3], slot 1 [1, 1, 6, 6, 5]. Fours: two 4s + three ones = 5; ones alone: 3.
    """
    q, f = second_bid
    actual = {1: 3, 4: 5, 6: 5}[f]
    truthful = actual >= q
    return [
        {
            "type": "episode", "version": 2, "seed": 0, "mode": "wild",
            "symbols": [1, 2, 3, 4, 5, 6], "handSize": 5,
            "seats": [{"slot": 0, "policy": "alice"}, {"slot": 1, "policy": "bob"}],
            "tableOrder": [0, 1], "deals": 1, "maxBidsPerDeal": 12, "talk": False,
            "wild": 1, "raiseRule": "wild-ones",
        },
        {"type": "deal", "deal": 0, "opener": 0, "hands": [[1, 4, 4, 2, 3], [1, 1, 6, 6, 5]]},
        bid(0, 0, 5, 4),
        bid(0, 1, q, f),
        challenge(0, 0, 1, q, f, actual, False, *((1, 0) if truthful else (0, 1))),
        {
            "type": "result", "status": "complete", "dealsPlayed": 1,
            "points": [-1, 1] if truthful else [1, -1],
            "score": [0.0, 1.0] if truthful else [1.0, 0.0],
        },
    ]  # fmt: skip


def test_the_referee_reads_the_wild_ones_rules_from_the_header():
    # After 5x4, 3x1 is legal (half of 5 rounded up); three ones are out: true.
    assert replay(wild_written((3, 1))).points == [-1, 1]
    # After 5x4, 5x6 is an ordinary raise; sixes: two 6s + three ones = 5: true.
    assert replay(wild_written((5, 6))).points == [-1, 1]
    # After 5x4, 2x1 is below the conversion.
    with pytest.raises(RefereeError, match=re.escape("rule 4 (wild-ones): 2x1 does not raise")):
        replay(wild_written((2, 1)))
    # Counting with the ones: a log claiming only the two 6s for a bid on 6 is caught.
    tampered = wild_written((5, 6))
    tampered[4] |= {"actual": 2, "winner": 0, "loser": 1}
    with pytest.raises(RefereeError, match="the hands hold 5 of face 6"):
        replay(tampered)
