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

The reply is read from its raw JSON, each field the seat uses checked
(:func:`read_completion`): a body that is not a chat completion, or usage that
is not token counts, is a fault of the call, never the model's move.
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

import attrs

from arena.events import Thought
from arena.replies import Unusable
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
from arena_plugins.model_seat.prompt import SeatRecord, policy_text, rules_in_brief, turn
from arena_plugins.model_seat.reply_body import UnreadableReply, field
from arena_plugins.model_seat.usage import count, part_of, usage
from arena_plugins.model_seat.usage import shown as shown_usage
from arena_policies import Policy

FORCED, AUTO, JSON_SCHEMA, TEXT = "forced", "auto", "json_schema", "text"
SHAPES = (FORCED, AUTO, JSON_SCHEMA, TEXT)
"""The request shapes, the one a seat starts with first."""
REASONING_FIELDS = ("reasoning", "reasoning_content")
CUT_OFF = "cut off at the token limit before an action"
"""The text a ``length`` stop with no action is read as: rule 11 rejects it, naming it."""


def build_request(
    view: SeatView,
    rules: TableRules,
    policy: Policy,
    model: str,
    shape: str,
    strict: bool,
    cap: tuple[str, int],
    reasoning_effort: str | None = None,
    kept: SeatRecord | None = None,
) -> dict[str, Any]:
    """The JSON body of a chat-completions request: the whole request for one decision.
    ``cap`` is the output cap, always sent, and the field it goes in (``max_tokens`` or
    ``max_completion_tokens``: :mod:`~arena_plugins.openai_chat.adapting`). ``kept`` is the
    seat's own record of finished deals, so a request renders only the deal in play; without
    one the whole record is rendered afresh (the same text)."""
    schema = act_schema(rules, view.talk_enabled)
    user = (kept or SeatRecord()).text(view, rules.mode) + turn(view, rules.mode)
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
    field, tokens = cap
    request[field] = tokens
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


