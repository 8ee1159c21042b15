"""Behaviours no test pinned down: each test here kills mutants that survived a mutation run.

The run changed the code one operator at a time; these mutants changed behaviour and
every test still passed. Each test below is worked out from rules.md on a position
where the mutant and the rulebook disagree:

- the lowest legal bid (``min_raise`` / ``LegalActions.min_bid``), not just a legal one;
- the Claude prompt: a bid whose count equals its quantity is true (rule 6), a seat's
  own talk stays in its prompt, and the poker odds (p = 1/10) are the binomial tail;
- boundaries: notes of exactly 4,000 characters, pressure padding to exactly the maximum;
- rule 11's fallback is bayes, on a position where pressure would move differently.
"""

from __future__ import annotations

import itertools
import math

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st
from plugins_for_tests.harness import context, make_view, play_table, plugged
from plugins_for_tests.seats import MinRaiser, Scripted
from test_claude_prompt import POLICY, SETTINGS, text_of

from arena import hookimpl
from arena.actions import Bid, Challenge
from arena.engine import NOTES_CAP
from arena.modes import Mode
from arena.rules import MAX_SEATS, MIN_SEATS, StandingBid, TableRules
from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatSpec
from arena.view import PastDeal, PublicBid, TalkLine
from arena_plugins.claude.prompt import build_request
from arena_plugins.dice import DICE
from arena_plugins.poker import POKER
from arena_plugins.scripted import pressure

DICE4 = TableRules(mode=DICE, seats=4)  # 20 dice: quantities 1..20, faces 1..6


# --- the lowest legal bid ------------------------------------------------------------------


def lowest_by_rule_4(rules: TableRules, standing: StandingBid | None):
    """Rules 3 and 4 read literally: walk every bid in increasing order, keep the first legal."""
    for quantity in range(1, rules.max_quantity + 1):
        for face in rules.mode.symbols:
            if standing is None or (
                quantity > standing.quantity
                or (quantity == standing.quantity and face > standing.face)
            ):
                return quantity, face
    return None


@pytest.mark.parametrize(
    "standing, lowest",
    [
        (None, (1, 1)),  # rule 3: any opening, and 1 x 1 is the least of them
        ((3, 4), (3, 5)),  # the same quantity may go up a face
        ((3, 6), (4, 1)),  # no face above 6: one more, and the face wraps to 1
        ((19, 6), (20, 1)),
        ((20, 5), (20, 6)),
        ((20, 6), None),  # the top bid: nothing raises it, only a challenge
    ],
)
def test_min_raise_is_the_lowest_legal_bid_in_dice(standing, lowest):
    bid = None if standing is None else StandingBid(0, *standing)
    assert DICE4.min_raise(bid) == lowest


def test_min_raise_opens_poker_at_one_zero_and_wraps_nine_to_zero():
    rules = TableRules(mode=POKER, seats=4)  # digits 0..9, 32 digits on the table
    assert rules.min_raise(None) == (1, 0)
    assert rules.min_raise(StandingBid(1, 5, 9)) == (6, 0)
    assert rules.min_raise(StandingBid(1, 32, 9)) is None


@given(
    mode=st.sampled_from([DICE, POKER]),
    seats=st.integers(MIN_SEATS, MAX_SEATS),
    data=st.data(),
)
def test_min_raise_is_never_above_the_lowest_legal_bid(mode, seats, data):
    rules = TableRules(mode=mode, seats=seats)
    standing = data.draw(
        st.none()
        | st.builds(
            StandingBid,
            st.just(0),
            st.integers(1, rules.max_quantity),
            st.sampled_from(mode.symbols),
        )
    )
    assert rules.min_raise(standing) == lowest_by_rule_4(rules, standing)


def test_every_view_offers_the_lowest_legal_bid_as_min_bid():
    # Through the engine: each seat's view must name exactly rule 4's lowest bid.
    seats = [Scripted([], then=MinRaiser()) for _ in range(3)]
    play_table(seats, DICE, seed=3, deals=4, max_bids=12)
    rules = TableRules(mode=DICE, seats=3)
    views = [view for seat in seats for view in seat.views]
    assert views
    for view in views:
        standing = view.bids[-1] if view.bids else None
        bid = None if standing is None else StandingBid(*attrs.astuple(standing))
        assert view.legal.min_bid == lowest_by_rule_4(rules, bid)


# --- the Claude prompt ------------------------------------------------------------------------


def prompt_after(past: PastDeal) -> str:
    view = attrs.evolve(make_view(DICE4, (1, 2, 3, 4, 5), slot=0, deal=1), history=(past,))
    _, record, _ = text_of(build_request(view, DICE4, POLICY, SETTINGS))
    return record


def test_a_bid_whose_count_equals_its_quantity_is_reported_true():
    # s1 bid 3 x 4 and s0 challenged; the hands hold exactly three 4s (s1 two, s3 one).
    # Rule 6: actual 3 >= quantity 3, so the bid was true: s1 +1, s0 -1.
    hands = ((1, 2, 3, 5, 6), (4, 4, 1, 1, 2), (6, 6, 5, 5, 2), (4, 3, 3, 2, 1))
    past = PastDeal(0, 1, (PublicBid(1, 3, 4),), 0, False, 3, hands, winner=1, loser=0)
    record = prompt_after(past)
    assert "face 4 showed 3 times, the bid was true; s1 +1, s0 (you) -1" in record
    # ... and one fewer is a lie.
    lie = attrs.evolve(past, bids=(PublicBid(1, 4, 4),), winner=0, loser=1)
    assert "face 4 showed 3 times, the bid was false; s0 (you) +1, s1 -1" in prompt_after(lie)


