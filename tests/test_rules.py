"""One or more tests per numbered rule of rules.md, the scoring formulas and the poker variant.

Expected values are worked out by hand from the rulebook in the comments; the
engine runs with hand-written seats (``plugins_for_tests.seats``) so every
position is known, and every log is also replayed by the independent referee.
"""

from __future__ import annotations

import itertools
import time

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st
from plugins_for_tests.harness import play_table, plugged
from plugins_for_tests.seats import MinRaiser, Recording, Scripted
from referee import BASELINES, baseline_moves, replay

from arena import hookimpl
from arena.actions import Bid, Challenge
from arena.modes import Mode
from arena.replies import IllegalReply, Unusable, check_legal, loggable, parse_action
from arena.rules import (
    DEFAULT_MAX_BIDS,
    MAX_SEATS,
    MIN_SEATS,
    StandingBid,
    TableRules,
    is_raise,
    opener,
    resolve,
    score,
)
from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatSpec, SeatUnavailable
from arena_plugins.dice import DICE
from arena_plugins.poker import POKER


def of(records: list[dict], kind: str) -> list[dict]:
    return [r for r in records if r["type"] == kind]


def header(records: list[dict]) -> dict:
    assert records[0]["type"] == "episode"
    return records[0]


# --- rule 1: deal opens -------------------------------------------------------------


@pytest.mark.parametrize("seats", [2, 3, 4, 5, 8])
def test_rule_01_opener_of_deal_d_is_table_position_d_mod_seats(seats):
    deals = 2 * seats + 1  # wraps the table twice and one more
    _, records = play_table([MinRaiser() for _ in range(seats)], DICE, seed=11, deals=deals)
    order = header(records)["tableOrder"]
    for record in of(records, "deal"):
        assert record["opener"] == order[record["deal"] % seats]
    # ... and the opener is the one who makes the deal's first bid.
    first_bids = {}
    for bid in of(records, "bid"):
        first_bids.setdefault(bid["deal"], bid["slot"])
    assert [first_bids[d] for d in range(deals)] == [order[d % seats] for d in range(deals)]
    replay(records)


def test_rule_01_opener_function_is_position_d_mod_seats():
    order = (2, 0, 3, 1)
    # deal 0 -> position 0 (slot 2), deal 5 -> position 1 (slot 0), deal 7 -> position 3 (slot 1)
    assert [opener(order, d) for d in (0, 1, 2, 3, 4, 5, 7)] == [2, 0, 3, 1, 2, 0, 1]


def test_rule_01_table_order_is_a_seeded_permutation_of_the_slots():
    orders = []
    for seed in range(40):
        _, records = play_table([MinRaiser() for _ in range(4)], DICE, seed=seed, deals=1)
        order = header(records)["tableOrder"]
        assert sorted(order) == [0, 1, 2, 3]
        orders.append(tuple(order))
    # 40 seeded draws from 24 permutations: about 24 * (1 - (23/24)**40) = 19.6 distinct are
    # expected; a fixed or barely varying order would show a handful at most.
    assert len(set(orders)) >= 10
    # Not the identity every time: the pairing of neighbours changes between episodes.
    assert orders.count((0, 1, 2, 3)) < 10


def test_rule_01_table_order_depends_on_the_seed_only():
    def order(seats_list, deals, max_bids):
        _, records = play_table(seats_list, DICE, seed=5, deals=deals, max_bids=max_bids)
        return header(records)["tableOrder"]

    a = order([MinRaiser() for _ in range(5)], 1, 12)
    b = order([Scripted(["nonsense"]) for _ in range(5)], 4, 3)
    assert a == b


def test_rule_01_hands_of_deal_d_depend_only_on_seed_and_d():
    # Two very different episodes on seed 3: different seats, cap and length.
    _, quiet = play_table([MinRaiser() for _ in range(4)], DICE, seed=3, deals=6, max_bids=12)
    _, noisy = play_table(
        [Scripted(["garbage", "more garbage"] * 3) for _ in range(4)],
        DICE,
        seed=3,
        deals=4,
        max_bids=2,
    )
    quiet_hands = [d["hands"] for d in of(quiet, "deal")]
    noisy_hands = [d["hands"] for d in of(noisy, "deal")]
    assert noisy_hands == quiet_hands[:4]
    # Fresh every deal: no two deals of the episode repeat the whole table.
    assert len({str(h) for h in quiet_hands}) == 6
    # Another seed deals other hands.
    _, other = play_table([MinRaiser() for _ in range(4)], DICE, seed=4, deals=1)
    assert of(other, "deal")[0]["hands"] != quiet_hands[0]


