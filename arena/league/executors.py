"""Where tables are played: in this thread, in threads, in processes or as Ray tasks.

Every executor plays the same function, :func:`play_fixture`, and hands back
(fixture, results JSON, event log); only the main thread stores them. An
executor takes fixtures one at a time (:meth:`submit`, up to :attr:`capacity`
in flight), so the runner decides what starts (budget) and in which order.

- ``serial``: one table at a time, here. The baseline.
- ``thread``: ``capacity`` tables in flight in daemon threads of this process,
  for I/O-bound seats (Claude: each decision waits on the network, the engine
  stays synchronous per table). The Claude limiter is shared by all of them.
- ``process``: worker processes, each playing one table at a time (CPU-bound
  scripted tables) or, given more tables than workers, several in threads
  (model tables past one core). Each worker has its own pipe, no shared queue
  lock, so stopping is a kill, never a wait on a worker that died holding a lock.
- ``ray``: Ray tasks on a cluster (``address``) or a local Ray instance. An
  address where nothing answers is refused before Ray is asked, and a head that
  stops answering mid-league stops it in one line (Ray waited a minute, then
  ended the process in its own words).

Which flags each executor applies is :data:`EXECUTOR_FLAGS`. Worker processes and
Ray tasks each get a share of the API limits and one league-wide board of 429
pauses, one per endpoint (:mod:`arena.limits`: shared memory for processes, an
actor for Ray).

A worker that dies (kill -9, a lost Ray node) is not the table's fault: its
table is played again from the same seed on another worker, up to
:data:`RETRIES` times (a fresh process; Ray's own task retries), so the
league still stores each episode once, with the bytes an unbroken run stores.
A table's own error (a seat that cannot start) is raised in the main process
as the exception it was, as if played here, never retried.

:attr:`capacity` is how many fixtures an executor takes at once, :attr:`slots`
how many tables it plays at once; a runner with a budget submits no more than
``slots``, so no paid table waits in a queue while the budget runs out.

Stopping (Ctrl-C, an error, the budget) abandons what is in flight: threads
are daemons, processes are killed, Ray tasks cancelled. Their episodes were
never stored, so a resumed league plays them again from the same seeds.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import queue
import re
import secrets
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterator
from multiprocessing import resource_tracker
from multiprocessing.connection import Connection, wait
from typing import Any

from arena import limits as limiter
from arena import logs
from arena.extras import install_hint
from arena.league.config import LeagueError
from arena.league.schedule import Fixture
from arena.league.store import challenge_points, compress_log, results_text
from arena.limits import SALT_BYTES, Limits, Pause, PauseBoard, SharedPause
from arena.loopback import is_loopback
from arena.plugins import PluginHost, load
from arena.runner import run_episode

log = logs.get_logger(__name__)
LOOPBACK = "127.0.0.1"
EXECUTORS = ("serial", "thread", "process", "ray")
EXECUTOR_FLAGS = {
    "serial": frozenset(),
    "thread": frozenset({"concurrency"}),
    "process": frozenset({"concurrency", "workers"}),
    "ray": frozenset({"concurrency", "address"}),
}
"""The ``league run`` flags each executor applies (for the process executor ``--workers``
is its processes and ``--concurrency`` its tables in flight, their count alone); any other
is refused, never dropped."""
RETRIES = 3
"""Times a table is played again after its worker died under it, before the league stops."""
PROBE_SECONDS = 5.0
"""How long a TCP connect to a Ray cluster's address may take before it counts as silent."""
HEAD_CHECK_SECONDS = 1.0
"""How often a Ray league checks that its cluster's head still answers."""
SEAT_ENVIRON = ("ANTHROPIC_", "ARENA_", "OPENAI_", "PLAYER_")
"""The variables a seat reads, which a Ray task (that does not inherit ours) is handed: an
``openai`` seat's ``key_env`` must be named within them to reach a Ray worker."""
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


class ExecutorFailed(Exception):
    """The executor could not play a table (its worker failed past its retries, or the
    executor could not start); carries the one-line reason. Not the sandbox's
    :class:`arena.sandbox.remote.WorkerFailed`, which is one seat's worker."""


