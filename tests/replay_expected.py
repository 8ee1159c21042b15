"""What a replay must show, worked out from the event log and the rulebook alone.

The page's figures come from ``arena.web.replay``; these come from the log's
records and rules.md by independent code (``referee.chance`` is the exact
binomial tail written from the rulebook), so a test comparing the two can fail.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from referee import chance


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
