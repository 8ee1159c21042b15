"""Hand-written seats that tests sit at a table directly, without the registry."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arena.actions import Bid, Challenge
from arena.view import SeatView


class MinRaiser:
    """Bids the lowest legal bid, challenges only when no bid is legal; never reads its hand."""

    def __init__(self):
        self.views: list[SeatView] = []

    def decide(self, view: SeatView):
        self.views.append(view)
        if view.legal.min_bid is None:
            return Challenge()
        return Bid(*view.legal.min_bid)


class Scripted:
    """Replies from a script in order, then like ``then``; records every view it is shown.

    A script entry is returned as the reply, raised if it is an exception, or
    called with the view if it is callable.
    """

    def __init__(self, script: list[Any], then: Any = None):
        self.script = list(script)
        self.then = then or MinRaiser()
        self.views: list[SeatView] = []

    def decide(self, view: SeatView):
        self.views.append(view)
        if not self.script:
            return self.then.decide(view)
        entry = self.script.pop(0)
        if isinstance(entry, BaseException):
            raise entry
        if isinstance(entry, Callable):
            return entry(view)
        return entry


class Recording:
    """Plays ``inner``'s moves and keeps every view it was shown."""

    def __init__(self, inner):
        self.inner = inner
        self.views: list[SeatView] = []

    def decide(self, view: SeatView):
        self.views.append(view)
        return self.inner.decide(view)
