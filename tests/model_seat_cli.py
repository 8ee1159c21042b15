"""The real ``arena`` command run against a model server on 127.0.0.1, as the model-seat
boundary tests run it: with none of this machine's model variables or proxies, fast retries,
and a user's whole OpenAI account in the environment where a test asks for it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ARENA = str(Path(sys.executable).with_name("arena"))
KEY = "sk-user-secret-0123456789"
ACCOUNT = {
    "OPENAI_API_KEY": KEY,
    "OPENAI_ORG_ID": "org-user",
    "OPENAI_PROJECT_ID": "proj-user",
    "OPENAI_CUSTOM_HEADERS": "X-Gateway-Token: gw-secret",
}
"""Everything of the user's OpenAI account the SDK would send on its own."""
SECRETS = (KEY, "org-user", "proj-user", "gw-secret")
FAST = {
    "ARENA_OPENAI_RETRY_ATTEMPTS": "1",
    "ARENA_OPENAI_BACKOFF": "0.01",
    "ARENA_OPENAI_TIMEOUT": "20",
}


def arena(*args: str, env: dict[str, str] | None = None, timeout: float = 120):
    """The real command, with none of this machine's model variables or proxies but ``env``."""
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "ANTHROPIC_", "ARENA_", "PLAYER_"))
        and k.lower() not in ("http_proxy", "https_proxy", "all_proxy", "no_proxy")
    }
    return subprocess.run(
        [ARENA, *args],
        capture_output=True,
        text=True,
        env={**clean, **FAST, **(env or {})},
        timeout=timeout,
    )


def play(seat: str, *more: str, env: dict[str, str] | None = None, log: Path | None = None):
    """Three deals of ``seat`` at a table with three bayes seats, ``--json``: the seat is
    asked in each."""
    args = ["play", "--seat", seat, "--seat", "bayes", "--seat", "bayes", "--seat", "bayes"]
    args += ["--deals", "3", "--seed", "3", "--json", *more]
    if log is not None:
        args += ["--log", str(log)]
    return arena(*args, env=env)


def records(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()]
