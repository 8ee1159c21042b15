"""One SDK client per endpoint per thread, every one on the process's one TLS context, and
the headers each is built with.

The HTTP client's connection pool (httpcore's) walks every connection it holds,
under its lock, each time a request starts and each time one ends. With one client
per endpoint shared by a process's thousand tables, each request walked hundreds of
connections twice: at 2 s latency a league of 1,024 tables in flight spent 7.6 ms of
CPU a request and reached 36% of ideal throughput. A table is played by one thread,
one request at a time, so a client per thread holds one connection, kept alive across
that thread's tables (its seats' calls run in the bounded-call workers, one at a
time, on the client their seat was built with).

Building a client is cheap once it has a TLS context; making that context (loading the
CA bundle) takes about 70 ms of CPU, so it is made once, as the HTTP client makes its
default one, and shared.

Both SDKs (Stainless's) add telemetry to every request: the host's operating system,
architecture and Python version, the SDK's own version, whether it runs async, the
attempt number and its timeouts. None of it is the seat's to send, so the clients omit
it (:func:`client_headers`). That is ten fewer headers on a Claude request and nine on
an OpenAI one for the SDK and its HTTP stack to build, check and write: 4% and 10% of
a decision's instructions (docs/performance.md).
"""

from __future__ import annotations

import functools
import ssl
import threading
from collections.abc import Callable, Hashable
from typing import TypeVar

import httpx2

from arena_plugins.model_seat.bounded import NO_COMPRESSION

Client = TypeVar("Client")

TELEMETRY_HEADERS = (
    "X-Stainless-Lang",
    "X-Stainless-Package-Version",
    "X-Stainless-OS",
    "X-Stainless-Arch",
    "X-Stainless-Runtime",
    "X-Stainless-Runtime-Version",
    "X-Stainless-Async",
    "X-Stainless-Timeout",
    "X-Stainless-Retry-Count",
    "X-Stainless-Read-Timeout",
)
"""What the SDKs send of the host and the call on their own, beside the API's headers."""
PER_REQUEST_TELEMETRY = ("X-Stainless-Retry-Count", "X-Stainless-Read-Timeout")
"""The ``openai`` SDK adds these after a client's own headers, unless the request's headers
name them: a client-wide omission does not reach them."""


def client_headers(omit: object) -> dict[str, object]:
    """A seat's client's ``default_headers``: no compression (the size cap bounds the reply
    as sent, :mod:`~arena_plugins.model_seat.bounded`), and every telemetry header
    omitted, ``omit`` being the SDK's own ``Omit`` marker."""
    return {**NO_COMPRESSION, **dict.fromkeys(TELEMETRY_HEADERS, omit)}


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The process's TLS context: the HTTP client's default (certificates verified, the
    environment's ``SSL_CERT_FILE`` and ``SSL_CERT_DIR`` honoured)."""
    return httpx2.create_ssl_context()


def per_thread(make: Callable[..., Client]) -> Callable[..., Client]:
    """``make``, its client kept per thread and per (hashable) arguments."""
    local = threading.local()

    @functools.wraps(make)
    def client(*args: Hashable) -> Client:
        made = local.__dict__.setdefault("made", {})
        if args not in made:
            made[args] = make(*args)
        return made[args]

    return client
