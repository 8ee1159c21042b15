"""Writing and reading the JSON Lines event log.

The writer streams the log to a file as the episode runs, writing whole deals
(each one as it ends on a slow table, sixteen at a time on a fast one), so a
crash loses at most the deal in progress and 50 ms or 16 deals of play before
it. Of a long log it keeps only a running digest; a short one is also kept in
memory, and a long one with no file to read back (no path, or a device) in an
unnamed temporary file, so an episode's memory is bounded in its deals. Reporters
always parse the lines back (:class:`LogRecords`, from the file, that memory or
that temporary file), so an episode's audit and the audit of its saved file read
the same bytes, and a long episode's audit runs in bounded memory. The one
exception is our own soft-play tally, which reads a list and a tuple alike: on a
short log it may read the records as the Python engine made them
(:meth:`EventLog.take_made`), which spares the parse.

A log is never lost or clobbered: it is written to ``NAME.part`` and renamed to
``NAME`` only when the episode settles; an existing file is refused unless the
caller forces it. A run that is stopped (a signal, a failed write) leaves the
``.part`` file ending at a line boundary with an ``interrupted`` line, so a
reader can tell a stopped log from one still being written.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import itertools
import json
import math
import os
import stat
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO, NoReturn

from arena.events import (
    BOUNDED_INTS,
    Audit,
    ChallengeMade,
    EpisodeSettled,
    EpisodeStarted,
    Event,
    Interrupted,
    encode_line,
    encode_record,
    from_line,
    from_record,
    may_hold_long_int,
    parse_fast,
)

_DEAL_ENDS = frozenset({ChallengeMade, EpisodeSettled})
WRITE_EVERY_DEALS = 16
WRITE_EVERY_SECONDS = 0.05
"""Finished deals are written once 16 wait or 50 ms have passed since the last write
(and at the ``result`` line): a slow table writes every deal as it ends, a fast one
sixteen at a time, which costs one system call per 16 deals, not per deal."""
_BLOCK = 1 << 20
"""Bytes read at a time when a log is read back from its file: a long log is never one string."""
KEEP_BYTES = 1 << 20
"""A log written to a file is also kept in memory up to this size, so a short episode's
records are read back without reopening the file; a longer one is read from the file."""
PART_SUFFIX = ".part"
MAX_WRITES_CUT = 16
"""How many whole writes (each of one to 16 deals) a full disk may cut to make room
for the marker."""


class LogError(ValueError):
    """A log file that is missing, unreadable or not an event log; one line, with position."""


class LogExists(FileExistsError):
    """The log's path (or its ``.part``) already exists and overwriting was not asked for."""


class LogWriteError(OSError):
    """Writing the log failed (a full disk, an I/O error); the message is one line."""


