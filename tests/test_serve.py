"""``arena serve`` over plain HTTP: a closed tab, several people at one table, bad requests.

The server runs as a real subprocess (tests/serving.py); tabs are event-stream
readers and POSTs. Every finished log is replayed through the independent
referee and compared byte for byte with the download the page links to.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from referee import replay
from serving import EventReader, read_lines, serve

from arena.cli import main
from arena.web.replay import replay_html

pytestmark = pytest.mark.slow


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


@pytest.mark.parametrize(
    "served", [("--turn-timeout", "60", "--talk", "--offer", "pressure")], indirect=True
)
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


def test_an_unknown_token_is_a_404(served):
    # Bad fields, bodies and origins: tests/test_serve_security.py.
    status, reply = served.post("/api/act/not-a-token", {"turn": 1, "command": "c"})
    assert status == 404 and reply["error"] == "this page has no seat at the table"
    for path in ("/api/log/not-a-token", "/api/events/not-a-token", "/replay/not-a-token"):
        assert served.get(path)[0] == 404, path


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
    path, records = served.logged()
    assert records[-1]["type"] in ("result", "audit")
    assert replay(records).status == "quit"
    assert main(["check", str(path)]) == 0


def test_a_port_in_use_or_a_file_as_log_dir_is_one_error_line(tmp_path):
    (tmp_path / "taken").write_text("not a folder")
    missing = run_serve("--port", "0", "--log-dir", str(tmp_path / "taken"))
    assert (missing.returncode, missing.stdout) == (2, "")
    assert missing.stderr == f"arena: error: --log-dir {tmp_path / 'taken'} is not a directory\n"
    assert (tmp_path / "taken").read_text() == "not a folder"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = run_serve("--port", str(taken.getsockname()[1]))
    assert busy.returncode == 2 and busy.stderr.startswith("arena: error: cannot listen on")
    assert "Traceback" not in missing.stderr + busy.stderr


def test_a_missing_log_dir_is_made_as_the_docs_use_it(tmp_path):
    # README and docs/play.md run `arena serve ... --log-dir logs/` in a fresh folder.
    assert not (tmp_path / "logs").exists()
    stopping = serve(tmp_path, log_dir="logs/sub/")
    served = next(stopping)
    status, _table = served.post("/api/tables", {"seats": ["bayes", "bayes"], "deals": 1})
    assert status == 200
    path, _records = served.logged()
    stopping.close()
    assert path.parent == tmp_path / "logs" / "sub"


def test_ctrl_c_settles_a_table_with_no_person_as_quit_with_a_complete_log(tmp_path, capsys):
    stopping = serve(tmp_path, "--max-deals", "1000000", "--offer", "pressure,random")
    served = next(stopping)
    seats = ["bayes", "pressure", "bayes", "random"]
    status, _table = served.post("/api/tables", {"seats": seats, "deals": 1000000})
    assert status == 200
    part = None
    while part is None or part.stat().st_size < 10_000:  # well into the episode
        part = next(served.log_dir.glob("*.jsonl.part"), None)
        time.sleep(0.05)
    served.process.send_signal(2)
    served.process.wait(timeout=8)  # at the next decision, not after a thread's join times out
    stopping.close()
    [path] = served.log_dir.iterdir()  # renamed from .part: the episode settled
    assert path.suffix == ".jsonl"
    records = read_lines(path)
    types = [r["type"] for r in records]
    result = records[types.index("result")]
    assert "interrupted" not in types and set(types[types.index("result") + 1 :]) <= {"audit"}
    assert result["status"] == "quit" and 0 < result["dealsPlayed"] < 1000000
    assert replay(records).status == "quit"
    assert main(["check", str(path)]) == 0
    assert ", quit, " in capsys.readouterr().out
    assert served.stderr == "arena: server stopped\n"


def test_a_restarted_server_never_reuses_a_log_name(tmp_path):
    # The same seed twice, with a restart between: two logs, neither refused nor replaced.
    logs, stderr, kept = tmp_path / "logs", [], {}
    for run in (1, 2):
        stopping = serve(tmp_path, "--seed", "5")
        served = next(stopping)
        status, _table = served.post("/api/tables", {"seats": ["bayes", "bayes"], "deals": 2})
        assert status == 200
        deadline = time.monotonic() + 30
        while len(list(logs.glob("*.jsonl"))) < run:  # a log is named once its episode settled
            assert time.monotonic() < deadline
            time.sleep(0.05)
        stopping.close()
        stderr.append(served.stderr)
        assert all(path.read_bytes() == data for path, data in kept.items())  # left as it was
        kept = {path: path.read_bytes() for path in logs.iterdir()}
    assert sorted(path.name for path in kept) == ["table-1-seed5.jsonl", "table-2-seed5.jsonl"]
    a, b = (read_lines(path) for path in sorted(kept))
    assert a == b  # the same seed and seats: the same episode, kept twice
    assert stderr == ["arena: server stopped\n"] * 2  # no error, no raw log line


def run_serve(*args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "arena.cli", "serve", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=30)


def test_a_bad_command_line_is_one_error_line_before_anything_is_served(tmp_path):
    # Each must fail at launch (exit 2, one line), not when a page presses Start.
    cases = {
        ("--seat", "nosuch"): "arena: error: unknown seat 'nosuch'",
        ("--seat", "human", "--seat", "bayes", "--seats", "2", "--seat", "pressure"): (
            "arena: error: 3 seats given for a 2-seat table"
        ),
        ("--deals", "1001"): "arena: error: --deals 1001 is over --max-deals 1000",
        ("--max-deals", "0"): "arena: error: argument --max-deals",
        ("--host", "0.0.0.0"): "arena: error: --host 0.0.0.0 is not a loopback address",
        ("--host", "example.com"): "arena: error: --host example.com is not a loopback address",
        # Seats a page may choose and seeds: tests/test_bad_inputs.py (issue 30's rows).
    }
    for args, expected in cases.items():
        done = run_serve("--port", "0", *args)
        assert (done.returncode, done.stdout) == (2, ""), (args, done.stderr)
        assert done.stderr.startswith(expected) and done.stderr.count("\n") == 1, done.stderr


def test_a_read_only_log_dir_is_refused_at_launch(tmp_path):
    # A read-only mount (bubblewrap's --ro-bind), which even root cannot write to.
    logs = tmp_path / "logs"
    logs.mkdir()
    command = ["bwrap", "--dev-bind", "/", "/", "--ro-bind", str(logs), str(logs)]
    command += [sys.executable, "-m", "arena.cli", "serve", "--port", "0", "--log-dir", str(logs)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == f"arena: error: --log-dir {logs} is not writable: Read-only file system\n"


@pytest.mark.parametrize("served", [("--talk",)], indirect=True)
def test_the_log_download_is_the_bytes_written_whatever_was_said(served):
    said = "line\u2028sep\u2029para\u0085nel \x1b[31m</script><!-- 🎲 \u202eright-to-left"
    status, table = served.post(
        "/api/tables", {"seats": ["human", "bayes"], "deals": 1, "talk": True}
    )
    token = token_of(table["people"]["0"])
    tab = EventReader(served, token)
    after = 0
    while True:
        after, message = tab.wait_for("turn", after)
        if message["kind"] == "end":
            break
        move = {"turn": message["turn"], "command": choose(message["screen"]), "say": said}
        assert served.post(f"/api/act/{token}", move)[0] == 200
        after += 1
    path, records = served.logged()
    status, body = served.get(f"/api/log/{token}")
    assert status == 200 and body == path.read_bytes()
    assert [r["say"] for r in records if r.get("slot") == 0 and "say" in r and r["say"]] != []
    assert all(r["say"] == said for r in records if r.get("slot") == 0 and r.get("say"))
    tab.close()


def test_an_offered_seat_its_plugin_refuses_for_the_pages_table_is_a_400(tmp_path):
    # nash is checked at launch on the 2-seat rung1w table; a page may still choose dice,
    # where nash cannot play: its seats are built before the answer, so the page is told.
    stopping = serve(tmp_path, "--mode", "rung1w", "--seats", "2", "--offer", "nash")
    served = next(stopping)
    status, reply = served.post("/api/tables", {"seats": ["human", "nash"], "mode": "dice"})
    assert status == 400
    assert reply["error"].startswith("seat 1 (nash): nash plays only on the calibration rungs")
    time.sleep(0.5)  # time enough for a log to appear, had the table started
    assert list(served.log_dir.iterdir()) == []
    status, _table = served.post("/api/tables", {"seats": ["bayes", "nash"], "deals": 2})
    assert status == 200  # on the rung it was offered for, it plays
    _path, records = served.logged()
    stopping.close()
    assert records[0]["seats"][1]["policy"] == "nash"


def test_without_a_log_dir_finished_tables_are_read_from_a_private_folder_removed_at_stop(
    tmp_path,
):
    private = tmp_path / "tmp"
    private.mkdir()
    stopping = serve(tmp_path, log_dir=None, env=os.environ | {"TMPDIR": str(private)})
    served = next(stopping)
    status, table = served.post("/api/tables", {"seats": ["bayes", "bayes"], "deals": 3})
    assert status == 200
    token = token_of(table["watch"])
    deadline = time.monotonic() + 30
    while (answer := served.get(f"/api/log/{token}"))[0] != 200:  # ready once it ended
        assert time.monotonic() < deadline, answer
        time.sleep(0.05)
    [path] = private.glob("arena-serve-*/logs/*.jsonl")  # the server's own folder
    assert answer[1] == path.read_bytes()
    records = read_lines(path)
    assert replay(records).deals_played == 3
    status, page = served.get(f"/replay/{token}")
    assert status == 200 and page.decode() == replay_html(records)
    # A page coming back to the finished table is told whom it is and how it ended.
    tab = EventReader(served, token)
    _index, end = tab.wait_for("end")
    tab.close()
    assert [(m["id"], m["kind"]) for m in tab.messages] == [(0, "hello"), (end["id"], "end")]
    assert end["id"] > 3 and end["results"]["dealsPlayed"] == 3  # news of 3 deals went between
    stopping.close()
    assert list(private.iterdir()) == []  # removed with everything in it


def test_an_earlier_tables_log_replay_and_end_stay_served_after_the_next_starts(served):
    first = served.post("/api/tables", {"seats": ["human", "bayes"], "deals": 1, "seed": 3})[1]
    token = token_of(first["people"]["0"])
    tab = EventReader(served, token)
    after = 0
    while (found := tab.wait_for("turn", after))[1]["kind"] != "end":  # the person plays it
        after, turn = found
        move = {"turn": turn["turn"], "command": choose(turn["screen"])}
        assert served.post(f"/api/act/{token}", move)[0] == 200
        after += 1
    tab.close()
    path, records = served.logged()
    second = {"seats": ["bayes", "bayes"], "deals": 1}
    while (status := served.post("/api/tables", second)[0]) == 409:  # the first is letting go
        time.sleep(0.05)
    assert status == 200
    assert served.get(f"/api/log/{token}") == (200, path.read_bytes())
    assert served.get(f"/replay/{token}") == (200, replay_html(records).encode())
    again = EventReader(served, token)
    _index, end = again.wait_for("end")
    again.close()
    assert [m["kind"] for m in again.messages] == ["hello", "end"] and end == found[1]
    status, reply = served.post(f"/api/act/{token}", {"turn": 1, "command": "c"})
    assert (status, reply["error"]) == (404, "this page has no seat at the table")


def resident_kb(pid: int) -> int:
    """A process's resident memory now, ``VmRSS`` in /proc (kB)."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmRSS:")).split()[1])


def test_finished_tables_leave_the_servers_memory(tmp_path):
    # bench/bench_serve_memory.py measures 100 tables of 1,000 deals (docs/performance.md);
    # this is its short form. Each 300-deal table held about 0.7 MB when finished tables
    # stayed in memory (2.2 MB a 1,000-deal one): 50 would add some 35 MB, not under 3.
    stopping = serve(tmp_path, log_dir=None)
    served = next(stopping)

    def play(seed: int) -> None:
        body = {"seats": ["bayes"] * 4, "deals": 300, "seed": seed}
        while (answer := served.post("/api/tables", body))[0] == 409:  # the last one ending
            time.sleep(0.02)
        assert answer[0] == 200, answer
        token = token_of(answer[1]["watch"])
        while served.get(f"/api/log/{token}")[0] != 200:
            time.sleep(0.02)

    for seed in range(10):  # warm-up: imports, caches, the allocator's arenas
        play(seed)
    warm = resident_kb(served.process.pid)
    for seed in range(10, 60):
        play(seed)
    grown = resident_kb(served.process.pid) - warm
    stopping.close()
    assert grown < 3 * 1024, f"{grown} kB over 50 finished tables"
