"""structlog set-up for the CLI; library modules only ever call ``structlog.get_logger``."""

from __future__ import annotations

import logging
import sys

import structlog


def configure(verbosity: int) -> None:
    """Quiet by default, ``-v`` info, ``-vv`` debug; console on a terminal, JSON otherwise."""
    level = {0: logging.WARNING, 1: logging.INFO}.get(verbosity, logging.DEBUG)
    renderer = (
        structlog.dev.ConsoleRenderer(colors=True)
        if sys.stderr.isatty()
        else structlog.processors.JSONRenderer()
    )
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso"),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,  # tests and embedders reconfigure; log calls are rare
    )
