"""A real HTTP server on 127.0.0.1 that speaks the Messages API wire format.

Tests (and ``bench/prefix_share.py``) point the official ``anthropic`` SDK at it
through ``ANTHROPIC_BASE_URL``: every request goes over a real socket, through
the SDK's own serialisation, status handling and exceptions, and nothing ever
leaves the machine. The server answers ``POST /v1/messages`` from a script, in
order, and then from an optional responder; it records every request (raw
bytes, parsed body, headers, arrival time) so tests can assert on prompts,
``cache_control`` placement and ``tool_choice``.

Script items: :func:`tool_call` / :func:`text` (a 200 message, optionally after
:func:`thought` and :func:`redacted` blocks), :class:`Fail` (an error in
Anthropic's error JSON shape, with ``retry-after`` if given) and :class:`Hang`
(no answer for a while, to trip the client's timeout).

It also answers the Models API: ``GET /v1/models/{id}`` with the model's
``ModelInfo`` exactly as the SDK's types define it (:data:`CATALOGUE`: the SDK's
model list and test-only kinds, among them a model with no thinking, a deprecated
and a retired one), ``GET /v1/models`` with the list, and a 404 for either when
built with ``models_api=False`` (a gateway that forwards only ``/v1/messages``).

Before any script item, a request is checked against the rules the real API
applies to its ``model``: those its ``ModelInfo`` states (thinking types, effort
levels, output limit, strict tool schemas), and those it does not (whether leaving
``thinking`` out thinks, effort with thinking off, a forced tool), the tests' own
reading of the API documentation, independent of the seat's. Sampling parameters
are refused, as are ``budget_tokens`` at or over ``max_tokens``, thinking with a
forced tool, and a retired model (a 404). A refusal is the API's error with its message. A
request that thinks gets thinking blocks (a signature each; empty text where
``display`` is ``omitted``) before the rest of the content, a made-up one
(:func:`made_up_thought`) when the script gave none; a request that does not think gets none.

Usage reports model prompt caching the way the API describes it: a prefix is
written at each ``cache_control`` breakpoint (5-minute or, with ``ttl: "1h"``,
1-hour), and a later request reads the longest written prefix ending at one of
its block boundaries up to :data:`LOOKBACK` blocks before a breakpoint. Tokens
are counted as bytes / 4; thinking tokens are output tokens, and reported again
in ``output_tokens_details.thinking_tokens``.
"""

from __future__ import annotations

import hashlib
import json
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

import attrs
from loopback_http import Hang as Hang  # the Claude tests import these two from here
from loopback_http import (
    LoopbackServer,
    QuietHandler,
    parse_command_line,
    run_against,
    serve_until_interrupted,
)
from model_player import THOUGHT_MARKER as THOUGHT_MARKER
from model_player import Patience, legal_move, made_up_thought

LOOKBACK = 20
"""Block boundaries before a breakpoint where the API looks for a cached prefix."""


@attrs.frozen
class Answer:
    """A 200 reply: the message's content blocks and stop reason."""

    content: tuple[dict[str, Any], ...]
    stop_reason: str


def tool_call(input: dict[str, Any], name: str = "act", thinking: tuple = ()) -> Answer:
    return Answer((*thinking, {"type": "tool_use", "name": name, "input": input}), "tool_use")


def tool_calls(*inputs: dict[str, Any]) -> Answer:
    return Answer(
        tuple({"type": "tool_use", "name": "act", "input": i} for i in inputs), "tool_use"
    )


def text(words: str, thinking: tuple = ()) -> Answer:
    return Answer((*thinking, {"type": "text", "text": words}), "end_turn")


def thought(words: str) -> dict[str, Any]:
    """A thinking block for a script; the server signs it."""
    return {"type": "thinking", "thinking": words}


