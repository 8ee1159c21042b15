"""structlog set-up for the CLI; library modules only ever log through :mod:`arena.logs`."""

from __future__ import annotations

import logging
import sys
from types import ModuleType

import attrs

from arena import logs


@attrs.frozen
class CommandSettings:
    """What ``arena -v...`` asks of the logs, picklable so a league's worker processes,
    which start afresh, log as the command does."""

    level: int
    console: bool
    """A terminal's coloured lines, or JSON lines (for a pipe or a file)."""

    def __call__(self, structlog: ModuleType) -> None:
        renderer = (
            structlog.dev.ConsoleRenderer(colors=True)
            if self.console
            else structlog.processors.JSONRenderer()
        )
        structlog.configure(
            processors=[
                structlog.processors.add_log_level,
                structlog.processors.TimeStamper(fmt="iso"),
                renderer,
            ],
            wrapper_class=structlog.make_filtering_bound_logger(self.level),
            logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
            cache_logger_on_first_use=False,  # tests and embedders reconfigure; log calls are rare
        )


def configure(verbosity: int) -> None:
    """Quiet by default, ``-v`` info, ``-vv`` debug, on stderr: coloured on a terminal, JSON
    otherwise. structlog is only imported, and this applied, when something logs
    (:func:`arena.logs.configure`)."""
    level = {0: logging.WARNING, 1: logging.INFO}.get(verbosity, logging.DEBUG)
    logs.configure(CommandSettings(level, console=sys.stderr.isatty()))
