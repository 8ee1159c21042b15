"""The budget is a ceiling, under every executor: Claude tables over the loopback API.

The bound, worked out: a table starts only while the money spent plus one mean-cost
table per table in flight stays within the budget; before any table is done there is no
mean, so one table per executor slot starts (three here), and none waits queued behind
them. The tables in flight when the budget runs out are the overshoot, so

    spent <= budget + slots x (the dearest table's cost)

and at most ``budget / cost + slots`` tables are played. At a zero budget nothing
starts: no table, no request, no dollar.

Each league runs as its own ``arena`` process against a fresh loopback server (a warm
prompt cache would make tables cheaper), with the key and URL in its environment as
``python tests/messages_server.py -- arena ...`` sets them.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

import pytest
from messages_server import MessagesServer, table_player

pytestmark = pytest.mark.slow

SLOTS = 3
POOL = ["--pool", "claude:honest,bayes,pressure,random", "--tables", "12", "--deals", "2"]
POOL += ["--talk", "--seed", "4"]
EXECUTORS = {
    "thread": ["--executor", "thread", "--concurrency", str(SLOTS)],
    # --workers: the process executor, which used to send each worker eight tables ahead
    "process": ["--workers", str(SLOTS)],
    "ray": ["--executor", "ray", "--concurrency", str(SLOTS)],
}


def league(db, *args: str, env=None) -> tuple[subprocess.CompletedProcess, int]:
    """``arena league run`` against a fresh loopback server; also the requests it got."""
    with MessagesServer(table_player()) as server:
        keyed = (env or os.environ) | {
            "ANTHROPIC_API_KEY": "loopback",
            "ANTHROPIC_BASE_URL": server.url,
            "ARENA_CLAUDE_BACKOFF": "0.01",
        }
        ran = subprocess.run(
            [sys.executable, "-m", "arena.cli", "league", "run", *POOL, "--db", str(db),
             "--json", *args],
            capture_output=True, text=True, env=keyed, timeout=300,
        )  # fmt: skip
        return ran, len(server.requests)


def episode_costs(db) -> list[float]:
    """Each stored episode's dollars: the sum over its seats."""
    if not os.path.exists(db):
        return []
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return [usd for (usd,) in conn.execute("SELECT SUM(usd) FROM seats GROUP BY idx")]


@pytest.fixture(scope="module")
def one_table(tmp_path_factory) -> float:
    """What one table costs: the league's first, played alone."""
    db = tmp_path_factory.mktemp("one") / "one.sqlite"
    ran, _ = league(db, "--executor", "serial", "--budget-usd", "1000", "--tables", "1")
    assert ran.returncode == 0, ran.stderr
    (cost,) = episode_costs(db)
    assert cost > 0
    return cost


@pytest.fixture
def ray_env():
    """A private Ray instance under a temp dir of its own (its sockets live there)."""
    pytest.importorskip("ray", reason="the ray extra is not installed (pip install '.[ray]')")
    ray_dir = tempfile.mkdtemp(prefix="ray", dir="/tmp")
    yield {k: v for k, v in os.environ.items() if not k.startswith("RAY_")} | {
        "RAY_TMPDIR": ray_dir
    }
    shutil.rmtree(ray_dir, ignore_errors=True)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_a_zero_budget_spends_nothing(tmp_path, executor):
    for flag in ("--budget-usd", "--budget-tokens"):
        db = tmp_path / f"{flag}.sqlite"
        ran, requests = league(db, *EXECUTORS[executor], flag, "0")
        assert requests == 0 and episode_costs(db) == []
        assert ran.returncode == 1 and ran.stdout == ""
        assert ran.stderr.strip().splitlines()[-1] == (
            "arena: budget reached after 0 of 12 episodes ($0.0000, 0 tokens);"
            " resume with a higher budget"
        )


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("tables_worth", [1, 3])
def test_the_overshoot_is_bounded_by_the_tables_in_flight(
    tmp_path, request, executor, tables_worth, one_table
):
    env = request.getfixturevalue("ray_env") if executor == "ray" else None
    budget = tables_worth * one_table
    db = tmp_path / "l.sqlite"
    ran, _ = league(db, *EXECUTORS[executor], "--budget-usd", repr(budget), env=env)
    assert ran.returncode == 0, ran.stderr
    costs = episode_costs(db)
    # 12 tables would cost about 12 x one_table: the budget stopped the league short...
    assert "arena: budget reached after" in ran.stderr
    # ...after at most the budget's worth plus one table per slot...
    assert len(costs) <= tables_worth + SLOTS
    # ...and the money spent past the budget is at most the tables in flight.
    assert sum(costs) <= budget + SLOTS * max(costs)
