"""Whatever the arena writes, its readers read: every text a decision line carries is cut to a
cap (:mod:`arena.logged_text`), the cut saying so; a 70 MiB reasoning once made a log that
``check``, ``show``, ``replay`` and ``audit`` refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hostile_server import HostileServer, completion, legal_play

from arena.events import Thought
from arena.logged_text import THINKING_CAP, cut, cut_thoughts

ARENA = str(Path(sys.executable).with_name("arena"))


def test_a_text_within_its_cap_is_kept_as_it_is():
    assert cut("abc", 3) == "abc"
    assert cut(None, 3) is None


def test_a_text_past_its_cap_keeps_its_first_characters_and_says_how_long_it_was():
    # 6 characters, cap 4: "abcd", then the note of the cap (4) and the length (6)
    assert cut("abcdef", 4) == "abcd [cut by the arena at 4 of 6 characters]"


def test_reasoning_is_cut_over_all_its_blocks_and_the_blocks_past_the_cap_left_out():
    # Blocks of cap - 2, 5 and 3 characters: 2 of the second block fit, so it is cut there
    # with the note of the total (cap + 6); the third block is left out.
    first = Thought("thinking", "a" * (THINKING_CAP - 2))
    thoughts = (first, Thought("thinking", "bcdef"), Thought("thinking", "xyz"))
    kept = cut_thoughts(thoughts)
    assert kept[0] == first
    assert (
        kept[1].text
        == f"bc [cut by the arena at {THINKING_CAP:,} of {THINKING_CAP + 6:,} characters]"
    )
    assert len(kept) == 2


def test_reasoning_within_the_cap_is_the_same_tuple():
    thoughts = (Thought("thinking", "short"), Thought("redacted"))
    assert cut_thoughts(thoughts) is thoughts
    assert cut_thoughts(None) is None


@pytest.mark.slow
def test_a_70_mib_reasoning_talk_and_notes_make_a_log_every_reader_reads(tmp_path):
    huge, long = "r" * (70 * 2**20), "t" * (5 * 2**20)

    def reply(action):
        return completion({**action, "say": long, "notes": long}, reasoning=huge)

    log = tmp_path / "ep.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ARENA_"))}
    env |= {"ARENA_OPENAI_RETRY_ATTEMPTS": "1"}
    with HostileServer(legal_play(reply)) as server:
        seat = f"openai:honest?model=m&base_url={server.url}/v1&max_reply_bytes=400000000"
        played = subprocess.run(
            [ARENA, "play", "--talk", "--seat", seat, "--seat", "bayes", "--seat", "bayes",
             "--seat", "bayes", "--deals", "1", "--seed", "1", "--log", str(log)],
            capture_output=True, text=True, env=env, timeout=300,
        )  # fmt: skip
    assert played.returncode == 0, played.stderr
    assert log.stat().st_size < 40 * 2**20
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    decided = [r for r in lines if r["type"] in ("bid", "challenge") and r["slot"] == 0]
    made = next(r for r in decided if not r["fallback"] and not r.get("forced"))
    note = " [cut by the arena at {:,} of {:,} characters]"
    assert made["thinking"] == [
        {"type": "thinking", "text": "r" * THINKING_CAP + note.format(THINKING_CAP, len(huge))}
    ]
    assert made["say"] == "t" * 4000 + note.format(4000, len(long))
    assert made["notes"] == "t" * 4000 + note.format(4000, len(long))
    for command in (["check"], ["show"], ["audit"], ["replay", "-o", str(tmp_path / "r.html")]):
        read = subprocess.run(
            [ARENA, *command, str(log)], capture_output=True, text=True, env=env, timeout=300
        )
        assert read.returncode == 0, (command, read.stderr)