@pytest.mark.parametrize(("mode", "size"), [(DICE, 5), (POKER, 8)])
def test_rule_01_every_seat_is_dealt_a_full_hand_of_the_modes_symbols(mode, size):
    _, records = play_table([MinRaiser() for _ in range(3)], mode, seed=9, deals=5)
    for deal in of(records, "deal"):
        assert len(deal["hands"]) == 3
        for hand in deal["hands"]:
            assert len(hand) == size
            assert set(hand) <= set(mode.symbols)


# --- rule 2: one seat acts at a time --------------------------------------------------


def test_rule_02_each_decision_asks_exactly_the_acting_seat_with_its_own_view():
    seats = [Recording(MinRaiser()) for _ in range(3)]
    _, records = play_table(seats, DICE, seed=2, deals=3, max_bids=5)
    for slot, seat in enumerate(seats):
        assert all(view.slot == slot for view in seat.views)
        actions = [r for r in records if r["type"] in ("bid", "challenge") and r["slot"] == slot]
        asked = [r for r in actions if not r.get("forced")]
        # One ask per decision: no extra calls, and forced challenges are not asked.
        assert len(seat.views) == len(asked)
    replay(records)


def test_rule_02_notes_are_private_to_the_seat_that_wrote_them():
    def with_notes(view):
        low = view.legal.min_bid
        return Bid(*low, notes=f"slot {view.slot} was here")

    seats = [Scripted([with_notes] * 3) for _ in range(3)]
    _, records = play_table(seats, DICE, seed=1, deals=2, max_bids=6)
    for slot, seat in enumerate(seats):
        seen = [v.notes for v in seat.views if v.notes is not None]
        assert seen, "a seat's own notes come back to it"
        assert all(note == f"slot {slot} was here" for note in seen)


def test_rule_02_an_action_may_carry_say_and_notes():
    action = parse_action('{"action": "bid", "quantity": 2, "face": 5, "say": "hi", "notes": "n"}')
    assert action == Bid(2, 5, say="hi", notes="n")
    assert parse_action({"action": "challenge", "say": "liar"}) == Challenge(say="liar")


# --- rule 3: the opening bid ----------------------------------------------------------


def test_rule_03_a_challenge_with_no_standing_bid_is_illegal():
    rules = TableRules(mode=DICE, seats=4)
    with pytest.raises(IllegalReply, match="no standing bid"):
        check_legal(Challenge(), rules, standing=None, bids_made=0)


@pytest.mark.parametrize(
    ("mode", "seats", "top"),
    [(DICE, 4, 20), (DICE, 2, 10), (DICE, 8, 40), (POKER, 4, 32), (POKER, 2, 16)],
)
def test_rule_03_opening_quantity_is_1_to_seats_times_hand_size(mode, seats, top):
    # rules.md: 1 <= quantity <= seats x handSize (20 for four seats of five dice).
    rules = TableRules(mode=mode, seats=seats)
    face = mode.symbols[0]
    assert rules.max_quantity == top
    assert rules.bid_error(1, face, None) is None
    assert rules.bid_error(top, face, None) is None
    assert "out of range" in rules.bid_error(0, face, None)
    assert "out of range" in rules.bid_error(top + 1, face, None)


@pytest.mark.parametrize(
    ("mode", "good", "bad"), [(DICE, (1, 6), (0, 7)), (POKER, (0, 9), (-1, 10))]
)
def test_rule_03_face_must_be_in_the_modes_range(mode, good, bad):
    rules = TableRules(mode=mode, seats=4)
    for face in good:
        assert rules.bid_error(3, face, None) is None
    for face in bad:
        assert "is not one of" in rules.bid_error(3, face, None)


def test_rule_03_the_opening_seat_must_bid_and_a_challenge_is_rejected():
    opening_challenge = [lambda v: Challenge() if v.standing is None else "challenge"]
    seats = [Scripted(opening_challenge) for _ in range(2)]
    _, records = play_table(seats, DICE, seed=0, deals=1)
    rejected = of(records, "rejected")
    assert rejected[0]["reason"].startswith("challenge with no standing bid")
    assert of(records, "bid")[0]["fallback"] is False  # the retry then bid (MinRaiser)
    replay(records)


