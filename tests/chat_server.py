"""A real HTTP server on 127.0.0.1 that speaks OpenAI's chat completions, as each server
people run does.

Tests point the official ``openai`` SDK at it (``base_url=server.url + "/v1"``, or
``OPENAI_BASE_URL``): every request goes over a real socket, through the SDK's own
serialisation, status handling and exceptions, and nothing leaves the machine. It answers
``POST /v1/chat/completions`` from a script, in order, then from a responder (by default
:func:`table_player`, a legal player reading the arena's prompt); ``GET /v1/models`` lists
the kind's models. It records every request, ``GET`` included (path, raw body, parsed
body, headers), so privacy tests can read them all.

Which server it is comes from a :class:`ServerKind` (:data:`KINDS`), each as the server's
documentation and users' reports describe it:

- ``openai``: OpenAI. Strict function tools, checked as OpenAI checks them (every property
  in ``required``, ``additionalProperties: false``); ``tool_choice`` ``auto``,
  ``required`` or a named function; ``response_format`` ``json_schema``; a reasoning model,
  so ``max_tokens`` is refused (``max_completion_tokens``), its reasoning is never shown but
  is billed in ``completion_tokens_details.reasoning_tokens``; automatic prompt caching in
  ``prompt_tokens_details.cached_tokens`` (prefixes of 1,024 tokens and more, in steps of
  128); ``x-ratelimit-*`` headers on every answer.
- ``vllm``: vLLM with a reasoning parser and ``--enable-auto-tool-choice``: the reasoning in
  the message's ``reasoning`` (vLLM's name since it renamed ``reasoning_content``); every
  ``tool_choice``, a named one enforced by guided decoding; ``strict`` accepted and not
  checked; ``prompt_tokens_details`` null; errors in vLLM's shape (``code`` the status).
- ``vllm-reasoning-content``: the same with the older ``reasoning_content``, which DeepSeek's
  API still sends.
- ``llamacpp``: llama-server with ``--jinja``: ``reasoning_content``, tool calls (a named
  choice is taken as ``auto``, which llama-server does silently), errors in its shape.
- ``auto-only``: a server that takes tools but refuses a forced choice (``required`` or
  named) with a 400, as hosted gateways and MLX servers do; ``auto`` works.
- ``no-tools``: no tool calling: tools in a request are a 400 (Ollama's answer for a model
  without tool support: ``... does not support tools``; vLLM without a tool parser answers
  the same with its own words). The model writes its action as JSON in the content: exactly
  the JSON under a ``response_format`` ``json_schema``, else in a fenced block after a line
  of prose. ``no-tools-no-schema`` is a server with neither: tools and a ``json_schema``
  are each a 400, in the words llama-server's builds from before its ``json_schema``
  support used. Today's llama-server without ``--jinja`` takes a ``json_schema`` and
  answers tools with a 500 (``tests/test_real_server_llama_server.py`` pins that, on the
  real server), so this kind stands for the older builds and servers like them.

Script items: :func:`move` (the model's action: a tool call when the request offers the
tool, else JSON in the content; a string is sent as arguments that are not JSON),
:func:`said` (content only, no call), :func:`cut_off` (``finish_reason`` ``length`` with
no action: a reasoning model out of tokens), :class:`Fail` (an error in the kind's shape;
:func:`rate_limited` a 429 with ``retry-after`` and ``x-ratelimit-*`` headers,
:func:`server_error` a 500, 502 or 503) and :class:`~loopback_http.Hang`. A kind's refusal
comes before any script item and is kept in :attr:`ChatServer.refusals`; with ``key=`` set,
a request without ``Authorization: Bearer KEY`` is OpenAI's 401.

Run standalone, it serves one kind and runs a command with ``OPENAI_BASE_URL`` set::

    python tests/chat_server.py --kind vllm -- arena play --seat openai:honest?model=m ...
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from typing import Any

import attrs
from loopback_http import (
    Hang,
    LoopbackServer,
    QuietHandler,
    parse_command_line,
    run_against,
    serve_until_interrupted,
)
from model_player import TURN_HEADING, Patience, legal_move, made_up_thought, split_prompt

CREATED = 1_767_225_600
"""Every answer's ``created`` (2026-01-01): fixed, so answers are the same run to run."""
FORCED = ("required", "named")
"""The ``tool_choice`` forms that force a call."""