def redacted(data: str = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr") -> dict:
    """A ``redacted_thinking`` block: encrypted reasoning, opaque to the client."""
    return {"type": "redacted_thinking", "data": data}


THINKING_KINDS = frozenset({"thinking", "redacted_thinking"})


@attrs.frozen
class ModelRules:
    """What the API accepts from one model: read from its ``ModelInfo`` where the server
    serves one (:data:`CATALOGUE`), else from the family table (:data:`FAMILY_RULES`)."""

    thinking: frozenset[str]
    """The ``thinking.type`` values it takes."""
    thinks_unasked: bool
    """A request without ``thinking`` thinks (adaptively) all the same."""
    max_output: int
    display: str = "summarized"
    """What ``thinking.display`` is when the request does not say."""
    efforts: frozenset[str] | None = None
    """The ``output_config.effort`` levels it takes (empty: none); ``None``: not checked."""
    structured_outputs: bool = True
    """It takes a strict tool schema (``tools[].strict``)."""
    off_above_high: bool = True
    """It takes thinking off with effort ``xhigh`` or ``max`` (Opus 5 does not: its 400)."""
    forces_tools: bool = True
    """It takes a forced ``tool_choice`` when it does not think (Sonnet 5.5 does not)."""
    retired: bool = False


EFFORT_LEVELS = ("low", "medium", "high", "xhigh", "max")
OFF_TYPES = frozenset({"disabled", "between_tools"})
"""The thinking types that turn thinking off."""
STRICT_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "enum",
        "const",
        "description",
        "title",
        "items",
        "anyOf",
        "allOf",
        "$ref",
        "$defs",
        "format",
        "minItems",
    }
)
"""The JSON Schema keywords a strict tool schema may use (the structured outputs page:
no numerical or string-length constraints); any other is the API's 400."""


@attrs.frozen
class ServedModel:
    """One model the server knows: its ``ModelInfo`` as the Models API answers it, and
    what that answer does not say but the Messages API does."""

    info: dict[str, Any]
    thinks_unasked: bool
    display: str = "summarized"
    off_above_high: bool = True
    forces_tools: bool = True

    @property
    def rules(self) -> ModelRules:
        caps = self.info["capabilities"]
        types = caps["thinking"]["types"]
        effort = caps["effort"]
        efforts = frozenset(
            level
            for level in EFFORT_LEVELS
            if effort["supported"] and (effort[level] or {}).get("supported")
        )
        return ModelRules(
            thinking=frozenset(t for t, support in types.items() if support["supported"]),
            thinks_unasked=self.thinks_unasked,
            max_output=self.info["max_tokens"],
            display=self.display,
            efforts=efforts,
            structured_outputs=caps["structured_outputs"]["supported"],
            off_above_high=self.off_above_high,
            forces_tools=self.forces_tools,
            retired=self.info["lifecycle"] == "retired",
        )


def _supported(flag: bool) -> dict[str, bool]:
    return {"supported": flag}


def model_info(
    model: str,
    thinking: tuple[str, ...],
    efforts: tuple[str, ...],
    *,
    max_tokens: int = 128_000,
    structured_outputs: bool = True,
    lifecycle: str = "active",
    retires_at: str | None = None,
) -> dict[str, Any]:
    """``GET /v1/models/{model}``'s body: a ``ModelInfo`` with every key the SDK's types
    define (``anthropic.types.ModelInfo``, ``ModelCapabilities``, ``ThinkingTypes``,
    ``EffortCapability``), and no other."""
    line = model.split("-")[1]
    return {
        "id": model,
        "type": "model",
        "display_name": " ".join(part.capitalize() for part in model.split("-")),
        "created_at": "2026-06-01T00:00:00Z",
        "lifecycle": lifecycle,
        "deprecated_at": None if lifecycle == "active" else "2026-09-01T00:00:00Z",
        "retires_at": retires_at,
        "line": line if line in ("haiku", "sonnet", "opus", "fable", "mythos") else None,
        "max_input_tokens": 1_000_000,
        "max_tokens": max_tokens,
        "capabilities": {
            "batch": _supported(True),
            "citations": _supported(True),
            "code_execution": _supported(True),
            "context_management": {
                "supported": True,
                "clear_thinking_20251015": _supported("adaptive" in thinking),
                "clear_tool_uses_20250919": _supported(True),
                "compact_20260112": _supported(True),
            },
            "effort": {"supported": bool(efforts)}
            | {level: _supported(level in efforts) for level in EFFORT_LEVELS},
            "image_input": _supported(True),
            "pdf_input": _supported(True),
            "server_tools": {
                "supported": True,
                "code_execution": _supported(True),
                "web_search": _supported(True),
            },
            "structured_outputs": _supported(structured_outputs),
            "thinking": {
                "supported": bool(set(thinking) - OFF_TYPES),
                "types": {
                    kind: _supported(kind in thinking)
                    for kind in ("adaptive", "between_tools", "disabled", "enabled")
                },
            },
        },
    }