# --- rule 4: strict raise, ones not wild -------------------------------------------------


@pytest.mark.parametrize(
    ("bid", "legal"),
    [
        ((4, 3), True),  # higher quantity, same face
        ((4, 1), True),  # higher quantity, lower face
        ((3, 5), True),  # equal quantity, higher face
        ((3, 4), False),  # equal bid
        ((3, 2), False),  # equal quantity, lower face
        ((2, 6), False),  # lower quantity, any face
    ],
)
def test_rule_04_strict_raise(bid, legal):
    standing = StandingBid(slot=1, quantity=3, face=4)
    assert is_raise(*bid, standing) is legal
    rules = TableRules(mode=DICE, seats=4)
    error = rules.bid_error(*bid, standing)
    assert (error is None) is legal
    if not legal:
        assert "does not raise the standing bid 3x4" in error


def test_rule_04_ones_are_not_wild():
    # Bid 4x5. The fives on the table: one in slot 0, one in slot 2 -> actual 2, a lie,
    # although there are five ones that a wild-ones game would have counted too.
    hands = [(5, 1, 1, 2, 3), (1, 1, 2, 3, 4), (5, 1, 6, 6, 2)]
    outcome = resolve(hands, StandingBid(slot=0, quantity=4, face=5), challenger=1, wild=None)
    assert outcome.actual == 2
    assert (outcome.winner, outcome.loser) == (1, 0)
    # Bidding ones counts only ones: five of them.
    outcome = resolve(hands, StandingBid(slot=0, quantity=5, face=1), challenger=1, wild=None)
    assert (outcome.actual, outcome.winner) == (5, 0)


def test_rule_04_a_non_raising_reply_is_rejected_in_play():
    # The opener bids 3x4; the next seat first repeats it, then tries 3x2, both illegal.
    def reply(view):
        if view.standing is None:
            return "bid 3 4"
        return Bid(3, 4) if view.retry_reason is None else Bid(3, 2)

    seats = [Scripted([reply, reply]) for _ in range(2)]
    _, records = play_table(seats, DICE, seed=4, deals=1, max_bids=2)
    reasons = [r["reason"] for r in of(records, "rejected")]
    assert reasons == [
        "bid 3x4 does not raise the standing bid 3x4",
        "bid 3x2 does not raise the standing bid 3x4",
    ]
    second = [r for r in records if r["type"] in ("bid", "challenge")][1]
    assert second["fallback"] is True  # bayes moved for the seat, bid or challenge
    replay(records)


DICE4 = TableRules(mode=DICE, seats=4)  # 20 dice: quantities 1..20, faces 1..6


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


# --- rule 5: turn advance ----------------------------------------------------------------


def test_rule_05_after_a_bid_the_turn_moves_to_the_next_table_position_wrapping():
    # Five seats and a cap of 12: one deal runs 12 bids, wrapping the table twice.
    _, records = play_table([MinRaiser() for _ in range(5)], DICE, seed=8, deals=3)
    order = header(records)["tableOrder"]
    for d in range(3):
        actors = [r["slot"] for r in records if r.get("deal") == d and "slot" in r]
        start = d % 5
        assert actors == [order[(start + i) % 5] for i in range(len(actors))]
        assert len(actors) == 13  # 12 bids and the forced challenge
    replay(records)


# --- rule 6: challenge -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("quantity", "winner", "loser"),
    [
        (3, 2, 0),  # actual 3 >= 3: truthful, bidder (2) +1, challenger (0) -1
        (4, 0, 2),  # actual 3 < 4: a lie, challenger +1, bidder -1
        (1, 2, 0),
    ],
)
def test_rule_06_resolution_counts_the_face_across_all_hands(quantity, winner, loser):
    hands = [(6, 2, 2, 3, 4), (1, 1, 1, 1, 6), (6, 5, 5, 5, 2), (3, 3, 3, 3, 3)]
    standing = StandingBid(slot=2, quantity=quantity, face=6)
    outcome = resolve(hands, standing, challenger=0, wild=None)
    assert outcome.actual == 3  # one six in slot 0, one in slot 1, one in slot 2
    assert (outcome.winner, outcome.loser) == (winner, loser)


