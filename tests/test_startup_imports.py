"""What a command imports, read from ``-X importtime`` (issue 39 item 4). Each command runs
in a fresh interpreter.

``arena --help`` paid 0.9 s CPU for scipy and the league report it never used, then half
a second for every subcommand's module and, through them, the engine, the runner, the
log check, numpy and the plugin loader. Commands that need neither scipy nor the report
never import them, and ``--help`` and a mistyped command nothing that running a command
needs. (That they import no subcommand's module, which ``importlib.import_module`` loads
out of ``-X importtime``'s sight, ``tests/test_cli_options.py`` reads off the parser.)
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

STATISTICS = ("scipy", "arena.league.report")
RUNNING = (
    "numpy",
    "arena.engine",
    "arena.runner",
    "arena.check",
    "arena.plugins",
    "arena.cli.running",
)
"""What running a command imports (the plugins, the runner of a parsed line and the core
they bring), and building the parser of ``arena --help`` needs none of."""


def loaded(*argv: str, cwd, of: tuple[str, ...] = STATISTICS) -> list[str]:
    """Which of ``of`` ``arena ARGV`` imported, read from ``-X importtime``'s lines (the
    command may leave by ``os._exit``, so nothing is asked of it after it runs)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "arena.cli", *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )
    names = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()}
    return [name for name in of if name in names]


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
    assert loaded("league", "show", "nothing.db", cwd=tmp_path) == list(STATISTICS)


@pytest.mark.parametrize("argv", [["--help"], ["pley"]], ids=["help", "mistyped"])
def test_help_imports_nothing_a_command_runs_on(argv, tmp_path):
    assert loaded(*argv, cwd=tmp_path, of=RUNNING) == []


def test_the_probe_sees_a_command_import_what_it_runs_on(tmp_path):
    # the probe itself can fail: checking a log loads the plugins, the check and the rest
    assert loaded("check", "nothing.jsonl", cwd=tmp_path, of=RUNNING) == list(RUNNING)


BLAS_THREADS = "import os, arena.cli, numpy; print(os.environ.get('OPENBLAS_NUM_THREADS'), end='')"


@pytest.mark.parametrize("given, seen", [(None, "1"), ("3", "3")], ids=["unset", "the user's"])
def test_the_cli_asks_numpy_for_one_blas_thread_unless_the_user_chose(given, seen):
    # OpenBLAS spins a thread per core from numpy's import; the CLI sets one before numpy
    # is imported (and before its workers start), and leaves a user's own number alone.
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    ran = subprocess.run(
        [sys.executable, "-c", BLAS_THREADS], capture_output=True, text=True, env=env
    )
    assert (ran.returncode, ran.stdout) == (0, seen), ran.stderr
