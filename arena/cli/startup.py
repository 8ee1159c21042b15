"""The CLI's first moments, before the tenth of a second of imports a command needs.

Imported first by :mod:`arena.cli`. A Ctrl-C while the ``arena`` command still imports:
nothing has started, so it says so and goes; without this it printed the traceback of
whatever import it landed in. :func:`arena.cli.main` puts Python's handler back once it
can catch the interrupt itself. Only the command's own process: a program or a test
run that imports the CLI keeps its Ctrl-C (given this handler, such a program ended at
once on a Ctrl-C until it called ``main``, its cleanups skipped), and so does a host
that set its own handler.

And ``arena play``'s sandboxed seats: their workers start now, from the command line
as first read here (:mod:`arena.sandbox.early`), and finish starting while the rest
imports. Only when this process is the ``arena`` command; not when a test or a
league's worker process imports the CLI.
"""

from __future__ import annotations

import argparse
import atexit
import os
import signal
import sys
import threading

from arena import logconfig


def interrupted_while_starting(signum, frame) -> None:
    os.write(2, b"arena: interrupted\n")
    os._exit(130)


def _take_ctrl_c() -> None:
    """Ctrl-C says so and ends the process, until :func:`settled`; unless this thread is
    not the main one, or the host set a handler of its own."""
    if (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    ):
        signal.signal(signal.SIGINT, interrupted_while_starting)


# numpy's OpenBLAS starts a thread per core as it is imported, which spins: 0.07-0.14 s of
# CPU a process (a 3,000-deal play, 0.85-0.99 against 0.74-0.88 s). Nothing the arena
# computes is a BLAS-sized product; the sandbox's workers were already set to one thread.
# Set before any numpy import, inherited by a league's worker processes; a user's own
# setting stands.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def leave_interrupted() -> None:
    """End the ``arena`` command at once with exit code 130, once it has said it was
    interrupted: atexit's cleanups run (an early worker no seat took is ended), the
    streams are flushed, and the interpreter's own exit is skipped, as a league's Ctrl-C
    already was. Left to that exit, the process now and then ended killed by SIGINT
    after saying ``arena: interrupted`` (the shell saw -2, not 130: 2 of 300 Ctrl-Cs at
    a league's start, ``tests/test_league_faults.py``): run as ``python -m``, CPython's
    exit re-raises SIGINT (``exit_sigint``) for an interrupt that passed through one of
    its ``PyRun_*`` calls, whatever caught it afterwards. A process that only imports
    the CLI (a test calling :func:`arena.cli.main`) gets the code back instead."""
    if _arguments is None:
        return
    atexit._run_exitfuncs()  # what the skipped exit would have run
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(130)


def settled() -> None:
    """From here :func:`arena.cli.main` catches Ctrl-C (``KeyboardInterrupt``) itself."""
    if signal.getsignal(signal.SIGINT) is interrupted_while_starting:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def arena_arguments() -> list[str] | None:
    """The arguments of the ``arena`` command this process runs, or ``None`` when it runs
    something else that imports the CLI. Read while :mod:`arena.cli` is being imported:
    by the ``arena`` script, or by ``python -m arena.cli``, while ``sys.argv[0]`` is
    still ``-m`` (runpy finds the module before it sets the path)."""
    if sys.argv[:1] == ["-m"]:
        return sys.argv[1:] if sys.orig_argv[-len(sys.argv)] == "arena.cli" else None
    return sys.argv[1:] if os.path.basename(sys.argv[0]) == "arena" else None


def play_options(arguments: list[str]) -> argparse.Namespace | None:
    """``-v``, ``--log-format``, ``--sandbox``, ``--trust`` and ``--seat`` of an ``arena play``
    command line that names seats, else ``None``.

    A first read, for starting the seats' workers; the command's own parse follows
    and judges the options, so a misreading here costs a worker no seat takes.
    """
    first = argparse.ArgumentParser(add_help=False, allow_abbrev=False, exit_on_error=False)
    first.add_argument("-v", "--verbose", action="count", default=0)
    first.add_argument("--log-format", choices=logconfig.FORMATS)
    first.add_argument("--sandbox")
    first.add_argument("--trust", action="append", default=[])
    first.add_argument("--seat", action="append", default=[])
    try:
        read, rest = first.parse_known_args(arguments)
    except argparse.ArgumentError:  # the command's own parse says what is wrong
        return None
    command = next((word for word in rest if not word.startswith("-")), None)
    return read if command == "play" and read.seat else None


def start_play_workers(arguments: list[str]) -> None:
    """The workers of an ``arena play``'s sandboxed seats, started now; logging is set up
    first, as ``-v`` asks, for what starting them may log."""
    options = play_options(arguments)
    if options is not None:
        from arena.sandbox import early  # here: only a command line that names seats pays

        logconfig.configure(options.verbose, options.log_format)
        early.start(options.seat, options.sandbox, options.trust)


_arguments = arena_arguments()
if _arguments is not None:
    _take_ctrl_c()
    start_play_workers(_arguments)
