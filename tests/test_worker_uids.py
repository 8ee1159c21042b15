"""Worker uids: a block per arena process, held by a lock, so no two arenas share one.

As root only: without root there are no worker uids (workers run as the user).
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import subprocess
import sys
import time

import pytest

from arena.sandbox import launch
from arena.sandbox.launch import (
    UID_BASE,
    UIDS_PER_ARENA,
    UidBlock,
    WorkerProcess,
    block_is_held,
    block_start,
    kill_together,
    live_processes_of,
    workers_left_behind,
)
from arena.sandbox.policy import SandboxPolicy

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(os.geteuid() != 0, reason="worker uids exist only as root"),
]


def _claim(queue) -> None:
    uids = UidBlock()
    first = uids.next_uid()
    queue.put((first, uids.next_uid(), block_is_held((first - UID_BASE) // UIDS_PER_ARENA)))
    time.sleep(1.0)  # hold the block while the other process claims


def test_two_processes_hold_different_blocks_and_count_up_within_them():
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    processes = [context.Process(target=_claim, args=(queue,)) for _ in range(2)]
    for process in processes:
        process.start()
    (a, a_next, a_held), (b, b_next, b_held) = queue.get(timeout=60), queue.get(timeout=60)
    for process in processes:
        process.join(timeout=60)
    # each starts its own block at its start and counts up: uid, uid + 1
    assert (a_next - a, b_next - b) == (1, 1)
    assert (a - UID_BASE) % UIDS_PER_ARENA == 0 and (b - UID_BASE) % UIDS_PER_ARENA == 0
    assert a != b and a_held and b_held
    # the lock died with its process: both blocks are free again
    assert not block_is_held((a - UID_BASE) // UIDS_PER_ARENA)


def test_a_forked_child_claims_a_block_of_its_own():
    uids = UidBlock()
    mine = uids.next_uid()
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # the child: its inherited counter is its parent's, so it must not use it
        os.close(read)
        os.write(write, str(uids.next_uid()).encode())
        os._exit(0)
    os.close(write)
    theirs = int(os.read(read, 64))
    os.close(read)
    os.waitpid(child, 0)
    assert (theirs - UID_BASE) // UIDS_PER_ARENA != (mine - UID_BASE) // UIDS_PER_ARENA
    assert theirs in range(UID_BASE, block_start(launch.UID_BLOCKS))


def _sleep_as(uids: tuple[int, ...]) -> list[subprocess.Popen]:
    """One ``sleep`` per uid, returned once each has switched to its uid.

    ``setpriv`` runs as root until it drops to the uid, so a scan made before then would not
    count the sleeper at all: on a loaded machine the second may switch before the first.
    """
    sleepers = [
        subprocess.Popen(
            ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "sleep", "30"]
        )  # fmt: skip
        for uid in uids
    ]
    pids = {sleeper.pid for sleeper in sleepers}
    deadline = time.monotonic() + 10
    while not pids <= set(live_processes_of(set(uids).__contains__)):
        if time.monotonic() > deadline:
            for sleeper in sleepers:
                sleeper.kill()
            raise AssertionError(f"the sleepers did not switch to uids {uids} within 10 s")
        time.sleep(0.02)
    return sleepers


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv")
def test_a_worker_of_a_block_nobody_holds_is_left_behind_and_one_of_a_held_block_is_not():
    held = UidBlock()
    ours = held.next_uid()
    free = next(block for block in range(launch.UID_BLOCKS - 1, -1, -1) if not block_is_held(block))
    sleepers = _sleep_as((ours, block_start(free)))
    try:
        left = workers_left_behind()
        assert sleepers[1].pid in left  # its block's arena is gone: a leftover
        assert sleepers[0].pid not in left  # ours: this live process holds its block
    finally:
        for sleeper in sleepers:
            sleeper.kill()
            sleeper.wait()


CLAIM = "from arena.sandbox.launch import WORKER_UIDS; print(WORKER_UIDS.next_uid())"


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv")
def test_left_behind_by_this_process_group_is_told_from_left_behind_by_another():
    # Two arenas claim a block each and end: one of this process group, one in a session
    # of its own (another user's arena, as far as this test can tell).
    claim = [sys.executable, "-c", CLAIM]
    ours = int(subprocess.run(claim, capture_output=True, text=True, check=True).stdout)
    theirs = int(
        subprocess.run(
            claim, capture_output=True, text=True, check=True, start_new_session=True
        ).stdout
    )
    sleepers = _sleep_as((ours, theirs))
    try:
        assert {s.pid for s in sleepers} <= set(workers_left_behind())
        mine = workers_left_behind(group=os.getpgrp())
        assert sleepers[0].pid in mine and sleepers[1].pid not in mine
    finally:
        for sleeper in sleepers:
            sleeper.kill()
            sleeper.wait()


CHASERS = """
import contextlib, os
for _ in range(3):
    if os.fork() == 0:
        os.setsid()
        try:
            while True:
                with contextlib.suppress(OSError):
                    if os.fork() != 0:
                        break
        finally:
            os._exit(0)
"""


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv")
def test_an_ended_workers_uid_is_killed_even_where_no_scan_sees_its_processes():
    # Three daemons under the worker's uid that fork away from their pid at every moment,
    # with no process limit to slow them: most scans of /proc see none of them (3 in 4
    # here), so a kill that looked first mostly found nothing to kill and left them.
    worker = WorkerProcess(SandboxPolicy("process"))
    uid = worker.uid
    python = shutil.which("python3", path="/usr/bin:/bin")  # one the worker's uid may run
    as_uid = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
    subprocess.run([*as_uid, python, "-c", CHASERS], check=True)
    try:
        worker.kill()
        for _look in range(40):
            assert live_processes_of(lambda owner: owner == uid) == []
            time.sleep(0.01)
    finally:  # were they missed, end them as the arena would not have
        subprocess.run([*as_uid, "/bin/sh", "-c", "kill -s KILL -- -1"], check=False)


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv")
def test_workers_ended_together_leave_no_process_of_any_of_their_uids():
    # A daemon under each worker's uid, outside its worker's process group: only the
    # kill of every uid ends them.
    workers = [WorkerProcess(SandboxPolicy("process")) for _ in range(3)]
    uids = {worker.uid for worker in workers}
    sleepers = _sleep_as(tuple(uids))
    try:
        kill_together(workers)
        assert live_processes_of(uids.__contains__) == []
        assert all(worker.process.returncode is not None for worker in workers)
        assert {(w.to_worker, w.from_worker, w.output) for w in workers} == {(-1, -1, -1)}
    finally:
        for sleeper in sleepers:
            sleeper.kill()
            sleeper.wait()


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv")
def test_a_uid_whose_kill_did_not_run_as_it_is_killed_pid_by_pid(monkeypatch):
    worker = WorkerProcess(SandboxPolicy("process"))
    (sleeper,) = _sleep_as((worker.uid,))
    monkeypatch.setattr(launch, "_KILL_EVERY_PROCESS_OF_MINE", ["/bin/false"])
    try:
        worker.kill()
        assert live_processes_of(lambda owner: owner == worker.uid) == []
    finally:
        sleeper.kill()
        sleeper.wait()