_TOP = ("low", "medium", "high", "xhigh", "max")
_NO_XHIGH = ("low", "medium", "high", "max")


def _always_thinks(model: str, efforts: tuple[str, ...] = _TOP) -> ServedModel:
    return ServedModel(model_info(model, ("adaptive",), efforts), True, display="omitted")


CATALOGUE: dict[str, ServedModel] = {
    served.info["id"]: served
    for served in (
        *(
            _always_thinks(model)
            for model in (
                "claude-fable-5-2",
                "claude-fable-5-1",
                "claude-fable-5",
                "claude-mythos-5-2",
                "claude-mythos-5-1",
                "claude-mythos-5",
                "claude-opus-5-5",
                "claude-sonnet-5",
                "claude-opus-4-8",
                "claude-opus-4-7",
            )
        ),
        _always_thinks("claude-mythos-preview", _NO_XHIGH),
        # Opus 5 thinks unless told not to, and takes thinking off only at effort <= high.
        ServedModel(
            model_info("claude-opus-5", ("adaptive", "disabled"), _TOP),
            True,
            display="omitted",
            off_above_high=False,
        ),
        # Sonnet 5.5 turns thinking off with between_tools, and never takes a forced tool.
        ServedModel(
            model_info("claude-sonnet-5-5", ("adaptive", "between_tools"), _TOP),
            True,
            forces_tools=False,
        ),
        ServedModel(model_info("claude-haiku-5-5", ("adaptive", "disabled"), _NO_XHIGH), True),
        *(
            ServedModel(model_info(model, ("adaptive", "enabled", "disabled"), _NO_XHIGH), False)
            for model in ("claude-opus-4-6", "claude-sonnet-4-6")
        ),
        *(
            ServedModel(
                model_info(model, ("enabled", "disabled"), efforts, max_tokens=64_000), False
            )
            for model, efforts in (
                ("claude-opus-4-5", ("low", "medium", "high")),
                ("claude-opus-4-5-20251101", ("low", "medium", "high")),
                ("claude-sonnet-4-5", ()),
                ("claude-haiku-4-5", ()),
                ("claude-haiku-4-5-20251001", ()),
            )
        ),
        # Kinds for the tests' own use, under IDs no real model has.
        ServedModel(
            model_info(
                "claude-test-plain", ("disabled",), (), max_tokens=8_192, structured_outputs=False
            ),
            False,
        ),
        ServedModel(
            model_info(
                "claude-test-deprecated",
                ("adaptive", "enabled", "disabled"),
                _NO_XHIGH,
                lifecycle="deprecated",
                retires_at="2027-01-15T00:00:00Z",
            ),
            False,
        ),
        ServedModel(
            model_info(
                "claude-test-retired", ("adaptive", "disabled"), _NO_XHIGH, lifecycle="retired"
            ),
            False,
        ),
    )
}
"""Every model ``GET /v1/models/{id}`` answers for: the SDK's ``Model`` list (the API
documentation's reading of each, as of API version 2026-10-21), and kinds only the
tests serve: a model with no thinking and no effort, a deprecated one, a retired one."""

