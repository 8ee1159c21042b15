"""A seat's view on the wire, sent as what is new since the worker's last decision.

A view's ``history`` holds every finished deal, so sending it whole made an
episode's cost quadratic (124 KB per decision by deal 399). A worker lives for
the whole episode, so the host sends each finished deal once and the worker
keeps the history it was given; every other field of a view is bounded by one
deal (the bid cap) and is sent whole.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from arena.modes import STRICT, Mode
from arena.view import (
    History,
    LegalActions,
    PastDeal,
    PastDeals,
    PublicBid,
    SeatView,
    TalkLine,
)


def _not_history(attribute: attrs.Attribute, _value) -> bool:
    return attribute.name != "history"


class ViewSender:
    """Host side: one per worker; remembers how much history the worker holds."""

    def __init__(self):
        self.sent = 0

    def encode(self, view: SeatView) -> dict[str, Any]:
        """The view but its history, and the deals finished since the last one sent; its
        parts stay attrs value objects, which the arena's frames send as their fields
        (:func:`~arena.sandbox.protocol.write_frame`): copying them into dicts first
        took more of a round trip than writing them."""
        message = attrs.asdict(view, recurse=False, filter=_not_history)
        message["historyFrom"] = self.sent
        message["history"] = view.history[self.sent :]
        self.sent = len(view.history)
        return message


class ViewReceiver:
    """Worker side: rebuilds the full view from the deltas, in order."""

    def __init__(self):
        self.past_deals = PastDeals()

    def decode(self, message: Mapping[str, Any]) -> SeatView:
        data = dict(message)
        start = data.pop("historyFrom")
        if start != len(self.past_deals):
            raise ValueError(f"history delta starts at {start}, {len(self.past_deals)} held")
        for deal in data.pop("history"):
            self.past_deals.append(_past_deal(deal))
        return view_from_json({**data, "history": History(self.past_deals)})


def view_to_json(view: SeatView) -> dict[str, Any]:
    return attrs.asdict(view, filter=_not_history) | {"history": _past_deals_json(view.history)}


def _past_deals_json(deals) -> list[dict[str, Any]]:
    return [attrs.asdict(deal) for deal in deals]


def view_from_json(data: Mapping[str, Any]) -> SeatView:
    legal = data["legal"]
    history = data["history"]
    return SeatView(
        **{
            **data,
            "symbols": tuple(data["symbols"]),
            "table_order": tuple(data["table_order"]),
            "hand": tuple(data["hand"]),
            "bids": _bids(data["bids"]),
            "talk": tuple(TalkLine(**line) for line in data["talk"]),
            "history": history
            if isinstance(history, (tuple, History))
            else tuple(map(_past_deal, history)),
            "legal": LegalActions(
                can_challenge=legal["can_challenge"],
                min_bid=tuple(legal["min_bid"]) if legal["min_bid"] is not None else None,
                max_quantity=legal["max_quantity"],
            ),
        }
    )


def _bids(items) -> tuple[PublicBid, ...]:
    return tuple(PublicBid(**bid) for bid in items)


def _past_deal(data: Mapping[str, Any]) -> PastDeal:
    hands = tuple(tuple(hand) for hand in data["hands"])
    return PastDeal(**{**data, "bids": _bids(data["bids"]), "hands": hands})


def mode_to_json(mode: Mode) -> dict[str, Any]:
    """A mode as data: its shape and the rules that differ (counting, raise rule)."""
    return {
        "name": mode.name,
        "symbols": list(mode.symbols),
        "handSize": mode.hand_size,
        "description": mode.description,
        "wild": mode.wild,
        "wildCountsItself": mode.wild_counts_itself,
        "raiseRule": mode.raise_rule,
        "defaultSeats": mode.default_seats,
    }


def mode_from_json(data: dict[str, Any]) -> Mode:
    """The declaration only: a seat never draws hands, and renders with the default.

    Rule fields a worker left out (an older worker) take the strict, wild-less defaults.
    """
    return Mode(
        data["name"],
        data["symbols"],
        data["handSize"],
        data["description"],
        wild=data.get("wild"),
        wild_counts_itself=data.get("wildCountsItself", False),
        raise_rule=data.get("raiseRule", STRICT),
        default_seats=data.get("defaultSeats", 4),
    )
