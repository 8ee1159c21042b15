"""A seat's kept table record (issue 39): the same bytes as a fresh render, at a cost per
request that does not grow with the deals played.

:class:`~arena_plugins.model_seat.prompt.SeatRecord` renders each finished deal once;
:func:`~arena_plugins.model_seat.prompt.record` renders the whole record on every call
and is the reference. Every request of whole episodes is compared, both ways a wire reads
the record (as the pieces it grew by, and as one text).
"""

from __future__ import annotations

import pytest
from episode_views import episode_views

from arena.view import PastDeals
from arena_plugins.dice import DICE
from arena_plugins.model_seat import prompt
from arena_plugins.model_seat.prompt import SeatRecord, record
from arena_plugins.poker import POKER
from arena_plugins.wild import WILD


@pytest.mark.parametrize("mode", [DICE, POKER, WILD], ids=lambda m: m.name)
@pytest.mark.parametrize("talk", [True, False], ids=["talk", "quiet"])
@pytest.mark.parametrize("seed", [0, 7, 2026])
def test_every_request_of_an_episode_reads_as_a_fresh_render(mode, talk, seed):
    for views in episode_views(mode, 4, seed, 40, talk):
        pieces, text = SeatRecord(), SeatRecord()
        assert len(views[-1].history) >= 35
        sent: list[str] = []
        for view in views:
            fresh = "".join(record(view, mode))
            assert text.text(view, mode) == fresh
            blocks = pieces.blocks(view, mode)
            assert "".join(blocks) == fresh
            # The last call's pieces, unchanged, then at most one more: what is new.
            assert blocks[: len(sent)] == sent and len(blocks) - len(sent) in (0, 1)
            assert (len(blocks) == len(sent)) == (fresh == "".join(sent))
            sent = blocks


def test_the_pieces_are_what_each_call_added():
    """Worked over three calls of one seat (seed 7, s1, which opens deal 0 and is asked again
    after s3, s2 and s0 have bid): the first piece is the intro and deal 0's header; the
    second is exactly the four bid lines since (s1's own and three more); asked again with
    nothing new, no piece is added."""
    first, later = [v for v in episode_views(DICE, 4, 7, 3, False)[1] if v.deal == 0][:2]
    assert (first.slot, first.bids, len(later.bids)) == (1, (), 4)
    kept = SeatRecord()
    one = kept.blocks(first, DICE)
    hand = " ".join(map(str, first.hand))
    assert one == [
        f"# Table record, as seen by s1\n\n## Deal 0: opener s1 (you), your hand [{hand}]\n"
    ]
    two = kept.blocks(later, DICE)
    who = {1: "s1 (you)", 0: "s0", 2: "s2", 3: "s3"}
    lines = [f"{who[b.slot]} bids quantity {b.quantity}, face {b.face}\n" for b in later.bids]
    assert [b.slot for b in later.bids] == [1, 3, 2, 0]
    assert two == [one[0], "".join(lines)]
    assert kept.blocks(later, DICE) == two


def test_a_packed_history_reads_the_same(monkeypatch):
    """Past ``2 * RECENT`` deals the oldest are packed and rebuilt on access: the kept
    record's check of its last deal reads a rebuilt one, equal and not the same object."""
    monkeypatch.setattr(PastDeals, "RECENT", 2)
    for views in episode_views(DICE, 3, 5, 30, False):
        kept = SeatRecord()
        for view in views:
            assert kept.text(view, DICE) == "".join(record(view, DICE))


def test_each_finished_deal_is_rendered_once(monkeypatch):
    """The point of keeping it: a seat asked on every deal renders each finished deal's
    outcome once, where a fresh render repeats every past deal on every request."""
    rendered = []
    outcome = prompt._outcome
    monkeypatch.setattr(prompt, "_outcome", lambda *a: rendered.append(a[2].deal) or outcome(*a))
    views = episode_views(DICE, 4, 3, 60, False)[0]
    kept = SeatRecord()
    for view in views:
        kept.blocks(view, DICE)
    assert sorted(rendered) == list(range(len(views[-1].history)))
    rendered.clear()
    for view in views:
        list(record(view, DICE))
    assert len(rendered) == sum(len(view.history) for view in views) > 3 * 60


def test_a_record_shown_another_seat_or_episode_starts_again():
    """Misused, a kept record costs time, never a wrong prompt: views of other seats and of
    a second episode, interleaved, each read as their own fresh render."""
    first = episode_views(POKER, 4, 11, 25, True)
    second = episode_views(POKER, 4, 12, 25, True)
    shuffled = [v for pair in zip(first[0], first[1], second[0], strict=False) for v in pair]
    shuffled += first[2][::-1] + second[3]
    kept = SeatRecord()
    for view in shuffled:
        assert "".join(kept.blocks(view, POKER)) == "".join(record(view, POKER))


def test_a_record_asked_in_another_mode_starts_again():
    """The mode renders the hands (dice spaced, poker digits run together)."""
    view = episode_views(DICE, 4, 1, 10, False)[0][-1]
    kept = SeatRecord()
    kept.text(view, DICE)
    assert kept.text(view, POKER) == "".join(record(view, POKER)) != "".join(record(view, DICE))
