"""One model call under the one retry policy, and the league-wide limiter around it.

A wire switches its SDK's own retries off and calls :func:`call_with_retries`
with its :class:`Wire`: which of its errors are transient and how to describe
one (:func:`sdk_wire` for the Stainless-made SDKs, ``anthropic`` and ``openai``). Transient
faults (HTTP 408, 409, 429, any 5xx, connection errors, timeouts) are retried
with exponential backoff and jitter; a ``retry-after`` (or ``retry-after-ms``)
header is waited exactly. Retrying stops at :attr:`RetryBounds.attempts`
requests, or before a wait would run past :attr:`RetryBounds.total` seconds.
Each request is bounded as a whole (:mod:`arena_plugins.model_seat.bounded`): by
:attr:`RetryBounds.timeout`, and by what is left of :attr:`RetryBounds.total`, so
a decision never runs past ``total`` whatever a server drips; and by
:attr:`RetryBounds.max_reply_bytes`. Whatever error is left, and any
non-transient one, becomes :class:`ApiUnavailable`: the seat could not answer,
which the engine logs as a fault, not as an illegal move.

Every reply's headers are read as they arrive (:func:`pause_endpoint`, an
HTTP client hook): a ``retry-after``, or an ``x-ratelimit-remaining-*`` of 0
with its ``x-ratelimit-reset-*`` time, pauses every seat of the league that calls
the same endpoint, the base URL's origin with the same key (:func:`endpoint_at`,
:mod:`arena.limits`), since the server limits the account, not the call; seats of
other endpoints keep playing.
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

from arena.limits import LIMITER, Endpoint
from arena.logs import get_logger
from arena_plugins.model_seat.bounded import CallFault, PastDeadline, bounded_call
from arena_plugins.model_seat.origin import origin_of
from arena_plugins.model_seat.usage import rate_tokens

log = get_logger(__name__)

BACKOFF_GROWTH = 32
"""The backoff stops doubling at this multiple of the first wait."""
RETRIED_STATUS = frozenset({408, 409, 429})
"""Statuses worth asking again, besides every 5xx."""

Answer = TypeVar("Answer")


class ApiUnavailable(Exception):
    """The model could not be asked: the reason is one deterministic line for the log."""

    def __init__(self, reason: str, usage: dict[str, int] | None = None):
        super().__init__(reason)
        self.usage = usage
        """The token counts of a call that was answered and paid for, though unreadable."""


@attrs.frozen
class RetryBounds:
    """How long a seat keeps trying through transient API faults before rule 11 steps in."""

    timeout: float = 60.0
    """Seconds one request may take as a whole: connect, send, the first byte and the whole
    reply (a server that drips its reply cannot stretch it)."""
    attempts: int = 4
    """Requests per decision, the first included."""
    total: float = 120.0
    """The decision's deadline: seconds one decision may take, rule 11's second ask and
    every retry included; no wait (``retry-after`` included) and no call goes past it. A
    model that has not answered by then has failed rule 11, naming the deadline."""
    backoff: float = 1.0
    """First backoff in seconds; doubles per attempt, with jitter, up to 32x."""
    max_reply_bytes: int = 8 * 2**20
    """The most of one reply read; a longer one (or one declaring more) is refused. 8 MiB
    holds a reasoning model's longest reply many times over."""


MAX_SECONDS = 86_400.0
"""A day: the longest a seat waits for one reply (a larger number is a typo, and an
infinite one would never time out)."""

_BOUNDS = {
    # field: (variable suffix, the seat setting over it, kind, bounds)
    "timeout": ("TIMEOUT", "timeout", float, {"above": 0, "high": MAX_SECONDS}),
    "attempts": ("RETRY_ATTEMPTS", None, int, {"low": 1}),
    "total": ("RETRY_SECONDS", "deadline", float, {"above": 0, "high": MAX_SECONDS}),
    "backoff": ("BACKOFF", None, float, {"low": 0}),
    "max_reply_bytes": ("MAX_REPLY_BYTES", "max_reply_bytes", int, {"low": 1024, "high": 2**31}),
}
"""Where each :class:`RetryBounds` field is set, and what it may be."""
BOUND_SETTINGS = tuple(setting for _, setting, _, _ in _BOUNDS.values() if setting)
"""The bounds a seat spec may set for its own seat, over the environment's (``deadline`` is
:attr:`RetryBounds.total`)."""


