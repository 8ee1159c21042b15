"""One model call, bounded whatever the server does: a whole-call deadline, a reply size cap,
and no request to an origin the seat was not given.

A model server's reply is hostile input. Left to the HTTP client, a server that
sent one byte a second held a decision for six minutes past every timeout (each
read came within the read timeout), a 50 MB body was read whole, and a
cross-origin 307 carried the organization, project and gateway headers along
(the client strips only ``Authorization``). Here:

- **Deadline.** :func:`bounded_call` runs the call in a worker thread and waits
  at most its deadline, connect, first byte and whole body together: the seat
  gets :class:`PastDeadline` on time, whatever the server drips. The worker
  stops at the next chunk that arrives (:class:`_BoundedBody` checks the
  deadline between chunks), or at the client's own timeout if nothing comes,
  which runs a little past the deadline (:func:`client_timeout`).
- **Size.** A reply is read up to its cap and refused past it
  (:class:`ReplyTooLarge`), whatever ``content-length`` says; a declared length
  past the cap is refused before a byte of the body is read. Requests ask for no
  compression (``Accept-Encoding: identity``) and a compressed reply is refused,
  so the cap bounds what is decoded too (a small gzip body can inflate a
  thousandfold).
- **Origin.** Every request, redirects included, goes to the seat's own origin
  (:func:`client_hooks`): a redirect elsewhere is refused before it is sent
  (:class:`OffOrigin`), so no credential and no prompt follows it.

These are the call's own faults (:class:`CallFault`), which the retry policy
(:mod:`arena_plugins.model_seat.retries`) handles beside the SDK's errors.
"""

from __future__ import annotations

import contextvars
import queue
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import attrs
import httpx2

from arena_plugins.model_seat.origin import Origin, origin_of, shown

Answer = TypeVar("Answer")

NO_COMPRESSION = {"Accept-Encoding": "identity"}
"""Sent with every request: the size cap then bounds the decoded reply, not the encoded."""
CLIENT_TIMEOUT_MARGIN = 1.0
"""Seconds the HTTP client's own timeout runs past a call's bound (:func:`client_timeout`)."""


def client_timeout(seconds: float) -> float:
    """The HTTP client's own timeout for calls bounded to ``seconds``: later than the bound,
    so the bound always ends an unanswered call first and the fault line names it. At the
    same time as the bound, whichever timer woke first wrote the line (the client's
    ``request timed out`` when the seat's thread woke late), and a log must not depend on
    that. The client's timeout only frees the worker of a call the seat stopped waiting
    for, when no chunk comes to stop it."""
    return seconds + CLIENT_TIMEOUT_MARGIN


class CallFault(Exception):
    """A fault of the call itself, not one the SDK raised: a bound broken, or a reply that
    cannot be read; ``str(e)`` is one deterministic line for the log."""

    transient = False
    """Whether asking again may help (the retry policy reads this)."""
    usage: dict[str, int] | None = None
    """The call's valid token counts, when it was answered and paid for."""


class PastDeadline(CallFault):
    """No whole reply within the call's deadline."""

    transient = True


class ReplyTooLarge(CallFault):
    """A reply (or its declared length) past the size cap."""


class OffOrigin(CallFault):
    """A request (a redirect's) to another origin than the seat's."""


@attrs.define
class _Guard:
    """One call's bounds, as its worker thread's hooks see them."""

    deadline: float
    """``time.monotonic()`` past which nothing more is read."""
    seconds: float
    max_bytes: int
    stopped: bool = False
    """Set when the seat stopped waiting: the worker stops at its next chunk (a flag the
    worker reads between chunks; the interpreter lock orders the write and the read)."""

    def past(self) -> bool:
        return self.stopped or time.monotonic() > self.deadline


_GUARD: contextvars.ContextVar[_Guard | None] = contextvars.ContextVar("call_guard", default=None)


class _Job:
    """One call handed to a worker: its outcome, and a lock held until it is known.

    A bare lock, released once, rather than a ``threading.Event``: an Event's wait builds
    a Condition and a waiter lock in Python, and the hand-off to a worker and back cost
    108 us of CPU a call with Events, 61 us with locks (most of what is left is the
    kernel's two thread switches)."""

    __slots__ = ("_pending", "call", "error", "value")

    def __init__(self, call: Callable[[], Any]):
        self.call = call
        self.value: Any = None
        self.error: BaseException | None = None
        self._pending = threading.Lock()
        self._pending.acquire()

    def run(self) -> None:
        try:
            self.value = self.call()
        except BaseException as error:  # handed to the waiting seat, which raises it
            self.error = error
        self._pending.release()

    def wait(self, seconds: float) -> bool:
        """Whether the outcome came within ``seconds`` (0: whether it is known now)."""
        return self._pending.acquire(timeout=max(seconds, 0))


