"""The number the whole game runs on: P(at least ``need`` of ``unseen`` symbols count for a face).

Exact, by the closed-form binomial tail, computed in rationals and rounded once
to a float so every platform gets the same bits. A seat conditions on its own
hand: ``need = quantity - own count``, and only the other seats' symbols are
unseen.

Counting follows the mode: without a wild symbol a symbol counts only for its
own face, so p = 1 / len(symbols). With a wild symbol ``w`` a symbol counts for
face f when it shows f or shows w, so p = 2 / len(symbols) for every face but
``w`` itself, whose p stays 1 / len(symbols) (a ``w`` counts once for a bid on
``w``, whether or not the mode calls it wild for itself).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from functools import cache, lru_cache
from math import comb
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from arena.rules import TableRules


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


def count(symbols: Sequence[int], face: int, wild: int | None = None) -> int:
    """How many of ``symbols`` count toward a bid on ``face``: the face itself, or the wild."""
    own = symbols.count(face)
    return own if wild is None or wild == face else own + symbols.count(wild)


def face_counts(
    symbols: Sequence[int], faces: Sequence[int], wild: int | None = None
) -> dict[int, int]:
    """:func:`count` for every face at once, in one pass over ``symbols``."""
    counts = dict.fromkeys(faces, 0)
    for symbol in symbols:
        counts[symbol] += 1
    wilds = 0 if wild is None else counts[wild]
    if wilds:
        for face in faces:
            if face != wild:
                counts[face] += wilds
    return counts


def face_p(symbol_count: int, face: int, wild: int | None = None) -> Fraction:
    """P(one unseen symbol counts toward ``face``), of ``symbol_count`` equally likely."""
    counting = 1 if wild is None or face == wild else 2
    return Fraction(counting, symbol_count)


def bid_probability(
    hand: tuple[int, ...],
    quantity: int,
    face: int,
    unseen: int,
    p: Fraction,
    wild: int | None = None,
) -> float:
    """How likely the bid (quantity, face) is true, seen from the holder of ``hand``.

    ``p`` is the face's own probability (:func:`face_p`); ``wild`` the mode's wild symbol.
    """
    return at_least(unseen, quantity - count(hand, face, wild), p)


def tail_table(unseen: int, p: Fraction) -> tuple[float, ...]:
    """``table[k] == at_least(unseen, k, p)`` for k = 0 .. unseen + 1: one lookup per bid.

    Read it with :func:`tail_at`.
    """
    return tuple(at_least(unseen, k, p) for k in range(unseen + 2))


def tail_at(table: Sequence[float], need: int) -> float:
    """A :func:`tail_table`'s P(at least ``need``): its first entry (1) at or below 0,
    its last (0) past ``unseen``."""
    return table[min(max(need, 0), len(table) - 1)]


@cache
def likelihoods(rules: TableRules) -> tuple[dict[int, dict[int, float]], dict[int, int]]:
    """A table's bid likelihoods, the same for every seat at it (read-only):

    - ``chance``: P(the bid is true) by face, then by need = quantity - own count, for
      every bid a table allows (faces of equal probability share one table);
    - ``expected``: the unseen symbols' expected share of each face, which an opening
      bid adds.
    """
    mode = rules.mode
    needs = range(1 - mode.hand_size, rules.max_quantity + 1)
    by_p = {}
    for p in {mode.face_p(face) for face in mode.symbols}:
        tail = tail_table(rules.unseen, p)
        by_p[p] = {need: tail_at(tail, need) for need in needs}
    chance = {face: by_p[mode.face_p(face)] for face in mode.symbols}
    expected = {face: math.floor(rules.unseen * mode.face_p(face)) for face in mode.symbols}
    return chance, expected
