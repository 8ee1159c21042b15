"""Workers started before their table, each handed to the first seat that would start it.

A worker's start (an interpreter, its imports, the plugin's import) is most of what a
sandboxed seat costs a short command, and none of it depends on the table: the
``load`` message names a distribution's entry points, never a seed, a slot or a
hand. So :mod:`arena.sandbox.early` starts a table's workers while the arena is still
importing, and :class:`SandboxedSeat <arena.sandbox.remote.SandboxedSeat>` takes one
here when its policy and code are exactly those it would start a worker with. A
worker taken is the worker the seat would have started: its own uid and namespaces,
sent its seat's setup only once taken. One no seat takes is ended at exit.

As many start at once, in the caller's thread, as this process has cores; each of the
rest once one of those has imported its plugin, from a thread of the pool's. The arena
imports meanwhile and is the longer path, its workers ready before it: four starting at
once on two cores left it two fifths of them, two at a time two thirds, and it was
ready sooner with the workers still ready before it (``arena play --deals 1``, four
sandboxed seats, two cores: 565 against 601 ms, median of 25 interleaved runs; the
bench's ratio to four bayes seats 1.35x and 1.40x against 1.48x twice). One at a time
made the workers the longer path: slower than all at once (1.65x the trusted command
against 1.47x, in one interleaved run).

Nothing here logs: a log call imports structlog (40 ms of the arena's CPU), which a
command that logs nothing never pays; with two debug lines the early start saved
nothing.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import select
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from arena.sandbox.policy import SandboxPolicy
    from arena.sandbox.protocol import WorkerCode
    from arena.sandbox.remote import Worker


class StartedWorkers:
    """Workers started ahead of their seats, by policy and code, each taken at most once."""

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._owner = os.getpid()
        self._started: list[Worker] = []
        self._pending: list[WorkerCode] = []
        """Codes whose workers wait their turn (:meth:`_pace`); a seat's ``take`` claims one."""
        self._pending_policy: SandboxPolicy | None = None
        self._closed = False

    def start(
        self,
        policy: SandboxPolicy,
        codes: Sequence[WorkerCode],
        launch: Callable[[SandboxPolicy, WorkerCode], Worker],
    ) -> None:
        """Start a worker for each of ``codes``, as many at once as this process has cores
        and the rest paced (see the module); one that cannot start is left to its seat,
        which starts its own and says why not, and so are those after it."""
        at_once = len(os.sched_getaffinity(0))
        importing = []
        for code in codes[:at_once]:
            with self._mutex:
                worker = self._launch(policy, code, launch)
            if worker is None:
                return
            importing.append(worker)
        if len(codes) > at_once:
            with self._mutex:
                self._pending, self._pending_policy = list(codes[at_once:]), policy
            watched = [os.dup(worker.process.from_worker) for worker in importing]
            threading.Thread(target=self._pace, args=(watched, launch), daemon=True).start()

    def _launch(self, policy, code, launch) -> Worker | None:
        """A started worker, kept to be taken (with the mutex held), or ``None``."""
        try:
            worker = launch(policy, code)
        except Exception:  # noqa: BLE001 - the seat's own start reports it
            return None
        self._started.append(worker)
        return worker

    def _pace(self, watched: list[int], launch) -> None:
        """Start the pending workers in turn (:meth:`_start_pending`), then stay for as long
        as the process: the workers a thread starts are killed when it ends, as their
        parent-death signal (bubblewrap's ``--die-with-parent``, the worker's own
        ``PR_SET_PDEATHSIG``) follows the thread that started them, not the process."""
        try:
            self._start_pending(watched, launch)
        except Exception:  # noqa: BLE001 - the rest are left to their seats, which start their own
            with self._mutex:
                self._pending = []
        threading.Event().wait()

    def _start_pending(self, watched: list[int], launch) -> None:
        """Start a pending worker each time one still importing has imported its plugin or
        ended, or when none has within a worker's start time. Either makes its pipe
        readable: ``watched`` holds a duplicate of each one's, closed here."""
        policy = self._pending_policy
        try:
            while watched and self._pending:
                ready = select.select(watched, [], [], policy.limits.start_seconds)[0]
                for fd in ready or list(watched):
                    watched.remove(fd)
                    os.close(fd)
                    with self._mutex:
                        if self._closed or not self._pending:
                            continue
                        worker = self._launch(policy, self._pending.pop(0), launch)
                        if worker is None:
                            self._pending = []
                            continue
                        watched.append(os.dup(worker.process.from_worker))
        finally:
            for fd in watched:
                with contextlib.suppress(OSError):
                    os.close(fd)

    def take(self, policy: SandboxPolicy, code: WorkerCode) -> Worker | None:
        """A started worker for exactly this policy and code, or ``None``: then the seat
        starts its own, and a pending one of that code is no longer started."""
        if os.getpid() != self._owner:  # a forked child: its parent's workers are not its own
            return None
        with self._mutex:
            for worker in self._started:
                if worker.policy == policy and worker.code == code:
                    self._started.remove(worker)
                    return worker
            if policy == self._pending_policy and code in self._pending:
                self._pending.remove(code)
        return None

    def close(self) -> None:
        """End the workers no seat took, and start no more."""
        if os.getpid() != self._owner:
            return
        with self._mutex:
            left, self._started = self._started, []
            self._closed, self._pending = True, []
        for worker in left:
            worker.close()


EARLY_WORKERS = StartedWorkers()
atexit.register(EARLY_WORKERS.close)
