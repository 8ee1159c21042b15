"""The one action a model seat replies with: the ``act`` schema, and the reader that turns any
wire's reply into what the engine parses.

A wire offers ``act`` as its tool (Claude's ``input_schema``, a chat completions
function's ``parameters``) or, where a server has no tool calling, as the JSON
schema of the reply's text. Its fields are the mapping :mod:`arena.replies` reads
(``action``, ``quantity``, ``face``, ``say``, ``notes``) and nothing else: a reply
cannot act for another seat or bring its own facts. Legality is never judged
here: the engine does that, and rule 11 handles the rest.

The schema says no ``maxLength``: llama-cpp-python's grammar builder crashes the
server on ``maxLength: 4000`` (2,000 and more; 1,000 works), and OpenAI's strict mode
refuses it. The notes' cap is the engine's (it keeps the first ``NOTES_CAP``
characters), and the description says it in words.
"""

from __future__ import annotations

from typing import Any

from arena.engine import NOTES_CAP
from arena.events import THOUGHT, Thought
from arena.rules import TableRules

TOOL_NAME = "act"
TOOL_DESCRIPTION = "Take your action for this turn. Call it exactly once."


def act_schema(rules: TableRules, talk: bool) -> dict[str, Any]:
    """The ``act`` arguments' JSON schema; it depends only on the table, so it is the same
    all episode."""
    properties: dict[str, Any] = {
        "action": {
            "type": "string",
            "enum": ["bid", "challenge"],
            "description": "bid: raise the standing bid; challenge: call it (not when opening).",
        },
        "quantity": {
            "type": "integer",
            "minimum": 1,
            "maximum": rules.max_quantity,
            "description": "For a bid: how many of `face` you claim are showing across ALL hands.",
        },
        "face": {
            "type": "integer",
            "enum": list(rules.mode.symbols),
            "description": "For a bid: the face you name.",
        },
    }
    if talk:
        properties["say"] = {
            "type": "string",
            "description": "Optional table talk, published to every seat; it binds nobody.",
        }
    properties["notes"] = {
        "type": "string",
        "description": "Optional private notes for your own later turns; replaces your old notes. "
        f"At most {NOTES_CAP} characters are kept.",
    }
    return {
        "type": "object",
        "properties": properties,
        "required": ["action"],
        "additionalProperties": False,
    }


def read_action(calls: list[Any], text: str) -> Any:
    """What the engine should parse: the one ``act`` call's arguments, else the reply's text.

    Several ``act`` calls come back as a list, which no parser accepts: one reply,
    one action. A text reply is read as the JSON object it holds, if any, else as
    its last non-empty line (``bid 4 5``, ``challenge``).
    """
    if len(calls) == 1:
        return calls[0]
    if calls:
        return calls
    return action_text(text)


def action_text(text: str) -> str:
    """The part of a text reply that names the action: the JSON object it holds (a fenced
    block after prose included), else its last non-empty line."""
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        return text[start : end + 1]
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else text


def thought(text: str) -> Thought:
    """One block of reasoning as the log keeps it (the ``thinking`` key of a decision)."""
    return Thought(THOUGHT, text)
