"""Soft-play audit logs written line by line, shared by the audit tests.

``tail`` is the binomial tail summed term by term, independent of ``arena.probability``;
``DICE`` is a three-deal dice log whose figures tests/test_audit_softplay.py works out.
"""

from __future__ import annotations

from fractions import Fraction
from math import comb


def tail(unseen: int, need: int, p: Fraction) -> float:
    """P(X >= need), X ~ Binomial(unseen, p), summed term by term."""
    if need <= 0:
        return 1.0
    return float(
        sum(comb(unseen, i) * p**i * (1 - p) ** (unseen - i) for i in range(need, unseen + 1))
    )


def episode(mode: str, symbols: list[int], hand_size: int, max_bids: int, deals: int) -> dict:
    return {
        "type": "episode", "version": 2, "seed": 0, "mode": mode, "symbols": symbols,
        "handSize": hand_size, "seats": [{"slot": s, "policy": "hand"} for s in range(4)],
        "tableOrder": [0, 1, 2, 3], "deals": deals, "maxBidsPerDeal": max_bids, "talk": False,
    }  # fmt: skip


def deal(number: int, opener: int, hands: list[list[int]]) -> dict:
    return {"type": "deal", "deal": number, "opener": opener, "hands": hands}


def bid(number: int, slot: int, quantity: int, face: int, fallback: bool = False) -> dict:
    return {
        "type": "bid", "deal": number, "slot": slot, "quantity": quantity, "face": face,
        "say": None, "published": None, "notes": None, "fallback": fallback,
    }  # fmt: skip


def challenge(number, slot, bidder, quantity, face, actual, winner, loser, forced=False,
              fallback=False) -> dict:  # fmt: skip
    return {
        "type": "challenge", "deal": number, "slot": slot, "bidder": bidder,
        "quantity": quantity, "face": face, "actual": actual, "forced": forced,
        "fallback": fallback, "winner": winner, "loser": loser, "say": None,
        "published": None, "notes": None,
    }  # fmt: skip


def result(points: list[int], deals: int) -> dict:
    score = [0.5 + p / (2 * deals) for p in points]
    return {"type": "result", "status": "complete", "dealsPlayed": deals, "points": points,
            "score": score}  # fmt: skip


# Dice, 4 seats, table order 0 1 2 3, bid cap 3: unseen = 3 x 5 = 15 dice, p = 1/6.
DICE = [
    episode("dice", [1, 2, 3, 4, 5, 6], 5, max_bids=3, deals=3),
    deal(0, 0, [[1, 1, 2, 3, 4], [2, 2, 5, 6, 6], [3, 3, 3, 4, 5], [6, 6, 6, 1, 2]]),
    bid(0, 0, 2, 1),  # 1s on the table: 2 + 1 = 3 >= 2, true
    bid(0, 1, 5, 3),  # s1 faces s0's 2x1 holding no 1: need 2. 3s: 1 + 3 = 4 < 5, a bluff
    bid(0, 2, 5, 5, fallback=True),  # s2 faces s1's 5x3 holding three 3s: need 2; 5s: 2, false
    challenge(0, 3, 2, 5, 5, 2, 3, 2, forced=True),  # the cap: forced, s3 +1, s2 -1
    deal(1, 1, [[6, 6, 6, 6, 5], [1, 2, 3, 4, 5], [2, 2, 2, 2, 1], [3, 4, 5, 6, 1]]),
    bid(1, 1, 3, 6),  # 6s: 4 + 1 = 5 >= 3, true
    bid(1, 2, 4, 2),  # s2 faces 3x6 holding no 6: need 3. 2s: 1 + 4 = 5 >= 4, true
    challenge(1, 3, 2, 4, 2, 5, 2, 3, fallback=True),  # s3, no 2s, calls 4x2: s2 +1, s3 -1
    deal(2, 2, [[1, 2, 3, 4, 5], [6, 6, 5, 5, 4], [1, 1, 1, 2, 2], [4, 4, 3, 3, 2]]),
    bid(2, 2, 2, 4),  # 4s: 1 + 1 + 2 = 4 >= 2, true
    bid(2, 3, 6, 1),  # s3 faces 2x4 holding two 4s: need 0. 1s: 1 + 3 = 4 < 6, a bluff
    bid(2, 0, 7, 1),  # s0 faces 6x1 holding one 1: need 5. 4 < 7, a bluff
    challenge(2, 1, 0, 7, 1, 4, 1, 0, forced=True),  # the cap again: s1 +1, s0 -1
    result([-1, 1, 0, 0], 3),
]
