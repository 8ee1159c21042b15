"""One league-wide limiter for every seat that calls a rate-limited API.

Many tables in flight means many seats calling the API at once. Before each
request a seat takes a slot here: at most ``max_in_flight`` requests at once,
at most ``requests_per_minute`` started in any 60 s, and no new request while
the tokens of the last 60 s are over ``tokens_per_minute`` (tokens are counted
when the reply reports them). A 429 (or any ``retry-after``) pauses every seat
of the league until the server's time is up, not just the one that was told: the
server limits the account, not the call. The limiter only ever delays a request,
so results do not depend on it. Unlimited until :func:`configure` is called.

The pause is a deadline kept where every seat of the league reads it before each
request (a :class:`PauseBoard`): a :class:`Pause` in this process for threads; for
worker processes a :class:`SharedPause`, one double in shared memory that the
league hands each worker as it starts; for Ray tasks, which may run on other
machines, one small actor (:mod:`arena.league.executors`). A deadline in
wall-clock seconds is the whole protocol, the same on every machine of a cluster:
extending it is one max, reading it one load, and for processes no one serves it
and a dead worker leaves it valid. The slots and windows stay per process (their
limits are shared out, :meth:`Limits.share`); only the server's "wait" must reach
every seat at once, since one seat's 429 says the account is over its limit.
"""

from __future__ import annotations

import copy
import multiprocessing
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Protocol

import attrs

WINDOW = 60.0


@attrs.frozen
class Limits:
    """Client-side limits on the API, over every seat that shares them."""

    max_in_flight: int | None = None
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None

    def share(self, parts: int) -> Limits:
        """One of ``parts`` processes' share, so that together they keep the limits."""

        def part(value):
            return None if value is None else max(type(value)(value / parts), 1)

        return Limits(*(part(v) for v in attrs.astuple(self)))


class PauseBoard(Protocol):
    """Where the league's pause deadline (wall-clock seconds) is kept."""

    def until(self) -> float: ...

    def extend(self, until: float) -> None: ...


class Pause:
    """The league's pause deadline, in wall-clock seconds, kept in this process."""

    def __init__(self) -> None:
        self._until = 0.0
        self._lock = threading.Lock()

    def until(self) -> float:
        return self._until

    def extend(self, until: float) -> None:
        with self._lock:
            self._until = max(self._until, until)


class SharedPause:
    """The deadline in shared memory: one double per worker process, each written only by
    its own worker, the deadline their largest. No lock, so nothing outlives a league
    that Ctrl-C ends with ``os._exit`` (a lock's semaphore leaked, with a warning). A
    ``multiprocessing`` array: spawned workers inherit it when handed it at start."""

    def __init__(self, workers: int, context=multiprocessing) -> None:
        self._deadlines = context.RawArray("d", workers)
        self._mine = 0

    def slot(self, index: int) -> SharedPause:
        """The same deadlines, extended through worker ``index``'s own double."""
        view = copy.copy(self)
        view._mine = index
        return view

    def until(self) -> float:
        return max(self._deadlines)

    def extend(self, until: float) -> None:
        self._deadlines[self._mine] = max(self._deadlines[self._mine], until)


class Limiter:
    def __init__(
        self,
        limits: Limits = Limits(),
        clock: Callable[[], float] = time.monotonic,
        pause: PauseBoard | None = None,
    ) -> None:
        self.limits = limits
        self.clock = clock
        """Times the windows (monotonic); the pause is wall-clock, shared by processes."""
        self.paused: PauseBoard = pause or Pause()
        self.in_flight = 0
        self.requests = 0
        self.retries = 0
        self._started: deque[float] = deque()
        self._tokens: deque[tuple[float, int]] = deque()
        self._tokens_used = 0
        """The sum of ``_tokens``' counts, kept as they come and go: the window of a busy
        league holds thousands of replies, and summing them under the lock on every
        request cost 0.3 ms a call at 20,000."""
        self._changed = threading.Condition()

    @contextmanager
    def request(self) -> Iterator[Callable[[int], None]]:
        """Hold a slot for one request; the yielded function records the tokens it used."""
        with self._changed:
            while (wait := self._wait()) > 0:
                self._changed.wait(min(wait, 0.25))
            self.in_flight += 1
            self.requests += 1
            self._started.append(self.clock())
        try:
            yield self._used
        finally:
            with self._changed:
                self.in_flight -= 1
                self._changed.notify_all()

    def pause(self, seconds: float) -> None:
        """Hold every new request of the league for ``seconds`` (the server asked us to wait)."""
        self.paused.extend(time.time() + seconds)

    def retried(self) -> None:
        with self._changed:
            self.retries += 1

    def _used(self, tokens: int) -> None:
        with self._changed:
            self._tokens.append((self.clock(), tokens))
            self._tokens_used += tokens

    def _wait(self) -> float:
        """Seconds until a request may start (0: now); caller holds the condition. O(1) a
        call, amortized: each start and each reply leaves its window once."""
        now, limits = self.clock(), self.limits
        gone = now - WINDOW
        started, tokens = self._started, self._tokens
        while started and started[0] <= gone:
            started.popleft()
        while tokens and tokens[0][0] <= gone:
            self._tokens_used -= tokens.popleft()[1]
        wait = self.paused.until() - time.time()
        if limits.max_in_flight is not None and self.in_flight >= limits.max_in_flight:
            wait = max(wait, 0.05)  # until a slot frees: notify_all wakes us sooner
        if limits.requests_per_minute and len(started) >= limits.requests_per_minute:
            wait = max(wait, started[0] + WINDOW - now)
        if limits.tokens_per_minute and self._tokens_used >= limits.tokens_per_minute:
            wait = max(wait, tokens[0][0] + WINDOW - now)
        return wait


LIMITER = Limiter()
"""The process's limiter; the league configures it, the client uses it."""


def configure(limits: Limits, pause: PauseBoard | None = None) -> None:
    """Set this process's limits and, in a league's worker, the league's pause (a league
    does, before its tables start)."""
    with LIMITER._changed:
        LIMITER.limits = limits
        if pause is not None:
            LIMITER.paused = pause
        LIMITER._changed.notify_all()
