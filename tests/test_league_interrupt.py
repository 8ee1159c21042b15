"""A league stopped at any point (Ctrl-C, kill -9, a full disk) resumes to the same standings.

Each stop is real: the league runs as its own ``arena`` process (in its own
process group, as a terminal runs it), and the signal goes to the whole group,
workers included, the way Ctrl-C and ``kill -9`` of a job do.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
import structlog
from league_runs import league_process
from messages_server import MessagesServer, table_player

from arena.cli import main

pytestmark = pytest.mark.slow

POOL = "bayes,pressure,random,bayes"
# Long enough that a signal sent once some episodes are stored lands mid-league: 48
# episodes of 200 deals on the Python engine (the compiled one would finish the league in
# milliseconds; the standings are the same bytes either way).
SCRIPTED = ["--pool", POOL, "--tables", "12", "--duplicate", "--deals", "200", "--seed", "3"]
SCRIPTED += ["--engine", "python"]
EPISODES = 12 * 4


def league(tmp_path, db, *args, env=None) -> subprocess.Popen:
    return league_process(db, *args, cwd=tmp_path, stdout=subprocess.DEVNULL, env=env)


def stored(db) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.1) as conn:
            return conn.execute("SELECT COUNT(*) FROM episodes").fetchone()[0]
    except sqlite3.OperationalError:  # not created yet, or locked by the writer for a moment
        return 0


def stop_when_stored(proc, db, episodes: int, how: int) -> float:
    """Send ``how`` to the league's process group once ``episodes`` are stored; the
    seconds it then took to exit."""
    deadline = time.monotonic() + 60
    while stored(db) < episodes and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert proc.poll() is None, "the league ended before it could be stopped"
    sent = time.monotonic()
    os.killpg(proc.pid, how)
    proc.wait(timeout=30)
    return time.monotonic() - sent


def standings(capsys, db, *extra) -> str:
    """Resume (or just run) the league in this process and return its JSON report."""
    capsys.readouterr()
    code = main(["league", "run", "--db", str(db), "--json", *SCRIPTED, *extra])
    out, err = capsys.readouterr()
    structlog.reset_defaults()
    assert code == 0, err
    return out


@pytest.fixture(scope="module")
def whole(tmp_path_factory):
    """The uninterrupted league's report."""
    db = tmp_path_factory.mktemp("whole") / "whole.sqlite"
    proc = subprocess.run(
        [sys.executable, "-m", "arena.cli", "league", "run", "--db", str(db), "--json", *SCRIPTED],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


EXECUTORS = {
    "thread": ["--executor", "thread", "--concurrency", "4"],
    "process": ["--executor", "process", "--concurrency", "4"],
    # processes playing tables in threads: 2 workers, 3 tables at once each
    "process-threads": ["--executor", "process", "--workers", "2", "--concurrency", "6"],
}


@pytest.mark.parametrize(
    "executor, episodes",
    [("thread", 1), ("thread", 12), ("process", 1), ("process", 16)]
    + [("process-threads", 1), ("process-threads", 16)],
)
def test_ctrl_c_stops_within_2_s_with_one_line_and_resumes(
    tmp_path, capsys, whole, executor, episodes
):
    db = tmp_path / "l.sqlite"
    proc = league(tmp_path, db, *SCRIPTED, *EXECUTORS[executor])
    took = stop_when_stored(proc, db, episodes, signal.SIGINT)
    assert proc.returncode == 130
    assert proc.stderr.read().strip() == "arena: interrupted"
    assert took < 2.0
    assert episodes <= stored(db) < EPISODES
    assert standings(capsys, db) == whole


@pytest.mark.parametrize(
    "executor, episodes", [("thread", 6), ("process", 10), ("process-threads", 10)]
)
def test_kill_9_leaves_a_consistent_file_that_resumes(tmp_path, capsys, whole, executor, episodes):
    db = tmp_path / "l.sqlite"
    proc = league(tmp_path, db, *SCRIPTED, *EXECUTORS[executor])
    stop_when_stored(proc, db, episodes, signal.SIGKILL)
    with sqlite3.connect(db) as conn:  # every stored episode is whole: seats and log with it
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        counts = conn.execute(
            "SELECT COUNT(*), (SELECT COUNT(DISTINCT idx) FROM seats),"
            " (SELECT COUNT(*) FROM logs) FROM episodes"
        ).fetchone()
    assert counts[0] == counts[1] == counts[2] >= episodes
    assert standings(capsys, db) == whole


def test_ctrl_c_with_claude_tables_waiting_on_the_network(tmp_path, monkeypatch):
    # 8 tables of 4 Claude seats in threads, each request answered after 0.3 s:
    # the stop must not wait for the requests in flight.
    with MessagesServer(table_player(), latency=0.3) as server:
        env = os.environ | {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": server.url}
        args = ["--pool", "claude:honest,claude:bluffer,claude:tracker,claude:policies/honest.md"]
        db = tmp_path / "l.sqlite"
        proc = league(tmp_path, db, *args, "--tables", "8", "--concurrency", "8", env=env)
        deadline = time.monotonic() + 60
        while len(server.requests) < 16 and time.monotonic() < deadline:
            time.sleep(0.02)
        sent = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=30)
        took = time.monotonic() - sent
    assert proc.returncode == 130
    assert proc.stderr.read().strip() == "arena: interrupted"
    assert took < 2.0


@pytest.fixture
def small_disk(tmp_path):
    """A 192 KiB tmpfs: a real full disk (needs root, as CI runs)."""
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=192k", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {done.stderr.decode().strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_gives_one_line_and_a_resumable_file(tmp_path, small_disk, capsys, whole):
    db = small_disk / "l.sqlite"
    capsys.readouterr()
    code = main(["league", "run", "--db", str(db), "--json", *SCRIPTED, "--deals", "150"])
    out, err = capsys.readouterr()
    structlog.reset_defaults()
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "database or disk is full" in lines[0], err
    assert lines[0].startswith("arena: error: ") and "resumable" in lines[0]
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        kept = conn.execute("SELECT COUNT(*) FROM episodes").fetchone()[0]
    assert 0 < kept < EPISODES
    # Room again (the tmpfs grows), and the same file carries on where it stopped.
    subprocess.run(["mount", "-o", "remount,size=4m", str(small_disk)], check=True)
    resumed = standings(capsys, db, "--deals", "150")
    fresh = standings(capsys, tmp_path / "fresh.sqlite", "--deals", "150")
    assert resumed == fresh
