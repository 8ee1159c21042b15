"""The JSON Lines event log: one writer, one reader, and the limits both take.

- :mod:`~arena.eventlog.writer`: :class:`EventLog`, the sink the engine emits to.
  It batches whole deals, keeps a running SHA-256, and keeps what it needs to read
  itself back in bounded memory (:mod:`~arena.eventlog.retention`).
- :mod:`~arena.eventlog.partfile`: the log's file, written as ``NAME.part`` and
  renamed to ``NAME`` when the episode settles, never over an existing file unless
  forced, and ended by an ``interrupted`` line when a run is stopped.
- :mod:`~arena.eventlog.reader`: the one reader of the format, strict for files
  from outside (:func:`read_log`), fast for the lines this run wrote
  (:class:`LogRecords`).
- :mod:`~arena.eventlog.limits`: :class:`LogLimits`, the sizes and intervals, with
  their production values; the clock and the limits are passed in, never patched.
"""

from arena.eventlog.errors import LogError, LogExists, LogWriteError
from arena.eventlog.limits import LogLimits
from arena.eventlog.reader import (
    LogRecords,
    log_lines,
    parse_line,
    parse_text,
    read_log,
    read_numbered,
)
from arena.eventlog.writer import EventLog

__all__ = [
    "EventLog",
    "LogError",
    "LogExists",
    "LogLimits",
    "LogRecords",
    "LogWriteError",
    "log_lines",
    "parse_line",
    "parse_text",
    "read_log",
    "read_numbered",
]