class Serial:
    capacity = slots = 1

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
        self.capacity = self.slots = capacity
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
    """``workers`` processes (no more than ``tables``), each playing its share of
    ``tables`` tables at once in threads: processes for the cores, threads for the tables
    that wait on an API. A process whose threads keep it busy loses to its own GIL: at 2 s
    latency 1,024 model tables reached 54% of ideal throughput in 2 processes and 97.6%
    in 8 (bench/league_latency.py)."""

    QUEUED = 8
    """Fixtures sent to each worker beyond the tables it plays at once: it starts the next
    table the moment it finishes one, instead of idling while the main process stores
    results and answers. Scripted tables take about a millisecond, so a short queue ran
    dry: with batched stores, 2 gave 76-79% parallel efficiency at 2 processes and 8 gives
    82-87% (bench/league_benches.py efficiency)."""

    def __init__(self, workers: int, limits: Limits, tables: int | None = None):
        tables = workers if tables is None else tables
        workers = min(workers, tables)
        self.threads = [tables // workers + (slot < tables % workers) for slot in range(workers)]
        """Tables each worker plays at once: ``tables`` split as evenly as it goes."""
        self.capacity = tables + workers * self.QUEUED
        self.slots = tables
        self.context = multiprocessing.get_context("spawn")
        self.limits = limits.share(workers)
        self.pause = SharedPause(workers, self.context)
        """Every worker's 429 pause (:mod:`arena.limits`), a slot of it each."""
        self.workers: dict[Connection, Any] = {}
        self.slot_of: dict[Connection, int] = {}
        self.queued: dict[Connection, dict[int, Fixture]] = {}
        """Each worker's fixtures not yet back, by schedule index, in the order sent (the
        order its threads take them in)."""
        self.restarts: dict[int, int] = {}
        """Schedule index -> times its worker died while it may have been playing it."""
        try:
            for slot in range(workers):
                self._start_worker([], slot)
        except BaseException:  # a Ctrl-C, taken once a worker started: no league to close us
            self.close()
            raise

    def _start_worker(self, fixtures: list[Fixture], slot: int) -> None:
        """A new worker process, sent ``fixtures`` to play in order."""
        mine, theirs = self.context.Pipe()
        process = self.context.Process(
            target=_process_worker,
            args=(theirs, self.threads[slot], self.limits, self.pause.slot(slot), logs.settings()),
            daemon=True,
        )
        with _ctrl_c_held():
            process.start()
            self.workers[mine] = process
        theirs.close()
        self.slot_of[mine] = slot
        self.queued[mine] = {fixture.index: fixture for fixture in fixtures}
        for fixture in fixtures:
            mine.send(fixture)

    @property
    def busy(self) -> int:
        return sum(len(fixtures) for fixtures in self.queued.values())

    def submit(self, fixture: Fixture) -> None:
        conn = min(self.queued, key=lambda c: len(self.queued[c]) / self.threads[self.slot_of[c]])
        self.queued[conn][fixture.index] = fixture
        try:
            conn.send(fixture)
        except OSError:  # it died waiting for work: a new one plays this fixture
            self._replace(conn)

    def collect(self, timeout: float) -> Iterator[Played]:
        for conn in wait([c for c, fixtures in self.queued.items() if fixtures], timeout):
            try:
                index, outcome = conn.recv()
            except (EOFError, OSError):
                self._replace(conn)
                continue
            fixture = self.queued[conn].pop(index)
            if isinstance(outcome, BaseException):
                raise outcome
            yield fixture, *outcome

    def _replace(self, conn: Connection) -> None:
        """A worker died: its fixtures go, in order, to a new one, unless one it may have
        been playing (the first of its threads' count, as its threads take them in order)
        has now lost :data:`RETRIES` + 1 workers."""
        process = self.workers.pop(conn)
        fixtures = list(self.queued.pop(conn).values())
        slot = self.slot_of.pop(conn)
        conn.close()
        process.join(timeout=2)
        for playing in fixtures[: self.threads[slot]]:
            deaths = self.restarts[playing.index] = self.restarts.get(playing.index, 0) + 1
            log.warning(
                "worker died", table=playing.table, exitcode=process.exitcode, deaths=deaths
            )
            if deaths > RETRIES:
                raise ExecutorFailed(
                    f"table {playing.table}: its worker process died {deaths} times"
                    f" (last exit code {process.exitcode})"
                )
        self._start_worker(fixtures, slot)

    def close(self) -> None:
        for process in self.workers.values():
            process.kill()
        for conn, process in self.workers.items():
            conn.close()
            process.join(timeout=2)


@contextlib.contextmanager
def _ctrl_c_held() -> Iterator[None]:
    """Ctrl-C held back while a worker process starts, then taken.

    This thread blocks it, and a blocked signal stays blocked through exec: the worker is
    born with Ctrl-C held and ignores it before it lets it through
    (:func:`_process_worker`), so a Ctrl-C while it starts prints nothing from it. Another
    thread of this process may still take the signal, and Python then runs its handler
    here: for the while that handler only notes it. Once the worker is started and
    recorded, for :meth:`Processes.close` to end, the Ctrl-C is raised again. Ignoring it
    for the while instead lost it, and the league played on.

    The spawn machinery's first start launches multiprocessing's resource tracker, and
    that launch unblocks Ctrl-C in this thread, whatever it was: launched first, it
    leaves the hold alone.
    """
    resource_tracker.ensure_running()
    came: list[int] = []
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    previous = signal.signal(signal.SIGINT, lambda signum, frame: came.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        signal.pthread_sigmask(signal.SIG_SETMASK, held)  # one still pending arrives here
        if came:
            signal.raise_signal(signal.SIGINT)


def _process_worker(
    conn: Connection,
    threads: int,
    limits: Limits,
    pause: SharedPause,
    log_settings: logs.Settings | None,
) -> None:
    """A process executor's worker: this thread reads fixtures, ``threads`` threads play
    them (sharing this process's limiter) and each sends back (schedule index, outcome).
    Ctrl-C is the parent's to handle, then it kills us. It logs as its parent does
    (structlog's defaults would print to the parent's stdout)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # and a Ctrl-C held since its start is dropped
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # see _ctrl_c_held
    if log_settings is not None:
        logs.configure(log_settings)
    limiter.configure(limits, pause)
    host = load()
    inbox: queue.SimpleQueue[Fixture | None] = queue.SimpleQueue()
    sending = threading.Lock()

    def play() -> None:
        while (fixture := inbox.get()) is not None:
            try:
                outcome = play_fixture(host, fixture)[1:]
            except Exception as exc:  # the parent raises it, as if the table was played there
                outcome = exc
            with sending:
                try:
                    conn.send((fixture.index, outcome))
                except OSError:  # the parent is gone, or killing us
                    return
                except Exception as exc:  # it does not pickle: its one line does
                    failed = ExecutorFailed(f"table {fixture.table}: {type(exc).__name__}: {exc}")
                    conn.send((fixture.index, failed))

    players = [threading.Thread(target=play, daemon=True) for _ in range(threads)]
    for player in players:
        player.start()
    while True:
        try:
            inbox.put(conn.recv())
        except EOFError:
            break
    for _ in players:
        inbox.put(None)


class Ray:
    """Tables as Ray tasks: on ``address``'s cluster (``auto``: the one this machine runs),
    or a private local instance started (and stopped) here with ``capacity`` CPUs and no
    dashboard, even where another cluster runs (Ray's ``address="local"``: neither
    ``RAY_ADDRESS`` nor the last ``ray start`` is joined unasked)."""

    def __init__(self, capacity: int, limits: Limits, address: str | None = None):
        if address:
            _check_answers(address)
            _quiet_ray()
        try:
            import ray
        except ImportError:
            raise ExecutorFailed(f"--executor ray needs Ray: {install_hint('ray')}") from None
        self.ray = ray
        self.capacity = self.slots = capacity
        self.limits = limits.share(capacity)
        self.started = not ray.is_initialized()
        if self.started:
            options: dict[str, Any] = {
                "include_dashboard": False,
                "log_to_driver": False,
                "logging_level": logging.ERROR,
            }
            if address:
                options["address"] = address
            else:
                options.update(address="local", num_cpus=capacity)
            if _on_loopback(address):
                # Ray otherwise names this node by its network interface's address, and a
                # private instance would listen there: a cluster on this machine stays on it.
                options["_node_ip_address"] = LOOPBACK
            try:
                with _stderr_silenced():
                    ray.init(**options)
            except (ConnectionError, ValueError, RuntimeError) as exc:
                raise ExecutorFailed(_join_failure(address, exc)) from None
            _log_ray_errors(ray)
        # Ray plays a table again when its worker or node dies (system failures), but
        # never for the table's own exception (retry_exceptions off).
        self.remote = ray.remote(max_retries=RETRIES, retry_exceptions=False)(_ray_task)
        self.pause = RayPause(ray.remote(num_cpus=0)(Pause).remote())
        """Every task's 429 pause (:mod:`arena.limits`)."""
        self.running: dict[Any, Fixture] = {}
        named = address not in (None, "auto")
        self.head = address if named else ray.get_runtime_context().gcs_address
        """The cluster's head, watched while the league plays: the address it was joined
        by (a ``ray://`` one is Ray Client's to watch), else its GCS's."""
        self.head_seen = time.monotonic()

    @property
    def busy(self) -> int:
        return len(self.running)

    def submit(self, fixture: Fixture) -> None:
        ref = self.remote.remote(fixture, self.limits, self.pause, _seat_environ())
        self.running[ref] = fixture

    def collect(self, timeout: float) -> Iterator[Played]:
        self._watch_head()
        ready, _ = self.ray.wait(list(self.running), num_returns=1, timeout=timeout)
        for ref in ready:
            fixture = self.running.pop(ref)
            try:
                outcome = self.ray.get(ref)
            except self.ray.exceptions.RayTaskError as exc:  # the table's own error
                if isinstance(exc.cause, Exception):
                    raise exc.cause from None
                raise ExecutorFailed(f"table {fixture.table}: {_first_line(exc)}") from None
            except self.ray.exceptions.RayError as exc:  # its workers died RETRIES + 1 times
                raise ExecutorFailed(f"table {fixture.table}: {_first_line(exc)}") from None
            yield fixture, *outcome

    def _watch_head(self) -> None:
        """Stop in one line once the head stops answering: Ray's driver waited 60 s for it,
        then ended the process with its own C++ log line. Every stored episode is
        committed, so the league resumes where it stopped."""
        if time.monotonic() - self.head_seen < HEAD_CHECK_SECONDS:
            return
        silent = _silence(self.head)
        if silent is not None:
            raise ExecutorFailed(
                f"lost the Ray cluster's head at {self.head}: {silent}; the stored episodes"
                " are kept: run the same command again to resume the league"
            )
        self.head_seen = time.monotonic()

    def close(self) -> None:
        for ref in self.running:
            self.ray.cancel(ref, force=True)
        self.running.clear()
        if self.started:
            self.ray.shutdown()


ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _first_line(exc: BaseException) -> str:
    """An exception's first line without Ray's colour codes."""
    text = ANSI.sub("", str(exc)).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _log_ray_errors(ray) -> None:
    """The cluster's error messages (a worker died, and so on) go to our log, not to stdout,
    where Ray's driver prints them whatever ``log_to_driver`` says, in colour, into the
    league's ``--json`` report. Its retries handle the faults they describe."""

    def log_messages(data: dict, ignore_prefix: bool) -> None:
        for line in data.get("lines", ()):
            log.warning("ray says", source=data.get("pid"), message=_first_line(line))

    if hasattr(ray._private.worker, "print_to_stdstream"):  # its one sink for them
        ray._private.worker.print_to_stdstream = log_messages


def _on_loopback(address: str | None) -> bool:
    """Whether the driver's node belongs on 127.0.0.1: a private instance, or a cluster
    joined at a loopback address (``auto`` joins this machine's cluster, which may not be)."""
    return not address or is_loopback(address.rpartition(":")[0].strip("[]"))


def _check_answers(address: str) -> None:
    """Refuse a ``HOST:PORT`` where nothing answers in one line, within seconds: Ray
    retries such a join for minutes (13 min 47 s, then an error about token
    authentication). ``auto`` and ``ray://`` addresses are Ray's to resolve."""
    silent = _silence(address)
    if silent is not None:
        raise ExecutorFailed(f"cannot join the Ray cluster at {address}: {silent}")


def _silence(address: str) -> str | None:
    """Why nothing answers a TCP connect to ``HOST:PORT`` within :data:`PROBE_SECONDS`,
    or ``None`` when something does (or the address is not ``HOST:PORT``)."""
    host, _, port = address.rpartition(":")
    if not port.isdigit() or "//" in host:
        return None
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=PROBE_SECONDS).close()
    except OSError as exc:
        return f"nothing answers there ({exc.strerror or exc})"
    return None


@contextlib.contextmanager
def _stderr_silenced() -> Iterator[None]:
    """Ray's core writes to file descriptor 2 as it starts (``Set ray log level from
    environment variable ...``, retries to reach the head), around the one line the
    league prints when it cannot start; what it says is in the exception it raises."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as devnull:
            os.dup2(devnull.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _quiet_ray() -> None:
    """Ray's core logs each retry to join a cluster to stderr, at warning level; the
    league's error says why it could not join, in one line. Read when Ray is imported."""
    os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "error")