def test_rule_06_every_hand_is_revealed_to_every_seat_after_a_challenge():
    # Cap 2 on four seats: positions 0 and 1 bid, position 2 is forced to challenge.
    seats = [Recording(MinRaiser()) for _ in range(4)]
    _, records = play_table(seats, DICE, seed=6, deals=2, max_bids=2)
    order = header(records)["tableOrder"]
    first = of(records, "challenge")[0]
    assert (first["slot"], first["bidder"]) == (order[2], order[1])
    deal0 = of(records, "deal")[0]
    counted = sum(hand.count(first["face"]) for hand in deal0["hands"])
    assert first["actual"] == counted
    # Every view of deal 1 carries deal 0 in full: every hand, the real count, who won.
    later = [v for seat in seats for v in seat.views if v.deal == 1]
    assert later
    for view in later:
        (past,) = view.history
        assert [list(h) for h in past.hands] == deal0["hands"]
        assert (past.actual, past.challenger, past.forced) == (counted, order[2], True)
        assert (past.winner, past.loser) == (first["winner"], first["loser"])
    replay(records)


def test_rule_06_only_bidder_and_challenger_score_in_one_deal():
    outcome, records = play_table(
        [MinRaiser() for _ in range(4)], DICE, seed=6, deals=1, max_bids=2
    )
    (challenge,) = of(records, "challenge")
    for slot in range(4):
        expected = {challenge["winner"]: 1, challenge["loser"]: -1}.get(slot, 0)
        assert outcome.points[slot] == expected


# --- rule 7: the deal ends at the challenge --------------------------------------------------


def test_rule_07_deal_ends_the_moment_a_challenge_resolves():
    # The opener bids, the next seat challenges at once; nobody else is asked in that deal.
    def bid_then_call(view):
        return "bid 1 2" if view.standing is None else "challenge"

    seats = [Scripted([bid_then_call] * 4) for _ in range(3)]
    _, records = play_table(seats, DICE, seed=10, deals=2)
    kinds = [r["type"] for r in records]
    assert kinds == ["episode", "deal", "bid", "challenge", "deal", "bid", "challenge", "result"]
    order = header(records)["tableOrder"]
    third = order[2]
    assert len([v for v in seats[third].views if v.deal == 0]) == 0
    replay(records)


# --- rule 8: the bid cap -------------------------------------------------------------------------


def test_rule_08_default_cap_is_12_bids_so_at_most_13_decisions():
    assert DEFAULT_MAX_BIDS == 12
    assert TableRules(mode=DICE, seats=4).max_bids == 12
    _, records = play_table([MinRaiser() for _ in range(4)], DICE, seed=0, deals=2)
    summary = replay(records)
    assert summary.decisions_per_deal == [13, 13]


@pytest.mark.parametrize("cap", [1, 3, 7])
def test_rule_08_after_the_cap_the_challenge_is_forced_and_the_seat_not_asked(cap):
    seats = [Recording(MinRaiser()) for _ in range(3)]
    _, records = play_table(seats, DICE, seed=12, deals=3, max_bids=cap)
    order = header(records)["tableOrder"]
    for d, challenge in enumerate(of(records, "challenge")):
        bids = [b for b in of(records, "bid") if b["deal"] == d]
        assert len(bids) == cap
        assert challenge["forced"] is True
        assert challenge["fallback"] is False
        forced_slot = order[(d + cap) % 3]
        assert challenge["slot"] == forced_slot
        asked_at_cap = [v for v in seats[forced_slot].views if v.deal == d and len(v.bids) == cap]
        assert asked_at_cap == []
    replay(records)


def test_rule_08_a_bid_the_cap_forbids_is_rejected_with_a_reason():
    rules = TableRules(mode=DICE, seats=4, max_bids=3)
    standing = StandingBid(slot=1, quantity=2, face=3)
    assert check_legal(Bid(3, 3), rules, standing, bids_made=2) == Bid(3, 3)
    with pytest.raises(IllegalReply, match="cap of 3 bids is reached"):
        check_legal(Bid(3, 3), rules, standing, bids_made=3)
    # A challenge stays legal at the cap.
    assert check_legal(Challenge(), rules, standing, bids_made=3) == Challenge()


def test_rule_08_cap_must_be_at_least_one():
    with pytest.raises(ValueError, match="max bids"):
        TableRules(mode=DICE, seats=4, max_bids=0)