_ALWAYS_THINKS = ModelRules(frozenset({"adaptive"}), True, 128_000, display="omitted")
FAMILY_RULES: dict[str, ModelRules] = {
    "claude-mythos": _ALWAYS_THINKS,
    "claude-3-5-haiku": ModelRules(frozenset({"disabled"}), False, 8_192),
}
"""Models the Messages API serves that the Models API does not list (a gateway's, or an
older model's), by ID prefix (the longest that matches). A model in neither is not checked."""
FORCED_TOOL_WITH_THINKING = "Thinking may not be enabled when tool_choice forces tool use."
SAMPLING = ("temperature", "top_p", "top_k")
MIN_BUDGET = 1024


def model_rules(model: str) -> ModelRules | None:
    if model in CATALOGUE:
        return CATALOGUE[model].rules
    matches = [p for p in FAMILY_RULES if model == p or model.startswith(p + "-")]
    return FAMILY_RULES[max(matches, key=len)] if matches else None


def thinking_type(body: dict[str, Any]) -> str | None:
    """What the request thinks with: ``adaptive``, ``enabled``, or ``None`` (no thinking)."""
    asked = (body.get("thinking") or {}).get("type")
    if asked is None:
        rules = model_rules(str(body.get("model", "")))
        return "adaptive" if rules is not None and rules.thinks_unasked else None
    return None if asked in OFF_TYPES else asked


def refusal(body: dict[str, Any]) -> Fail | None:
    """The error the API answers this request with, or ``None`` when it takes it."""
    model = str(body.get("model", ""))
    rules = model_rules(model)
    thinking = body.get("thinking") or {}
    asked = thinking.get("type")
    max_tokens = body.get("max_tokens", 0)
    effort = (body.get("output_config") or {}).get("effort")
    if rules is not None and rules.retired:
        return Fail(404, "not_found_error", f"model: {model} has been retired")
    for name in SAMPLING:
        if name in body:
            return _invalid(f"`{name}` is deprecated for this model.")
    if rules is not None and max_tokens > rules.max_output:
        return _invalid(
            f"max_tokens: {max_tokens} > {rules.max_output}, which is the maximum allowed "
            f"number of output tokens for {model}"
        )
    if rules is not None and asked is not None and asked not in rules.thinking:
        advice = (
            ' Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.'
            if "adaptive" in rules.thinking
            else ""
        )
        return _invalid(f'"thinking.type.{asked}" is not supported for this model.{advice}')
    if rules is not None and rules.efforts is not None and effort is not None:
        if effort not in rules.efforts:
            return _invalid(f'output_config.effort: "{effort}" is not supported for this model.')
        if asked in OFF_TYPES and effort in ("xhigh", "max") and not rules.off_above_high:
            return _invalid(
                f'output_config.effort: "{effort}" is not supported with thinking disabled; '
                "use effort high or lower."
            )
    if asked == "enabled":
        budget = thinking.get("budget_tokens", 0)
        if budget < MIN_BUDGET:
            return _invalid(
                f"thinking.enabled.budget_tokens: Input should be greater than or equal to "
                f"{MIN_BUDGET}"
            )
        if max_tokens <= budget:
            return _invalid("`max_tokens` must be greater than `thinking.budget_tokens`.")
    for index, tool in enumerate(body.get("tools", [])):
        if not tool.get("strict"):
            continue
        if rules is not None and not rules.structured_outputs:
            return _invalid(
                f"tools.{index}.strict: structured outputs are not supported for {model}"
            )
        unsupported = sorted(_schema_keywords(tool.get("input_schema", {})) - STRICT_KEYWORDS)
        if unsupported:
            return _invalid(
                f"tools.{index}.input_schema: {', '.join(unsupported)} not supported with strict"
            )
    forced = (body.get("tool_choice") or {}).get("type") in ("any", "tool")
    if forced and thinking_type(body) is not None:
        return _invalid(FORCED_TOOL_WITH_THINKING)
    if forced and rules is not None and not rules.forces_tools:
        return _invalid("tool_choice: forced tool use is not supported for this model.")
    return None


