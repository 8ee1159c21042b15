"""The describe cache, and third-party workers under concurrent tables and arenas.

``arena-tally`` is a real installed distribution written per test, with a
``RECORD`` as pip writes one: a seat ``tally`` and a talk filter ``shout`` that
upper-cases lines. Its module writes a marker file at import (the importing
pid), so a test sees whether describing imported it again. Process isolation, as
root: the workers' uids write the markers.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
import zlib
from pathlib import Path

import installs
import pytest

from arena.plugins import load
from arena.sandbox.describe import CACHE_FORMAT, DescriptionCache
from arena.sandbox.launch import own_worker_uids, workers_left_behind
from arena.sandbox.policy import Limits, SandboxPolicy

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(os.geteuid() != 0, reason="markers need the workers' own uids"),
]

LIMITS = Limits(decision_seconds=5.0, start_seconds=10.0)
MODULE = '''"""arena-tally: marks each import; a seat that calls, a filter that shouts."""

import os

from arena import hookimpl

with open(os.path.join({markers!r}, str(os.getpid())), "w"):
    pass


class Tally:
    def __init__(self, context):
        pass

    def decide(self, view):
        if view.legal.can_challenge:
            return {{"action": "challenge", "say": "i call"}}
        quantity, face = view.legal.min_bid
        return {{"action": "bid", "quantity": quantity, "face": face, "say": "a bid"}}


@hookimpl
def register_seats(register):
    register("tally", Tally, description="TEST: {version}")


@hookimpl
def register_talk_filters(register):
    register("shout", lambda text, speaker: text.upper())
'''


def install(root: Path, markers: Path, version: str = "one") -> None:
    """``arena-tally`` as pip installs it: the module, METADATA, entry points, RECORD."""
    source = MODULE.format(markers=str(markers), version=version)
    installs.install(
        root, "arena-tally", {"arena_tally": source}, {"tally": "arena_tally"}, record=True
    )


@pytest.fixture
def tally(tmp_path, monkeypatch):
    """``arena-tally`` installed under ``tmp_path/site``; yields (site, markers, cache)."""
    site = tmp_path / "site"
    site.mkdir()
    tmp_path.chmod(0o755)
    with installs.marker_directory("arena-tally-markers-") as markers:
        install(site, markers)
        monkeypatch.syspath_prepend(str(site))
        monkeypatch.setenv("PYTHONPATH", str(site))
        yield site, markers, tmp_path / "cache"


def imported(markers: Path) -> int:
    """How many processes imported the module since the last call."""
    found = list(markers.iterdir())
    for marker in found:
        marker.unlink()
    return len(found)


def loaded(cache: Path, isolation: str = "process", **environ: str):
    return load({"ARENA_CACHE_DIR": str(cache), **environ}, SandboxPolicy(isolation, LIMITS))


def test_an_unchanged_distribution_is_described_once(tally):
    site, markers, cache = tally
    first = loaded(cache)
    assert imported(markers) == 1 and first.registry.seat("tally").description == "TEST: one"
    again = loaded(cache)
    assert imported(markers) == 0  # read from the cache: no worker imported it
    assert again.registry.seat("tally").description == "TEST: one"
    assert again.registry.seat("tally").code == first.registry.seat("tally").code
    assert len(list((cache / "describe").glob("*.json"))) == 1


def test_new_code_is_never_read_from_an_old_description(tally):
    site, markers, cache = tally
    loaded(cache)
    imported(markers)
    # The same size and RECORD text would not do: the file's mtime is part of the key.
    module = site / "arena_tally.py"
    module.write_text(module.read_text().replace("TEST: one", "TEST: two"))
    os.utime(module, ns=(time.time_ns(), time.time_ns() + 10**9))
    assert loaded(cache).registry.seat("tally").description == "TEST: two"
    assert imported(markers) == 1
    # A reinstall (a new RECORD) and another isolation are other keys, too.
    install(site, markers, version="three")
    assert loaded(cache).registry.seat("tally").description == "TEST: three"
    assert imported(markers) == 1
    loaded(cache, "bwrap")
    assert imported(markers) == 0  # under bubblewrap the worker's /tmp is its own...
    assert len(list((cache / "describe").glob("*.json"))) == 4  # ...but it was described


def test_a_selection_is_part_of_the_key(tally):
    site, markers, cache = tally
    loaded(cache)
    imported(markers)
    blocked = loaded(cache, ARENA_BLOCK_PLUGINS="tally")
    assert imported(markers) == 0 and "tally" not in blocked.registry.seats
    assert "tally" in loaded(cache).registry.seats and imported(markers) == 0


def test_a_corrupt_or_foreign_cache_file_is_described_again(tally):
    site, markers, cache = tally
    loaded(cache)
    imported(markers)
    (entry,) = (cache / "describe").glob("*.json")
    entry.write_text("{not json")
    assert "tally" in loaded(cache).registry.seats and imported(markers) == 1
    entry.write_text(json.dumps({"a": "dict, not a list"}))
    assert "tally" in loaded(cache).registry.seats and imported(markers) == 1
    entry.write_text(json.dumps([{"name": "tally", "seats": "not a list"}]))
    assert "tally" in loaded(cache).registry.seats and imported(markers) == 1
    # each time, the description made afresh replaced the corrupt one
    assert loaded(cache).registry.seat("tally").description == "TEST: one"
    assert imported(markers) == 0


def test_an_editable_install_or_one_without_record_is_described_every_time(tally):
    site, markers, cache = tally
    info = site / "arena_tally-1.0.dist-info"
    (info / "direct_url.json").write_text(
        json.dumps({"url": "file:///x", "dir_info": {"editable": True}})
    )
    loaded(cache)
    loaded(cache)
    assert imported(markers) == 2
    (info / "direct_url.json").unlink()
    (info / "RECORD").unlink()
    loaded(cache)
    loaded(cache)
    assert imported(markers) == 2
    assert not (cache / "describe").exists() or not list((cache / "describe").glob("*.json"))


def test_no_cache_directory_means_no_cache():
    assert DescriptionCache.at({"ARENA_CACHE_DIR": ""}).directory is None
    at = DescriptionCache.at({"XDG_CACHE_HOME": "/x"}).directory
    assert at == Path("/x/liars-arena/describe") and CACHE_FORMAT >= 1


# --- concurrency and identity ----------------------------------------------------------------


def arena(*args: str, env: dict[str, str]) -> subprocess.Popen:
    command = [sys.executable, "-m", "arena.cli", "--sandbox", "process", *args]
    return subprocess.Popen(
        command, env=os.environ | env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_a_league_of_concurrent_tables_shares_a_filter_safely(tally, tmp_path):
    # Eight tables in flight on threads, each with talk on: every line of every table goes
    # through the third party's filter. A shared worker without a lock would interleave
    # frames between tables; one closed by the first table to end would drop the others'.
    site, markers, cache = tally
    env = {"ARENA_CACHE_DIR": str(cache), "ARENA_BLOCK_PLUGINS": "talk_filters"}
    db = tmp_path / "league.sqlite"
    done = arena(
        "league", "--pool", "tally,bayes", "--tables", "16", "--deals", "2", "--talk",
        "--executor", "thread", "--concurrency", "8", "--db", str(db), env=env,
    )  # fmt: skip
    out, err = done.communicate(timeout=600)
    assert done.returncode == 0, err
    said = [r for log in _logs(db) for r in log if r.get("say")]
    assert len(said) >= 16  # a tally sat at every table, and says something every turn
    # Every line went through the filter, none dropped, none another line's answer.
    assert [r["published"] for r in said] == [r["say"].upper() for r in said]


def test_a_league_s_worker_processes_share_the_parent_s_description(tally, tmp_path):
    site, markers, cache = tally
    db = tmp_path / "league.sqlite"
    done = arena(
        "league", "--pool", "tally,bayes", "--tables", "4", "--deals", "1", "--workers", "2",
        "--db", str(db), env={"ARENA_CACHE_DIR": str(cache)},
    )  # fmt: skip
    out, err = done.communicate(timeout=600)
    assert done.returncode == 0, err
    # One describe (the parent's), then one seat worker per seated tally: never a describe
    # in the league's two worker processes.
    with sqlite3.connect(db) as connection:
        (seated,) = connection.execute("SELECT COUNT(*) FROM seats WHERE entrant = 'tally'")
    assert seated[0] >= 1
    assert imported(markers) == 1 + seated[0]


def _logs(db: Path) -> list[list[dict]]:
    with sqlite3.connect(db) as connection:
        rows = connection.execute("SELECT log FROM logs ORDER BY idx").fetchall()
    return [[json.loads(line) for line in zlib.decompress(blob).splitlines()] for (blob,) in rows]


def test_two_arenas_never_share_a_worker_uid(tally, tmp_path):
    # Two arenas play sandboxed tables at once, and this process starts workers of its own.
    site, markers, cache = tally
    env = {"ARENA_CACHE_DIR": str(cache)}
    playing = [
        arena("play", "--deals", "30", "--seat", "tally,tally,tally,tally", "--log",
              str(tmp_path / f"{n}.jsonl"), env=env)
        for n in range(2)
    ]  # fmt: skip
    host = loaded(cache)
    mine = own_worker_uids()
    assert len(mine) > 0
    uids_seen: list[set[int]] = [set(), set()]
    while any(p.poll() is None for p in playing):
        for n, process in enumerate(playing):
            uids_seen[n] |= _worker_uids_of(process.pid)
        time.sleep(0.02)
    for process in playing:
        assert process.wait() == 0, process.stderr.read()
    assert uids_seen[0] and uids_seen[1]
    assert uids_seen[0].isdisjoint(uids_seen[1])
    assert not (uids_seen[0] | uids_seen[1]) & set(mine)
    assert workers_left_behind(group=os.getpgrp()) == []
    assert host.registry.seat("tally").sandboxed


def _worker_uids_of(arena_pid: int) -> set[int]:
    """The real uids of the arena's children's descendants (its workers, as they run)."""
    children: dict[int, list[int]] = {}
    uids: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            fields = dict(
                line.split(":", 1) for line in Path(entry.path, "status").read_text().splitlines()
            )
        except (OSError, ValueError):
            continue
        pid = int(entry.name)
        children.setdefault(int(fields["PPid"]), []).append(pid)
        uids[pid] = int(fields["Uid"].split()[0])
    found, stack = set(), list(children.get(arena_pid, []))
    while stack:
        pid = stack.pop()
        if uids.get(pid, 0) >= 1_000_000_000:
            found.add(uids[pid])
        stack += children.get(pid, [])
    return found