# --- rule 9: next deal, complete or deadline ----------------------------------------------------


def test_rule_09_after_all_deals_the_episode_settles_complete():
    outcome, records = play_table([MinRaiser() for _ in range(3)], DICE, seed=1, deals=7)
    assert (outcome.status, outcome.deals_played) == ("complete", 7)
    assert of(records, "result")[0]["status"] == "complete"
    assert [d["deal"] for d in of(records, "deal")] == list(range(7))
    replay(records)


class Sleepy(MinRaiser):
    """Takes 10 ms a decision."""

    def decide(self, view):
        time.sleep(0.01)
        return super().decide(view)


def test_rule_09_the_clock_settles_deadline_at_a_deal_boundary_scored_on_deals_played():
    # A cap of 1 makes a deal one 10 ms decision plus the forced challenge: 1000 deals need
    # >= 10 s, so the 0.25 s clock must stop the episode early. Deal 0 starts the moment the
    # clock does, so at least one deal is played.
    seats = [Sleepy() for _ in range(2)]
    outcome, records = play_table(seats, DICE, seed=3, deals=1000, max_bids=1, clock=0.25)
    assert outcome.status == "deadline"
    assert 1 <= outcome.deals_played < 1000
    # Settled at a boundary: every started deal resolved.
    assert len(of(records, "deal")) == len(of(records, "challenge")) == outcome.deals_played
    n = outcome.deals_played
    assert list(outcome.score) == [0.5 + p / (2 * n) for p in outcome.points]
    replay(records)


# --- rule 10: talk -----------------------------------------------------------------------------


def talker(view):
    """Says which deal and turn it is on every bid; challenges at the cap's edge."""
    if view.legal.min_bid is None:
        return Challenge(say="calling")
    return Bid(*view.legal.min_bid, say=f"d{view.deal} b{len(view.bids)} s{view.slot}")


def test_rule_10_talk_is_published_at_once_and_seen_in_the_next_prompt_of_the_deal():
    seats = [Scripted([talker] * 20) for _ in range(3)]
    _, records = play_table(seats, DICE, seed=5, deals=2, max_bids=4, talk=True)
    for bid in of(records, "bid"):
        assert bid["published"] == bid["say"]
    for seat in seats:
        for view in seat.views:
            said_before = [
                (b["slot"], b["say"])
                for b in of(records, "bid")
                if b["deal"] == view.deal and b["say"] and _before(records, b, view)
            ]
            assert [(t.slot, t.text) for t in view.talk] == said_before
            assert view.talk_enabled
    replay(records)


def _before(records: list[dict], bid: dict, view) -> bool:
    """The bid was applied before this view was built: it is among the view's bids."""
    index = [b for b in of(records, "bid") if b["deal"] == view.deal].index(bid)
    return index < len(view.bids)


def test_rule_10_talk_does_not_carry_across_deals():
    seats = [Scripted([talker] * 20) for _ in range(2)]
    play_table(seats, DICE, seed=5, deals=3, max_bids=3, talk=True)
    for seat in seats:
        for view in seat.views:
            if not view.bids:  # an opening turn: nothing said yet this deal
                assert view.talk == ()


def test_rule_10_talk_off_publishes_nothing_and_makes_no_extra_call():
    seats = [Scripted([talker] * 20) for _ in range(3)]
    _, records = play_table(seats, DICE, seed=5, deals=2, max_bids=4, talk=False)
    assert all(r["published"] is None for r in of(records, "bid"))
    assert all(view.talk == () and not view.talk_enabled for s in seats for view in s.views)
    asked = [r for r in records if r["type"] in ("bid", "challenge") and not r.get("forced")]
    assert sum(len(s.views) for s in seats) == len(asked)


def test_rule_10_talk_filters_run_in_order_and_may_drop_a_line():
    def shout(text, slot):
        return text.upper()

    def hush_second(text, slot):
        return None if "B1" in text else text

    seats = [Scripted([talker] * 20) for _ in range(2)]
    _, records = play_table(
        seats, DICE, seed=5, deals=1, max_bids=3, talk=True, talk_filters=[shout, hush_second]
    )
    published = [b["published"] for b in of(records, "bid")]
    assert published[0] == of(records, "bid")[0]["say"].upper()
    assert published[1] is None  # "... b1 ..." upper-cased to "B1", then dropped
    assert [b["say"] for b in of(records, "bid")][1].startswith("d0 b1")


