"""The Messages API call: the official SDK client, and what the model-seat core's retry policy
needs to know of its errors.

The SDK's own retries are switched off (``max_retries=0``) so that the core's
policy (:mod:`arena_plugins.model_seat.retries`) owns them: transient faults
(HTTP 408, 409, 429, any 5xx including 529 overloaded, connection errors,
timeouts) are retried with backoff, a ``retry-after`` waited exactly, and what is
left becomes :class:`~arena_plugins.model_seat.retries.ApiUnavailable`. Every
reply's headers pass the core's hook that pauses every seat of the league.

The base URL is the SDK's own setting (``ANTHROPIC_BASE_URL``), so any endpoint
that speaks the Messages API, such as the tests' loopback server, can stand in.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Mapping
from typing import Any

import anthropic
import numpy as np

from arena_plugins.model_seat.retries import (
    RetryBounds,
    call_with_retries,
    pause_every_seat,
    sdk_wire,
)


def make_client(api_key: str, bounds: RetryBounds) -> anthropic.Anthropic:
    """The process's client for this key, bounds and base URL, shared by every seat.

    Building a client costs about 22 ms of CPU (its TLS context), which a league
    of many Claude tables in threads paid for every seat of every table; shared,
    the seats also reuse its pooled connections. It lives as long as the process.
    """
    return _shared_client(api_key, bounds, os.environ.get("ANTHROPIC_BASE_URL"))


@functools.cache
def _shared_client(api_key: str, bounds: RetryBounds, base_url: str | None) -> anthropic.Anthropic:
    hooks = {"response": [functools.partial(pause_every_seat, longest=bounds.total)]}
    return anthropic.Anthropic(
        api_key=api_key,
        max_retries=0,
        timeout=bounds.timeout,
        http_client=anthropic.DefaultHttpxClient(event_hooks=hooks),
    )


def status_words(error: anthropic.APIStatusError) -> str:
    """What follows ``HTTP {status}`` in a fault line: the error's type and message."""
    detail = (error.api_message or "").strip()
    return f" {error.type or 'error'}" + (f": {detail[:200]}" if detail else "")


WIRE = sdk_wire("Claude API", "claude api retry", anthropic, status_words)


def create_message(
    client: anthropic.Anthropic,
    request: Mapping[str, Any],
    bounds: RetryBounds,
    rng: np.random.Generator,
    sleep: Callable[[float], None] = time.sleep,
) -> anthropic.types.Message:
    """``client.messages.create(**request)`` under the retry policy and the league-wide
    limiter; raises :class:`~arena_plugins.model_seat.retries.ApiUnavailable` when no answer
    came within the bounds."""

    def call() -> tuple[anthropic.types.Message, int]:
        message = client.messages.create(**request)
        usage = message.usage
        return message, (
            usage.input_tokens + usage.output_tokens + (usage.cache_creation_input_tokens or 0)
        )

    return call_with_retries(WIRE, call, bounds, rng, sleep)
