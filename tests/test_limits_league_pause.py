"""A 429 pauses every seat of its endpoint, in threads, worker processes and Ray tasks alike.

Each test runs a real ``arena league run`` with a Claude entrant against the real
loopback Messages API (tests/messages_server.py): every Claude seat calls that one
endpoint, so every one is paused (tests/test_limits_endpoint_pause.py has two). Its
sixth request is answered ``429`` with ``retry-after: 2``, and no request from any seat
may reach the server in the 2 s after that answer was sent.

A request already on its way when the 429 leaves the server cannot be called back,
so the server first makes sure none is: once the sixth request is in, it answers
nothing for HOLD seconds, during which every seat that was between a reply and its
next request sends it (and is held), then sends the 429, and releases the held
replies HOLD seconds later. From then on a request that reaches the server within
the pause was started after the league was told to wait.

The seat told is on its last attempt (``ARENA_CLAUDE_RETRY_ATTEMPTS=1``): the pause
comes from the reply itself, not from that seat's retry, which a seat with no retry
left never makes (and which, made, came 20-115 ms after the headers beside busy
tables).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest
from messages_server import Fail, MessagesServer, table_player

pytestmark = pytest.mark.slow

TOLD = 6
"""The request answered 429."""
PAUSE = 2.0
HOLD = 0.5
LEAGUE = ["--pool", "claude:honest,bayes,pressure,random", "--tables", "8", "--deals", "10"]


def league_told_to_wait(tmp_path, *executor: str) -> tuple[subprocess.CompletedProcess, list]:
    """Run the league; return it and the arrival of every request after the 429, in
    seconds after the 429 was sent."""
    play = table_player()
    lock = threading.Lock()
    count = [0]
    holding, releasing = threading.Event(), threading.Event()
    told: list[float] = []

    def respond(body):
        with lock:
            count[0] += 1
            number = count[0]
        if number == TOLD:
            holding.set()
            time.sleep(HOLD)
            told.append(time.monotonic())
            threading.Timer(HOLD, releasing.set).start()
            return Fail(429, "rate_limit_error", retry_after=f"{PAUSE:g}")
        if holding.is_set():
            releasing.wait()
        return play(body)

    with MessagesServer(respond) as server:
        env = os.environ | {
            "ANTHROPIC_API_KEY": "loopback",
            "ANTHROPIC_BASE_URL": server.url,
            "ARENA_CLAUDE_RETRY_ATTEMPTS": "1",
        }
        ran = subprocess.run(
            [sys.executable, "-m", "arena.cli", "league", "run", *LEAGUE, *executor,
             "--db", str(tmp_path / "l.sqlite"), "--json"],
            capture_output=True, text=True, env=env, timeout=300,
        )  # fmt: skip
    assert told, f"the league made fewer than {TOLD} requests: {ran.stderr[-2000:]}"
    return ran, [r.arrived - told[0] for r in server.requests if r.arrived > told[0]]


@pytest.mark.parametrize(
    "executor",
    [
        ["--executor", "thread", "--concurrency", "4"],
        ["--executor", "process", "--workers", "2"],
        ["--executor", "ray", "--concurrency", "2"],
    ],
    ids=["4 threads", "2 worker processes", "2 Ray tasks on a private instance"],
)
def test_a_429_pauses_every_seat_of_its_endpoint(tmp_path, executor):
    ran, after = league_told_to_wait(tmp_path, *executor)
    assert ran.returncode == 0, ran.stderr[-2000:]
    # 8 tables of 10 deals with one Claude seat each ask more than the 6 requests made by
    # the 429: the league asked again, but only once the server's 2 s were up.
    assert after, "no request after the 429: the league never asked again"
    assert [t for t in after if t < PAUSE] == []
