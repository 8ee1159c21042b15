"""A parsed ``arena`` command line, run: its plugins loaded under the sandbox it asks for,
its seats resolved, its subcommand's ``run`` called, and every way that can fail turned
into an exit code and at most one line (see :mod:`arena.cli`).

Its own module, imported once the command line has parsed: ``arena --help``, a
subcommand's ``--help`` and a usage error end before that, and so never import the
plugins, the runner or the errors of every layer that this module needs.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Mapping

import arena.cli.startup
from arena.cli.options import RUN_FAILED, USAGE_ERROR
from arena.eventlog import LogError, LogExists, LogWriteError
from arena.league.config import LeagueError
from arena.league.store import StoreError
from arena.outputs import OutputFailed, OutputRefused
from arena.plugins import DuplicateName, PluginHost, Registry, UnknownName, load
from arena.runner import EpisodeInterrupted, SetupError, Terminated
from arena.sandbox.policy import SandboxPolicy, SandboxSetupError
from arena.terminal_text import printable, spec_text

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
INTERRUPTED = 130


def run(args: argparse.Namespace) -> int:
    """The exit code of the command ``args`` describes, run with its plugins loaded."""
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


def load_for_command(args: argparse.Namespace) -> PluginHost:
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


def resolve_seats(
    args: argparse.Namespace, registry: Registry, environ: Mapping[str, str] = os.environ
) -> None:
    """A table size the user left out is the mode's default (2 on the rungs), and every
    paid seat given by ``--seat`` passes its own preflight before any table starts (a
    league's and a comparison's entrants pass it in the league's checks)."""
    if getattr(args, "seats", 0) is None:
        args.seats = registry.mode(args.mode).default_seats
    for slot, spec in enumerate(getattr(args, "seat_specs", [])):
        try:
            registry.preflight(spec, environ)
        except UnknownName:  # reported where a name always is, with its context
            continue
        except ValueError as exc:
            raise SetupError(f"seat {slot} ({spec_text(spec)}): {exc}") from None
