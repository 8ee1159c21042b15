"""One model call under the one retry policy, and the league-wide limiter around it.

A wire switches its SDK's own retries off and calls :func:`call_with_retries`
with its :class:`Wire`: which of its errors are transient and how to describe
one (:func:`sdk_wire` for the Stainless-made SDKs, ``anthropic`` and ``openai``). Transient
faults (HTTP 408, 409, 429, any 5xx, connection errors, timeouts) are retried
with exponential backoff and jitter; a ``retry-after`` (or ``retry-after-ms``)
header is waited exactly. Retrying stops at :attr:`RetryBounds.attempts`
requests, or before a wait would run past :attr:`RetryBounds.total` seconds.
Whatever error is left, and any non-transient one, becomes
:class:`ApiUnavailable`: the seat could not answer, which the engine logs as a
fault, not as an illegal move.

Every reply's headers are read as they arrive (:func:`pause_every_seat`, an
HTTP client hook): a ``retry-after``, or an ``x-ratelimit-remaining-*`` of 0
with its ``x-ratelimit-reset-*`` time, pauses every seat of the league
(:mod:`arena.limits`), since the server limits the account, not the call.
"""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import attrs
import numpy as np
import tenacity

from arena.limits import LIMITER
from arena.logs import get_logger

log = get_logger(__name__)

BACKOFF_GROWTH = 32
"""The backoff stops doubling at this multiple of the first wait."""
RETRIED_STATUS = frozenset({408, 409, 429})
"""Statuses worth asking again, besides every 5xx."""

Answer = TypeVar("Answer")


class ApiUnavailable(Exception):
    """The model could not be asked: the reason is one deterministic line for the log."""


@attrs.frozen
class RetryBounds:
    """How long a seat keeps trying through transient API faults before rule 11 steps in."""

    timeout: float = 60.0
    """Seconds one HTTP request may take (connect, send, wait for the reply)."""
    attempts: int = 4
    """Requests per decision, the first included."""
    total: float = 120.0
    """Seconds of retrying per decision; no wait (``retry-after`` included) goes past it."""
    backoff: float = 1.0
    """First backoff in seconds; doubles per attempt, with jitter, up to 32x."""


def retry_bounds(environ: Mapping[str, str], prefix: str) -> RetryBounds:
    """The bounds ``PREFIX_TIMEOUT``, ``PREFIX_RETRY_ATTEMPTS``, ``PREFIX_RETRY_SECONDS`` and
    ``PREFIX_BACKOFF`` set (table-wide: the environment only); each wire has its prefix."""
    default = RetryBounds()
    names = {
        "timeout": f"{prefix}_TIMEOUT",
        "attempts": f"{prefix}_RETRY_ATTEMPTS",
        "total": f"{prefix}_RETRY_SECONDS",
        "backoff": f"{prefix}_BACKOFF",
    }
    return RetryBounds(
        timeout=number(
            environ.get(names["timeout"]), names["timeout"], float, default.timeout, above=0
        ),
        attempts=number(
            environ.get(names["attempts"]), names["attempts"], int, default.attempts, low=1
        ),
        total=number(environ.get(names["total"]), names["total"], float, default.total, above=0),
        backoff=number(
            environ.get(names["backoff"]), names["backoff"], float, default.backoff, low=0
        ),
    )


def number(
    text: str | None,
    name: str,
    kind: Callable[[str], float],
    default,
    *,
    low: float | None = None,
    above: float | None = None,
):
    """A setting's number, ``default`` when unset; ``ValueError`` naming ``name`` otherwise."""
    if text is None or not text.strip():
        return default
    try:
        value = kind(text.strip())
    except ValueError:
        raise ValueError(f"{name} must be a number ({kind.__name__}), got {text!r}") from None
    if (
        (low is not None and value < low)
        or (above is not None and value <= above)
        or value != value  # NaN
    ):
        bounds = [f">= {low}" if low is not None else "", f"> {above}" if above is not None else ""]
        raise ValueError(f"{name} must be {' and '.join(b for b in bounds if b)}, got {text!r}")
    return value


def status_is_transient(status: int) -> bool:
    """Whether an HTTP status says the service, not the request, was at fault."""
    return status in RETRIED_STATUS or status >= 500


# --- what a reply's headers ask for ---------------------------------------------------------


