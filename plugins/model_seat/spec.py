"""A model seat's argument: ``POLICY?setting=value&...``, the spelling every model seat shares.

POLICY is a shipped policy name or a prompt file (:mod:`arena_policies`); the
query holds the seat's own settings, which each wire names and checks. A
setting it does not name is refused, naming those it does: a misspelt setting
never silently falls back to a default.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import parse_qsl


def split_arg(
    arg: str | None, known: tuple[str, ...], no_policy: str
) -> tuple[str, Mapping[str, str]]:
    """``arg``'s policy and settings; ``ValueError`` (one line) for no policy (the wire's
    ``no_policy`` line, showing how to write one) or a setting not in ``known``."""
    if not arg:
        raise ValueError(no_policy)
    policy, _, query = arg.partition("?")
    settings = dict(parse_qsl(query, keep_blank_values=True, strict_parsing=False))
    unknown = sorted(set(settings) - set(known))
    if unknown:
        raise ValueError(f"unknown setting {', '.join(unknown)} (known: {', '.join(known)})")
    return policy, settings