def _join_failure(address: str | None, exc: BaseException) -> str:
    """Why Ray would not start or join, in one line, with the usual cure for a cluster
    that ``ray start`` made (token authentication, on by default)."""
    where = f"the Ray cluster at {address}" if address else "a local Ray instance"
    reason = f"cannot join {where}: {_first_line(exc)}"
    if address and os.environ.get("RAY_AUTH_MODE") is None:
        reason += (
            "; a cluster made by `ray start` wants its token: set RAY_AUTH_MODE=token"
            " (and RAY_AUTH_TOKEN, or copy ~/.ray/auth_token from the head)"
        )
    return reason


class RayPause:
    """The league's pause as a :class:`~arena.limits.Pause` actor that every Ray task's
    limiter reads before each request: Ray's workers share no memory and may run on other
    machines, and one actor call (about a millisecond, on the cluster's network) is
    small beside an API call of seconds. The endpoints' names are salted here, with this
    handle's salt, which every task receives with it (the actor's own goes unused); the
    actor holds only those names and deadlines. An actor that does not answer within
    :data:`PROBE_SECONDS` (its node lost) counts as no pause; the league's head watch
    stops the league."""

    def __init__(self, keeper: Any):
        self.keeper = keeper
        self.salt = secrets.token_bytes(SALT_BYTES)

    def until(self, endpoint: int) -> float:
        import ray

        try:
            return ray.get(self.keeper.until.remote(endpoint), timeout=PROBE_SECONDS)
        except ray.exceptions.RayError:
            return 0.0

    def extend(self, endpoint: int, until: float) -> None:
        self.keeper.extend.remote(endpoint, until)