def retry_bounds(
    environ: Mapping[str, str], prefix: str, seat: Mapping[str, str] | None = None
) -> RetryBounds:
    """The bounds ``PREFIX_TIMEOUT``, ``PREFIX_RETRY_ATTEMPTS``, ``PREFIX_RETRY_SECONDS``,
    ``PREFIX_BACKOFF`` and ``PREFIX_MAX_REPLY_BYTES`` set, each wire under its own prefix;
    a seat's own ``timeout=``, ``deadline=`` and ``max_reply_bytes=`` (``seat``) come
    first. ``ValueError`` names the setting or variable of a bad value."""
    default = RetryBounds()
    seat = seat or {}
    values = {}
    for field, (suffix, setting, kind, limits) in _BOUNDS.items():
        name = setting if setting in seat else f"{prefix}_{suffix}"
        text = seat[setting] if setting in seat else environ.get(name)
        values[field] = number(text, name, kind, getattr(default, field), **limits)
    return RetryBounds(**values)


def number(
    text: str | None,
    name: str,
    kind: Callable[[str], float],
    default,
    *,
    low: float | None = None,
    above: float | None = None,
    high: float | None = None,
):
    """A setting's number, ``default`` when unset; ``ValueError`` naming ``name`` otherwise
    (the value shown at most 40 characters long)."""
    if text is None or not text.strip():
        return default
    shown = text if len(text) <= 40 else text[:39] + "…"
    try:
        value = kind(text.strip())
    except ValueError:
        raise ValueError(f"{name} must be a number ({kind.__name__}), got {shown!r}") from None
    if (
        (low is not None and value < low)
        or (above is not None and value <= above)
        or (high is not None and value > high)
        or value != value  # NaN
    ):
        bounds = [
            f">= {low}" if low is not None else "",
            f"> {above}" if above is not None else "",
            f"<= {high:g}" if high is not None else "",
        ]
        raise ValueError(f"{name} must be {' and '.join(b for b in bounds if b)}, got {shown!r}")
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


def endpoint_at(base_url: str, key: str | None) -> Endpoint:
    """The endpoint a seat calls: its base URL's origin, normalized (``HTTPS://Host`` and
    ``https://host:443`` are one), and its key (``None``: none sent)."""
    scheme, host, port = origin_of(base_url)
    return Endpoint(f"{scheme}://{host}:{port}", key)


def pause_endpoint(response: Any, endpoint: Endpoint, longest: float) -> None:
    """An HTTP client's response hook (bind ``endpoint``, the client's, and ``longest``, the
    seat's retry bound): what a reply's headers ask for pauses every seat of the league
    that calls ``endpoint`` as they arrive, for at most ``longest``, as no other wait goes
    past it (a server asking for an hour would hold every seat's next decision that long).
    Paused only later, from the retry hook, after the SDK had read the body and raised,
    other seats sent 8 to 16 requests in the 20-115 ms that took beside seven busy tables,
    and a seat with no retry left paused nobody (docs/league.md)."""
    waits = [w for w in (asked_wait(response.headers), exhausted_wait(response.headers)) if w]
    if waits:
        LIMITER.pause(min(max(waits), longest), endpoint)


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
        if isinstance(error, CallFault):
            return error.transient
        if isinstance(error, sdk.APIConnectionError):  # includes APITimeoutError
            return True
        if isinstance(error, sdk.APIStatusError):
            return status_is_transient(error.status_code)
        return False

    def describe(error: BaseException) -> str:
        if isinstance(error, CallFault):
            return str(error)
        if isinstance(error, sdk.APITimeoutError):
            return "request timed out"
        if isinstance(error, sdk.APIConnectionError):
            return "connection failed"
        if isinstance(error, sdk.APIStatusError):
            return f"HTTP {error.status_code}{status_words(error)}"
        return type(error).__name__

    return Wire(name, retry_event, sdk.APIError, is_transient, describe)


