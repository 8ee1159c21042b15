"""Both wires keep one record per seat (issue 39): every request of whole episodes is the
request a fresh render builds, and one seat's kept deals never reach another seat's request.

A request built without a kept record renders the whole table record afresh; that this
matches :func:`~arena_plugins.model_seat.prompt.record` byte for byte is
``tests/test_prompt_cache.py``'s. Here each seat's requests are built in the order the
table asked them, seats interleaved, each with its own kept record, and compared whole: a
Claude request with a kept record sends the record in the pieces it grew by (one block per
request, see ``tests/test_claude_prompt.py``), so its record blocks are joined first.
"""

from __future__ import annotations

import pytest
from episode_views import episode_views

from arena.rules import TableRules
from arena_plugins.claude import prompt as claude
from arena_plugins.claude.settings import ModelSettings
from arena_plugins.dice import DICE
from arena_plugins.model_seat.prompt import SeatRecord
from arena_plugins.openai_chat import wire as openai
from arena_plugins.poker import POKER
from arena_plugins.wild import WILD
from arena_policies import resolve

POLICY = resolve("tracker")


def claude_request(view, rules, kept=None):
    """The request with its record's blocks joined into the one block a fresh render sends."""
    request = claude.build_request(view, rules, POLICY, ModelSettings(), kept)
    *record, turn = request["messages"][0]["content"]
    assert all(b["cache_control"] == {"type": "ephemeral"} for b in record[-1:])
    assert all("cache_control" not in b for b in record[:-1])
    joined = {"type": "text", "text": "".join(b["text"] for b in record)}
    request["messages"][0]["content"] = [
        {**joined, "cache_control": record[-1]["cache_control"]},
        turn,
    ]
    return request


def openai_request(view, rules, kept=None):
    cap = ("max_tokens", 512)
    return openai.build_request(view, rules, POLICY, "m", openai.JSON_SCHEMA, False, cap, kept=kept)


def interleaved(views_per_seat):
    """(seat, view) in the order the table asked, by each view's deal and bid count."""
    asked = [(v.deal, len(v.bids), s, v) for s, views in enumerate(views_per_seat) for v in views]
    return [(s, v) for _, _, s, v in sorted(asked, key=lambda a: a[:3])]


@pytest.mark.parametrize("build", [claude_request, openai_request], ids=["claude", "openai"])
@pytest.mark.parametrize("mode", [DICE, POKER, WILD], ids=lambda m: m.name)
@pytest.mark.parametrize("talk", [True, False], ids=["talk", "quiet"])
@pytest.mark.parametrize("seed", [0, 2026])
def test_each_request_of_an_episode_is_a_fresh_render(build, mode, talk, seed):
    rules = TableRules(mode=mode, seats=4, max_bids=8)
    views = episode_views(mode, 4, seed, 30, talk)
    kept = [SeatRecord() for _ in views]
    asked = interleaved(views)
    assert len({view.deal for _, view in asked}) == 30  # every deal asks someone something
    for seat, view in asked:
        assert build(view, rules, kept[seat]) == build(view, rules)


@pytest.mark.parametrize("build", [claude_request, openai_request], ids=["claude", "openai"])
def test_two_seats_at_one_table_never_read_each_others_hand(build):
    rules = TableRules(mode=DICE, seats=2, max_bids=8)
    views = episode_views(DICE, 2, 11, 12, True)
    kept = [SeatRecord(), SeatRecord()]
    for seat, view in interleaved(views):
        request = build(view, rules, kept[seat])
        other = [v for v in views[1 - seat] if v.deal == view.deal][0]
        # each seat's own request holds its hand, and differs from the other seat's fresh one
        assert request == build(view, rules)
        assert request != build(other, rules)
