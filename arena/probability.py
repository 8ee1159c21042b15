"""The number the whole game runs on: P(at least ``need`` of ``unseen`` symbols show a face).

Exact, by the closed-form binomial tail, computed in rationals and rounded once
to a float so every platform gets the same bits. A seat conditions on its own
hand: ``need = quantity - own count``, and only the other seats' symbols are
unseen. Ones are not wild here, so p = 1 / len(symbols) for every face.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from math import comb


@lru_cache(maxsize=4096)
def at_least(unseen: int, need: int, p: Fraction) -> float:
    """P(X >= need) for X ~ Binomial(unseen, p).

    Exactly 1 when ``need <= 0`` (already satisfied: not a tail sum from a negative
    index) and exactly 0 when ``need > unseen``.
    """
    if need <= 0:
        return 1.0
    if need > unseen:
        return 0.0
    q = 1 - p
    total = sum(comb(unseen, i) * p**i * q ** (unseen - i) for i in range(need, unseen + 1))
    return float(total)


def bid_probability(
    hand: tuple[int, ...], quantity: int, face: int, unseen: int, p: Fraction
) -> float:
    """How likely the bid (quantity, face) is true, seen from the holder of ``hand``."""
    return at_least(unseen, quantity - hand.count(face), p)


def tail_table(unseen: int, p: Fraction) -> tuple[float, ...]:
    """``table[k] == at_least(unseen, k, p)`` for k = 0 .. unseen + 1: one lookup per bid.

    Index with ``min(max(need, 0), unseen + 1)``.
    """
    return tuple(at_least(unseen, k, p) for k in range(unseen + 2))
