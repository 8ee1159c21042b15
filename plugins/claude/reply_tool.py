"""The one tool a Claude seat must call, and how its reply becomes the engine's input.

The ``act`` schema and the reader are the model-seat core's
(:mod:`arena_plugins.model_seat.action`); this module adds Claude's tool and
content-block shapes. Structured output goes through tool use: the request
offers a single tool, ``act``, and forces it (``tool_choice``) when the model does not think; a
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

import functools
from typing import Any

import anthropic

from arena.events import REDACTED, Thought
from arena.rules import TableRules
from arena_plugins.model_seat.action import (
    TOOL_DESCRIPTION,
    TOOL_NAME,
    act_schema,
    read_action,
    thought,
)


@functools.lru_cache(maxsize=64)
def reply_tool(rules: TableRules, talk: bool, strict: bool = False) -> dict[str, Any]:
    """The ``act`` tool (:func:`~arena_plugins.model_seat.action.act_schema`) as a Messages
    API tool; it depends only on the table and the model, so it is the same all episode.
    ``strict`` (for a model that takes structured outputs) asks the API to hold the call to
    the schema, which the SDK's ``transform_schema`` first brings within what a strict schema
    may say: the bounds it cannot enforce move into descriptions.

    Made once per table shape and shared by every request that uses it, so it is never
    changed in place: ``transform_schema`` alone cost about 14 us a request."""
    schema = act_schema(rules, talk)
    tool: dict[str, Any] = {
        "name": TOOL_NAME,
        "description": TOOL_DESCRIPTION,
        "input_schema": anthropic.transform_schema(schema) if strict else schema,
    }
    if strict:
        tool["strict"] = True
    return tool


TOOL_CHOICE = {"type": "tool", "name": TOOL_NAME, "disable_parallel_tool_use": True}
"""Forced: the model must call ``act``."""
TOOL_CHOSEN = {"type": "auto", "disable_parallel_tool_use": True}
"""The model's choice, the only one a thinking request may make."""


def read_reply(content: list[dict[str, Any]]) -> Any:
    """What the engine should parse (:func:`~arena_plugins.model_seat.action.read_action`):
    the ``act`` inputs, else the reply's text. ``content`` is the Message's raw blocks, their
    fields checked (:func:`~arena_plugins.claude.client.read_message`)."""
    calls = [
        block["input"]
        for block in content
        if block["type"] == "tool_use" and block["name"] == TOOL_NAME
    ]
    text = "".join(block["text"] for block in content if block["type"] == "text")
    return read_action(calls, text)


def read_thinking(content: list[dict[str, Any]]) -> tuple[Thought, ...] | None:
    """The reply's reasoning in order, ``None`` when it has none; a redacted block is
    marked as such, its encrypted data left out."""
    thoughts = []
    for block in content:
        if block["type"] == "thinking":
            thoughts.append(thought(block["thinking"]))
        elif block["type"] == "redacted_thinking":
            thoughts.append(Thought(REDACTED))
    return tuple(thoughts) or None
