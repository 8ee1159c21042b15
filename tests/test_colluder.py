"""The planted colluder: bayes, except that it waves its partners' bids through.

Partners are recognised by policy from the table's name cards (SeatContext.policies):
``colluder`` goes easy on the other seats of its own spec, ``colluder:SPEC`` on seats
of SPEC.

Four seats of dice: 15 unseen dice, p = 1/6, P(X >= k) for X ~ Bin(15, 1/6):

    k:  <=0     1       2       3       4       5       6       7
    P:  1     .9351   .7404   .4678   .2315   .0898   .0274   .0066

The colluder sits in slot 1; the table is colluder, colluder, bayes, bayes, so its
partner is slot 0. Against a partner it challenges only under 2%; bayes under 15%.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from fractions import Fraction
from math import comb

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st
from plugins_for_tests.harness import context, make_view

from arena.actions import Bid, Challenge
from arena.rules import TableRules
from arena.runner import EpisodeRequest, SetupError, run_episode
from arena.sandbox.views import mode_to_json
from arena.sandbox.worker import build_seat
from arena.seats import SeatSpec
from arena_plugins.colluder import CALL_BELOW, Colluder, partners
from arena_plugins.dice import DICE
from arena_plugins.scripted import bayes

FOUR = TableRules(mode=DICE, seats=4)
TEAM = ("colluder", "colluder", "bayes", "bayes")


def colluder(policies=TEAM, arg=None, slot: int = 1, seed: int = 0) -> Colluder:
    return Colluder(
        attrs.evolve(context(FOUR, slot=slot, seed=seed), arg=arg, policies=tuple(policies))
    )


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
    # The same 5x6, made by slot 3 (a bayes seat): bayes's challenge.
    assert both([2, 2, 2, 2, 2], [(3, 5, 6)]) == (Challenge(), Challenge())


@pytest.mark.parametrize(
    "policies, arg, slot, expected",
    [
        # Its own spec, anywhere at the table, never itself.
        (TEAM, None, 1, {0}),
        (("bayes", "colluder", "random", "colluder"), None, 3, {1}),
        (("colluder", "colluder", "colluder", "bayes"), None, 2, {0, 1}),
        # Alone of its kind, it is plain bayes.
        (("colluder", "bayes", "pressure", "random"), None, 0, set()),
        # colluder:SPEC: the seats of SPEC, one way; other colluders are not partners.
        (("bayes", "colluder:bayes", "pressure", "bayes"), "bayes", 1, {0, 3}),
        (("colluder:bayes", "colluder:bayes", "bayes", "random"), "bayes", 0, {2}),
        (("colluder:pressure", "bayes", "pressure:x", "pressure"), "pressure", 0, {3}),
        # Without name cards (a context built by hand), nobody.
        ((), None, 1, set()),
    ],
)
def test_partners_are_the_other_seats_of_the_partner_spec(policies, arg, slot, expected):
    ctx = attrs.evolve(context(FOUR, slot=slot), arg=arg, policies=policies)
    assert partners(ctx) == expected


def test_a_one_way_colluder_waves_the_named_policy_through():
    # colluder:bayes in slot 1 at (bayes, colluder:bayes, pressure, random): the 5x6
    # position above, bid by slot 0 (bayes), is raised 6x2; bid by slot 2 (pressure), called.
    soft = colluder(("bayes", "colluder:bayes", "pressure", "random"), arg="bayes")
    assert soft.decide(make_view(FOUR, [2, 2, 2, 2, 2], [(0, 5, 6)], slot=1)) == Bid(6, 2)
    assert soft.decide(make_view(FOUR, [2, 2, 2, 2, 2], [(2, 5, 6)], slot=1)) == Challenge()


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


def test_an_empty_partner_spec_is_a_setup_error(host):
    request = EpisodeRequest(deals=1, seat_specs=(SeatSpec.parse("colluder:"),))
    with pytest.raises(SetupError, match=r"seat 0 \(colluder:\): colluder:SPEC needs"):
        run_episode(host, request, environ={})


def p_true(hand, quantity, face, unseen=15, p=Fraction(1, 6)) -> float:
    need = quantity - hand.count(face)
    if need <= 0:
        return 1.0
    return float(sum(comb(unseen, i) * p**i * (1 - p) ** (unseen - i) for i in range(need, 16)))


def test_in_play_the_runner_gives_the_team_its_name_cards(host):
    # Two colluders in slots 0 and 2 of a played table: whenever one faces the other's
    # bid it challenges only bids under 2% likely (its own hand, worked out here), and
    # it waves through some bid that bayes would have called (under 15%). Facing the
    # bayes seats it calls those like bayes.
    specs = ("colluder", "bayes", "colluder", "bayes")
    request = EpisodeRequest(seed=5, deals=60, seat_specs=tuple(map(SeatSpec.parse, specs)))
    _, records = run_episode(host, request, environ={})
    hands, standing, waved, called = [], None, 0, 0
    for record in records:
        if record["type"] == "deal":
            hands, standing = record["hands"], None
        elif record["type"] in ("bid", "challenge"):
            slot = record["slot"]
            if standing is not None and not record.get("forced"):
                p = p_true(hands[slot], standing["quantity"], standing["face"])
                if {slot, standing["slot"]} == {0, 2}:
                    assert record["type"] == "bid" or p < CALL_BELOW
                    waved += record["type"] == "bid" and p < 0.15
                elif slot in (0, 2):
                    called += record["type"] == "challenge" and p < 0.15
            standing = record if record["type"] == "bid" else None
    assert waved > 0 and called > 0


NAME_CARDS = """
from arena import hookimpl

class NameCards:
    def __init__(self, context):
        self.cards = ",".join(context.policies)

    def decide(self, view):
        if view.bids:
            return {"action": "challenge", "notes": self.cards}
        return {"action": "bid", "quantity": 1, "face": view.symbols[0], "notes": self.cards}

@hookimpl
def register_seats(register):
    register("cards", NameCards)
"""


@pytest.mark.sandbox
def test_a_sandboxed_seat_gets_the_same_name_cards(tmp_path):
    # A third-party seat runs in the sandbox worker, built from the setup message; it
    # writes the name cards it was given into its private notes, which the log keeps.
    tmp_path.chmod(0o755)  # as root the worker runs as another uid: plugins must be readable
    (tmp_path / "name_cards.py").write_text(textwrap.dedent(NAME_CARDS))
    dist = tmp_path / "name_cards-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: name-cards\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[arena]\nname_cards = name_cards\n")
    env = os.environ | {"PYTHONPATH": str(tmp_path), "ARENA_SANDBOX": "process"}
    log = tmp_path / "log.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli", "play", "--deals", "2", "--log", str(log),
         "--seat", "bayes,cards,colluder:cards,random"],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    notes = {
        json.loads(line).get("notes")
        for line in log.read_text().splitlines()
        if json.loads(line).get("slot") == 1 and json.loads(line)["type"] in ("bid", "challenge")
    }
    assert notes == {"bayes,cards,colluder:cards,random"}


def test_the_sandbox_worker_builds_a_colluder_with_its_partners(host):
    table = {"mode": mode_to_json(DICE), "seats": 4, "maxBids": 12, "talk": False}
    seat = {"slot": 3, "name": "colluder", "arg": None, "privateSeed": 3}
    setup = table | seat | {"policies": ["colluder", "bayes", "random", "colluder"]}
    assert build_seat(host.registry, setup).partners == {0}


def test_it_is_registered_as_a_test_policy(host):
    assert "TEST" in host.registry.seat("colluder").description
