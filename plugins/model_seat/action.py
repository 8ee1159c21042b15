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

import json
import re
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
    one action. A text reply is read by :func:`action_text`.
    """
    if len(calls) == 1:
        return calls[0]
    if calls:
        return calls
    return action_text(text)


_BLOCKS = (
    re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL),
    re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL),
)
"""Where a model writes its call in text: a Hermes ``<tool_call>`` block (Qwen, Hermes and
others, as ``transformers serve`` returns them), then a fenced ````json`` block."""


def action_text(text: str) -> Any:
    """What a text reply names as its action, in the forms real models write it:

    - a ``<tool_call>`` block or a fenced ````json`` block holding a JSON object;
    - else the JSON object the text holds, from its first ``{`` to its last ``}``;
    - else its last non-empty line (``bid 4 5``, ``challenge``).

    A JSON object that is a call of ``act`` (``{"name": "act", "arguments": {...}}``, the
    arguments an object or a JSON string) is read as its arguments. A block that is not
    JSON is passed on as text, for the engine to reject with the parser's reason."""
    for block in _BLOCKS:
        for found in block.finditer(text):
            value = _json_object(found[1])
            if value is not None:
                return _arguments_of(value)
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        whole = text[start : end + 1]
        value = _json_object(whole)
        return whole if value is None else _arguments_of(value)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else text


def _json_object(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _arguments_of(value: dict[str, Any]) -> Any:
    """A call of ``act`` written as text, as its arguments; any other object as it is."""
    if value.get("name") != TOOL_NAME or not set(value) <= {"name", "arguments", "parameters"}:
        return value
    arguments = value.get("arguments", value.get("parameters"))
    if isinstance(arguments, str):
        return _json_object(arguments) or arguments
    return arguments


def thought(text: str) -> Thought:
    """One block of reasoning as the log keeps it (the ``thinking`` key of a decision)."""
    return Thought(THOUGHT, text)
