"""A league survives its workers dying; a table's own error stops it in one line.

The faults are real: ``kill -9`` of a ``--workers`` process while the league's
own ``arena`` process runs, and Ctrl-C sent to the league's process group (as a
terminal sends it) while it is still starting. A table whose worker died is
played again, from the same seed, by a new worker: the league's standings are
then the bytes of an unbroken serial run, with every episode stored once. (The
Ray executor's faults are in tests/test_league_ray.py.)
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from multiprocessing.context import SpawnProcess
from pathlib import Path

import attrs
import pytest
from league_runs import league_process

from arena.league.config import Entrant, LeagueSpec
from arena.league.executors import RETRIES, ExecutorFailed, Processes, Serial
from arena.league.schedule import fixtures
from arena.limits import Limits
from arena.runner import EpisodeRequest, SetupError
from arena.seats import SeatSpec

pytestmark = pytest.mark.slow

# 16 episodes of 200 deals on the Python engine, about half a second each here: long
# enough that a worker is killed mid-table (the compiled engine would be done at once).
SLOW = ["--pool", "bayes,pressure,random,bayes", "--tables", "4", "--duplicate"]
SLOW += ["--deals", "200", "--engine", "python", "--seed", "3"]
EPISODES = 4 * 4


def arena(*args: str, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "arena.cli", *args], capture_output=True, text=True, env=env
    )


def stored(db) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.1) as conn:
            return conn.execute("SELECT COUNT(*) FROM episodes").fetchone()[0]
    except sqlite3.OperationalError:  # not created yet, or locked for a moment
        return 0


def indexes(db) -> list[int]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return [idx for (idx,) in conn.execute("SELECT idx FROM episodes ORDER BY idx")]


def worker_pids(parent: int) -> list[int]:
    """The spawned worker processes of ``parent`` (not its resource tracker)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == parent and b"spawn_main" in cmdline:
            found.append(int(pid))
    return sorted(found)


@pytest.fixture(scope="module")
def serial_standings(tmp_path_factory) -> str:
    db = tmp_path_factory.mktemp("serial") / "serial.sqlite"
    ran = arena("league", "run", *SLOW, "--executor", "serial", "--db", str(db), "--json")
    assert ran.returncode == 0, ran.stderr
    return ran.stdout


@pytest.mark.parametrize(
    "flags",
    [["--workers", "2"], ["--workers", "2", "--concurrency", "5"]],
    ids=["a table each", "tables in threads"],
)
def test_a_worker_killed_mid_league_is_replaced_and_the_standings_are_serials(
    tmp_path, serial_standings, flags
):
    db = tmp_path / "killed.sqlite"
    proc = league_process(db, *SLOW, *flags)
    try:
        deadline = time.monotonic() + 60
        while stored(db) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        victims = worker_pids(proc.pid)
        assert proc.poll() is None and len(victims) == 2, "the league ended before the kill"
        before = stored(db)
        os.kill(victims[0], signal.SIGKILL)
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert before < EPISODES  # the kill came before the league was done
    assert out == serial_standings
    # Every episode once: the killed worker's tables were played again, not twice stored.
    assert indexes(db) == list(range(EPISODES))
    assert "Traceback" not in err


def spec_of(*seats: str, deals: int = 200) -> LeagueSpec:
    return LeagueSpec(
        entrants=tuple(Entrant(f"e{n}", SeatSpec.parse(s)) for n, s in enumerate(seats)),
        tables=1,
        table=EpisodeRequest(deals=deals, engine="python"),
    )


def test_a_table_whose_workers_keep_dying_stops_the_league_in_one_line(host):
    """RETRIES new workers for one table, then a one-line :class:`ExecutorFailed`."""
    fixture = next(fixtures(spec_of("bayes", "pressure", "random", "bayes", deals=5000)))
    pool = Processes(1, Limits())
    try:
        pool.submit(fixture)
        error = None
        for _ in range(RETRIES + 1):
            (process,) = pool.workers.values()
            time.sleep(0.3)  # the worker has started and is playing the table
            process.kill()
            try:
                assert list(pool.collect(10)) == []  # the dead worker's table yields nothing
            except ExecutorFailed as exc:
                error = exc
        assert error is not None and pool.restarts[fixture.index] == RETRIES + 1
        assert str(error).startswith(f"table {fixture.table}: its worker process died 4 times")
        assert "\n" not in str(error)
    finally:
        pool.close()


def test_a_worker_that_died_waiting_for_work_is_replaced_when_work_comes(host):
    """Killed idle, its pipe is broken: the next fixture goes to a new worker, which plays
    it as serial play does (the same results text)."""
    fixture = next(fixtures(spec_of("bayes", "pressure", "random", "bayes", deals=3)))
    serial = Serial(host)
    serial.submit(fixture)
    (here,) = serial.collect(1)
    pool = Processes(1, Limits())
    try:
        (process,) = pool.workers.values()
        process.kill()
        process.join(5)
        pool.submit(fixture)
        arrived = []
        deadline = time.monotonic() + 60
        while not arrived and time.monotonic() < deadline:
            arrived = list(pool.collect(1))
        assert [played[2] for played in arrived] == [here[2]]
        assert pool.restarts == {fixture.index: 1}
    finally:
        pool.close()


