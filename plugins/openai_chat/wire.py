"""The chat-completions request for one decision, and how its reply becomes the engine's input.

The prompt's text is the model-seat core's (the rules in brief and the policy as
the system message, the table record and the turn as one user message); this
module adds only the chat-completions shapes around it.

How the action comes back depends on what the server takes (:data:`SHAPES`, in
the order a seat tries them, stepping down once per episode on a refusal):

1. ``forced``: one function tool, ``act`` (``strict`` on OpenAI's own API),
   forced by a named ``tool_choice``;
2. ``auto``: the same tool, the choice left to the model (a server that refuses
   a forced tool);
3. ``json_schema``: no tools; a ``response_format`` holding the tool's schema
   (a server with no tool calling);
4. ``text``: no tools and no format; the model writes its action as JSON in its
   text.

Every shape's reply goes through one reader: the ``act`` call's arguments (a
JSON object; arguments that are not JSON are rule 11's unparseable reply), else
the message's text. A ``length`` stop with no complete call is rule 11's
unparseable reply, and the reason says so.

The reply's reasoning (``reasoning``, or ``reasoning_content`` as vLLM called it
before and DeepSeek still does) goes to the log as the decision's ``thinking``,
in the shape Claude's takes; nothing here ever puts it in a request.
"""

from __future__ import annotations

import json
from typing import Any

from arena.events import Thought
from arena.rules import TableRules
from arena.view import SeatView
from arena_plugins.model_seat.action import (
    TOOL_DESCRIPTION,
    TOOL_NAME,
    act_schema,
    action_text,
    read_action,
    thought,
)
from arena_plugins.model_seat.prompt import policy_text, record, rules_in_brief, turn
from arena_plugins.model_seat.usage import usage
from arena_policies import Policy

FORCED, AUTO, JSON_SCHEMA, TEXT = "forced", "auto", "json_schema", "text"
SHAPES = (FORCED, AUTO, JSON_SCHEMA, TEXT)
"""The request shapes, the one a seat starts with first."""
REASONING_FIELDS = ("reasoning", "reasoning_content")
CUT_OFF = "cut off at the token limit (finish_reason length) before an action"
"""The text a ``length`` stop with no action is read as: rule 11 rejects it, naming it."""


def build_request(
    view: SeatView,
    rules: TableRules,
    policy: Policy,
    model: str,
    shape: str,
    strict: bool,
    reasoning_effort: str | None = None,
    max_tokens: int | None = None,
) -> dict[str, Any]:
    """Keyword arguments for ``chat.completions.create``: the whole request for one decision."""
    schema = act_schema(rules, view.talk_enabled)
    user = "".join(record(view, rules.mode)) + turn(view, rules.mode)
    if shape in (JSON_SCHEMA, TEXT):
        user += json_instruction(schema)
    request: dict[str, Any] = {
        "model": model,
        "messages": [
            {"role": "system", "content": system_text(view, rules, policy)},
            {"role": "user", "content": user},
        ],
    }
    if shape in (FORCED, AUTO):
        request["tools"] = [function_tool(schema, strict)]
        request["tool_choice"] = (
            {"type": "function", "function": {"name": TOOL_NAME}} if shape == FORCED else "auto"
        )
        if strict:  # OpenAI holds a strict call to its schema only one call at a time
            request["parallel_tool_calls"] = False
    elif shape == JSON_SCHEMA:
        request["response_format"] = {
            "type": "json_schema",
            "json_schema": {
                "name": TOOL_NAME,
                "schema": strict_schema(schema) if strict else schema,
                "strict": strict,
            },
        }
    if reasoning_effort is not None:
        request["reasoning_effort"] = reasoning_effort
    if max_tokens is not None:
        request["max_completion_tokens"] = max_tokens
    return request


def system_text(view: SeatView, rules: TableRules, policy: Policy) -> str:
    """The rules in brief, then the policy: the stable part, a prefix servers can cache."""
    return rules_in_brief(view, rules.mode) + "\n" + policy_text(policy)


