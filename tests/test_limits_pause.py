"""The league's pause deadline: the largest any seat was told, seen by every process.

tests/test_limits_league_pause.py shows whole leagues pausing on the loopback API;
these pin the deadline's own rules, with real spawned processes where it is shared.
"""

from __future__ import annotations

import multiprocessing
import time

import pytest

from arena.limits import Limiter, Pause, SharedPause


@pytest.mark.parametrize("board", [Pause(), SharedPause(2).slot(0)], ids=["Pause", "SharedPause"])
def test_a_shorter_wait_never_shortens_the_pause(board):
    board.extend(1000.0)
    board.extend(10.0)  # a later 429 asking less: the first one's time still holds
    assert board.until() == 1000.0


def test_every_workers_deadline_counts_and_none_overwrites_another():
    shared = SharedPause(3)
    shared.slot(0).extend(50.0)
    shared.slot(2).extend(70.0)
    shared.slot(1).extend(60.0)
    assert shared.until() == 70.0  # the largest of 50, 60 and 70


def _told_to_wait(pause: SharedPause, until: float) -> None:
    pause.extend(until)


def test_a_deadline_set_in_a_spawned_worker_is_read_by_another_process():
    context = multiprocessing.get_context("spawn")
    shared = SharedPause(2, context)
    until = time.time() + 3600.0
    worker = context.Process(target=_told_to_wait, args=(shared.slot(1), until))
    worker.start()
    worker.join(timeout=60)
    assert worker.exitcode == 0
    assert shared.slot(0).until() == until


def test_a_limiter_holds_its_next_request_until_the_shared_deadline():
    shared = SharedPause(2)
    limiter = Limiter(pause=shared.slot(0))
    shared.slot(1).extend(time.time() + 0.5)  # the other worker was told to wait 0.5 s
    asked = time.monotonic()
    with limiter.request():
        waited = time.monotonic() - asked
    assert 0.45 <= waited < 5.0
