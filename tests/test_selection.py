"""Selection and breakage, entry point by entry point, in a distribution of many.

``arena-zoo`` is a real distribution written for each test: ten entry points
``zoo0``..``zoo9``, each a module registering one seat of its own name. Each module
writes a marker file at import (its name and the importing pid), so the tests see
every import in every process. ``zoo5`` kills its worker at import
(``os._exit(9)``). The arena itself never imports any of them: they are third-party.

Process isolation, as root: the workers' uids may write the shared marker
directory (under bubblewrap each worker has a private ``/tmp``, and the markers
would be invisible).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from installs import install, marker_directory

from arena.plugins import UnknownName, load
from arena.runner import EpisodeRequest, run_episode
from arena.sandbox.policy import Limits, SandboxPolicy
from arena.seats import SeatSpec

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(os.geteuid() != 0, reason="markers need the workers' own uids"),
]

ENTRY_POINTS = [f"zoo{i}" for i in range(10)]
BROKEN = "zoo5"
BLOCKED = ("zoo3", "zoo7")
LIMITS = Limits(decision_seconds=5.0, start_seconds=10.0)
MODULE = '''"""arena-zoo's {name}: marks its import, then registers the seat {name}."""

import os

from arena import hookimpl

with open(os.path.join({markers!r}, "{name}-" + str(os.getpid())), "w"):
    pass
{crash}

class Caller:
    def __init__(self, context):
        pass

    def decide(self, view):
        if view.legal.can_challenge:
            return {{"action": "challenge"}}
        quantity, face = view.legal.min_bid
        return {{"action": "bid", "quantity": quantity, "face": face}}


@hookimpl
def register_seats(register):
    register("{name}", Caller, description="TEST: a zoo seat")
