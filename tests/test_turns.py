"""The turn state machine (arena/turns.py), rule by rule, then driven at random against the referee.

Each rule of the sequence in rules.md gets a hand-worked position. Hands are made
known in advance with a mode whose every hand is ``3 3 3 1 2`` (four seats: twelve
3s, four 1s, four 2s, no 4s, 5s or 6s on the table). The property tests play the
state with random actions, legal and illegal (rule 11's retries and the bayes
fallback included), stop it by quit or by the clock, write the log the engine would,
and hand it to ``tests/referee.py``, the independent reading of the rulebook.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from referee import BASELINES, baseline_moves, replay
from referee import raises as referee_raises

from arena.actions import Bid, Challenge
from arena.check import verify
from arena.engine import EpisodeConfig, episode_header
from arena.events import BidMade, ChallengeMade, DealStarted, EpisodeSettled, Rejected, to_line
from arena.modes import Mode
from arena.rules import TableRules
from arena.turns import (
    ASKS_PER_DECISION,
    COMPLETE,
    DEADLINE,
    QUIT,
    BidApplied,
    ChallengeResolved,
    EpisodeState,
    IllegalMove,
)
from arena_plugins.dice import DICE
from arena_plugins.poker import POKER
from arena_plugins.wild import WILD

TREYS = Mode(
    name="treys", symbols=(1, 2, 3, 4, 5, 6), hand_size=5, draw=lambda mode, rng: (3, 3, 3, 1, 2)
)
"""Every hand is 3 3 3 1 2, so each count is known before the deal."""


def episode(seats=4, max_bids=12, deals=3, mode=TREYS, seed=7) -> EpisodeState:
    return EpisodeState(TableRules(mode, seats, max_bids), seed, deals)


# --- rule 1: deal opens -------------------------------------------------------------------


def test_rule_1_deal_d_opens_at_table_position_d_mod_seats():
    state = episode(seats=4, deals=6)
    assert sorted(state.order) == [0, 1, 2, 3]  # a permutation of the slots
    openers = []
    for _ in range(6):
        deal = state.next_deal()
        openers.append(deal.opener)
        assert deal.actor == deal.opener  # the opener acts first
        deal.apply(Bid(1, 1))
        deal.apply(Challenge())
    # Deals 0..5 at positions 0, 1, 2, 3, 0, 1 of the table order.
    o = state.order
    assert openers == [o[0], o[1], o[2], o[3], o[0], o[1]]


def test_rule_1_hands_are_fresh_per_deal_and_depend_only_on_seed_and_deal():
    a, b = episode(mode=DICE, deals=5, seed=99), episode(mode=DICE, deals=9, seed=99)
    deal = a.next_deal()
    assert len(deal.hands) == 4 and all(len(hand) == 5 for hand in deal.hands)
    assert all(set(hand) <= set(range(1, 7)) for hand in deal.hands)
    # Deal 3's hands are the same whatever the episode's length or what came before.
    assert a.hands(3) == b.hands(3)
    assert a.hands(3) != a.hands(4)  # fresh each deal (20 dice agreeing by chance: ~0)
    assert episode(mode=DICE, seed=100).hands(3) != a.hands(3)


# --- rule 2: one seat acts at a time ---------------------------------------------------------


def test_rule_2_exactly_the_seat_on_turn_acts():
    state = episode(seats=3)
    deal = state.next_deal()
    first = deal.actor
    applied = deal.apply(Bid(2, 3))
    assert applied == BidApplied(deal.bids[0])
    assert applied.bid.slot == first  # the bid is the seat on turn's, no other's
    assert deal.actor != first


# --- rule 3: opening bid ---------------------------------------------------------------------


def test_rule_3_with_no_standing_bid_a_challenge_is_illegal():
    deal = episode().next_deal()
    assert not deal.can_challenge
    assert deal.illegal(Challenge()) == "challenge with no standing bid: the opening seat must bid"
    with pytest.raises(IllegalMove, match="the opening seat must bid"):
        deal.apply(Challenge())
    assert not deal.over and deal.bids == ()  # a refused move changes nothing


@pytest.mark.parametrize(
    ("quantity", "face", "error"),
    [
        (1, 1, None),  # the lowest opening
        (20, 6, None),  # 4 seats x 5 dice = 20: the highest
        (0, 3, "quantity 0 is out of range 1..20"),
        (21, 3, "quantity 21 is out of range 1..20"),
        (3, 7, "face 7 is not one of 1..6"),
        (3, 0, "face 0 is not one of 1..6"),
    ],
)
def test_rule_3_an_opening_bid_is_1_to_seats_times_hand_and_a_face_of_the_mode(
    quantity, face, error
):
    deal = episode(seats=4).next_deal()
    assert deal.illegal(Bid(quantity, face)) == error


def test_rule_3_poker_opens_on_digits_up_to_32():
    deal = episode(mode=POKER, seats=4).next_deal()  # 4 seats x 8 digits
    assert deal.illegal(Bid(32, 0)) is None and deal.illegal(Bid(1, 9)) is None
    assert deal.illegal(Bid(33, 0)) == "quantity 33 is out of range 1..32"
    assert deal.min_bid == (1, 0)


# --- rule 4: strict raise --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("quantity", "face", "legal"),
    [
        (4, 1, True),  # more of any face
        (3, 5, True),  # as many of a higher face
        (3, 6, True),
        (3, 4, False),  # the equal bid
        (3, 3, False),  # as many of a lower face
        (2, 6, False),  # fewer, whatever the face
    ],
)
def test_rule_4_a_bid_must_strictly_raise_the_standing_bid(quantity, face, legal):
    deal = episode().next_deal()
    deal.apply(Bid(3, 4))  # the standing bid: 3 x 4
    assert (deal.illegal(Bid(quantity, face)) is None) is legal
    assert deal.min_bid == (3, 5)  # the lowest raise of 3 x 4


def test_rule_4_the_wild_modes_ladder_rules_the_raise():
    # Wild ones: from 4 x 5, a bid on ones needs at least ceil(4 / 2) = 2 of them;
    # from 2 x 1, another face needs at least 2 x 2 + 1 = 5.
    deal = episode(mode=WILD).next_deal()
    deal.apply(Bid(4, 5))
    assert deal.illegal(Bid(2, 1)) is None
    assert "does not raise" in deal.illegal(Bid(1, 1))
    deal.apply(Bid(2, 1))
    assert deal.illegal(Bid(5, 2)) is None
    assert "(a bid on 6 needs at least 5)" in deal.illegal(Bid(4, 6))


def test_rule_4_strict_apply_refuses_a_non_raise_and_changes_nothing():
    deal = episode().next_deal()
    deal.apply(Bid(3, 4))
    actor = deal.actor
    with pytest.raises(IllegalMove, match="does not raise the standing bid 3x4"):
        deal.apply(Bid(3, 4))
    assert deal.actor == actor and len(deal.bids) == 1


# --- rule 5: turn advance --------------------------------------------------------------------


def test_rule_5_after_a_bid_the_turn_moves_to_the_next_table_position_wrapping():
    state = episode(seats=3, deals=3)
    for _ in range(2):  # deals 0 and 1, so deal 2 opens at position 2 of 3
        deal = state.next_deal()
        deal.apply(Bid(1, 1))
        deal.apply(Challenge())
    deal = state.next_deal()
    o = state.order
    actors = []
    for quantity in range(1, 5):
        actors.append(deal.actor)
        deal.apply(Bid(quantity, 2))
    # Positions 2, then 0 (wrapping), 1, 2.
    assert actors == [o[2], o[0], o[1], o[2]]


# --- rule 6: challenge -----------------------------------------------------------------------


def play_to_challenge(bid: Bid, seats=4):
    """A deal of treys: the opener bids ``bid``, the next seat challenges it."""
    state = episode(seats=seats)
    deal = state.next_deal()
    bidder = deal.actor
    deal.apply(bid)
    challenger = deal.actor
    return state, bidder, challenger, deal.apply(Challenge())


def test_rule_6_a_bid_exactly_met_is_truthful_bidder_plus_one_challenger_minus_one():
    # Four hands of 3 3 3 1 2: twelve 3s. 12 x 3: actual 12 >= 12, the bidder was truthful.
    state, bidder, challenger, applied = play_to_challenge(Bid(12, 3))
    assert isinstance(applied, ChallengeResolved) and not applied.forced
    assert applied.outcome.actual == 12
    assert (applied.outcome.winner, applied.outcome.loser) == (bidder, challenger)
    expected = [0] * 4
    expected[bidder], expected[challenger] = 1, -1  # nobody else scores
    assert state.points == expected


def test_rule_6_a_bid_one_over_the_count_is_a_lie_challenger_plus_one():
    # 13 x 3 against twelve 3s: actual 12 < 13, the bid was a lie.
    state, bidder, challenger, applied = play_to_challenge(Bid(13, 3))
    assert applied.outcome.actual == 12
    assert (applied.outcome.winner, applied.outcome.loser) == (challenger, bidder)
    assert state.points[challenger] == 1 and state.points[bidder] == -1
    assert sum(state.points) == 0


def test_rule_6_ones_are_not_wild_in_dice():
    # Four 1s and no 4s on the table: a 1 counts only for face 1.
    _, _, _, on_fours = play_to_challenge(Bid(1, 4))
    assert on_fours.outcome.actual == 0
    _, _, _, on_ones = play_to_challenge(Bid(5, 1))
    assert on_ones.outcome.actual == 4


def test_rule_6_the_challenge_names_the_standing_bid():
    _, bidder, challenger, applied = play_to_challenge(Bid(7, 2))
    assert (applied.bid.slot, applied.bid.quantity, applied.bid.face) == (bidder, 7, 2)
    assert applied.challenger == challenger


# --- rule 7: the deal ends at the challenge ---------------------------------------------------


def test_rule_7_the_deal_ends_the_moment_a_challenge_resolves():
    state = episode(deals=3)
    deal = state.next_deal()
    deal.apply(Bid(2, 2))
    assert state.deal is deal and state.played == 0
    deal.apply(Challenge())
    assert deal.over and state.deal is None and state.played == 1 and not state.over
    with pytest.raises(IllegalMove, match="deal 0 is over"):
        deal.apply(Bid(3, 3))
    assert state.next_deal().number == 1


def test_rule_7_no_deal_opens_while_one_is_in_progress():
    state = episode()
    state.next_deal()
    with pytest.raises(IllegalMove, match="a deal is in progress"):
        state.next_deal()


# --- rule 8: the bid cap ---------------------------------------------------------------------


def test_rule_8_after_max_bids_bids_the_challenge_is_forced():
    # A cap of 2: two bids, then the third decision may only challenge, and the table
    # makes it: three decisions, the last one forced.
    state = episode(max_bids=2)
    deal = state.next_deal()
    deal.apply(Bid(1, 1))
    assert not deal.forced
    deal.apply(Bid(1, 2))
    assert deal.forced and deal.min_bid is None
    assert deal.illegal(Bid(9, 6)) == "the bid cap of 2 bids is reached: only challenge"
    with pytest.raises(IllegalMove, match="cap of 2"):
        deal.apply(Bid(9, 6))
    resolved = deal.apply(Challenge())
    assert resolved.forced and deal.over
    # 1 x 2 against four 2s on the table: true, the bidder (the second seat) wins.
    assert resolved.outcome.actual == 4 and resolved.outcome.winner == resolved.bid.slot


def test_rule_8_a_cap_of_one_forces_the_second_decision():
    deal = episode(max_bids=1).next_deal()
    deal.apply(Bid(20, 6))  # 20 x 6 against no 6s: a lie
    assert deal.forced
    resolved = deal.apply(Challenge())
    assert resolved.forced and resolved.outcome.actual == 0
    assert resolved.outcome.winner == resolved.challenger


def test_rule_8_a_challenge_before_the_cap_is_not_forced():
    deal = episode(max_bids=3).next_deal()
    deal.apply(Bid(1, 1))
    deal.apply(Bid(1, 2))
    assert not deal.apply(Challenge()).forced  # 2 bids of a cap of 3


# --- rule 9: the episode's end ---------------------------------------------------------------


def play_deal(state):
    """Open a deal, bid 1 x 4 (against no 4s: a lie), challenge it."""
    deal = state.next_deal()
    deal.apply(Bid(1, 4))
    return deal.apply(Challenge())


def test_rule_9_after_deals_deals_the_episode_settles_complete():
    state = episode(deals=2)
    play_deal(state)
    assert not state.over
    play_deal(state)
    assert state.over and state.status == COMPLETE
    with pytest.raises(IllegalMove, match="no deal is due: complete"):
        state.next_deal()
    assert state.settlement().deals_played == 2


def test_rule_9_the_clock_settles_deadline_only_at_a_deal_boundary():
    state = episode(deals=5)
    play_deal(state)
    state.next_deal().apply(Bid(2, 2))
    with pytest.raises(IllegalMove, match="only between deals"):
        state.run_out()
    state.deal.apply(Challenge())
    state.run_out()
    ended = state.settlement()
    assert (ended.status, ended.deals_played) == (DEADLINE, 2)


def test_rule_9_a_quit_may_end_a_deal_in_progress_which_moves_no_point():
    state = episode(deals=5)
    first = play_deal(state)  # the challenger of 1 x 4 wins deal 0
    deal = state.next_deal()
    deal.apply(Bid(3, 3))
    state.quit()
    ended = state.settlement()
    assert (ended.status, ended.deals_played) == (QUIT, 1)
    expected = [0] * 4
    expected[first.outcome.winner], expected[first.outcome.loser] = 1, -1
    assert list(ended.points) == expected  # deal 1 counts for nothing


def test_rule_9_a_quit_after_every_deal_was_played_is_complete():
    state = episode(deals=1)
    play_deal(state)
    state.quit()
    assert state.settlement().status == COMPLETE


def test_rule_9_the_episode_has_no_settlement_until_it_ends():
    state = episode()
    with pytest.raises(IllegalMove, match="has not ended"):
        state.settlement()


# --- scoring ---------------------------------------------------------------------------------


def test_score_is_half_plus_points_over_twice_the_deals_played():
    # Three deals, each a lie of 1 x 4 challenged by the seat after the opener.
    state = episode(deals=3)
    for _ in range(3):
        play_deal(state)
    ended = state.settlement()
    o = state.order
    # Deal d: the bidder is o[d], the challenger o[d + 1]: o[1] +1, o[0] -1; o[2] +1,
    # o[1] -1; o[3] +1, o[2] -1. So o[0] -1, o[1] 0, o[2] 0, o[3] +1.
    expected = {o[0]: -1, o[1]: 0, o[2]: 0, o[3]: 1}
    assert dict(enumerate(ended.points)) == expected
    # score = 0.5 + points / (2 x 3): -1 -> 1/3, 0 -> 1/2, +1 -> 2/3.
    by_points = {-1: 0.5 - 1 / 6, 0: 0.5, 1: 0.5 + 1 / 6}
    assert list(ended.score) == [by_points[p] for p in ended.points]


def test_score_is_one_half_when_no_deal_was_played():
    state = episode()
    state.run_out()  # the clock ran out before deal 0
    assert state.settlement().score == (0.5, 0.5, 0.5, 0.5)


# --- rule 11's marks ---------------------------------------------------------------------------


def test_rule_11_one_retry_then_the_fallback():
    deal = episode().next_deal()
    assert ASKS_PER_DECISION == 2  # asked once, retried once
    assert deal.may_ask and not deal.fallback_due
    deal.reject()
    assert deal.may_ask  # the retry, with the reason
    deal.reject()
    assert deal.fallback_due and not deal.may_ask
    deal.apply(Bid(1, 1))  # the fallback's move: the next decision starts afresh
    assert deal.may_ask and deal.rejections == 0


def test_rule_11_an_unreachable_seat_is_not_asked_again():
    deal = episode().next_deal()
    deal.fault()
    assert deal.fallback_due and deal.rejections == 0
    deal.apply(Bid(1, 1))
    assert deal.may_ask and not deal.faulted


# --- random play against the referee -------------------------------------------------------


MODES = {"dice": DICE, "poker": POKER, "wild": WILD}


def record(event) -> dict:
    return json.loads(to_line(event))


def fallback_move(deal, rules: TableRules):
    """The bayes baseline's move for the seat on turn, as the referee reads rules.md."""
    mode, slot = rules.mode, deal.actor
    standing = deal.standing
    moves = baseline_moves(
        BASELINES["bayes"],
        list(deal.hands[slot]),
        None if standing is None else (standing.slot, standing.quantity, standing.face),
        list(mode.symbols),
        rules.max_quantity,
        rules.unseen,
        mode.wild,
        mode.raise_rule,
    )
    move = sorted(moves)[0]
    return Challenge() if move[0] == "challenge" else Bid(move[1], move[2])


