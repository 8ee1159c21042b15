"""``openai:`` seats everywhere a Claude seat goes on the command line: ``arena play`` with a
log that ``check`` passes, the replay shows and the bluff-reasoning reporters read; ``arena
plugins``; and ``arena serve``'s offer.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from chat_server import ChatServer

from arena.runner import EpisodeRequest, SetupError
from arena.seats import SeatSpec
from arena.web.serve_offer import make_offer

pytestmark = pytest.mark.slow


def arena(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    return subprocess.run(
        ["arena", *args], capture_output=True, text=True, env={**clean, **(env or {})}
    )


def test_a_played_log_with_reasoning_checks_and_its_reasoning_is_read(tmp_path):
    log = tmp_path / "ep.jsonl"
    with ChatServer("vllm-reasoning-content") as server:
        played = arena(
            "play",
            "--seat", "openai:bluffer?model=Qwen/Qwen3-8B",
            "--seat", "bayes",
            "--seat", "openai:honest?model=Qwen/Qwen3-8B",
            "--seat", "random",
            "--deals", "6",
            "--log", str(log),
            env={"OPENAI_BASE_URL": f"{server.url}/v1"},
        )  # fmt: skip
    assert played.returncode == 0, played.stderr
    decisions = [
        line
        for line in map(json.loads, log.read_text().splitlines())
        if line.get("type") in ("bid", "challenge") and line["slot"] in (0, 2)
    ]
    assert decisions and all(d["thinking"][0]["type"] == "thinking" for d in decisions)
    page = tmp_path / "ep.html"
    assert arena("replay", str(log), "-o", str(page)).returncode == 0
    shown = page.read_text()
    # The replay's spectator view shows each reasoning beside its move (its marker, which
    # the page may escape around).
    assert all(d["thinking"][0]["text"].split("]")[0] in shown for d in decisions)
    checked = arena("check", str(log))
    assert checked.returncode == 0 and checked.stdout.strip().endswith(
        "ok (dice seed 0, complete, 6 deals)"
    )
    audit = json.loads(arena("audit", str(log), "--json").stdout)
    # Every bid an openai seat made came with its reasoning; bayes and random keep none.
    assert audit["bluffsWithReasoning"][1] == audit["bluffsWithReasoning"][3] == 0
    bluffs = [audit["bluffs"][slot] for slot in (0, 2)]
    assert sum(bluffs) > 0
    assert [audit["bluffsWithReasoning"][slot] for slot in (0, 2)] == bluffs


def test_arena_plugins_lists_the_openai_seat_as_first_party():
    listed = json.loads(arena("plugins", "--json").stdout)
    (openai,) = [p for p in listed if p["name"] == "openai"]
    assert (openai["trust"], openai["hooks"], openai["broken"]) == (
        "first-party",
        ["register_seats"],
        None,
    )


def test_arena_serve_offers_an_openai_seat_and_refuses_a_bad_one(host):
    good = SeatSpec.parse("openai:honest?model=m&base_url=http://127.0.0.1:9/v1")
    offer = make_offer(host.registry, EpisodeRequest(), [good])
    assert str(good) in offer.seats
    assert offer.descriptions[str(good)].startswith("Any model on an OpenAI-compatible endpoint")
    with pytest.raises(SetupError, match=r"^seat openai:honest: an openai seat needs a model"):
        make_offer(host.registry, EpisodeRequest(), [SeatSpec.parse("openai:honest")])
