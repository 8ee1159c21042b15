"""The Messages API call: the official SDK client and the one retry policy around it.

The SDK's own retries are switched off (``max_retries=0``) so that tenacity,
here, owns them. Transient faults (HTTP 408, 409, 429, any 5xx including 529
overloaded, connection errors, timeouts) are retried with exponential backoff
and jitter; a ``retry-after`` (or ``retry-after-ms``) header is waited exactly.
Retrying stops at :attr:`RetryBounds.attempts` requests, or before a wait would
run past :attr:`RetryBounds.total` seconds. Whatever error is left, and any
non-transient one (a 400 or 401), becomes :class:`ApiUnavailable`: the seat could
not answer, which the engine logs as a fault, not as an illegal move.

The base URL is the SDK's own setting (``ANTHROPIC_BASE_URL``), so any endpoint
that speaks the Messages API, such as the tests' loopback server, can stand in.
"""

from __future__ import annotations

import email.utils
import functools
import os
import time
from collections.abc import Callable, Mapping
from typing import Any

import anthropic
import numpy as np
import tenacity

from arena.limits import LIMITER
from arena.logs import get_logger
from arena_plugins.claude.settings import RetryBounds

log = get_logger(__name__)

BACKOFF_GROWTH = 32
"""The backoff stops doubling at this multiple of the first wait."""
_RETRIED_STATUS = frozenset({408, 409, 429})


class ApiUnavailable(Exception):
    """The model could not be asked: the reason is one deterministic line for the log."""


def make_client(api_key: str, bounds: RetryBounds) -> anthropic.Anthropic:
    """The process's client for this key, bounds and base URL, shared by every seat.

    Building a client costs about 22 ms of CPU (its TLS context), which a league
    of many Claude tables in threads paid for every seat of every table; shared,
    the seats also reuse its pooled connections. It lives as long as the process.
    """
    return _shared_client(api_key, bounds, os.environ.get("ANTHROPIC_BASE_URL"))


@functools.cache
def _shared_client(api_key: str, bounds: RetryBounds, base_url: str | None) -> anthropic.Anthropic:
    hooks = {"response": [functools.partial(_pause_every_seat, longest=bounds.total)]}
    return anthropic.Anthropic(
        api_key=api_key,
        max_retries=0,
        timeout=bounds.timeout,
        http_client=anthropic.DefaultHttpxClient(event_hooks=hooks),
    )


def _pause_every_seat(response: Any, longest: float) -> None:
    """A ``retry-after`` (a 429's) pauses every seat of the league as its headers arrive,
    for at most ``longest`` (the retry bound: no wait goes past it, and a server asking for
    an hour would otherwise hold every seat's next decision that long).
    Paused from the retry hook instead, after the SDK had read the body and raised, other
    seats sent 8 to 16 requests in the 20-115 ms that took beside seven busy tables, and a
    seat with no retry left paused nobody (docs/league.md, API limits)."""
    asked = asked_wait(response.headers)
    if asked is not None:
        LIMITER.pause(min(asked, longest))


def is_transient(error: BaseException) -> bool:
    """Worth asking again: the service, not the request, was at fault."""
    if isinstance(error, anthropic.APIConnectionError):  # includes APITimeoutError
        return True
    if isinstance(error, anthropic.APIStatusError):
        return error.status_code in _RETRIED_STATUS or error.status_code >= 500
    return False


def retry_after(error: BaseException | None) -> float | None:
    """Seconds the server asked us to wait, from ``retry-after-ms`` or ``retry-after``."""
    response = getattr(error, "response", None)
    return None if response is None else asked_wait(response.headers)


def asked_wait(headers: Mapping[str, str]) -> float | None:
    """Seconds a reply's headers ask the client to wait, or ``None``."""
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


def create_message(
    client: anthropic.Anthropic,
    request: Mapping[str, Any],
    bounds: RetryBounds,
    rng: np.random.Generator,
    sleep: Callable[[float], None] = time.sleep,
) -> anthropic.types.Message:
    """``client.messages.create(**request)`` under the retry policy.

    Raises :class:`ApiUnavailable` when no answer came within the bounds.
    """
    retrying = tenacity.Retrying(
        retry=tenacity.retry_if_exception(is_transient),
        stop=(
            tenacity.stop_after_attempt(bounds.attempts) | tenacity.stop_before_delay(bounds.total)
        ),
        wait=Backoff(bounds.backoff, rng),
        before_sleep=_log_retry,
        sleep=sleep,
        reraise=True,
    )
    try:
        return retrying(_limited_create, client, request)
    except anthropic.APIError as error:
        attempts = retrying.statistics.get("attempt_number", 1)
        raise ApiUnavailable(describe(error, attempts)) from error


def _limited_create(
    client: anthropic.Anthropic, request: Mapping[str, Any]
) -> anthropic.types.Message:
    """One request, under the league-wide limiter (:mod:`arena.limits`)."""
    with LIMITER.request() as used:
        message = client.messages.create(**request)
        usage = message.usage
        used(usage.input_tokens + usage.output_tokens + (usage.cache_creation_input_tokens or 0))
    return message


def describe(error: anthropic.APIError, attempts: int) -> str:
    """One line naming the fault, free of timings and request ids so logs replay byte for byte."""
    if isinstance(error, anthropic.APITimeoutError):
        what = "request timed out"
    elif isinstance(error, anthropic.APIConnectionError):
        what = "connection failed"
    elif isinstance(error, anthropic.APIStatusError):
        kind = error.type or "error"
        detail = (error.api_message or "").strip()
        what = f"HTTP {error.status_code} {kind}" + (f": {detail[:200]}" if detail else "")
    else:
        what = type(error).__name__
    if not is_transient(error):
        return f"Claude API refused the request (not retried): {what}"
    plural = "s" if attempts != 1 else ""
    return f"Claude API unavailable after {attempts} attempt{plural}: {what}"


def _log_retry(state: tenacity.RetryCallState) -> None:
    error = state.outcome.exception() if state.outcome else None
    LIMITER.retried()
    if getattr(error, "status_code", None) == 429 or retry_after(error) is not None:
        LIMITER.pause(state.upcoming_sleep)  # the server limits the account: every seat waits
    log.warning(
        "claude api retry",
        attempt=state.attempt_number,
        error=type(error).__name__,
        wait=round(state.upcoming_sleep, 3),
    )