@st.composite
def random_actions(draw, rules: TableRules):
    """Any action: a challenge, a bid anywhere on (and just off) the table's range."""
    if draw(st.booleans()):
        return Challenge()
    quantity = draw(st.integers(0, rules.max_quantity + 1))
    face = draw(st.sampled_from((*rules.mode.symbols, max(rules.mode.symbols) + 1)))
    return Bid(quantity, face)


@st.composite
def driven_episodes(draw, stop: str):
    """A random episode on the state machine, and the log the engine would write for it:
    played out (``complete``), or stopped by the clock or by a seat leaving (``stop``)."""
    mode = draw(st.sampled_from(sorted(MODES)))
    rules = TableRules(MODES[mode], draw(st.integers(2, 8)), draw(st.integers(1, 13)))
    seed, deals = draw(st.integers(0, 2**63 - 1)), draw(st.integers(1, 5))
    # The deals played before the clock runs out, or the decisions before a seat quits
    # (a deal is at least two decisions, so either comes before the last deal ends).
    stop_at = draw(st.integers(0, deals - 1) if stop == DEADLINE else st.integers(0, 2 * deals - 1))
    config = EpisodeConfig(rules=rules, seed=seed, deals=deals)
    state = EpisodeState(rules, seed, deals)
    records = [record(episode_header(config, ["random"] * rules.seats, state.order, None))]
    decisions, bids_per_deal = 0, []
    while not state.over:
        if stop == DEADLINE and state.played == stop_at:
            state.run_out()
            break
        deal = state.next_deal()
        records.append(record(DealStarted(deal.number, deal.opener, deal.hands)))
        while not deal.over:
            if stop == QUIT and decisions == stop_at:
                state.quit()
                break
            decisions += 1
            slot, fallback = deal.actor, False
            action = Challenge() if deal.forced else None
            while action is None and deal.may_ask:
                tried = draw(random_actions(rules))
                reason = deal.illegal(tried)
                if reason is None:
                    action = tried
                else:
                    records.append(record(Rejected(deal.number, slot, reason, None)))
                    deal.reject()
            if action is None:
                action, fallback = fallback_move(deal, rules), True
            forced = deal.forced
            applied = deal.apply(action)
            assert (applied.forced if isinstance(applied, ChallengeResolved) else False) == forced
            if isinstance(applied, BidApplied):
                bid = applied.bid
                records.append(
                    record(
                        BidMade(deal.number, slot, bid.quantity, bid.face, None, None, None,
                                fallback)
                    )
                )  # fmt: skip
                continue
            bids_per_deal.append(len(deal.bids))
            bid, outcome = applied.bid, applied.outcome
            records.append(
                record(
                    ChallengeMade(
                        deal.number, slot, bid.slot, bid.quantity, bid.face, outcome.actual,
                        applied.forced, fallback, outcome.winner, outcome.loser, None, None,
                        None,
                    )
                )
            )  # fmt: skip
    ended = state.settlement()
    records.append(
        record(EpisodeSettled(ended.status, ended.deals_played, ended.points, ended.score))
    )
    return rules, deals, state, ended, records, bids_per_deal


