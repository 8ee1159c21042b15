"""The engine and runner beyond the numbered rules.

Information hiding, table set-up and PLAYER_SCRIPTED, token usage, private
notes, and talk filters that fail.
"""

from __future__ import annotations

import attrs
import pytest
from hypothesis import given
from plugins_for_tests import fussy_seat
from plugins_for_tests.harness import play_table, plugged
from plugins_for_tests.hiding import DealtBy, swapped_tables
from plugins_for_tests.seats import MinRaiser, Recording, Scripted
from referee import replay

from arena import seeding
from arena.actions import Bid
from arena.engine import NOTES_CAP, Engine, EpisodeConfig
from arena.modes import Mode
from arena.rules import TableRules
from arena.runner import EpisodeRequest, SetupError, run_episode, table_specs
from arena.seats import Reply, SeatContext, SeatSpec
from arena.view import SeatView
from arena_plugins.dice import DICE
from arena_plugins.random_seat import RandomSeat
from arena_plugins.scripted import bayes

# --- information hiding ------------------------------------------------------------------


def observed_views(
    base: Mode, seats: int, seed: int, deals: int, max_bids: int, observer: int, swaps
):
    """Play with a recording bayes at ``observer`` and hand-blind random seats elsewhere."""
    mode = attrs.evolve(base, draw=DealtBy(seats, swaps))
    rules = TableRules(mode=mode, seats=seats, max_bids=max_bids)
    config = EpisodeConfig(rules=rules, seed=seed, deals=deals)

    def ctx(slot, domain):
        return SeatContext.derive(seed, slot, rules, domain)

    recorder = Recording(bayes(ctx(observer, seeding.SEAT)))
    table = [
        recorder if slot == observer else RandomSeat(ctx(slot, seeding.SEAT))
        for slot in range(seats)
    ]
    fallbacks = [bayes(ctx(slot, seeding.FALLBACK)) for slot in range(seats)]
    hands = []

    def emit(event):
        if event.TYPE == "deal":
            hands.append(event.hands)

    Engine(config, table, ["x"] * seats, fallbacks, emit).play()
    return recorder.views, hands


@given(swapped_tables())
def test_a_seats_views_do_not_change_when_other_hidden_hands_change(table):
    """Information hiding: before the reveal, nothing of another seat's hand reaches a view.

    Two engines differ only in the other seats' hands of the last deal. The other seats
    are random (they never read their hands), so every public fact is the same in both;
    any difference in the observer's views could only come from the hidden hands.
    """
    base, seats, seed, deals, max_bids, observer, swaps = table
    plain, plain_hands = observed_views(base, seats, seed, deals, max_bids, observer, {})
    swapped, swapped_hands = observed_views(base, seats, seed, deals, max_bids, observer, swaps)
    # The swap really happened (where the drawn hand was not by chance the same) ...
    last = deals - 1
    for (_, slot), hand in swaps.items():
        assert tuple(swapped_hands[last][slot]) == hand
    assert swapped_hands[last][observer] == plain_hands[last][observer]
    # ... and the observer saw exactly the same things.
    assert swapped == plain
    assert all(view.hand == plain_hands[view.deal][observer] for view in swapped)


def test_views_only_ever_show_the_seats_own_hand():
    seats = [Recording(MinRaiser()) for _ in range(4)]
    _, records = play_table(seats, DICE, seed=3, deals=3)
    hands = [d["hands"] for d in records if d["type"] == "deal"]
    for slot, seat in enumerate(seats):
        for view in seat.views:
            assert list(view.hand) == hands[view.deal][slot]
            assert all(past.deal < view.deal for past in view.history)


def test_a_kept_view_still_shows_only_the_deals_before_its_own():
    """Views share one growing history, but a view kept from deal d must still show
    exactly deals 0..d-1 after the episode has played on (rule 6 reveals each once)."""
    seat = Recording(MinRaiser())
    _, records = play_table([seat, MinRaiser(), MinRaiser(), MinRaiser()], DICE, seed=5, deals=6)
    challenges = [r for r in records if r["type"] == "challenge"]
    assert len(challenges) == 6
    for view in seat.views:
        assert [past.deal for past in view.history] == list(range(view.deal))
        assert [past.challenger for past in view.history] == [
            c["slot"] for c in challenges[: view.deal]
        ]
        assert view.history == tuple(view.history)  # compares as the tuple it stands for
        if view.deal:
            assert view.history[-1].deal == view.deal - 1
            assert view.history[1:] == tuple(view.history)[1:]
            with pytest.raises(IndexError):
                view.history[view.deal]


# --- table set-up -----------------------------------------------------------------------------


@pytest.mark.parametrize("seats", range(2, 9))
def test_every_table_size_from_2_to_8_plays(host, seats):
    results, records = run_episode(host, EpisodeRequest(seats=seats, seed=seats, deals=3))
    summary = replay(records, results.to_json())
    assert summary.seats == seats and len(results.seats) == seats


@pytest.mark.parametrize("seats", [0, 1, 9])
def test_table_sizes_outside_2_to_8_are_refused(host, seats):
    with pytest.raises(ValueError, match="seats must be 2 to 8"):
        TableRules(mode=DICE, seats=seats)
    with pytest.raises(SetupError, match="seats must be 2 to 8"):
        run_episode(host, EpisodeRequest(seats=seats))