@attrs.frozen
class ServerKind:
    """What one server does with a chat completions request."""

    name: str
    reasoning_field: str | None
    """The message key its reasoning arrives under; ``None``: never shown."""
    hidden_reasoning: bool = False
    """It reasons unseen and bills it (``completion_tokens_details.reasoning_tokens``)."""
    tool_choices: frozenset[str] = frozenset({"none", "auto", *FORCED})
    """The ``tool_choice`` forms it takes; empty: tools in a request are refused."""
    checks_strict: bool = False
    """It holds a strict schema (tool or ``response_format``) to OpenAI's rules."""
    json_schema: str = "takes"
    """``response_format`` ``json_schema``: ``takes``, ``refuses`` (a 400) or ``ignores``."""
    usage_details: bool = False
    """Usage carries ``prompt_tokens_details`` and ``completion_tokens_details``."""
    errors: str = "openai"
    """The error body's shape: ``openai``, ``vllm`` or ``llamacpp``."""
    refuses_max_tokens: bool = False
    """A reasoning model of OpenAI's: ``max_tokens`` is a 400, ``max_completion_tokens`` not."""
    rate_headers: bool = False
    """``x-ratelimit-*`` headers on every answer."""
    models: tuple[str, ...] = ("test-model",)
    """What ``GET /v1/models`` lists."""
    refuses_tools: str = ""
    """The 400's message for tools it cannot take (``{model}`` is filled in)."""
    refuses_forced: str = ""
    """The 400's message for a forced ``tool_choice`` it does not take."""


_VLLM = ServerKind(
    "vllm", "reasoning", errors="vllm", models=("Qwen/Qwen3-8B",), json_schema="takes"
)
KINDS: dict[str, ServerKind] = {
    kind.name: kind
    for kind in (
        ServerKind(
            "openai",
            None,
            hidden_reasoning=True,
            checks_strict=True,
            usage_details=True,
            refuses_max_tokens=True,
            rate_headers=True,
            models=("gpt-5-mini", "gpt-5", "o4-mini"),
        ),
        _VLLM,
        attrs.evolve(_VLLM, name="vllm-reasoning-content", reasoning_field="reasoning_content"),
        ServerKind(
            "llamacpp",
            "reasoning_content",
            errors="llamacpp",
            models=("Qwen3-8B-Q4_K_M.gguf",),
        ),
        ServerKind(
            "auto-only",
            "reasoning",
            tool_choices=frozenset({"none", "auto"}),
            models=("qwen/qwen3-32b",),
            refuses_forced="inference-enforced tool_choice (required/named) is not supported "
            'for model "{model}"',
        ),
        ServerKind(
            "no-tools",
            "reasoning",
            tool_choices=frozenset(),
            models=("gemma3:4b",),
            refuses_tools="registry.ollama.ai/library/{model} does not support tools",
        ),
        ServerKind(
            "no-tools-no-schema",
            "reasoning_content",
            tool_choices=frozenset(),
            json_schema="refuses",
            errors="llamacpp",
            models=("gemma3-4b.gguf",),
            refuses_tools="tools param requires --jinja flag",
        ),
    )
}
"""Every kind by name; ``attrs.evolve`` one for a variant (another reasoning field, ...)."""


# --- what a script can say -------------------------------------------------------------


