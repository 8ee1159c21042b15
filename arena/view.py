"""What one seat may know at its turn, and nothing else.

The engine builds a :class:`SeatView` for the acting seat from public facts
plus that seat's own hand and notes; a seat never receives the engine's state.
Private notes and raw (unfiltered) talk live only in the server-side log.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from fractions import Fraction

import attrs

from arena import probability
from arena.modes import STRICT
from arena.rules import StandingBid

PublicBid = StandingBid
"""A bid as every seat saw it: the standing bid until the next one, so the same class."""


@attrs.frozen
class TalkLine:
    """Published table talk: who said it and what the filters let through."""

    slot: int
    text: str


@attrs.frozen
class PastDeal:
    """A finished deal, fully revealed (rule 6 reveals every hand)."""

    deal: int
    opener: int
    bids: tuple[PublicBid, ...]
    challenger: int
    forced: bool
    actual: int
    hands: tuple[tuple[int, ...], ...]
    winner: int
    loser: int


class PastDeals(Sequence[PastDeal]):
    """An episode's finished deals, append-only, held in little memory.

    The latest :attr:`RECENT` to ``2 * RECENT`` deals stay objects; older ones are
    packed into one ``bytes`` each (30 to 40 bytes of numbers for a four-seat dice
    deal, against about 900 bytes as objects) and rebuilt on access, so a long
    episode's history costs a few megabytes rather than hundreds. A deal whose
    numbers do not each fit in a byte, or that is not the deal its position says,
    is kept as an object.
    """

    RECENT = 1024

    def __init__(self, deals: Iterable[PastDeal] = ()):
        self._packed: list[bytes | PastDeal] = []
        self._recent: list[PastDeal] = []
        for deal in deals:
            self.append(deal)

    def append(self, deal: PastDeal) -> None:
        self._recent.append(deal)
        if len(self._recent) >= 2 * self.RECENT:
            start = len(self._packed)
            old = self._recent[: self.RECENT]
            self._packed += (_pack(past, start + i) for i, past in enumerate(old))
            del self._recent[: self.RECENT]

    def __len__(self) -> int:
        return len(self._packed) + len(self._recent)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        position = index + len(self) if index < 0 else index
        if not 0 <= position < len(self):
            raise IndexError("past deal index out of range")
        if position >= len(self._packed):
            return self._recent[position - len(self._packed)]
        packed = self._packed[position]
        return _unpack(packed, position) if isinstance(packed, bytes) else packed


_PACKED_HEAD = 8
"""opener, challenger, forced, actual, winner, loser, hands, bids; then each bid's
slot, quantity and face; then every hand's symbols, hand after hand."""


def _pack(deal: PastDeal, position: int) -> bytes | PastDeal:
    hands = deal.hands
    size = len(hands[0]) if hands else 0
    if deal.deal != position or not size or any(len(hand) != size for hand in hands):
        return deal
    numbers = [
        deal.opener, deal.challenger, deal.forced, deal.actual,
        deal.winner, deal.loser, len(hands), len(deal.bids),
    ]  # fmt: skip
    for bid in deal.bids:
        numbers += (bid.slot, bid.quantity, bid.face)
    for hand in hands:
        numbers += hand
    try:
        return bytes(numbers)
    except (ValueError, TypeError):  # a number outside 0..255
        return deal


def _unpack(data: bytes, position: int) -> PastDeal:
    opener, challenger, forced, actual, winner, loser, seats, bids = data[:_PACKED_HEAD]
    end = _PACKED_HEAD + 3 * bids
    symbols = data[end:]
    size = len(symbols) // seats
    return PastDeal(
        deal=position,
        opener=opener,
        bids=tuple(PublicBid(*data[i : i + 3]) for i in range(_PACKED_HEAD, end, 3)),
        challenger=challenger,
        forced=bool(forced),
        actual=actual,
        hands=tuple(tuple(symbols[i : i + size]) for i in range(0, len(symbols), size)),
        winner=winner,
        loser=loser,
    )


