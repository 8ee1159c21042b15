"""Workers started before their table, each handed to the first seat that would start it.

A worker's start (an interpreter, its imports, the plugin's import) is most of what a
sandboxed seat costs a short command, and none of it depends on the table: the
``load`` message names a distribution's entry points, never a seed, a slot or a
hand. So :mod:`arena.sandbox.early` starts a table's workers while the arena is still
importing, and :class:`SandboxedSeat <arena.sandbox.remote.SandboxedSeat>` takes one
here when its policy and code are exactly those it would start a worker with. A
worker taken is the worker the seat would have started: its own uid and namespaces,
sent its seat's setup only once taken. One no seat takes is ended at exit.

Started all at once, the workers took the arena's own core from it, and the command
was no faster. So they start one after another on the cores the arena leaves free
(all but one), each once the one before has imported its plugin: the arena's start-up
is not slowed, and a worker not yet started when its seat comes is started by the seat.
"""

from __future__ import annotations

import atexit
import os
import select
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from arena.logs import get_logger

if TYPE_CHECKING:
    from arena.sandbox.policy import SandboxPolicy
    from arena.sandbox.protocol import WorkerCode
    from arena.sandbox.remote import Worker

PACING_SECONDS = 0.05
"""How often the starting thread looks again at workers it waits on (one may be taken,
and its pipe closed, meanwhile)."""

log = get_logger(__name__)


class StartedWorkers:
    """Workers started ahead of their seats, by policy and code, each taken at most once."""

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._owner = os.getpid()
        self._pending: list[tuple[SandboxPolicy, WorkerCode]] = []
        self._started: list[Worker] = []
        self._closed = threading.Event()

    def start(
        self,
        policy: SandboxPolicy,
        codes: Sequence[WorkerCode],
        launch: Callable[[SandboxPolicy, WorkerCode], Worker],
        at_once: int,
    ) -> None:
        """Start a worker for each of ``codes`` in a thread, at most ``at_once`` of them
        importing at a time; a seat that comes first starts its own instead."""
        with self._mutex:
            self._pending += [(policy, code) for code in codes]
        threading.Thread(
            target=self._start_pending, args=(launch, at_once), name="early-workers", daemon=True
        ).start()

    def take(self, policy: SandboxPolicy, code: WorkerCode) -> Worker | None:
        """A started worker for exactly this policy and code, or ``None`` (then the caller
        starts one, and the one still pending for it is not started)."""
        if os.getpid() != self._owner:  # a forked child: its parent's workers are not its own
            return None
        with self._mutex:
            for worker in self._started:
                if worker.policy == policy and worker.code == code:
                    self._started.remove(worker)
                    log.debug("seat takes a worker started early", distribution=code.distribution)
                    return worker
            if (policy, code) in self._pending:
                self._pending.remove((policy, code))
        return None

    def close(self) -> None:
        """End the workers no seat took, and start no more."""
        if os.getpid() != self._owner:
            return
        with self._mutex:
            self._closed.set()
            self._pending = []
            left, self._started = self._started, []
        for worker in left:
            worker.close()

    def _start_pending(self, launch, at_once: int) -> None:
        """Start the pending workers, paced; then stay until the process ends: a worker's
        parent-death signal (bubblewrap's ``--die-with-parent``, the worker's own
        ``PR_SET_PDEATHSIG``) follows the thread that started it, not the process."""
        self._start_paced(launch, at_once)
        threading.Event().wait()

    def _start_paced(self, launch, at_once: int) -> None:
        importing: list[Worker] = []
        while True:
            with self._mutex:
                importing = [w for w in importing if w in self._started]  # the rest were taken
                if len(importing) < at_once:
                    if self._closed.is_set() or not self._pending:
                        return
                    policy, code = self._pending.pop(0)
                    try:
                        worker = launch(policy, code)
                    except Exception:  # noqa: BLE001 - its seat will start it, and say why not
                        return
                    self._started.append(worker)
                    importing.append(worker)
                    log.debug("worker started early", distribution=code.distribution)
                    continue
                pipes = [w.process.from_worker for w in importing]
            try:  # readable: the worker has imported its plugin (or ended)
                done = set(select.select(pipes, [], [], PACING_SECONDS)[0])
            except (OSError, ValueError):  # a worker taken and closed meanwhile
                continue
            with self._mutex:
                importing = [w for w in importing if w.process.from_worker not in done]


EARLY_WORKERS = StartedWorkers()
atexit.register(EARLY_WORKERS.close)
