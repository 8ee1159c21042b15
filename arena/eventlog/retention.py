"""The bytes a log keeps to read itself back, in bounded memory.

A short log is kept in memory, so its records are read back without reopening a
file. Past ``keep_bytes`` a log written to a regular file keeps nothing (the file is
read back); one with no file to read back (no path, or a device) moves its bytes to
an unnamed temporary file, gone when the log is. Either way an episode's memory is
bounded in its deals.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from typing import BinaryIO, NoReturn

from arena.eventlog.errors import LogWriteError
from arena.eventlog.reader import whole_lines


class KeptBytes:
    """A log's written bytes, held while small, spilled to a temporary file or let go."""

    def __init__(self, keep_bytes: int, *, file_to_read: bool):
        self._keep_bytes = keep_bytes
        self._file_to_read = file_to_read
        """Whether the log's own file can be read back once the bytes are let go."""
        self.chunks: list[bytes] | None = []
        """Every written chunk of whole lines, while the log is small or has no file to
        read back; ``None`` once it outgrows ``keep_bytes``."""
        self._size = 0
        self.spill: BinaryIO | None = None
        """The unnamed temporary file that holds the bytes of a long log with no file to
        read back, once they outgrow ``keep_bytes``."""
        self._spilled = 0
        """Bytes written to :attr:`spill`."""

    def add(self, data: bytes) -> None:
        """Keep a write's bytes (or spill them); a failed spill is a :class:`LogWriteError`."""
        if self.chunks is not None:
            self.chunks.append(data)
            self._size += len(data)
            if self._size > self._keep_bytes:
                if not self._file_to_read:
                    self._spill_chunks()
                self.chunks = None  # read back from the file (or the spill) from now on
        elif self.spill is not None:
            self._to_spill(data)

    def read_spill(self, block_bytes: int) -> Iterator[bytes]:
        """The spilled bytes in blocks of whole lines, exactly as written."""
        yield from whole_lines(_reader_at(self.spill.fileno()), self._spilled, "spill", block_bytes)

    def _spill_chunks(self) -> None:
        try:
            # open as long as the log is: its LogRecords read it back after close()
            self.spill = tempfile.TemporaryFile(prefix="arena-log-", buffering=0)  # noqa: SIM115
        except OSError as exc:
            _spill_failed(exc)
        for chunk in self.chunks or ():
            self._to_spill(chunk)

    def _to_spill(self, data: bytes) -> None:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(self.spill.fileno(), view) :]
        except OSError as exc:
            _spill_failed(exc)
        self._spilled += len(data)


def _spill_failed(exc: OSError) -> NoReturn:
    raise LogWriteError(
        exc.errno,
        f"cannot keep the event log in a temporary file: {exc.strerror or exc}"
        " (set TMPDIR to a folder with room, or save the log to a file)",
    ) from None


def _reader_at(fd: int) -> Callable[[int], bytes]:
    """A ``read(n)`` of ``fd`` from its start that leaves its offset (where writes go) alone."""
    offset = 0

    def read(size: int) -> bytes:
        nonlocal offset
        block = os.pread(fd, size, offset)
        offset += len(block)
        return block

    return read