@pytest.mark.parametrize("stop", [COMPLETE, DEADLINE, QUIT])
@settings(max_examples=60)
@given(data=st.data())
def test_random_play_on_the_state_is_what_the_referee_reads_in_its_log(stop, data):
    rules, deals, state, ended, records, bids_per_deal = data.draw(driven_episodes(stop))
    summary = replay(records, check_baselines=False)  # raises on any rule it sees broken
    assert ended.status == stop
    event(f"fallbacks: {sum(r.get('fallback', False) for r in records) > 0}")
    # The referee's own count of the episode is the state's.
    assert summary.status == ended.status
    assert summary.deals_played == ended.deals_played == len(bids_per_deal)
    assert summary.points == list(ended.points)
    assert sum(ended.points) == 0  # zero-sum over any set of deals
    assert abs(sum(ended.score) / rules.seats - 0.5) < 1e-12
    # At most max_bids bids a deal, then the challenge; a cap reached is a forced one.
    assert all(n <= rules.max_bids for n in bids_per_deal)
    assert summary.forced == sum(n == rules.max_bids for n in bids_per_deal)
    assert summary.challenges == ended.deals_played  # a deal ends exactly at its challenge
    if ended.status == COMPLETE:
        assert ended.deals_played == deals
    else:
        assert ended.deals_played < deals
    # And the checker, reading the same log on the same state, finds nothing wrong.
    assert verify(records) == []