class _Workers:
    """Daemon threads that make the calls, one more only when none is idle. Daemons, unlike
    a ``ThreadPoolExecutor``'s, never hold the process at exit: a call still hanging on a
    server the seat gave up on ends with it."""

    def __init__(self) -> None:
        self._idle: queue.SimpleQueue[queue.SimpleQueue[_Job]] = queue.SimpleQueue()

    def start(self, job: _Job) -> None:
        try:
            inbox = self._idle.get_nowait()
        except queue.Empty:
            inbox = queue.SimpleQueue()
            threading.Thread(target=self._work, args=(inbox,), daemon=True).start()
        inbox.put(job)

    def _work(self, inbox: queue.SimpleQueue[_Job]) -> None:
        while True:
            inbox.get().run()
            self._idle.put(inbox)


_WORKERS = _Workers()


def bounded_call(call: Callable[[], Answer], seconds: float, max_bytes: int) -> Answer:
    """``call()`` (an SDK call on a client made with :func:`client_hooks`), its reply read
    within ``seconds`` and ``max_bytes``; raises :class:`CallFault` past either."""
    guard = _Guard(time.monotonic() + seconds, seconds, max_bytes)
    context = contextvars.copy_context()
    job = _Job(lambda: context.run(_guarded, guard, call))
    _WORKERS.start(job)
    if not job.wait(seconds):
        guard.stopped = True
        raise PastDeadline(f"no whole reply within the call's {seconds:g} s deadline")
    if job.error is not None:
        raise job.error
    return job.value


def _guarded(guard: _Guard, call: Callable[[], Answer]) -> Answer:
    _GUARD.set(guard)
    return call()


def client_hooks(origin: Origin) -> dict[str, list[Callable[[Any], None]]]:
    """The HTTP client's event hooks for a seat whose requests all go to ``origin``."""
    return {
        "request": [lambda request: _same_origin(request, origin)],
        "response": [_bound_body],
    }


def _same_origin(request: httpx2.Request, origin: Origin) -> None:
    url = str(request.url)
    if origin_of(url) != origin:
        raise OffOrigin(f"the server redirected to another origin ({shown(url)}): not followed")


def _bound_body(response: httpx2.Response) -> None:
    """Refuse a reply whose declared length or encoding the cap cannot bound, and read the
    rest through :class:`_BoundedBody`."""
    guard = _GUARD.get()
    if guard is None:
        return
    declared = response.headers.get("content-length", "").strip()
    number = declared.isascii() and declared.isdigit()
    if number and (len(declared) > 18 or int(declared) > guard.max_bytes):  # no 5,000-digit int
        raise ReplyTooLarge(_too_large(guard, f"declared {_count(declared)} bytes"))
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):
        raise ReplyTooLarge(
            f"the reply came compressed ({shown(encoding)}), though asked for none: "
            "its size cannot be bounded before it is decoded"
        )
    response.stream = _BoundedBody(response.stream, guard)


class _BoundedBody(httpx2.SyncByteStream):
    """A response body read only up to the guard's size and time."""

    def __init__(self, inner: Any, guard: _Guard):
        self.inner = inner
        self.guard = guard

    def __iter__(self) -> Iterator[bytes]:
        read = 0
        for chunk in self.inner:
            read += len(chunk)
            if read > self.guard.max_bytes:
                raise ReplyTooLarge(_too_large(self.guard, "more"))
            if self.guard.past():
                raise PastDeadline(
                    f"no whole reply within the call's {self.guard.seconds:g} s deadline"
                )
            yield chunk

    def close(self) -> None:
        self.inner.close()


def _too_large(guard: _Guard, what: str) -> str:
    return f"a reply past the {_count(guard.max_bytes)}-byte cap ({what}): refused"


def _count(value: int | str) -> str:
    text = str(value)
    return f"{int(text):,}" if len(text) <= 24 else f"a {len(text)}-digit number of"
