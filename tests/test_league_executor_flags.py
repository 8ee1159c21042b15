"""Every ``league run`` executor flag is applied or refused in one line, never dropped.

``--workers 2 --concurrency 8`` once ran 8 threads and no process, and ``--address``
without ``--executor ray`` was ignored, both silently. Each combination here runs the
real ``arena`` command and reads its one line; the lines are written out by hand from
the rule (``EXECUTOR_FLAGS``): serial applies none of the three flags, thread
``--concurrency``, process ``--workers`` (its processes) and ``--concurrency`` (its
tables in flight, at least one per process; alone, its process count), ray
``--concurrency`` and ``--address``.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

POOL = ["--pool", "bayes,pressure", "--tables", "1", "--deals", "1"]


def league_run(tmp_path, *flags: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "arena.cli", "league", "run", *POOL, *flags,
         "--db", str(tmp_path / "l.sqlite")],
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip


REFUSED = {
    "--workers 3 --concurrency 2 (a process with no table)": (
        ["--workers", "3", "--concurrency", "2"],
        "--concurrency 2 is fewer than --workers 3: each worker process plays at least one"
        " table at a time",
    ),
    "--executor process --workers 2 --concurrency 1": (
        ["--executor", "process", "--workers", "2", "--concurrency", "1"],
        "--concurrency 1 is fewer than --workers 2: each worker process plays at least one"
        " table at a time",
    ),
    "--executor thread --address": (
        ["--executor", "thread", "--address", "127.0.0.1:6379"],
        "--address does nothing with --executor thread: it is for --executor ray",
    ),
    "--executor process --address": (
        ["--executor", "process", "--address", "127.0.0.1:6379"],
        "--address does nothing with --executor process: it is for --executor ray",
    ),
    "--executor serial --address": (
        ["--executor", "serial", "--address", "127.0.0.1:6379"],
        "--address does nothing with --executor serial: it is for --executor ray",
    ),
    "--workers --address (ray)": (
        ["--workers", "2", "--address", "127.0.0.1:6379"],
        "--workers does nothing with --executor ray: it is for --executor process",
    ),
    "--executor ray --workers": (
        ["--executor", "ray", "--workers", "2"],
        "--workers does nothing with --executor ray: it is for --executor process",
    ),
    "--executor thread --workers": (
        ["--executor", "thread", "--workers", "2"],
        "--workers does nothing with --executor thread: it is for --executor process",
    ),
    "--executor serial --workers": (
        ["--executor", "serial", "--workers", "2"],
        "--workers does nothing with --executor serial: it is for --executor process",
    ),
    "--executor serial --concurrency": (
        ["--executor", "serial", "--concurrency", "2"],
        "--concurrency does nothing with --executor serial: it is for --executor thread,"
        " process or ray",
    ),
}


@pytest.mark.parametrize("flags, line", REFUSED.values(), ids=REFUSED.keys())
def test_a_flag_the_executor_would_drop_is_one_line_and_nothing_is_played(tmp_path, flags, line):
    ran = league_run(tmp_path, *flags)
    assert (ran.returncode, ran.stderr) == (2, f"arena: error: {line}\n")
    assert not (tmp_path / "l.sqlite").exists()


APPLIED = {
    "--workers 2": ["--workers", "2"],
    "--executor process --concurrency 2": ["--executor", "process", "--concurrency", "2"],
    "--executor process --workers 2 --concurrency 2": [
        "--executor", "process", "--workers", "2", "--concurrency", "2",
    ],
    "--workers 2 --concurrency 5 (3 and 2 tables in threads)": [
        "--workers", "2", "--concurrency", "5",
    ],
    "--executor thread --concurrency 2": ["--executor", "thread", "--concurrency", "2"],
    "--concurrency 2": ["--concurrency", "2"],
    "--executor serial": ["--executor", "serial"],
}  # fmt: skip


@pytest.mark.parametrize("flags", APPLIED.values(), ids=APPLIED.keys())
def test_flags_the_executor_applies_play_the_league(tmp_path, flags):
    ran = league_run(tmp_path, *flags, "--json")
    assert ran.returncode == 0, ran.stderr
    assert '"episodesStored": 1' in ran.stdout
