"""``openai:`` seats against a real llama.cpp server (issue 37): llama-cpp-python's own server
(``tests/llama_server.py``) serving a tiny model the tests write (``tests/tiny_gguf.py``),
all on 127.0.0.1, nothing downloaded.

Whole episodes through ``arena play``, checked by ``arena check``; the request shapes as the
server really answers them; the ``act`` schema compiled by the server's own grammar
builder; the model file's bytes; and every socket address the server and the arena name.

Where llama-cpp-python (with its ``[server]`` extra) or ``gguf`` is not installed, the
module is skipped with one line saying how to install them; with
``ARENA_REALSERVER_REQUIRED=1`` (``.ci/run`` sets it) that is a failure instead. The server
may run under another interpreter, ``ARENA_LLAMA_SERVER_PYTHON`` (``tox -e min`` does).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from llama_server import (
    MODEL,
    llama_server,
    missing,
    needed,
    quiet_env,
    socket_audit,
    sockets_named,
)
from tiny_gguf import CHALLENGE, OPEN, write_babbling_model, write_tiny_model

from arena.rules import TableRules
from arena_plugins.dice import DICE
from arena_plugins.model_seat.action import act_schema as seat_schema
from arena_plugins.poker import POKER

needed(missing(), "the real-server tests")

pytestmark = [pytest.mark.realserver, pytest.mark.slow]

REPO = Path(__file__).resolve().parent.parent
LOOPBACK = {"127.0.0.1"}
MODES = {"dice": DICE, "poker": POKER}


@pytest.fixture(scope="module")
def audit(tmp_path_factory):
    """The socket audit every process of this module's runs is started with."""
    return socket_audit(tmp_path_factory.mktemp("sockets"))


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    return write_tiny_model(tmp_path_factory.mktemp("model") / "tiny.gguf")


@pytest.fixture(scope="module")
def server(model, tmp_path_factory, audit):
    env, _ = audit
    with llama_server(model, tmp_path_factory.mktemp("server"), env=env) as running:
        yield running


