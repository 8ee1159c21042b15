"""Which isolation third-party code gets, and under which limits: fixed once, up front.

The policy is read from the command line and the environment before any
third-party code runs (:func:`arena.plugins.load` takes it as an argument), so
no plugin can change it afterwards, e.g. by setting ``ARENA_SANDBOX=off``.

Isolation, strongest first:

- ``bwrap``: bubblewrap namespaces (user data hidden, no network, own PID space),
  and the worker drops to its own unprivileged uid with no capabilities.
- ``process``: a plain child process, still under its own unprivileged uid and
  in an empty network namespace when the arena runs as root, in a new session,
  with nothing but its own pipes.
- ``in-process``: no boundary; only for distributions the user trusts
  (``--trust``) and for plugin authors debugging their seat (``ARENA_SANDBOX=off``).

A worker imports this module (through :mod:`arena.plugins`) and never chooses a
policy, so :mod:`shutil`, which only choosing one needs (``which``), is imported then:
with ``bz2`` and ``lzma`` it was 4 ms of each worker's start.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import attrs

ISOLATIONS = ("bwrap", "process", "in-process")
CHOICES = ("auto", "bwrap", "process", "off")


class SandboxSetupError(ValueError):
    """The sandbox cannot be set up as asked; the message is one line for the user."""


@attrs.frozen
class Limits:
    """Bounds on one worker and everything it starts."""

    decision_seconds: float = 10.0
    """Wall clock for one decision (or one talk line)."""
    episode_seconds: float = 600.0
    """Wall clock for all of a seat's decisions in an episode; over it, bayes plays on."""
    start_seconds: float = 20.0
    """Importing the distribution and registering its plugins."""
    memory_mb: int = 512
    """RLIMIT_AS of each process of the worker."""
    processes: int = 8
    """RLIMIT_NPROC of the worker's uid: processes and threads together. Without
    cgroups, memory_mb x processes (4 GiB) bounds the whole worker tree."""
    cpu_seconds: int = 300
    """RLIMIT_CPU of each process."""
    tmpfs_mb: int = 16
    """Size of the private ``/tmp`` under bubblewrap."""
    say_chars: int = 2000
    notes_chars: int = 4000
    stderr_bytes: int = 16 * 1024
    """What is kept of a worker's stderr for the log; the rest is counted, not kept."""
    report_bytes: int = 256 * 1024
    """Largest audit section a third-party reporter may return."""


ENVIRONMENT_LIMITS = {
    "ARENA_SANDBOX_TIMEOUT": ("decision_seconds", float),
    "ARENA_SANDBOX_EPISODE_SECONDS": ("episode_seconds", float),
    "ARENA_SANDBOX_MEMORY_MB": ("memory_mb", int),
    "ARENA_SANDBOX_START_SECONDS": ("start_seconds", float),
}


@attrs.frozen
class SandboxPolicy:
    """The isolation of untrusted distributions and the limits every worker runs under."""

    isolation: str
    limits: Limits = Limits()
    trusted: frozenset[str] = frozenset()
    """Distributions the user chose to run in-process (``--trust``, ``ARENA_TRUST``)."""
    as_root: bool = attrs.field(factory=lambda: os.geteuid() == 0)

    @classmethod
    def choose(
        cls,
        environ: Mapping[str, str] = os.environ,
        sandbox: str | None = None,
        trust: tuple[str, ...] = (),
    ) -> SandboxPolicy:
        """The policy ``--sandbox``/``ARENA_SANDBOX`` and ``--trust``/``ARENA_TRUST`` ask for."""
        from shutil import which  # the arena's, never a worker's: see the module's doc

        choice = sandbox or environ.get("ARENA_SANDBOX", "auto") or "auto"
        if choice not in CHOICES:
            raise SandboxSetupError(
                f"ARENA_SANDBOX must be auto, bwrap, process or off, not {choice!r}"
            )
        has_bwrap = which("bwrap") is not None
        if choice == "bwrap" and not has_bwrap:
            raise SandboxSetupError("--sandbox bwrap, but bubblewrap (bwrap) is not installed")
        if os.geteuid() == 0 and choice != "off" and which("setpriv") is None:
            raise SandboxSetupError(
                "the arena runs as root and setpriv (util-linux) is not installed: "
                "workers could not drop to their own uid (ARENA_SANDBOX=off runs no workers)"
            )
        isolation = {"auto": "bwrap" if has_bwrap else "process", "off": "in-process"}.get(
            choice, choice
        )
        limits = {}
        for variable, (field, kind) in ENVIRONMENT_LIMITS.items():
            if variable in environ:
                try:
                    limits[field] = kind(environ[variable])
                except ValueError:
                    raise SandboxSetupError(
                        f"{variable} is not a number: {environ[variable]!r}"
                    ) from None
        named = {d.strip() for d in environ.get("ARENA_TRUST", "").split(",") if d.strip()}
        trusted = frozenset(canonical_name(d) for d in named | set(trust))
        return cls(isolation=isolation, limits=Limits(**limits), trusted=trusted)

    def isolation_of(self, distribution: str) -> str:
        """Where the named third-party distribution's code runs."""
        return "in-process" if canonical_name(distribution) in self.trusted else self.isolation

    def summary(self) -> str:
        """The one line the arena prints so the user knows what protects them."""
        from shutil import which

        if self.isolation == "bwrap":
            what = "bubblewrap namespaces"
        elif self.isolation == "process":
            hidden = self.as_root and which("unshare") is not None
            network = "" if hidden else " and loopback network"
            what = f"a plain process (no bubblewrap: files{network} are NOT hidden)"
        else:
            what = "NOTHING: third-party plugins run inside the arena (ARENA_SANDBOX=off)"
        who = ", one unprivileged uid per worker" if self.as_root else ""
        trusted = f"; trusted in-process: {', '.join(sorted(self.trusted))}" if self.trusted else ""
        return f"third-party plugins are isolated by {what}{who}{trusted}"


def canonical_name(distribution: str) -> str:
    """Distribution names compare as packaging normalises them (``Arena_Foo`` = ``arena-foo``)."""
    return distribution.lower().replace("_", "-").replace(".", "-")
