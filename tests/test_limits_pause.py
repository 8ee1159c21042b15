"""The league's pause deadlines: per endpoint, the largest any seat was told, seen by every
process.

tests/test_limits_league_pause.py shows whole leagues pausing on the loopback API, and
tests/test_limits_endpoint_pause.py one endpoint paused while another plays; these pin the
deadlines' own rules, with real spawned processes where they are shared.
"""

from __future__ import annotations

import multiprocessing
import time

import pytest

from arena.limits import Endpoint, Limiter, Pause, SharedPause

A, B = 11, 22
"""Two endpoints' names on a board (any two numbers; the limiter's are 64-bit hashes)."""


@pytest.mark.parametrize("board", [Pause(), SharedPause(2).slot(0)], ids=["Pause", "SharedPause"])
def test_a_shorter_wait_never_shortens_the_pause(board):
    far = time.time() + 1000.0
    board.extend(A, far)
    board.extend(A, far - 990.0)  # a later 429 asking less: the first one's time still holds
    assert board.until(A) == far


@pytest.mark.parametrize("board", [Pause(), SharedPause(2).slot(0)], ids=["Pause", "SharedPause"])
def test_one_endpoints_pause_is_not_anothers(board):
    board.extend(A, time.time() + 1000.0)
    assert board.until(B) == 0.0  # never paused: no deadline at all


def test_every_workers_deadline_counts_and_none_overwrites_another():
    shared = SharedPause(3)
    shared.slot(0).extend(A, 50.0)
    shared.slot(2).extend(A, 70.0)
    shared.slot(1).extend(A, 60.0)
    shared.slot(1).extend(B, 80.0)
    assert shared.until(A) == 70.0  # the largest of 50, 60 and 70; B's 80 is B's
    assert shared.until(B) == 80.0


def test_a_worker_reuses_an_entry_whose_pause_is_over_and_keeps_the_live_ones():
    shared = SharedPause(1)
    mine = shared.slot(0)
    now = time.time()
    live = now + 1000.0
    mine.extend(1, now - 5.0)  # over already: its entry is the one to reuse
    for endpoint in range(2, SharedPause.ENTRIES + 1):  # the other 15 entries, all live
        mine.extend(endpoint, live)
    mine.extend(99, live + 1.0)  # a 17th endpoint: into endpoint 1's entry
    assert shared.until(99) == live + 1.0
    assert shared.until(1) == 0.0
    assert [shared.until(e) for e in range(2, SharedPause.ENTRIES + 1)] == [live] * 15


def _told_to_wait(pause: SharedPause, until: float) -> None:
    pause.extend(B, until)


def test_a_deadline_set_in_a_spawned_worker_is_read_by_another_process():
    context = multiprocessing.get_context("spawn")
    shared = SharedPause(2, context)
    until = time.time() + 3600.0
    worker = context.Process(target=_told_to_wait, args=(shared.slot(1), until))
    worker.start()
    worker.join(timeout=60)
    assert worker.exitcode == 0
    assert shared.slot(0).until(B) == until
    assert shared.slot(0).until(A) == 0.0


def test_a_limiter_holds_its_next_request_until_its_endpoints_shared_deadline():
    shared = SharedPause(2)
    told, other = Endpoint("https://a.example:443", "k1"), Endpoint("https://b.example:443", "k1")
    Limiter(pause=shared.slot(1)).pause(0.5, told)  # the other worker was told to wait 0.5 s
    limiter = Limiter(pause=shared.slot(0))
    assert limiter.paused_until(other) == 0.0  # another origin, same key: not paused
    asked = time.monotonic()
    with limiter.request(told):
        waited = time.monotonic() - asked
    assert 0.45 <= waited < 5.0
