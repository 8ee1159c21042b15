"""One league-wide limiter for every seat that calls a rate-limited API.

Many tables in flight means many seats calling the API at once. Before each
request a seat takes a slot here: at most ``max_in_flight`` requests at once,
at most ``requests_per_minute`` started in any 60 s, and no new request while
the tokens of the last 60 s are over ``tokens_per_minute`` (tokens are counted
when the reply reports them). The limiter only ever delays a request, so results
do not depend on it. Unlimited until :func:`configure` is called.

A 429 (or any ``retry-after``) pauses every seat that calls the same
:class:`Endpoint` until the server's time is up, not just the one that was told:
the server limits the account (the key at that origin), not the call. Seats of
other endpoints (another provider, another key, another port of a local server)
keep playing. The pause is kept where every seat of the league reads it before
each request (a :class:`PauseBoard`): a :class:`Pause` in this process for
threads; for worker processes a :class:`SharedPause` in shared memory that the
league hands each worker as it starts; for Ray tasks, which may run on other
machines, one small actor (:mod:`arena.league.executors`). Each board keys its
deadlines by a keyed hash of the endpoint (:func:`endpoint_key`, salted per
board: per league, or per process for threads): a key never reaches a board, a
log or an actor, and the hash of a short or guessable key cannot be looked up
without the salt. A deadline in wall-clock seconds is the whole protocol, the
same on every machine of a cluster: extending it is one max, reading it one
load, and for processes no one serves it and a dead worker leaves it valid. The
slots and windows stay per process (their limits are shared out,
:meth:`Limits.share`); only the server's "wait" must reach every seat of its
endpoint at once.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import hmac
import json
import multiprocessing
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Protocol

import attrs

WINDOW = 60.0
SALT_BYTES = 16


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


@attrs.frozen
class Endpoint:
    """What one 429 pauses: requests to one origin (``scheme://host:port`` of the base URL)
    with one key. The key stays in the seat's process; boards see only
    :func:`endpoint_key`."""

    origin: str = ""
    key: str | None = attrs.field(default=None, repr=False)
    """``None``: no key sent (a local server), one endpoint per origin."""


UNNAMED = Endpoint()
"""The endpoint of a request that names none (a bench's or test's own limiter)."""


@functools.lru_cache(maxsize=1024)
def endpoint_key(endpoint: Endpoint, salt: bytes) -> int:
    """The board's name for ``endpoint``: 64 bits of HMAC-SHA256 under the board's
    ``salt``, over the origin and key as one JSON pair (no separator to forge). 2**64
    names make a collision between a league's few endpoints out of reach. Cached: every
    request asks, and hashing took 8 of a request's 12.5 us."""
    message = json.dumps([endpoint.origin, endpoint.key]).encode()
    return int.from_bytes(hmac.new(salt, message, hashlib.sha256).digest()[:8], "big")


class PauseBoard(Protocol):
    """Where the league's pause deadlines (wall-clock seconds) are kept, one per endpoint
    (:func:`endpoint_key` under :attr:`salt`)."""

    salt: bytes

    def until(self, endpoint: int) -> float: ...

    def extend(self, endpoint: int, until: float) -> None: ...


class Pause:
    """The league's pause deadlines, in wall-clock seconds, kept in this process."""

    def __init__(self) -> None:
        self.salt = secrets.token_bytes(SALT_BYTES)
        self._until: dict[int, float] = {}
        self._lock = threading.Lock()

    def until(self, endpoint: int) -> float:
        return self._until.get(endpoint, 0.0)

    def extend(self, endpoint: int, until: float) -> None:
        with self._lock:
            now = time.time()
            # a pause over is forgotten, so a league of many endpoints keeps only live ones
            live = {e: t for e, t in self._until.items() if t > now}
            live[endpoint] = max(live.get(endpoint, 0.0), until)
            self._until = live


class SharedPause:
    """The deadlines in shared memory: :data:`ENTRIES` (endpoint, deadline) pairs per worker
    process, each written only by its own worker; an endpoint's deadline is the largest any
    worker holds for it. No lock, so nothing outlives a league that Ctrl-C ends with
    ``os._exit`` (a lock's semaphore leaked, with a warning). ``multiprocessing`` arrays:
    spawned workers inherit them when handed them at start.

    A worker reuses an entry whose pause is over (else its earliest-ending one), writing
    its deadline 0, then the endpoint, then the deadline. A reader takes each entry's
    deadline read before and after its endpoint, the smaller: so an entry being reused is
    never read as the new deadline of the old endpoint, which would pause seats it was not
    meant for."""

    ENTRIES = 16
    """Endpoints one worker keeps paused at once: a league's pool names a few."""

    def __init__(self, workers: int, context=multiprocessing) -> None:
        self.salt = secrets.token_bytes(SALT_BYTES)
        self._endpoints = context.RawArray("Q", workers * self.ENTRIES)
        self._deadlines = context.RawArray("d", workers * self.ENTRIES)
        self._mine = 0

    def slot(self, index: int) -> SharedPause:
        """The same deadlines, extended through worker ``index``'s own entries."""
        view = copy.copy(self)
        view._mine = index
        return view

    def until(self, endpoint: int) -> float:
        if endpoint not in self._endpoints[:]:  # never paused: one scan, in C
            return 0.0
        before = self._deadlines[:]
        names = self._endpoints[:]
        after = self._deadlines[:]
        return max(
            (min(b, a) for n, b, a in zip(names, before, after, strict=True) if n == endpoint),
            default=0.0,
        )

    def extend(self, endpoint: int, until: float) -> None:
        first = self._mine * self.ENTRIES
        mine = range(first, first + self.ENTRIES)
        deadlines, names = self._deadlines, self._endpoints
        with _WRITING:
            held = [i for i in mine if names[i] == endpoint]
            if held:
                deadlines[held[0]] = max(deadlines[held[0]], until)
                return
            entry = min(mine, key=deadlines.__getitem__)  # over, or the earliest to end
            deadlines[entry] = 0.0
            names[entry] = endpoint
            deadlines[entry] = until


_WRITING = threading.Lock()
"""Threads of one worker process write its entries in turn (two picking one entry for two
endpoints would lose a pause). This process's own lock: never handed to another."""


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
    def request(self, endpoint: Endpoint = UNNAMED) -> Iterator[Callable[[int], None]]:
        """Hold a slot for one request to ``endpoint``, once its pause is over; the yielded
        function records the tokens it used."""
        with self._changed:
            while (wait := max(self._wait(), self.paused_until(endpoint) - time.time())) > 0:
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

    def pause(self, seconds: float, endpoint: Endpoint) -> None:
        """Hold every new request to ``endpoint``, league-wide, for ``seconds`` (its server
        asked us to wait)."""
        board = self.paused
        board.extend(endpoint_key(endpoint, board.salt), time.time() + seconds)

    def paused_until(self, endpoint: Endpoint) -> float:
        """When ``endpoint``'s pause ends (wall-clock seconds; past: not paused)."""
        board = self.paused
        return board.until(endpoint_key(endpoint, board.salt))

    def retried(self) -> None:
        with self._changed:
            self.retries += 1

    def _used(self, tokens: int) -> None:
        with self._changed:
            self._tokens.append((self.clock(), tokens))
            self._tokens_used += tokens

    def _wait(self) -> float:
        """Seconds until the windows let a request start (0: now); caller holds the
        condition. O(1) a call, amortized: each start and each reply leaves its window
        once."""
        now, limits = self.clock(), self.limits
        gone = now - WINDOW
        started, tokens = self._started, self._tokens
        while started and started[0] <= gone:
            started.popleft()
        while tokens and tokens[0][0] <= gone:
            self._tokens_used -= tokens.popleft()[1]
        wait = 0.0
        if limits.max_in_flight is not None and self.in_flight >= limits.max_in_flight:
            wait = 0.05  # until a slot frees: notify_all wakes us sooner
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
