"""The event log's writer: the sink the engine emits to.

It batches whole deals (each one as it ends on a slow table, sixteen at a time on
a fast one), so a crash loses at most the deal in progress and 50 ms or 16 deals
of play before it. Each write goes to the log's file (:mod:`~arena.eventlog.partfile`),
to the bytes it keeps to read itself back (:mod:`~arena.eventlog.retention`) and
to a running SHA-256. Reporters always parse the lines back (:meth:`EventLog.stream`,
through :mod:`~arena.eventlog.reader`), so an episode's audit and the audit of its
saved file read the same bytes. The one exception is our own soft-play tally, which
reads a list and a tuple alike: on a short log it may read the records as the
Python engine made them (:meth:`EventLog.take_made`), which spares the parse.

The clock and the limits are parameters, with production defaults
(:class:`~arena.eventlog.limits.LogLimits`), so a test hands in its own.
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from arena.eventlog.errors import LogWriteError
from arena.eventlog.limits import PRODUCTION_LIMITS, LogLimits
from arena.eventlog.partfile import PartFile
from arena.eventlog.reader import LogRecords, parse_written
from arena.eventlog.retention import KeptBytes
from arena.events import (
    BOUNDED_INTS,
    Audit,
    ChallengeMade,
    EpisodeSettled,
    Event,
    Interrupted,
    encode_line,
    encode_record,
    may_hold_long_int,
)

_DEAL_ENDS = frozenset({ChallengeMade, EpisodeSettled})


class EventLog:
    """The sink the engine emits to, optionally streaming to a file.

    ``path`` names the finished log. A regular file (or a missing path) is written as
    ``path.part`` and renamed on :meth:`close`; a device or pipe (``/dev/null``) is
    written in place. Without ``force`` an existing regular file is refused.

    Memory stays bounded: past ``limits.keep_bytes`` a log keeps only the running
    SHA-256 of its lines and :meth:`stream` reads them back from the file (or, with no
    file to read, from an unnamed temporary one). ``clock`` times the writes.
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        force: bool = False,
        limits: LogLimits = PRODUCTION_LIMITS,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.limits = limits
        self._clock = clock
        self.path = None if path is None else Path(path)
        self._file = (
            None
            if self.path is None
            else PartFile(self.path, force=force, max_writes_cut=limits.max_writes_cut)
        )
        self._kept = KeptBytes(
            limits.keep_bytes, file_to_read=self._file is not None and not self._file.in_place
        )
        self._digest = hashlib.sha256()
        self._failure: LogWriteError | None = None
        self.count = 0
        """Lines emitted so far."""
        self._long_ints: list[int] = []
        """Indexes of the lines that may hold an int past 64 bits: parsed by the stdlib."""
        self._audits = 0
        """``audit`` lines emitted (they follow ``result``; reporters read the log without them)."""
        self.last_line = b""
        """The latest line :meth:`emit` took, as encoded (for a caller that shows it live)."""
        self._first_line = b""
        """The header's line, so a reader of the header alone parses no more."""
        self._pending: list[bytes] = []
        self._unwritten_deals = 0
        self._finished = 0
        """How many of the pending lines belong to deals that have ended."""
        self._written_at = clock()
        self._pending_records: list[dict[str, Any]] | None = None
        """The pending lines' records as their events made them, while something reads
        them (:meth:`keep_made`, :meth:`follow_writes`); ``None`` otherwise."""
        self._made: list[dict[str, Any]] | None = None
        """The written lines' records as made, from :meth:`keep_made` on, while the log has
        at most ``limits.keep_parsed`` lines; ``None`` otherwise."""
        self._on_write: Callable[[list[dict[str, Any]]], None] | None = None
        """Handed each write's records as made, once written (:meth:`follow_writes`)."""

    @property
    def writing(self) -> Path | None:
        """The file the bytes go to: ``path.part``, or ``path`` itself for a device."""
        return None if self._file is None else self._file.writing

    def emit(self, event: Event) -> None:
        if self._failure is not None:  # a swallowed write error must still stop the episode
            raise self._failure
        kind = type(event)
        record = event.to_record()
        line = encode_record(kind, record)
        if kind not in BOUNDED_INTS:
            if may_hold_long_int(line):
                self._long_ints.append(self.count)
            self._audits += kind is Audit
        if not self.count:
            self._first_line = line
        pending_records = self._pending_records
        if pending_records is not None:
            pending_records.append(record)
        self.count += 1
        self.last_line = line
        self._pending.append(line)
        if kind in _DEAL_ENDS:
            self._deal_ended(kind is EpisodeSettled)

    def _deal_ended(self, last: bool) -> None:
        """Write the deals waiting once enough of them, or enough time, has gone by."""
        self._unwritten_deals += 1
        self._finished = len(self._pending)
        if (
            last
            or self._unwritten_deals >= self.limits.write_every_deals
            or self._clock() - self._written_at >= self.limits.write_every_seconds
        ):
            self._flush()

    def emit_deals(self, lines: bytes) -> None:
        """Whole deals' lines, already encoded (by the compiled engine), each ending in a
        newline: kept and written as :meth:`emit` keeps and writes an event's line.

        They are per-decision lines (:data:`BOUNDED_INTS`), so none needs the long-int check.
        """
        if self._failure is not None:
            raise self._failure
        self.count += lines.count(b"\n")
        self._pending.append(lines)
        self._flush()

    def keep_made(self) -> None:
        """Keep each record as its event made it (see :meth:`take_made`); before any line."""
        self._made = []
        if self._pending_records is None:
            self._pending_records = []

    def take_made(self) -> list[dict[str, Any]] | None:
        """The records kept since :meth:`keep_made`, and keep no more; ``None`` once more than
        ``limits.keep_parsed`` lines were emitted (memory stays bounded) or if never asked.

        They are the records a parse of the lines gives, except that a list there is a
        tuple here and the header's seats are :class:`~arena.events.SeatEntry` objects:
        for a reader that reads both alike and would otherwise parse the log back
        (:func:`arena.audit.run_audit`)."""
        made, self._made = self._made, None
        pending = self._pending_records or []
        if self._on_write is None:
            self._pending_records = None
        if made is None or self.count > self.limits.keep_parsed:
            return None
        made += pending  # the lines not yet written, if any
        return made

    def follow_writes(self, on_write: Callable[[list[dict[str, Any]]], None]) -> None:
        """Hand ``on_write`` the records of each write's lines, as their events made them
        (see :meth:`take_made`), once they are written: for a display that shows the play
        as the log takes it, so what it shows is in the file. Before any line. A run that
        stops (:meth:`write_finished`, :meth:`interrupt`) hands it nothing more, so what
        the display raises (a closed stdout) never stands in for why the run stopped."""
        self._on_write = on_write
        if self._pending_records is None:
            self._pending_records = []

    def records(self) -> list[dict[str, Any]]:
        """The whole log's records in one list (see :meth:`stream` for a long log)."""
        return list(self.stream())

    def stream(self) -> LogRecords:
        """The log's records so far, read back as its bytes say, a chunk at a time."""
        self._flush()
        return LogRecords(
            self._chunks,
            self.count,
            has_audit=self._audits > 0,
            first_line=self._first_line,
            data=self._bytes,
            keep_parsed=self.limits.keep_parsed,
        )

    def _chunks(self) -> Iterator[list[dict[str, Any]]]:
        """Parsed records, a chunk of whole lines at a time, from memory or the file."""
        first = 0
        kept = self._kept.chunks
        for data in kept if kept is not None else self._read_back():
            records = parse_written(data, first, self._long_ints)
            yield records
            first += len(records)

    def _read_back(self) -> Iterator[bytes]:
        """The written file (or the spill) in blocks of whole lines, exactly its bytes."""
        if self._kept.spill is not None:
            return self._kept.read_spill(self.limits.block_bytes)
        return self._file.read_back(self.limits.block_bytes)

    def text(self) -> str:
        """The log's bytes as they are (or would be) saved."""
        return self._bytes().decode("utf-8")

    def _bytes(self) -> bytes:
        self._flush()
        kept = self._kept.chunks
        if kept is not None:
            return b"".join(kept)
        return b"".join(self._read_back())

    def sha256(self) -> str:
        """The hex SHA-256 of :meth:`text`'s UTF-8 bytes, kept as the lines were emitted."""
        self._flush()
        return self._digest.hexdigest()

    def close(self) -> None:
        """Write what is pending and give the log its final name."""
        if not self._writes_file():
            return
        self._flush()
        self._file.close()

    def write_finished(self) -> None:
        """Write the deals that have ended and wait their turn, not the one in progress:
        after an error that stops the run (not a signal, which :meth:`interrupt` marks),
        the file still ends at the last finished deal."""
        if not self._writes_file() or self._failure is not None or not self._finished:
            return
        self._on_write = None  # a stopped run shows no more: a display must not hide why
        in_progress = self._pending[self._finished :]
        del self._pending[self._finished :]
        records = self._pending_records  # one per pending line, when kept (only emit adds them)
        records_in_progress = None if records is None else records[self._finished :]
        if records is not None:
            del records[self._finished :]
        self._flush()
        self._pending = in_progress
        if records_in_progress is not None:
            self._pending_records = records_in_progress

    def interrupt(self, reason: str) -> Path | None:
        """End the file with what is pending and an ``interrupted`` line; returns where it is.

        Whatever happens, the file ends at a line boundary: a write that fails is cut back.
        """
        if not self._writes_file():
            return self.writing
        self._on_write = None  # a stopped run shows no more: a display must not hide why
        self._pending.append(encode_line(Interrupted(reason)))
        with contextlib.suppress(LogWriteError):  # a failed write is cut back to a whole line
            self._flush()
        self._file.abandon()
        return self.writing

    def _writes_file(self) -> bool:
        return self._file is not None and self._file.is_open

    def _flush(self) -> None:
        """Write what is pending (or keep it, with no file) and add it to the digest."""
        if not self._pending:
            return
        data = b"".join(self._pending)
        self._pending.clear()
        records = self._pending_records
        if records is not None:
            self._pending_records = []
        self._unwritten_deals = self._finished = 0
        self._written_at = self._clock()
        try:
            self._kept.add(data)
            if self._writes_file():
                self._file.write(data)
        except LogWriteError as failure:
            self._failure = failure  # every later emit raises it: the episode stops
            raise
        self._digest.update(data)
        if records:
            self._written(records)

    def _written(self, records: list[dict[str, Any]]) -> None:
        """Hand a write's records as made to whoever reads them (see :attr:`_pending_records`)."""
        if self._made is not None:
            if self.count > self.limits.keep_parsed:
                self._made = None
            else:
                self._made += records
        if self._on_write is not None:
            self._on_write(records)

    def __enter__(self) -> EventLog:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
