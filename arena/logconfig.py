"""structlog set-up for the CLI; library modules only ever log through :mod:`arena.logs`."""

from __future__ import annotations

import logging
import sys
from types import ModuleType

from arena import logs


def configure(verbosity: int) -> None:
    """Quiet by default, ``-v`` info, ``-vv`` debug; console on a terminal, JSON otherwise.

    The terminal is looked at now; structlog is only imported, and these settings
    applied, when something logs (:func:`arena.logs.configure`)."""
    level = {0: logging.WARNING, 1: logging.INFO}.get(verbosity, logging.DEBUG)
    stream = sys.stderr
    console = stream.isatty()

    def settings(structlog: ModuleType) -> None:
        renderer = (
            structlog.dev.ConsoleRenderer(colors=True)
            if console
            else structlog.processors.JSONRenderer()
        )
        structlog.configure(
            processors=[
                structlog.processors.add_log_level,
                structlog.processors.TimeStamper(fmt="iso"),
                renderer,
            ],
            wrapper_class=structlog.make_filtering_bound_logger(level),
            logger_factory=structlog.PrintLoggerFactory(file=stream),
            cache_logger_on_first_use=False,  # tests and embedders reconfigure; log calls are rare
        )

    logs.configure(settings)
