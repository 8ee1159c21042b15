"""Whole episodes with Claude seats: four of them over the loopback API, and the CLI.

The loopback server's legal player answers every request with a real tool call
that talks on its bids and rewrites its notes every turn, so talk, notes,
usage and caching all show up in the log the way a live table's would.
"""

from __future__ import annotations

import json
from itertools import pairwise

import pytest
import structlog
from claude_tables import FOUR_CLAUDES, offline  # noqa: F401  (autouse: no key, closed URL)
from messages_server import MessagesServer, table_player
from referee import replay

from arena.cli import main
from arena.eventlog import read_log
from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatSpec

pytestmark = pytest.mark.slow

DONE_WHEN = [
    "--seat",
    "claude:policies/honest.md",
    "--seat",
    "bayes",
    "--seat",
    "claude:policies/tracker.md",
    "--seat",
    "pressure",
]


@pytest.fixture
def cli():
    """``arena.cli.main``; afterwards, structlog's defaults again.

    The CLI configures structlog to print to the stderr it finds, here pytest's
    capture, which is closed after the test: a later test's log line must not
    go there.
    """
    yield main
    structlog.reset_defaults()


@pytest.fixture
def served(monkeypatch):
    """A loopback API whose legal player calls after 2 to 4 bids, varying by deal."""
    with MessagesServer(table_player(patience=lambda deal: 2 + deal % 3)) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        yield server


def four_claudes(host, deals=6, seed=3):
    specs = tuple(SeatSpec.parse(spec) for spec in FOUR_CLAUDES)
    request = EpisodeRequest(seed=seed, deals=deals, talk=True, seat_specs=specs)
    return run_episode(host, request)


def test_four_claude_seats_play_a_whole_episode(host, served):
    results, records = four_claudes(host)
    summary = replay(records, results.to_json())  # the rulebook, checked line by line
    assert summary.deals_played == 6 and results.status == "complete"
    decisions = [r for r in records if r["type"] in ("bid", "challenge") and not r.get("forced")]
    assert not [r for r in records if r["type"] in ("rejected", "fault")]
    assert all(r["fallback"] is False for r in decisions)
    # Every decision was one request offering the tool (the default model thinks, so the
    # choice is the model's) with two cache breakpoints.
    assert len(served.requests) == len(decisions) == sum(s.decisions for s in results.seats)
    for sent in served.requests:
        assert sent.json["tool_choice"]["type"] == "auto"
        assert [tool["name"] for tool in sent.json["tools"]] == ["act"]
        marked = [b for b in sent.json["system"] if "cache_control" in b]
        marked += [b for b in sent.json["messages"][0]["content"] if "cache_control" in b]
        assert len(marked) == 2


def test_talk_and_notes_reach_the_log(host, served):
    results, records = four_claudes(host)
    bids = [r for r in records if r["type"] == "bid"]
    assert bids and all(r["say"] and r["published"] == json.dumps(r["say"]) for r in bids)
    decisions = [r for r in records if r["type"] in ("bid", "challenge") and not r.get("forced")]
    assert all(r["notes"] for r in decisions)
    # A seat's notes come back to it: the next request of that seat shows its last notes.
    last_notes: dict[int, str] = {}
    for sent, decision in zip(served.requests, decisions, strict=True):
        slot = decision["slot"]
        turn = sent.json["messages"][0]["content"][-1]["text"]
        if slot in last_notes:
            assert f"<notes>\n{last_notes[slot]}\n</notes>" in turn
        else:
            assert "Your notes: none yet." in turn
        last_notes[slot] = decision["notes"]


def test_usage_is_recorded_per_decision_and_totalled_per_seat_and_episode(host, served):
    results, records = four_claudes(host)
    usage = [r for r in records if r["type"] == "usage"]
    assert len(usage) == len(served.requests)
    for seat in results.seats:
        mine = [u for u in usage if u["slot"] == seat.slot]
        assert seat.usage["calls"] == len(mine)
        for key in ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens"):
            assert seat.usage[key] == sum(u[key] for u in mine)
        # From a seat's second call on, its stable prefix is read from the cache.
        assert all(u["cacheReadTokens"] > 0 for u in mine[1:])
    episode = results.to_json()["usage"]
    assert episode["calls"] == len(usage)
    assert episode["cacheReadTokens"] == sum(u["cacheReadTokens"] for u in usage)


def test_after_its_first_call_a_seat_writes_to_the_cache_only_what_is_new(host, served):
    """The API's cache, as the loopback server models it from the documentation (tokens are
    bytes of block JSON / 4): a seat's later request reads its previous request's whole
    prompt, found at a block boundary one block before its breakpoint, so it writes only
    the text its record gained since, in one block (JSON's quoting and the block's keys
    add at most a fifth and 100 bytes)."""
    results, records = four_claudes(host, deals=10)
    usage = [r for r in records if r["type"] == "usage"]
    assert len(usage) == len(served.requests)

    def record(sent):
        return "".join(b["text"] for b in sent["messages"][0]["content"][:-1])

    later = 0
    for slot in range(4):
        mine = [
            (u, r.json) for u, r in zip(usage, served.requests, strict=True) if u["slot"] == slot
        ]
        for (_, before), (u, after) in pairwise(mine):
            gained = len(record(after)) - len(record(before))
            assert u["cacheReadTokens"] > len(record(before)) // 4
            assert 0 < u["cacheWriteTokens"] <= (gained * 1.2 + 100) // 4
            later += 1
    assert later > 20


def test_same_seed_and_same_replies_give_the_same_log(host, monkeypatch):
    logs = []
    for _ in range(2):
        with MessagesServer(table_player(patience=lambda deal: 3)) as server:
            monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
            monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
            logs.append(four_claudes(host, deals=4)[1])
    assert logs[0] == logs[1]


# --- the CLI ------------------------------------------------------------------------------------


def test_cli_with_no_key_plays_bayes_for_claude_seats_with_one_warning(capsys, cli):
    assert cli(["play", *DONE_WHEN, "--deals", "3", "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == (
        "arena: warning: seats 0 (claude:policies/honest.md), 2 (claude:policies/tracker.md): "
        "no ANTHROPIC_API_KEY: bayes played this seat\n"
    )
    seats = json.loads(captured.out)["seats"]
    assert [s["standIn"] is not None for s in seats] == [True, False, True, False]


def test_cli_against_the_local_server_writes_talk_and_notes(capsys, cli, served, tmp_path):
    log = tmp_path / "episode.jsonl"
    assert cli(["play", *DONE_WHEN, "--deals", "3", "--talk", "--log", str(log), "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    results = json.loads(captured.out)
    records = read_log(log)
    replay(records, results)
    claude_moves = [r for r in records if r["type"] in ("bid", "challenge") and r["slot"] in (0, 2)]
    assert claude_moves and all(r["fallback"] is False and r["notes"] for r in claude_moves)
    assert any(r["type"] == "bid" and r["published"] for r in claude_moves)
    assert results["seats"][0]["usage"]["calls"] == results["seats"][0]["decisions"]
    assert results["seats"][1].get("usage") is None  # bayes makes no model calls
