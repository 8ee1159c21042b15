"""The policy that plays a model seat throughout when the model cannot be asked at all.

With no key for a provider that needs one, the seat factory seats the bayes
baseline instead and says why in ``stand_in``, which the results mark and the
CLI reports in one warning line: the episode still runs, and nobody mistakes
bayes's play for the model's.
"""

from __future__ import annotations

from typing import Any

from arena.seats import SeatContext
from arena.view import SeatView
from arena_plugins.scripted import bayes


def no_key(key_env: str) -> str:
    """The reason a seat gives when ``key_env`` holds no key."""
    return f"no {key_env}: bayes played this seat"


class StandIn:
    """Another policy playing a seat throughout, and why (reported as ``standIn``)."""

    def __init__(self, seat: Any, reason: str):
        self.seat = seat
        self.stand_in = reason

    def decide(self, view: SeatView):
        return self.seat.decide(view)


def bayes_stand_in(context: SeatContext, reason: str) -> StandIn:
    """The bayes baseline, marked as standing in for ``reason``."""
    return StandIn(bayes(context), reason)