@attrs.frozen
class Reply:
    """A 200 answer: the model's action (rendered as the request allows), its words, its
    reasoning (``None``: made up when the kind shows reasoning) and how it stopped."""

    action: dict[str, Any] | str | None = None
    content: str | None = None
    reasoning: str | None = None
    finish_reason: str = "stop"


def move(action: dict[str, Any] | str, reasoning: str | None = None) -> Reply:
    """The model acts: an ``act`` call when the request offers tools, else JSON in the
    content. A string is the call's arguments as sent, JSON or not."""
    return Reply(action=action, reasoning=reasoning)


def said(words: str, reasoning: str | None = None) -> Reply:
    """The model answers in words only, with no call."""
    return Reply(content=words, reasoning=reasoning)


def cut_off(reasoning: str | None = None) -> Reply:
    """The model ran out of tokens before it acted: ``finish_reason`` ``length``, no call,
    no content; its whole budget billed."""
    return Reply(reasoning=reasoning, finish_reason="length")


@attrs.frozen
class Fail:
    """An error: ``status`` with the kind's error body (or ``html``, as a gateway's page)."""

    status: int
    message: str = "scripted failure"
    type: str = "invalid_request_error"
    code: str | None = None
    param: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    html: str | None = None


def rate_limited(
    retry_after: str | None = "1", retry_after_ms: str | None = None, reset: str = "1s"
) -> Fail:
    """OpenAI's 429, with the headers it sends: ``retry-after`` (and ``retry-after-ms``,
    which the SDK prefers) when given, and the ``x-ratelimit-*`` family, requests spent."""
    headers = [
        ("x-ratelimit-limit-requests", "500"),
        ("x-ratelimit-remaining-requests", "0"),
        ("x-ratelimit-reset-requests", reset),
        ("x-ratelimit-limit-tokens", "200000"),
        ("x-ratelimit-remaining-tokens", "199000"),
        ("x-ratelimit-reset-tokens", "300ms"),
    ]
    if retry_after is not None:
        headers.append(("retry-after", retry_after))
    if retry_after_ms is not None:
        headers.append(("retry-after-ms", retry_after_ms))
    return Fail(
        429,
        "Rate limit reached for requests per min (RPM): Limit 500, Used 500, Requested 1. "
        f"Please try again in {reset}.",
        type="requests",
        code="rate_limit_exceeded",
        headers=tuple(headers),
    )


BAD_GATEWAY_PAGE = (
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>cloudflare</center>\r\n"
    "</body>\r\n</html>\r\n"
)


def server_error(status: int = 500) -> Fail:
    """A 5xx as OpenAI's front sends it: 500 and 503 in its error JSON, 502 as the
    gateway's HTML page."""
    if status == 502:
        return Fail(502, "Bad Gateway", type="server_error", html=BAD_GATEWAY_PAGE)
    if status == 503:
        return Fail(
            503, "The engine is currently overloaded, please try again later.", "server_error"
        )
    return Fail(
        status,
        "The server had an error while processing your request. Sorry about that!",
        "server_error",
    )


Scripted = Reply | Fail | Hang
Responder = Callable[[dict[str, Any]], Scripted]


# --- the server ---------------------------------------------------------------------------