class History(Sequence[PastDeal]):
    """The first ``length`` finished deals of one shared, append-only list.

    The engine appends each finished deal once and hands every view of the next
    deal the same window, so an episode's history costs one entry per deal rather
    than a copy of the whole tuple per deal (which made long episodes quadratic).
    A window never changes: later deals are past its end. It compares equal to a
    tuple of the same deals, so seats and tests can treat it as one.
    """

    __slots__ = ("_deals", "_length")

    def __init__(self, deals: Sequence[PastDeal] = (), length: int | None = None):
        self._deals = deals
        self._length = len(deals) if length is None else length

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index):
        if isinstance(index, slice):
            return tuple(self._deals[i] for i in range(*index.indices(self._length)))
        if not -self._length <= index < self._length:
            raise IndexError("history index out of range")
        return self._deals[index % self._length]

    def __iter__(self) -> Iterator[PastDeal]:
        return itertools.islice(self._deals, self._length)

    def __eq__(self, other) -> bool:
        if not isinstance(other, (History, tuple)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"History({tuple(self)!r})"


@attrs.frozen
class LegalActions:
    """The action space right now."""

    can_challenge: bool
    """False on an opening turn (rule 3)."""
    min_bid: tuple[int, int] | None
    """The lowest legal (quantity, face), or ``None`` when no bid is legal."""
    max_quantity: int


@attrs.frozen(slots=False)
class SeatView:
    """Everything the acting seat is shown for one decision.

    The fields that hold for the whole episode come first, then this decision's, then
    those with defaults: the engine builds a view per decision positionally, from the
    episode's part made once (see ``Engine._view``). It is frozen but not slotted: a
    frozen class with an instance dict has its fields stored straight into that dict,
    where slots take an ``object.__setattr__`` call each, which made a view cost 40%
    more to build.
    """

    mode: str
    symbols: tuple[int, ...]
    hand_size: int
    seats: int
    table_order: tuple[int, ...]
    max_bids: int
    talk_enabled: bool
    slot: int
    deal: int
    opener: int
    hand: tuple[int, ...]
    """This seat's own hidden hand; nobody else's."""
    bids: tuple[PublicBid, ...]
    """This deal's bids so far, in order."""
    talk: tuple[TalkLine, ...]
    """This deal's published talk (empty when talk is off; never carried across deals)."""
    history: Sequence[PastDeal]
    """Every previous deal of the episode, in full (a tuple or a shared :class:`History`)."""
    notes: str | None
    """This seat's private notes, as last written (possibly truncated)."""
    notes_truncated: bool
    legal: LegalActions
    retry_reason: str | None = None
    """On rule 11's second ask: why the first reply was rejected."""
    wild: int | None = None
    """The mode's wild symbol, if any (see :class:`arena.modes.Mode`)."""
    wild_counts_itself: bool = False
    raise_rule: str = STRICT
    """``strict`` or ``wild-ones``: how a bid must raise the standing one."""

    @property
    def standing(self) -> StandingBid | None:
        return self.bids[-1] if self.bids else None

    @property
    def unseen(self) -> int:
        """Symbols in the other seats' hands."""
        return (self.seats - 1) * self.hand_size

    @property
    def p(self) -> Fraction:
        """Probability that one unseen symbol shows a given symbol (before wilds count)."""
        return Fraction(1, len(self.symbols))

    def face_p(self, face: int) -> Fraction:
        """Probability that one unseen symbol counts toward ``face`` (wilds included)."""
        return probability.face_p(len(self.symbols), face, self.wild)

    def bid_probability(self, quantity: int, face: int) -> float:
        """How likely the bid is true, seen from this seat's hand, by the mode's counting."""
        return probability.bid_probability(
            self.hand, quantity, face, self.unseen, self.face_p(face), self.wild
        )
