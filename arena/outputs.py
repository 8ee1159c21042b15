"""The files a command writes: never over one of its inputs, and never half-written.

Every output (a replay page, a report and its replay folder, a league's exported
figures and logs, a log's rewritten audit tail) goes through :class:`Outputs`:

- A path that is one of the command's inputs is refused before anything is
  written. Paths are compared by file identity (device and inode, following
  symlinks), so a second name for the input, a symlink or a hard link to it is
  caught as the input itself is; and by name, so an input that does not exist
  yet (a league's ``-wal`` or ``-shm``, which SQLite makes as it reads) is
  refused too.
- Each file is written to a hidden temporary file beside its target (the same
  folder, so on the same file system) and renamed into place only once every
  output of the command is staged. A write that fails (a full or read-only disk,
  a missing folder) removes the temporary files and leaves every old file
  exactly as it was.
- A file that replaces an old one is fsynced before its rename (and its folder
  after), so a crash leaves the old file or the new one, never an empty one. A
  new file has no old bytes to lose and is not synced: a sync costs about 5 ms a
  file here (bench/bench_outputs.py: 200 pages of 100 KB replaced in 1.0 s, where
  a plain write took 0.07 s), which a first report or export need not pay.
- A target that is a device or a pipe (``/dev/stdout``, ``/dev/null``, a FIFO)
  cannot be renamed over: it is written in place, as ``arena play --log`` writes
  one, so ``/dev/full`` fails with "No space left on device".

A process killed mid-write (kill -9, a power cut) may leave a hidden
``.NAME.XXXXXXXX.part`` behind, never a damaged ``NAME``. The event log streams
to its own ``NAME.part`` (:mod:`arena.eventlog`): it is written as the episode
runs, not in one piece.

A path that cannot be written at all (a missing folder, a directory, a read-only
disk) is the user's to fix: :class:`OutputRefused`, exit code 2, like an input
that would be overwritten. A write that fails part way (a full disk, an I/O
error) is :class:`OutputFailed`, exit code 1, like a full disk under ``--log``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterable
from pathlib import Path

NEW_FILE_MODE = 0o666
"""The mode a new output is created with, less the umask (what ``open(path, "w")`` gives)."""
TEMP_SUFFIX = ".part"


class OutputRefused(ValueError):
    """An output that would be written over an input, or a path that cannot be written to."""


class OutputFailed(OSError):
    """Writing an output failed part way; ``strerror`` is the one line for the user."""


RUNTIME_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG})
"""Failures of the write itself, not of the path chosen: :class:`OutputFailed`."""


class Outputs:
    """One command's output files, staged beside their targets and put in place together.

    Use it as a context manager: leaving the block normally renames every staged file
    into place; an exception removes them (and any folder made for them), so the old
    files stay as they were.
    """

    def __init__(self, inputs: Iterable[str | Path] = ()):
        self._inputs = [(Path(path), _identity(path)) for path in inputs]
        """Each input with its (device, inode), None for one that does not exist (yet)."""
        self._staged: list[tuple[Path, Path]] = []
        """(temporary file, target) for each regular file written so far."""
        self._replacing: set[Path] = set()
        """The folders of the staged files that replace an old file: synced after the renames."""
        self._made: list[Path] = []
        """Folders made for the outputs, removed again if the outputs are discarded."""

    def __enter__(self) -> Outputs:
        return self

    def __exit__(self, kind, exc, traceback) -> None:
        if kind is None:
            self.commit()
        else:
            self.discard()

    def folder(self, path: str | Path) -> Path:
        """A folder the command fills (made if missing): refused if it is, or holds, an input."""
        path = Path(path)
        self.check(path)
        found = _identity(path)
        for source, _ in self._inputs if found is not None else ():
            parents = Path(os.path.realpath(source)).parents
            if any(_identity(parent) == found for parent in parents):
                raise OutputRefused(f"{path} holds the input {source}; not writing into it")
        if path.exists() and not path.is_dir():
            raise OutputRefused(f"cannot write into {path}: it is not a folder")
        missing = [folder for folder in (path, *path.parents) if not folder.exists()]
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise _failure(f"cannot make {path}", exc) from None
        self._made += reversed(missing)
        return path

    def write(self, path: str | Path, data: str | bytes) -> None:
        """Stage ``data`` (text is written as UTF-8) for ``path``, or write a device now."""
        path = Path(path)
        self.check(path)
        body = data.encode() if isinstance(data, str) else data
        try:
            old = os.stat(path)
        except OSError:
            old = None
        if old is not None and stat.S_ISDIR(old.st_mode):
            raise OutputRefused(f"cannot write {path}: {os.strerror(errno.EISDIR)}")
        if old is not None and not stat.S_ISREG(old.st_mode):  # /dev/stdout may name a pipe
            _write_in_place(path, body)
            return
        target = Path(os.path.realpath(path))  # a symlinked output replaces what it points to
        try:
            fd = self._stage(target, old)
            try:
                _write_all(fd, body)
                if old is not None:
                    os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            raise _failure(f"cannot write {path}", exc) from None

    def commit(self) -> None:
        """Rename every staged file into place, then make the replacements durable."""
        folders, self._replacing = self._replacing, set()
        for done, (temp, target) in enumerate(self._staged):
            try:
                os.replace(temp, target)
            except OSError as exc:
                del self._staged[:done]  # those are in place; the rest are removed
                self.discard()
                raise _failure(f"cannot write {target}", exc) from None
        self._staged.clear()
        self._made.clear()
        for folder in folders:
            try:
                _fsync_folder(folder)
            except OSError as exc:
                raise _failure(f"cannot sync {folder}", exc) from None

    def discard(self) -> None:
        """Remove every staged file and the folders made for them; the old files stand."""
        for temp, _ in self._staged:
            temp.unlink(missing_ok=True)
        self._staged.clear()
        self._replacing.clear()
        for folder in reversed(self._made):
            with contextlib.suppress(OSError):  # something else was put there: leave it
                folder.rmdir()
        self._made.clear()

    def check(self, path: str | Path) -> None:
        """Refuse ``path`` if it is an input: called before the work of making an output,
        so that the refusal comes first (writing checks again)."""
        path = Path(path)
        found, named = _identity(path), os.path.realpath(path)
        for source, identity in self._inputs:
            if (found is not None and found == identity) or named == os.path.realpath(source):
                same = "" if path == source else f" (the same file as {source})"
                raise OutputRefused(f"{path} is an input of this command{same}; not writing it")

    def _stage(self, target: Path, old: os.stat_result | None) -> int:
        """A new hidden file beside ``target``, with the mode (and, where allowed, the owner)
        of the ``old`` file it replaces, kept in :attr:`_staged` at once so that a failure
        from here on removes it."""
        while True:
            temp = target.with_name(f".{target.name}.{secrets.token_hex(4)}{TEMP_SUFFIX}")
            try:
                fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, NEW_FILE_MODE)
            except FileExistsError:
                continue
            self._staged.append((temp, target))
            if old is not None:
                self._replacing.add(target.parent)
                os.fchmod(fd, stat.S_IMODE(old.st_mode))
                with contextlib.suppress(PermissionError):  # only root may give a file away
                    os.fchown(fd, old.st_uid, old.st_gid)
            return fd


def _write_in_place(path: Path, body: bytes) -> None:
    """A device or pipe: opened as it is and written, never replaced."""
    try:
        fd = os.open(path, os.O_WRONLY)
        try:
            _write_all(fd, body)
        finally:
            os.close(fd)
    except OSError as exc:
        raise _failure(f"cannot write {path}", exc) from None


def _failure(what: str, exc: OSError) -> OutputRefused | OutputFailed:
    """The one line for a failed output: :class:`OutputFailed` when the write itself failed,
    else :class:`OutputRefused` (the path cannot be written: missing, read-only, ...)."""
    message = f"{what}: {exc.strerror or exc}"
    if exc.errno in RUNTIME_ERRNOS:
        return OutputFailed(exc.errno, message)
    return OutputRefused(message)


def _identity(path: str | Path) -> tuple[int, int] | None:
    """The file's (device, inode), following symlinks; None for a path that does not exist."""
    try:
        found = os.stat(path)
    except (OSError, ValueError):
        return None
    return found.st_dev, found.st_ino


def _write_all(fd: int, body: bytes) -> None:
    view = memoryview(body)
    while view:
        view = view[os.write(fd, view) :]


def _fsync_folder(folder: Path) -> None:
    """Make the renames in ``folder`` durable; a file system that cannot sync a folder
    (EINVAL) keeps them as its own writes."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno != errno.EINVAL:
            raise
    finally:
        os.close(fd)