def asked_wait(headers: Mapping[str, str]) -> float | None:
    """Seconds a reply's headers ask the client to wait (``retry-after-ms``, ``retry-after``
    in seconds or as a date), or ``None``."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(float(value) * scale, 0.0)
        except ValueError:
            pass
    when = headers.get("retry-after")
    if when:
        try:
            return max(email.utils.parsedate_to_datetime(when).timestamp() - time.time(), 0.0)
        except (TypeError, ValueError):
            return None
    return None


_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_DURATION_SCALE = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def exhausted_wait(headers: Mapping[str, str]) -> float | None:
    """Seconds until a spent rate limit resets: an ``x-ratelimit-remaining-requests`` (or
    ``-tokens``) of 0 and its ``x-ratelimit-reset-*`` (``1s``, ``6m0s``, ``20ms``), or
    ``None`` while any is left."""
    waits = []
    for kind in ("requests", "tokens"):
        remaining = headers.get(f"x-ratelimit-remaining-{kind}")
        reset = headers.get(f"x-ratelimit-reset-{kind}")
        if remaining is None or reset is None or remaining.strip() != "0":
            continue
        parts = _DURATION_PART.findall(reset.strip())
        if parts and "".join(a + b for a, b in parts) == reset.strip():
            waits.append(sum(float(amount) * _DURATION_SCALE[unit] for amount, unit in parts))
    return max(waits) if waits else None


def pause_every_seat(response: Any, longest: float) -> None:
    """An HTTP client's response hook (bind ``longest``, the seat's retry bound): what a
    reply's headers ask for pauses every seat of the league as they arrive, for at most
    ``longest``, as no other wait goes past it (a server asking for an hour would hold every
    seat's next decision that long). Paused only later, from the retry hook, after the SDK
    had read the body and raised, other seats sent 8 to 16 requests in the 20-115 ms that
    took beside seven busy tables, and a seat with no retry left paused nobody
    (docs/league.md)."""
    waits = [w for w in (asked_wait(response.headers), exhausted_wait(response.headers)) if w]
    if waits:
        LIMITER.pause(min(max(waits), longest))


def retry_after(error: BaseException | None) -> float | None:
    """Seconds the server asked us to wait in the reply that raised ``error``."""
    response = getattr(error, "response", None)
    return None if response is None else asked_wait(response.headers)


# --- the retrying call ----------------------------------------------------------------------


class Backoff:
    """Tenacity wait: the server's ``retry-after`` if it sent one, else jittered doubling.

    The jitter draws on the seat's own seeded generator, never global random state.
    """

    def __init__(self, first: float, rng: np.random.Generator):
        self.first = first
        self.rng = rng

    def __call__(self, state: tenacity.RetryCallState) -> float:
        asked = retry_after(state.outcome.exception() if state.outcome else None)
        if asked is not None:
            return asked
        ceiling = self.first * min(2 ** (state.attempt_number - 1), BACKOFF_GROWTH)
        return ceiling * (0.5 + 0.5 * float(self.rng.random()))


@attrs.frozen
class Wire:
    """What the retry policy needs to know of one API's SDK."""

    name: str
    """How fault lines name the API (``Claude API``)."""
    retry_event: str
    """The warning logged before each retry (``claude api retry``)."""
    error: type[BaseException]
    """The SDK's base error: anything else is a bug, not a fault, and is not caught."""
    is_transient: Callable[[BaseException], bool]
    describe: Callable[[BaseException], str]
    """The fault, free of timings and request ids, so logs replay byte for byte."""


def sdk_wire(name: str, retry_event: str, sdk: Any, status_words: Callable[[Any], str]) -> Wire:
    """The :class:`Wire` of an SDK whose errors are Stainless's (``anthropic``, ``openai``):
    ``sdk.APIConnectionError`` (``APITimeoutError`` under it) and ``sdk.APIStatusError``.
    ``status_words(error)`` is what follows ``HTTP {status}`` in a fault line: the API's own
    words for it, each API having its own error body."""

    def is_transient(error: BaseException) -> bool:
        if isinstance(error, sdk.APIConnectionError):  # includes APITimeoutError
            return True
        if isinstance(error, sdk.APIStatusError):
            return status_is_transient(error.status_code)
        return False

    def describe(error: BaseException) -> str:
        if isinstance(error, sdk.APITimeoutError):
            return "request timed out"
        if isinstance(error, sdk.APIConnectionError):
            return "connection failed"
        if isinstance(error, sdk.APIStatusError):
            return f"HTTP {error.status_code}{status_words(error)}"
        return type(error).__name__

    return Wire(name, retry_event, sdk.APIError, is_transient, describe)


def call_with_retries(
    wire: Wire,
    call: Callable[[], tuple[Answer, int]],
    bounds: RetryBounds,
    rng: np.random.Generator,
    sleep: Callable[[float], None] = time.sleep,
) -> Answer:
    """``call()`` (which returns its answer and the tokens it used) under the retry policy
    and the league-wide limiter; raises :class:`ApiUnavailable` when no answer came within
    the bounds."""

    def limited() -> Answer:
        with LIMITER.request() as used:
            answer, tokens = call()
            used(tokens)
        return answer

    def log_retry(state: tenacity.RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome else None
        LIMITER.retried()
        if getattr(error, "status_code", None) == 429 or retry_after(error) is not None:
            LIMITER.pause(state.upcoming_sleep)  # the server limits the account: every seat waits
        log.warning(
            wire.retry_event,
            attempt=state.attempt_number,
            error=type(error).__name__,
            wait=round(state.upcoming_sleep, 3),
        )

    retrying = tenacity.Retrying(
        retry=tenacity.retry_if_exception(wire.is_transient),
        stop=(
            tenacity.stop_after_attempt(bounds.attempts) | tenacity.stop_before_delay(bounds.total)
        ),
        wait=Backoff(bounds.backoff, rng),
        before_sleep=log_retry,
        sleep=sleep,
        reraise=True,
    )
    try:
        return retrying(limited)
    except wire.error as error:
        attempts = retrying.statistics.get("attempt_number", 1)
        if not wire.is_transient(error):
            raise ApiUnavailable(
                f"{wire.name} refused the request (not retried): {wire.describe(error)}"
            ) from error
        plural = "s" if attempts != 1 else ""
        raise ApiUnavailable(
            f"{wire.name} unavailable after {attempts} attempt{plural}: {wire.describe(error)}"
        ) from error
