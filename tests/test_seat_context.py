"""A seat is never given the episode seed, nor anything that leads back to the deals.

Rule 1's dealing is public code (``arena.seeding.DealStreams``): whoever holds the
seed holds every hand. The attack below is the one from the issue: a seat that
recomputes the deals from what it is given. It must fail with a real context,
and the control (the same seat handed the seed) shows the attack itself works.
"""

from __future__ import annotations

import copy

import attrs
from hypothesis import given, settings
from hypothesis import strategies as st
from plugins_for_tests.harness import plugged

from arena import hookimpl, seeding
from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatContext, SeatSpec
from arena_plugins.dice import DICE
from arena_plugins.scripted import bayes


def recomputed_hands(candidate: int, deal: int, seats: int) -> tuple[tuple[int, ...], ...]:
    """Rule 1 as public code: the hands of ``deal`` if ``candidate`` were the seed."""
    rng = seeding.DealStreams(candidate).for_deal(deal)
    return tuple(DICE.draw_hand(rng) for _ in range(seats))


def integers_in(context: SeatContext) -> set[int]:
    """Every integer an attacker can read off its context: fields and generator state."""
    found = {context.slot, context.rules.seats, context.rules.max_bids}
    state = context.rng.bit_generator.state["state"]
    found |= {state["state"], state["inc"], state["state"] % 2**64, state["inc"] >> 1}
    found |= set(copy.deepcopy(context.rng).integers(0, 2**62, size=4).tolist())
    return found


class DealRecomputer:
    """Predicts every hand from each integer it can find, and reports its best guess."""

    predictions: dict[int, list] = {}

    def __init__(self, context: SeatContext, candidates: set[int] | None = None):
        self.slot = context.slot
        self.candidates = candidates if candidates is not None else integers_in(context)
        self.fallback = bayes(context)

    def decide(self, view):
        guesses = [recomputed_hands(c, view.deal, view.seats) for c in self.candidates]
        matching = [g for g in guesses if g[self.slot] == view.hand]
        DealRecomputer.predictions.setdefault(view.deal, []).extend(matching)
        return self.fallback.decide(view)


def play(seed: int, factory) -> list[dict]:
    class Plugin:
        @hookimpl
        def register_seats(self, register):
            register("recomputer", factory)

    DealRecomputer.predictions = {}
    with plugged(Plugin(), "recomputer-test") as (host, info):
        assert info.broken is None, info.broken
        request = EpisodeRequest(seed=seed, deals=6, seat_specs=(SeatSpec("recomputer"),))
        _, records = run_episode(host, request, environ={})
    return [r["hands"] for r in records if r["type"] == "deal"]


def test_the_context_carries_no_seed():
    assert "seed" not in attrs.fields_dict(SeatContext)


@settings(max_examples=8)
@given(seed=st.integers(2**32, 2**62))
def test_a_seat_cannot_recompute_the_deals_from_its_context(seed):
    dealt = play(seed, DealRecomputer)
    for deal, hands in enumerate(dealt):
        for guess in DealRecomputer.predictions.get(deal, []):
            # A guess that fits the seat's own hand and every other hand is a recovered deal.
            assert [list(h) for h in guess] != hands, f"deal {deal} recomputed"


def test_the_attack_works_when_the_seed_is_handed_over():
    # Control: the same seat given the seed (as SeatContext.seed once did) predicts every hand.
    seed = 2**40 + 7
    dealt = play(seed, lambda context: DealRecomputer(context, candidates={seed}))
    recovered = {
        deal
        for deal, hands in enumerate(dealt)
        for guess in DealRecomputer.predictions.get(deal, [])
        if [list(h) for h in guess] == hands
    }
    assert recovered, "the control seat never acted"
    assert recovered == set(DealRecomputer.predictions)


def test_private_streams_differ_by_slot_and_domain_and_repeat_by_seed():
    draw = lambda *key: seeding.private_stream(*key).integers(0, 2**62, size=3).tolist()  # noqa: E731
    assert draw(9, seeding.SEAT, 0) == draw(9, seeding.SEAT, 0)
    assert len({str(draw(9, seeding.SEAT, s)) for s in range(4)}) == 4
    assert draw(9, seeding.SEAT, 0) != draw(9, seeding.FALLBACK, 0)
    assert draw(9, seeding.SEAT, 0) != draw(10, seeding.SEAT, 0)
