"""``cautious``: challenges any standing bid it rates below even money, else makes the
cheapest raise on the face it holds most of. Reads only its SeatView.

As a third-party plugin it runs in the arena's sandbox; it needs nothing else.
"""

from arena import hookimpl


class Cautious:
    def __init__(self, context):
        self.rng = context.rng  # the seat's own seeded stream; unused, but this is where it lives

    def decide(self, view):
        standing = view.standing
        if standing is not None:
            # the exact tail by the mode's own counting (wild symbols included)
            odds = view.bid_probability(standing.quantity, standing.face)
            if odds < 0.5 or view.legal.min_bid is None:
                return {"action": "challenge"}
        quantity, face = view.legal.min_bid
        favourite = max(view.symbols, key=lambda f: (view.hand.count(f), f))
        if standing is None or favourite > standing.face:
            return {"action": "bid", "quantity": quantity, "face": favourite}
        return {"action": "bid", "quantity": quantity, "face": face}


@hookimpl
def register_seats(register):
    register("cautious", Cautious, description="Example plugin: calls below even money.")
