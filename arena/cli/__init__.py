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
from arena.plugins import DuplicateName, PluginHost, UnknownName, load
from arena.runner import SetupError
from arena.sandbox.policy import CHOICES, PolicyError, SandboxPolicy
from arena.store import StoreError

COMMANDS = (play, league, audit, listings)
USER_ERRORS = (SetupError, UnknownName, DuplicateName, LogError, StoreError, PolicyError)


def build_parser() -> Parser:
    parser = Parser(prog="arena", description="Liar's Dice / Liar's Poker arena.")
    parser.add_argument("--version", action="version", version=f"arena {__version__}")
    parser.add_argument(
        "-v", "--verbose", action="count", default=0, help="more log output (-vv: debug)"
    )
    parser.add_argument(
        "--sandbox",
        choices=CHOICES,
        help="isolation of third-party plugins (default $ARENA_SANDBOX, else auto: "
        "bwrap when installed, else a plain process)",
    )
    parser.add_argument(
        "--trust",
        action="append",
        default=[],
        metavar="DIST",
        help="run this third-party distribution in-process, unsandboxed (repeatable; "
        "also $ARENA_TRUST=dist,...)",
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for command in COMMANDS:
        command.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logconfig.configure(args.verbose)
    try:
        return args.run(args, load_for_command(args))
    except USER_ERRORS as exc:
        print(f"arena: error: {exc}", file=sys.stderr)
        return USAGE_ERROR
    except KeyboardInterrupt:
        print("arena: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `arena play --json | head`: the reader left, not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def load_for_command(args) -> PluginHost:
    """The plugins under the sandbox the command line asks for, announced in one line.

    The choice is also exported to the environment, so a league's worker
    processes load under the same policy.
    """
    policy = SandboxPolicy.choose(os.environ, args.sandbox, tuple(args.trust))
    if args.sandbox:
        os.environ["ARENA_SANDBOX"] = args.sandbox
    if args.trust:
        os.environ["ARENA_TRUST"] = ",".join(sorted(policy.trusted))
    host = load(os.environ, policy)
    if any(info.trust in ("third-party", "trusted") for info in host.plugins):
        level = "note" if policy.isolation == "bwrap" and not policy.trusted else "warning"
        print(f"arena: {level}: {policy.summary()}", file=sys.stderr)
    return host
