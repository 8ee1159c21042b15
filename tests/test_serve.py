"""``arena serve`` over plain HTTP: a closed tab, several people at one table, bad requests.

The server runs as a real subprocess (tests/serving.py); tabs are event-stream
readers and POSTs. Every finished log is replayed through the independent
referee and compared byte for byte with the download the page links to.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import pytest
from referee import replay
from serving import EventReader, serve

from arena.web.replay import replay_html


@pytest.fixture
def served(tmp_path, request):
    yield from serve(tmp_path, *getattr(request, "param", ()))


def choose(screen: dict) -> str:
    """The move the screen marks as bayes's, as a person would type it."""
    if screen["bayes_challenges"]:
        return "c"
    mark = next(o for o in screen["options"] if o["bayes"])
    return f"{mark['quantity']} {mark['face']}"


def token_of(url: str) -> str:
    return url.rsplit("/", 1)[1]


@pytest.mark.parametrize("served", [("--turn-timeout", "0.5")], indirect=True)
def test_a_closed_tab_is_a_seat_that_stopped_answering(served):
    status, table = served.post("/api/tables", {"seats": ["human", "bayes", "bayes"], "deals": 3})
    assert status == 200
    path, records = served.logged()
    summary = replay(records)  # rule 11: each fallback is the move bayes makes there
    assert summary.status == "complete" and summary.deals_played == 3
    # The first unanswered turn waits out the timeout; later ones do not wait for a gone tab.
    assert summary.faults[0] == summary.fallbacks[0] == summary.asked[0] >= 1
    assert summary.rejected[0] == 0
    status, body = served.get(f"/api/log/{token_of(table['people']['0'])}")
    assert status == 200 and body == path.read_bytes()
    # The end screen's replay link serves the replay page of exactly this log.
    status, page = served.get(f"/replay/{token_of(table['people']['0'])}")
    assert status == 200 and page.decode() == replay_html(records)


@pytest.mark.parametrize("served", [("--turn-timeout", "60", "--talk")], indirect=True)
def test_two_people_at_one_table_each_see_only_their_own_hand(served):
    body = {"seats": ["human", "bayes", "human", "pressure"], "deals": 3, "seed": 4, "talk": True}
    status, table = served.post("/api/tables", body)
    assert status == 200 and set(table["people"]) == {"0", "2"}
    tabs = {int(slot): EventReader(served, token_of(url)) for slot, url in table["people"].items()}
    answered: set[tuple[int, int]] = set()
    deadline = time.monotonic() + 60
    while not all(any(m["kind"] == "end" for m in tab.messages) for tab in tabs.values()):
        assert time.monotonic() < deadline, "the table did not finish"
        for slot, tab in tabs.items():
            for message in list(tab.messages):
                if message["kind"] == "turn" and (slot, message["turn"]) not in answered:
                    answered.add((slot, message["turn"]))
                    move = {"turn": message["turn"], "command": choose(message["screen"])}
                    move["say"] = f"seat {slot} says hi"
                    status, reply = served.post(
                        f"/api/act/{token_of(table['people'][str(slot)])}", move
                    )
                    assert status == 200, reply
        time.sleep(0.02)
    path, records = served.logged()
    summary = replay(records)
    assert (
        summary.deals_played == 3 and summary.rejected == [0] * 4 and summary.fallbacks == [0] * 4
    )
    hands = {r["deal"]: r["hands"] for r in records if r["type"] == "deal"}
    for slot, tab in tabs.items():
        turns = [m for m in tab.messages if m["kind"] == "turn"]
        assert turns
        for message in turns:
            screen = message["screen"]
            assert screen["slot"] == slot and screen["hand"] == hands[screen["deal"]][slot]
            other = 2 - slot  # the other person's hand of this deal appears on no screen
            assert str(hands[screen["deal"]][other]) not in str(screen)
        dealt = [m["text"] for m in tab.messages if m["kind"] == "news" and m["news"] == "deal"]
        for deal, text in enumerate(dealt):
            mine = " ".join(map(str, hands[deal][slot]))
            assert text.endswith(f"your hand {mine}")
    said = [r["published"] for r in records if r["type"] in ("bid", "challenge") and r["slot"] == 0]
    assert said and all("seat 0 says hi" in line for line in said)  # talk rode on the moves
    for tab in tabs.values():
        tab.close()


def test_bad_requests_get_one_clear_error(served):
    status, reply = served.post("/api/tables", {"seats": ["human", "nobody"]})
    assert status == 400 and "nobody" in reply["error"]
    status, reply = served.post("/api/tables", {"seats": ["human"]})
    assert status == 400 and "seats must be 2 to 8" in reply["error"]
    status, reply = served.post("/api/tables", {"seats": ["human", "bayes"], "deals": "many"})
    assert status == 400 and "bad table request" in reply["error"]
    status, reply = served.post("/api/act/not-a-token", {"turn": 1, "command": "c"})
    assert status == 404
    status, _body = served.get("/api/log/not-a-token")
    assert status == 404


def test_a_typo_from_the_page_is_answered_not_logged(served):
    status, table = served.post("/api/tables", {"seats": ["human", "bayes"], "deals": 1})
    token = token_of(table["people"]["0"])
    tab = EventReader(served, token)
    _index, turn = tab.wait_for("turn")
    status, reply = served.post(f"/api/act/{token}", {"turn": turn["turn"], "command": "3 3 3"})
    assert status == 400 and "not understood" in reply["error"]
    status, reply = served.post(f"/api/act/{token}", {"turn": turn["turn"] + 1, "command": "c"})
    assert status == 400 and reply["error"] == "it is not your turn"
    status, _reply = served.post(f"/api/act/{token}", {"turn": turn["turn"], "command": "q"})
    assert status == 400  # leaving is the tab's to do by closing, not a move
    tab.close()
    served.process.send_signal(2)  # Ctrl-C mid-episode: the table settles "quit", log complete
    _path, records = served.logged()
    assert records[-1]["type"] in ("result", "audit")
    assert replay(records).status == "quit"


def run_serve(*args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "arena.cli", "serve", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=30)


def test_a_port_in_use_or_a_missing_log_dir_is_one_error_line(tmp_path):
    missing = run_serve("--port", "0", "--log-dir", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and missing.stderr.startswith("arena: error: --log-dir")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = run_serve("--port", str(taken.getsockname()[1]))
    assert busy.returncode == 2 and busy.stderr.startswith("arena: error: cannot listen on")
    assert "Traceback" not in missing.stderr + busy.stderr
