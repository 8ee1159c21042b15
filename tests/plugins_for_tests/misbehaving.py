"""``misbehaving``: a seat that breaks rule 11 in every way it can, some of the time.

It exists to drive the engine down the retry-with-reason and bayes-fallback
paths on random tables: garbage text, out-of-range numbers, a face outside the
mode, a bid that does not raise, a challenge with nothing standing, ``None``,
an exception and a "service down" fault. Otherwise it plays a legal move in one
of the accepted reply forms (sometimes with talk, notes and token usage).
Every choice comes from its seeded generator, so a seed replays exactly.
"""

from __future__ import annotations

from arena import hookimpl
from arena.actions import Bid, Challenge
from arena.seats import Reply, SeatContext, SeatUnavailable
from arena.view import SeatView

MISCHIEF = 7
"""Rolls below this (out of ``DIE``) misbehave."""
DIE = 16


class Misbehaving:
    def __init__(self, context: SeatContext):
        self.rng = context.rng

    def decide(self, view: SeatView):
        roll = int(self.rng.integers(DIE))
        standing = view.standing
        if roll == 0:
            return "I fold, probably"
        if roll == 1:
            return {
                "action": "bid",
                "quantity": view.legal.max_quantity + 1,
                "face": view.symbols[0],
            }
        if roll == 2:
            return Bid(1, view.symbols[-1] + 1)
        if roll == 3:
            return Bid(standing.quantity, standing.face) if standing else Challenge()
        if roll == 4:
            raise RuntimeError("misbehaving seat crashed")
        if roll == 5:
            return None
        if roll == 6:
            raise SeatUnavailable("misbehaving seat is down")
        return self._legal(view, roll)

    def _legal(self, view: SeatView, roll: int):
        low = view.legal.min_bid
        if view.legal.can_challenge and (low is None or roll >= DIE - 2):
            return "liar!"
        quantity, face = low
        if roll % 3 == 0:
            return f"bid {quantity} {face}"
        reply = {"action": "bid", "quantity": quantity, "face": face, "say": f"{quantity} {face}s"}
        if roll % 3 == 1:
            return Reply(reply | {"notes": f"deal {view.deal}"}, usage={"input_tokens": 7})
        return reply


@hookimpl
def register_seats(register):
    register("misbehaving", Misbehaving, description="Breaks rule 11 on purpose.")
