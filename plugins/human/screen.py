"""What a person in a seat is shown at a decision: one model, two front ends.

:func:`build_screen` turns the seat's :class:`~arena.view.SeatView` (and nothing
else the seat may not know) into a :class:`TurnScreen`; the terminal renders it as
text and the table server sends its JSON to the browser, so both show the same
numbers. Every probability comes from ``Mode.bid_probability`` (the arena's exact
tail, following whatever the mode declares), and "what bayes would do" from the
bayes baseline itself, never from a copy of either.
"""

from __future__ import annotations

from typing import Any

import attrs

from arena.actions import Bid, Challenge
from arena.rules import TableRules
from arena.seats import SeatContext
from arena.view import PastDeal, PublicBid, SeatView, TalkLine
from arena_plugins.scripted import ScriptedSeat, bayes

EXTRA_QUANTITIES = 2
"""Beyond each face's lowest legal quantity, the next this many are worth considering."""


def percent(probability: float) -> str:
    """The one way a probability is printed, on every screen."""
    return f"{probability * 100:.2f}%"


@attrs.frozen
class Chance:
    """A bid and how likely it is true, seen from the hand."""

    quantity: int
    face: int
    probability: float
    bayes: bool = False
    """The bayes baseline would make this bid here."""

    @property
    def text(self) -> str:
        return percent(self.probability)


@attrs.frozen
class SeatLine:
    """One seat at the table, in table order."""

    slot: int
    policy: str
    points: int
    you: bool
    opener: bool


@attrs.frozen
class TurnScreen:
    """Everything one decision shows, computed once from the seat's view."""

    slot: int
    deal: int
    hand: tuple[int, ...]
    hand_text: str
    table: tuple[SeatLine, ...]
    bids: tuple[PublicBid, ...]
    talk: tuple[TalkLine, ...]
    standing: Chance | None
    """The bid to beat, with the chance it is true; ``None`` on an opening turn."""
    options: tuple[Chance, ...]
    """Bids worth considering, likeliest first (ties: lower quantity, then lower face)."""
    bayes_challenges: bool
    can_challenge: bool
    can_bid: bool
    min_bid: tuple[int, int] | None
    max_quantity: int
    symbols: tuple[int, ...]
    talk_enabled: bool
    last_deal: PastDeal | None
    """The previous deal, fully revealed (rule 6), so its outcome is on screen."""
    retry_reason: str | None

    @property
    def challenge_text(self) -> str | None:
        """How likely a challenge wins: the standing bid is a lie (rule 6)."""
        return None if self.standing is None else percent(1 - self.standing.probability)

    def to_json(self) -> dict[str, Any]:
        """The screen for the browser, each probability with its printed text."""
        data = attrs.asdict(self, recurse=True)
        data["challenge_text"] = self.challenge_text
        if self.standing is not None:
            data["standing"]["text"] = self.standing.text
        for option, chance in zip(data["options"], self.options, strict=True):
            option["text"] = chance.text
        return data


class Advisor:
    """The bayes baseline, consulted for the mark on the screen; it never acts."""

    def __init__(self, context: SeatContext):
        self.seat: ScriptedSeat = bayes(context)

    def choice(self, view: SeatView) -> Bid | Challenge:
        return self.seat.decide(view)


def build_screen(
    view: SeatView, rules: TableRules, policies: tuple[str, ...], advisor: Advisor
) -> TurnScreen:
    mode = rules.mode
    advice = advisor.choice(view)
    standing = view.standing

    def chance(quantity: int, face: int) -> Chance:
        probability = mode.bid_probability(view.hand, quantity, face, view.unseen)
        marked = isinstance(advice, Bid) and (advice.quantity, advice.face) == (quantity, face)
        return Chance(quantity, face, probability, marked)

    can_bid = view.legal.min_bid is not None
    candidates = _candidates(view, rules) if can_bid else set()
    if isinstance(advice, Bid):
        candidates.add((advice.quantity, advice.face))
    options = sorted(
        (chance(q, f) for q, f in candidates),
        key=lambda c: (-c.probability, c.quantity, c.face),
    )
    return TurnScreen(
        slot=view.slot,
        deal=view.deal,
        hand=view.hand,
        hand_text=mode.render_hand(view.hand),
        table=_table(view, policies),
        bids=view.bids,
        talk=view.talk,
        standing=None if standing is None else chance(standing.quantity, standing.face),
        options=tuple(options),
        bayes_challenges=isinstance(advice, Challenge),
        can_challenge=view.legal.can_challenge,
        can_bid=can_bid,
        min_bid=view.legal.min_bid,
        max_quantity=view.legal.max_quantity,
        symbols=view.symbols,
        talk_enabled=view.talk_enabled,
        last_deal=view.history[-1] if view.history else None,
        retry_reason=view.retry_reason,
    )


def _candidates(view: SeatView, rules: TableRules) -> set[tuple[int, int]]:
    """Each face's lowest legal quantity and the next two (capped at the table's maximum).

    On an opening turn every face's lowest legal quantity is 1, which says nothing;
    there the band is centred instead on the face's highest even-odds quantity.
    """
    top = rules.max_quantity
    standing = view.standing
    if standing is None:
        lowest = {face: max(1, _even_odds(view, rules, face) - 1) for face in view.symbols}
    else:
        # the mode's raise rule decides each face's lowest (rule 4, or the wild conversions)
        lowest = {face: quantity for quantity, face in rules.lowest_raises(standing)}
    return {
        (quantity, face)
        for face, low in lowest.items()
        for quantity in range(low, min(low + EXTRA_QUANTITIES, top) + 1)
    }


def _even_odds(view: SeatView, rules: TableRules, face: int) -> int:
    """The highest quantity of ``face`` at least as likely true as not (1 when none is)."""
    mode = rules.mode
    best = 1
    for quantity in range(1, rules.max_quantity + 1):
        if mode.bid_probability(view.hand, quantity, face, view.unseen) < 0.5:
            break
        best = quantity
    return best


def _table(view: SeatView, policies: tuple[str, ...]) -> tuple[SeatLine, ...]:
    """The seats in table order, with points from every resolved deal (rule 6)."""
    points = [0] * view.seats
    for deal in view.history:
        points[deal.winner] += 1
        points[deal.loser] -= 1
    return tuple(
        SeatLine(
            slot=slot,
            policy=policies[slot] if slot < len(policies) else "?",
            points=points[slot],
            you=slot == view.slot,
            opener=slot == view.opener,
        )
        for slot in view.table_order
    )
