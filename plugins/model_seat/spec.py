"""A model seat's argument: ``POLICY?setting=value&...``, the spelling every model seat shares.

POLICY is a shipped policy name or a prompt file (:mod:`arena_policies`); the
query holds the seat's own settings, which each wire names and checks. A
setting it does not name is refused, naming those it does: a misspelt setting
never silently falls back to a default. A setting given twice is refused too: a
person reading ``model=a&model=b`` (or a ``base_url`` given twice) sees the first,
while a dict of the query would keep the last, so the seat would call what the
reader did not see.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import parse_qsl


def split_arg(
    arg: str | None, known: tuple[str, ...], no_policy: str
) -> tuple[str, Mapping[str, str]]:
    """``arg``'s policy and settings; ``ValueError`` (one line) for no policy (the wire's
    ``no_policy`` line, showing how to write one), a setting not in ``known``, or a
    setting given more than once."""
    if not arg:
        raise ValueError(no_policy)
    policy, _, query = arg.partition("?")
    pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=False)
    settings = dict(pairs)
    unknown = sorted(set(settings) - set(known))
    if unknown:
        raise ValueError(f"unknown setting {', '.join(unknown)} (known: {', '.join(known)})")
    if len(settings) < len(pairs):
        names = [name for name, _ in pairs]
        twice = sorted({name for name in names if names.count(name) > 1})
        raise ValueError(f"setting {', '.join(twice)} given more than once: give each setting once")
    return policy, settings
