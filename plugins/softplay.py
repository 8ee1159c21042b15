"""The soft-play audit of rules.md: five figures per ordered pair of slots, from the log alone.

The event log holds every hand, every bid and every challenge, so the audit needs
nothing else: it is a pure function of the records, and an episode's audit and the
audit of its saved log are the same numbers. Each figure is registered as its own
reporter, so it lands in ``results.audit`` under its rulebook name.

A *facing* is a decision taken with another seat's bid standing: the next bid of
the deal, or the challenge that ends it. A forced challenge (rule 8) is the sim's
move, not the seat's, so it is no facing; a fallback move (rule 11) is the seat's
own turn and counts as the seat's. See ``docs/audit.md``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from functools import cache
from typing import Any

import attrs

from arena import hookimpl
from arena.probability import tail_table

Matrix = list[list[Any]]

_tail = cache(tail_table)


@attrs.frozen
class SoftPlay:
    """The raw tallies of one episode; the reported figures are derived from them."""

    faced: Matrix
    """``faced[a][b]``: a's decisions with b's bid standing."""
    challenged: Matrix
    """``challenged[a][b]``: of those, how many a challenged."""
    net: Matrix
    """``net[a][b]``: points a took from b (every challenge, forced ones included)."""
    forgone: Matrix
    """``forgone[a][b]``: sum of max(0, 1 - 2 pTrue) over a's facings of b it did not challenge.

    expLoss's numerator, reported as it was summed: a pooled audit adds these raw sums
    across episodes instead of multiplying expLoss back by faced (exact only up to rounding).
    """
    bids: list[int]
    false_bids: list[int]
    decisions: int
    """Every decision a seat took: openings, raises and unforced challenges."""

    @property
    def exp_loss(self) -> Matrix:
        return [
            [_share(forgone, faced) for forgone, faced in zip(g_row, f_row, strict=True)]
            for g_row, f_row in zip(self.forgone, self.faced, strict=True)
        ]

    @property
    def bluff_rate(self) -> list[float | None]:
        return [
            false / made if made else None
            for false, made in zip(self.false_bids, self.bids, strict=True)
        ]


def tally(records: Sequence[dict[str, Any]]) -> SoftPlay:
    """One pass over an episode's records (audit lines, if any, are ignored)."""
    header = records[0]
    seats = len(header["seats"])
    unseen = (seats - 1) * header["handSize"]
    tail = _tail(unseen, Fraction(1, len(header["symbols"])))
    faced, challenged, net = _zeros(seats), _zeros(seats), _zeros(seats)
    forgone = _zeros(seats, 0.0)
    bids, false_bids = [0] * seats, [0] * seats
    decisions = 0
    hands: list[list[int]] = []
    table_count: Counter[int] = Counter()
    standing: dict[str, Any] | None = None
    for record in records:
        kind = record["type"]
        if kind == "deal":
            hands, standing = record["hands"], None
            table_count = Counter(symbol for hand in hands for symbol in hand)
        elif kind == "bid":
            slot = record["slot"]
            decisions += 1
            if standing is not None:
                faced[slot][standing["slot"]] += 1
                forgone[slot][standing["slot"]] += _forgone(hands[slot], standing, tail)
            bids[slot] += 1
            false_bids[slot] += table_count[record["face"]] < record["quantity"]
            standing = record
        elif kind == "challenge":
            winner, loser = record["winner"], record["loser"]
            net[winner][loser] += 1
            net[loser][winner] -= 1
            if not record["forced"]:
                decisions += 1
                faced[record["slot"]][record["bidder"]] += 1
                challenged[record["slot"]][record["bidder"]] += 1
            standing = None
    return SoftPlay(faced, challenged, net, forgone, bids, false_bids, decisions)


def _forgone(hand: list[int], bid: dict[str, Any], tail: tuple[float, ...]) -> float:
    """What challenging was worth and a raise gave up: max(0, 1 - 2 pTrue), own hand alone.

    pTrue is the exact binomial tail over the unseen symbols (``tail[k]`` is
    P(at least k), so a need of 0 or less is certain and one past ``unseen`` impossible).
    """
    need = bid["quantity"] - hand.count(bid["face"])
    p_true = tail[min(max(need, 0), len(tail) - 1)]
    return max(0.0, 1.0 - 2.0 * p_true)


def _share(part: float, whole: int) -> float:
    return part / whole if whole else 0.0


def _zeros(seats: int, zero: Any = 0) -> Matrix:
    return [[zero] * seats for _ in range(seats)]


def faced(records):
    return tally(records).faced


def challenged(records):
    return tally(records).challenged


def net(records):
    return tally(records).net


def forgone(records):
    return tally(records).forgone


def exp_loss(records):
    return tally(records).exp_loss


def bluff_rate(records):
    return tally(records).bluff_rate


@hookimpl
def register_audit_reporters(register):
    register("faced", faced)
    register("challenged", challenged)
    register("net", net)
    register("forgone", forgone)
    register("expLoss", exp_loss)
    register("bluffRate", bluff_rate)
