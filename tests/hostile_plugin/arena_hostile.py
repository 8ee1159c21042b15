"""A hostile third-party distribution for the trust-boundary suite (tests/test_hostile.py).

``hostile:ATTACK[:ARG]`` plays the bayes baseline's moves from its own context (so
the table's other seats face the same game) and attacks on its first decision of
deal 1. It writes what it got into its private notes (``attack=... <report>``),
which the server-side log keeps: that is how a test sees the attempt. It never
writes a secret it found, only whether it found one (``FOUND``).

At import it does what the issue's hostile plugins did: reads the API key, turns
the sandbox off through the environment and patches the engine's dealing.
"""

import contextlib
import ctypes
import gc
import os
import signal
import socket
import time
from typing import NoReturn

from arena import hookimpl
from arena.seats import Reply
from arena_plugins.scripted import bayes

KEY_AT_IMPORT = os.environ.get("ANTHROPIC_API_KEY")
os.environ["ARENA_SANDBOX"] = "off"
try:  # the dealing is not even here to patch; if it were, every hand would leak
    from arena import turns

    turns.EpisodeState.hands = lambda self, number: ((1,) * 5,) * 4
except ImportError:
    pass

SECRET_MARK = "sk-secret-for-the-test"


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _read(path: str, size: int = 4096) -> str:
    try:
        with open(path, "rb") as handle:
            data = handle.read(size)
    except OSError as exc:
        return f"denied({exc.errno})"
    return "FOUND" if SECRET_MARK.encode() in data else f"read({len(data)})"


def attack_environ(arg: str) -> str:
    found = "FOUND" if KEY_AT_IMPORT or os.environ.get("ANTHROPIC_API_KEY") else "none"
    return f"env={found} proc={_read(f'/proc/{arg}/environ', 1 << 20)}"


def attack_proc(arg: str) -> str:
    return f"cmdline={_read(f'/proc/{arg}/cmdline')} mem={_read(f'/proc/{arg}/mem', 16)}"


def attack_ptrace(arg: str) -> str:
    result = _libc().ptrace(16, int(arg), 0, 0)  # PTRACE_ATTACH
    return "ptrace=FOUND" if result == 0 else f"ptrace=denied({ctypes.get_errno()})"


def attack_fd(arg: str) -> str:
    try:
        names = os.listdir(f"/proc/{arg}/fd")
    except OSError as exc:
        return f"fds=denied({exc.errno})"
    opened = [_read(f"/proc/{arg}/fd/{n}") for n in names]
    return "fds=FOUND" if any(o.startswith("read") for o in opened) else "fds=denied"


def attack_signal(arg: str) -> str:
    try:
        os.kill(int(arg), signal.SIGSTOP)
        os.kill(int(arg), signal.SIGCONT)
    except OSError as exc:
        return f"signal=denied({exc.errno})"
    return "signal=FOUND"


def attack_net(arg: str) -> str:
    try:
        socket.create_connection(("127.0.0.1", int(arg)), timeout=1).close()
    except OSError:
        return "net=blocked"
    return "net=FOUND"


def attack_write(arg: str) -> str:
    """Plant a .pth where the arena's code is, and a file beside the arena's log."""
    results = []
    for directory in (os.path.dirname(os.path.dirname(ctypes.__file__)), arg):
        try:
            with open(os.path.join(directory, "zz_hostile.pth"), "w") as handle:
                handle.write("import os\n")
            results.append("FOUND")
        except OSError as exc:
            results.append(f"denied({exc.errno})")
    return "write=" + ",".join(results)


def attack_remount(arg: str) -> str:
    ms_remount, ms_bind = 32, 4096
    result = _libc().mount(None, b"/usr", None, ms_remount | ms_bind, None)
    return "remount=FOUND" if result == 0 else f"remount=denied({ctypes.get_errno()})"


def attack_forkbomb(arg: str) -> str:
    forks = 0
    for _ in range(300):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            time.sleep(3600)
            os._exit(0)
        forks += 1
    return f"forks={forks}"


def attack_memory(arg: str) -> str:
    try:
        hoard = bytearray(6 << 30)
    except MemoryError:
        return "alloc=failed"
    return f"alloc=FOUND({len(hoard)})"


def attack_daemon(arg: str) -> str:
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            while True:
                time.sleep(1)
        os._exit(0)
    return "daemon=started"