_ray_host: PluginHost | None = None


def _ray_task(
    fixture: Fixture, limits: Limits, pause: PauseBoard, environ: dict[str, str]
) -> tuple:
    """One table in a Ray worker, with the driver's seat settings (API key, base URL)."""
    global _ray_host
    os.environ.update(environ)
    if _ray_host is None:
        _ray_host = load()
        limiter.configure(limits, pause)
    return play_fixture(_ray_host, fixture)[1:]


def _seat_environ() -> dict[str, str]:
    """What a seat reads from the environment, for workers that do not inherit ours."""
    return {k: v for k, v in os.environ.items() if k.startswith(SEAT_ENVIRON)}


def choose_executor(chosen: str | None, flags: dict[str, Any]) -> str:
    """The executor a league runs on: ``chosen`` (``--executor``), else the one the flags
    given name (``--address``: ray, ``--workers``: process, else thread). A flag given that
    the executor would not apply is a :class:`LeagueError` naming the executors that do:
    ``--workers 2 --concurrency 8`` once ran 8 threads and no process, and ``--address``
    without Ray joined nothing, both silently."""
    given = {flag for flag, value in flags.items() if value is not None}
    implied = "ray" if "address" in given else "process" if "workers" in given else "thread"
    kind = chosen or implied
    refused = sorted(given - EXECUTOR_FLAGS[kind])
    if refused:
        *others, last = (k for k in EXECUTORS if refused[0] in EXECUTOR_FLAGS[k])
        users = f"{', '.join(others)} or {last}" if others else last
        raise LeagueError(
            f"--{refused[0]} does nothing with --executor {kind}: it is for --executor {users}"
        )
    workers, concurrency = flags.get("workers"), flags.get("concurrency")
    if kind == "process" and None not in (workers, concurrency) and concurrency < workers:
        raise LeagueError(
            f"--concurrency {concurrency} is fewer than --workers {workers}: each worker"
            " process plays at least one table at a time"
        )
    return kind


def make_executor(
    kind: str,
    host: PluginHost,
    concurrency: int,
    limits: Limits,
    address: str | None = None,
    workers: int | None = None,
) -> Serial | Threads | Processes | Ray:
    """The executor ``kind`` with ``concurrency`` tables in flight (API ``limits`` shared);
    the process executor's across ``workers`` processes (default: one table each)."""
    if kind == "serial" or concurrency <= 1 and kind != "ray":
        return Serial(host)
    if kind == "thread":
        return Threads(host, concurrency)
    if kind == "process":
        return Processes(workers or concurrency, limits, concurrency)
    return Ray(concurrency, limits, address)
