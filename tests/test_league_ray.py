"""The Ray executor on a real local Ray instance: the same standings as serial, nothing left behind.

Ray takes seconds to start, so this is one league, run once through the CLI
(which starts a local instance with 2 CPUs, no dashboard, and stops it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="the ray extra is not installed (pip install '.[ray]')")

POOL = ["--pool", "bayes,pressure,random,bayes", "--tables", "3", "--duplicate", "--deals", "8"]


def arena(*args: str, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "arena.cli", *args], capture_output=True, text=True, env=env
    )


def processes_using(path: str) -> list[str]:
    """Command lines of running processes that mention ``path`` (Ray's session dir)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if path in cmdline:
            found.append(f"{pid}: {cmdline[:120]}")
    return found


def test_ray_tables_give_the_serial_standings_and_leave_no_ray_behind(tmp_path):
    serial = arena("league", "run", *POOL, "--db", str(tmp_path / "serial.sqlite"), "--json")
    assert serial.returncode == 0, serial.stderr
    # A short private temp dir: Ray's sockets live under it, and it marks its processes.
    ray_dir = tempfile.mkdtemp(prefix="ray", dir="/tmp")
    try:
        env = os.environ | {"RAY_TMPDIR": ray_dir}
        ray_db = str(tmp_path / "ray.sqlite")
        ran = arena("league", "run", *POOL, "--db", ray_db, "--executor", "ray",
                    "--concurrency", "2", "--json", env=env)  # fmt: skip
        assert ran.returncode == 0, ran.stderr
        assert ran.stdout == serial.stdout
        assert processes_using(ray_dir) == []
    finally:
        shutil.rmtree(ray_dir, ignore_errors=True)
