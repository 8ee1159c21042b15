"""What ``arena serve`` accepts from a page: its own origin, small JSON bodies, checked fields.

A browser sends requests to 127.0.0.1 from any site it visits, so being bound to
the loopback address is not enough. A site could start a table of paid Claude
seats, or move a seat, with a "simple" cross-origin POST that needs no
preflight (``text/plain``, a form), or reach the server under its own name by
DNS rebinding. So the ``Host`` must name this server (Starlette's
``TrustedHostMiddleware``, given :func:`own_hosts`), and every request that
changes state must come from this server's own page: its ``Origin`` (or, where
a browser sends none, ``Sec-Fetch-Site: same-origin``) is this server, and its
body is ``application/json``, which no other site can send without a
preflight this server never answers. Bodies are capped before and while they
are read, and each field is checked for its type and range, so a bad request
is a 4xx with its reason, never a 500.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

MAX_BODY = 64 * 1024
"""Bytes of a request body; a move or a table request is well under 1 KiB."""
JSON_TYPE = "application/json"
TOO_BIG = f"the body is over {MAX_BODY} bytes"


class Refused(Exception):
    """A request the server will not act on: the HTTP status and the reason, one line."""

    def __init__(self, status: int, reason: str):
        super().__init__(reason)
        self.status = status
        self.reason = reason


def own_hosts(host: str) -> list[str]:
    """The names a ``Host`` header may give for a server bound to loopback ``host``
    (its port is :class:`OwnPort`'s to check)."""
    literal = f"[{host}]" if ":" in host else host
    return sorted({literal, "localhost"})


class OwnPort:
    """ASGI middleware: a ``Host`` must name this server's port too (Starlette's
    ``TrustedHostMiddleware``, before it, compares the name only)."""

    def __init__(self, app: ASGIApp, port: int):
        self.app = app
        self.port = port

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            host = Headers(scope=scope).get("host", "")
            _name, colon, port = host.rpartition(":")
            named = port if colon and not port.endswith("]") else "80"  # no port: HTTP's own
            if named != str(self.port):
                response = PlainTextResponse("Invalid host header", status_code=400)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def own_origins(host: str, port: int) -> frozenset[str]:
    """The ``Origin`` of this server's own pages, under each name :func:`own_hosts` gives."""
    return frozenset(f"http://{name}:{port}" for name in own_hosts(host))


async def json_body(request: Request, origins: frozenset[str]) -> dict[str, Any]:
    """The body of a state-changing request from this server's own page, as a JSON object."""
    _check_same_origin(request, origins)
    media_type = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if media_type != JSON_TYPE:
        raise Refused(403, f"a request that changes the table must be {JSON_TYPE}")
    declared = request.headers.get("content-length")
    if declared is not None and not _is_count(declared):
        raise Refused(400, f"Content-Length {declared[:40]!r} is not a byte count")
    if declared is not None and int(declared) > MAX_BODY:
        raise Refused(413, TOO_BIG)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise Refused(413, TOO_BIG)
    try:
        value = json.loads(body, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError too
        raise Refused(400, f"the body is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise Refused(400, "the body must be a JSON object")
    return value


def _check_same_origin(request: Request, origins: frozenset[str]) -> None:
    origin = request.headers.get("origin")
    if origin is None:
        if request.headers.get("sec-fetch-site") == "same-origin":
            return
        raise Refused(403, "a request that changes the table must come from this server's page")
    if origin not in origins:
        raise Refused(403, f"requests from {origin[:100]} may not change this server's table")


def _is_count(text: str) -> bool:
    """ASCII digits only (``str.isdigit`` also takes "²"), few enough to be a real count."""
    return text.isascii() and text.isdigit() and len(text) <= 18


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number JSON allows")


class Fields:
    """A request's JSON object, read field by field: each a 400 with its reason if wrong."""

    def __init__(self, body: dict[str, Any], allowed: set[str]):
        unknown = sorted(set(body) - allowed)
        if unknown:
            raise Refused(400, f"unknown field {unknown[0][:40]!r}; expected {sorted(allowed)}")
        self.body = body

    def integer(
        self, name: str, default: int | None, low: int, high: int | None = None, why: str = ""
    ) -> int:
        """A whole number in ``low..high`` (not a float, not a bool); ``why`` names the bound."""
        value = self.body.get(name, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise Refused(400, f"{name} must be a whole number, got {_shown(value)}")
        if value < low or (high is not None and value > high):
            bound = f"{low}..{high}" if high is not None else f">= {low}"
            raise Refused(400, f"{name} must be {bound}{why}, got {_shown(value)}")
        return value

    def text(self, name: str, default: str | None = None, *, optional: bool = False) -> str | None:
        value = self.body.get(name, default)
        if value is None and optional:
            return None
        if not isinstance(value, str):
            raise Refused(400, f"{name} must be text, got {_shown(value)}")
        return value

    def flag(self, name: str, default: bool) -> bool:
        value = self.body.get(name, default)
        if not isinstance(value, bool):
            raise Refused(400, f"{name} must be true or false, got {_shown(value)}")
        return value

    def texts(self, name: str) -> list[str]:
        value = self.body.get(name)
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise Refused(400, f"{name} must be a list of text, got {_shown(value)}")
        return value


def last_event_id(header: str | None) -> int:
    """The first message a reconnecting stream still needs (``Last-Event-ID`` + 1)."""
    if header is None:
        return 0
    if not _is_count(header):
        raise Refused(400, f"Last-Event-ID must be a message number, got {header[:40]!r}")
    return int(header) + 1


def _shown(value: Any) -> str:
    """A bad value as the reason quotes it: short, whatever was sent."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
