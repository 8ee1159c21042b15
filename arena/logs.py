"""structlog loggers for library code, with structlog imported when something first logs.

Importing structlog imports asyncio, rich and pygments with it (35-45 ms of CPU a
process, here), and most ``arena`` commands log nothing. A module's
``log = get_logger(__name__)`` is therefore a stand-in that imports structlog at its
first call; the settings the CLI chose (:mod:`arena.logconfig`) are applied then,
before that first line is rendered. They are kept, too, for the worker processes a
league starts (:func:`settings`), which must log as the command does.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

Settings = Callable[[ModuleType], None]
"""Settings for structlog: called with the module, they configure it."""

_settings: Settings | None = None
"""The settings last given to :func:`configure`."""
_waiting = False
"""Whether they still wait for structlog to be imported."""


class Logger:
    """``structlog.get_logger(name)``, looked up when a method is called on it."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __getattr__(self, method: str) -> Any:
        return getattr(structlog().get_logger(self.name), method)


def get_logger(name: str) -> Logger:
    return Logger(name)


def configure(settings: Settings) -> None:
    """Hand structlog ``settings(structlog)``: now if it is imported, else at the first log
    call here or at :func:`structlog`, whichever comes first."""
    global _settings, _waiting
    _settings, _waiting = settings, True
    if "structlog" in sys.modules:
        structlog()


def settings() -> Settings | None:
    """The settings given to :func:`configure` (``None`` if none were), for a worker
    process to :func:`configure` in its turn: picklable, when the CLI gave them."""
    return _settings


def structlog() -> ModuleType:
    """structlog itself, configured: for code that logs through it without this module
    (a trusted plugin, say), which would otherwise find structlog's defaults."""
    global _waiting
    import structlog as module

    if _waiting:
        _waiting = False
        _settings(module)
    return module
