"""An ``openai:`` seat copes with what real servers do (:mod:`arena_plugins.openai_chat.adapting`):
a 5xx refusing tools, a forced ``tool_choice`` silently ignored, a shape that keeps failing, a
model that never stops; and reads the replies real models write in text.

The servers here are :mod:`hostile_server` answers scripted after what each real server
sends (llama.cpp's ``llama-server`` without ``--jinja``, ``transformers serve`` with a Hermes
model); ``tests/test_real_server.py`` plays against a real llama.cpp server.
"""

from __future__ import annotations

import json
import time

import pytest
from hostile_server import HostileServer, Seen, as_json, completion, raw
from model_seat_cli import arena, play, records

from arena_plugins.model_seat.action import action_text

pytestmark = pytest.mark.slow

OPEN = {"action": "bid", "quantity": 1, "face": 6}
CALL = {"action": "challenge"}


def _move(seen: Seen) -> dict:
    """The legal move for the request: open 1x6 with no standing bid, else challenge."""
    prompt = json.dumps(json.loads(seen.body)["messages"])
    return OPEN if "No standing bid: you open." in prompt else CALL


# --- the text real models write ------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        # transformers serve with a Hermes template: the call as plain content
        '<tool_call>\n{"name": "act", "arguments": {"action": "challenge"}}\n</tool_call>',
        # the same with the arguments as a JSON string
        '<tool_call>{"name": "act", "arguments": "{\\"action\\": \\"challenge\\"}"}</tool_call>',
        # a fenced block after prose, with braces in the prose
        'I count {two} sixes.\n```json\n{"action": "challenge"}\n```',
        # a call object in the text with no block around it
        'Calling {"name": "act", "arguments": {"action": "challenge"}}',
        # the bare arguments
        '{"action": "challenge"}',
    ],
)
def test_the_action_is_read_from_the_forms_real_models_write(text):
    assert action_text(text) == {"action": "challenge"}


def test_a_call_of_another_tool_in_text_is_not_taken_for_act():
    # {"name": "search", ...} is no act call: passed on whole, so rule 11 names its fields
    assert action_text('{"name": "search", "arguments": {"q": "x"}}') == {
        "name": "search",
        "arguments": {"q": "x"},
    }


def test_text_that_holds_no_json_object_is_its_last_line():
    assert action_text("Let me think.\nbid 3 4") == "bid 3 4"


# --- servers that refuse, or ignore, what they are asked --------------------------------------


def _no_jinja(handler, seen: Seen) -> None:
    """llama-server without --jinja: any tools request is a 500 in its words; a json_schema
    (grammar-constrained) or plain request gets the move as JSON text."""
    body = json.loads(seen.body)
    if "tools" in body:
        error = {
            "code": 500,
            "message": "tools param requires --jinja flag",
            "type": "server_error",
        }
        as_json({"error": error}, status=500)(handler, seen)
    else:
        as_json(completion(content=json.dumps(_move(seen))))(handler, seen)


def _played_cleanly(answer, log):
    """Play the seat against ``answer``: its result line, and each request's body. It must
    have played every move itself: no fault, no rejection, no fallback."""
    with HostileServer(answer) as server:
        done = play(f"openai:honest?model=m&base_url={server.url}/v1", log=log)
        sent = [json.loads(seen.body) for seen in server.seen]
    assert done.returncode == 0, done.stderr
    seat = json.loads(done.stdout)["seats"][0]
    assert (seat["faults"], seat["rejected"], seat["fallbacks"]) == (0, 0, 0)
    return done, seat, sent


def test_a_5xx_refusing_tools_moves_the_seat_within_its_first_decision(tmp_path):
    log = tmp_path / "ep.jsonl"
    done, seat, sent = _played_cleanly(_no_jinja, log)
    # forced, then auto (both refused with one request each, never retried), then json_schema
    assert ["tools" in body for body in sent[:3]] == [True, True, False]
    assert all("response_format" in body for body in sent[2:])
    assert done.stderr.count("openai request adapted") == 2
    assert "tools param requires --jinja flag" in done.stderr
    # every answered call was a json_schema one, one per decision, and the log says so
    assert seat["shapes"] == {"json_schema": seat["decisions"]}
    shown = arena("show", str(log))
    assert f"  seat 0 asked in shapes: json_schema {seat['decisions']}" in shown.stdout


