"""The ``arena`` command: play episodes, run leagues, audit logs, list plugins.

Every user mistake (unknown seat or mode, a bad number, an unwritable path, a
corrupt log) ends in one ``arena: error: ...`` line and exit code 2, never a
traceback. Plugins load lazily, once, when a command needs them.

Each subcommand is a module of this package with a ``register(commands)``
function; :data:`COMMANDS` lists them in the order ``arena --help`` shows.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from arena import __version__, logconfig
from arena.cli import audit, league, listings, play
from arena.cli.options import USAGE_ERROR, Parser
from arena.eventlog import LogError
from arena.league.config import LeagueError
from arena.league.store import StoreError
from arena.plugins import DuplicateName, UnknownName, load
from arena.runner import SetupError

COMMANDS = (play, league, audit, listings)
USER_ERRORS = (SetupError, UnknownName, DuplicateName, LogError, StoreError, LeagueError)


def build_parser() -> Parser:
    parser = Parser(prog="arena", description="Liar's Dice / Liar's Poker arena.")
    parser.add_argument("--version", action="version", version=f"arena {__version__}")
    parser.add_argument(
        "-v", "--verbose", action="count", default=0, help="more log output (-vv: debug)"
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for command in COMMANDS:
        command.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logconfig.configure(args.verbose)
    try:
        return args.run(args, load())
    except USER_ERRORS as exc:
        print(f"arena: error: {exc}", file=sys.stderr)
        return USAGE_ERROR
    except KeyboardInterrupt:
        print("arena: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `arena play --json | head`: the reader left, not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
