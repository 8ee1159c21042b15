"""Where tables are played: in this thread, in threads, in processes or as Ray tasks.

Every executor plays the same function, :func:`play_fixture`, and hands back
(fixture, results JSON, event log); only the main thread stores them. An
executor takes fixtures one at a time (:meth:`submit`, up to :attr:`capacity`
in flight), so the runner decides what starts (budget) and in which order.

- ``serial``: one table at a time, here. The baseline.
- ``thread``: ``capacity`` tables in flight in daemon threads of this process,
  for I/O-bound seats (Claude: each decision waits on the network, the engine
  stays synchronous per table). The Claude limiter is shared by all of them.
- ``process``: one table per worker process, for CPU-bound scripted tables.
  Each worker has its own pipe, no shared queue lock, so stopping is a kill,
  never a wait on a worker that died holding a lock.
- ``ray``: Ray tasks on a cluster (``address``) or a local Ray instance.

Stopping (Ctrl-C, an error, the budget) abandons what is in flight: threads
are daemons, processes are killed, Ray tasks cancelled. Their episodes were
never stored, so a resumed league plays them again from the same seeds.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import signal
import threading
from collections import deque
from collections.abc import Iterator
from multiprocessing.connection import Connection, wait
from typing import Any

from arena import logs
from arena.league.schedule import Fixture
from arena.league.store import challenge_points, compress_log, results_text
from arena.plugins import PluginHost, load
from arena.runner import run_episode
from arena_plugins.claude import limiter
from arena_plugins.claude.limiter import Limits

EXECUTORS = ("serial", "thread", "process", "ray")
SEAT_ENVIRON = ("ANTHROPIC_", "ARENA_", "PLAYER_")
Played = tuple[Fixture, dict[str, Any], str, bytes, dict[tuple[int, int], int]]
"""A finished fixture: its results JSON (as a dict, and as the text the store keeps),
its compressed event log, and the points each slot took from each other slot. The text,
the log and the points are made here, in the worker, not in the main process, which
stores every episode and so is the league's one serial step (encoding the results
there took a fifth of its time per episode)."""


def play_fixture(host: PluginHost, fixture: Fixture) -> Played:
    results, records = run_episode(host, fixture.request)
    document = results.to_json()
    return (
        fixture,
        document,
        results_text(document),
        compress_log(records.data()),
        challenge_points(records),
    )


class WorkerFailed(Exception):
    """A worker could not play its table; carries the worker's one-line reason."""


class Serial:
    capacity = 1

    def __init__(self, host: PluginHost):
        self.host = host
        self.waiting: list[Fixture] = []

    @property
    def busy(self) -> int:
        return len(self.waiting)

    def submit(self, fixture: Fixture) -> None:
        self.waiting.append(fixture)

    def collect(self, timeout: float) -> Iterator[Played]:
        while self.waiting:
            yield play_fixture(self.host, self.waiting.pop(0))

    def close(self) -> None:
        self.waiting.clear()


class Threads:
    def __init__(self, host: PluginHost, capacity: int):
        self.host = host
        self.capacity = capacity
        self.busy = 0
        self.inbox: queue.SimpleQueue[Fixture | None] = queue.SimpleQueue()
        self.outbox: queue.SimpleQueue[Played | BaseException] = queue.SimpleQueue()
        for n in range(capacity):
            threading.Thread(target=self._work, name=f"league-table-{n}", daemon=True).start()

    def _work(self) -> None:
        while (fixture := self.inbox.get()) is not None:
            try:
                self.outbox.put(play_fixture(self.host, fixture))
            except BaseException as exc:  # noqa: BLE001 - handed to the main thread
                self.outbox.put(exc)

    def submit(self, fixture: Fixture) -> None:
        self.busy += 1
        self.inbox.put(fixture)

    def collect(self, timeout: float) -> Iterator[Played]:
        try:
            item = self.outbox.get(timeout=timeout)
        except queue.Empty:
            return
        while True:
            self.busy -= 1
            if isinstance(item, BaseException):
                raise item
            yield item
            try:
                item = self.outbox.get_nowait()
            except queue.Empty:
                return

    def close(self) -> None:
        for _ in range(self.capacity):
            self.inbox.put(None)