'''


@pytest.fixture
def zoo(tmp_path, monkeypatch):
    """``arena-zoo`` on the import path; yields the marker directory."""
    tmp_path.chmod(0o755)
    with marker_directory("arena-zoo-markers-") as markers:
        modules = {
            f"arena_{name}": MODULE.format(
                name=name, markers=str(markers), crash="os._exit(9)" if name == BROKEN else ""
            )
            for name in ENTRY_POINTS
        }
        install(tmp_path, "arena-zoo", modules, {name: f"arena_{name}" for name in ENTRY_POINTS})
        monkeypatch.syspath_prepend(str(tmp_path))
        monkeypatch.setenv("PYTHONPATH", str(tmp_path))
        yield markers


def imports(markers: Path) -> dict[str, list[int]]:
    """Each entry point's module, to the pids that imported it; the markers are taken."""
    found: dict[str, list[int]] = {}
    for marker in sorted(markers.iterdir()):
        name, _, pid = marker.name.partition("-")
        found.setdefault(name, []).append(int(pid))
        marker.unlink()
    return found


def test_blocked_and_broken_entry_points_break_nothing_else(zoo):
    environ = {"ARENA_BLOCK_PLUGINS": ",".join(BLOCKED), "ARENA_CACHE_DIR": ""}
    host = load(environ, SandboxPolicy("process", LIMITS))
    described = imports(zoo)
    # Describing: every selected entry point imported once, in workers; the blocked ones
    # nowhere. zoo5 killed the first describing worker; a second went on from zoo6.
    assert sorted(described) == sorted(set(ENTRY_POINTS) - set(BLOCKED))
    assert all(len(pids) == 1 for pids in described.values())
    assert described["zoo4"] == described[BROKEN] != described["zoo6"]
    assert os.getpid() not in {pid for pids in described.values() for pid in pids}
    assert not any(module.startswith("arena_zoo") for module in sys.modules)

    plugins = {info.name: info for info in host.plugins if info.distribution == "arena-zoo"}
    assert plugins[BROKEN].broken == "at import: the worker exited with code 9"
    assert {name for name, info in plugins.items() if info.selection == "blocked"} == set(BLOCKED)
    playable = set(ENTRY_POINTS) - set(BLOCKED) - {BROKEN}
    assert {name for name in host.registry.seats if name.startswith("zoo")} == playable

    # Playing: four zoo seats, each in a worker that imports its own entry point only.
    seated = ("zoo0", "zoo4", "zoo6", "zoo9")
    request = EpisodeRequest(seed=11, deals=2, seat_specs=tuple(map(SeatSpec, seated)))
    results, records = run_episode(host, request, environ={})
    assert results.status == "complete"
    assert not [r for r in records if r["type"] == "fault"]  # every seat played itself
    played = imports(zoo)
    assert sorted(played) == sorted(seated)
    pids = [pid for name in seated for pid in played[name]]
    assert len(pids) == len(set(pids)) == 4  # one worker each, importing nothing else

    # Asking for the broken or a blocked seat says why, in one line.
    with pytest.raises(UnknownName) as broken:
        host.registry.seat(BROKEN)
    assert str(broken.value) == (
        "seat 'zoo5' is unavailable: plugin 'zoo5' (arena-zoo 1.0) is broken: "
        "at import: the worker exited with code 9"
    )
    with pytest.raises(UnknownName, match="'zoo3' .* is blocked by ARENA_BLOCK_PLUGINS$"):
        host.registry.seat("zoo3")


def test_the_allow_list_loads_only_what_it_names(zoo):
    environ = {"ARENA_LOAD_PLUGINS": "zoo1,zoo2", "ARENA_CACHE_DIR": ""}
    host = load(environ, SandboxPolicy("process", LIMITS))
    assert sorted(imports(zoo)) == ["zoo1", "zoo2"]
    selection = {i.name: i.selection for i in host.plugins if i.distribution == "arena-zoo"}
    assert selection == {name: "allowed" if name in ("zoo1", "zoo2") else "not-allowed"
                         for name in ENTRY_POINTS}  # fmt: skip
    assert host.registry.seat("bayes").source == "scripted"  # the essentials load regardless


def run_arena(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "arena.cli", "--sandbox", "process", *args]
    return subprocess.run(
        command, env=os.environ | env, capture_output=True, text=True, timeout=180
    )


def test_the_command_line_says_why_a_seat_is_unavailable(zoo, tmp_path):
    env = {"ARENA_BLOCK_PLUGINS": "zoo3", "ARENA_CACHE_DIR": ""}
    done = run_arena("play", "--deals", "1", "--seat", "zoo5", env=env)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        "arena: error: seat 'zoo5' is unavailable: plugin 'zoo5' (arena-zoo 1.0) is broken: "
        "at import: the worker exited with code 9"
    )
    done = run_arena("play", "--deals", "1", "--seat", "zoo3", env=env)
    assert (done.returncode, done.stderr.splitlines()[-1]) == (
        2,
        "arena: error: seat 'zoo3' is unavailable: plugin 'zoo3' (arena-zoo 1.0) is blocked "
        "by ARENA_BLOCK_PLUGINS",
    )
    listing = run_arena("plugins", "--json", env=env)
    rows = {row["name"]: row for row in json.loads(listing.stdout)}
    assert rows["zoo3"]["selection"] == "blocked"
    assert rows["zoo3"]["withheld"] == "blocked by ARENA_BLOCK_PLUGINS"
    assert rows["zoo5"]["broken"] == "at import: the worker exited with code 9"
    assert rows["zoo4"]["hooks"] == ["register_seats"] and rows["zoo4"]["broken"] is None
    lines = run_arena("plugins", env=env).stdout.splitlines()
    assert any(line.startswith("zoo3") and "NOT LOADED: blocked by" in line for line in lines)


FORGER = """
# A plugin that writes its own frame onto the worker's protocol fd at import: it claims
# to be an entry point named bayes registering a malformed list of seats.
import json
import os
import struct
import sys

body = json.dumps({"plugin": {"name": "bayes", "seats": "all of them"}}).encode()
os.write(int(sys.argv[2]), struct.pack(">I", len(body)) + body)
"""
HONEST = (MODULE.split("with open(")[0] + MODULE.split("    pass\n{crash}\n")[1]).replace(
    "marks its import, then registers", "registers"
)


def test_a_forged_frame_breaks_only_the_forger(tmp_path, monkeypatch):
    tmp_path.chmod(0o755)
    modules = {"arena_forger": FORGER, "arena_honest": HONEST.format(name="honest")}
    install(
        tmp_path, "arena-forger", modules, {"a_forger": "arena_forger", "honest": "arena_honest"}
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    host = load({"ARENA_CACHE_DIR": ""}, SandboxPolicy("process", LIMITS))
    forger = next(info for info in host.plugins if info.name == "a_forger")
    assert forger.broken == "at import: the worker broke the protocol while loading"
    assert host.registry.seat("bayes").source == "scripted"  # the forged claim went nowhere
    assert host.registry.seat("honest").sandboxed  # its sibling, after it, loaded


REFUSED = """
from arena import hookimpl


class Never:
    def __init__(self, context):
        pass


@hookimpl
def register_seats(register):
    register("halfway", Never)
    raise RuntimeError("boom after registering halfway")
"""


def test_asking_for_a_refused_sandboxed_seat_says_why(tmp_path):
    tmp_path.chmod(0o755)
    install(tmp_path, "arena-halfway", {"arena_halfway": REFUSED}, {"half": "arena_halfway"})
    env = {"PYTHONPATH": str(tmp_path), "ARENA_CACHE_DIR": ""}
    done = run_arena("play", "--deals", "1", "--seat", "halfway", env=env)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        "arena: error: seat 'halfway' is unavailable: plugin 'half' was refused: "
        "RuntimeError: boom after registering halfway"
    )
