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

Before any script item, a request is checked against the rules the real API
applies to its ``model`` (:data:`MODEL_RULES`, the tests' own reading of the
API documentation, independent of the seat's table): its output limit, the
thinking types the model takes, ``budget_tokens`` under ``max_tokens``, and no
thinking with a forced tool. A refusal is the API's 400 with its message. A
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
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import attrs

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
    """What the API accepts from one model family."""

    thinking: frozenset[str]
    """The ``thinking.type`` values it takes."""
    thinks_unasked: bool
    """A request without ``thinking`` thinks (adaptively) all the same."""
    max_output: int
    display: str = "summarized"
    """What ``thinking.display`` is when the request does not say."""


_ALWAYS_THINKS = ModelRules(frozenset({"adaptive"}), True, 128_000, display="omitted")
_HYBRID = ModelRules(frozenset({"adaptive", "enabled", "disabled"}), False, 128_000)
_BUDGETED = ModelRules(frozenset({"enabled", "disabled"}), False, 64_000)
MODEL_RULES: dict[str, ModelRules] = {
    "claude-mythos": _ALWAYS_THINKS,
    "claude-fable-5": _ALWAYS_THINKS,
    "claude-opus-5": _ALWAYS_THINKS,
    "claude-sonnet-5": _ALWAYS_THINKS,
    "claude-opus-4-8": _ALWAYS_THINKS,
    "claude-opus-4-7": _ALWAYS_THINKS,
    "claude-opus-4-6": _HYBRID,
    "claude-sonnet-4-6": _HYBRID,
    "claude-opus-4-5": _BUDGETED,
    "claude-sonnet-4-5": _BUDGETED,
    "claude-haiku-4-5": _BUDGETED,
    "claude-3-5-haiku": ModelRules(frozenset({"disabled"}), False, 8_192),
}
"""By model-ID prefix (the longest that matches). A model not listed is not checked."""
FORCED_TOOL_WITH_THINKING = "Thinking may not be enabled when tool_choice forces tool use."
THOUGHT_MARKER = "[thought "
"""How every thought the server makes up begins."""
MIN_BUDGET = 1024


def model_rules(model: str) -> ModelRules | None:
    matches = [p for p in MODEL_RULES if model == p or model.startswith(p + "-")]
    return MODEL_RULES[max(matches, key=len)] if matches else None


def thinking_type(body: dict[str, Any]) -> str | None:
    """What the request thinks with: ``adaptive``, ``enabled``, or ``None`` (no thinking)."""
    asked = (body.get("thinking") or {}).get("type")
    if asked is None:
        rules = model_rules(str(body.get("model", "")))
        return "adaptive" if rules is not None and rules.thinks_unasked else None
    return None if asked == "disabled" else asked


def refusal(body: dict[str, Any]) -> Fail | None:
    """The 400 the API answers this request with, or ``None`` when it takes it."""
    model = str(body.get("model", ""))
    rules = model_rules(model)
    thinking = body.get("thinking") or {}
    asked = thinking.get("type")
    max_tokens = body.get("max_tokens", 0)
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
    if asked == "enabled":
        budget = thinking.get("budget_tokens", 0)
        if budget < MIN_BUDGET:
            return _invalid(
                f"thinking.enabled.budget_tokens: Input should be greater than or equal to "
                f"{MIN_BUDGET}"
            )
        if max_tokens <= budget:
            return _invalid("`max_tokens` must be greater than `thinking.budget_tokens`.")
    forced = (body.get("tool_choice") or {}).get("type") in ("any", "tool")
    if forced and thinking_type(body) is not None:
        return _invalid(FORCED_TOOL_WITH_THINKING)
    return None


def _invalid(message: str) -> Fail:
    return Fail(400, "invalid_request_error", message)


@attrs.frozen
class Fail:
    """An API error: ``status`` with ``{"type": "error", "error": {"type": kind, ...}}``."""

    status: int
    kind: str
    message: str = "scripted failure"
    retry_after: str | None = None


@attrs.frozen
class Hang:
    """Say nothing for ``seconds`` (or until the server stops)."""

    seconds: float


Scripted = Answer | Fail | Hang
Responder = Callable[[dict[str, Any]], Scripted]


@attrs.frozen
class Request:
    """One request as the server received it."""

    body: bytes
    json: dict[str, Any]
    headers: dict[str, str]
    """Names in lower case."""
    arrived: float
    """``time.monotonic()`` when the body had been read."""


class MessagesServer:
    """Start it (or use it as a context manager), script it, point the SDK at :attr:`url`."""

    def __init__(self, responder: Responder | None = None, port: int = 0, latency: float = 0.0):
        self.responder = responder
        self.latency = latency
        """Seconds every request waits before its answer, as a live API's would."""
        self.script: deque[Scripted] = deque()
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._cache: set[str] = set()
        self._served = 0
        self._httpd = _Server(("127.0.0.1", port), _handler_for(self))
        self._httpd.daemon_threads = True
        # A client that hangs up mid-request (a stopped league, a timeout) is not news.
        self._httpd.handle_error = lambda request, client_address: None
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def push(self, *items: Scripted) -> MessagesServer:
        with self._lock:
            self.script.extend(items)
        return self

    def start(self) -> MessagesServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> MessagesServer:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    # --- serving ---------------------------------------------------------------------

    def _next(self, body: dict[str, Any]) -> Scripted:
        with self._lock:
            refused = refusal(body)
            if refused is not None:
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
        write_end = max((ends[m] for m in marks), default=0)
        self._cache.update(hashes[m] for m in marks)
        written = {"5m": 0, "1h": 0}  # each breakpoint writes the bytes since the last one
        start = read_end
        for mark in marks:
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


class _Server(ThreadingHTTPServer):
    request_queue_size = 128
    """Many tables in flight connect at once; the default backlog of 5 refuses them."""


def _handler_for(server: MessagesServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length", 0)))
            if self.path.split("?")[0] != "/v1/messages":
                self._send(404, _error("not_found_error", f"no route {self.path}"))
                return
            try:
                body = json.loads(raw)
            except json.JSONDecodeError:
                self._send(400, _error("invalid_request_error", "body is not JSON"))
                return
            with server._lock:
                server.requests.append(
                    Request(
                        raw, body, {k.lower(): v for k, v in self.headers.items()}, time.monotonic()
                    )
                )
            item = server._next(body)
            server._stopping.wait(server.latency)
            if isinstance(item, Hang):
                server._stopping.wait(item.seconds)
                item = Fail(504, "api_error", "the test server hung")
            if isinstance(item, Fail):
                headers = {"retry-after": item.retry_after} if item.retry_after else {}
                self._send(item.status, _error(item.kind, item.message), headers)
            else:
                self._send(200, server._message(body, item))

        def _send(self, status: int, payload: dict, headers: dict | None = None) -> None:
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.send_header("request-id", f"req_test_{len(server.requests):06d}")
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                pass

    return Handler


def made_up_thought(body: dict[str, Any]) -> str:
    """The server's thought for a request whose script gave none: marked with a digest of
    the request, so it is unique to it and the same whatever order requests arrive in."""
    digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]
    return f"{THOUGHT_MARKER}{digest}] Weighing the standing bid."


def _thinking_tokens(block: dict[str, Any]) -> int:
    if block["type"] == "redacted_thinking":
        return 40
    if block["type"] == "thinking":  # the reasoning is billed whether or not it is shown
        return 8 + len(block["thinking"].encode()) // 4
    return 0


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


# --- a legal player, for whole episodes ---------------------------------------------------

_DEAL = re.compile(r"# Your turn \(deal (\d+),")
_LOWEST = re.compile(r"lowest bid quantity (\d+), face (\d+)")
_BIDS_SO_FAR = re.compile(r"\(bid (\d+) of at most \d+\)")
_RECORD_BID = re.compile(r"^(s\d)(?: \(you\))? bids quantity", re.MULTILINE)


def table_player(patience: Callable[[int], int] = lambda deal: 3, talk: bool = True) -> Responder:
    """A responder that always plays legally from what the prompt shows.

    In deal d it challenges once ``patience(d)`` bids stand (when allowed), else
    bids the lowest legal bid; it talks on its bids and keeps a notes line per
    seat counting the bids it has seen, the way a tracking policy would.
    """

    def respond(body: dict[str, Any]) -> Scripted:
        blocks = body["messages"][-1]["content"]
        turn = blocks[-1]["text"]
        record = "".join(block["text"] for block in blocks[:-1])
        standing = _BIDS_SO_FAR.search(turn)
        lowest = _LOWEST.search(turn)
        counts: dict[str, int] = {}
        for seat in _RECORD_BID.findall(record):
            counts[seat] = counts.get(seat, 0) + 1
        notes = "; ".join(f"{seat}: {n} bids seen" for seat, n in sorted(counts.items()))
        reply: dict[str, Any] = {"notes": notes or "nothing seen yet"}
        deal = int(_DEAL.search(turn)[1])
        if lowest is None or (standing and int(standing[1]) >= patience(deal)):
            return tool_call({"action": "challenge", **reply})
        quantity, face = int(lowest[1]), int(lowest[2])
        reply |= {"action": "bid", "quantity": quantity, "face": face}
        if talk:
            reply["say"] = f"I have plenty of {face}s."
        return tool_call(reply)

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
    import os
    import subprocess

    parser = argparse.ArgumentParser(description="A loopback Messages API that plays legally.")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per answer")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND to run against it")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    port = 0 if command and args.port == 8765 else args.port
    server = MessagesServer(responder=table_player(), port=port, latency=args.latency).start()
    if command:
        env = os.environ | {"ANTHROPIC_API_KEY": "loopback", "ANTHROPIC_BASE_URL": server.url}
        try:
            raise SystemExit(subprocess.run(command, env=env).returncode)
        finally:
            server.stop()
    print(f"serving the Messages API on {server.url} (Ctrl-C stops)", flush=True)
    try:
        server._thread.join()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
