"""The conformance kit (``arena.testing``) passes our own seats and modes and catches bad ones."""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

from arena.actions import Bid, Challenge
from arena.modes import Mode
from arena.testing import check_mode, check_reporter, check_seat, check_talk_filter
from arena_plugins.dice import DICE
from arena_plugins.poker import POKER
from arena_plugins.random_seat import RandomSeat
from arena_plugins.scripted import bayes, pressure

# --- the kit passes what the arena ships ------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("factory", [bayes, pressure, RandomSeat], ids=lambda f: f.__name__)
def test_the_shipped_seats_conform(factory):
    check_seat(factory)


@pytest.mark.parametrize("mode", [DICE, POKER], ids=lambda m: m.name)
def test_the_shipped_modes_conform(mode):
    check_mode(mode)


# --- bad seats ----------------------------------------------------------------------------


class Lowest:
    """Legal: the lowest bid, or a challenge when none is left."""

    def __init__(self, context):
        self.rng = context.rng

    def decide(self, view):
        if view.legal.min_bid is None:
            return Challenge()
        return Bid(*view.legal.min_bid)


class Repeats(Lowest):
    """Illegal: repeats the standing bid instead of raising it."""

    def decide(self, view):
        standing = view.standing
        if standing is None:
            return super().decide(view)
        return Bid(standing.quantity, standing.face)


class BigTablesOnly(Lowest):
    """Legal except at eight seats, where it bids past the table's maximum quantity."""

    def decide(self, view):
        if view.seats == 8:
            return Bid(view.legal.max_quantity + 1, view.symbols[0])
        return super().decide(view)


class Crashes(Lowest):
    def decide(self, view):
        raise KeyError("hand")


class Unseeded(Lowest):
    """Legal, but chooses with a generator that is not the context's."""

    def decide(self, view):
        if view.legal.can_challenge and np.random.default_rng().random() < 0.5:
            return Challenge()
        return super().decide(view)


class Meddles(Lowest):
    """Legal, but scribbles over its own view."""

    def decide(self, view):
        action = super().decide(view)
        object.__setattr__(view, "hand", ())
        return action


@pytest.mark.parametrize(
    ("seat", "message"),
    [
        (Repeats, r"caused a rejected .*does not raise the standing bid"),
        (BigTablesOnly, r"8 seats.*caused a rejected .*out of range"),
        (Crashes, r"caused a rejected .*seat raised KeyError"),
        (Unseeded, r"the same seed gave a different game"),
        (Meddles, r"the seat mutated its view"),
    ],
)
def test_the_kit_catches_a_bad_seat(seat, message):
    with pytest.raises(AssertionError, match=message):
        check_seat(seat, modes=["dice"])


@pytest.mark.slow
def test_a_legal_seat_passes_the_same_sweep():
    check_seat(Lowest, modes=["dice"])  # the bad seats above differ from this in one way


class NeedsTheArenasEnvironment(Lowest):
    """Legal in-process; in the sandbox the arena's environment is not there to read."""

    def __init__(self, context):
        super().__init__(context)
        self.token = os.environ["ARENA_KIT_PROBE"]


@pytest.mark.sandbox
def test_the_kit_plays_the_seat_in_the_real_sandbox(monkeypatch):
    monkeypatch.setenv("ARENA_KIT_PROBE", "only in the arena")
    check_seat(NeedsTheArenasEnvironment, modes=["dice"], seat_counts=[2], sandbox=False)
    with pytest.raises(AssertionError, match=r"sandboxed .*caused a fault.*KeyError"):
        check_seat(NeedsTheArenasEnvironment, modes=["dice"], seat_counts=[2])


def test_a_seat_the_sandbox_cannot_import_is_refused_with_the_reason():
    class Local(Lowest):
        pass

    with pytest.raises(AssertionError, match="must be defined at module level"):
        check_seat(Local, modes=["dice"], seat_counts=[2])


# --- talk filters and reporters ---------------------------------------------------------------


def test_the_shipped_talk_filters_and_reporters_conform(host):
    for talk_filter in host.registry.talk_filters.values():
        check_talk_filter(talk_filter.apply)
    check_reporter(host.registry.reporters["faced"].report)


def test_the_kit_catches_a_filter_returning_a_number_and_one_that_is_not_repeatable():
    with pytest.raises(AssertionError, match="returned 5"):
        check_talk_filter(lambda text, speaker: 5)
    counter = iter(range(10**6))
    with pytest.raises(AssertionError, match="and then"):
        check_talk_filter(lambda text, speaker: f"{text} {next(counter)}")


def test_the_kit_catches_a_reporter_that_rewrites_the_log():
    def rewrites(records):
        records[-1]["points"] = [0] * len(records[-1]["points"])
        return {}

    with pytest.raises(AssertionError, match="changed the records"):
        check_reporter(rewrites)


# --- bad modes ----------------------------------------------------------------------------


def short_hand(mode, rng):
    return tuple(int(x) + 1 for x in rng.integers(0, 6, size=mode.hand_size - 1))


def stray_symbol(mode, rng):
    return tuple(int(x) + 1 for x in rng.integers(0, 7, size=mode.hand_size))


def fresh_entropy(mode, rng):
    return tuple(int(x) + 1 for x in np.random.default_rng().integers(0, 6, size=mode.hand_size))


def global_random(mode, rng):
    return tuple(random.randint(1, 6) for _ in range(mode.hand_size))


def as_list(mode, rng):
    return [int(x) + 1 for x in rng.integers(0, 6, size=mode.hand_size)]


def never_six(mode, rng):
    return tuple(int(x) + 1 for x in rng.integers(0, 5, size=mode.hand_size))


def render_bytes(mode, hand):
    return bytes(hand)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"draw": short_hand}, "returned 4 symbols, hand_size is 5"),
        ({"draw": stray_symbol}, r"\[7.*\] are not among the symbols"),
        ({"draw": fresh_entropy}, "the same generator state drew"),
        ({"draw": global_random}, "the same generator state drew"),
        ({"draw": as_list}, "draw returned list, not tuple"),
        ({"draw": never_six}, r"never drew \[6\]"),
        ({"render": render_bytes}, "render returned b"),
        ({"name": "liars dice"}, "must be one word"),
    ],
)
def test_the_kit_catches_a_bad_mode(changes, message):
    fields = {"name": "dice", "symbols": DICE.symbols, "hand_size": 5} | changes
    with pytest.raises(AssertionError, match=message):
        check_mode(Mode(**fields))


def test_check_mode_refuses_what_is_not_a_mode():
    with pytest.raises(AssertionError, match="expected an arena.modes.Mode"):
        check_mode({"name": "dice"})


def test_check_mode_leaves_the_global_generators_alone():
    random.seed(5)
    np.random.seed(5)
    expected = (random.random(), np.random.random())
    random.seed(5)
    np.random.seed(5)
    check_mode(DICE, draws=20)
    assert (random.random(), np.random.random()) == expected
