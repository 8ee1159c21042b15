"""The table server seats whichever seat declares that a person plays it (``Person``).

What a page shows and how its typing is read come from the seat's declaration, not
from the human plugin: a plugin's own person seat is played in the page with its own
screen, move reader and feed, and the seat a person takes by default is the first
one declared. The table runs in-process here, its engine in its thread as under
``arena serve``; tests/test_serve.py drives the real server over HTTP.
"""

from __future__ import annotations

import time

import attrs
import pytest
from plugins_for_tests.harness import plugged

from arena import hookimpl
from arena.actions import Bid, Challenge
from arena.cli import main
from arena.plugins import load
from arena.registry import Person
from arena.runner import EpisodeRequest, SetupError
from arena.seats import SeatSpec
from arena.web.serve_table import Table, person_seat


@attrs.frozen
class Line:
    kind: str
    text: str


def doorman_move(command, view, rules):
    """Only ``min``: the lowest legal bid, or the challenge when no bid can raise (rule 4)."""
    if command != "min":
        return f"the doorman only says min, not {command!r}"
    return Challenge() if view.legal.min_bid is None else Bid(*view.legal.min_bid)


DOORMAN = Person(
    feed=lambda mode, deals, viewer: (
        lambda record: (
            Line("door", f"{record['type']} for {viewer}")
            if record["type"] in {"deal", "result"}
            else None
        )
    ),  # fmt: skip
    screen=lambda context: lambda view: {"door": list(view.hand), "slot": context.slot},
    move=doorman_move,
)


def never_built(context):
    raise AssertionError("a seat a person plays is seated in the page, not built by its factory")


class DoormanPlugin:
    @hookimpl
    def register_seats(self, register):
        register("doorman", never_built, person=DOORMAN)


def test_the_default_person_seat_is_the_first_declared_and_none_is_a_setup_error():
    assert person_seat(load({}).registry) == "human"  # ours register before any plugin's
    with plugged(DoormanPlugin(), "doormen", {"ARENA_BLOCK_PLUGINS": "human"}) as (host, _):
        assert person_seat(host.registry) == "doorman"
    without = load({"ARENA_BLOCK_PLUGINS": "human"})
    with pytest.raises(SetupError, match="no installed seat is played by a person"):
        person_seat(without.registry)


def test_serve_without_a_seat_a_person_plays_is_one_line(monkeypatch, capsys):
    monkeypatch.setenv("ARENA_BLOCK_PLUGINS", "human")
    assert main(["serve", "--seat", "bayes", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "arena: error: no installed seat is played by a person: "
        "the table server has no one to seat\n"
    )


def test_a_plugins_person_seat_is_played_in_the_page_with_its_own_screen_move_and_feed(tmp_path):
    request = EpisodeRequest(
        seats=2, deals=1, seed=5, seat_specs=(SeatSpec("bayes"), SeatSpec("doorman"))
    )
    with plugged(DoormanPlugin(), "doormen") as (host, info):
        assert info.broken is None
        table = Table(host, request, 30, tmp_path / "doorman.jsonl", tmp_path)
        (token,) = [t for t, slot in table.tokens.items() if slot == 1]
        assert table.people == {"1": f"/table/{token}"}
        table.start()
        mine, hints = [], []
        table.channels[token].connect()  # a page reading: it is told every message
        deadline = time.monotonic() + 30
        while not mine or mine[-1]["kind"] != "end":
            assert time.monotonic() < deadline, "the table did not finish"
            messages = table.channels[token].since(len(mine))
            mine += messages
            for message in (m for m in messages if m["kind"] == "turn"):
                screen = message["screen"]
                assert screen["slot"] == 1 and len(screen["door"]) == 5  # dice: 5 per hand
                seat = table.seat_for(token)
                hints.append(seat.answer(message["turn"], "knock", None))
                assert seat.answer(message["turn"], "min", None) is None
            time.sleep(0.01)
        assert hints and set(hints) == {"the doorman only says min, not 'knock'"}
        table.finished.wait(10)
        table.channels[token].disconnect()
        watched = table.channels[table.watch_token].since(0)
    assert [m["id"] for m in mine] == list(range(len(mine)))  # none missed on the way
    # The doorman's feed, for viewer 1: one deal record and one result record of one deal.
    news = [(m["news"], m["text"]) for m in mine if m["kind"] == "news"]
    assert news == [("door", "deal for 1"), ("door", "result for 1")]
    # A finished table keeps each page's first and last message only (its log holds the
    # rest): a spectator coming back is told it watches, and how the table ended.
    assert [(m["kind"], m["you"]) for m in watched[:1]] == [("hello", None)]
    assert [m["kind"] for m in watched] == ["hello", "end"] and watched[1] == {
        **mine[-1],
        "id": watched[1]["id"],
        "log": f"/api/log/{table.watch_token}",
        "replay": f"/replay/{table.watch_token}",
    }
    assert table.log == tmp_path / "doorman.jsonl" and table.log.exists()
    assert table.channels[token].since(0) == [mine[0], mine[-1]]  # its page gone, as well
    assert table.channels[token].since(mine[-1]["id"]) == [mine[-1]]  # kept on disk:
    assert (tmp_path / f"{token}.jsonl").read_text().count("\n") == 2  # the two, no more
    results = mine[-1]["results"]
    assert results["seats"][1]["fallbacks"] == 0  # every move was the doorman's own
