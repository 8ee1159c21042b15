"""Ctrl-C while the CLI is still importing: nothing has started, so it says so and goes.

Imported first by :mod:`arena.cli`, before the tenth of a second of imports a command
needs; without it a Ctrl-C then printed the traceback of whatever import it landed in.
:func:`arena.cli.main` puts Python's handler back once it can catch the interrupt
itself. A host that set its own handler (a test runner) keeps it.
"""

from __future__ import annotations

import os
import signal
import threading


def interrupted_while_starting(signum, frame) -> None:
    os.write(2, b"arena: interrupted\n")
    os._exit(130)


if (
    threading.current_thread() is threading.main_thread()
    and signal.getsignal(signal.SIGINT) is signal.default_int_handler
):
    signal.signal(signal.SIGINT, interrupted_while_starting)


def settled() -> None:
    """From here :func:`arena.cli.main` catches Ctrl-C (``KeyboardInterrupt``) itself."""
    if signal.getsignal(signal.SIGINT) is interrupted_while_starting:
        signal.signal(signal.SIGINT, signal.default_int_handler)
