"""The chat-completions call: the official ``openai`` SDK client, its errors, and what it sends.

The SDK's own retries are off (``max_retries=0``): the model-seat core's retry
policy owns them (:mod:`arena_plugins.model_seat.retries`). The SDK would read
``OPENAI_API_KEY``, ``OPENAI_BASE_URL``, ``OPENAI_ORG_ID`` and
``OPENAI_PROJECT_ID`` by itself; here the key and base URL are always passed
(:func:`arena_plugins.openai_chat.settings.endpoint` chose them), and a request
to anything but the SDK's own pairing omits the organization and project headers
and those ``OPENAI_CUSTOM_HEADERS`` names, so nothing of the user's OpenAI account reaches
another origin. The client's hooks (:func:`~arena_plugins.model_seat.bounded.client_hooks`)
refuse a redirect to another origin before it is sent, and bound each reply.
"""

from __future__ import annotations

import functools
import os
from typing import Any

import attrs
import httpx2
import openai

from arena_plugins.model_seat.bounded import client_hooks, client_timeout
from arena_plugins.model_seat.clients import (
    PER_REQUEST_TELEMETRY,
    client_headers,
    per_thread,
    tls_context,
)
from arena_plugins.model_seat.reply_body import words
from arena_plugins.model_seat.retries import RetryBounds, endpoint_at, pause_endpoint, sdk_wire
from arena_plugins.openai_chat.adapting import refuses_shape, server_words
from arena_plugins.openai_chat.settings import Endpoint


def _no_key() -> str:
    """The key of a seat that sends none: a callable, so the SDK reads no variable for it."""
    return ""


@per_thread
def make_client(place: Endpoint, bounds: RetryBounds) -> openai.OpenAI:
    """This thread's client for this endpoint and these bounds, shared by the seats its
    tables build (:mod:`~arena_plugins.model_seat.clients`: one connection pool per
    thread, every client on the process's TLS context)."""
    hooks = client_hooks(place.origin)
    endpoint = endpoint_at(place.base_url, place.key)
    hooks["response"].append(
        functools.partial(pause_endpoint, endpoint=endpoint, longest=bounds.total)
    )
    return openai.OpenAI(
        api_key=place.key if place.key else _no_key,
        base_url=place.base_url,
        max_retries=0,
        timeout=client_timeout(bounds.timeout),
        default_headers=client_headers(openai.Omit()),
        http_client=openai.DefaultHttpxClient(event_hooks=hooks, verify=tls_context()),
    )


def post_completion(client: openai.OpenAI, content: bytes, headers: dict[str, Any]) -> bytes:
    """One chat-completions request's raw reply body, the request's JSON (``content``,
    :mod:`~arena_plugins.model_seat.request_json`) sent as it is.

    It goes through the client's own ``post``, the SDK's documented call for a request
    it has no typed method for and the one ``chat.completions.create`` ends in, so the
    headers, timeout, hooks and errors are the client's as for ``create``. ``create``
    first walks the body against its typed parameters (``maybe_transform``): a fifth of
    the harness's CPU per request to change nothing in a body of plain JSON. And the
    seat encodes the body itself, so the table record it repeats is not encoded again
    on every request."""
    response = client.post(
        "/chat/completions",
        cast_to=httpx2.Response,
        content=content,
        options={"headers": headers},
    )
    return response.content


def withheld_headers(place: Endpoint) -> dict[str, Any]:
    """Per-request headers the SDK would add on its own and this endpoint must not get: the
    organization, the project, and every header ``OPENAI_CUSTOM_HEADERS`` names (the SDK
    adds those to every client, a gateway's own credentials among them), and the telemetry
    the SDK adds to each request after the client's own headers."""
    withheld: dict[str, Any] = dict.fromkeys(PER_REQUEST_TELEMETRY, openai.Omit())
    if place.key is None:
        withheld["Authorization"] = openai.Omit()
    if not place.pairs_openai_env:
        custom = os.environ.get("OPENAI_CUSTOM_HEADERS", "").split("\n")
        named = [line.partition(":")[0].strip() for line in custom if ":" in line]
        for name in ("OpenAI-Organization", "OpenAI-Project", *named):
            withheld[name] = openai.Omit()
    return withheld


def status_words(error: openai.APIStatusError) -> str:
    """What follows ``HTTP {status}`` in a fault line: the server's message, if any."""
    detail = words(server_words(error))
    return f": {detail}" if detail else ""


_SDK_WIRE = sdk_wire("OpenAI-compatible API", "openai api retry", openai, status_words)
WIRE = attrs.evolve(
    _SDK_WIRE, is_transient=lambda error: _SDK_WIRE.is_transient(error) and not refuses_shape(error)
)
"""The SDK's wire, except that a 5xx refusing the request's shape is not retried
(:mod:`~arena_plugins.openai_chat.adapting`): the seat moves to the next shape instead."""
