"""Where a model seat's credentials may go: an origin, as a browser means it.

A key, an organization or project ID and a gateway's own headers are paired with
one origin: the scheme, host and port of the base URL they were given with
(``OPENAI_API_KEY`` with ``OPENAI_BASE_URL``, a seat's ``key_env`` with its own
``base_url``). Comparing hosts alone sent a user's OpenAI key in cleartext to
``http://api.openai.com:9999``, and from one loopback port to the next.

A base URL is checked once, where it is read: an ``http(s)`` URL with a host,
and no credentials inside it (``http://user:secret@host`` would be sent as Basic
auth and written into the log and ``--json`` as the seat's name). An error line
never echoes a URL whole: it shows at most :data:`SHOWN_URL` characters, and
never the part before an ``@``.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

DEFAULT_PORTS = {"http": 80, "https": 443}
SHOWN_URL = 120
"""The most of a URL an error line shows."""

Origin = tuple[str, str, int]
"""``(scheme, host, port)``, lower case, the port filled in from the scheme."""


def origin_of(url: str) -> Origin:
    """The origin a request to ``url`` goes to; ``ValueError`` for a port that is not one."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or DEFAULT_PORTS.get(scheme, 0)


def shown(url: str) -> str:
    """``url`` as an error line may show it: credentials cut out, at most :data:`SHOWN_URL`
    characters, control characters escaped."""
    scheme, sep, rest = url.partition("://")
    if sep:
        authority, slash, path = rest.partition("/")
        if "@" in authority:
            authority = "***@" + authority.rpartition("@")[2]
        url = f"{scheme}{sep}{authority}{slash}{path}"
    text = url.encode("unicode_escape").decode("ascii")
    return text if len(text) <= SHOWN_URL else text[: SHOWN_URL - 1] + "…"


def check_base_url(url: str, name: str) -> None:
    """``ValueError`` (one line, naming ``name``) unless ``url`` is an ``http(s)`` URL with a
    host, a valid port and no credentials in it."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number in range
    except ValueError:
        raise ValueError(f"{name} must be an http(s) URL with a host, got {shown(url)!r}") from None
    if parts.scheme.lower() not in DEFAULT_PORTS or not parts.hostname:
        raise ValueError(f"{name} must be an http(s) URL with a host, got {shown(url)!r}")
    if "@" in parts.netloc:
        raise ValueError(
            f"{name} must not hold credentials (user:password@ in {shown(url)!r}): "
            "a key goes in its own environment variable, never in a URL"
        )


def host_of(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


def is_local(url: str) -> bool:
    """Whether ``url`` names a server on this machine or a private network: one you run."""
    host = host_of(url)
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local
