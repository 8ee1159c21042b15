"""The chat-completions call: the official ``openai`` SDK client, its errors, and what it sends.

The SDK's own retries are off (``max_retries=0``): the model-seat core's retry
policy owns them (:mod:`arena_plugins.model_seat.retries`). The SDK would read
``OPENAI_API_KEY``, ``OPENAI_BASE_URL``, ``OPENAI_ORG_ID`` and
``OPENAI_PROJECT_ID`` by itself; here the key and base URL are always passed
(:func:`arena_plugins.openai_chat.settings.endpoint` chose them), and a request
to anything but the SDK's own pairing omits the organization and project
headers, so nothing of the user's OpenAI account reaches another host.
"""

from __future__ import annotations

import functools
from typing import Any

import openai

from arena_plugins.model_seat.retries import (
    RetryBounds,
    Wire,
    pause_every_seat,
    status_is_transient,
)
from arena_plugins.openai_chat.settings import Endpoint


def _no_key() -> str:
    """The key of a seat that sends none: a callable, so the SDK reads no variable for it."""
    return ""


@functools.cache
def make_client(place: Endpoint, bounds: RetryBounds) -> openai.OpenAI:
    """The process's client for this endpoint and these bounds, shared by every seat that uses
    them (building one costs a TLS context; shared, seats reuse its pooled connections)."""
    hooks = {"response": [functools.partial(pause_every_seat, longest=bounds.total)]}
    return openai.OpenAI(
        api_key=place.key if place.key else _no_key,
        base_url=place.base_url,
        max_retries=0,
        timeout=bounds.timeout,
        http_client=openai.DefaultHttpxClient(event_hooks=hooks),
    )


def withheld_headers(place: Endpoint) -> dict[str, Any]:
    """Per-request headers the SDK would add on its own and this endpoint must not get."""
    withheld: dict[str, Any] = {}
    if place.key is None:
        withheld["Authorization"] = openai.Omit()
    if not place.pairs_openai_env:
        withheld["OpenAI-Organization"] = openai.Omit()
        withheld["OpenAI-Project"] = openai.Omit()
    return withheld


def is_transient(error: BaseException) -> bool:
    if isinstance(error, openai.APIConnectionError):  # includes APITimeoutError
        return True
    if isinstance(error, openai.APIStatusError):
        return status_is_transient(error.status_code)
    return False


def describe(error: BaseException) -> str:
    if isinstance(error, openai.APITimeoutError):
        return "request timed out"
    if isinstance(error, openai.APIConnectionError):
        return "connection failed"
    if isinstance(error, openai.APIStatusError):
        detail = refusal_text(error)
        return f"HTTP {error.status_code}" + (f": {detail[:200]}" if detail else "")
    return type(error).__name__


def refusal_text(error: BaseException) -> str:
    """The server's own words for an error (OpenAI's ``error.message``, or a bare
    ``message``/``detail`` as some servers send), stripped."""
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            text = inner.get("message") or inner.get("detail")
            if isinstance(text, str):
                return text.strip()
        if isinstance(inner, str):
            return inner.strip()
    return ""


WIRE = Wire(
    name="OpenAI-compatible API",
    retry_event="openai api retry",
    error=openai.APIError,
    is_transient=is_transient,
    describe=describe,
)
