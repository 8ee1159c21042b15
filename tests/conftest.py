"""Shared fixtures: plugin hosts, with test plugins registered and unregistered around use.

Test plugins are real modules under ``tests/plugins_for_tests``; building
positions and tables by hand lives in ``plugins_for_tests.harness``.
"""

from __future__ import annotations

import pytest
import structlog
from hypothesis import settings
from plugins_for_tests import misbehaving
from plugins_for_tests.harness import plugged

from arena.plugins import PluginHost, load

pytest_plugins = ["browser"]

# Episodes are fast but uneven; a per-example deadline would only add flakiness.
settings.register_profile("arena", deadline=None, database=None)
settings.load_profile("arena")


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
