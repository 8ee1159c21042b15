"""Shared fixtures: plugin hosts, with test plugins registered and unregistered around use.

Test plugins are real modules under ``tests/plugins_for_tests``; building
positions and tables by hand lives in ``plugins_for_tests.harness``.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
import structlog
from hypothesis import settings
from plugins_for_tests import misbehaving
from plugins_for_tests.harness import plugged

from arena.cli import main
from arena.plugins import PluginHost, load

pytest_plugins = ["browser"]

# Episodes are fast but uneven; a per-example deadline would only add flakiness.
# `ci` (the default) is derandomised: every run sees the same examples, so a failure
# reproduces and a pass means the same thing twice. `explore` draws new examples each
# run and remembers failing ones: HYPOTHESIS_PROFILE=explore python -m pytest ...
settings.register_profile("ci", deadline=None, database=None, derandomize=True)
settings.register_profile("explore", deadline=None, max_examples=500)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_configure(config):
    """Ctrl-C live in every ``arena`` process the tests start and stop with SIGINT.

    A background job of a non-interactive shell starts with SIGINT ignored, and an
    ignored signal stays ignored in every child: such a child ``arena`` would play on
    through the Ctrl-C a test sends it. A handler is reset to the default in a child.
    """
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def host() -> PluginHost:
    """Every installed plugin, loaded as the CLI would with no environment switches."""
    return load({})


@pytest.fixture(scope="session")
def misbehaving_host():
    """The installed plugins plus the ``misbehaving`` seat."""
    with plugged(misbehaving, "misbehaving") as (plugin_host, info):
        assert info.broken is None, info.broken
        yield plugin_host


@pytest.fixture(autouse=True)
def _fresh_structlog():
    """Undo ``arena.cli.main``'s logging set-up after each test.

    The CLI binds structlog to the stderr it finds, which under pytest's capture
    is closed after the test; a later test's log call would then raise.
    """
    yield
    structlog.reset_defaults()


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> dict[str, Path]:
    """One real log and one real league to read, made once per module by the CLI itself."""
    root = tmp_path_factory.mktemp("made")
    log, league = root / "g.jsonl", root / "L.sqlite"
    assert main(["play", "--deals", "3", "--seat", "bayes,random", "--log", str(log)]) == 0
    assert (
        main(["league", "run", "--pool", "bayes,random", "--tables", "1", "--deals", "1"]
             + ["--db", str(league), "--json"])
        == 0
    )  # fmt: skip
    return {"log": log, "league": league}
