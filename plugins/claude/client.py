"""The Messages API call: the official SDK client, and what the model-seat core's retry policy
needs to know of its errors.

The SDK's own retries are switched off (``max_retries=0``) so that the core's
policy (:mod:`arena_plugins.model_seat.retries`) owns them: transient faults
(HTTP 408, 409, 429, any 5xx including 529 overloaded, connection errors,
timeouts) are retried with backoff, a ``retry-after`` waited exactly, and what is
left becomes :class:`~arena_plugins.model_seat.retries.ApiUnavailable`. Every
reply's headers pass the core's hook that pauses every seat of the league calling
the same endpoint (base URL and key).

The base URL is the SDK's own setting (``ANTHROPIC_BASE_URL``), so any endpoint
that speaks the Messages API, such as the tests' loopback server, can stand in;
the key goes to that origin only (the client's hooks refuse a redirect elsewhere,
:mod:`~arena_plugins.model_seat.bounded`), and each reply is bounded in time and
size and read from its raw JSON, each field checked (:func:`read_message`).
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Mapping
from typing import Any

import anthropic
import httpx2
import numpy as np

from arena_plugins.model_seat.bounded import client_hooks, client_timeout
from arena_plugins.model_seat.clients import client_headers, per_thread, tls_context
from arena_plugins.model_seat.origin import check_base_url, origin_of
from arena_plugins.model_seat.reply_body import UnreadableReply, decode, field
from arena_plugins.model_seat.request_json import encoded
from arena_plugins.model_seat.retries import (
    RetryBounds,
    call_with_retries,
    endpoint_at,
    pause_endpoint,
    sdk_wire,
)
from arena_plugins.model_seat.usage import count, part_of, rate_tokens, usage

BASE_URL_ENV = "ANTHROPIC_BASE_URL"
DEFAULT_BASE_URL = "https://api.anthropic.com"
MESSAGES_PATH = "/v1/messages"


def make_client(
    api_key: str, bounds: RetryBounds, environ: Mapping[str, str] = os.environ
) -> anthropic.Anthropic:
    """This thread's client for this key, bounds and base URL, shared by the seats its
    tables build (:mod:`~arena_plugins.model_seat.clients`: one connection pool per
    thread, every client on the process's one TLS context, which a league of many
    Claude tables once built for every seat of every table). It lives as long as the
    thread."""
    return _shared_client(api_key, bounds, base_url(environ))


def base_url(environ: Mapping[str, str]) -> str:
    """Where the key goes: ``ANTHROPIC_BASE_URL``, checked (``ValueError``, one line), else
    Anthropic's own API."""
    url = (environ.get(BASE_URL_ENV) or "").strip()
    if not url:
        return DEFAULT_BASE_URL
    check_base_url(url, BASE_URL_ENV)
    return url


@per_thread
def _shared_client(api_key: str, bounds: RetryBounds, url: str) -> anthropic.Anthropic:
    hooks = client_hooks(origin_of(url))
    pause = functools.partial(
        pause_endpoint, endpoint=endpoint_at(url, api_key), longest=bounds.total
    )
    hooks["response"].append(pause)
    return anthropic.Anthropic(
        api_key=api_key,
        base_url=url,
        max_retries=0,
        timeout=client_timeout(bounds.timeout),
        default_headers=client_headers(anthropic.Omit()),
        http_client=anthropic.DefaultHttpxClient(event_hooks=hooks, verify=tls_context()),
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
    until: float | None = None,
    encode: Callable[[Mapping[str, Any]], bytes] = encoded,
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The Messages API request ``request`` (``messages.create``'s keyword arguments) under
    the retry policy and the league-wide limiter, ending by ``until`` (the decision's
    deadline): the reply's content blocks and usage (:func:`read_message`); raises
    :class:`~arena_plugins.model_seat.retries.ApiUnavailable` when no answer came within
    the bounds.

    It goes through the client's own ``post`` to ``/v1/messages``, the call
    ``messages.create`` ends in, so the headers, timeout, hooks and errors are the
    client's as for ``create``; the body is JSON-encoded here by ``encode`` (a seat's
    :class:`~arena_plugins.model_seat.request_json.RequestBody`), once for every attempt.
    ``create`` first copies the whole body, block by block, then encodes it afresh:
    on a 160-deal episode's last request (62 KiB), ``post`` with the body encoded
    costs 20-29% less CPU (docs/performance.md)."""
    content = encode(request)

    def call() -> tuple[tuple[list[dict[str, Any]], dict[str, int]], int]:
        raw = client.post(MESSAGES_PATH, cast_to=httpx2.Response, content=content)
        content_blocks, used = read_message(decode(raw.content))
        return (content_blocks, used), rate_tokens(used)

    endpoint = endpoint_at(str(client.base_url), client.api_key)
    return call_with_retries(WIRE, call, bounds, rng, sleep, until, endpoint=endpoint)


def read_message(body: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """A Message's content blocks (each an object with a string ``type``) and its checked
    usage; :class:`~arena_plugins.model_seat.reply_body.UnreadableReply` (with the usage,
    when that much was valid) for anything not in the API's shape."""
    used = usage_of(body)
    try:
        content = field(body, "content", list)
        for block in content:
            kind = field(block, "type", str)
            for name, kinds in BLOCK_FIELDS.get(kind, ()):
                field(block, name, kinds)
    except UnreadableReply as unreadable:
        unreadable.usage = used
        raise
    return content, used


BLOCK_FIELDS: dict[str, tuple[tuple[str, type], ...]] = {
    "text": (("text", str),),
    "tool_use": (("name", str), ("input", dict)),
    "thinking": (("thinking", str),),
}
"""What the seat reads of each kind of content block (:mod:`~arena_plugins.claude.reply_tool`),
and the JSON type each must have."""


def usage_of(body: dict[str, Any]) -> dict[str, int]:
    """The token counts the API reported, in the engine's ``usage`` vocabulary, checked
    (:mod:`arena_plugins.model_seat.usage`); a split the API does not report counts 0."""
    reported = field(body, "usage", dict)
    writes = count(reported, "cache_creation_input_tokens", reported)
    output = count(reported, "output_tokens", reported)
    split = reported.get("cache_creation") or {}
    details = reported.get("output_tokens_details") or {}
    return usage(
        count(reported, "input_tokens", reported),
        output,
        cache_read=count(reported, "cache_read_input_tokens", reported),
        cache_write=writes,
        cache_write_1h=part_of(
            count(split, "ephemeral_1h_input_tokens", reported),
            writes,
            "ephemeral_1h_input_tokens",
            "cache_creation_input_tokens",
            reported,
        ),
        thinking=part_of(
            count(details, "thinking_tokens", reported),
            output,
            "thinking_tokens",
            "output_tokens",
            reported,
        ),
    )
