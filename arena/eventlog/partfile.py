"""The log's file, from ``NAME.part`` to ``NAME``: never lost, never clobbered.

A log is written to ``NAME.part`` and renamed to ``NAME`` only when the episode
settles; an existing file is refused unless the caller forces it. A device or pipe
(``/dev/null``) is written in place. A write that fails is cut back to the last
whole line and the file is ended with an ``interrupted`` line, so a reader can tell
a stopped log from one still being written; a file that never got a whole line
(a disk full from the start) is removed, so no empty ``.part`` blocks the next run.
"""

from __future__ import annotations

import errno
import os
import stat
from collections import deque
from collections.abc import Iterator
from pathlib import Path

from arena.eventlog.errors import LogExists, LogWriteError
from arena.eventlog.reader import whole_lines
from arena.events import Interrupted, encode_line

PART_SUFFIX = ".part"
DISK_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})
"""A write that failed for want of room: the error says "disk full"."""


class PartFile:
    """One log's file while it is written: its name, its descriptor and its last whole line.

    ``max_writes_cut`` is how many whole writes (each of whole deals) a full disk may cut
    from the end to make room for the ``interrupted`` marker.
    """

    def __init__(self, path: Path, *, force: bool, max_writes_cut: int):
        if path.is_dir():
            raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
        self.in_place = _is_special(path)
        """A device or pipe: written where it is, and never read back."""
        if not self.in_place and path.exists() and not force:
            raise LogExists(f"{path} exists; use --force to overwrite it")
        self.path = path
        self.writing = path if self.in_place else path.with_name(path.name + PART_SUFFIX)
        """The file the bytes go to: ``path.part``, or ``path`` itself for a device."""
        self._force = force
        self._committed = 0
        """Bytes of whole lines known to be in the file: where a failed write is cut back to."""
        self._boundaries: deque[int] = deque(maxlen=max_writes_cut)
        """The latest earlier values of ``_committed``: write boundaries, each after a whole
        deal, that a full disk may cut to."""
        flags = os.O_WRONLY | os.O_CREAT
        if not self.in_place:
            flags |= os.O_TRUNC if force else os.O_EXCL
        try:
            self._fd: int | None = os.open(self.writing, flags, 0o644)
        except FileExistsError:
            raise LogExists(
                f"{self.writing} exists (an unfinished log?); use --force to overwrite it"
            ) from None

    @property
    def is_open(self) -> bool:
        """Still being written: not closed, abandoned, or stopped by a failed write."""
        return self._fd is not None

    def write(self, data: bytes) -> None:
        """Append whole lines; a failure cuts the file back and marks it (see above)."""
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view) :]
        except OSError as exc:
            self._cut_back()
            cause = exc.strerror or type(exc).__name__
            reason = f"disk full ({cause})" if exc.errno in DISK_FULL else cause
            failure = f"cannot write event log {self.writing}: {reason}"
            if not _is_special(self.writing) and not self._committed:
                # not one line was written: no log to keep, nor a .part for the next run to trip on
                self._remove()
                failure = f"cannot write event log {self.path}: {reason}; nothing was kept"
            elif not _is_special(self.writing):
                self._mark_failed(cause)
            raise LogWriteError(exc.errno, failure) from None
        if self._committed:
            self._boundaries.append(self._committed)
        self._committed += len(data)

    def read_back(self, block_bytes: int) -> Iterator[bytes]:
        """The lines written so far, in blocks of whole lines, exactly their bytes."""
        path = self.writing if self._fd is not None else self.path
        with open(path, "rb") as file:
            yield from whole_lines(file.read, self._committed, path, block_bytes)

    def close(self) -> None:
        """Close the file and give it its final name (refusing one that appeared meanwhile)."""
        os.close(self._fd)
        self._fd = None
        if self.writing != self.path:
            if self.path.exists() and not self._force:
                raise LogExists(
                    f"{self.path} appeared while the episode ran; the log is kept at {self.writing}"
                )
            os.replace(self.writing, self.path)

    def abandon(self) -> None:
        """Stop writing and leave the file as it is, under its ``.part`` name."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _mark_failed(self, cause: str) -> None:
        """After a failed write: leave the ``interrupted`` marker, then stop writing.

        A full disk may have no room even for the marker; then whole deals are cut from
        the end, one write at a time, until the marker fits: a stopped log must say it
        was stopped, and what remains is whole deals.
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
        self.abandon()

    def _remove(self) -> None:
        """Stop writing and remove the file: it holds no line."""
        self.abandon()
        os.unlink(self.writing)

    def _cut_back(self) -> None:
        try:
            os.ftruncate(self._fd, self._committed)
            os.lseek(self._fd, self._committed, os.SEEK_SET)
        except OSError as exc:
            if exc.errno not in (errno.EINVAL, errno.ESPIPE):  # devices cannot be cut
                raise


def _is_special(path: Path) -> bool:
    """A device, pipe or socket: written in place, never renamed over."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)
