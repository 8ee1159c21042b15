"""Planted seats: bayes with one known trait each, for calibrating the decision read-out.

Four seats of dice: 15 unseen dice, p = 1/6, P(X >= k) for X ~ Bin(15, 1/6):

    k:  <=0     1       2       3       4       5       6       7
    P:  1     .9351   .7404   .4678   .2315   .0898   .0274   .0066

The planted seat sits in slot 1. Over a standing bid of 4 or more of a face, the lowest
legal raise of each face is 5 (or more) of it; with five 2s in hand 5x2 needs none more
(P = 1), the likeliest raise, so that is bayes's raise there.
"""

from __future__ import annotations

import attrs
import pytest
from plugins_for_tests.harness import context, make_view

from arena.actions import Bid, Challenge
from arena.rules import TableRules
from arena.runner import EpisodeRequest, SetupError, run_episode
from arena.seats import SeatSpec
from arena.view import PastDeal, PublicBid
from arena_plugins.dice import DICE
from arena_plugins.planted import Planted
from arena_plugins.scripted import bayes

FOUR = TableRules(mode=DICE, seats=4)
FIVE_TWOS = [2, 2, 2, 2, 2]
SPREAD = [1, 2, 3, 4, 6]
TABLE = ("bayes", "planted", "pressure", "random")


def planted(trait: str, policies=TABLE, seed: int = 0) -> Planted:
    return Planted(attrs.evolve(context(FOUR, slot=1, seed=seed), arg=trait, policies=policies))


def both(trait, hand, bids, policies=TABLE):
    """(the planted seat's move, bayes's move) in the same position, from slot 1."""
    view = make_view(FOUR, hand, bids, slot=1)
    return planted(trait, policies).decide(view), bayes(context(FOUR, slot=1)).decide(view)


def test_overbids_pads_the_bayes_bid_by_two():
    # Standing 4x6 against five 2s: P = .2315, over bayes's .15, so bayes raises 5x2
    # (P = 1); overbids bids 7x2, which needs 2 of the 15 unseen: P = .7404.
    assert both("overbids", FIVE_TWOS, [(0, 4, 6)]) == (Bid(7, 2), Bid(5, 2))


def test_overbids_stops_at_the_cap_and_leaves_a_challenge_alone():
    # Bayes's 5x2 padded to 7x2 only if 7 <= the cap; at 19x6 standing every raise is
    # 20 of a face (the cap, rule 3: 4 x 5): 20x2 needs 15 of 15 unseen, P = (1/6)^15,
    # so bayes challenges, and so does overbids.
    assert FOUR.max_quantity == 20
    assert both("overbids", FIVE_TWOS, [(0, 19, 6)]) == (Challenge(), Challenge())


def test_never_challenges_raises_where_bayes_would_challenge():
    # Standing 5x6 against five 2s: P = .0898 < .15, bayes challenges; the raises at
    # least .35 likely are 6x2 (.9351) and 7x2 (.7404): never-challenges bids 6x2.
    assert both("never-challenges", FIVE_TWOS, [(0, 5, 6)]) == (Bid(6, 2), Challenge())


def test_never_challenges_makes_the_lowest_raise_when_nothing_is_safe():
    # Standing 7x6 against 1 2 3 4 6: every raise needs 7 or more of a face (P <= .0066),
    # none .35 likely: bayes challenges, never-challenges bids the lowest raise, 8x1.
    assert both("never-challenges", SPREAD, [(0, 7, 6)]) == (Bid(8, 1), Challenge())


def test_never_challenges_challenges_only_when_no_bid_is_legal():
    # 20x6 is the highest bid there is (cap 20, face 6): the only legal move is a challenge.
    assert both("never-challenges", SPREAD, [(0, 20, 6)])[0] == Challenge()


def test_targets_challenges_only_the_named_policy():
    # planted:targets:pressure, pressure in slot 2. Its 4x6 (P = .2315 < .5) is called,
    # though bayes raises 5x2 over it; bayes's (slot 0) 5x6 (P = .0898) is raised 6x2,
    # though bayes challenges it.
    assert both("targets:pressure", FIVE_TWOS, [(2, 4, 6)]) == (Challenge(), Bid(5, 2))
    assert both("targets:pressure", FIVE_TWOS, [(0, 5, 6)]) == (Bid(6, 2), Challenge())


def test_targets_raises_a_targets_likely_bid():
    # Pressure's 2x6 against five 2s needs 2 of 15: P = .7404 >= .5, so it raises as
    # bayes does: the lowest raise of each face is 3 of it (2x6 is the top face), 3x2 (P=1).
    assert both("targets:pressure", FIVE_TWOS, [(2, 2, 6)]) == (Bid(3, 2), Bid(3, 2))


def revealed(bids):
    """One finished deal, every hand five 1s: a bid on 1s is true (20 of them), any
    other face false (none)."""
    return PastDeal(
        deal=0, opener=0, bids=tuple(PublicBid(*b) for b in bids), challenger=1, forced=False,
        actual=0, hands=((1,) * 5,) * 4, winner=1, loser=0,
    )  # fmt: skip


def test_adapts_challenges_each_bidder_by_its_own_record():
    # Past deal: slot 0 bid 6x5 (false), slot 3 bid 7x1 (true). Slot 0's record is
    # 1 false of 1: its line is .15 + .5 x 1 = .65; slot 3's is .15 + .5 x 0 = .15.
    # The same 4x6 against five 2s (P = .2315): called from slot 0, raised 5x2 from slot 3.
    seat = planted("adapts")
    past = (revealed([(0, 6, 5), (3, 7, 1)]),)
    for bidder, expected in ((0, Challenge()), (3, Bid(5, 2)), (0, Challenge())):
        view = attrs.evolve(make_view(FOUR, FIVE_TWOS, [(bidder, 4, 6)], slot=1), history=past)
        assert seat.decide(view) == expected


def test_adapts_with_no_record_is_bayes():
    # No history: line .15 for everyone. 5x6 (P = .0898) is called, as bayes does;
    # 4x6 (.2315) raised 5x2, as bayes does.
    assert both("adapts", FIVE_TWOS, [(0, 5, 6)]) == (Challenge(), Challenge())
    assert both("adapts", FIVE_TWOS, [(0, 4, 6)]) == (Bid(5, 2), Bid(5, 2))


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("bids", [[], [(0, 4, 6)], [(0, 5, 6)], [(3, 3, 1)], [(2, 9, 4)]])
def test_planted_bayes_is_bayes(seed, bids):
    view = make_view(FOUR, SPREAD, bids, slot=1)
    assert planted("bayes", seed=seed).decide(view) == bayes(
        context(FOUR, slot=1, seed=seed)
    ).decide(view)


def test_an_unknown_trait_is_a_setup_error(host):
    for spec in ("planted", "planted:foo", "planted:targets", "planted:adapts:bayes"):
        request = EpisodeRequest(deals=1, seat_specs=(SeatSpec.parse(spec),))
        with pytest.raises(SetupError, match="planted:TRAIT needs one of"):
            run_episode(host, request, environ={})


@pytest.mark.parametrize("trait", ["overbids", "never-challenges", "targets:bayes", "adapts"])
def test_the_same_seed_plays_the_same_episode(host, trait):
    specs = ("bayes", f"planted:{trait}", "pressure", "random")

    def play(seed):
        request = EpisodeRequest(seed=seed, deals=8, seat_specs=tuple(map(SeatSpec.parse, specs)))
        return [r for r in run_episode(host, request, environ={})[1] if r["type"] != "header"]

    first = play(11)
    assert play(11) == first
    assert play(12) != first
