"""The one tool a Claude seat must call, and how its reply becomes the engine's input.

Structured output goes through tool use: the request offers a single tool,
``act``, and forces it (``tool_choice``), so a well-behaved reply is one
``tool_use`` block whose input is the mapping :mod:`arena.replies` reads
(``action``, ``quantity``, ``face``, ``say``, ``notes``). The schema names
nothing else: a reply cannot act for another seat or bring its own facts.
A reply without the tool call is read as text, as a fallback. Legality is
never judged here: the engine does that, and rule 11 handles the rest.
"""

from __future__ import annotations

from typing import Any

from arena.engine import NOTES_CAP
from arena.rules import TableRules

TOOL_NAME = "act"


def reply_tool(rules: TableRules, talk: bool) -> dict[str, Any]:
    """The tool definition; it depends only on the table, so it is the same all episode."""
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
    return {
        "name": TOOL_NAME,
        "description": "Take your action for this turn. Call it exactly once.",
        "input_schema": {
            "type": "object",
            "properties": properties,
            "required": ["action"],
            "additionalProperties": False,
        },
    }


TOOL_CHOICE = {"type": "tool", "name": TOOL_NAME, "disable_parallel_tool_use": True}


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


def _action_text(text: str) -> str:
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        return text[start : end + 1]
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else text


def _kind(block: Any) -> str | None:
    return getattr(block, "type", None)