def arena(*args: str, env: dict[str, str] | None = None, timeout: float = 600):
    """The arena's CLI as a user runs it, in its own process."""
    return subprocess.run(
        [sys.executable, "-m", "arena.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=quiet_env(env),
        cwd=REPO,
    )


def play(server, log: Path, seats: list[str], deals: int, seed: int, env=None):
    """``arena play`` with ``seats`` and a log; the results (``--json``) and the log's lines."""
    seat_args = [arg for seat in seats for arg in ("--seat", seat)]
    started = time.monotonic()
    done = arena(
        "play", "--deals", str(deals), "--seed", str(seed), "--log", str(log), "--json",
        *seat_args, env=env,
    )  # fmt: skip
    elapsed = time.monotonic() - started
    assert done.returncode == 0, f"{done.stderr}\n{server.why()}"
    records = [json.loads(line) for line in log.read_text().splitlines()]
    return json.loads(done.stdout), records, elapsed, done.stderr


def decisions(records):
    return [r for r in records if r["type"] in ("bid", "challenge") and not r.get("forced")]


def the_models_move(record, opener: bool) -> bool:
    """Whether a decision is the tiny model's own: the lowest bid when opening, else a
    challenge (``tests/tiny_gguf.py``)."""
    if opener:
        return (record["type"], record["quantity"], record["face"]) == ("bid", 1, 1)
    return record["type"] == "challenge"


# --- the model file -----------------------------------------------------------------------


def test_the_model_file_is_the_same_bytes_on_every_write(tmp_path, model):
    first = write_tiny_model(tmp_path / "one.gguf").read_bytes()
    second = write_tiny_model(tmp_path / "two.gguf").read_bytes()
    assert first == second == model.read_bytes()
    assert first[:4] == b"GGUF" and len(first) < 1_000_000


# --- whole episodes -----------------------------------------------------------------------


def test_four_openai_seats_play_whole_episodes_on_the_real_server(server, tmp_path):
    """Issue 37's first 'done when': the server stays up, 0 faults, each seat plays its own
    moves, in the forced-tool shape (llama-cpp-python honours a named ``tool_choice``); the
    log passes ``arena check``; the same seed gives the same moves."""
    seats = [server.seat(policy) for policy in ("honest", "bluffer", "tracker", "honest")]
    results, records, elapsed, stderr = play(server, tmp_path / "a.jsonl", seats, 4, 11)
    assert server.alive(), server.why()
    assert results["status"] == "complete" and results["dealsPlayed"] == 4
    assert not [r for r in records if r["type"] == "fault"], stderr
    made = decisions(records)
    assert made and all(r["fallback"] is False for r in made)
    for seat in results["seats"]:
        assert (seat["faults"], seat["fallbacks"], seat["rejected"]) == (0, 0, 0)
        assert seat["standIn"] is None
        if seat["decisions"]:  # asked: every call in the forced-tool shape
            assert seat["shapes"] == {"forced": seat["decisions"]}
            assert seat["usage"]["calls"] == seat["decisions"]
    # Each seat's decisions are its own model call's: one usage line per decision, by the
    # same slot, in the same deal, and the move is what the model answers to that seat's
    # own prompt (the opener's lowest bid, or a challenge).
    usage = [(r["deal"], r["slot"]) for r in records if r["type"] == "usage"]
    assert usage == [(r["deal"], r["slot"]) for r in made]
    assert {r["shape"] for r in records if r["type"] == "usage"} == {"forced"}
    for deal in range(4):
        in_deal = [r for r in made if r["deal"] == deal]
        assert the_models_move(in_deal[0], opener=True), in_deal
        assert all(the_models_move(r, opener=False) for r in in_deal[1:]), in_deal
    assert {r["slot"] for r in made} == {0, 1, 2, 3}
    checked = arena("check", str(tmp_path / "a.jsonl"))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    # The same seed: the same moves, call for call.
    _, again, _, _ = play(server, tmp_path / "b.jsonl", seats, 4, 11)
    assert [(r["type"], r["slot"], r.get("quantity")) for r in decisions(again)] == [
        (r["type"], r["slot"], r.get("quantity")) for r in made
    ]
    print(f"{len(made)} decisions in {elapsed:.1f} s, the CLI's start-up included")


def test_a_seat_beside_scripted_seats_plays_every_turn_it_is_asked(server, tmp_path):
    """A longer table: one model seat among bayes seats, over more deals (its prompt grows
    with the record); every one of its turns is its own, none is a fault."""
    seats = [server.seat("tracker"), "bayes", "bayes", "bayes"]
    results, records, _, stderr = play(server, tmp_path / "c.jsonl", seats, 8, 5)
    assert server.alive(), server.why()
    own = [r for r in decisions(records) if r["slot"] == 0]
    assert own and all(r["fallback"] is False for r in own), stderr
    assert results["seats"][0]["faults"] == 0
    assert not [r for r in records if r["type"] == "fault"]


def test_a_model_that_never_stops_costs_a_decision_at_most_its_deadline(tmp_path):
    """Issue 37: a model that does not stop (its ``act`` notes go on to the server's cap,
    which takes this server about 25 s at the seat's default 8,192 tokens) is rule 11's
    failure naming the seat's ``deadline=``, once per decision, never a fault. The server
    goes on generating for a request the seat gave up on, so the next ask waits behind it
    and meets the same deadline."""
    model = write_babbling_model(tmp_path / "babbling.gguf")
    with llama_server(model, tmp_path) as server:
        seats = [server.seat("honest", deadline=3), "bayes", "bayes", "bayes"]
        results, records, elapsed, stderr = play(server, tmp_path / "a.jsonl", seats, 2, 7)
        assert server.alive(), server.why()
    asked = results["seats"][0]["decisions"]
    assert asked >= 1 and results["seats"][0]["faults"] == 0
    assert not [r for r in records if r["type"] == "fault"], stderr
    rejected = [r for r in records if r["type"] == "rejected"]
    assert rejected and {r["slot"] for r in rejected} == {0}
    assert {r["reason"] for r in rejected} == {"no reply within the decision's 3 s deadline"}
    assert all(r["fallback"] is True for r in decisions(records) if r["slot"] == 0)
    # Each decision cost its deadline at most (rule 11's second ask shares the first's),
    # with the CLI's start-up and the scripted seats on top.
    assert elapsed < 3 * asked + 20, elapsed


def test_the_output_cap_reaches_the_server_in_the_field_it_honours(tmp_path):
    """The seat's ``max_tokens=`` goes to llama-cpp-python as ``max_tokens`` (it ignores
    ``max_completion_tokens``): a model that never stops writes exactly the cap, each call,
    and the seat's turn is rule 11's, never a fault. The server says ``tool_calls`` of a
    forced call it cut mid-argument; the seat sees the cut by the cap spent, and its
    rejection says so, quoting the call's arguments so far."""
    model = write_babbling_model(tmp_path / "babbling.gguf")
    with llama_server(model, tmp_path) as server:
        seats = [server.seat("honest", max_tokens=40), "bayes", "bayes", "bayes"]
        _, records, _, stderr = play(server, tmp_path / "a.jsonl", seats, 2, 7)
        assert server.alive(), server.why()
    calls = [r for r in records if r["type"] == "usage" and r["slot"] == 0]
    assert calls and {r["outputTokens"] for r in calls} == {40}
    assert not [r for r in records if r["type"] == "fault"], stderr
    rejected = [r for r in records if r["type"] == "rejected"]
    assert rejected and all('"notes": "aaaa' in r["reply"] for r in rejected)
    for rejection in rejected:
        reason = rejection["reason"]
        assert reason.startswith("cut off at the token limit before an action"), reason
        assert '"notes": "aaaa' in reason  # the model's own text, bounded
    # The forced call's cut (before the seat steps down to a shape the server ends at
    # ``length``): seen by the cap spent, though the server said ``tool_calls``.
    spent = "(finish_reason tool_calls, the whole output cap spent)"
    assert any(spent in r["reason"] for r in rejected)
    assert all(r["fallback"] is True for r in decisions(records) if r["slot"] == 0)


# --- what the server does with each request shape -----------------------------------------


def act_request(prompt: str, **shape) -> dict:
    """A chat completions body in the seat's form, with ``shape``'s fields."""
    messages = [
        {"role": "system", "content": "You play Liar's Dice."},
        {"role": "user", "content": prompt},
    ]
    return {"model": MODEL, "messages": messages, **shape}


OPENING = (
    "# Your turn\nNo standing bid: you open.\n"
    "Legal now: you must bid; lowest bid quantity 1, face 1.\n"
)
RAISING = "# Your turn\nStanding bid: quantity 1, face 1 by s0.\nLegal now: challenge or bid.\n"


def act_schema(mode: str = "dice", talk: bool = False) -> dict:
    """The ``act`` schema the seat sends at a 4-seat table of ``mode``."""
    return seat_schema(TableRules(mode=MODES[mode], seats=4), talk)


def tools(schema) -> dict:
    return {
        "tools": [{"type": "function", "function": {"name": "act", "parameters": schema}}],
        "tool_choice": {"type": "function", "function": {"name": "act"}},
    }


@pytest.mark.parametrize("mode", ["dice", "poker"])
@pytest.mark.parametrize("talk", [False, True])
def test_the_act_schema_compiles_in_the_servers_grammar_builder(server, mode, talk):
    """Issue 37, item 2: the schema the seat sends, forced, on the real server: a tool
    call of one legal action, and the server still up (``maxLength`` 2000 and more once
    killed it)."""
    for prompt, expected in ((OPENING, "".join(OPEN)), (RAISING, CHALLENGE)):
        status, body = server.post(act_request(prompt, **tools(act_schema(mode=mode, talk=talk))))
        assert status == 200, f"{body}\n{server.why()}"
        (call,) = body["choices"][0]["message"]["tool_calls"]
        assert call["function"]["name"] == "act"
        assert json.loads(call["function"]["arguments"]) == json.loads(expected)
        assert body["choices"][0]["finish_reason"] == "tool_calls"
    assert server.alive(), server.why()


def test_how_the_real_server_answers_each_request_shape(server):
    """What llama-cpp-python does with each shape the seat may send, pinned here because the
    seat's stepping down depends on it (``tests/llama_server.py``'s docstring)."""
    schema = act_schema()
    # forced: a tool call (above). auto, and "required": text, no call.
    for choice in ("auto", "required"):
        status, body = server.post(act_request(RAISING, **{**tools(schema), "tool_choice": choice}))
        message = body["choices"][0]["message"]
        assert status == 200 and not message.get("tool_calls")
        assert json.loads(message["content"]) == json.loads(CHALLENGE)
    # json_schema: a 500 in the request validator's words, which name the field.
    status, body = server.post(
        act_request(
            RAISING,
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "act", "schema": schema},
            },
        )
    )
    assert status == 500
    assert "response_format" in body["error"]["message"]
    assert "'text' or 'json_object'" in body["error"]["message"]
    assert server.alive(), server.why()
    # No tools, no format: the model's text.
    status, body = server.post(act_request(OPENING))
    assert status == 200
    assert json.loads(body["choices"][0]["message"]["content"]) == json.loads("".join(OPEN))
    # max_tokens caps the reply (OPEN is two tokens); max_completion_tokens is ignored.
    status, body = server.post(act_request(OPENING, max_tokens=1))
    assert status == 200 and body["choices"][0]["finish_reason"] == "length"
    assert body["choices"][0]["message"]["content"] == OPEN[0]
    status, body = server.post(act_request(OPENING, max_completion_tokens=1))
    assert status == 200 and body["choices"][0]["finish_reason"] == "stop"
    assert body["usage"]["completion_tokens"] == 2


# --- nothing leaves the machine -----------------------------------------------------------


def test_no_process_names_any_address_but_loopback(server, tmp_path, audit):
    """Every socket address the server and an ``arena play`` process connect to, bind, send
    to or look up (a Python audit hook in each) is 127.0.0.1. (The server's C++ side opens
    no sockets of its own: uvicorn serves it.)"""
    env, log = audit
    seats = [server.seat(), server.seat(), "bayes", "bayes"]
    play(server, tmp_path / "d.jsonl", seats, 2, 3, env=env)
    named = sockets_named(log)
    pids = {pid for pid, _, _ in named}
    assert str(server.process.pid) in pids and len(pids) >= 2, named
    assert [event for event in named if event[2] not in LOOPBACK] == []
    assert Counter(event for _, event, _ in named)["socket.connect"] >= 1