# --- rule 11: illegal actions never stall the table ---------------------------------------


def opening(first_reply, retry_reply):
    """A seat that answers its opening turn with ``first_reply``, then ``retry_reply``.

    An exception in place of a reply is raised, as a crashing seat would.
    """

    def answer(reply):
        def decide(view):
            if view.standing is not None:
                return MinRaiser().decide(view)
            if isinstance(reply, BaseException):
                raise reply
            return reply

        return decide

    return Scripted([answer(first_reply), answer(retry_reply)])


REJECTED_OPENINGS = {
    "unparseable": ("I think maybe", "unparseable reply"),
    "unparseable JSON": ('{"action": "bid", ', "unparseable JSON reply"),
    "quantity out of range": (Bid(21, 3), "quantity 21 is out of range 1..20"),
    "quantity zero": ({"action": "bid", "quantity": 0, "face": 3}, "out of range 1..20"),
    "face out of range": ("bid 2 7", "face 7 is not one of 1..6"),
    "challenge without bid": ("challenge", "challenge with no standing bid"),
    "not a reply at all": (None, "unparseable reply of type NoneType"),
    "seat raises": (RuntimeError("model exploded"), "seat raised RuntimeError: model exploded"),
}


@pytest.mark.parametrize("case", sorted(REJECTED_OPENINGS))
def test_rule_11_rejected_reply_is_retried_once_with_its_reason(case):
    reply, reason = REJECTED_OPENINGS[case]
    seats = [opening(reply, "bid 2 3") for _ in range(4)]
    _, records = play_table(seats, DICE, seed=13, deals=1, max_bids=1)
    opener_slot = of(records, "deal")[0]["opener"]
    (rejected,) = of(records, "rejected")
    assert rejected["slot"] == opener_slot
    assert reason in rejected["reason"]
    views = seats[opener_slot].views
    assert views[0].retry_reason is None
    assert views[1].retry_reason == rejected["reason"]  # asked once more WITH the reason
    first_bid = of(records, "bid")[0]
    assert (first_bid["quantity"], first_bid["face"], first_bid["fallback"]) == (2, 3, False)
    replay(records)


@pytest.mark.parametrize("case", sorted(REJECTED_OPENINGS))
def test_rule_11_second_failure_applies_the_bayes_move_marked_fallback(case):
    reply, reason = REJECTED_OPENINGS[case]
    seats = [opening(reply, reply) for _ in range(4)]
    _, records = play_table(seats, DICE, seed=13, deals=1, max_bids=1)
    deal = of(records, "deal")[0]
    opener_slot = deal["opener"]
    rejected = of(records, "rejected")
    assert [r["slot"] for r in rejected] == [opener_slot, opener_slot]
    assert all(reason in r["reason"] for r in rejected)
    assert len(seats[opener_slot].views) == 2  # asked twice, never a third time
    bid = of(records, "bid")[0]
    assert bid["fallback"] is True and bid["slot"] == opener_slot
    # The referee's own reading of bayes' opening line for this hand.
    hand = deal["hands"][opener_slot]
    allowed = baseline_moves(BASELINES["bayes"], hand, None, list(DICE.symbols), 20, 15)
    assert ("bid", bid["quantity"], bid["face"]) in allowed
    replay(records)


def test_rule_11_a_seat_that_is_unavailable_falls_back_at_once_without_a_retry():
    seats = [opening(SeatUnavailable("api down"), "bid 2 3") for _ in range(2)]
    _, records = play_table(seats, DICE, seed=2, deals=1, max_bids=1)
    opener_slot = of(records, "deal")[0]["opener"]
    kinds = [r["type"] for r in records]
    assert kinds[:4] == ["episode", "deal", "fault", "bid"]
    assert of(records, "fault")[0]["reason"] == "api down"
    assert of(records, "bid")[0]["fallback"] is True
    assert len(seats[opener_slot].views) == 1
    assert of(records, "rejected") == []
    replay(records)