def test_a_tables_own_error_in_a_worker_is_the_error_serial_raises(host):
    """A seat that cannot start fails the table once, with the exception serial play
    raises (the CLI's one ``arena: error:`` line), and is not played again."""
    good = spec_of("bayes", "pressure", "random", "bayes", deals=3)
    fixture = next(fixtures(good))
    broken = attrs.evolve(
        fixture,
        request=attrs.evolve(
            fixture.request, seat_specs=(*fixture.request.seat_specs[:3], SeatSpec.parse("bayes:b"))
        ),
    )
    serial = Serial(host)
    serial.submit(broken)
    with pytest.raises(SetupError) as here:
        list(serial.collect(1))
    pool = Processes(1, Limits())
    try:
        pool.submit(broken)
        deadline = time.monotonic() + 30
        with pytest.raises(SetupError) as there:
            while time.monotonic() < deadline:
                list(pool.collect(1))
        assert str(there.value) == str(here.value)
        assert str(here.value) == "seat 3 (bayes:b): seat 'bayes' takes no argument (got 'b')"
        assert pool.restarts == {}
    finally:
        pool.close()


def test_an_unplayable_entrant_is_refused_before_any_worker_plays(tmp_path):
    """The README's old example: one line, exit 2, nothing stored, under every executor."""
    pool = ["--pool", "bayes,pressure,random,bayes:b", "--tables", "2", "--deals", "3"]
    for executor, flags in (("serial", []), ("thread", ["--concurrency", "2"]),
                            ("process", ["--workers", "2"])):  # fmt: skip
        db = tmp_path / f"{executor}.sqlite"
        ran = arena("league", "run", *pool, "--executor", executor, *flags, "--db", str(db))
        assert ran.returncode == 2
        assert ran.stderr.strip().splitlines() == [
            "arena: error: entrant 'bayes:b': seat 'bayes' takes no argument (got 'b')"
        ]
        assert stored(db) == 0


def importing_the_arena(pid: int) -> bool:
    """Whether ``pid`` is past Python's own start, into the arena's imports: it has mapped
    orjson, which only the arena's modules import (Python prints its own traceback for a
    Ctrl-C in its first tens of milliseconds, before any code of ours can run)."""
    try:
        return "orjson" in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


def test_a_ctrl_c_while_a_worker_process_starts_is_taken_once_it_has(monkeypatch):
    """The Ctrl-C lands in the middle of starting a worker process: it is held back, not
    ignored, and raised once the worker is started, which the pool then ends. (Ignoring
    Ctrl-C for the while lost it: the league played on.)"""
    start = SpawnProcess.start

    def start_with_ctrl_c(process):
        os.kill(os.getpid(), signal.SIGINT)  # a terminal's Ctrl-C, arriving right now
        start(process)
        started.append(process)
        # the worker is born with it blocked: a Ctrl-C while it imports prints nothing
        # (it ignores Ctrl-C, then unblocks it, only once it has imported the arena)
        status = Path(f"/proc/{process.pid}/status").read_text()
        (blocked,) = (int(line.split()[1], 16) for line in status.splitlines() if "SigBlk" in line)
        assert blocked & 1 << signal.SIGINT - 1, status

    started: list[SpawnProcess] = []
    monkeypatch.setattr(SpawnProcess, "start", start_with_ctrl_c)
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)  # as main() has it
    try:
        with pytest.raises(KeyboardInterrupt):
            Processes(2, Limits())
        assert len(started) == 1  # taken right after the first worker, not later
        started[0].join(10)  # ended by the pool, so that no worker outlives the league
        assert started[0].exitcode == -signal.SIGKILL
    finally:
        signal.signal(signal.SIGINT, handler)
        for process in started:
            process.kill()


def test_ctrl_c_while_a_workers_league_starts_prints_one_line(tmp_path):
    """Ctrl-C to the process group at a random moment of the first quarter second of the
    arena's code, ten times: never a KeyboardInterrupt traceback, from the league or its
    workers, and always the one line and exit code 130."""
    chooser = random.Random(22)
    for attempt in range(10):
        proc = league_process(tmp_path / f"c{attempt}.sqlite", *SLOW, "--workers", "2")
        try:
            deadline = time.monotonic() + 30
            while not importing_the_arena(proc.pid) and time.monotonic() < deadline:
                time.sleep(0.001)
            time.sleep(chooser.uniform(0, 0.25))
            os.killpg(proc.pid, signal.SIGINT)
            _, err = proc.communicate(timeout=30)
        finally:
            proc.kill()
        assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
        assert proc.returncode == 130, err
        assert err.strip().splitlines()[-1:] == ["arena: interrupted"], err


INTERRUPTED_PROBE = '''
import ctypes
import sys

sys.argv = ["arena", "plugins"]  # this process is the arena command
import arena.cli
from arena.cli import running


def interrupted(args):
    """A Ctrl-C landing in code CPython runs through PyRun_String: it marks the
    interrupt as unhandled for its own exit, whoever catches it afterwards."""
    run = ctypes.pythonapi.PyRun_String
    run.restype = ctypes.py_object
    run.argtypes = (ctypes.c_char_p, ctypes.c_int, ctypes.py_object, ctypes.py_object)
    run(b"raise KeyboardInterrupt", 257, {}, {})  # 257: Py_file_input


running.load_for_command = interrupted
sys.exit(arena.cli.main())
'''


def test_an_interrupt_the_arena_handled_exits_130_whatever_cpython_noted(tmp_path):
    """``arena: interrupted`` is followed by exit code 130, never by a death by SIGINT.
    Run as ``python -m``, CPython's own exit re-raised SIGINT (-2) for an interrupt that
    passed through a ``PyRun_*`` call, though the arena caught it and said so (2 of 300
    Ctrl-Cs at a league's start did); the command now leaves at once once it has said
    so (``arena.cli.startup.leave_interrupted``)."""
    (tmp_path / "interrupt_probe.py").write_text(INTERRUPTED_PROBE)
    done = subprocess.run(
        [sys.executable, "-m", "interrupt_probe"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stderr == "arena: interrupted\n"
    assert done.returncode == 130
