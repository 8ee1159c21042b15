"""Talk filters, a talking seat and an audit reporter, registered the way a third party would.

``shout`` (order 10) upper-cases every line; ``hush`` (order 20) then drops any
line containing SECRET, so it only works if the filters run in order.
``chatty`` plays the bayes move and says something every turn.
"""

from __future__ import annotations

import attrs

from arena import hookimpl
from arena.seats import SeatContext
from arena.view import SeatView
from arena_plugins.scripted import bayes


def shout(text: str, speaker: int) -> str:
    return text.upper()


def hush(text: str, speaker: int) -> str | None:
    return None if "SECRET" in text else text


class Chatty:
    def __init__(self, context: SeatContext):
        self.policy = bayes(context)
        self.turns = 0
        self.views: list[SeatView] = []

    def decide(self, view: SeatView):
        self.views.append(view)
        self.turns += 1
        said = f"secret {self.turns}" if self.turns % 2 == 0 else f"hello {view.deal}.{self.turns}"
        return attrs.evolve(self.policy.decide(view), say=said, notes=f"turn {self.turns}")


def count_bids(records: list[dict]) -> int:
    return sum(1 for record in records if record["type"] == "bid")


@hookimpl
def register_talk_filters(register):
    register("hush", hush, order=20)
    register("shout", shout, order=10)


@hookimpl
def register_seats(register):
    register("chatty", Chatty, description="bayes moves plus talk")


@hookimpl
def register_audit_reporters(register):
    register("bid-count", count_bids)