def json_instruction(schema: dict[str, Any]) -> str:
    """What a request with no tool asks for instead of the ``act`` call."""
    return (
        f"\nThis server takes no tools: instead of calling `{TOOL_NAME}`, reply with only its "
        f"arguments, one JSON object matching this schema:\n{json.dumps(schema)}\n"
    )


def function_tool(schema: dict[str, Any], strict: bool) -> dict[str, Any]:
    function: dict[str, Any] = {
        "name": TOOL_NAME,
        "description": TOOL_DESCRIPTION,
        "parameters": strict_schema(schema) if strict else schema,
    }
    if strict:
        function["strict"] = True
    return {"type": "function", "function": function}


_STRICT_UNSUPPORTED = ("maxLength",)
"""Keywords OpenAI's strict schemas refuse: their bounds move into the description."""


def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` as OpenAI's strict mode takes it: every property required, an optional
    one nullable (the reader takes ``null`` as absent), unsupported bounds described."""
    required = set(schema.get("required", ()))
    properties = {}
    for name, spec in schema["properties"].items():
        spec = dict(spec)
        for keyword in _STRICT_UNSUPPORTED:
            if keyword in spec:
                bound = spec.pop(keyword)
                spec["description"] = f"{spec.get('description', '')} ({keyword}: {bound})".strip()
        if name not in required:
            spec["type"] = [spec["type"], "null"]
            if "enum" in spec:
                spec["enum"] = [*spec["enum"], None]
        properties[name] = spec
    return {**schema, "properties": properties, "required": list(properties)}


# --- the reply ---------------------------------------------------------------------------------


def read_reply(choice: Any) -> Any:
    """What the engine should parse from a completion's first choice: the ``act`` call's
    arguments, else the message's text; the :data:`CUT_OFF` text for a ``length`` stop that
    left no complete call."""
    message = choice.message
    calls = [
        call.function.arguments
        for call in message.tool_calls or ()
        if getattr(call, "function", None) is not None and call.function.name == TOOL_NAME
    ]
    read = [_arguments(text) for text in calls]
    text = action_text(message.content or "")
    if choice.finish_reason == "length" and not _whole(read, text):
        return CUT_OFF
    return read_action(read, text)


def _whole(read: list[Any], text: str) -> bool:
    """Whether a cut-off reply still holds one whole action: one call whose arguments are
    a JSON object, or (with no call) a text that is one."""
    if read:
        return len(read) == 1 and isinstance(read[0], dict)
    try:
        return isinstance(json.loads(text), dict)
    except json.JSONDecodeError:
        return False


def _arguments(text: str) -> Any:
    """A call's arguments as the mapping they encode, else as the text they are (which the
    engine rejects as unparseable JSON, with the parser's reason)."""
    try:
        return json.loads(text)
    except (TypeError, json.JSONDecodeError):
        return text


def read_thinking(message: Any) -> tuple[Thought, ...] | None:
    """The message's reasoning as one thought, ``None`` when it has none."""
    extra = message.model_extra or {}
    for field in REASONING_FIELDS:
        text = extra.get(field)
        if isinstance(text, str) and text:
            return (thought(text),)
    return None


def usage_of(completion: Any) -> dict[str, int]:
    """The token counts the server reported, in the engine's ``usage`` vocabulary: input is
    the uncached part (a server counts cached tokens inside ``prompt_tokens``); reasoning
    tokens are output tokens, and counted again as ``thinking_tokens``."""
    reported = completion.usage
    if reported is None:
        return usage(0, 0)
    prompt = reported.prompt_tokens_details
    cached = (prompt.cached_tokens or 0) if prompt else 0
    details = reported.completion_tokens_details
    return usage(
        max(reported.prompt_tokens - cached, 0),
        reported.completion_tokens,
        cache_read=cached,
        thinking=(details.reasoning_tokens or 0) if details else 0,
    )
