"""The arena's side of a worker: requests under deadlines, and plugins that stand in for it.

:class:`Worker` speaks the protocol and keeps a capped copy of the worker's
output. On top of it, :class:`SandboxedSeat` plays a seat for one episode, and
:class:`RemoteFilter` / :class:`RemoteReporter` run a talk filter or an audit
reporter; each worker imports only the entry point that registered it
(:mod:`arena.sandbox.describe` learns which that is). Every failure of a worker
(it did not start, crashed, hung, closed its pipe, overran) ends that worker and
becomes that plugin's fault; nothing here raises into the table except
:class:`WorkerFailed`.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

from arena.logs import get_logger
from arena.sandbox.launch import WorkerProcess, kill_together
from arena.sandbox.policy import SandboxPolicy
from arena.sandbox.pool import EARLY_WORKERS
from arena.sandbox.protocol import (
    REPLY_CAP,
    ProtocolError,
    ReplyTimeout,
    WorkerCode,
    is_description,
    read_frame,
    write_frame,
)
from arena.seats import Reply, SeatUnavailable

TOKEN_FIELDS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
TOKEN_BOUND = 10_000_000
"""More tokens than any model call can bill: a count at or over it is a lie."""

log = get_logger(__name__)


class WorkerFailed(Exception):
    """The worker could not do what was asked and has been ended; the message says why."""


class Worker:
    """One worker process, from the code it loads to its end."""

    def __init__(self, policy: SandboxPolicy, code: WorkerCode):
        self.policy = policy
        self.code = code
        self.distribution = code.distribution
        self.failed: str | None = None
        self.output = bytearray()
        self.output_dropped = 0
        self.plugins: list[dict] = []
        """Each entry point's registrations, in order, as the worker reported them."""
        self.process = WorkerProcess(policy)
        self._loaded = False
        self.send(code.load_message())

    def hello(self) -> list[dict]:
        """What each entry point registered (waits for the worker's imports, once).

        Each import has ``start_seconds``; a worker that fails meanwhile raises
        :class:`WorkerFailed`, and :attr:`plugins` holds what came before.
        """
        while not self._loaded:
            frame = self.receive(self.policy.limits.start_seconds, REPLY_CAP)
            if is_description(frame.get("plugin")) and len(self.plugins) < len(
                self.code.entry_points
            ):
                self.plugins.append(frame["plugin"])
            elif frame.get("ok") and len(self.plugins) == len(self.code.entry_points):
                self._loaded = True
            else:
                self.fail("the worker broke the protocol while loading")
        return self.plugins

    def send(self, message: Mapping[str, Any]) -> None:
        if self.failed:
            raise WorkerFailed(self.failed)
        try:
            write_frame(self.process.to_worker, message, from_arena=True)
        except OSError as exc:
            self.fail(f"the worker closed its pipe ({exc.strerror})")

    def request(self, message: Mapping[str, Any], seconds: float, cap: int = REPLY_CAP) -> dict:
        """Send one request and wait for its answer; ``{"ok": False}`` answers are returned."""
        self.hello()
        self.send(message)
        return self.receive(seconds, cap)

    def close(self) -> None:
        """End the worker and its processes; log what it wrote, capped."""
        close_together([self])

    def receive(self, seconds: float, cap: int) -> dict:
        if self.failed:
            raise WorkerFailed(self.failed)
        try:
            answer = read_frame(
                self.process.from_worker, time.monotonic() + seconds, cap, self._drain_output
            )
        except ReplyTimeout:
            self.fail(f"no reply within {seconds:g}s")
        except (ProtocolError, OSError) as exc:
            self.fail(self._ended() or str(exc))
        if not isinstance(answer, dict):
            self.fail("the worker's answer is not an object")
        return answer

    def _drain_output(self, fd: int, timeout: float) -> bool:
        """Wait for ``fd``, keeping up to the cap of whatever the worker prints meanwhile."""
        output = self.process.output
        readable = select.select([fd, output] if output >= 0 else [fd], [], [], timeout)[0]
        if output in readable:
            chunk = os.read(output, 65536)
            if not chunk:
                os.close(output)
                self.process.output = -1
            room = self.policy.limits.stderr_bytes - len(self.output)
            self.output += chunk[: max(room, 0)]
            self.output_dropped += max(len(chunk) - max(room, 0), 0)
        return fd in readable

    def _ended(self) -> str | None:
        """How the worker ended, if it did within a moment: its exit code or signal."""
        try:
            code = self.process.process.wait(timeout=0.5)
        except subprocess.TimeoutExpired:  # still running (it closed its pipe): the caller says
            return None
        if code < 0:
            return f"the worker was killed by {signal.Signals(-code).name}"
        return f"the worker exited with code {code}"

    def fail(self, reason: str) -> NoReturn:
        """End the worker for ``reason`` and raise :class:`WorkerFailed` with it."""
        self.failed = f"{self.distribution}: {reason}"
        log.warning("sandbox worker ended", reason=self.failed)
        self.close()
        raise WorkerFailed(self.failed)


def close_together(workers: Sequence[Worker]) -> None:
    """End these workers and their processes side by side
    (:func:`~arena.sandbox.launch.kill_together`); log what each wrote, capped."""
    kill_together([worker.process for worker in workers])
    for worker in workers:
        if worker.output or worker.output_dropped:
            log.info(
                "worker output",
                distribution=worker.distribution,
                output=worker.output.decode(errors="replace"),
                dropped_bytes=worker.output_dropped,
            )