def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` as OpenAI's strict mode takes it: every property required, an optional
    one nullable (the reader takes ``null`` as absent)."""
    required = set(schema.get("required", ()))
    properties = {}
    for name, spec in schema["properties"].items():
        spec = dict(spec)
        if name not in required:
            spec["type"] = [spec["type"], "null"]
            if "enum" in spec:
                spec["enum"] = [*spec["enum"], None]
        properties[name] = spec
    return {**schema, "properties": properties, "required": list(properties)}


# --- the reply ---------------------------------------------------------------------------------


@attrs.frozen
class Answer:
    """A chat completion's parts the seat uses, read from the raw JSON and each one checked
    (:func:`read_completion`)."""

    content: Any
    """What the engine parses (:func:`read_reply`)."""
    usage: dict[str, int]
    thinking: tuple[Thought, ...] | None
    called: bool
    """Whether the model called ``act`` (a server may ignore a forced ``tool_choice``)."""
    text: str
    """The message's own text, as a warning may quote it."""


def read_completion(body: dict[str, Any], cap: int) -> Answer:
    """A chat completion's JSON as the seat's answer; :class:`UnreadableReply` (with the
    usage, when that much was valid) for anything not in the API's shape. ``cap`` is the
    output cap the request sent: a reply that spent all of it was cut off, whatever its
    ``finish_reason`` says (llama-cpp-python's server says ``tool_calls`` for a forced call
    it cut mid-argument)."""
    used = usage_of(body)
    try:
        choices = field(body, "choices", list)
        if not choices:
            raise UnreadableReply("no choices")
        choice = choices[0]
        message = field(choice, "message", dict)
        finish = field(choice, "finish_reason", str, optional=True)
        content = _content(message)
        calls = [_call(call) for call in field(message, "tool_calls", list, optional=True) or ()]
        thinking = read_thinking(message)
    except UnreadableReply as unreadable:
        unreadable.usage = used
        raise
    called = any(name == TOOL_NAME for name, _ in calls)
    spent = used["output_tokens"] >= cap
    reply = read_reply(calls, content, finish, spent)
    return Answer(reply, used, thinking, called, content)


def _content(message: dict[str, Any]) -> str:
    """The message's text: a string, or (as some servers send it) a list of text parts."""
    content = field(message, "content", (str, list), optional=True)
    if isinstance(content, list):
        return "".join(field(part, "text", str) for part in content)
    return content or ""


def _call(call: Any) -> tuple[str, Any]:
    """One tool call's name and arguments (a JSON string, or an object as a few servers send)."""
    name = field(call, "function.name", str)
    return name, field(call, "function.arguments", (str, dict))


def read_reply(
    calls: list[tuple[str, Any]], content: str, finish: str | None, spent: bool = False
) -> Any:
    """What the engine should parse: the ``act`` call's arguments, else the message's text.

    A reply stopped at the token limit that holds no whole action (``finish_reason``
    ``length``; or a call whose arguments are not whole when the reply ``spent`` the whole
    cap) is :class:`~arena.replies.Unusable`: rule 11
    rejects it saying it was cut off, with the start of what the model wrote (the call's
    arguments so far, else its text), and the log keeps that text."""
    read = [_arguments(arguments) for name, arguments in calls if name == TOOL_NAME]
    if (finish == "length" or (spent and read)) and not _whole(read, content):
        so_far = content or next((a for a in read if isinstance(a, str)), "")
        why = f"{CUT_OFF} (finish_reason {finish}, the whole output cap spent)"
        if finish == "length":
            why = f"{CUT_OFF} (finish_reason length)"
        return Unusable(f"{why}; the reply so far: {so_far[:SO_FAR]!r}" if so_far else why, so_far)
    return read_action(read, content)


SO_FAR = 160
"""Characters of a cut-off reply its rejection quotes (the log keeps 4,000)."""


def _whole(read: list[Any], content: str) -> bool:
    """Whether a cut-off reply still holds one whole action: one call whose arguments are
    a JSON object, or (with no call) a text that holds one."""
    if read:
        return len(read) == 1 and isinstance(read[0], dict)
    return isinstance(action_text(content), dict)


def _arguments(arguments: Any) -> Any:
    """A call's arguments as the mapping they encode, else as the text they are (which the
    engine rejects as unparseable JSON, with the parser's reason)."""
    if isinstance(arguments, dict):
        return arguments
    try:
        return json.loads(arguments)
    except (json.JSONDecodeError, RecursionError):
        return arguments


def read_thinking(message: dict[str, Any]) -> tuple[Thought, ...] | None:
    """The message's reasoning as one thought, ``None`` when it has none."""
    for name in REASONING_FIELDS:
        text = message.get(name)
        if isinstance(text, str) and text:
            return (thought(text),)
    return None


def usage_of(body: dict[str, Any]) -> dict[str, int]:
    """The token counts the server reported, in the engine's ``usage`` vocabulary, checked
    (:mod:`arena_plugins.model_seat.usage`): input is the uncached part (a server counts
    cached tokens inside ``prompt_tokens``); reasoning tokens are output tokens, and
    counted again as ``thinking_tokens``. No usage at all counts zero."""
    reported = body.get("usage")
    if reported is None:
        return usage(0, 0)
    if not isinstance(reported, dict):
        raise UnreadableReply(f"usage is not an object: {shown_usage(reported)}")
    prompt = count(reported, "prompt_tokens", reported)
    output = count(reported, "completion_tokens", reported)
    cached = count(reported.get("prompt_tokens_details") or {}, "cached_tokens", reported)
    reasoning = count(reported.get("completion_tokens_details") or {}, "reasoning_tokens", reported)
    return usage(
        prompt - part_of(cached, prompt, "cached_tokens", "prompt_tokens", reported),
        output,
        cache_read=cached,
        thinking=part_of(reasoning, output, "reasoning_tokens", "completion_tokens", reported),
    )
