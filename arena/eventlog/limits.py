"""The event log's sizes and intervals, with their production values in one place.

The writer and the reader take them as a parameter (``EventLog(limits=...)``,
``read_log(path, limits=...)``), so a test that needs a short log to behave as a
long one passes smaller limits in instead of patching module constants.
"""

from __future__ import annotations

import attrs

_AT_LEAST_ONE = attrs.validators.ge(1)


@attrs.frozen
class LogLimits:
    """How often the writer writes, what it keeps in memory, and what a reader takes."""

    write_every_deals: int = attrs.field(default=16, validator=_AT_LEAST_ONE)
    """Finished deals are written once this many wait (or :attr:`write_every_seconds` has
    passed since the last write, and at the ``result`` line): a fast table then costs one
    system call per 16 deals, not per deal."""
    write_every_seconds: float = attrs.field(default=0.05, validator=attrs.validators.ge(0))
    """A slow table writes every deal as it ends: a crash loses at most the deal in
    progress and this much play before it."""
    keep_bytes: int = attrs.field(default=1 << 20, validator=_AT_LEAST_ONE)
    """A log is also kept in memory up to this size, so a short episode's records are
    read back without reopening the file; a longer one is read from the file (or, with
    no file to read, from an unnamed temporary one)."""
    keep_parsed: int = attrs.field(default=20_000, validator=_AT_LEAST_ONE)
    """Lines up to which a log's records are kept parsed, and kept as made (about 10 MB
    of them); past it they are parsed again on every pass."""
    max_writes_cut: int = attrs.field(default=16, validator=attrs.validators.ge(0))
    """How many whole writes (each of one to 16 deals) a full disk may cut to make room
    for the ``interrupted`` marker."""
    block_bytes: int = attrs.field(default=1 << 20, validator=_AT_LEAST_ONE)
    """Bytes read at a time when a log is read back: a long log is never one string."""
    max_line_bytes: int = attrs.field(default=1 << 26, validator=_AT_LEAST_ONE)
    """The longest line a reader takes (64 MiB): far past any line the arena writes, and a
    file of one endless line is refused at this size instead of being held in memory."""


PRODUCTION_LIMITS = LogLimits()
"""The limits the arena runs with; a test passes its own."""
