"""What a replay must show, worked out from the event log and the rulebook alone,
and a hand-made log whose figures the tests work out in their comments.

The page's figures come from ``arena.web.replay``; these come from the log's
records and rules.md by independent code (``referee.chance`` is the exact
binomial tail written from the rulebook), so a test comparing the two can fail.
"""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

from referee import chance

from arena.events import (
    BidMade,
    ChallengeMade,
    DealStarted,
    EpisodeSettled,
    EpisodeStarted,
    to_line,
)


def tail(header: dict[str, Any], hand: list[int], quantity: int, face: int) -> float:
    """rules.md: P(X >= quantity - own count), X ~ Binomial((seats - 1) * handSize, 1/|symbols|)."""
    unseen = (len(header["seats"]) - 1) * header["handSize"]
    return float(chance(unseen, quantity - hand.count(face), Fraction(1, len(header["symbols"]))))


def expected_deals(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per deal: every decision with its figures, and each seat's points once it ended."""
    header = records[0]
    points = [0] * len(header["seats"])
    deals: list[dict[str, Any]] = []
    for record in records:
        kind = record["type"]
        if kind == "deal":
            deals.append({"deal": record["deal"], "hands": record["hands"], "decisions": []})
        elif kind in ("bid", "challenge"):
            deals[-1]["decisions"].append(record)
        if kind == "challenge":
            # Rule 6: one point from the loser to the winner.
            points[record["winner"]] += 1
            points[record["loser"]] -= 1
            deals[-1]["pointsAfter"] = list(points)
    for deal in deals:
        hands, decisions = deal["hands"], deal["decisions"]
        for index, decision in enumerate(decisions):
            if decision["type"] != "bid":
                continue
            q, f = decision["quantity"], decision["face"]
            decision["pBidder"] = tail(header, hands[decision["slot"]], q, f)
            facer = decisions[index + 1]["slot"] if index + 1 < len(decisions) else None
            decision["facer"] = facer
            decision["pFacer"] = None if facer is None else tail(header, hands[facer], q, f)
            decision["pBySlot"] = [tail(header, hand, q, f) for hand in hands]
            # Rule 6's count (ones are not wild in dice and poker).
            decision["count"] = sum(hand.count(f) for hand in hands)
    return deals


# Deal 0 of a 4-seat dice table (5 dice each, so 15 unseen from any one hand, p = 1/6):
HANDS = ((6, 6, 1, 2, 3), (6, 2, 2, 4, 5), (3, 3, 3, 1, 4), (5, 5, 6, 6, 6))


def hand_made_log() -> list[dict]:
    """s0 bids 4x6, s1 bids 7x6 saying so, s2 challenges; six 6s are out, so s2 wins."""
    events = [
        EpisodeStarted(
            seed=0, mode="dice", symbols=(1, 2, 3, 4, 5, 6), hand_size=5,
            seats=[{"slot": s, "policy": "bayes"} for s in range(4)],
            table_order=(0, 1, 2, 3), deals=1, max_bids_per_deal=12, talk=True,
        ),
        DealStarted(0, 0, HANDS),
        BidMade(0, 0, 4, 6, None, None, None, False),
        BidMade(0, 1, 7, 6, "sevens, trust me", "SEVENS, TRUST ME", "bluffing", False),
        ChallengeMade(0, 2, 1, 7, 6, 6, False, False, 2, 1, None, None, None),
        EpisodeSettled("complete", 1, (0, -1, 1, 0), (0.5, 0.0, 1.0, 0.5)),
    ]  # fmt: skip
    return [json.loads(to_line(event)) for event in events]
