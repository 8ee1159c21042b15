"""The rules' sequence as one state machine: who acts, what is legal, what ends deals and episodes.

In the spirit of OpenSpiel's ``State``: an :class:`EpisodeState` deals each
:class:`DealState` (rule 1), which knows the seat on turn (rules 2 and 5), the legal
actions (rules 3, 4 and 8), and applies one action at a time, answering with what
happened (:class:`BidApplied`, or :class:`ChallengeResolved` with rule 6's count,
winner and loser). A deal ends at its challenge (rule 7); the episode ends
``complete`` after its deals, ``deadline`` at a deal boundary or ``quit`` at any
moment (rule 9), and then holds the points and scores.

Everything that plays or reads the sequence drives this one reading of it: the Python
engine with seats' decisions, ``arena check`` with a log's. It is pure: no seats, no
I/O, no clock; the caller says when the clock ran out or a seat left. The compiled
table (``arena/fast``) is tested against it byte for byte, and ``tests/referee.py``
is the independent second reading.

A checker must go on reading a log past its first broken rule, so ``apply`` and
``next_deal`` take ``strict=False`` to play a move as the log made it, legal or not.
"""

from __future__ import annotations

import attrs

from arena import seeding
from arena.actions import Action, Challenge
from arena.rules import Resolution, StandingBid, TableRules, opener, resolve, score

COMPLETE, DEADLINE, QUIT = "complete", "deadline", "quit"
"""Rule 9's statuses; ``quit`` is a person leaving or a table server stopping."""
ASKS_PER_DECISION = 2
"""Rule 11: a seat is asked once and retried once; then the fallback moves."""


class IllegalMove(ValueError):
    """A strict caller applied an action the rules do not allow here; ``str(e)`` says why."""


@attrs.frozen(slots=False)  # one per move: without slots attrs makes it for half the cost
class BidApplied:
    """Rules 4 and 5: the bid stands, and the turn moved on."""

    bid: StandingBid


@attrs.frozen(slots=False)
class ChallengeResolved:
    """Rules 6 to 8: the challenge of ``bid`` by ``challenger``, and the deal's end."""

    challenger: int
    bid: StandingBid
    forced: bool
    """Rule 8: the cap made it; no seat was asked."""
    outcome: Resolution


Applied = BidApplied | ChallengeResolved


@attrs.frozen
class Settlement:
    """How the episode ended (rule 9) and its scoring."""

    status: str
    deals_played: int
    points: tuple[int, ...]
    score: tuple[float, ...]


def why_illegal(
    action: Action, rules: TableRules, standing: StandingBid | None, bids_made: int
) -> str | None:
    """Rules 3, 4, 6 and 8: why ``action`` may not be played here, or ``None``."""
    if isinstance(action, Challenge):
        if standing is None:
            return "challenge with no standing bid: the opening seat must bid"
        return None
    if rules.cap_reached(bids_made):
        return f"the bid cap of {rules.max_bids} bids is reached: only challenge"
    return rules.bid_error(action.quantity, action.face, standing)


class DealState:
    """One deal in progress: the seat on turn, its legal actions, and rule 11's asks."""

    def __init__(
        self, episode: EpisodeState, number: int, hands: tuple[tuple[int, ...], ...]
    ) -> None:
        self._episode = episode
        self._order = episode.order
        self._next_position = episode.next_position
        self._cap_reached = episode.cap_reached
        self.rules = episode.rules
        self.number = number
        self.hands = hands
        self.opener = opener(episode.order, number)
        self.position = number % self.rules.seats
        """Table position of the seat on turn (rule 1 opens at d mod seats)."""
        self.actor = self.opener
        """Rules 2 and 5: the one slot that acts now."""
        self.bids: tuple[StandingBid, ...] = ()
        """Tuples, grown by one per bid, so every view of the deal shares them."""
        self.standing: StandingBid | None = None
        self.forced = self._cap_reached(0)
        """Rule 8: the cap is reached; the table challenges for the seat on turn."""
        self._legal: Action | None = None
        """The action :meth:`illegal` last found legal, so :meth:`apply` need not check it
        twice (an engine checks each reply before it applies it)."""
        self.rejections = 0
        """Rule 11: replies refused for the decision on turn."""
        self.faulted = False
        """Rule 11: the seat on turn could not be reached; it is not asked again."""
        self.over = False

    @property
    def can_challenge(self) -> bool:
        """Rule 3: a challenge needs a standing bid."""
        return self.standing is not None

    @property
    def min_bid(self) -> tuple[int, int] | None:
        """Rule 4's lowest legal bid, or ``None`` when only a challenge is left."""
        return None if self.forced else self.rules.min_raise(self.standing)

    def illegal(self, action: Action) -> str | None:
        """Why the seat on turn may not play ``action``, or ``None`` when it may."""
        reason = why_illegal(action, self.rules, self.standing, len(self.bids))
        self._legal = action if reason is None else None
        return reason

    # --- rule 11: asking the seat on turn ------------------------------------------------

    @property
    def may_ask(self) -> bool:
        """Rule 11: the seat on turn may be asked (again) for its decision."""
        return not self.faulted and self.rejections < ASKS_PER_DECISION

    @property
    def fallback_due(self) -> bool:
        """Rule 11: the seat had its two asks (or was unreachable); bayes moves for it."""
        return not self.may_ask

    def reject(self) -> None:
        """The seat's reply was refused; it is asked once more if it has an ask left."""
        self.rejections += 1

    def fault(self) -> None:
        """The seat could not answer: it is not asked again for this decision."""
        self.faulted = True

    # --- moves ------------------------------------------------------------------------------

    def apply(self, action: Action, *, strict: bool = True) -> Applied | None:
        """Play ``action`` for the seat on turn; what happened.

        At the cap the only legal action is the challenge, which the table makes for the
        seat (rule 8: it comes back ``forced``). Strict (the engine) refuses an illegal
        action with :class:`IllegalMove`; ``strict=False`` (a checker reading a log) plays
        it as made, and a challenge with no standing bid then ends the deal with no point
        moved and no event.
        """
        if self.over:
            raise IllegalMove(f"deal {self.number} is over")
        if action is not self._legal and strict:
            reason = self.illegal(action)
            if reason is not None:
                raise IllegalMove(reason)
        self._legal = None
        if self.rejections or self.faulted:  # rule 11's count starts again for the next seat
            self.rejections, self.faulted = 0, False
        slot = self.actor
        if isinstance(action, Challenge):
            return self._challenge(slot)
        bid = StandingBid(slot, action.quantity, action.face)
        bids = self.bids = (*self.bids, bid)
        self.standing = bid
        self.forced = self._cap_reached(len(bids))
        self.position = position = self._next_position[self.position]
        self.actor = self._order[position]
        return BidApplied(bid)

    def _challenge(self, slot: int) -> ChallengeResolved | None:
        """Rules 6 and 7: reveal, count, move one point, and end the deal."""
        standing, forced = self.standing, self.forced
        self.over = True
        if standing is None:
            self._episode._close_deal(None)
            return None
        outcome = resolve(self.hands, standing, slot, wild=self.rules.mode.wild)
        self._episode._close_deal(outcome)
        return ChallengeResolved(slot, standing, forced, outcome)


