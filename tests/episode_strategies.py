"""Hypothesis strategies for whole episodes: random seeds, seat mixes, modes, sizes, caps, endings.

:func:`ended_requests` also ends episodes early, as a person leaving (``quit``, which
may end a deal in progress) or the clock (``deadline``, at a deal boundary) does.
"""

from __future__ import annotations

import time

import attrs
from hypothesis import strategies as st

from arena.runner import EpisodeRequest
from arena.seats import SeatQuit, SeatSpec

SEATS = ["bayes", "pressure", "random", "misbehaving"]


FEW_DEALS = st.integers(1, 5)


@st.composite
def requests(draw, deals=FEW_DEALS):
    seats = draw(st.integers(2, 8))
    names = draw(st.lists(st.sampled_from(SEATS), max_size=seats))
    return EpisodeRequest(
        mode=draw(st.sampled_from(["dice", "poker", "wild", "rung1", "rung1w"])),
        seed=draw(st.integers(0, 2**63 - 1)),
        deals=draw(deals),
        seats=seats,
        seat_specs=tuple(SeatSpec(name) for name in names),
        max_bids=draw(st.integers(1, 14)),
        talk=draw(st.booleans()),
    )


CLOCK = 0.05
"""Seconds on the episode clock of a ``deadline`` ending; the stopping seat sits it out."""


@attrs.frozen
class Ending:
    """How an episode is made to end: played out, or by slot 0 at its ``at``-th ask."""

    status: str
    """``complete``; ``quit`` (slot 0 leaves); ``deadline`` (slot 0 outlasts the clock)."""
    at: int

    def seats(self, host) -> dict:
        """Slot 0's seat (spec ``human``, as a person's would be): bayes's moves, then the end."""
        status, at = self.status, self.at

        def factory(context):
            moves = host.registry.seat("bayes").factory(context)
            asked = 0

            class Stopping:
                def decide(self, view):
                    nonlocal asked
                    asked += 1
                    if asked == at and status == "quit":
                        raise SeatQuit("q")
                    if asked == at and status == "deadline":
                        time.sleep(CLOCK)  # the clock runs out; the deal plays on to its end
                    return moves.decide(view)

            return Stopping()

        return {"human": factory}


ENDINGS = ("complete", "quit", "deadline")


@st.composite
def ended_requests(draw, status: str):
    """A request made to end by ``status``: ``complete``, ``quit`` or ``deadline``."""
    if status == "complete":
        return draw(requests()), Ending(status, 0)
    request = draw(requests(deals=st.integers(2, 5)))  # room to end before the last deal
    specs = (SeatSpec("human"), *request.seat_specs[1:])
    clock = CLOCK if status == "deadline" else None
    ending = Ending(status, draw(st.integers(1, 3)))
    return attrs.evolve(request, seat_specs=specs, clock=clock), ending
