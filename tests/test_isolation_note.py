"""The isolation note prints where a third-party plugin plays, not on every command
(issue 40, item 4; :mod:`arena.cli.isolation_note`).

A real third-party distribution (a dist-info with an ``arena`` entry point, on the import
path) registers one seat; each case runs the real ``arena`` command with it installed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from installs import install

pytestmark = pytest.mark.sandbox

SEAT = """
from arena import hookimpl

class Caller:
    def __init__(self, context):
        pass

    def decide(self, view):
        if view.bids:
            return {"action": "challenge"}
        return {"action": "bid", "quantity": 1, "face": view.symbols[0]}

@hookimpl
def register_seats(register):
    register("caller", Caller, description="bids one, then calls")
"""
NOTE = "third-party plugins are isolated by"
"""How the line opens, whichever isolation the machine has (bubblewrap or a process)."""


@pytest.fixture
def third_party(tmp_path) -> Path:
    """A folder on the import path with the ``arena-caller`` distribution installed."""
    root = tmp_path / "site"
    root.mkdir()
    tmp_path.chmod(0o755)  # as root, workers run as another uid: installed code is readable
    root.chmod(0o755)
    install(root, "arena-caller", {"arena_caller": SEAT}, {"caller": "arena_caller"})
    return root


def arena(*args: str, site: Path, cwd: Path) -> subprocess.CompletedProcess:
    env = os.environ | {"PYTHONPATH": str(site)}
    env.pop("PLAYER_SCRIPTED", None)
    return subprocess.run(
        [sys.executable, "-m", "arena.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
    )


@pytest.fixture
def log(tmp_path, third_party) -> Path:
    """An episode of scripted seats only, played with the third party installed."""
    path = tmp_path / "ep.jsonl"
    done = arena(
        "play", "--seat", "bayes", "--seat", "pressure", "--deals", "1", "--log", str(path),
        site=third_party, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return path


def test_a_table_it_does_not_play_at_says_nothing_of_isolation(third_party, tmp_path):
    """Installed, not seated: scripted seats, first-party filters and reporters only."""
    done = arena(
        "play", "--seat", "bayes", "--seat", "pressure", "--deals", "1", "--json",
        site=third_party, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert NOTE not in done.stderr


@pytest.mark.parametrize(
    "command",
    [("check", "{log}"), ("show", "{log}"), ("audit", "{log}"), ("plugins",), ("policies",)],
    ids=lambda command: command[0],
)
def test_a_command_that_plays_no_table_says_nothing_of_isolation(
    command, third_party, log, tmp_path
):
    done = arena(*(word.format(log=log) for word in command), site=third_party, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert NOTE not in done.stderr


def test_a_table_the_third_party_plays_at_says_what_isolates_it(third_party, tmp_path):
    done = arena(
        "play", "--seat", "caller", "--seat", "bayes", "--deals", "1", "--json",
        site=third_party, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if NOTE in line]
    assert len(lines) == 1 and lines[0].startswith(("arena: note: ", "arena: warning: "))


def test_a_league_seating_it_says_so_and_a_league_of_others_does_not(third_party, tmp_path):
    def league(pool: str, db: str) -> subprocess.CompletedProcess:
        return arena(
            "league", "run", "--pool", pool, "--tables", "1", "--deals", "1", "--db", db,
            "--json", site=third_party, cwd=tmp_path,
        )  # fmt: skip

    seated = league("caller,bayes,pressure,random", "a.sqlite")
    assert seated.returncode == 0, seated.stderr
    assert NOTE in seated.stderr
    others = league("bayes,pressure,random,bayes", "b.sqlite")
    assert others.returncode == 0, others.stderr
    assert NOTE not in others.stderr
    shown = arena("league", "show", "a.sqlite", site=third_party, cwd=tmp_path)
    assert shown.returncode == 0 and NOTE not in shown.stderr
