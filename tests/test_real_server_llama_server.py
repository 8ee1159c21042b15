"""``openai:`` seats against llama.cpp's own ``llama-server`` (issue 37), built from the sources
vendored in llama-cpp-python's sdist, serving the tiny model ``tests/tiny_gguf.py`` writes,
on 127.0.0.1.

The two ``llama-server`` behaviours issue 37 names as "done when": with ``--jinja`` it
ignores a forced ``tool_choice`` (a log line of its own, then plain text), and the seats
end on ``json_schema``; with ``--no-jinja`` any tools request is a 500 (``tools param
requires --jinja flag``), and the seats step down within their first decision. Both play
whole episodes with 0 faults, every move the seat's own model's.

Where ``llama-server`` is not found (``ARENA_LLAMA_SERVER_BIN``, else ``PATH``) the module is
skipped with one line saying so; with ``ARENA_REALSERVER_REQUIRED=1`` (``.ci/run``) that is a
failure instead.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from llama_server import MODEL, missing_llama_server, native_llama_server, needed, quiet_env
from tiny_gguf import CHALLENGE, OPEN, write_babbling_model, write_tiny_model

needed(missing_llama_server(), "the llama-server tests")

pytestmark = [pytest.mark.realserver, pytest.mark.slow]

REPO = Path(__file__).resolve().parent.parent
ADAPTED = "openai request adapted"


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    return write_tiny_model(tmp_path_factory.mktemp("model") / "tiny.gguf")


@pytest.fixture(scope="module")
def jinja(model, tmp_path_factory):
    with native_llama_server(model, tmp_path_factory.mktemp("jinja"), jinja=True) as server:
        yield server


@pytest.fixture(scope="module")
def no_jinja(model, tmp_path_factory):
    with native_llama_server(model, tmp_path_factory.mktemp("nojinja"), jinja=False) as server:
        yield server


def play(server, log: Path, deals: int = 4, seed: int = 11, seats: list[str] | None = None):
    """``seats`` (by default four ``openai:`` seats on ``server``), checked by ``arena
    check``: the results, the log's lines and stderr."""
    if seats is None:
        seats = [server.seat(policy) for policy in ("honest", "bluffer", "tracker", "honest")]
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli", "play", "--deals", str(deals), "--seed", str(seed)]
        + ["--log", str(log), "--json"]
        + [arg for seat in seats for arg in ("--seat", seat)],
        capture_output=True,
        text=True,
        timeout=600,
        env=quiet_env(),
        cwd=REPO,
    )
    assert done.returncode == 0, f"{done.stderr}\n{server.why()}"
    checked = subprocess.run(
        [sys.executable, "-m", "arena.cli", "check", str(log)],
        capture_output=True,
        text=True,
        env=quiet_env(),
        cwd=REPO,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    records = [json.loads(line) for line in log.read_text().splitlines()]
    return json.loads(done.stdout), records, done.stderr


def decisions(records):
    return [r for r in records if r["type"] in ("bid", "challenge") and not r.get("forced")]


def assert_own_clean_play(server, results, records):
    """0 faults, no fallback, no rejection; each decision one usage line of its own seat; the
    moves the model makes (the opener's lowest bid, then challenges)."""
    assert server.alive(), server.why()
    assert results["status"] == "complete"
    assert not [r for r in records if r["type"] in ("fault", "rejected")]
    made = decisions(records)
    assert made and all(r["fallback"] is False for r in made)
    usage = [r for r in records if r["type"] == "usage"]
    assert [(r["deal"], r["slot"]) for r in usage] == [(r["deal"], r["slot"]) for r in made]
    for deal in sorted({r["deal"] for r in made}):
        opener, *rest = [r for r in made if r["deal"] == deal]
        assert (opener["type"], opener["quantity"], opener["face"]) == ("bid", 1, 1)
        assert all(r["type"] == "challenge" for r in rest)
    for seat in results["seats"]:
        assert (seat["faults"], seat["fallbacks"], seat["rejected"]) == (0, 0, 0)
    return usage


def test_a_server_that_ignores_tool_choice_leaves_the_seats_on_json_schema(jinja, tmp_path):
    results, records, stderr = play(jinja, tmp_path / "a.jsonl")
    usage = assert_own_clean_play(jinja, results, records)
    # Each seat's first call is the forced tool, answered with no call; every later one is
    # the JSON schema, which llama-server holds to the schema by grammar.
    seen: set[int] = set()
    for line in usage:
        assert line["shape"] == ("json_schema" if line["slot"] in seen else "forced")
        seen.add(line["slot"])
    assert any(line["shape"] == "json_schema" for line in usage)
    # One warning per seat that moved, in the seat's words and the model's own.
    warned = [line for line in stderr.splitlines() if ADAPTED in line]
    moved = {line["slot"] for line in usage if line["shape"] == "json_schema"}
    assert len(warned) == len(moved)
    assert all("now=json_schema, was=forced" in line for line in warned)
    assert all("a forced tool_choice was answered with no tool call" in w for w in warned)
    # llama-server says what it did only in its own log.
    assert "Wrong type supplied for parameter 'tool_choice'" in jinja.stderr()


def test_seats_step_down_within_their_first_decision_without_jinja(no_jinja, tmp_path):
    results, records, stderr = play(no_jinja, tmp_path / "a.jsonl")
    usage = assert_own_clean_play(no_jinja, results, records)
    # Every answered call is the JSON schema: the forced tool and then `auto` were each
    # refused with a 500 inside each seat's first decision, which the seat did not retry.
    assert {line["shape"] for line in usage} == {"json_schema"}
    warned = [line for line in stderr.splitlines() if ADAPTED in line]
    asked = {line["slot"] for line in usage}
    assert len(warned) == 2 * len(asked)
    assert all("HTTP 500: tools param requires --jinja flag" in line for line in warned)


CUT_OFF = "cut off at the token limit before an action"


def test_a_reply_cut_at_the_cap_is_one_rejection_saying_so(tmp_path):
    """A model that never stops, capped at 40 tokens beside three bayes seats: llama-server
    says ``length``, and each rejection is the seat's own sentence quoting what the model
    wrote, not the text parser's "unparseable reply"; never a fault."""
    model = write_babbling_model(tmp_path / "b.gguf")
    with native_llama_server(model, tmp_path, jinja=True) as server:
        seats = [server.seat("honest", max_tokens=40), "bayes", "bayes", "bayes"]
        _, records, _ = play(server, tmp_path / "a.jsonl", 1, 7, seats)
    assert not [r for r in records if r["type"] == "fault"]
    rejected = [r for r in records if r["type"] == "rejected"]
    assert rejected
    for rejection in rejected:
        reason = rejection["reason"]
        assert reason.startswith(CUT_OFF + " (finish_reason length)"), reason
        assert "unparseable" not in reason and "aaaa" in reason


def request(prompt: str, **shape) -> dict:
    messages = [{"role": "user", "content": prompt}]
    return {"model": MODEL, "messages": messages, **shape}


OPENING = "No standing bid: you open.\nLegal now: you must bid; lowest bid quantity 1, face 1.\n"
RAISING = "Standing bid: quantity 1, face 1 by s0.\nLegal now: challenge or bid.\n"
SCHEMA = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["bid", "challenge"]},
        "quantity": {"type": "integer", "minimum": 1, "maximum": 20},
        "face": {"type": "integer", "enum": [1, 2, 3, 4, 5, 6]},
        "notes": {"type": "string"},
    },
    "required": ["action"],
    "additionalProperties": False,
}
TOOLS = [{"type": "function", "function": {"name": "act", "parameters": SCHEMA}}]
FORCED = {"type": "function", "function": {"name": "act"}}
JSON_SCHEMA = {"type": "json_schema", "json_schema": {"name": "act", "schema": SCHEMA}}


def test_how_llama_server_answers_each_request_shape(jinja, no_jinja):
    """What ``tests/llama_server.py``'s docstring says, pinned."""
    for choice in (FORCED, "auto", "required"):
        status, body = jinja.post(request(RAISING, tools=TOOLS, tool_choice=choice))
        message = body["choices"][0]["message"]
        assert status == 200 and not message.get("tool_calls"), body
        assert json.loads(message["content"]) == json.loads(CHALLENGE)
    for server in (jinja, no_jinja):
        status, body = server.post(request(OPENING, response_format=JSON_SCHEMA))
        assert status == 200, body
        assert json.loads(body["choices"][0]["message"]["content"]) == json.loads("".join(OPEN))
        for cap in ("max_tokens", "max_completion_tokens"):
            status, body = server.post(request(OPENING, **{cap: 1}))
            assert status == 200 and body["choices"][0]["finish_reason"] == "length"
            assert body["choices"][0]["message"]["content"] == OPEN[0]
    for choice in (FORCED, "auto"):
        status, body = no_jinja.post(request(RAISING, tools=TOOLS, tool_choice=choice))
        assert status == 500
        assert body["error"]["message"] == "tools param requires --jinja flag"
    assert jinja.alive() and no_jinja.alive()
