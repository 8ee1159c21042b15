"""Workers started before their table, each handed to the first seat that would start it.

A worker's start (an interpreter, its imports, the plugin's import) is most of what a
sandboxed seat costs a short command, and none of it depends on the table: the
``load`` message names a distribution's entry points, never a seed, a slot or a
hand. So :mod:`arena.sandbox.early` starts a table's workers while the arena is still
importing, and :class:`SandboxedSeat <arena.sandbox.remote.SandboxedSeat>` takes one
here when its policy and code are exactly those it would start a worker with. A
worker taken is the worker the seat would have started: its own uid and namespaces,
sent its seat's setup only once taken. One no seat takes is ended at exit.

They are started all at once, in the caller's thread. Paced from a thread of their
own, one at a time to leave the arena's core alone, the command was slower (1.65x the
trusted command, against 1.47x at once, in one interleaved run): each start waited for
the interpreter lock between its system calls while the arena imported.

Nothing here logs: a log call imports structlog (40 ms of the arena's CPU), which a
command that logs nothing never pays; with two debug lines the early start saved
nothing.
"""

from __future__ import annotations

import atexit
import os
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

    def start(
        self,
        policy: SandboxPolicy,
        codes: Sequence[WorkerCode],
        launch: Callable[[SandboxPolicy, WorkerCode], Worker],
    ) -> None:
        """Start a worker for each of ``codes``; one that cannot start is left to its seat,
        which starts its own and says why not."""
        for code in codes:
            try:
                worker = launch(policy, code)
            except Exception:  # noqa: BLE001 - the seat's own start reports it
                return
            with self._mutex:
                self._started.append(worker)

    def take(self, policy: SandboxPolicy, code: WorkerCode) -> Worker | None:
        """A started worker for exactly this policy and code, or ``None``."""
        if os.getpid() != self._owner:  # a forked child: its parent's workers are not its own
            return None
        with self._mutex:
            for worker in self._started:
                if worker.policy == policy and worker.code == code:
                    self._started.remove(worker)
                    return worker
        return None

    def close(self) -> None:
        """End the workers no seat took."""
        if os.getpid() != self._owner:
            return
        with self._mutex:
            left, self._started = self._started, []
        for worker in left:
            worker.close()


EARLY_WORKERS = StartedWorkers()
atexit.register(EARLY_WORKERS.close)