class ChatServer(LoopbackServer):
    """Start it (or use it as a context manager), script it, point the SDK at
    ``url + "/v1"``."""

    def __init__(
        self,
        kind: str | ServerKind = "openai",
        responder: Responder | None = None,
        key: str | None = None,
        port: int = 0,
        latency: float = 0.0,
    ):
        self.kind = KINDS[kind] if isinstance(kind, str) else kind
        self.responder = responder if responder is not None else table_player()
        self.key = key
        """The key ``Authorization: Bearer`` must carry; ``None``: none needed."""
        self.script: deque[Scripted] = deque()
        self.refusals: list[Fail] = []
        """Every request the kind refused, in order of arrival."""
        self._served = 0
        self._prompts: list[str] = []
        super().__init__(port, latency)
        # self.requests: every request, GET and POST, in order of arrival.

    def handler(self) -> type[BaseHTTPRequestHandler]:
        return _handler_for(self)

    @property
    def completions(self) -> list[dict[str, Any]]:
        """The body of every ``POST /v1/chat/completions``, in order of arrival."""
        return [r.json for r in self.requests if r.path == "/v1/chat/completions"]

    def push(self, *items: Scripted) -> ChatServer:
        with self._lock:
            self.script.extend(items)
        return self

    # --- serving -----------------------------------------------------------------------

    def unauthorized(self, headers: Any) -> Fail | None:
        """OpenAI's 401 when the server wants a key and the request lacks it."""
        if self.key is None:
            return None
        sent = headers.get("authorization")
        if sent is None:
            return Fail(
                401,
                "You didn't provide an API key. You need to provide your API key in an "
                "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
            )
        if sent != f"Bearer {self.key}":
            shown = sent.removeprefix("Bearer ")
            return Fail(
                401,
                f"Incorrect API key provided: {shown[:3]}***{shown[-4:]}.",
                code="invalid_api_key",
            )
        return None

    def _next(self, body: dict[str, Any]) -> Scripted:
        with self._lock:
            refused = refusal(self.kind, body)
            if refused is not None:
                self.refusals.append(refused)
                return refused
            if self.script:
                return self.script.popleft()
        return self.responder(body)

    def completion(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        """The ``chat.completion`` this kind answers ``reply`` with, for this request."""
        with self._lock:
            self._served += 1
            number = self._served
            prompt = _prompt_text(body)
            cached = _cached_tokens(prompt, self._prompts)
            self._prompts.append(prompt)
        kind = self.kind
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        thought = reply.reasoning if reply.reasoning is not None else made_up_thought(body)
        reasoning_tokens = 8 + len(thought.encode()) // 4
        if kind.reasoning_field is not None:
            message[kind.reasoning_field] = thought
        elif not kind.hidden_reasoning:
            reasoning_tokens = 0
        finish = reply.finish_reason
        if reply.action is not None:
            if _offers_tools(body):
                arguments = reply.action
                if not isinstance(arguments, str):
                    arguments = json.dumps(arguments)
                message["tool_calls"] = [
                    {
                        "id": f"call_{number:06d}_0",
                        "type": "function",
                        "function": {"name": _tool_name(body), "arguments": arguments},
                    }
                ]
                finish = "tool_calls"
            else:
                message["content"] = _action_in_words(body, reply.action, kind)
        if kind.errors == "openai":
            message |= {"refusal": None, "annotations": []}
        elif kind.errors == "vllm":
            message.setdefault("tool_calls", [])
        budget = body.get("max_completion_tokens") or body.get("max_tokens") or 4096
        output = budget if finish == "length" else reasoning_tokens + 12
        prompt_tokens = len(prompt.encode()) // 4
        usage: dict[str, Any] = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": output,
            "total_tokens": prompt_tokens + output,
        }
        if kind.usage_details:
            usage["prompt_tokens_details"] = {"cached_tokens": cached, "audio_tokens": 0}
            usage["completion_tokens_details"] = {
                "reasoning_tokens": output if finish == "length" else reasoning_tokens,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            }
        elif kind.errors == "vllm":
            usage["prompt_tokens_details"] = None
        answer: dict[str, Any] = {
            "id": f"chatcmpl-{number:06d}",
            "object": "chat.completion",
            "created": CREATED,
            "model": body.get("model", ""),
            "choices": [
                {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
            ],
            "usage": usage,
        }
        if kind.errors == "openai":
            answer |= {"service_tier": "default", "system_fingerprint": "fp_loopback"}
        if kind.errors == "llamacpp":
            answer["timings"] = {"prompt_n": prompt_tokens, "predicted_n": output}
        return answer

    def answer_headers(self) -> dict[str, str]:
        """Headers on every 200: OpenAI's rate-limit state (requests left counting down)."""
        if not self.kind.rate_headers:
            return {}
        return {
            "x-ratelimit-limit-requests": "10000",
            "x-ratelimit-remaining-requests": str(10000 - self._served),
            "x-ratelimit-reset-requests": "6ms",
            "x-ratelimit-limit-tokens": "10000000",
            "x-ratelimit-remaining-tokens": "9990000",
            "x-ratelimit-reset-tokens": "0s",
        }


def refusal(kind: ServerKind, body: dict[str, Any]) -> Fail | None:
    """The 400 this kind answers the request with, or ``None`` when it takes it."""
    model = str(body.get("model", ""))
    if not model or not isinstance(body.get("messages"), list):
        return Fail(400, "you must provide a model parameter and a messages array")
    if body.get("stream"):
        return Fail(400, "the loopback server does not stream", param="stream")
    if kind.refuses_max_tokens and "max_tokens" in body:
        return Fail(
            400,
            "Unsupported parameter: 'max_tokens' is not supported with this model. "
            "Use 'max_completion_tokens' instead.",
            code="unsupported_parameter",
            param="max_tokens",
        )
    tools = body.get("tools") or []
    choice = _choice_form(body.get("tool_choice"))
    if tools and not kind.tool_choices:
        return Fail(400, kind.refuses_tools.format(model=model), type="api_error")
    if choice is not None and not tools and choice != "none":
        return Fail(
            400,
            "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are "
            "specified.",
            param="tool_choice",
        )
    if tools and choice is not None and choice not in kind.tool_choices:
        return Fail(400, kind.refuses_forced.format(model=model), param="tool_choice")
    if choice == "named" and body["tool_choice"]["function"]["name"] not in _tool_names(body):
        return Fail(400, "tool_choice names a function that is not in tools", param="tool_choice")
    if kind.checks_strict:
        for index, tool in enumerate(tools):
            function = tool.get("function", {})
            refused = function.get("strict") and _strict_refusal(
                function.get("parameters", {}),
                f"function '{function.get('name')}'",
                "invalid_function_parameters",
                f"tools[{index}].function.parameters",
            )
            if refused:
                return refused
    response_format = body.get("response_format") or {}
    if response_format.get("type") == "json_schema":
        if kind.json_schema == "refuses":
            return Fail(
                400,
                'Illegal param: "response_format" must be one of "text" or "json_object", but '
                "got: json_schema",
            )
        schema = response_format.get("json_schema", {})
        if kind.checks_strict and schema.get("strict"):
            return _strict_refusal(
                schema.get("schema", {}),
                f"response_format '{schema.get('name')}'",
                "invalid_json_schema",
                "response_format",
            )
    return None


def _strict_refusal(schema: Any, what: str, code: str, param: str) -> Fail | None:
    """OpenAI's 400 for a strict ``schema`` its rules refuse, ``None`` for one they take."""
    broken = _strict_breach(schema)
    if broken is None:
        return None
    return Fail(400, f"Invalid schema for {what}: {broken}", code=code, param=param)


def _strict_breach(schema: Any, context: tuple[str, ...] = ()) -> str | None:
    """The first rule of OpenAI's strict mode an object schema breaks, in its words: every
    object lists all its properties in ``required`` and sets ``additionalProperties`` false."""
    if not isinstance(schema, dict):
        return None
    where = f"In context={context!r}, " if context else "In context=(), "
    if schema.get("type") == "object" or "properties" in schema:
        properties = schema.get("properties", {})
        missing = [name for name in properties if name not in schema.get("required", [])]
        if missing:
            return (
                f"{where}'required' is required to be supplied and to be an array including "
                f"every key in properties. Missing '{missing[0]}'."
            )
        if schema.get("additionalProperties") is not False:
            return f"{where}'additionalProperties' is required to be supplied and to be false."
        for name, inner in properties.items():
            broken = _strict_breach(inner, (*context, "properties", name))
            if broken:
                return broken
    for key in ("anyOf", "items"):
        inner = schema.get(key)
        for index, part in enumerate(inner if isinstance(inner, list) else [inner]):
            broken = _strict_breach(part, (*context, key, str(index)))
            if broken:
                return broken
    return None


def _choice_form(choice: Any) -> str | None:
    """``tool_choice`` as one word: ``none``, ``auto``, ``required``, ``named``, or absent."""
    if choice is None:
        return None
    if isinstance(choice, dict):
        return "named"
    return str(choice)


def _tool_names(body: dict[str, Any]) -> list[str]:
    return [tool.get("function", {}).get("name") for tool in body.get("tools") or []]


def _offers_tools(body: dict[str, Any]) -> bool:
    return bool(body.get("tools")) and body.get("tool_choice") != "none"


def _tool_name(body: dict[str, Any]) -> str:
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        return choice["function"]["name"]
    return _tool_names(body)[0]


def _action_in_words(body: dict[str, Any], action: dict[str, Any] | str, kind: ServerKind) -> str:
    """The action as a model with no tool writes it: the bare JSON when the request's
    ``json_schema`` holds it to that, else a line of prose and a fenced JSON block."""
    text = action if isinstance(action, str) else json.dumps(action)
    constrained = (body.get("response_format") or {}).get("type") == "json_schema"
    if constrained and kind.json_schema == "takes":
        return text
    return f"I will take my turn now.\n```json\n{text}\n```"


def _prompt_text(body: dict[str, Any]) -> str:
    """The prompt as the server reads it, in order: tools, then each message, then the
    response format; a later prompt that extends an earlier one shares its prefix."""
    parts = [json.dumps(tool, sort_keys=True) for tool in body.get("tools") or []]
    parts += [json.dumps(m, sort_keys=True) for m in body.get("messages", [])]
    parts.append(json.dumps(body.get("response_format"), sort_keys=True))
    return "\n".join(parts)


CACHE_MINIMUM = 1024
CACHE_STEP = 128
CACHE_KEPT = 32
"""How many earlier prompts a request's prefix is looked for in."""


def _cached_tokens(prompt: str, earlier: list[str]) -> int:
    """OpenAI's automatic prompt caching: the longest prefix shared with one of the last
    :data:`CACHE_KEPT` prompts, once it is 1,024 tokens or more, counted in steps of 128
    (tokens as bytes / 4)."""
    shared = max((_common_prefix(prompt, seen) for seen in earlier[-CACHE_KEPT:]), default=0)
    tokens = len(prompt[:shared].encode()) // 4
    if tokens < CACHE_MINIMUM:
        return 0
    return CACHE_MINIMUM + (tokens - CACHE_MINIMUM) // CACHE_STEP * CACHE_STEP


def _common_prefix(a: str, b: str) -> int:
    """How many leading characters ``a`` and ``b`` share (a binary search on slices)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def error_body(kind: ServerKind, fail: Fail) -> dict[str, Any]:
    """``fail`` in the shape this kind's server writes errors."""
    if kind.errors == "vllm":
        name = HTTPStatus(fail.status).phrase.replace(" ", "")
        name = name if name.endswith("Error") else name + "Error"
        return {
            "error": {
                "message": fail.message,
                "type": name,
                "param": fail.param,
                "code": fail.status,
            }
        }
    if kind.errors == "llamacpp":
        kinds = {401: "authentication_error", 404: "not_found_error", 503: "unavailable_error"}
        default = "server_error" if fail.status >= 500 else "invalid_request_error"
        return {
            "error": {
                "code": fail.status,
                "message": fail.message,
                "type": kinds.get(fail.status, default),
            }
        }
    return {
        "error": {
            "message": fail.message,
            "type": fail.type,
            "param": fail.param,
            "code": fail.code,
        }
    }


def _handler_for(server: ChatServer) -> type[BaseHTTPRequestHandler]:
    class Handler(QuietHandler):
        def do_GET(self) -> None:
            path = self.path.split("?")[0]
            server.record(b"", {}, self.headers, path)
            refused = server.unauthorized(self.headers)
            models = [
                {"id": m, "object": "model", "created": CREATED, "owned_by": server.kind.name}
                for m in server.kind.models
            ]
            if refused is not None:
                self._fail(refused)
            elif path == "/v1/models":
                self.send_json(200, {"object": "list", "data": models})
            elif path.removeprefix("/v1/models/") in server.kind.models:
                wanted = path.removeprefix("/v1/models/")
                self.send_json(200, next(m for m in models if m["id"] == wanted))
            else:
                self._fail(Fail(404, f"no route {path}", code="not_found"))

        def do_POST(self) -> None:
            raw = self.read_body()
            path = self.path.split("?")[0]
            try:
                body = json.loads(raw)
            except json.JSONDecodeError:
                body = None
            server.record(raw, body if isinstance(body, dict) else {}, self.headers, path)
            refused = server.unauthorized(self.headers)
            if refused is not None:
                self._fail(refused)
                return
            if path != "/v1/chat/completions":
                self._fail(Fail(404, f"no route {path}", code="not_found"))
                return
            if not isinstance(body, dict):
                self._fail(Fail(400, "the body is not a JSON object"))
                return
            item = server._next(body)
            server.pause(server.latency)
            if isinstance(item, Hang):
                server.pause(item.seconds)
                item = server_error(503)
            if isinstance(item, Fail):
                self._fail(item)
            else:
                answer = server.completion(body, item)
                self.send_json(200, answer, server.answer_headers())

        def _fail(self, fail: Fail) -> None:
            headers = dict(fail.headers)
            if fail.html is not None:
                self.send_bytes(fail.status, fail.html.encode(), "text/html", headers)
            else:
                self.send_json(fail.status, error_body(server.kind, fail), headers)

    return Handler


# --- a legal player, for whole episodes ----------------------------------------------------


def table_player(patience: Patience = lambda deal: 3, talk: bool = True) -> Responder:
    """A responder that always plays legally from what the prompt shows
    (:func:`model_player.legal_move`): it reads the last user message, whose text holds the
    table record and then the turn, whether sent as a string or as text parts."""

    def respond(body: dict[str, Any]) -> Scripted:
        users = [m for m in body["messages"] if m.get("role") == "user"]
        text = _text(users[-1]["content"]) if users else ""
        if TURN_HEADING not in text:
            return Fail(400, f"the test player found no {TURN_HEADING.strip()!r} to answer")
        turn, record = split_prompt(text)
        return move(legal_move(turn, record, patience, talk))

    return respond


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if part.get("type") == "text")


def main() -> None:
    """Serve one kind's legal player on loopback, for trying the CLI by hand, or run one
    command against it with ``OPENAI_BASE_URL`` (and, with ``--key``, ``OPENAI_API_KEY``)
    set, and stop when it ends:

    python tests/chat_server.py --kind vllm -- arena league run docs/league.toml
    """
    import argparse

    parser = argparse.ArgumentParser(description="A loopback chat completions API that plays.")
    parser.add_argument("--kind", choices=sorted(KINDS), default="openai")
    parser.add_argument("--key", help="the key the server requires (default: none)")
    args, command, port = parse_command_line(parser, default_port=8766)
    server = ChatServer(args.kind, key=args.key, port=port, latency=args.latency).start()
    if command:
        env = {"OPENAI_BASE_URL": f"{server.url}/v1"}
        if args.key is not None:
            env["OPENAI_API_KEY"] = args.key
        run_against(server, command, env)
    serve_until_interrupted(server, f"chat completions as {args.kind}")


if __name__ == "__main__":
    main()