def _ignores_tool_choice(handler, seen: Seen) -> None:
    """transformers serve with a Hermes model: tool_choice dropped, the call written as
    content; a json_schema request gets plain JSON."""
    body = json.loads(seen.body)
    move = _move(seen)
    if "tools" in body:
        text = "<tool_call>\n" + json.dumps({"name": "act", "arguments": move}) + "\n</tool_call>"
        as_json(completion(content=text))(handler, seen)
    else:
        as_json(completion(content=json.dumps(move)))(handler, seen)


def test_a_forced_choice_answered_with_no_call_moves_the_seat_to_json_schema(tmp_path):
    log = tmp_path / "ep.jsonl"
    done, seat, sent = _played_cleanly(_ignores_tool_choice, log)
    assert sent[0]["tool_choice"] == {"type": "function", "function": {"name": "act"}}
    assert all("tools" not in body and "response_format" in body for body in sent[1:])
    assert done.stderr.count("openai request adapted") == 1
    assert "a forced tool_choice was answered with no tool call" in done.stderr
    assert seat["shapes"] == {"forced": 1, "json_schema": seat["decisions"] - 1}
    # the first decision's own reply was read from its <tool_call> block, not rejected
    bids = [r for r in records(log) if r["type"] in ("bid", "challenge") and r["slot"] == 0]
    assert bids and not bids[0]["fallback"]


def test_a_shape_whose_replies_keep_naming_no_action_is_left_after_three(tmp_path):
    """A server that answers a forced tool with a call whose arguments are prose: three
    replies in a row that no parser reads, and the seat takes the next shape."""
    answer = as_json(completion("I would rather not say"))
    with HostileServer(answer) as server:
        done = play(f"openai:honest?model=m&base_url={server.url}/v1")
        shapes = [
            "forced" if isinstance(body.get("tool_choice"), dict) else body.get("tool_choice")
            for body in (json.loads(seen.body) for seen in server.seen)
        ]
    assert done.returncode == 0, done.stderr
    assert shapes[:3] == ["forced"] * 3 and shapes[3] == "auto"


# --- a model that never stops ------------------------------------------------------------------


def _never_stops(handler, seen: Seen) -> None:
    time.sleep(30)  # a model generating on and on: no byte before the deadline
    raw(200, b"{}")(handler, seen)


def test_a_model_that_never_stops_costs_a_decision_its_deadline_once(tmp_path):
    log = tmp_path / "ep.jsonl"
    with HostileServer(_never_stops) as server:
        started = time.monotonic()
        done = play(f"openai:honest?model=m&base_url={server.url}/v1&deadline=1", log=log)
        took = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    lines = records(log)
    rejected = [r["reason"] for r in lines if r["type"] == "rejected"]
    assert rejected and set(rejected) == {"no reply within the decision's 1 s deadline"}
    assert [r for r in lines if r["type"] == "fault"] == []
    decisions = [r for r in lines if r["type"] in ("bid", "challenge") and r["slot"] == 0]
    assert decisions and all(r["fallback"] for r in decisions if not r.get("forced"))
    # rule 11's second ask shares the first's deadline: about 1 s per decision, not 2
    assert took < 1.5 * len(decisions) + 8


def test_league_show_counts_each_entrants_calls_per_shape(tmp_path):
    db = tmp_path / "l.sqlite"
    with HostileServer(_no_jinja) as server:
        seat = f"openai:honest?model=m&base_url={server.url}/v1"
        run = arena(
            "league", "run", "--pool", seat, "--pool", "bayes", "--tables", "2", "--deals", "2",
            "--db", str(db),
        )  # fmt: skip
        assert run.returncode == 0, run.stderr
        answered = sum("response_format" in json.loads(seen.body) for seen in server.seen)
    report = json.loads(arena("league", "show", str(db), "--json").stdout)
    assert report["requestShapes"] == {seat: {"json_schema": answered}}
    shown = arena("league", "show", str(db)).stdout
    assert f"request shapes of {seat}: json_schema {answered}" in " ".join(shown.split())