class SandboxedSeat:
    """A third-party seat playing one episode from its own worker.

    Construction only starts the worker (or takes the one started for it early,
    :mod:`arena.sandbox.pool`) and queues the seat's setup, so a table's workers start
    in parallel; :meth:`ready` waits for one.
    """

    def __init__(self, policy: SandboxPolicy, code: WorkerCode, setup: Mapping[str, Any]):
        self.limits = policy.limits
        self.budget = policy.limits.episode_seconds
        from arena.sandbox.views import ViewSender  # here: see arena.sandbox.early

        self.views = ViewSender()
        self.worker = EARLY_WORKERS.take(policy, code) or Worker(policy, code)
        self.worker.send({"op": "seat", **setup})

    def ready(self) -> None:
        """Wait until the seat is built; raises :class:`WorkerFailed` with the reason."""
        broken = [plugin["broken"] for plugin in self.worker.hello() if plugin["broken"]]
        if broken:
            self.worker.fail(f"its plugin is broken: {broken[0]}")
        answer = self.worker.receive(self.limits.start_seconds, REPLY_CAP)
        if not answer.get("ok"):
            self.worker.fail(f"the seat could not be built: {answer.get('error')}")

    def decide(self, view):
        over_budget = f"the seat used up its {self.limits.episode_seconds:g}s episode budget"
        seconds = min(self.limits.decision_seconds, self.budget)
        if seconds <= 0:
            raise SeatUnavailable(over_budget)
        started = time.monotonic()
        try:
            answer = self.worker.request({"op": "decide", "view": self.views.encode(view)}, seconds)
        except WorkerFailed as exc:
            budget_ran_out = seconds < self.limits.decision_seconds and "no reply" in str(exc)
            raise SeatUnavailable(over_budget if budget_ran_out else str(exc)) from None
        finally:
            self.budget -= time.monotonic() - started
        if not answer.get("ok"):
            raise RuntimeError(str(answer.get("error"))[:500])
        reply = self._capped(answer.get("reply"))
        usage = answer.get("usage")
        if usage is None:
            return reply
        return Reply(reply, checked_usage(usage))

    def close(self) -> None:
        self.worker.close()

    def _capped(self, reply: Any) -> Any:
        """``say`` and ``notes`` cut to their caps before anything logs them."""
        if not isinstance(reply, dict):
            return reply
        caps = {"say": self.limits.say_chars, "notes": self.limits.notes_chars}
        return {
            key: value[: caps[key]] if key in caps and isinstance(value, str) else value
            for key, value in reply.items()
        }


def close_seats(seats: Sequence[Any]) -> None:
    """Close a table's seats: the sandboxed ones' workers ended together
    (:func:`close_together`), every other seat with a ``close`` by its own."""
    close_together([seat.worker for seat in seats if isinstance(seat, SandboxedSeat)])
    for seat in seats:
        if not isinstance(seat, SandboxedSeat) and hasattr(seat, "close"):
            seat.close()


def checked_usage(usage: Any) -> dict[str, int]:
    """Token counts a seat reports: ints from 0 up to the bound, or the reply is refused."""
    if not isinstance(usage, dict):
        raise RuntimeError(f"usage must be an object, not {type(usage).__name__}")
    checked = {}
    for field in TOKEN_FIELDS:
        value = usage.get(field, 0)
        if type(value) is not int or not 0 <= value < TOKEN_BOUND:
            raise RuntimeError(
                f"usage {field} must be an int in 0..{TOKEN_BOUND - 1}, not {value!r}"
            )
        checked[field] = value
    return checked


class RemoteFilter:
    """A third party's talk filter, applied line by line in a worker of the table's own.

    Tables run one per thread (a league's thread executor runs several at once), so
    each thread gets its own worker, started on its first line and ended by
    :meth:`close` at its episode's end: no table waits on, or ends, another's worker.
    Raising drops the line (the engine logs it); a worker that failed stays failed
    until :meth:`close`, so every later line of that episode is dropped too.
    """

    def __init__(self, policy: SandboxPolicy, code: WorkerCode, name: str):
        self.policy, self.code, self.name = policy, code, name
        self._tables = threading.local()

    def __call__(self, text: str, speaker: int) -> str | None:
        worker = getattr(self._tables, "worker", None)
        if worker is None:
            worker = self._tables.worker = Worker(self.policy, self.code)
        message = {"op": "filter", "name": self.name, "text": text, "speaker": speaker}
        answer = worker.request(message, self.policy.limits.decision_seconds)
        result = answer.get("text") if answer.get("ok") else None
        if not answer.get("ok") or not (result is None or isinstance(result, str)):
            raise WorkerFailed(f"talk filter {self.name}: {answer.get('error') or 'not text'}")
        return result[: self.policy.limits.say_chars] if result is not None else None

    def close(self) -> None:
        """End this thread's worker (its table's episode is over)."""
        worker = getattr(self._tables, "worker", None)
        if worker is not None:
            worker.close()
            self._tables.worker = None


class RemoteReporter:
    """A third party's audit reporter: one worker per report, its section size-capped.

    It returns only its own section; the host puts it under its name, so it can
    touch no other section, the results or the log.
    """

    def __init__(self, policy: SandboxPolicy, code: WorkerCode, name: str):
        self.policy, self.code, self.name = policy, code, name

    def __call__(self, records: Sequence[dict]) -> Any:
        worker = Worker(self.policy, self.code)
        try:
            limits = self.policy.limits
            message = {"op": "report", "name": self.name, "records": list(records)}
            answer = worker.request(message, limits.decision_seconds, limits.report_bytes)
        finally:
            worker.close()
        if not answer.get("ok"):
            raise RuntimeError(answer.get("error"))
        return answer.get("section")
