"""A table's workers started while the arena gets ready: read from the command line,
handed to their seats, sent nothing of the table before, and ended when no seat came.

``arena-early`` is a real installed distribution written per test, with a ``RECORD``
(so its description is cached, as the early start needs). Its module leaves a marker
per import (``import-PID``) and per seat built (``seat-PID-SLOT``). Process isolation,
as root: each worker under its own uid writes the markers.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import attrs
import pytest
from installs import install, marker_directory

from arena.cli import main, startup
from arena.plugins import load
from arena.sandbox import early as sandbox_early
from arena.sandbox import remote
from arena.sandbox.launch import workers_left_behind
from arena.sandbox.policy import Limits, SandboxPolicy
from arena.sandbox.pool import StartedWorkers
from arena.sandbox.protocol import WorkerCode

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(os.geteuid() != 0, reason="markers need the workers' own uids"),
]

POLICY = SandboxPolicy("process", Limits(decision_seconds=5.0, start_seconds=30.0))
CODE = WorkerCode("arena-early", "1.0", (("early", "arena_early"),))
MODULE = '''"""arena-early: marks its import and each seat built."""

import os

from arena import hookimpl

MARKS = {marks!r}
open(os.path.join(MARKS, f"import-{{os.getpid()}}"), "w").close()


class Early:
    def __init__(self, context):
        open(os.path.join(MARKS, f"seat-{{os.getpid()}}-{{context.slot}}"), "w").close()

    def decide(self, view):
        if view.legal.can_challenge:
            return {{"action": "challenge"}}
        quantity, face = view.legal.min_bid
        return {{"action": "bid", "quantity": quantity, "face": face}}


@hookimpl
def register_seats(register):
    register("early", Early, description="TEST: marks its import and its seats")
'''
SETUP = {
    "name": "early", "privateSeed": 1, "arg": None, "talk": False, "seats": 4, "maxBids": 12,
    "mode": {"name": "dice", "symbols": [1, 2, 3, 4, 5, 6], "handSize": 5, "description": ""},
    "policies": ["early"] * 4,
}  # fmt: skip


@attrs.frozen
class Installed:
    site: Path
    marks: Path
    cache: Path

    def marked(self, kind: str) -> list[list[int]]:
        """The markers of ``kind`` (``import`` or ``seat``): the numbers in each name."""
        found = [m.name.split("-")[1:] for m in self.marks.iterdir() if m.name.startswith(kind)]
        return sorted([int(n) for n in numbers] for numbers in found)

    def env(self) -> dict[str, str]:
        return {"PYTHONPATH": str(self.site), "ARENA_CACHE_DIR": str(self.cache)}


@pytest.fixture
def early(tmp_path, monkeypatch):
    """``arena-early`` installed as pip installs it, under ``tmp_path/site``."""
    site = tmp_path / "site"
    site.mkdir()
    tmp_path.chmod(0o755)
    with marker_directory("arena-early-marks-") as marks:
        source = MODULE.format(marks=str(marks))
        install(site, "arena-early", {"arena_early": source}, {"early": "arena_early"}, record=True)
        monkeypatch.syspath_prepend(str(site))
        yield Installed(site, marks, tmp_path / "cache")


def wait_until(condition, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


# --- which process is the arena command, and what its command line names ---


@pytest.mark.parametrize(
    "argv, orig_argv, expected",
    [
        # python -m arena.cli: sys.argv[0] is "-m" while runpy imports the package
        (["-m", "play", "--seat", "x"],
         ["py", "-X", "dev", "-m", "arena.cli", "play", "--seat", "x"], ["play", "--seat", "x"]),
        (["-m", "play"], ["py", "-m", "pytest", "play"], None),  # another module named by -m
        (["/venv/bin/arena", "play"], ["/venv/bin/py", "/venv/bin/arena", "play"], ["play"]),
        (["/venv/bin/pytest", "-q"], ["/venv/bin/py", "/venv/bin/pytest", "-q"], None),
    ],
)  # fmt: skip
def test_only_the_arena_command_reads_its_arguments(monkeypatch, argv, orig_argv, expected):
    monkeypatch.setattr(sys, "argv", argv)
    monkeypatch.setattr(sys, "orig_argv", orig_argv)
    assert startup.arena_arguments() == expected


def test_a_play_command_line_is_read_for_its_seats_and_their_policy():
    read = startup.play_options(
        ["-vv", "--sandbox", "process", "play", "--seat", "a,b", "--deals", "1",
         "--seat=c:x", "--trust", "d"]
    )  # fmt: skip
    assert (read.verbose, read.sandbox, read.trust) == (2, "process", ["d"])
    assert read.seat == ["a,b", "c:x"]


@pytest.mark.parametrize(
    "arguments",
    [
        ["play", "--deals", "1"],  # no seat named: bayes plays them all
        ["compare", "--seat", "a"],  # not play
        ["--seat", "a", "league", "run"],
        ["play", "--seat"],  # no value: the command's own parse will say so
        ["play", "--trust"],
    ],
)
def test_no_workers_start_for_other_command_lines(arguments, capsys):
    assert startup.play_options(arguments) is None
    assert capsys.readouterr() == ("", "")  # the first read says nothing; the command's parse does


# --- the pool: started early, taken by the seat that would start the same worker ---


def test_a_seat_takes_the_worker_started_for_it_and_is_set_up_only_then(early, monkeypatch):
    pool = StartedWorkers()
    pool.start(POLICY, [CODE, CODE], remote.Worker)
    wait_until(lambda: len(early.marked("import")) == 2)
    early_pids = {pid for (pid,) in early.marked("import")}
    assert early.marked("seat") == []  # imported, and sent nothing of a table yet
    # Only exactly the worker a seat would start is taken: another entry point, other limits.
    assert pool.take(POLICY, attrs.evolve(CODE, entry_points=(("other", "arena_early"),))) is None
    assert pool.take(attrs.evolve(POLICY, limits=Limits(decision_seconds=1.0)), CODE) is None
    monkeypatch.setattr(remote, "EARLY_WORKERS", pool)
    seats = [remote.SandboxedSeat(POLICY, CODE, {**SETUP, "slot": slot}) for slot in (0, 1, 2)]
    try:
        for seat in seats:
            seat.ready()
        pids = [seat.worker.process.process.pid for seat in seats]
        # Seats 0 and 1 took the two early workers; seat 2 found none left and started its own.
        assert set(pids[:2]) == early_pids and pids[2] not in early_pids
        assert len(early.marked("import")) == 3
        assert early.marked("seat") == sorted([pid, slot] for slot, pid in enumerate(pids))
        assert len({seat.worker.process.uid for seat in seats}) == 3  # a uid of its own each
    finally:
        for seat in seats:
            seat.close()
        pool.close()


def test_workers_no_seat_took_are_ended(early):
    pool = StartedWorkers()
    pool.start(POLICY, [CODE], remote.Worker)
    wait_until(lambda: len(early.marked("import")) == 1)
    ((pid,),) = early.marked("import")
    pool.close()
    assert not Path(f"/proc/{pid}").exists()  # killed and reaped
    assert pool.take(POLICY, CODE) is None


@attrs.define
class PipeWorker:
    """A stand-in worker: its protocol pipe is one the test writes to, as a worker whose
    plugin has imported writes its first frame."""

    policy: SandboxPolicy
    code: WorkerCode
    from_worker: int
    to_signal: int
    closed: bool = False

    @property
    def process(self):
        return self

    def imported(self) -> None:
        os.write(self.to_signal, b"x")

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def two_cores(monkeypatch):
    """Pipe workers, launched into the returned list, on a machine of two cores."""
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    launched: list[PipeWorker] = []

    def launch(policy, code):
        launched.append(PipeWorker(policy, code, *os.pipe()))
        return launched[-1]

    yield launched, launch
    for worker in launched:
        os.close(worker.from_worker)
        os.close(worker.to_signal)


CODES = [attrs.evolve(CODE, version=str(n)) for n in range(4)]


def test_on_two_cores_two_start_at_once_and_each_other_once_one_has_imported(two_cores):
    launched, launch = two_cores
    pool = StartedWorkers()
    pool.start(POLICY, CODES, launch)
    assert [worker.code for worker in launched] == CODES[:2]
    time.sleep(0.2)
    assert len(launched) == 2  # the other two wait their turn
    launched[1].imported()
    wait_until(lambda: len(launched) == 3)
    time.sleep(0.2)
    assert [worker.code for worker in launched] == CODES[:3]
    launched[2].imported()
    wait_until(lambda: len(launched) == 4)
    assert launched[3].code == CODES[3]
    assert [pool.take(POLICY, code) for code in CODES] == launched


def test_a_seat_that_asks_before_its_turn_starts_its_own_and_it_is_not_started(two_cores):
    launched, launch = two_cores
    pool = StartedWorkers()
    pool.start(POLICY, CODES[:3], launch)
    assert pool.take(POLICY, CODES[2]) is None  # not started yet: the seat starts its own
    launched[0].imported()
    launched[1].imported()
    time.sleep(0.2)
    assert len(launched) == 2


def test_a_worker_started_in_its_turn_lives_to_play_its_seat(early, monkeypatch):
    # One core: the second worker is started by the pool's thread once the first has
    # imported, and a seat takes it as it takes one started at once.
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    pool = StartedWorkers()
    pool.start(POLICY, [CODE, CODE], remote.Worker)
    wait_until(lambda: len(early.marked("import")) == 2)
    time.sleep(0.5)
    monkeypatch.setattr(remote, "EARLY_WORKERS", pool)
    seats = [remote.SandboxedSeat(POLICY, CODE, {**SETUP, "slot": slot}) for slot in (0, 1)]
    try:
        for seat in seats:
            seat.ready()
        pids = {seat.worker.process.process.pid for seat in seats}
        assert {pid for (pid,) in early.marked("import")} == pids  # both taken, none new
        assert len(early.marked("seat")) == 2
    finally:
        for seat in seats:
            seat.close()
        pool.close()


def test_a_closed_pool_starts_no_more(two_cores):
    launched, launch = two_cores
    pool = StartedWorkers()
    pool.start(POLICY, CODES[:3], launch)
    pool.close()
    launched[0].imported()
    time.sleep(0.2)
    assert len(launched) == 2 and all(worker.closed for worker in launched)


@pytest.mark.parametrize(
    "environ, trust",
    [
        ({"ARENA_BLOCK_PLUGINS": "early"}, ()),  # blocked: imported nowhere, early or late
        ({"ARENA_LOAD_PLUGINS": "tally"}, ()),  # not allowed
        ({"ARENA_DISABLE_PLUGIN_AUTOLOAD": "1"}, ()),
        ({}, ("arena-early",)),  # trusted: the seat plays in-process, no worker
    ],
    ids=["blocked", "not-allowed", "no-autoload", "trusted"],
)
def test_the_early_start_holds_to_the_user_s_selection(early, monkeypatch, environ, trust):
    load({"ARENA_CACHE_DIR": str(early.cache)}, SandboxPolicy.choose({}, "process"))
    pool = StartedWorkers()
    monkeypatch.setattr(sandbox_early, "EARLY_WORKERS", pool)
    sandbox_early.start(
        ["early"], "process", trust, {"ARENA_CACHE_DIR": str(early.cache), **environ}
    )
    untrusting, trusting = (
        SandboxPolicy.choose({}, "process"),
        SandboxPolicy.choose({}, "process", trust),
    )
    assert pool.take(untrusting, CODE) is None and pool.take(trusting, CODE) is None
    sandbox_early.start(["early"], "process", (), {"ARENA_CACHE_DIR": str(early.cache)})
    taken = pool.take(untrusting, CODE)  # the control: no selection, one worker
    assert taken is not None
    taken.close()
    pool.close()


# --- the arena command ---


def test_arena_play_seats_the_workers_it_started_early_and_plays_as_without(
    early, tmp_path, monkeypatch
):
    # As the CLI does when it is the arena command: the first read starts the workers,
    # then the command runs. Here in this process, with a pool of the test's own.
    load({"ARENA_CACHE_DIR": str(early.cache)}, SandboxPolicy.choose({}, "process"))  # describe
    for mark in early.marks.iterdir():
        mark.unlink()
    monkeypatch.setenv("ARENA_CACHE_DIR", str(early.cache))
    pool = StartedWorkers()
    monkeypatch.setattr(remote, "EARLY_WORKERS", pool)
    monkeypatch.setattr(sandbox_early, "EARLY_WORKERS", pool)
    table = ["--sandbox", "process", "play", "--seat", "early,early,bayes,early",
             "--deals", "3", "--seed", "7"]  # fmt: skip
    startup.start_play_workers([*table, "--log", str(tmp_path / "early.jsonl")])
    wait_until(lambda: len(early.marked("import")) == 3)
    early_pids = {pid for (pid,) in early.marked("import")}
    assert early.marked("seat") == []  # started and imported; nothing of the table yet
    assert main([*table, "--log", str(tmp_path / "early.jsonl")]) == 0
    # The three sandboxed seats (slots 0, 1 and 3) sat in the three early workers: no
    # worker started after them, none left in the pool.
    assert {pid for (pid,) in early.marked("import")} == early_pids
    assert sorted(slot for pid, slot in early.marked("seat")) == [0, 1, 3]
    assert {pid for pid, slot in early.marked("seat")} == early_pids
    assert pool.take(SandboxPolicy.choose({}, "process"), CODE) is None
    # The same command with nothing started early plays the same episode, byte for byte.
    assert main([*table, "--log", str(tmp_path / "late.jsonl")]) == 0
    assert len(early.marked("import")) == 6
    assert (tmp_path / "early.jsonl").read_bytes() == (tmp_path / "late.jsonl").read_bytes()


def play(early: Installed, *args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "arena.cli", "--sandbox", "process", "play", *args]
    return subprocess.run(
        command, env=os.environ | early.env(), capture_output=True, text=True, timeout=300
    )


def test_the_arena_command_plays_its_early_workers_and_ends_them(early, tmp_path):
    load({"ARENA_CACHE_DIR": str(early.cache)}, SandboxPolicy.choose({}, "process"))
    for mark in early.marks.iterdir():
        mark.unlink()
    done = play(early, "--seat", "early,early", "--deals", "2", "--log", str(tmp_path / "l"))
    assert done.returncode == 0, done.stderr
    assert len(early.marked("import")) == 2  # one worker per seat, no describe, none spare
    assert sorted(slot for _, slot in early.marked("seat")) == [0, 1]
    assert workers_left_behind(group=os.getpgrp()) == []


PLAIN = """from arena import hookimpl


