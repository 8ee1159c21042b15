"""The ``arena`` command: play episodes, run leagues, audit logs, list plugins.

Every user mistake (unknown seat or mode, a bad number, an unwritable path, a
corrupt log) ends in one ``arena: error: ...`` line and exit code 2, never a
traceback; a failed write, of the log or of stdout (a full disk, ``/dev/full``, an
I/O error), is one such line with exit code 1, and a reader that left
(``arena play --json | head``) a quiet exit 0. Ctrl-C and
SIGTERM stop an episode the same way: its partial log is closed with an
``interrupted`` line and the CLI says where it is (exit code 130). Plugins load
lazily, once, when a command needs them.

Each subcommand is the module of this package of its name, with a ``register(parser)``
function that adds its options to its parser; :data:`COMMANDS` lists them, with the
help lines ``arena --help`` shows, in its order. A subcommand's module is imported only
once argparse reaches that subcommand (:class:`Commands`), and what runs a parsed command
only once it has parsed (:mod:`.running`): ``arena --help`` and a mistyped command
import neither, and a command only its own module.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

import arena.cli.startup  # first: a Ctrl-C while the rest imports
from arena import __version__, logconfig
from arena.cli import standard_output
from arena.cli.options import RUN_FAILED, Parser
from arena.cli.standard_output import StdoutFailed
from arena.sandbox.policy import CHOICES
from arena.terminal_text import printable

COMMANDS = {
    "play": "play one episode",
    "serve": "play in the browser (a local table server)",
    "league": "rank entrants over many seeded tables",
    "compare": "is seat A better than seat B? a paired comparison on the same deals",
    "audit": "recompute an episode's audit from its log, or pool many by policy",
    "check": "verify logs against the rules and their seed (exit 1 on any violation)",
    "replay": "write an episode's log as one offline HTML replay page",
    "report": "write a league file or saved logs as one offline HTML report",
    "show": "print a saved event log as `arena play` prints it",
    "exploitability": "a seat's exact exploitability on a calibration rung",
    "policies": "list the shipped model seat policies",
    "plugins": "list installed plugins",
}
"""Each subcommand and its help line, in ``arena --help``'s order."""


VERBOSE_HELP = "more log output: -v info, -vv debug (default: warnings only)"


class Commands(argparse._SubParsersAction):
    """The subcommands, each listed by its name and help line, which is all ``arena --help``
    shows of it; its module is imported, and its options added, when argparse reaches it
    (to parse it, or to show its own help), so only the command a line names pays for
    its module. Building every subcommand's options cost a tenth of a second of imports."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._completed: set[str] = set()

    def complete(self, name: str) -> None:
        """``name``'s options, added once: its own, then the global ones (which also work
        after the subcommand)."""
        if name not in self._completed:
            self._completed.add(name)
            parser = self.choices[name]
            importlib.import_module(f"arena.cli.{name}").register(parser)
            _add_global_options(parser, defaults=False)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        self.complete(values[0])
        super().__call__(parser, namespace, values, option_string)


def build_parser(*, every_command: bool = False) -> Parser:
    """The ``arena`` parser; a subcommand's options are added when it is reached
    (:class:`Commands`), or, with ``every_command``, all of them now (to inspect them)."""
    parser = Parser(prog="arena", description="Liar's Dice / Liar's Poker arena.")
    parser.add_argument("--version", action="version", version=f"arena {__version__}")
    _add_global_options(parser, defaults=True)
    parser.register("action", "parsers", Commands)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for name, help_line in COMMANDS.items():
        commands.add_parser(name, help=help_line)
    if every_command:
        for name in COMMANDS:
            commands.complete(name)
    return parser


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
            code = _command(argv)
    except StdoutFailed as exc:
        standard_output.discard()
        print(f"arena: error: {printable(exc.strerror)}", file=sys.stderr)
        return RUN_FAILED
    except BrokenPipeError:  # e.g. `arena play --json | head`: the reader left, not an error
        standard_output.discard()
        return 0
    from arena.cli.running import INTERRUPTED  # imported by the command already

    if code == INTERRUPTED:
        arena.cli.startup.leave_interrupted()
    return code


def _command(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    logconfig.configure(args.verbose, args.log_format)
    from arena.cli import running  # here: --help and a usage error have ended by now

    return running.run(args)
