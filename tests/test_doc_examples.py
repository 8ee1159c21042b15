"""Every league example in README.md and docs/league.md runs, as the page writes it.

The commands are read from the pages' code blocks here, so a changed page changes
the test. Each runs in a folder of its own, with docs/ and tests/ beside it as in a
checkout, except that one reading a league (``show``, ``export``, ``report``) runs where
the league before it was written. Claude entrants play against the tests' loopback
Messages API (a server per command, its key and URL in the command's environment, as
``python tests/messages_server.py -- ...`` gives them); scripted entrants are played as
written. The few placeholders the pages use for "your path here" are filled in below.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from messages_server import MessagesServer, table_player

ROOT = Path(__file__).resolve().parent.parent
PAGES = ("README.md", "docs/league.md")
COMMAND = re.compile(r"(arena (league|report)|python tests/messages_server\.py .*arena league)\b")
PLACEHOLDERS = {"DIR": "out", "FILE": "report.json", "...": "bayes,pressure,random"}
"""The pages' stand-ins: ``--csv DIR``, ``--json FILE``, ``--pool ...`` (the form, with
the pool of the examples around it)."""


def examples(page: str) -> list[str]:
    """The league commands in ``page``'s shell code blocks, comments dropped."""
    text = (ROOT / page).read_text()
    found = []
    for block in re.findall(r"```(?:bash|sh)?\n(.*?)```", text, re.S):
        for line in block.splitlines():
            command = line.split("  #")[0].strip()
            # A league joining a cluster by address needs the cluster: tests/test_league_ray.py
            # runs that two-node setup against a real one.
            if COMMAND.match(command) and "--address" not in command:
                found.append(command)
    return found


def words(command: str) -> list[str]:
    """The command's words, placeholders filled and ``[--opt]`` taken as given."""
    filled = []
    for word in shlex.split(command):
        word = PLACEHOLDERS.get(word, word)
        filled.append(word[1:-1] if word.startswith("[") and word.endswith("]") else word)
    if filled[0] == "python":
        filled[0] = sys.executable
    return filled


def test_the_pages_have_the_league_examples_this_test_runs():
    # The counts as the pages stand: a page that loses its examples fails here first.
    assert len(examples("README.md")) == 4
    assert len(examples("docs/league.md")) == 7


def run(command: str, cwd: Path) -> subprocess.CompletedProcess:
    bin_dir = str(Path(sys.executable).parent)
    env = os.environ | {"PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}
    env.pop("ANTHROPIC_API_KEY", None)
    with MessagesServer(table_player()) as server:
        if not command.startswith("python tests/messages_server.py"):
            env |= {"ANTHROPIC_API_KEY": "loopback", "ANTHROPIC_BASE_URL": server.url}
        return subprocess.run(
            words(command), cwd=cwd, env=env, capture_output=True, text=True, timeout=600
        )


def reads_a_league(command: list[str]) -> bool:
    return command[1] == "report" or command[1:3] in (["league", "show"], ["league", "export"])


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES)
def test_every_league_example_runs(tmp_path, page):
    folder = None
    for n, command in enumerate(examples(page)):
        if folder is None or not reads_a_league(words(command)):
            folder = tmp_path / f"example-{n}"
            folder.mkdir()
            (folder / "docs").symlink_to(ROOT / "docs")
            (folder / "tests").symlink_to(ROOT / "tests")
        ran = run(command, folder)
        assert ran.returncode == 0, f"{command}\n{ran.stderr}"
        assert "Traceback" not in ran.stderr and "error" not in ran.stderr, command
        written = [p.name for p in folder.rglob("*") if p.suffix in (".csv", ".jsonl", ".html")]
        if words(command)[1:3] == ["league", "export"]:  # the files it was asked for
            assert {"standings.csv", "episode-00000.jsonl"} <= set(written), command
            assert (folder / "report.json").stat().st_size > 0
        elif words(command)[1] == "report":
            assert "report.html" in written, command
        else:  # a league's standings
            assert "entrant" in ran.stdout, f"{command}: printed no standings"


@pytest.mark.slow
@pytest.mark.parametrize("page", ["README.md", "docs/league.md"])
def test_a_pages_league_examples_run_in_order_in_one_folder(page, tmp_path):
    """As a reader runs them: one after another where they are, so a later example meets
    the files the earlier ones wrote (the test above runs each on its own)."""
    (tmp_path / "docs").symlink_to(ROOT / "docs")
    (tmp_path / "tests").symlink_to(ROOT / "tests")
    for command in examples(page):
        ran = run(command, tmp_path)
        assert ran.returncode == 0, f"{command}\n{ran.stderr}"
        assert "error" not in ran.stderr, f"{command}\n{ran.stderr}"
