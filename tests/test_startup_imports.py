"""Commands that need neither scipy nor the league report never import them (issue 39
item 4): ``arena --help`` paid 0.9 s CPU for scipy it never used. Each command runs in a
fresh interpreter."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("scipy", "arena.league.report")


def loaded(*argv: str, cwd) -> list[str]:
    """Which of HEAVY ``arena ARGV`` imported, read from ``-X importtime``'s lines (the
    command may leave by ``os._exit``, so nothing is asked of it after it runs)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "arena.cli", *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )
    names = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()}
    return [name for name in HEAVY if name in names]


BAYES = ["--seat", "bayes"] * 4


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["plugins"], ["play", "--deals", "1", *BAYES, "--log", "x.jsonl"]],
    ids=["help", "plugins", "play-bayes"],
)
def test_a_command_without_statistics_loads_neither(argv, tmp_path):
    assert loaded(*argv, cwd=tmp_path) == []


def test_the_probe_sees_a_report_command_load_them(tmp_path):
    # the probe itself can fail: a league show does load the report (and so scipy)
    assert loaded("league", "show", "nothing.db", cwd=tmp_path) == list(HEAVY)