def test_config_rejects_negative_seed_and_no_deals():
    rules = TableRules(mode=DICE, seats=2)
    with pytest.raises(ValueError, match="seed"):
        EpisodeConfig(rules=rules, seed=-1)
    with pytest.raises(ValueError, match="deals"):
        EpisodeConfig(rules=rules, seed=0, deals=0)


def test_engine_needs_one_seat_and_one_fallback_per_slot():
    rules = TableRules(mode=DICE, seats=3)
    config = EpisodeConfig(rules=rules, seed=0)
    with pytest.raises(ValueError, match="3-seat table needs 3 seats"):
        Engine(config, [MinRaiser()] * 2, ["a", "b"], [MinRaiser()] * 2, lambda e: None)


def test_player_scripted_fills_the_seats_not_given():
    request = EpisodeRequest(seats=4, seat_specs=(SeatSpec("random"),))
    assert [str(s) for s in table_specs(request, {})] == ["random", "bayes", "bayes", "bayes"]
    pressure = {"PLAYER_SCRIPTED": "pressure"}
    assert [str(s) for s in table_specs(request, pressure)] == ["random"] + ["pressure"] * 3
    assert [str(s) for s in table_specs(request, {"PLAYER_SCRIPTED": ""})][1] == "bayes"


def test_player_scripted_reaches_the_played_table(host):
    request = EpisodeRequest(seats=3, deals=2, seat_specs=(SeatSpec("bayes"),))
    results, records = run_episode(host, request, environ={"PLAYER_SCRIPTED": "pressure"})
    assert [s.policy for s in results.seats] == ["bayes", "pressure", "pressure"]
    assert [s["policy"] for s in records[0]["seats"]] == ["bayes", "pressure", "pressure"]
    replay(records, results.to_json())  # and the referee checks both play their own lines


def test_more_seats_given_than_the_table_holds_is_a_setup_error(host):
    request = EpisodeRequest(seats=2, seat_specs=(SeatSpec("bayes"),) * 3)
    with pytest.raises(SetupError, match="3 seats given for a 2-seat table"):
        run_episode(host, request)


def test_a_seat_factory_that_fails_is_a_setup_error_naming_the_seat():
    with plugged(fussy_seat, "fussy_seat") as (fussy_host, info):
        assert info.broken is None
        request = EpisodeRequest(seats=2, seat_specs=(SeatSpec("bayes"), SeatSpec("fussy", "x")))
        with pytest.raises(SetupError, match=r"seat 1 \(fussy:x\): needs a policy file"):
            run_episode(fussy_host, request)


# --- usage, notes, talk filters ----------------------------------------------------------------


def test_token_usage_is_logged_and_totalled_per_seat():
    def with_usage(view):
        low = view.legal.min_bid
        usage = {"input_tokens": 100, "output_tokens": 7, "cache_read_tokens": 50}
        return Reply(Bid(*low), usage=usage)

    seats = [Scripted([with_usage] * 10), MinRaiser()]
    outcome, records = play_table(seats, DICE, seed=1, deals=2, max_bids=4)
    usage = [r for r in records if r["type"] == "usage"]
    assert usage and all(u["slot"] == 0 for u in usage)
    assert all(
        (u["inputTokens"], u["outputTokens"], u["cacheReadTokens"], u["cacheWriteTokens"])
        == (100, 7, 50, 0)
        for u in usage
    )
    assert len(usage) == outcome.tallies[0].decisions
    replay(records)


def test_notes_longer_than_the_cap_are_truncated_and_the_seat_is_told():
    def long_notes(view):
        return Bid(*view.legal.min_bid, notes="n" * (NOTES_CAP + 10))

    seat = Scripted([long_notes] * 10)
    play_table([seat, MinRaiser()], DICE, seed=1, deals=2, max_bids=4)
    later = seat.views[1:]
    assert later and all(v.notes == "n" * NOTES_CAP and v.notes_truncated for v in later)
    assert seat.views[0].notes is None and not seat.views[0].notes_truncated


def test_a_failing_talk_filter_silences_the_line_not_the_table():
    def broken(text, slot):
        raise ValueError("filter bug")

    def speak(view):
        return Bid(*view.legal.min_bid, say="hello")

    seats = [Scripted([speak] * 10) for _ in range(2)]
    outcome, records = play_table(
        seats, DICE, seed=1, deals=2, max_bids=3, talk=True, talk_filters=[broken]
    )
    bids = [r for r in records if r["type"] == "bid"]
    assert bids and all(b["say"] == "hello" and b["published"] is None for b in bids)
    assert outcome.status == "complete"
    assert all(view.talk == () for seat in seats for view in seat.views)


def test_the_engine_builds_views_in_seatview_field_order():
    """Engine._view passes the view's fields by position: the episode's first, this
    decision's, then the mode's rule data in header_fields() order. A wild-ones table
    (every rule field off its default) shows each value under its own name."""
    from arena_plugins.wild import WILD

    seen = Scripted([])
    play_table([seen, Scripted([])], WILD, seed=5, deals=1)
    view = seen.views[0]
    assert (view.mode, view.symbols, view.hand_size, view.seats) == ("wild", WILD.symbols, 5, 2)
    assert (view.max_bids, view.talk_enabled, view.slot, view.deal) == (12, False, 0, 0)
    assert (view.wild, view.wild_counts_itself, view.raise_rule) == (1, False, "wild-ones")
    assert view.retry_reason is None and view.notes is None and view.history == ()
    assert list(WILD.header_fields()) == [f.name for f in attrs.fields(SeatView)][-3:]


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
