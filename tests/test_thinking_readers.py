"""What reads a decision's thinking: ``arena check``, ``arena show --decisions`` and the audit.

The log's ``thinking`` key (docs/event-log.md) is a list of ``{"type": "thinking",
"text": ...}`` and ``{"type": "redacted"}`` blocks on a ``bid``, ``challenge`` or
``rejected`` line. The logs here are a real scripted episode with thinking written
onto chosen lines (the checker re-derives every hand from the seed, so a sound log
must be a played one), and, for the audit's counts, a log written line by line with
the bluffs counted by hand in the comments.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from audit_logs import bid, challenge, deal, episode, result
from claude_tables import offline  # noqa: F401  (autouse: no key, closed loopback URL)
from messages_server import Answer, MessagesServer, table_player, thought

from arena.audit import run_audit
from arena.check import verify
from arena.cli import main
from arena.eventlog import read_log
from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatSpec
from arena_plugins.reasoning import NAMED_FALSE, names_false
from arena_plugins.softplay import tally

SEATS = tuple(SeatSpec.parse(s) for s in ("bayes", "pressure", "bayes", "pressure"))
TABLE = EpisodeRequest(seed=21, deals=3, seat_specs=SEATS)
THOUGHT = {"type": "thinking", "text": "Three 4s is a stretch.\nI hold one; call it a bluff."}
REDACTED = {"type": "redacted"}


@pytest.fixture(scope="module")
def played(host, tmp_path_factory) -> list[dict]:
    path = tmp_path_factory.mktemp("thinking") / "log.jsonl"
    run_episode(host, TABLE, log_path=path, environ={})
    return [json.loads(line) for line in path.read_text().splitlines()]


def with_thinking(records: list[dict], index: int, thinking) -> list[dict]:
    edited = [dict(r) for r in records]
    edited[index]["thinking"] = thinking
    return edited


def first(records: list[dict], kind: str) -> int:
    return next(i for i, r in enumerate(records) if r["type"] == kind)


def save(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


# --- arena check ---------------------------------------------------------------------------


def test_check_accepts_thinking_and_redacted_blocks_on_bids_and_challenges(played, host):
    edited = with_thinking(played, first(played, "bid"), [THOUGHT, REDACTED])
    edited = with_thinking(edited, first(played, "challenge"), [{"type": "thinking", "text": ""}])
    assert verify(edited, registry=host.registry) == []


@pytest.mark.parametrize(
    "thinking, message",
    [
        ("I bluffed", "thinking must be a list of blocks, got 'I bluffed'"),
        ([{"type": "thinking"}], "thinking[0] must be"),
        ([REDACTED, {"type": "thinking", "text": 7}], "thinking[1] must be"),
        ([{"type": "redacted", "text": "x"}], "thinking[0] must be"),
        ([{"type": "redacted_thinking"}], "thinking[0] must be"),
        ([{"type": "thinking", "text": "a", "signature": "s"}], "thinking[0] must be"),
        ([None], "thinking[0] must be"),
    ],
)
def test_check_refuses_any_other_thinking_on_its_line(played, host, thinking, message):
    index = first(played, "bid")
    [violation] = verify(with_thinking(played, index, thinking), registry=host.registry)
    assert (violation.line, violation.rule) == (index + 1, "format")
    assert message in violation.message


def test_arena_check_names_the_bad_line_in_one_line(played, tmp_path, capsys):
    index = first(played, "challenge")
    log = save(tmp_path / "bad.jsonl", with_thinking(played, index, {"type": "thinking"}))
    assert main(["check", str(log)]) == 1
    captured = capsys.readouterr()
    [said] = (captured.out + captured.err).strip().splitlines()
    assert said.startswith(f"{log}:{index + 1}: ") and "thinking is a list of blocks" in said


# --- arena show --decisions ----------------------------------------------------------------


def test_show_decisions_prints_each_decisions_thinking_under_it(played, tmp_path, capsys):
    index = first(played, "bid")
    record = played[index]
    log = save(tmp_path / "t.jsonl", with_thinking(played, index, [THOUGHT, REDACTED]))
    assert main(["show", str(log), "--decisions"]) == 0
    lines = capsys.readouterr().out.splitlines()
    slot, bid_line = record["slot"], f"deal   0  s{record['slot']} bids "
    at = next(i for i, line in enumerate(lines) if line.startswith(bid_line))
    # Each line of the text on its own line, in order, then the redacted block marked.
    assert lines[at + 1 : at + 4] == [
        f"          s{slot} thinking: Three 4s is a stretch.",
        f"          s{slot}           I hold one; call it a bluff.",
        f"          s{slot} thinking: (redacted)",
    ]
    assert sum("thinking:" in line for line in lines) == 2  # only that decision thought


def test_show_per_deal_and_play_watch_print_no_thinking(played, tmp_path, capsys):
    log = save(tmp_path / "t.jsonl", with_thinking(played, first(played, "bid"), [THOUGHT]))
    assert main(["show", str(log)]) == 0
    assert "stretch" not in capsys.readouterr().out


def test_thinking_cannot_drive_the_terminal(played, tmp_path, capsys):
    hostile = {"type": "thinking", "text": "\x1b[2J\x1b]0;owned\x07gone\rback"}
    log = save(tmp_path / "t.jsonl", with_thinking(played, first(played, "bid"), [hostile]))
    assert main(["show", str(log), "--decisions"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    # "\r" splits the text into two lines; ESC (0x1b) and BEL (0x07) are shown as escapes.
    assert "thinking: \\x1b[2J\\x1b]0;owned\\x07gone" in out
    assert len(re.findall(r"\bback\b", out)) == 1  # not the results' "fallback" column


# --- the audit: bluffs beside the reasoning -----------------------------------------------


def block(text: str) -> dict:
    return {"type": "thinking", "text": text}


def thinking_bid(number, slot, quantity, face, *blocks) -> dict:
    record = bid(number, slot, quantity, face)
    record["thinking"] = list(blocks)
    return record


# Deal 0 hands, counted across the table: 1s: 2 + 1 = 3; 2s: 1 + 2 + 1 = 4; 3s: 1 + 3 = 4;
# 6s: 2 + 3 = 5. A bid is false when its face's count is under its quantity (rules.md).
# Deal 1: 2s: 1 + 5 = 6; 4s: 1; 6s: 1.
LOG = [
    episode("dice", [1, 2, 3, 4, 5, 6], 5, 12, 2),
    deal(0, 0, [[1, 1, 2, 3, 4], [2, 2, 5, 6, 6], [3, 3, 3, 4, 5], [6, 6, 6, 1, 2]]),
    thinking_bid(0, 0, 3, 1, block("Two ones here; three is likely.")),  # 3 >= 3: true
    thinking_bid(0, 1, 5, 2, block("A BLUFF: I see two twos.")),  # 4 < 5: false, named
    thinking_bid(0, 2, 5, 3, REDACTED),  # 4 < 5: false, reasoning unreadable
    bid(0, 3, 6, 6),  # 5 < 6: false, no thinking at all
    challenge(0, 0, 3, 6, 6, 5, 0, 3),  # actual 5 < 6: s0 +1, s3 -1
    deal(1, 1, [[5, 5, 5, 5, 5], [1, 2, 3, 4, 6], [1, 1, 1, 1, 1], [2, 2, 2, 2, 2]]),
    # 1 < 2: false; "unlikely" names it, in the first of two blocks
    thinking_bid(1, 1, 2, 4, block("Two fours is unlikely, but they may fold."), REDACTED),
    # 1 < 3: false; "believe" holds "lie" but not as a word: not named
    thinking_bid(1, 2, 3, 6, block("I believe the table holds them.")),
    thinking_bid(1, 3, 4, 6, block("Overbidding? No, I lie.")),  # 1 < 4: false, named
    challenge(1, 0, 3, 4, 6, 1, 0, 3),  # actual 1 < 4: s0 +1, s3 -1
    result([2, 0, 0, -2], 2),
]


@pytest.fixture
def reasoned(tmp_path) -> list[dict]:
    return read_log(save(tmp_path / "hand.jsonl", LOG))


def test_the_reasoning_figures_count_each_seats_false_bids_and_their_thinking(reasoned, host):
    # s0: one bid, true: nothing. s1: 5x2 (named "BLUFF") and 2x4 (named "unlikely").
    # s2: 5x3 (redacted) and 3x6 ("believe" only): reasoning on both, neither named.
    # s3: 6x6 (no thinking) and 4x6 ("lie", as a word): two bluffs, one reasoned and named.
    audit = run_audit(host.registry.reporters.values(), reasoned)
    assert audit["bluffs"] == [0, 2, 2, 2]
    assert audit["bluffsWithReasoning"] == [0, 2, 2, 1]
    assert audit["bluffsNamedFalse"] == [0, 2, 0, 1]
    assert audit["bluffRate"] == [0.0, 1.0, 1.0, 1.0]  # every bid but s0's 3x1 was false
    assert tally(reasoned).false_bids == audit["bluffs"]  # bluffRate's numerator


def test_the_reporter_is_registered_and_lands_in_results_audit(host, played, tmp_path):
    assert {"bluffs", "bluffsWithReasoning", "bluffsNamedFalse"} <= set(host.registry.reporters)
    results, _ = run_episode(host, TABLE, environ={})  # the same seed: the same log
    # Rules.md by hand: a bid is false when its face's count over the deal's hands is under
    # its quantity (dice: no wilds). Scripted seats never think: none with reasoning.
    false = [0] * 4
    for record in played:
        if record["type"] == "deal":
            hands = record["hands"]
        elif record["type"] == "bid":
            count = sum(hand.count(record["face"]) for hand in hands)
            false[record["slot"]] += count < record["quantity"]
    assert results.audit["bluffs"] == false and sum(false) > 0
    assert results.audit["bluffsWithReasoning"] == results.audit["bluffsNamedFalse"] == [0] * 4


@pytest.mark.parametrize(
    "text, named",
    [
        ("That is a LIE.", True),
        ("they're bluffing", True),
        ("false", True),
        ("improbable, but", True),
        ("overbid it", True),
        ("I believe it", False),  # "lie" inside a word
        ("a falsehood", False),  # "false" inside a word
        ("untrue-ish", True),  # a hyphen ends a word
        ("", False),
    ],
)
def test_named_false_is_a_word_of_the_list_case_insensitive(text, named):
    assert names_false([block(text)]) is named
    assert names_false([REDACTED, block(text)]) is named  # redacted blocks name nothing


def test_the_word_list_is_the_documented_one():
    doc = (Path(__file__).parent.parent / "docs" / "audit.md").read_text()
    assert all(f"`{word}`" in doc for word in NAMED_FALSE)


# --- a real Claude seat's log ----------------------------------------------------------------


def overbidding_thinker():
    """The loopback API's legal table player, raised by 4 (so many bids are false) and
    thinking before each reply: odd requests call their move a bluff, even ones do not."""
    play, served = table_player(), [0]

    def respond(body):
        answer = play(body)
        served[0] += 1
        call = dict(answer.content[-1])
        move = dict(call["input"])
        if move["action"] == "bid":
            move["quantity"] = min(move["quantity"] + 4, 20)
        words = "My count is thin: a bluff." if served[0] % 2 else "I hold enough; I'm sure."
        return Answer((thought(words), {**call, "input": move}), answer.stop_reason)

    return respond


def test_a_thinking_claude_seats_log_reads_in_check_show_and_the_audit(
    host, tmp_path, monkeypatch, capsys
):
    # Two Claude seats on an always-thinking model against the loopback Messages API.
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ARENA_CLAUDE_MODEL", "claude-opus-4-7")
    monkeypatch.setenv("ARENA_CLAUDE_BACKOFF", "0.01")
    specs = tuple(SeatSpec.parse(s) for s in ("claude:honest", "bayes", "claude:bluffer", "bayes"))
    log = tmp_path / "claude.jsonl"
    with MessagesServer(overbidding_thinker()) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        results, _ = run_episode(
            host, EpisodeRequest(seed=4, deals=6, seat_specs=specs), log_path=log
        )
    records = [json.loads(line) for line in log.read_text().splitlines()]
    thought_lines = [r for r in records if "thinking" in r]
    assert thought_lines and {r["slot"] for r in thought_lines} == {0, 2}
    assert main(["check", str(log)]) == 0
    # The audit, against the rulebook by hand: a false bid is one whose face's count over
    # the deal's hands is under its quantity; "named" is the word "bluff" in its thinking.
    expected = {name: [0] * 4 for name in ("bluffs", "bluffsWithReasoning", "bluffsNamedFalse")}
    for record in records:
        if record["type"] == "deal":
            hands = record["hands"]
        elif record["type"] == "bid":
            if sum(hand.count(record["face"]) for hand in hands) >= record["quantity"]:
                continue
            slot = record["slot"]
            expected["bluffs"][slot] += 1
            if "thinking" in record:
                expected["bluffsWithReasoning"][slot] += 1
                expected["bluffsNamedFalse"][slot] += "bluff" in record["thinking"][0]["text"]
    assert {name: results.audit[name] for name in expected} == expected
    named, reasoned = sum(expected["bluffsNamedFalse"]), sum(expected["bluffsWithReasoning"])
    assert 0 < named < reasoned  # both kinds of thinking came with some false bid
    # arena show --decisions prints every block of thinking, once, under its decision.
    capsys.readouterr()
    assert main(["show", str(log), "--decisions"]) == 0
    shown = [line for line in capsys.readouterr().out.splitlines() if " thinking: " in line]
    assert shown == [
        f"          s{r['slot']} thinking: {r['thinking'][0]['text']}" for r in thought_lines
    ]
