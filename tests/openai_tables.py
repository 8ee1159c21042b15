"""``openai:`` seats offline, shared by the openai tests.

``offline`` (autouse where imported) leaves no OpenAI or Anthropic key and no base URL,
and fast retry bounds, so nothing can leave the machine and a fault is quick.
"""

from __future__ import annotations

import pytest
import structlog

OPENAI_ENV = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
    "ANTHROPIC_API_KEY",
    "ARENA_OPENAI_TIMEOUT",
    "ARENA_OPENAI_RETRY_ATTEMPTS",
    "ARENA_OPENAI_RETRY_SECONDS",
    "ARENA_OPENAI_BACKOFF",
)


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    """No key, no base URL, fast retries; structlog's defaults (a CLI test may have left it
    printing to a closed capture)."""
    structlog.reset_defaults()
    for name in OPENAI_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ARENA_OPENAI_BACKOFF", "0.01")
    monkeypatch.setenv("ARENA_OPENAI_RETRY_ATTEMPTS", "3")
    monkeypatch.setenv("ARENA_OPENAI_TIMEOUT", "10")
