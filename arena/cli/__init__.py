"""The ``arena`` command: play episodes, run leagues, audit logs, list plugins.

Every user mistake (unknown seat or mode, a bad number, an unwritable path, a
corrupt log) ends in one ``arena: error: ...`` line and exit code 2, never a
traceback; a failed log write is one such line with exit code 1. Ctrl-C and
SIGTERM stop an episode the same way: its partial log is closed with an
``interrupted`` line and the CLI says where it is (exit code 130). Plugins load
lazily, once, when a command needs them.

Each subcommand is a module of this package with a ``register(commands)``
function; :data:`COMMANDS` lists them in the order ``arena --help`` shows.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Sequence

from arena import __version__, logconfig
from arena.cli import audit, check, league, listings, play, replay, serve, show
from arena.cli.options import USAGE_ERROR, Parser
from arena.eventlog import LogError, LogExists, LogWriteError
from arena.plugins import DuplicateName, UnknownName, load
from arena.runner import EpisodeInterrupted, SetupError, Terminated
from arena.store import StoreError

COMMANDS = (play, serve, league, audit, check, replay, show, listings)
USER_ERRORS = (SetupError, UnknownName, DuplicateName, LogError, LogExists, StoreError)
RUN_FAILED = 1
INTERRUPTED = 130


VERBOSE_HELP = "more log output: -v info, -vv debug (default: warnings only)"


def build_parser() -> Parser:
    parser = Parser(prog="arena", description="Liar's Dice / Liar's Poker arena.")
    parser.add_argument("--version", action="version", version=f"arena {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help=VERBOSE_HELP)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for command in COMMANDS:
        command.register(commands)
    for subcommand in commands.choices.values():  # -v also works after the subcommand
        subcommand.add_argument(
            "-v", "--verbose", action="count", default=argparse.SUPPRESS, help=VERBOSE_HELP
        )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logconfig.configure(args.verbose)
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminate) if in_main else None
    try:
        return args.run(args, load())
    except USER_ERRORS as exc:
        print(f"arena: error: {exc}", file=sys.stderr)
        return USAGE_ERROR
    except LogWriteError as exc:  # a full disk is not a usage error, but it is one line
        print(f"arena: error: {exc.strerror}", file=sys.stderr)
        return RUN_FAILED
    except EpisodeInterrupted as exc:
        print(f"arena: {exc}", file=sys.stderr)
        return INTERRUPTED
    except KeyboardInterrupt:
        print("arena: interrupted", file=sys.stderr)
        return INTERRUPTED
    except BrokenPipeError:  # e.g. `arena play --json | head`: the reader left, not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, previous)


def _terminate(signum, frame):
    raise Terminated