class Plain:
    def __init__(self, context):
        pass

    def decide(self, view):
        quantity, face = view.legal.min_bid or (None, None)
        if quantity is None:
            return {"action": "challenge"}
        return {"action": "bid", "quantity": quantity, "face": face}


@hookimpl
def register_seats(register):
    register("plain", Plain, description="TEST: the cheapest raise")
"""


@pytest.mark.skipif(not shutil.which("bwrap"), reason="bubblewrap not installed")
def test_on_one_core_a_worker_started_in_its_turn_plays_under_bubblewrap(tmp_path):
    # Bubblewrap kills its sandbox when the thread that started it ends: the pool's
    # thread, which starts the second worker here, must stay.
    site = tmp_path / "site"
    site.mkdir(parents=True)
    tmp_path.chmod(0o755)
    install(site, "arena-plain", {"arena_plain": PLAIN}, {"plain": "arena_plain"}, record=True)
    env = os.environ | {"PYTHONPATH": str(site), "ARENA_CACHE_DIR": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "arena.cli", "--sandbox", "bwrap", "play", "--deals", "2",
               "--seat", "plain,plain"]  # fmt: skip
    for _run in ("describing", "started early"):
        done = subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path,
            preexec_fn=lambda: os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "bayes played" not in done.stderr


def test_a_command_that_fails_before_its_table_leaves_no_worker_behind(early):
    # The first read starts a worker for the seat; the command's own parse then refuses
    # the mode, and the worker no seat took is ended as the arena exits.
    load({"ARENA_CACHE_DIR": str(early.cache)}, SandboxPolicy.choose({}, "process"))
    done = play(early, "--seat", "early", "--mode", "nosuchmode")
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1].startswith("arena: error: ")
    assert workers_left_behind(group=os.getpgrp()) == []


def test_a_distribution_not_yet_described_starts_nothing_early(early):
    done = play(early, "--seat", "early", "--deals", "1")  # cold cache: the table describes it
    assert done.returncode == 0, done.stderr
    # One describe and the seat's own worker; a worker started early would be a third.
    assert len(early.marked("import")) == 2
    assert len(early.marked("seat")) == 1


def test_the_early_start_imports_no_mode_view_or_rule_module():
    # The workers start once arena.sandbox.early has imported: the table's modules (the
    # modes, views and rules, with fractions) come after, while the workers start.
    table = ("arena.modes", "arena.view", "arena.rules", "arena.actions", "arena.sandbox.views")
    probe = f"import sys, arena.sandbox.early; print([m for m in {table!r} if m in sys.modules])"
    found = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert found.stdout.strip() == "[]"
