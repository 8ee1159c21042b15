"""A command's stdout that fails is one ``arena: error:`` line, whichever command wrote.

issue 30: ``arena play --json > /dev/full`` and the same for ``show``, ``audit``,
``check``, ``plugins``, ``policies``, ``compare``, ``exploitability`` and
``league show --json`` each ended in an ``OSError`` traceback. The fix is one place,
:func:`arena.cli.main`, so every command here runs as a real process, with its stdout
on a device that fails as a full disk does (``/dev/full``: ENOSPC), on a terminal that
went away (a pseudo-terminal whose other end is closed: EIO) and closed altogether
(EBADF). A reader that left (a pipe closed at its other end) stays a quiet exit 0.
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

FAILED = 1
"""The exit code of a run whose output was lost (as a failed ``--log`` write's)."""

COMMANDS = {
    "play": ("play", "--deals", "3"),
    "play --json": ("play", "--deals", "3", "--json"),
    "play --watch": ("play", "--deals", "3", "--watch"),
    "show": ("show", "{log}"),
    "audit": ("audit", "{log}"),
    "audit --json": ("audit", "{log}", "--json"),
    "check": ("check", "{log}"),
    "plugins": ("plugins",),
    "plugins --json": ("plugins", "--json"),
    "policies": ("policies",),
    "policies --json": ("policies", "--json"),
    "compare": ("compare", "bayes", "random", "--tables", "2", "--deals", "2"),
    "compare --json": ("compare", "bayes", "random", "--tables", "2", "--deals", "2", "--json"),
    "exploitability": ("exploitability", "--seat", "bayes"),
    "exploitability --json": ("exploitability", "--seat", "bayes", "--json"),
    "league show": ("league", "show", "{league}"),
    "league show --json": ("league", "show", "{league}", "--json"),
    "league export --json -": ("league", "export", "{league}", "--json", "-"),
    "--help": ("--help",),
    "--version": ("--version",),
}
"""Every command that prints on stdout, and the two answers the parser prints itself
(argparse swallows their write errors, which must not end in exit code 0)."""


def start(words: tuple[str, ...], made: dict[str, Path], **streams) -> subprocess.Popen:
    """``arena WORDS`` as a process of its own, stderr piped, stdout as ``streams`` say."""
    argv = [word.format(**made) for word in words]
    return subprocess.Popen(
        [sys.executable, "-m", "arena.cli", *argv], stderr=subprocess.PIPE, text=True, **streams
    )


def finish(process: subprocess.Popen) -> tuple[int, str]:
    _, err = process.communicate(timeout=120)
    return process.returncode, err


def test_every_command_whose_stdout_is_full_says_so_in_one_line(made):
    # Started together, then waited for: twenty interpreters one after another take long.
    with open("/dev/full", "w") as full:
        processes = {name: start(words, made, stdout=full) for name, words in COMMANDS.items()}
    failures = {name: finish(process) for name, process in processes.items()}
    expected = (FAILED, "arena: error: cannot write stdout: No space left on device\n")
    assert failures == dict.fromkeys(COMMANDS, expected)


@pytest.mark.parametrize("name", ["play --json", "policies", "league show"])
def test_a_terminal_that_went_away_is_one_line_too(made, name):
    # Writing to a pseudo-terminal whose leader end is closed fails with EIO; stdout is
    # then a terminal, so line-buffered, and the first line's write already fails.
    leader, follower = pty.openpty()
    os.close(leader)
    try:
        failure = finish(start(COMMANDS[name], made, stdout=follower))
    finally:
        os.close(follower)
    assert failure == (FAILED, "arena: error: cannot write stdout: Input/output error\n")


def test_a_command_started_without_stdout_says_so_in_one_line(made):
    # `arena policies >&-`: Python leaves sys.stdout None, where print() writes nothing
    # at all and sys.stdout.write raised AttributeError.
    process = start(COMMANDS["policies"], made, preexec_fn=lambda: os.close(1))
    assert finish(process) == (FAILED, "arena: error: cannot write stdout: Bad file descriptor\n")


@pytest.mark.parametrize("name", ["play --json", "league show --json"])
def test_a_reader_that_left_is_a_quiet_exit(made, name):
    # `arena play --json | head -0`: the pipe's reading end is closed before the first
    # write, so every write fails with EPIPE. Not an error: nothing on stderr, exit 0.
    reading, writing = os.pipe()
    os.close(reading)
    try:
        left = finish(start(COMMANDS[name], made, stdout=writing))
    finally:
        os.close(writing)
    assert left == (0, "")
