"""Writing and reading the JSON Lines event log.

The writer keeps every line in memory (reporters read the finished log) and
streams it to a file as the episode runs, writing at each deal boundary so a
crash loses at most the deal in progress. Reporters always parse the lines
back, so an episode's audit and the audit of its saved file read the same bytes.

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
import json
import os
import stat
from pathlib import Path
from typing import Any

from arena.events import (
    BOUNDED_INTS,
    ChallengeMade,
    EpisodeSettled,
    EpisodeStarted,
    Event,
    Interrupted,
    from_record,
    may_hold_long_int,
    parse_fast,
    to_line,
)

_FLUSH_AFTER = (ChallengeMade, EpisodeSettled)
_CHUNK = 4096
"""Lines joined at a time when the whole log is read back: a long log is never one string."""
PART_SUFFIX = ".part"
MAX_DEALS_CUT = 16
"""How many whole deals a full disk may cost at most to make room for the marker."""


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
    """

    def __init__(self, path: str | Path | None = None, *, force: bool = False):
        self.lines: list[str] = []
        self._long_ints: list[int] = []
        """Indexes of the lines that may hold an int past 64 bits: parsed by the stdlib."""
        self.path = None if path is None else Path(path)
        self.writing: Path | None = None
        """The file the bytes go to: ``path.part``, or ``path`` itself for a device."""
        self._fd: int | None = None
        self._pending: list[str] = []
        self._committed = 0
        """Bytes of whole lines known to be in the file: where a failed write is cut back to."""
        self._boundaries: list[int] = []
        """Earlier values of ``_committed``: deal boundaries, where a full disk may cut to."""
        self._force = force
        self._failure: LogWriteError | None = None
        if self.path is not None:
            self._open()

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
        line = to_line(event)
        if type(event) not in BOUNDED_INTS and may_hold_long_int(line):
            self._long_ints.append(len(self.lines))
        self.lines.append(line)
        if self._fd is not None:
            self._pending.append(line + "\n")
            if isinstance(event, _FLUSH_AFTER):
                self._flush()

    def emit_deals(self, text: str) -> None:
        """Whole deals' lines, already encoded (by the compiled engine), each ending in a
        newline: kept and written as :meth:`emit` keeps and writes an event's line.

        They are per-decision lines (:data:`BOUNDED_INTS`), so none needs the long-int check.
        """
        if self._failure is not None:
            raise self._failure
        self.lines += text.splitlines()
        if self._fd is not None:
            self._pending.append(text)
            self._flush()

    def records(self) -> list[dict[str, Any]]:
        # Chunks of lines parsed as JSON arrays: the same records, at half the cost of a
        # json.loads per line, without ever joining a long log into one string.
        records = []
        for chunk in self._chunks():
            records += parse_fast("[" + ",".join(chunk) + "]")
        for index in self._long_ints:
            records[index] = json.loads(self.lines[index])
        return records

    def text(self) -> str:
        """The log's bytes as they are (or would be) saved."""
        return "".join(line + "\n" for line in self.lines)

    def sha256(self) -> str:
        """The hex SHA-256 of :meth:`text`'s UTF-8 bytes, hashed a chunk at a time."""
        digest = hashlib.sha256()
        for chunk in self._chunks():
            digest.update("".join(line + "\n" for line in chunk).encode("utf-8"))
        return digest.hexdigest()

    def _chunks(self):
        for start in range(0, len(self.lines), _CHUNK):
            yield self.lines[start : start + _CHUNK]

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

    def interrupt(self, reason: str) -> Path | None:
        """End the file with what is pending and an ``interrupted`` line; returns where it is.

        Whatever happens, the file ends at a line boundary: a write that fails is cut back.
        """
        if self._fd is None:
            return self.writing
        event = Interrupted(reason)
        self.lines.append(to_line(event))
        self._pending.append(self.lines[-1] + "\n")
        with contextlib.suppress(LogWriteError):  # _flush cuts the file back to a whole line
            self._flush()
        self._abandon()
        return self.writing

    def _flush(self) -> None:
        if not self._pending:
            return
        data = "".join(self._pending).encode("utf-8")
        self._pending.clear()
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
        the end, one flush boundary at a time (a few at most), until the marker fits: a
        stopped log must say it was stopped, and what remains is whole deals.
        """
        marker = (to_line(Interrupted(f"write error: {cause}")) + "\n").encode("utf-8")
        for offset in [self._committed, *reversed(self._boundaries[-MAX_DEALS_CUT:])]:
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


def _is_special(path: Path) -> bool:
    """A device, pipe or socket: written in place, never renamed over."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def read_log(path: str | Path) -> list[dict[str, Any]]:
    """Every record of a saved log, each checked against the event vocabulary."""
    return [record for _number, record in read_numbered(path)]


def read_numbered(path: str | Path) -> list[tuple[int, dict[str, Any]]]:
    """:func:`read_log`'s records with their line numbers in the file (blank lines skipped)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LogError(f"{path}: cannot read event log ({exc.__class__.__name__})") from None
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if not isinstance(record, dict):
                raise ValueError("not a JSON object")
            from_record(record)
        except (ValueError, TypeError) as exc:
            raise LogError(f"{path}:{number}: not a valid event ({_first_line(exc)})") from None
        records.append((number, record))
    if not records or records[0][1]["type"] != EpisodeStarted.TYPE:
        raise LogError(f"{path}: not an event log (the first line must be an episode event)")
    return records


def _first_line(exc: BaseException) -> str:
    text = str(exc).splitlines()
    return text[0] if text else type(exc).__name__