def attack_forkrunner(arg: str) -> str:
    """Daemons that are a new pid at every moment (``arg`` of them, 3 by default: the
    worker's uid may run 8 processes): each fork's parent exits at once, so a killer
    that scans the process table and then kills what it saw chases them."""
    for _ in range(int(arg or 3)):
        try:
            runner = os.fork()
        except OSError:  # the runners already fill the uid's process limit
            break
        if runner == 0:
            os.setsid()
            _run_away()
    return "forkrunner=started"


def _run_away() -> NoReturn:
    """Fork, and end the parent, for ever. Never returns: a runner that returned (a fork
    refused at the uid's process limit, raised out of the loop) would go on as a second
    copy of the worker, answering the arena's requests on the worker's pipe."""
    try:
        while True:
            with contextlib.suppress(OSError):  # at the process limit: try again
                if os.fork() != 0:
                    break
    finally:
        os._exit(0)


def attack_stdout(arg: str) -> str:
    flood = b'{"ok": true, "reply": {"action": "challenge"}}\n' * 20000
    os.write(1, flood)
    print("x" * 1_000_000)
    return f"stdout={len(flood)}"


def attack_gc(arg: str) -> str:
    """Walk every object and frame in reach for anything like another seat's secrets."""
    count = sum(1 for o in gc.get_objects() if isinstance(o, str) and SECRET_MARK in o)
    return f"gc={'FOUND' if count else 'none'}"


ONE_SHOT = {
    name.removeprefix("attack_"): f for name, f in globals().items() if name.startswith("attack_")
}


class Hostile:
    def __init__(self, context):
        self.attack, _, self.arg = (context.arg or "environ").partition(":")
        if self.attack == "factory":
            raise RuntimeError("the hostile factory refuses to build")
        self.bayes = bayes(context)
        self.done = False

    def decide(self, view):
        action = self.bayes.decide(view)
        record = {"action": "challenge"}
        if type(action).__name__ == "Bid":
            record = {"action": "bid", "quantity": action.quantity, "face": action.face}
        if self.attack == "budget":
            time.sleep(float(self.arg))
            return record
        if view.deal < 1 or self.done:
            return record
        self.done = True
        return self._attack(record)

    def _attack(self, record):
        attack = self.attack
        if attack in ONE_SHOT:
            return {**record, "notes": f"attack={attack} {ONE_SHOT[attack](self.arg)}"}
        if attack == "spin":
            while True:
                pass
        if attack == "sleep":
            time.sleep(3600)
        if attack == "bigreply":
            return {**record, "notes": "x" * (100 << 20)}
        if attack == "notes":
            return {**record, "say": "s" * 30_000, "notes": "n" * 30_000}  # under the reply cap
        if attack == "talk":
            return {**record, "say": "a plain line"}
        if attack == "tokens":
            return Reply(record, {"input_tokens": -(10**12), "output_tokens": 10**30})
        if attack == "closepipe":
            os.closerange(3, 1024)
            time.sleep(3600)
        if attack == "crash":
            os._exit(3)
        if attack == "segv":
            ctypes.string_at(0)
        raise ValueError(f"unknown attack {attack!r}")


@hookimpl
def register_seats(register):
    # The hook-closure attack: reach the registry through the callback and relabel
    # its own seat as first-party. In a worker that is the worker's own registry.
    for cell in register.__closure__ or ():
        target = cell.cell_contents
        if hasattr(target, "seats") and isinstance(target.seats, dict):
            target.seats.clear()
    register(
        "hostile", Hostile, description="TEST: attacks its sandbox", argument="the attack to run"
    )
    register("bayes", Hostile, description="TEST: an impostor of the first-party bayes")


@hookimpl
def register_modes(register):
    from arena.modes import Mode

    register(
        Mode(
            "loaded",
            (1, 2, 3, 4, 5, 6),
            5,
            "TEST: a mode whose draw is code, not data",
            draw=lambda mode, rng: (6, 6, 6, 6, 6),
        )
    )
    register(Mode("octo", tuple(range(1, 9)), 3, "TEST: eight faces, three dice, as data only"))
    register(Mode("dice", (1, 2, 3, 4, 5, 6), 5, "TEST: an impostor of the first-party dice"))
