"""The one tool a Claude seat must call, and how its reply becomes the engine's input.

Structured output goes through tool use: the request offers a single tool,
``act``, and forces it (``tool_choice``) when the model does not think; a
thinking request may not force a tool, so it leaves the choice to the model and
the prompt asks for the call. A well-behaved reply is one ``tool_use`` block
(after any thinking) whose input is the mapping :mod:`arena.replies` reads
(``action``, ``quantity``, ``face``, ``say``, ``notes``). The schema names
nothing else: a reply cannot act for another seat or bring its own facts.
A reply without the tool call is read as text, as a fallback; text that names
no action is rule 11's unparseable reply. Legality is never judged here: the
engine does that, and rule 11 handles the rest.

The reply's thinking is read apart (:func:`read_thinking`): it goes to the log
beside the decision, and never into the action.
"""

from __future__ import annotations

from typing import Any

import anthropic

from arena.engine import NOTES_CAP
from arena.events import REDACTED, THOUGHT, Thought
from arena.rules import TableRules

TOOL_NAME = "act"


def reply_tool(rules: TableRules, talk: bool, strict: bool = False) -> dict[str, Any]:
    """The tool definition; it depends only on the table and the model, so it is the same
    all episode. ``strict`` (for a model that takes structured outputs) asks the API to
    hold the call to the schema, which the SDK's ``transform_schema`` first brings within
    what a strict schema may say: the bounds it cannot enforce move into descriptions."""
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
        "maxLength": NOTES_CAP,
        "description": "Optional private notes for your own later turns; replaces your old notes.",
    }
    schema = {
        "type": "object",
        "properties": properties,
        "required": ["action"],
        "additionalProperties": False,
    }
    tool: dict[str, Any] = {
        "name": TOOL_NAME,
        "description": "Take your action for this turn. Call it exactly once.",
        "input_schema": anthropic.transform_schema(schema) if strict else schema,
    }
    if strict:
        tool["strict"] = True
    return tool


TOOL_CHOICE = {"type": "tool", "name": TOOL_NAME, "disable_parallel_tool_use": True}
"""Forced: the model must call ``act``."""
TOOL_CHOSEN = {"type": "auto", "disable_parallel_tool_use": True}
"""The model's choice, the only one a thinking request may make."""


def read_reply(content: list[Any]) -> Any:
    """What the engine should parse: the ``act`` inputs, else the reply's text.

    Several ``act`` calls come back as a list, which no parser accepts: one reply,
    one action. A text reply is read as the JSON object it holds, if any, else as
    its last non-empty line (``bid 4 5``, ``challenge``).
    """
    calls = [
        block.input for block in content if _kind(block) == "tool_use" and block.name == TOOL_NAME
    ]
    if len(calls) == 1:
        return calls[0]
    if calls:
        return calls
    text = "".join(block.text for block in content if _kind(block) == "text")
    return _action_text(text)


def read_thinking(content: list[Any]) -> tuple[Thought, ...] | None:
    """The reply's reasoning in order, ``None`` when it has none; a redacted block is
    marked as such, its encrypted data left out."""
    thoughts = []
    for block in content:
        kind = _kind(block)
        if kind == "thinking":
            thoughts.append(Thought(THOUGHT, block.thinking))
        elif kind == "redacted_thinking":
            thoughts.append(Thought(REDACTED))
    return tuple(thoughts) or None


def _action_text(text: str) -> str:
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        return text[start : end + 1]
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else text


def _kind(block: Any) -> str | None:
    return getattr(block, "type", None)
