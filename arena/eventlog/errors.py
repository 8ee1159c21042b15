"""The event log's errors, each one line the CLI prints as it is."""

from __future__ import annotations


class LogError(ValueError):
    """A log file that is missing, unreadable or not an event log; one line, with position."""


class LogExists(FileExistsError):
    """The log's path (or its ``.part``) already exists and overwriting was not asked for."""


class LogWriteError(OSError):
    """Writing the log failed (a full disk, an I/O error); the message is one line."""
