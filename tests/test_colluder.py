"""The planted colluder: bayes, except that it waves its partner's bids through.

Four seats of dice: 15 unseen dice, p = 1/6, P(X >= k) for X ~ Bin(15, 1/6):

    k:  <=0     1       2       3       4       5       6       7
    P:  1     .9351   .7404   .4678   .2315   .0898   .0274   .0066

The colluder sits in slot 1 with its partner in slot 0. Against the partner it
challenges only under 2%; bayes challenges under 15%.
"""

from __future__ import annotations

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st
from plugins_for_tests.harness import context, make_view

from arena.actions import Bid, Challenge
from arena.rules import TableRules
from arena.runner import EpisodeRequest, SetupError, run_episode
from arena.seats import SeatSpec
from arena_plugins.colluder import CALL_BELOW, Colluder
from arena_plugins.dice import DICE
from arena_plugins.scripted import bayes

FOUR = TableRules(mode=DICE, seats=4)


def colluder(partner: str = "0", slot: int = 1, seed: int = 0) -> Colluder:
    return Colluder(attrs.evolve(context(FOUR, slot=slot, seed=seed), arg=partner))


def both(hand, bids):
    """(colluder's move, bayes's move) in the same position, from slot 1."""
    view = make_view(FOUR, hand, bids, slot=1)
    return colluder().decide(view), bayes(context(FOUR, slot=1)).decide(view)


def test_calls_a_partners_bid_under_two_percent():
    # Partner's 8x6 against a hand with one 6: need 7, P = .0066 < .02.
    assert CALL_BELOW == 0.02
    assert both([1, 2, 3, 4, 6], [(0, 8, 6)]) == (Challenge(), Challenge())


def test_raises_over_a_partners_bid_that_bayes_would_call():
    # Partner's 5x6 against five 2s: need 5, P = .0898: under bayes's .15, over .02.
    # The raises q 5..7 at least .35 likely: 6x2 (need 1, .9351) and 7x2 (need 2, .7404);
    # the likeliest is 6x2.
    assert both([2, 2, 2, 2, 2], [(0, 5, 6)]) == (Bid(6, 2), Challenge())


def test_makes_the_minimum_raise_when_nothing_is_safe():
    # Partner's 7x6 against 1 2 3 4 6: need 6, P = .0274: at least .02, so no call.
    # Every raise (8x1 .. 9x6) then needs 7 or more of a face (P <= .0066): none is
    # .35 likely, so instead of challenging it bids the lowest legal raise, 8x1.
    assert both([1, 2, 3, 4, 6], [(0, 7, 6)]) == (Bid(8, 1), Challenge())


def test_against_anyone_else_it_is_bayes():
    # The same 5x6, made by slot 3: bayes's challenge.
    assert both([2, 2, 2, 2, 2], [(3, 5, 6)]) == (Challenge(), Challenge())


@given(
    hand=st.lists(st.integers(1, 6), min_size=5, max_size=5),
    bidder=st.sampled_from([2, 3]),
    quantity=st.integers(1, 20),
    face=st.integers(1, 6),
    seed=st.integers(0, 2**16),
)
def test_every_move_off_the_partner_is_the_bayes_move(hand, bidder, quantity, face, seed):
    view = make_view(FOUR, hand, [(bidder, quantity, face)], slot=1)
    assert colluder(seed=seed).decide(view) == bayes(context(FOUR, slot=1, seed=seed)).decide(view)


@pytest.mark.parametrize(
    "spec, slot, reason",
    [
        ("colluder", 0, "needs its partner's slot"),
        ("colluder:x", 0, "needs its partner's slot"),
        ("colluder:0", 0, "another slot"),
        ("colluder:4", 0, "another slot"),
    ],
)
def test_a_partner_that_is_no_other_slot_is_a_setup_error(host, spec, slot, reason):
    request = EpisodeRequest(deals=1, seat_specs=(SeatSpec.parse(spec),))
    with pytest.raises(SetupError, match=reason):
        run_episode(host, request, environ={})


def test_it_is_registered_as_a_test_policy(host):
    assert "TEST" in host.registry.seat("colluder").description