def _schema_keywords(schema: Any) -> set[str]:
    """Every keyword a JSON schema uses, at any depth (property names are not keywords)."""
    if not isinstance(schema, dict):
        return set()
    found = set(schema)
    for key, value in schema.items():
        if key in ("properties", "$defs"):
            for inner in value.values():
                found |= _schema_keywords(inner)
        elif key in ("items",):
            found |= _schema_keywords(value)
        elif key in ("anyOf", "allOf"):
            for inner in value:
                found |= _schema_keywords(inner)
    return found


def _invalid(message: str) -> Fail:
    return Fail(400, "invalid_request_error", message)


@attrs.frozen
class Fail:
    """An API error: ``status`` with ``{"type": "error", "error": {"type": kind, ...}}``."""

    status: int
    kind: str
    message: str = "scripted failure"
    retry_after: str | None = None


Scripted = Answer | Fail | Hang
Responder = Callable[[dict[str, Any]], Scripted]


class MessagesServer(LoopbackServer):
    """Start it (or use it as a context manager), script it, point the SDK at :attr:`url`."""

    def __init__(
        self,
        responder: Responder | None = None,
        port: int = 0,
        latency: float = 0.0,
        models_api: bool = True,
        min_cacheable: int = 0,
    ):
        self.responder = responder
        self.models_api = models_api
        """Whether ``GET /v1/models[/{id}]`` is served; ``False``: a 404 for both, as from a
        gateway that forwards only ``/v1/messages``."""
        self.script: deque[Scripted] = deque()
        self.model_lookups: list[str] = []
        """The path of every ``GET`` under ``/v1/models``, in order of arrival."""
        self.refusals: list[Fail] = []
        """Every request refused by its model's rules, in order of arrival."""
        self.min_cacheable = min_cacheable
        """Tokens a prompt prefix needs before a breakpoint writes it to the cache (the API's
        minimum is 512, 1,024 or 4,096 by model); a shorter one silently caches nothing."""
        self._cache: set[str] = set()
        self._served = 0
        super().__init__(port, latency)
        # self.requests: every ``POST /v1/messages``, in order of arrival.

    def handler(self) -> type[BaseHTTPRequestHandler]:
        return _handler_for(self)

    def push(self, *items: Scripted) -> MessagesServer:
        with self._lock:
            self.script.extend(items)
        return self

    # --- serving ---------------------------------------------------------------------

    def _next(self, body: dict[str, Any]) -> Scripted:
        with self._lock:
            refused = refusal(body)
            if refused is not None:
                self.refusals.append(refused)
                return refused
            if self.script:
                return self.script.popleft()
        if self.responder is not None:
            return self.responder(body)
        return Fail(400, "invalid_request_error", "the test server has no reply scripted")

    def _message(self, body: dict[str, Any], answer: Answer) -> dict[str, Any]:
        with self._lock:
            self._served += 1
            number = self._served
            usage = self._usage(body)
        content = []
        blocks, thinking_tokens = self._blocks(body, answer, number)
        for index, block in enumerate(blocks):
            block = dict(block)
            if block["type"] == "tool_use":
                block["id"] = f"toolu_{number:06d}_{index}"
            content.append(block)
        output_tokens = thinking_tokens + 12 * sum(b["type"] not in THINKING_KINDS for b in content)
        usage |= {"output_tokens": output_tokens}
        if thinking_type(body) is not None:
            usage["output_tokens_details"] = {"thinking_tokens": thinking_tokens}
        return {
            "id": f"msg_{number:06d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "unknown"),
            "content": content,
            "stop_reason": answer.stop_reason,
            "stop_sequence": None,
            "usage": usage,
        }

    def _blocks(
        self, body: dict[str, Any], answer: Answer, number: int
    ) -> tuple[list[dict[str, Any]], int]:
        """The answer's content as the model would return it for this request, and its
        thinking tokens: thinking first, signed, when the request thinks (made up if the
        script had none), else none. Hidden (``omitted``) reasoning is billed all the same."""
        thinking = [b for b in answer.content if b["type"] in THINKING_KINDS]
        rest = [b for b in answer.content if b["type"] not in THINKING_KINDS]
        if thinking_type(body) is None:
            return rest, 0
        if not thinking:
            thinking = [thought(made_up_thought(body))]
        rules = model_rules(str(body.get("model", "")))
        default = rules.display if rules is not None else "summarized"
        display = (body.get("thinking") or {}).get("display") or default
        signed = []
        for index, block in enumerate(thinking):
            if block["type"] == "thinking":
                words = "" if display == "omitted" else block["thinking"]
                block = {**block, "thinking": words, "signature": f"sig{number:06d}{index}=="}
            signed.append(block)
        return signed + rest, sum(_thinking_tokens(b) for b in thinking)

    def _usage(self, body: dict[str, Any]) -> dict[str, int]:
        """Prompt-cache accounting for this request (caller holds the lock)."""
        blocks = prompt_blocks(body)
        sizes, hashes, digest = [], [], hashlib.sha256()
        for block, _marked, _ttl in blocks:
            digest.update(block.encode())
            hashes.append(digest.hexdigest())
            sizes.append(len(block.encode()))
        ends = [sum(sizes[: i + 1]) for i in range(len(sizes))]
        marks = [i for i, (_block, marked, _ttl) in enumerate(blocks) if marked]
        read_end = 0
        for mark in marks:
            for i in range(mark, max(mark - LOOKBACK, -1), -1):
                if hashes[i] in self._cache:
                    read_end = max(read_end, ends[i])
                    break
        writes = [m for m in marks if ends[m] // 4 >= self.min_cacheable]
        write_end = max((ends[m] for m in writes), default=0)
        self._cache.update(hashes[m] for m in writes)
        written = {"5m": 0, "1h": 0}  # each breakpoint writes the bytes since the last one
        start = read_end
        for mark in writes:
            written[blocks[mark][2]] += max(ends[mark] - start, 0)
            start = max(start, ends[mark])
        return {
            "input_tokens": max(ends[-1] - max(read_end, write_end), 0) // 4 if ends else 0,
            "cache_read_input_tokens": read_end // 4,
            "cache_creation_input_tokens": max(write_end - read_end, 0) // 4,
            "cache_creation": {
                "ephemeral_5m_input_tokens": written["5m"] // 4,
                "ephemeral_1h_input_tokens": written["1h"] // 4,
            },
        }


def prompt_blocks(body: dict[str, Any]) -> list[tuple[str, bool, str]]:
    """The prompt in the order the API reads it (tools, system, messages), one entry per
    block: its content as canonical JSON without ``cache_control``, whether it carries one,
    and that breakpoint's lifetime (``5m`` or ``1h``)."""
    out: list[tuple[str, bool, str]] = []

    def add(block: Any, role: str | None = None) -> None:
        if isinstance(block, str):
            block = {"type": "text", "text": block}
        marked = isinstance(block, dict) and "cache_control" in block
        ttl = (block.get("cache_control") or {}).get("ttl", "5m") if marked else "5m"
        content = {k: v for k, v in block.items() if k != "cache_control"}
        if role is not None:
            content["role"] = role
        out.append((json.dumps(content, sort_keys=True, ensure_ascii=False), marked, ttl))

    for tool in body.get("tools", []):
        add(tool)
    system = body.get("system", [])
    for block in [system] if isinstance(system, str) else system:
        add(block)
    for message in body.get("messages", []):
        content = message["content"]
        for block in [content] if isinstance(content, str) else content:
            add(block, message["role"])
    return out


def _handler_for(server: MessagesServer) -> type[BaseHTTPRequestHandler]:
    class Handler(QuietHandler):
        def do_GET(self) -> None:
            path = self.path.split("?")[0]
            with server._lock:
                server.model_lookups.append(path)
            if not server.models_api or not path.startswith("/v1/models"):
                self._send(404, _error("not_found_error", f"no route {path}"))
            elif path == "/v1/models":
                data = [served.info for served in CATALOGUE.values()]
                first, last = data[0]["id"], data[-1]["id"]
                self._send(
                    200, {"data": data, "has_more": False, "first_id": first, "last_id": last}
                )
            elif path.removeprefix("/v1/models/") in CATALOGUE:
                self._send(200, CATALOGUE[path.removeprefix("/v1/models/")].info)
            else:
                self._send(
                    404, _error("not_found_error", f"model: {path.removeprefix('/v1/models/')}")
                )

        def do_POST(self) -> None:
            raw = self.read_body()
            path = self.path.split("?")[0]
            if path != "/v1/messages":
                self._send(404, _error("not_found_error", f"no route {self.path}"))
                return
            try:
                body = json.loads(raw)
            except json.JSONDecodeError:
                self._send(400, _error("invalid_request_error", "body is not JSON"))
                return
            server.record(raw, body, self.headers, path)
            item = server._next(body)
            server.pause(server.latency)
            if isinstance(item, Hang):
                server.pause(item.seconds)
                item = Fail(504, "api_error", "the test server hung")
            if isinstance(item, Fail):
                headers = {"retry-after": item.retry_after} if item.retry_after else {}
                self._send(item.status, _error(item.kind, item.message), headers)
            else:
                self._send(200, server._message(body, item))

        def _send(self, status: int, payload: dict, headers: dict | None = None) -> None:
            request_id = {"request-id": f"req_test_{len(server.requests):06d}"}
            self.send_json(status, payload, request_id | (headers or {}))

    return Handler


def _thinking_tokens(block: dict[str, Any]) -> int:
    if block["type"] == "redacted_thinking":
        return 40
    if block["type"] == "thinking":  # the reasoning is billed whether or not it is shown
        return 8 + len(block["thinking"].encode()) // 4
    return 0


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


# --- a legal player, for whole episodes ---------------------------------------------------


def table_player(patience: Patience = lambda deal: 3, talk: bool = True) -> Responder:
    """A responder that always plays legally from what the prompt shows
    (:func:`model_player.legal_move`), calling the ``act`` tool."""

    def respond(body: dict[str, Any]) -> Scripted:
        blocks = body["messages"][-1]["content"]
        turn = blocks[-1]["text"]
        record = "".join(block["text"] for block in blocks[:-1])
        return tool_call(legal_move(turn, record, patience, talk))

    return respond


def main() -> None:
    """Serve the legal table player on loopback until interrupted, for trying the CLI by hand:

    python tests/messages_server.py --port 8765 &
    ANTHROPIC_API_KEY=local ANTHROPIC_BASE_URL=http://127.0.0.1:8765 \\
        arena play --talk --seat claude:honest --seat bayes --seat claude:bluffer --log ep.jsonl

    or run one command against it, with the key and URL set, and stop when it ends:

    python tests/messages_server.py --latency 0.2 -- arena league run docs/league.toml
    """
    import argparse

    parser = argparse.ArgumentParser(description="A loopback Messages API that plays legally.")
    args, command, port = parse_command_line(parser, default_port=8765)
    server = MessagesServer(responder=table_player(), port=port, latency=args.latency).start()
    if command:
        run_against(
            server, command, {"ANTHROPIC_API_KEY": "loopback", "ANTHROPIC_BASE_URL": server.url}
        )
    serve_until_interrupted(server, "the Messages API")


if __name__ == "__main__":
    main()