class EventLog:
    """The sink the engine emits to, optionally streaming to a file.

    ``path`` names the finished log. A regular file (or a missing path) is written as
    ``path.part`` and renamed on :meth:`close`; a device or pipe (``/dev/null``) is
    written in place. Without ``force`` an existing regular file is refused.

    Memory stays bounded for a log written to a regular file: past :data:`KEEP_BYTES`
    its lines are not kept, only their running SHA-256, and :meth:`stream` reads them
    back from the file. A log with no file, or one going to a device that cannot be
    read back, keeps its bytes too, and past :data:`KEEP_BYTES` moves them to an unnamed
    temporary file (gone when the log is): memory stays bounded there as well.
    """

    def __init__(self, path: str | Path | None = None, *, force: bool = False):
        self.count = 0
        """Lines emitted so far."""
        self._long_ints: list[int] = []
        """Indexes of the lines that may hold an int past 64 bits: parsed by the stdlib."""
        self._audits = 0
        """``audit`` lines emitted (they follow ``result``; reporters read the log without them)."""
        self.path = None if path is None else Path(path)
        self.writing: Path | None = None
        """The file the bytes go to: ``path.part``, or ``path`` itself for a device."""
        self._fd: int | None = None
        self._pending: list[bytes] = []
        self._kept: list[bytes] | None = []
        """Every flushed chunk of whole lines, while the log is small or has no regular
        file to read back; ``None`` once a file's log outgrows :data:`KEEP_BYTES`."""
        self._kept_bytes = 0
        self._spill: BinaryIO | None = None
        """The unnamed temporary file that holds the bytes of a long log with no file to read
        back (see :attr:`_keeps_all`), once they outgrow :data:`KEEP_BYTES`."""
        self._spilled = 0
        """Bytes written to :attr:`_spill`."""
        self._digest = hashlib.sha256()
        self._committed = 0
        """Bytes of whole lines known to be in the file: where a failed write is cut back to."""
        self._boundaries: deque[int] = deque(maxlen=MAX_WRITES_CUT)
        """The latest earlier values of ``_committed``: write boundaries, each after a whole
        deal, that a full disk may cut to."""
        self._force = force
        self._failure: LogWriteError | None = None
        self.last_line = b""
        """The latest line :meth:`emit` took, as encoded (for a caller that shows it live)."""
        self._first_line = b""
        """The header's line, so a reader of the header alone parses no more."""
        self._pending_records: list[dict[str, Any]] | None = None
        """The pending lines' records as their events made them, while something reads
        them (:meth:`keep_made`, :meth:`follow_writes`); ``None`` otherwise."""
        self._made: list[dict[str, Any]] | None = None
        """The written lines' records as made, from :meth:`keep_made` on, while the log has
        at most :data:`KEEP_PARSED` lines; ``None`` otherwise."""
        self._on_write: Callable[[list[dict[str, Any]]], None] | None = None
        """Handed each write's records as made, once written (:meth:`follow_writes`)."""
        self._unwritten_deals = 0
        self._finished = 0
        """How many of the pending lines belong to deals that have ended."""
        self._written_at = time.monotonic()
        if self.path is not None:
            self._open()
        self._keeps_all = self.path is None or self.writing == self.path
        """No file, or a device: the bytes can be read back only from memory or the spill."""

    def _open(self) -> None:
        if self.path.is_dir():
            raise IsADirectoryError(errno.EISDIR, "is a directory", str(self.path))
        in_place = _is_special(self.path)
        if not in_place and self.path.exists() and not self._force:
            raise LogExists(f"{self.path} exists; use --force to overwrite it")
        self.writing = self.path if in_place else self.path.with_name(self.path.name + PART_SUFFIX)
        flags = os.O_WRONLY | os.O_CREAT
        if not in_place:
            flags |= os.O_TRUNC if self._force else os.O_EXCL
        try:
            self._fd = os.open(self.writing, flags, 0o644)
        except FileExistsError:
            raise LogExists(
                f"{self.writing} exists (an unfinished log?); use --force to overwrite it"
            ) from None

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
            or self._unwritten_deals >= WRITE_EVERY_DEALS
            or time.monotonic() - self._written_at >= WRITE_EVERY_SECONDS
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
        :data:`KEEP_PARSED` lines were emitted (memory stays bounded) or if never asked.

        They are the records a parse of the lines gives, except that a list there is a
        tuple here and the header's seats are :class:`~arena.events.SeatEntry` objects:
        for a reader that reads both alike and would otherwise parse the log back
        (:func:`arena.audit.run_audit`)."""
        made, self._made = self._made, None
        pending = self._pending_records or []
        if self._on_write is None:
            self._pending_records = None
        if made is None or self.count > KEEP_PARSED:
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
        )

    def _chunks(self) -> Iterator[list[dict[str, Any]]]:
        """Parsed records, a chunk of whole lines at a time, from memory or the file."""
        first = 0
        for data in self._kept if self._kept is not None else self._read_back():
            # The chunk's lines as one JSON array: one parse instead of one per line ...
            records = parse_fast(b"[" + data[:-1].replace(b"\n", b",") + b"]")
            if self._long_ints and first <= self._long_ints[-1]:
                # ... then each line that may hold an int past 64 bits again, by the stdlib
                # (orjson reads such an int as a float): a league's 62-bit seed, say.
                lines = data.split(b"\n")
                for index in self._long_ints:
                    if first <= index < first + len(records):
                        records[index - first] = json.loads(lines[index - first])
            yield records
            first += len(records)

    def _read_back(self) -> Iterator[bytes]:
        """The written file (or the spill) in blocks of whole lines, exactly its bytes."""
        if self._spill is not None:
            yield from _whole_lines(_reader_at(self._spill.fileno()), self._spilled, "spill")
            return
        path = self.writing if self._fd is not None else self.path
        with open(path, "rb") as file:
            yield from _whole_lines(file.read, self._committed, path)

    def text(self) -> str:
        """The log's bytes as they are (or would be) saved."""
        return self._bytes().decode("utf-8")

    def _bytes(self) -> bytes:
        self._flush()
        if self._kept is not None:
            return b"".join(self._kept)
        return b"".join(self._read_back())

    def sha256(self) -> str:
        """The hex SHA-256 of :meth:`text`'s UTF-8 bytes, kept as the lines were emitted."""
        self._flush()
        return self._digest.hexdigest()

    def close(self) -> None:
        """Write what is pending and give the log its final name."""
        if self._fd is None:
            return
        self._flush()
        os.close(self._fd)
        self._fd = None
        if self.writing != self.path:
            if self.path.exists() and not self._force:
                raise LogExists(
                    f"{self.path} appeared while the episode ran; the log is kept at {self.writing}"
                )
            os.replace(self.writing, self.path)

    def write_finished(self) -> None:
        """Write the deals that have ended and wait their turn, not the one in progress:
        after an error that stops the run (not a signal, which :meth:`interrupt` marks),
        the file still ends at the last finished deal."""
        if self._fd is None or self._failure is not None or not self._finished:
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
        if self._fd is None:
            return self.writing
        self._on_write = None  # a stopped run shows no more: a display must not hide why
        self._pending.append(encode_line(Interrupted(reason)))
        with contextlib.suppress(LogWriteError):  # _flush cuts the file back to a whole line
            self._flush()
        self._abandon()
        return self.writing

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
        self._written_at = time.monotonic()
        if self._kept is not None:
            self._kept.append(data)
            self._kept_bytes += len(data)
            if self._kept_bytes > KEEP_BYTES:
                if self._keeps_all:
                    self._spill_kept()
                self._kept = None  # read back from the file (or the spill) from now on
        elif self._spill is not None:
            self._to_spill(data)
        if self._fd is not None:
            self._write(data)
        self._digest.update(data)
        if records:
            self._written(records)

    def _written(self, records: list[dict[str, Any]]) -> None:
        """Hand a write's records as made to whoever reads them (see :attr:`_pending_records`)."""
        if self._made is not None:
            if self.count > KEEP_PARSED:
                self._made = None
            else:
                self._made += records
        if self._on_write is not None:
            self._on_write(records)

    def _spill_kept(self) -> None:
        """Move the kept bytes to an unnamed temporary file (see :attr:`_spill`)."""
        try:
            # open as long as the log is: its LogRecords read it back after close()
            self._spill = tempfile.TemporaryFile(prefix="arena-log-", buffering=0)  # noqa: SIM115
        except OSError as exc:
            self._spill_failed(exc)
        for chunk in self._kept or ():
            self._to_spill(chunk)

    def _to_spill(self, data: bytes) -> None:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(self._spill.fileno(), view) :]
        except OSError as exc:
            self._spill_failed(exc)
        self._spilled += len(data)

    def _spill_failed(self, exc: OSError) -> NoReturn:
        failure = LogWriteError(
            exc.errno,
            f"cannot keep the event log in a temporary file: {exc.strerror or exc}"
            " (set TMPDIR to a folder with room, or save the log to a file)",
        )
        self._failure = failure
        raise failure from None

    def _write(self, data: bytes) -> None:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view) :]
        except OSError as exc:
            self._cut_back()
            failure = LogWriteError(
                exc.errno, f"cannot write event log {self.writing}: {exc.strerror or exc}"
            )
            self._failure = failure
            if not _is_special(self.writing):
                self._mark_failed(exc.strerror or type(exc).__name__)
            raise failure from None
        if self._committed:
            self._boundaries.append(self._committed)
        self._committed += len(data)

    def _mark_failed(self, cause: str) -> None:
        """After a failed write: leave the ``interrupted`` marker, then stop writing.

        A full disk may have no room even for the marker; then whole deals are cut from
        the end, one write at a time (16 writes at most), until the marker fits: a
        stopped log must say it was stopped, and what remains is whole deals.
        """
        marker = encode_line(Interrupted(f"write error: {cause}"))
        for offset in [self._committed, *reversed(self._boundaries)]:
            try:
                os.ftruncate(self._fd, offset)
                os.lseek(self._fd, offset, os.SEEK_SET)
                if os.write(self._fd, marker) == len(marker):
                    self._committed = offset + len(marker)
                    break
            except OSError:
                continue
        self._cut_back()
        self._abandon()

    def _cut_back(self) -> None:
        try:
            os.ftruncate(self._fd, self._committed)
            os.lseek(self._fd, self._committed, os.SEEK_SET)
        except OSError as exc:
            if exc.errno not in (errno.EINVAL, errno.ESPIPE):  # devices cannot be cut
                raise

    def _abandon(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> EventLog:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


class LogRecords(Sequence[dict[str, Any]]):
    """A log's records as a reader parses them, without holding a long log in memory.

    Iterate it as often as needed. A log of up to :data:`KEEP_PARSED` lines is parsed
    on first use and kept; a longer one is parsed again, a chunk at a time, on every
    pass, so a 100,000-deal episode's reporters fold over it in bounded memory. ``[0]``
    (the header) is its own line's parse; any other index of a long log walks to it.
    :meth:`data` is the lines' bytes, unparsed. The view is fixed at the lines the log
    had when it was taken: lines emitted later are not in it. It compares equal to a
    list of the same records, and copies and pickles as one.
    """

    def __init__(
        self,
        chunks: Callable[[], Iterator[list[dict[str, Any]]]],
        count: int,
        *,
        has_audit: bool,
        first_line: bytes,
        data: Callable[[], bytes],
    ):
        self._chunks = chunks
        self._count = count
        self._first_line = first_line
        self._data = data
        self.has_audit = has_audit
        """Whether it holds ``audit`` lines (the tail a finished run appended)."""
        self._parsed: list[dict[str, Any]] | None = None
        """The records, once a short log has been read (not before: a reader of the
        header alone, such as an audit handed the compiled engine's tallies, parses no more)."""
        self._header: dict[str, Any] | None = None

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[dict[str, Any]]:
        parsed = self._short()
        return iter(parsed) if parsed is not None else self._walk()

    def _short(self) -> list[dict[str, Any]] | None:
        """A short log's records, parsed on first use; ``None`` for a long log."""
        if self._parsed is None and self._count <= KEEP_PARSED:
            self._parsed = list(self._walk())
        return self._parsed

    def data(self) -> bytes:
        """The log's lines as saved (UTF-8, each ending in a newline), without a parse:
        for a caller that keeps or sends the log itself (a league stores it)."""
        data = self._data()
        if data.count(b"\n") == self._count:
            return data
        end = 0  # the log has grown since this view was taken: its first lines only
        for _ in range(self._count):
            end = data.index(b"\n", end) + 1
        return data[:end]

    def _walk(self) -> Iterator[dict[str, Any]]:
        left = self._count
        for chunk in self._chunks():
            if len(chunk) >= left:
                yield from chunk[:left]
                return
            left -= len(chunk)
            yield from chunk

    def __getitem__(self, index):
        if index == 0 and self._parsed is None and self._first_line:
            if self._header is None:  # the header's line alone, not its chunk
                self._header = from_line(self._first_line.decode("utf-8"))
            return self._header
        parsed = self._short()
        if parsed is not None:
            return parsed[index]
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._count))]
        position = index + self._count if index < 0 else index
        if not 0 <= position < self._count:
            raise IndexError("log record index out of range")
        return next(itertools.islice(self._walk(), position, None))

    def __eq__(self, other) -> bool:
        if not isinstance(other, (list, LogRecords)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # equal to a list, so unhashable like one

    def __reduce__(self):
        """A copy or a pickle is a plain list of the records: a thing to edit or send."""
        return list, (list(self),)

    def __repr__(self) -> str:
        return f"LogRecords({self._count} records)"


KEEP_PARSED = 20_000
"""Lines up to which :class:`LogRecords` keeps its records parsed (about 10 MB of them)."""


def _whole_lines(read: Callable[[int], bytes], size: int, where) -> Iterator[bytes]:
    """The first ``size`` bytes ``read`` gives, in blocks that each end at a line's end."""
    left = size
    carry = b""
    while left > 0:
        block = read(min(_BLOCK, left))
        if not block:
            raise LogError(f"{where}: the log was cut short while the episode ran")
        left -= len(block)
        block = carry + block
        end = block.rfind(b"\n") + 1
        carry = block[end:]
        if end:
            yield block[:end]


def _reader_at(fd: int) -> Callable[[int], bytes]:
    """A ``read(n)`` of ``fd`` from its start that leaves its offset (where writes go) alone."""
    offset = 0

    def read(size: int) -> bytes:
        nonlocal offset
        block = os.pread(fd, size, offset)
        offset += len(block)
        return block

    return read


def _is_special(path: Path) -> bool:
    """A device, pipe or socket: written in place, never renamed over."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


MAX_LINE_BYTES = 1 << 26
"""The longest line a reader takes (64 MiB): far past any line the arena writes, and a
file of one endless line is refused at this size instead of being held in memory."""


def read_log(path: str | Path) -> list[dict[str, Any]]:
    """Every record of a saved log, each checked against the event vocabulary."""
    return [record for _number, record in read_numbered(path)]


def read_numbered(path: str | Path) -> list[tuple[int, dict[str, Any]]]:
    """:func:`read_log`'s records with their line numbers in the file (blank lines skipped)."""
    records = [(number, parse_line(line, f"{path}:{number}")) for number, line in log_lines(path)]
    _check_header(records, path)
    return records


def parse_text(text: str, source: str) -> list[dict[str, Any]]:
    """The records of a log held in memory (a league's stored log), read as a file's are;
    errors name ``source`` and the line."""
    records = [
        (number, parse_line(line, f"{source}:{number}"))
        for number, line in enumerate(text.split("\n"), start=1)
        if line.strip(_JSON_SPACE)
    ]
    _check_header(records, source)
    return [record for _number, record in records]


def log_lines(path: str | Path) -> Iterator[tuple[int, bytes]]:
    """The file's lines and their numbers: JSON Lines end at ``\\n`` and nowhere else (a
    record's text may hold any other line break), blank lines are skipped, and a line past
    :data:`MAX_LINE_BYTES` is refused. The file is read a block at a time."""
    number, parts, size = 0, [], 0
    try:
        with open(path, "rb") as file:
            while block := file.read(_BLOCK):
                lines = block.split(b"\n")
                if len(lines) == 1:  # the line goes on past this block
                    parts.append(block)
                    size += len(block)
                    if size > MAX_LINE_BYTES:
                        raise _too_long(path, number + 1)
                    continue
                if parts:
                    lines[0] = b"".join([*parts, lines[0]])
                tail = lines.pop()
                parts, size = [tail], len(tail)
                for line in lines:
                    number += 1
                    if len(line) > MAX_LINE_BYTES:
                        raise _too_long(path, number)
                    if line.strip(_JSON_SPACE_BYTES):
                        yield number, line
    except OSError as exc:
        raise LogError(f"{path}: cannot read event log ({exc.__class__.__name__})") from None
    last = b"".join(parts)
    if last.strip(_JSON_SPACE_BYTES):
        yield number + 1, last


def parse_line(line: bytes | str, where: str) -> dict[str, Any]:
    """One line's record, checked against the event vocabulary, or a one-line
    :class:`LogError` that starts with ``where`` (``FILE:LINE``).

    The line is read strictly: UTF-8 only, no ``NaN`` or ``Infinity`` (not JSON) nor a
    number past a float's range, no key twice (other readers would take the other
    value), and no nesting so deep that a parser gives up.
    """
    try:
        text = line if isinstance(line, str) else line.decode("utf-8")
        record = _STRICT_JSON.decode(text)
        if not isinstance(record, dict):
            raise ValueError("not a JSON object")
        from_record(record)
    except UnicodeDecodeError as exc:
        bad = exc.object[exc.start : exc.start + 1].hex()
        reason = f"not UTF-8: byte 0x{bad} at column {exc.start + 1}"
        raise LogError(f"{where}: not a valid event ({reason})") from None
    except RecursionError:
        raise LogError(f"{where}: not a valid event (nested too deeply)") from None
    except (ValueError, TypeError) as exc:
        raise LogError(f"{where}: not a valid event ({_first_line(exc)})") from None
    return record


def _check_header(records: list[tuple[int, dict[str, Any]]], source: str | Path) -> None:
    if not records or records[0][1]["type"] != EpisodeStarted.TYPE:
        raise LogError(f"{source}: not an event log (the first line must be an episode event)")


def _too_long(path: str | Path, number: int) -> LogError:
    return LogError(f"{path}:{number}: not a valid event (a line past {MAX_LINE_BYTES:,} bytes)")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    record = dict(pairs)
    if len(record) != len(pairs):
        seen: set[str] = set()
        for key, _value in pairs:
            if key in seen:
                raise ValueError(f"key {key!r} appears twice")
            seen.add(key)
    return record


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e400 would read as infinity
        raise ValueError(f"{text[:40]} is past a float's range")
    return value


_STRICT_JSON = json.JSONDecoder(
    object_pairs_hook=_unique_keys, parse_constant=_no_constant, parse_float=_finite
)
_JSON_SPACE = " \t\r"
_JSON_SPACE_BYTES = _JSON_SPACE.encode()


def _first_line(exc: BaseException) -> str:
    text = str(exc).splitlines()
    return text[0] if text else type(exc).__name__
