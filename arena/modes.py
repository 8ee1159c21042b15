"""What a game mode is: the rules that differ between variants, declared as data.

A mode is declared by a plugin (``register_modes``); the core never names a
mode. The declaration is plain data the core interprets, so a third-party mode
needs no code and no trust: its symbols and hand size (the shape), the default
number of seats, an optional wild symbol (the counting rule) and the raise rule
(``strict`` as in rules.md, or ``wild-ones`` with the conversions of the
wild-ones game). The symbol probability per face follows from the counting
rule (:func:`arena.probability.face_p`), since every symbol is drawn uniformly.

``draw`` and ``render`` keep their defaults for a data-only mode; a first-party
mode may still pass its own functions (poker renders a serial number).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import attrs

from arena import probability, seeding

if TYPE_CHECKING:  # a sandbox worker reads modes without importing numpy (arena.sandbox.worker)
    import numpy as np

STRICT = "strict"
WILD_ONES = "wild-ones"
RAISE_RULES = (STRICT, WILD_ONES)
MAX_SYMBOLS = 64
MAX_HAND_SIZE = 64
"""The most faces a mode has and symbols a hand holds: far past any game's (dice 6 and 5,
poker 10 and 8). A reader sizes what it builds by a log's header (a hand's width, the bid
ladder), so the header is held to these and a hostile one cannot make it hang."""


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
    hand_size: int = attrs.field()
    """Symbols in one seat's hidden hand."""
    description: str = ""
    """One line for ``arena plugins`` and for the LLM prompt's rules in brief."""
    draw: Callable[[Mode, np.random.Generator], tuple[int, ...]] = _uniform_hand
    """``draw(mode, rng)``: one hand from the deal's seeded generator."""
    render: Callable[[Mode, tuple[int, ...]], str] = _render_joined
    """``render(mode, hand)``: the hand as a seat is shown it."""
    wild: int | None = attrs.field(default=None)
    """A symbol that counts toward every face (``None``: no wilds; a symbol counts for itself)."""
    wild_counts_itself: bool = False
    """Whether the wild symbol is wild for a bid on its own face too. Either way a wild
    counts once for its own face; the difference is in the raise rule: a wild that is wild
    for itself is an ordinary face in bid order (strict), one that is not is bid on its own
    ladder (``wild-ones``)."""
    raise_rule: str = attrs.field(default=STRICT)
    """``strict`` (rules.md rule 4) or ``wild-ones`` (to the wild: half the quantity,
    rounded up; away from it: double plus one)."""
    default_seats: int = attrs.field(default=4)
    """Seats at the table when the user does not say."""

    @symbols.validator
    def _check_symbols(self, _attribute, value):
        if not 2 <= len(value) <= MAX_SYMBOLS or list(value) != sorted(set(value)):
            raise ValueError(
                f"mode {self.name!r}: symbols must be 2 to {MAX_SYMBOLS} distinct ints, ascending"
            )

    @hand_size.validator
    def _check_hand_size(self, _attribute, value):
        if not 1 <= value <= MAX_HAND_SIZE:
            raise ValueError(
                f"mode {self.name!r}: hand size must be 1 to {MAX_HAND_SIZE}, got {value}"
            )

    @wild.validator
    def _check_wild(self, _attribute, value):
        if value is not None and value not in self.symbols:
            raise ValueError(f"mode {self.name!r}: wild symbol {value} is not one of its symbols")

    @raise_rule.validator
    def _check_raise_rule(self, _attribute, value):
        if value not in RAISE_RULES:
            raise ValueError(f"mode {self.name!r}: raise rule must be one of {RAISE_RULES}")
        if value == WILD_ONES and (self.wild is None or self.wild_counts_itself):
            raise ValueError(
                f"mode {self.name!r}: the wild-ones raise rule needs a wild symbol "
                "that is not wild for itself"
            )

    @default_seats.validator
    def _check_default_seats(self, _attribute, value):
        if value < 2:
            raise ValueError(f"mode {self.name!r}: default seats must be >= 2, got {value}")

    @property
    def p(self) -> Fraction:
        """Probability that one unseen symbol shows a given symbol (before wilds count)."""
        return Fraction(1, len(self.symbols))

    def face_p(self, face: int) -> Fraction:
        """Probability that one unseen symbol counts toward ``face`` (wilds included)."""
        return probability.face_p(len(self.symbols), face, self.wild)

    def count(self, symbols, face: int) -> int:
        """How many of ``symbols`` count toward a bid on ``face``."""
        return probability.count(symbols, face, self.wild)

    def draw_hand(self, rng: np.random.Generator) -> tuple[int, ...]:
        return self.draw(self, rng)

    def render_hand(self, hand: tuple[int, ...]) -> str:
        return self.render(self, hand)

    @property
    def is_data(self) -> bool:
        """Declared wholly as data (default draw and render): the core can play it without
        running the declaring plugin's code, so a sandboxed third party's mode is playable."""
        return self.draws_uniformly and self.render is _render_joined

    @property
    def draws_uniformly(self) -> bool:
        """Hands are the default draw: each symbol independent and uniform."""
        return self.draw is _uniform_hand

    def bid_probability(
        self, hand: tuple[int, ...], quantity: int, face: int, unseen: int
    ) -> float:
        """How likely the bid (quantity, face) is true, seen from ``hand`` with ``unseen``
        symbols hidden: the one entry point for anything that shows or uses the number."""
        return probability.bid_probability(
            hand, quantity, face, unseen, self.face_p(face), self.wild
        )

    def header_fields(self) -> dict[str, Any]:
        """The rule data an event log's header carries, so a log replays without plugins."""
        return {
            "wild": self.wild,
            "wild_counts_itself": self.wild_counts_itself,
            "raise_rule": self.raise_rule,
        }


def from_header(header: Mapping[str, Any]) -> Mode:
    """The mode an event log's ``episode`` line describes (rule data only; default rendering).

    Logs written before modes carried rules omit the fields: those are dice-like.
    """
    return Mode(
        name=header["mode"],
        symbols=tuple(header["symbols"]),
        hand_size=header["handSize"],
        wild=header.get("wild"),
        wild_counts_itself=header.get("wildCountsItself", False),
        raise_rule=header.get("raiseRule", STRICT),
        default_seats=len(header["seats"]),
    )
