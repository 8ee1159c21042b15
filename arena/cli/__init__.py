"""The ``arena`` command: play episodes, run leagues, audit logs, list plugins.

Every user mistake (unknown seat or mode, a bad number, an unwritable path, a
corrupt log) ends in one ``arena: error: ...`` line and exit code 2, never a
traceback; a failed write, of the log or of stdout (a full disk, ``/dev/full``, an
I/O error), is one such line with exit code 1, and a reader that left
(``arena play --json | head``) a quiet exit 0. Ctrl-C and
SIGTERM stop an episode the same way: its partial log is closed with an
``interrupted`` line and the CLI says where it is (exit code 130). Plugins load
lazily, once, when a command needs them.

Each subcommand is a module of this package with a ``register(commands)``
function; :data:`COMMANDS` lists them in the order ``arena --help`` shows, and only
the module of the command named is imported.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
from collections.abc import Sequence

import arena.cli.startup  # first: a Ctrl-C while the rest imports
from arena import __version__, logconfig
from arena.cli import standard_output
from arena.cli.options import USAGE_ERROR, Parser, resolve_seats
from arena.cli.standard_output import StdoutFailed
from arena.eventlog import LogError, LogExists, LogWriteError
from arena.league.config import LeagueError
from arena.league.store import StoreError
from arena.outputs import OutputFailed, OutputRefused
from arena.plugins import DuplicateName, PluginHost, UnknownName, load
from arena.runner import EpisodeInterrupted, SetupError, Terminated
from arena.sandbox.policy import CHOICES, SandboxPolicy, SandboxSetupError
from arena.terminal_text import printable

COMMANDS = {
    "play": "play",
    "serve": "serve",
    "league": "league",
    "compare": "compare",
    "audit": "audit",
    "check": "check",
    "replay": "replay",
    "report": "report",
    "show": "show",
    "exploitability": "exploitability",
    "policies": "listings",
    "plugins": "listings",
}
"""Each subcommand and the module of this package that registers it, in ``arena --help``'s order."""
VALUED_GLOBALS = ("--sandbox", "--trust", "--log-format")
USER_ERRORS = (
    SetupError,
    UnknownName,
    DuplicateName,
    LogError,
    LogExists,
    StoreError,
    SandboxSetupError,
    LeagueError,
    OutputRefused,
)
RUN_FAILED = 1
INTERRUPTED = 130


VERBOSE_HELP = "more log output: -v info, -vv debug (default: warnings only)"


def build_parser(argv: Sequence[str] | None = None) -> Parser:
    """The parser for ``argv``: only its subcommand's options when it names one (a command
    line is parsed once, and building every subcommand costs more than parsing), every
    subcommand's otherwise (``arena --help``, a mistyped command) or without ``argv``."""
    parser = Parser(prog="arena", description="Liar's Dice / Liar's Poker arena.")
    parser.add_argument("--version", action="version", version=f"arena {__version__}")
    _add_global_options(parser, defaults=True)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    named = _named_command(argv) if argv is not None else None
    modules = [COMMANDS[named]] if named else dict.fromkeys(COMMANDS.values())
    for module in modules:
        importlib.import_module(f"arena.cli.{module}").register(commands)
    for subcommand in commands.choices.values():  # they also work after the subcommand
        _add_global_options(subcommand, defaults=False)
    return parser


def _named_command(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` names: its first word that is not an option or an option's
    value, if that word is a command."""
    words = iter(argv)
    for word in words:
        if word in VALUED_GLOBALS:
            next(words, None)
        elif not word.startswith("-"):
            return word if word in COMMANDS else None
    return None


def _add_global_options(parser: argparse.ArgumentParser, defaults: bool) -> None:
    """-v, --log-format, --sandbox and --trust: given before the subcommand or after it."""

    def default(value):
        return value if defaults else argparse.SUPPRESS

    parser.add_argument("-v", "--verbose", action="count", default=default(0), help=VERBOSE_HELP)
    parser.add_argument(
        "--log-format",
        choices=logconfig.FORMATS,
        default=default(None),
        help="log lines on stderr: plain 'arena: warning: ...' lines, or JSON lines "
        "(default: plain; with -v, coloured on a terminal, else JSON)",
    )
    parser.add_argument(
        "--sandbox",
        choices=CHOICES,
        default=default(None),
        help="isolation of third-party plugins (default $ARENA_SANDBOX, else auto: "
        "bwrap when installed, else a plain process)",
    )
    parser.add_argument(
        "--trust",
        action="append",
        default=default([]),
        metavar="DIST",
        help="run this third-party distribution in-process, unsandboxed (repeatable; "
        "also $ARENA_TRUST=dist,...; default: none)",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command ``argv`` names; its exit code.

    Its stdout is guarded and flushed before this returns (:mod:`.standard_output`): a
    write that fails (a full disk, an I/O error) is one ``arena: error:`` line and exit
    code 1, whichever command wrote; a reader that left is a quiet exit."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        with standard_output.guarded():
            return _command(argv)
    except StdoutFailed as exc:
        standard_output.discard()
        print(f"arena: error: {printable(exc.strerror)}", file=sys.stderr)
        return RUN_FAILED
    except BrokenPipeError:  # e.g. `arena play --json | head`: the reader left, not an error
        standard_output.discard()
        return 0


def _command(argv: list[str]) -> int:
    args = build_parser(argv).parse_args(argv)
    logconfig.configure(args.verbose, args.log_format)
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminate) if in_main else None
    try:
        arena.cli.startup.settled()
        host = load_for_command(args)
        resolve_seats(args, host.registry)
        return args.run(args, host)
    except USER_ERRORS as exc:
        print(f"arena: error: {printable(str(exc))}", file=sys.stderr)
        return USAGE_ERROR
    except (LogWriteError, OutputFailed) as exc:  # a full disk: not a usage error, one line
        print(f"arena: error: {printable(str(exc.strerror))}", file=sys.stderr)
        return RUN_FAILED
    except EpisodeInterrupted as exc:
        print(f"arena: {exc}", file=sys.stderr)
        return INTERRUPTED
    except KeyboardInterrupt:
        print("arena: interrupted", file=sys.stderr)
        return INTERRUPTED
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, previous)


def _terminate(signum, frame):
    raise Terminated


def load_for_command(args) -> PluginHost:
    """The plugins under the sandbox the command line asks for, announced in one line where
    a third party plays (:mod:`arena.cli.isolation_note`).

    The choice is also exported to the environment, so a league's worker
    processes load under the same policy.
    """
    policy = SandboxPolicy.choose(os.environ, args.sandbox, tuple(args.trust))
    if args.sandbox:
        os.environ["ARENA_SANDBOX"] = args.sandbox
    if args.trust:
        os.environ["ARENA_TRUST"] = ",".join(sorted(policy.trusted))
    host = load(os.environ, policy)
    if host.untrusted_missing:  # a typo in --trust would otherwise trust nothing, silently
        names = ", ".join(host.untrusted_missing)
        print(f"arena: warning: trusted but not installed: {names}", file=sys.stderr)
    if any(info.trust in ("third-party", "trusted") for info in host.plugins):
        from arena.cli import isolation_note  # here: a command with no third party pays nothing

        if isolation_note.wanted(args, host):
            level = "note" if policy.isolation == "bwrap" and not policy.trusted else "warning"
            print(f"arena: {level}: {policy.summary()}", file=sys.stderr)
    return host
