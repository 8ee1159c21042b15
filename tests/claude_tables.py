"""Claude seats offline or against the loopback Messages API, shared by the Claude tests.

``offline`` (autouse where imported) leaves no key and a closed loopback base URL, so
nothing can leave the machine; ``api`` serves the API on 127.0.0.1 for one test.
"""

from __future__ import annotations

import pytest
import structlog
from messages_server import MessagesServer, table_player
from referee import replay

from arena import seeding
from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatSpec
from arena_plugins.claude.lookup import forget_answers

FOUR_CLAUDES = ("claude:honest", "claude:bluffer", "claude:tracker", "claude:policies/honest.md")
CLOSED_LOOPBACK = "http://127.0.0.1:9"
CLAUDE_ENV = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ARENA_CLAUDE_MODEL",
    "ARENA_CLAUDE_MAX_TOKENS",
    "ARENA_CLAUDE_THINKING",
    "ARENA_CLAUDE_EFFORT",
    "ARENA_CLAUDE_TIMEOUT",
    "ARENA_CLAUDE_RETRY_ATTEMPTS",
    "ARENA_CLAUDE_RETRY_SECONDS",
    "ARENA_CLAUDE_BACKOFF",
)


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    """No key and a closed loopback port unless a test serves the API itself.

    Also no model's rules kept from an earlier test, and structlog's defaults: a CLI test
    elsewhere may have left it printing to a captured stderr that is closed by now, and the
    seat logs each retry.
    """
    structlog.reset_defaults()
    forget_answers()  # a loopback API on a port an earlier test used is another API
    for name in CLAUDE_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", CLOSED_LOOPBACK)


@pytest.fixture
def api(monkeypatch):
    """The loopback Messages and Models APIs, the SDK pointed at them, and fast retry bounds.

    Unscripted requests are answered by a legal player that challenges any standing bid.
    """
    yield from _serve(monkeypatch, models_api=True)


@pytest.fixture
def gateway(monkeypatch):
    """The loopback Messages API without the Models API (a 404 for ``/v1/models``), as a
    gateway that forwards only ``/v1/messages``: seats play by the shipped table."""
    yield from _serve(monkeypatch, models_api=False)


def _serve(monkeypatch, models_api: bool):
    with MessagesServer(table_player(patience=lambda deal: 1), models_api=models_api) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ARENA_CLAUDE_BACKOFF", "0.01")
        monkeypatch.setenv("ARENA_CLAUDE_RETRY_ATTEMPTS", "3")
        monkeypatch.setenv("ARENA_CLAUDE_TIMEOUT", "10")
        yield server


def two_seat_table(host, claude_opens: bool, spec: str = "claude:honest", talk=False, seed=0):
    """Claude against bayes at a 2-seat table, one deal; Claude opens or answers the opening."""
    order = seeding.table_order(seed, 2)
    claude = order[0] if claude_opens else order[1]
    specs = tuple(SeatSpec.parse(spec if slot == claude else "bayes") for slot in range(2))
    request = EpisodeRequest(seats=2, seed=seed, deals=1, talk=talk, seat_specs=specs)
    results, records = run_episode(host, request)
    replay(records, results.to_json())  # every rule of the log checked independently
    return claude, results, records


def of(records, kind, slot=None):
    return [r for r in records if r["type"] == kind and (slot is None or r["slot"] == slot)]


def moves(records, slot):
    return [r for r in records if r["type"] in ("bid", "challenge") and r["slot"] == slot]


def tail_of(body: dict) -> str:
    """The prompt's last block: the turn, with rule 11's reason when there is one."""
    return body["messages"][-1]["content"][-1]["text"]


def tail(request) -> str:
    return tail_of(request.json)