class DecisionPastDeadline(CallFault):
    """The decision's own deadline (:attr:`RetryBounds.total`) ended the call: the model
    did not answer in time, which is rule 11's failure, not a fault of the service."""


class DecisionClock:
    """When the decision a seat is asked ends: :attr:`RetryBounds.total` after its first ask,
    the same end for rule 11's second ask of it, so a model that never answers costs a
    decision its deadline once, not once per ask."""

    def __init__(self) -> None:
        self._decision: tuple[int, int] | None = None
        self._end = 0.0

    def end(self, view: Any, seconds: float) -> float:
        """The ``time.monotonic()`` at which the decision ``view`` asks for ends."""
        decision = (view.deal, len(view.bids))
        if view.retry_reason is None or decision != self._decision:
            self._decision, self._end = decision, time.monotonic() + seconds
        return self._end


def call_with_retries(
    wire: Wire,
    call: Callable[[], tuple[Answer, int]],
    bounds: RetryBounds,
    rng: np.random.Generator,
    sleep: Callable[[float], None] = time.sleep,
    until: float | None = None,
    *,
    endpoint: Endpoint,
) -> Answer:
    """``call()`` (which returns its answer and the tokens it used) to ``endpoint`` under the
    retry policy and the league-wide limiter, ending by ``until`` (``time.monotonic()``;
    default :attr:`RetryBounds.total` from now); raises :class:`ApiUnavailable` when no
    answer came within the bounds, caused by :class:`DecisionPastDeadline` when the
    deadline ended it."""
    end = time.monotonic() + bounds.total if until is None else until

    def limited() -> Answer:
        left = end - time.monotonic()
        seconds = max(min(bounds.timeout, left), 0.001)
        with LIMITER.request(endpoint) as used:
            try:
                answer, tokens = bounded_call(call, seconds, bounds.max_reply_bytes)
            except PastDeadline:
                if left > bounds.timeout:
                    raise
                raise DecisionPastDeadline(
                    f"no reply within the decision's {bounds.total:g} s deadline"
                ) from None
            except CallFault as fault:
                used(rate_tokens(fault.usage) if fault.usage else 0)
                raise
            used(tokens)
        return answer

    def log_retry(state: tenacity.RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome else None
        LIMITER.retried()
        if getattr(error, "status_code", None) == 429 or retry_after(error) is not None:
            # the server limits the account: every seat of this endpoint waits
            LIMITER.pause(state.upcoming_sleep, endpoint)
        log.warning(
            wire.retry_event,
            attempt=state.attempt_number,
            error=wire.describe(error) if error is not None else "none",
            wait=round(state.upcoming_sleep, 3),
        )

    retrying = tenacity.Retrying(
        retry=tenacity.retry_if_exception(wire.is_transient),
        stop=(
            tenacity.stop_after_attempt(bounds.attempts)
            | tenacity.stop_before_delay(max(end - time.monotonic(), 0.0))
        ),
        wait=Backoff(bounds.backoff, rng),
        before_sleep=log_retry,
        sleep=sleep,
        reraise=True,
    )
    try:
        return retrying(limited)
    except CallFault as fault:
        if not fault.transient:
            raise ApiUnavailable(f"{wire.name}: {fault}", usage=fault.usage) from fault
        error: BaseException = fault
    except wire.error as sdk_error:
        if not wire.is_transient(sdk_error):
            raise ApiUnavailable(
                f"{wire.name} refused the request (not retried): {wire.describe(sdk_error)}"
            ) from sdk_error
        error = sdk_error
    attempts = retrying.statistics.get("attempt_number", 1)
    plural = "s" if attempts != 1 else ""
    raise ApiUnavailable(
        f"{wire.name} unavailable after {attempts} attempt{plural}: {wire.describe(error)}"
    ) from error
