"""What a game mode is: its symbols, its hand size, how a hand is drawn and shown.

A mode is declared by a plugin (``register_modes``); the core never names a
mode. Everything the rules need follows from the declaration: the face range,
the bid cap's maximum quantity (seats x hand size) and the symbol probability
p = 1 / len(symbols), since every symbol of a hand is drawn uniformly.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

import attrs
import numpy as np

from arena import probability, seeding


def _uniform_hand(mode: Mode, rng: np.random.Generator) -> tuple[int, ...]:
    """Each symbol of the hand drawn independently and uniformly."""
    symbols = mode.symbols
    return tuple([symbols[i] for i in seeding.uniform_indices(rng, len(symbols), mode.hand_size)])


def _render_joined(mode: Mode, hand: tuple[int, ...]) -> str:
    return " ".join(str(s) for s in hand)


@attrs.frozen
class Mode:
    """An immutable game-mode declaration."""

    name: str
    """Stable name used on the command line and in the log (``dice``, ``poker``)."""
    symbols: tuple[int, ...] = attrs.field(converter=tuple)
    """The faces, in bid order (a higher face outranks a lower one at equal quantity)."""
    hand_size: int
    """Symbols in one seat's hidden hand."""
    description: str = ""
    """One line for ``arena plugins`` and for the LLM prompt's rules in brief."""
    draw: Callable[[Mode, np.random.Generator], tuple[int, ...]] = _uniform_hand
    """``draw(mode, rng)``: one hand from the deal's seeded generator."""
    render: Callable[[Mode, tuple[int, ...]], str] = _render_joined
    """``render(mode, hand)``: the hand as a seat is shown it."""

    @symbols.validator
    def _check_symbols(self, _attribute, value):
        if len(value) < 2 or list(value) != sorted(set(value)):
            raise ValueError(f"mode {self.name!r}: symbols must be >= 2 distinct ints, ascending")

    @property
    def p(self) -> Fraction:
        """Probability that one unseen symbol shows a given face (exact)."""
        return Fraction(1, len(self.symbols))

    def draw_hand(self, rng: np.random.Generator) -> tuple[int, ...]:
        return self.draw(self, rng)

    def render_hand(self, hand: tuple[int, ...]) -> str:
        return self.render(self, hand)

    def bid_probability(
        self, hand: tuple[int, ...], quantity: int, face: int, unseen: int
    ) -> float:
        """How likely the bid (quantity, face) is true, seen from ``hand`` with ``unseen``
        symbols hidden: the one entry point for anything that shows or uses the number."""
        return probability.bid_probability(hand, quantity, face, unseen, self.p)
