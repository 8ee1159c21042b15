"""structlog set-up for the CLI; library modules only ever log through :mod:`arena.logs`.

By default a log line reads as the CLI's own warnings do, ``arena: warning: plugin
skipped (plugin=x, reason=...)``: a person reads stderr, and a raw JSON record there
(a broken plugin's, a retried API call's) read as a crash. Machine-readable lines are
asked for: ``--log-format json``, or ``-v``/``-vv`` on a stderr that is not a
terminal (on a terminal, ``-v`` gives structlog's coloured lines).
"""

from __future__ import annotations

import logging
import sys
from types import ModuleType
from typing import Any

import attrs

from arena import logs
from arena.terminal_text import printable

FORMATS = ("plain", "json")
"""What ``--log-format`` may ask for."""


@attrs.frozen
class CommandSettings:
    """What ``arena -v...`` asks of the logs, picklable so a league's worker processes,
    which start afresh, log as the command does."""

    level: int
    format: str
    """``plain`` (``arena: LEVEL: ...`` lines), ``console`` (a terminal's coloured lines)
    or ``json`` (JSON lines, for a program to read)."""

    def __call__(self, structlog: ModuleType) -> None:
        if self.format == "plain":
            processors = [structlog.processors.add_log_level, plain_line]
        else:
            renderer = (
                structlog.dev.ConsoleRenderer(colors=True)
                if self.format == "console"
                else structlog.processors.JSONRenderer()
            )
            stamp = structlog.processors.TimeStamper(fmt="iso")
            processors = [structlog.processors.add_log_level, stamp, renderer]
        structlog.configure(
            processors=processors,
            wrapper_class=structlog.make_filtering_bound_logger(self.level),
            logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
            cache_logger_on_first_use=False,  # tests and embedders reconfigure; log calls are rare
        )


def plain_line(logger: Any, method: str, record: dict[str, Any]) -> str:
    """``arena: warning: EVENT (key=value, ...)``, one line whatever the values hold: a
    plugin's reason may carry a newline or an escape sequence, shown escaped."""
    level = record.pop("level", method)
    event = record.pop("event", "")
    details = ", ".join(f"{key}={value}" for key, value in record.items())
    return printable(f"arena: {level}: {event}" + (f" ({details})" if details else ""))


def configure(verbosity: int, log_format: str | None = None) -> None:
    """Quiet by default, ``-v`` info, ``-vv`` debug, on stderr, in ``log_format``; without
    one, plain lines at the default level, and with ``-v`` coloured on a terminal, JSON
    otherwise. structlog is only imported, and this applied, when something logs
    (:func:`arena.logs.configure`)."""
    level = {0: logging.WARNING, 1: logging.INFO}.get(verbosity, logging.DEBUG)
    if log_format is None:
        log_format = "plain" if verbosity == 0 else "console" if sys.stderr.isatty() else "json"
    logs.configure(CommandSettings(level, log_format))
