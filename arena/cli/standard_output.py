"""The command's standard output, whose write errors are told apart from any other.

A command prints its results on stdout, and stdout can fail: ``/dev/full`` or a full
disk (ENOSPC), a failing device (EIO). Python raises the same ``OSError`` there as
for any file the command reads, and, stdout being buffered when it is not a
terminal, often only when the buffer is flushed: at the interpreter's exit, after
``main`` returned 0. :func:`guarded` wraps ``sys.stdout`` for the length of a
command so that such an error is :class:`StdoutFailed`, which :func:`arena.cli.main`
turns into one ``arena: error:`` line, after flushing what is left inside the
same guard. A reader that went away (``arena play --json | head``) is not an error
at all: ``BrokenPipeError`` passes through unchanged, for ``main`` to leave quietly.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import sys
from collections.abc import Iterator
from typing import Any, TextIO


class StdoutFailed(OSError):
    """Writing the command's standard output failed; ``strerror`` is the one line.

    Not an :class:`arena.outputs.OutputFailed`: what failed is not a file the command
    can remove again, and what was still buffered for it must be discarded."""


class GuardedStdout:
    """A text stream's ``write`` and ``flush`` with their errors as :class:`StdoutFailed`;
    everything else (``isatty``, ``encoding``, ``fileno``, ...) is the stream's own.

    The first failure is kept, too: a caller that swallows it (argparse's ``--help``
    does) must not end the command with exit code 0 after its output was lost."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.failure: StdoutFailed | None = None

    def write(self, text: str) -> int:
        with self._as_failure():
            return self._stream.write(text)

    def flush(self) -> None:
        with self._as_failure():
            self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    @contextlib.contextmanager
    def _as_failure(self) -> Iterator[None]:
        try:
            yield
        except BrokenPipeError:
            raise
        except OSError as exc:
            failure = StdoutFailed(exc.errno, f"cannot write stdout: {exc.strerror or exc}")
            self.failure = self.failure or failure
            raise failure from None


class ClosedStdout(io.TextIOBase):
    """The stdout of a process started without one (``arena ... >&-``), which Python
    leaves as ``None``: writing to it fails as writing to a closed descriptor does."""

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, os.strerror(errno.EBADF))


@contextlib.contextmanager
def guarded() -> Iterator[None]:
    """``sys.stdout`` guarded for the block, then flushed at its end (a normal one, or the
    parser's exit after ``--help``): a buffered write fails inside the block, and a
    failure some caller swallowed is raised there again."""
    original = sys.stdout
    guard = sys.stdout = GuardedStdout(original if original is not None else ClosedStdout())
    try:
        yield
        _settle(guard)
    except SystemExit:
        _settle(guard)
        raise
    finally:
        sys.stdout = original


def _settle(guard: GuardedStdout) -> None:
    guard.flush()
    if guard.failure is not None:
        raise guard.failure


def discard() -> None:
    """Point the stdout file descriptor at ``/dev/null``: what is still buffered for a
    stdout that failed, or whose reader left, goes there at exit instead of raising
    again as the interpreter shuts down."""
    if sys.stdout is not None:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