class Processes:
    QUEUED = 8
    """Fixtures sent to each worker ahead: it starts the next table the moment it finishes
    one, instead of idling while the main process stores results and answers. Scripted
    tables take about a millisecond, so a short queue ran dry: with batched stores, 2 gave
    76-79% parallel efficiency at 2 processes and 8 gives 82-87%
    (bench/league_benches.py efficiency)."""

    def __init__(self, workers: int, limits: Limits):
        self.capacity = workers * self.QUEUED
        context = multiprocessing.get_context("spawn")
        self.workers: list[tuple[Any, Connection]] = []
        self.queued: dict[Connection, deque[Fixture]] = {}
        # Workers start with Ctrl-C ignored (an ignored signal stays ignored through exec),
        # so a Ctrl-C while they start prints nothing from them either.
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            for _ in range(workers):
                mine, theirs = context.Pipe()
                process = context.Process(
                    target=_process_worker,
                    args=(theirs, limits.share(workers), logs.settings()),
                    daemon=True,
                )
                process.start()
                theirs.close()
                self.workers.append((process, mine))
                self.queued[mine] = deque()
        finally:
            signal.signal(signal.SIGINT, previous)

    @property
    def busy(self) -> int:
        return sum(len(fixtures) for fixtures in self.queued.values())

    def submit(self, fixture: Fixture) -> None:
        conn = min(self.queued, key=lambda c: len(self.queued[c]))
        conn.send(fixture)
        self.queued[conn].append(fixture)

    def collect(self, timeout: float) -> Iterator[Played]:
        for conn in wait([c for c, fixtures in self.queued.items() if fixtures], timeout):
            fixture = self.queued[conn].popleft()
            try:
                outcome = conn.recv()
            except (EOFError, OSError):
                raise WorkerFailed(f"the worker playing table {fixture.table} died") from None
            if isinstance(outcome, BaseException):
                raise outcome
            yield fixture, *outcome

    def close(self) -> None:
        for process, conn in self.workers:
            process.kill()
            conn.close()
        for process, _ in self.workers:
            process.join(timeout=2)


def _process_worker(conn: Connection, limits: Limits, log_settings: logs.Settings | None) -> None:
    """A process executor's worker: Ctrl-C is the parent's to handle, then it kills us. It
    logs as its parent does (structlog's defaults would print to the parent's stdout)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if log_settings is not None:
        logs.configure(log_settings)
    limiter.configure(limits)
    host = load()
    while True:
        try:
            fixture = conn.recv()
        except EOFError:
            return
        try:
            conn.send(play_fixture(host, fixture)[1:])
        except Exception as exc:  # the parent reports it as one line
            conn.send(WorkerFailed(f"table {fixture.table}: {type(exc).__name__}: {exc}"))


class Ray:
    """Tables as Ray tasks: on ``address``'s cluster, or a local instance started (and
    stopped) here with ``capacity`` CPUs and no dashboard."""

    def __init__(self, capacity: int, limits: Limits, address: str | None = None):
        try:
            import ray
        except ImportError:
            raise WorkerFailed("--executor ray needs Ray: pip install 'liars-arena[ray]'") from None
        self.ray = ray
        self.capacity = capacity
        self.limits = limits.share(capacity)
        self.started = not ray.is_initialized()
        if self.started:
            options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
            if address:
                options["address"] = address
            else:
                options["num_cpus"] = capacity
            ray.init(**options)
        self.remote = ray.remote(max_retries=0)(_ray_task)
        self.running: dict[Any, Fixture] = {}

    @property
    def busy(self) -> int:
        return len(self.running)

    def submit(self, fixture: Fixture) -> None:
        self.running[self.remote.remote(fixture, self.limits, _seat_environ())] = fixture

    def collect(self, timeout: float) -> Iterator[Played]:
        ready, _ = self.ray.wait(list(self.running), num_returns=1, timeout=timeout)
        for ref in ready:
            fixture = self.running.pop(ref)
            try:
                outcome = self.ray.get(ref)
            except self.ray.exceptions.RayError as exc:
                raise WorkerFailed(f"table {fixture.table}: {str(exc).splitlines()[0]}") from None
            yield fixture, *outcome

    def close(self) -> None:
        for ref in self.running:
            self.ray.cancel(ref, force=True)
        self.running.clear()
        if self.started:
            self.ray.shutdown()


_ray_host: PluginHost | None = None


def _ray_task(fixture: Fixture, limits: Limits, environ: dict[str, str]) -> tuple:
    """One table in a Ray worker, with the driver's seat settings (API key, base URL)."""
    global _ray_host
    os.environ.update(environ)
    if _ray_host is None:
        _ray_host = load()
        limiter.configure(limits)
    return play_fixture(_ray_host, fixture)[1:]


def _seat_environ() -> dict[str, str]:
    """What a seat reads from the environment, for workers that do not inherit ours."""
    return {k: v for k, v in os.environ.items() if k.startswith(SEAT_ENVIRON)}


def make_executor(
    kind: str, host: PluginHost, concurrency: int, limits: Limits, address: str | None = None
) -> Serial | Threads | Processes | Ray:
    """The executor ``kind`` with ``concurrency`` tables in flight (API ``limits`` shared)."""
    if kind == "serial" or concurrency <= 1 and kind != "ray":
        return Serial(host)
    if kind == "thread":
        return Threads(host, concurrency)
    if kind == "process":
        return Processes(concurrency, limits)
    return Ray(concurrency, limits, address)
