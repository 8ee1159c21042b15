"""Which price table a model seat's calls are priced by: a genai-prices provider ID.

A seat names its provider (``provider=``), or its base URL's host says it
(genai-prices matches each provider's API URL: OpenAI, OpenRouter, Google,
DeepSeek, Groq, Together, Mistral, ...). A loopback or private base URL with no
``provider=`` is a server the user runs: no provider, so the league shows its
cost as unpriced (:mod:`arena.league.cost`). genai-prices is imported here, when
a league first asks, as the league's own pricing does.
"""

from __future__ import annotations


def provider_of_url(base_url: str) -> str | None:
    """The provider whose API ``base_url`` is, by genai-prices' URL patterns, or ``None``."""
    from genai_prices import data_snapshot

    try:
        return data_snapshot.get_snapshot().find_provider(None, None, base_url).id
    except LookupError:
        return None


def checked_provider(provider: str) -> str:
    """``provider`` if genai-prices knows it; ``ValueError`` naming the known ones if not."""
    from genai_prices import data_snapshot

    known = sorted(p.id for p in data_snapshot.get_snapshot().providers)
    if provider not in known:
        raise ValueError(f"unknown provider {provider!r} (genai-prices knows: {', '.join(known)})")
    return provider