class EpisodeState:
    """One episode: the table order, its deals in turn, the points, and how it ended."""

    def __init__(self, rules: TableRules, seed: int, deals: int) -> None:
        self.rules = rules
        self.deals = deals
        self.order = seeding.table_order(seed, rules.seats)
        """Rule 1: a seeded permutation of the slots."""
        self.next_position = tuple((position + 1) % rules.seats for position in range(rules.seats))
        """Rule 5: the table position whose seat acts after the one at each position. With
        :attr:`cap_reached`, bound once here: every bid of every deal steps through both."""
        self.cap_reached = rules.cap_reached
        self._streams = seeding.DealStreams(seed)
        self.points = [0] * rules.seats
        self.played = 0
        """Deals resolved (rule 9's ``dealsPlayed``)."""
        self.deal: DealState | None = None
        """The deal in progress, if one is."""
        self.status: str | None = None
        """Set when the episode ends."""

    @property
    def over(self) -> bool:
        return self.status is not None

    def hands(self, number: int) -> tuple[tuple[int, ...], ...]:
        """Rule 1: the hands of deal ``number`` depend only on (seed, number)."""
        return self._streams.hands(number, self.rules.seats, self.rules.mode)

    def next_deal(self, *, strict: bool = True, number: int | None = None) -> DealState:
        """Rule 1: open the next deal with its hands and opener.

        ``strict=False`` (a checker) drops a deal left open and may open ``number``
        where the log says so, the episode's end notwithstanding.
        """
        if strict and (self.over or self.deal is not None):
            raise IllegalMove("no deal is due: " + (self.status or "a deal is in progress"))
        number = self.played if number is None else number
        self.deal = DealState(self, number, self.hands(number))
        return self.deal

    def run_out(self, *, strict: bool = True) -> None:
        """Rule 9: the clock ran out. It settles the episode ``deadline`` at a deal boundary;
        ``strict=False`` drops a deal left open first."""
        if strict and self.deal is not None:
            raise IllegalMove("the clock settles an episode only between deals")
        self.deal = None
        if not self.over:
            self.status = DEADLINE

    def quit(self) -> None:
        """A seat left or the table closed: the deal in progress moved no point, so the
        episode settles on the deals resolved; ``complete`` if that was all of them."""
        self.deal = None
        if not self.over:
            self.status = QUIT

    def settlement(self) -> Settlement:
        """Points and each seat's score: score = 0.5 + points / (2 dealsPlayed)."""
        if self.status is None:
            raise IllegalMove("the episode has not ended")
        played = self.played
        return Settlement(
            self.status, played, tuple(self.points), tuple(score(p, played) for p in self.points)
        )

    def _close_deal(self, outcome: Resolution | None) -> None:
        """Rules 6, 7 and 9: score the challenge, end the deal, and the episode after the last."""
        if outcome is not None:
            self.points[outcome.winner] += 1
            self.points[outcome.loser] -= 1
        self.deal = None
        self.played += 1
        if self.played >= self.deals and not self.over:
            self.status = COMPLETE