def test_rule_11_the_fallback_drops_talk_and_keeps_the_seats_notes():
    def bad(view):
        return {"action": "bid", "quantity": 99, "face": 1, "say": "x", "notes": "mine"}

    seats = [Scripted([bad, bad]) for _ in range(2)]
    _, records = play_table(seats, DICE, seed=2, deals=1, max_bids=1, talk=True)
    bid = of(records, "bid")[0]
    assert (bid["fallback"], bid["say"], bid["published"], bid["notes"]) == (
        True,
        None,
        None,
        None,
    )


def test_rule_11_rejections_and_fallbacks_are_counted_per_seat():
    seats = [opening("junk", "junk") for _ in range(2)]
    outcome, records = play_table(seats, DICE, seed=2, deals=1, max_bids=1)
    opener_slot = of(records, "deal")[0]["opener"]
    tally = outcome.tallies[opener_slot]
    assert (tally.decisions, tally.rejected, tally.fallbacks) == (1, 2, 1)


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


# --- scoring ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("points", "played", "expected"),
    [
        (0, 0, 0.5),  # no deal played
        (0, 10, 0.5),
        (3, 10, 0.65),  # 0.5 + 3 / 20
        (-3, 10, 0.35),
        (10, 10, 1.0),  # won every deal
        (-10, 10, 0.0),
        (1, 3, 0.5 + 1 / 6),
    ],
)
def test_scoring_formula(points, played, expected):
    assert score(points, played) == pytest.approx(expected, abs=1e-15)


def test_scoring_points_are_wins_minus_losses_and_sum_to_zero():
    outcome, records = play_table([MinRaiser() for _ in range(5)], DICE, seed=21, deals=9)
    wins, losses = [0] * 5, [0] * 5
    for challenge in of(records, "challenge"):
        wins[challenge["winner"]] += 1
        losses[challenge["loser"]] += 1
    assert list(outcome.points) == [w - lost for w, lost in zip(wins, losses, strict=True)]
    assert sum(outcome.points) == 0
    assert sum(outcome.score) / 5 == pytest.approx(0.5, abs=1e-12)
    assert list(outcome.score) == [0.5 + p / 18 for p in outcome.points]


# --- the Liar's Poker variant ---------------------------------------------------------------------


def test_poker_mode_is_ten_digits_and_an_eight_digit_serial():
    assert POKER.name == "poker"
    assert POKER.symbols == tuple(range(10))
    assert POKER.hand_size == 8
    rules = TableRules(mode=POKER, seats=4)
    assert rules.max_quantity == 32  # "32 digits on the table"
    assert POKER.p == pytest.approx(1 / 10)


def test_poker_hand_renders_as_digits_with_leading_zeros():
    assert POKER.render_hand((0, 0, 7, 1, 2, 9, 4, 5)) == "00712945"
    assert POKER.render_hand((0,) * 8) == "00000000"


def test_poker_hands_drawn_in_play_render_as_eight_digits():
    _, records = play_table([MinRaiser() for _ in range(4)], POKER, seed=17, deals=10)
    zeros = 0
    for deal in of(records, "deal"):
        for hand in deal["hands"]:
            text = POKER.render_hand(tuple(hand))
            assert len(text) == 8 and text.isdigit() and text.isascii()
            assert [int(c) for c in text] == hand
            zeros += text.startswith("0")
    # 40 serials with P(leading zero) = 1/10: 4 expected; seed 17 gives at least one,
    # which shows a leading zero survives rendering.
    assert zeros >= 1
    replay(records)


def test_poker_zero_is_a_biddable_face_and_bid_ordering_is_unchanged():
    rules = TableRules(mode=POKER, seats=4)
    assert rules.bid_error(1, 0, None) is None
    standing = StandingBid(slot=0, quantity=4, face=9)
    assert rules.bid_error(4, 0, standing) is not None  # equal quantity, lower face
    assert rules.bid_error(5, 0, standing) is None


def test_an_unusable_reply_is_rejected_with_its_seats_own_reason_and_logs_its_text():
    # Rule 11: the seat knew its reply named no action (cut off mid-call); the rejection is
    # its sentence, not the text parser's, and the log keeps what the model wrote.
    cut = Unusable("cut off at the token limit before an action", '{"action": "bid", "qu')
    with pytest.raises(IllegalReply) as rejected:
        parse_action(cut)
    assert str(rejected.value) == "cut off at the token limit before an action"
    assert loggable(cut) == '{"action": "bid", "qu'
    assert loggable(Unusable("why", "x" * 5000)) == "x" * 4000  # the logged reply's cap
