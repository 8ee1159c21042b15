"""The table as it happens, told to one seat: the public part of each log record.

The event log is full information (every hand, private notes, raw talk). A live
display gets each record as it is logged and must show a person only what their
seat may know: :class:`PublicFeed` keeps a deal's hands back until a challenge
reveals them (rule 6), shows the viewer's own hand alone at the deal, and shows
talk only as published after the filters. Notes, raw talk and rejected replies
never pass.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from arena.modes import Mode


@attrs.frozen
class News:
    """One line of what happened, for the terminal or the browser."""

    kind: str
    """``deal``, ``bid``, ``challenge``, ``fault`` or ``result``."""
    text: str


class PublicFeed:
    """Turns full-information records into the news ``viewer`` may see (``None``: anyone)."""

    def __init__(self, mode: Mode, viewer: int | None = None, deals: int | None = None):
        self.mode = mode
        self.viewer = viewer
        self.deals = deals
        self.hands: tuple[tuple[int, ...], ...] = ()

    def news(self, record: dict[str, Any]) -> News | None:
        handler = getattr(self, "_" + record["type"], None)
        return None if handler is None else handler(record)

    def _who(self, slot: int) -> str:
        return "you" if slot == self.viewer else f"s{slot}"

    def _deal(self, record: dict[str, Any]) -> News:
        self.hands = tuple(tuple(hand) for hand in record["hands"])
        of = f" of {self.deals}" if self.deals else ""
        text = f"deal {record['deal'] + 1}{of}: {self._who(record['opener'])} to open"
        if self.viewer is not None:
            text += f"; your hand {self.mode.render_hand(self.hands[self.viewer])}"
        return News("deal", text)

    def _bid(self, record: dict[str, Any]) -> News:
        text = f"{self._who(record['slot'])} bid {record['quantity']}x{record['face']}"
        if record["fallback"]:
            text += " (bayes moved for the seat, rule 11)"
        return News("bid", text + _said(record))

    def _challenge(self, record: dict[str, Any]) -> News:
        how = "forced to challenge (bid cap)" if record["forced"] else "challenged"
        if record["fallback"]:
            how += " (bayes moved for the seat, rule 11)"
        quantity, face, actual = record["quantity"], record["face"], record["actual"]
        verdict = "true" if actual >= quantity else "a lie"
        render = self.mode.render_hand
        hands = "  ".join(f"{self._who(s)}: {render(hand)}" for s, hand in enumerate(self.hands))
        text = (
            f"{self._who(record['slot'])} {how} {quantity}x{face} by {self._who(record['bidder'])}"
            f"{_said(record)} | reveal {hands} | {actual} of face {face}: the bid was {verdict}, "
            f"{self._who(record['winner'])} +1, {self._who(record['loser'])} -1"
        )
        return News("challenge", text)

    def _fault(self, record: dict[str, Any]) -> News:
        return News("fault", f"{self._who(record['slot'])} did not answer: {record['reason']}")

    def _result(self, record: dict[str, Any]) -> News:
        points = ", ".join(f"{self._who(s)} {p:+d}" for s, p in enumerate(record["points"]))
        played = record["dealsPlayed"]
        return News("result", f"episode {record['status']} after {played} deals: {points}")


def public_news(mode: Mode, deals: int, viewer: int | None) -> Callable[[dict], News | None]:
    """The news ``viewer`` (``None``: anyone) may see of each record, as the seat declares it."""
    return PublicFeed(mode, viewer, deals).news


def _said(record: dict[str, Any]) -> str:
    published = record.get("published")
    return f' — "{published}"' if published else ""
