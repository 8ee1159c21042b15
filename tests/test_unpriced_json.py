"""An unpriced cost is ``null`` in every JSON output, never $0 (issue 36, row 11).

docs/models.md and docs/league.md promise that a model no price covers (a server you run,
with no ``provider=``) shows as ``unpriced`` (``null`` in JSON), never as $0; where only
part of a cost is priced, the JSON gives that part beside ``"unpriced": true``. Each case
runs the real ``arena`` command against loopback servers: ``compare --json`` and ``league
run`` then ``league show --json``.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from chat_server import ChatServer
from genai_prices import Usage, calc_price
from messages_server import MessagesServer
from messages_server import table_player as claude_player

pytestmark = pytest.mark.slow

HAIKU = "claude-haiku-4-5"


def arena(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None):
    """The real command, with only the model keys and URLs ``env`` gives it."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    return subprocess.run(
        ["arena", *args], capture_output=True, text=True, env={**clean, **(env or {})}, cwd=cwd
    )


@pytest.fixture
def local():
    """A server you run: an OpenAI-compatible one on loopback, which nothing prices."""
    with ChatServer("vllm") as server:
        yield f"openai:honest?model=m&base_url={server.url}/v1"


@pytest.fixture
def claude_env():
    """A loopback Messages API and the variables that send a Claude seat to it."""
    with MessagesServer(claude_player(patience=lambda deal: 2)) as server:
        yield {
            "ANTHROPIC_API_KEY": "test-key",
            "ANTHROPIC_BASE_URL": server.url,
            "ARENA_CLAUDE_BACKOFF": "0.01",
        }


def compared(a: str, b: str, env=None) -> dict:
    ran = arena("compare", a, b, "--tables", "2", "--deals", "2", "--json", env=env)
    assert ran.returncode == 0, ran.stderr
    return json.loads(ran.stdout)


def test_compare_json_gives_null_for_a_wholly_unpriced_cost(local):
    shown = compared(local, "bayes")
    assert shown["unpriced"] == ["m"]
    assert shown["cost"] is None


def test_compare_text_says_unpriced_not_zero_dollars(local):
    ran = arena("compare", local, "bayes", "--tables", "2", "--deals", "2")
    assert ran.returncode == 0, ran.stderr
    (line,) = [line for line in ran.stdout.splitlines() if "tables, each played by" in line]
    assert "cost unpriced (m)," in line and "$" not in line


def test_compare_json_keeps_the_priced_part_beside_the_unpriced(local, claude_env):
    shown = compared(f"claude:honest?model={HAIKU}", local, env=claude_env)
    assert shown["unpriced"] == ["m"]
    assert isinstance(shown["cost"], float) and shown["cost"] > 0  # Claude's calls


def test_compare_of_seats_that_call_no_model_costs_zero():
    """Nothing unpriced: scripted seats cost nothing, a known $0, not null."""
    shown = compared("bayes", "random")
    assert shown["unpriced"] == [] and shown["cost"] == 0.0


def league_toml(folder: Path, entrants: str) -> Path:
    path = folder / "league.toml"
    path.write_text(
        "[league]\ntables = 1\n[table]\ndeals = 2\n[entrants]\n" + entrants, encoding="utf-8"
    )
    return path


def shown_league(folder: Path, entrants: str, env=None) -> dict:
    """``league run`` of ``entrants`` at one table, then ``league show --json`` of it."""
    path = league_toml(folder, entrants)
    db = folder / "league.sqlite"
    ran = arena("league", "run", str(path), "--db", str(db), env=env, cwd=folder)
    assert ran.returncode == 0, ran.stderr
    shown = arena("league", "show", str(db), "--json", cwd=folder)
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout)


def test_league_show_json_gives_null_for_a_wholly_unpriced_entrant_and_league(tmp_path, local):
    report = shown_league(
        tmp_path, f'gpt = "{local}"\nbayes = "bayes"\npressure = "pressure"\nrandom = "random"\n'
    )
    cost = report["cost"]
    assert cost["byEntrant"]["gpt"]["unpriced"] is True
    assert cost["byEntrant"]["gpt"]["usd"] is None
    assert [p["usd"] for p in cost["byPrice"]] == [None]
    # The league's only model calls are unpriced: its dollars are unknown too.
    assert cost["unpriced"] is True and cost["usd"] is None
    # bayes calls no model: a known $0.
    assert (cost["byEntrant"]["bayes"]["usd"], cost["byEntrant"]["bayes"]["unpriced"]) == (
        0.0,
        False,
    )


def test_league_show_json_keeps_the_priced_part_where_part_is_priced(tmp_path, local, claude_env):
    entrants = (
        f'claude = "claude:honest?model={HAIKU}"\ngpt = "{local}"\n'
        'bayes = "bayes"\npressure = "pressure"\n'
    )
    report = shown_league(tmp_path, entrants, env=claude_env)
    cost = report["cost"]
    assert cost["byEntrant"]["gpt"]["usd"] is None
    # The league's dollars are Claude's calls, priced as genai-prices prices them itself.
    tokens = cost["byEntrant"]["claude"]["tokens"]
    usage = Usage(
        input_tokens=tokens["input"] + tokens["cacheRead"] + tokens["cacheWrite"],
        output_tokens=tokens["output"],
        cache_read_tokens=tokens["cacheRead"],
        cache_write_tokens=tokens["cacheWrite"],
    )
    expected = float(calc_price(usage, HAIKU, provider_id="anthropic").total_price)
    assert tokens["output"] > 0 and expected > 0
    assert cost["byEntrant"]["claude"]["usd"] == pytest.approx(expected)
    assert cost["byEntrant"]["claude"]["unpriced"] is False
    assert cost["usd"] == pytest.approx(expected) and cost["unpriced"] is True


def test_league_show_text_says_unpriced_for_the_entrant_and_priced_plus_unpriced_for_all(
    tmp_path, local, claude_env
):
    entrants = (
        f'claude = "claude:honest?model={HAIKU}"\ngpt = "{local}"\n'
        'bayes = "bayes"\npressure = "pressure"\n'
    )
    shown_league(tmp_path, entrants, env=claude_env)
    text = arena("league", "show", str(tmp_path / "league.sqlite"), env={"COLUMNS": "200"})
    rows = {line.split()[0]: line.split()[-1] for line in text.stdout.splitlines() if line.strip()}
    assert rows["gpt"] == "unpriced"
    assert text.stdout.count("+ unpriced") == 1  # the league's row: Claude's dollars + gpt's