@settings(max_examples=60)
@given(
    mode=st.sampled_from(sorted(MODES)),
    seats=st.integers(2, 8),
    cap=st.integers(1, 13),
    data=st.data(),
)
def test_every_legal_move_applies_and_every_illegal_one_is_refused(mode, seats, cap, data):
    """The state's legality is the referee's reading of rules 3, 4 and 8, move by move."""
    rules = TableRules(MODES[mode], seats, cap)
    deal = EpisodeState(rules, data.draw(st.integers(0, 2**32)), 1).next_deal()
    for action in data.draw(st.lists(random_actions(rules), max_size=40)):
        if deal.over:
            break
        standing, made = deal.standing, len(deal.bids)
        if isinstance(action, Challenge):
            legal = standing is not None
        else:
            in_range = 1 <= action.quantity <= rules.max_quantity and (
                action.face in rules.mode.symbols
            )
            raises = standing is None or referee_raises(
                action.quantity, action.face, standing.quantity, standing.face,
                rules.mode.raise_rule, rules.mode.wild,
            )  # fmt: skip
            legal = made < cap and in_range and raises
        assert (deal.illegal(action) is None) is legal, (action, standing, made)
        if legal:
            deal.apply(action)
        else:
            with pytest.raises(IllegalMove):
                deal.apply(action)
            assert (deal.standing, len(deal.bids)) == (standing, made)