def test_a_seats_own_talk_stays_in_its_prompt():
    view = attrs.evolve(
        make_view(DICE4, (1, 2, 3, 4, 5), [(3, 2, 4), (0, 3, 4)], slot=1),
        talk_enabled=True,
        talk=(TalkLine(3, "fours everywhere"), TalkLine(1, "I hold none")),
    )
    _, _, tail = text_of(build_request(view, DICE4, POLICY, SETTINGS))
    assert "s3: fours everywhere" in tail
    assert "s1 (you): I hold none" in tail


def test_the_poker_odds_table_is_the_binomial_tail_at_p_one_tenth():
    # Four seats of 8 digits: 24 unseen, each showing a given digit with p = 1/10.
    # P(X >= k) = 1 - sum_{i<k} C(24, i) (1/10)^i (9/10)^(24-i):
    # k=1: 1 - 0.9^24 = 0.92023;  k=2: 0.92023 - 24 (0.1) 0.9^23 = 0.70752;
    # k=3: 0.70752 - 276 (0.01) 0.9^22 = 0.43573.
    rules = TableRules(mode=POKER, seats=4)
    view = make_view(rules, (0, 7, 3, 3, 0, 9, 1, 2))
    system, _, _ = text_of(build_request(view, rules, POLICY, SETTINGS))

    def tail(k: int) -> float:
        return 1 - sum(math.comb(24, i) * 0.1**i * 0.9 ** (24 - i) for i in range(k))

    assert f"1: {tail(1):.1%}, 2: {tail(2):.1%}, 3: {tail(3):.1%}" in system
    assert "1: 92.0%, 2: 70.8%, 3: 43.6%" in system


# --- boundaries ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "length, kept, truncated",
    [
        (NOTES_CAP - 1, NOTES_CAP - 1, False),
        (NOTES_CAP, NOTES_CAP, False),
        (NOTES_CAP + 1, NOTES_CAP, True),
    ],
)
def test_notes_of_exactly_the_cap_are_kept_whole(length, kept, truncated):
    assert NOTES_CAP == 4000

    def write_notes(view):
        return Bid(*view.legal.min_bid, notes="n" * length)

    seat = Scripted([write_notes] * 10)
    play_table([seat, MinRaiser()], DICE, seed=1, deals=2, max_bids=4)
    later = seat.views[1:]
    assert later
    assert all(len(v.notes) == kept and v.notes_truncated is truncated for v in later)


COIN = Mode(name="coin", symbols=(1, 2), hand_size=1)
"""Two seats of one coin each: quantities 1..2, so padding can reach the maximum."""


def test_pressure_pads_its_raise_up_to_exactly_the_maximum_quantity():
    rules = TableRules(mode=COIN, seats=2)  # max quantity 2, one unseen coin, p = 1/2
    seat = pressure(context(rules, slot=1))
    # Facing 1 x 1 holding a 2: 1 x 1 is true with chance 1/2 >= chal 0.25, so raise.
    # Lowest raises: 1 x 2 (need 0: certain) and 2 x 1 (need 2 of 1 unseen: impossible).
    # The pick is 1 x 2; padded by one it is 2 x 2, which is exactly the maximum: legal.
    assert seat.decide(make_view(rules, (2,), [(0, 1, 1)], slot=1)) == Bid(2, 2)
    # Facing 1 x 2 holding a 2: certain, so raise. Raises: 2 x 1 (need 2 of 1 unseen:
    # impossible) and 2 x 2 (need 1: chance 1/2 >= safe 0.35). The pick is 2 x 2 at the
    # maximum already; padding would make 3 x 2, past it, so it bids 2 x 2 unpadded.
    assert seat.decide(make_view(rules, (2,), [(0, 1, 2)], slot=1)) == Bid(2, 2)


# --- rule 11's fallback is bayes -----------------------------------------------------------------


TREYS = Mode(
    name="treys", symbols=(1, 2, 3, 4, 5, 6), hand_size=5, draw=lambda mode, rng: (3, 3, 3, 1, 2)
)
"""Dice where every hand is 3 3 3 1 2, so the fallback's position is known in advance."""


class Opens2x3:
    def decide(self, view):
        return Bid(2, 3) if view.standing is None else Challenge()


class Garbage:
    def decide(self, view):
        return "no idea"


class FallbackTable:
    @hookimpl
    def register_modes(self, register):
        register(TREYS)

    @hookimpl
    def register_seats(self, register):
        register("opens-2x3", lambda context: Opens2x3())
        register("garbage", lambda context: Garbage())


def test_the_fallback_is_bayes_where_pressure_would_bid_otherwise():
    # A two-seat table of treys: 10 dice, 5 unseen. Facing 2 x 3 holding three 3s:
    # 2 x 3 is certain (need -1), so both baselines raise. Their lowest raises within
    # q0 + 2: 2x4, 2x5, 2x6 need 2 of 5 at 1/6 (0.196 < safe 0.35), 3x1 and 3x2 need 2
    # (0.196), 3x3 needs 0 (certain). Both pick 3 x 3; bayes bids it, pressure pads it
    # to 4 x 3. The garbage seat is rejected twice, so rule 11's fallback must bid 3 x 3.
    with plugged(FallbackTable(), "fallback_table") as (host, info):
        assert info.broken is None
        specs = (SeatSpec("opens-2x3"), SeatSpec("garbage"))
        request = EpisodeRequest(mode="treys", seats=2, deals=2, seat_specs=specs)
        _, records = run_episode(host, request, environ={})
    answers = [
        r
        for previous, r in itertools.pairwise(records)
        if r["type"] == "bid" and r["slot"] == 1 and previous["type"] == "rejected"
    ]
    assert answers, "the garbage seat never answered a 2 x 3"
    assert all((a["quantity"], a["face"], a["fallback"]) == (3, 3, True) for a in answers)
