"""A hostile model server on 127.0.0.1: it records every request and answers each with what a
test scripts, down to the bytes and their timing.

It stands for a server that does not play fair: a reply dripped one byte at a time,
a body of 50 MB or a ``content-length`` of 10**11, a redirect to another origin, an
HTML page, invalid UTF-8, usage that is negative, fractional or has 309 digits, a
Models API answer with ``null`` where an object belongs. Tests reach it under its own
address, or under a foreign host name through ``HTTP_PROXY`` (a plain-HTTP proxy
request names its whole URL, which :attr:`Seen.target` keeps), so a test can see
exactly which host, port and scheme a credential was sent to without leaving the
machine.

An answer is a function of the handler and the request (:data:`Answer`); the
helpers below build the common ones. With no script left, :attr:`HostileServer.then`
answers.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import attrs
from loopback_http import QuietHandler


@attrs.frozen
class Seen:
    """One request as the server received it."""

    method: str
    target: str
    """The request line's target: a path, or a whole URL when it came through as a proxy."""
    headers: dict[str, str]
    """Names in lower case."""
    body: bytes


Answer = Callable[[BaseHTTPRequestHandler, Seen], None]


class HostileServer:
    """Start it (a context manager), script :meth:`push` answers, read :attr:`seen`."""

    def __init__(self, then: Answer | None = None):
        self.script: deque[Answer] = deque()
        self.then = then or raw(404, b'{"error": {"message": "nothing scripted"}}')
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = _Server(("127.0.0.1", 0), _handler_for(self))
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,))
        self._thread.daemon = True

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def push(self, *answers: Answer) -> HostileServer:
        self.script.extend(answers)
        return self

    def wait(self, seconds: float) -> None:
        """Sleep ``seconds``, or less if the server stops meanwhile."""
        self._stopping.wait(seconds)

    def __enter__(self) -> HostileServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()

    def _answer(self, handler: BaseHTTPRequestHandler, seen: Seen) -> None:
        with self._lock:
            self.seen.append(seen)
            answer = self.script.popleft() if self.script else self.then
        answer(handler, seen)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64


def _handler_for(server: HostileServer) -> type[BaseHTTPRequestHandler]:
    class Handler(QuietHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            headers = {name.lower(): value for name, value in self.headers.items()}
            try:
                server._answer(self, Seen(self.command, self.path, headers, body))
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client stopped reading: as it should

        do_GET = do_POST = _serve

    return Handler


# --- answers -------------------------------------------------------------------------------


def raw(
    status: int,
    body: bytes,
    content_type: str = "application/json",
    headers: dict[str, str] | None = None,
) -> Answer:
    """A whole reply at once."""

    def answer(handler: QuietHandler, seen: Seen) -> None:
        handler.send_bytes(status, body, content_type, headers)

    return answer


def as_json(payload: Any, status: int = 200) -> Answer:
    return raw(status, json.dumps(payload).encode())


def redirect(location: str, status: int = 307) -> Answer:
    return raw(status, b"", headers={"location": location})


def drip(body: bytes, every: float, headers_too: bool = False) -> Answer:
    """``body`` one byte every ``every`` seconds (the status line and headers as well, with
    ``headers_too``), each byte flushed: each read of the client's gets its byte well
    within any read timeout."""

    def answer(handler: BaseHTTPRequestHandler, seen: Seen) -> None:
        head = (
            f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\n\r\n"
        ).encode()
        if not headers_too:
            handler.wfile.write(head)
            handler.wfile.flush()
            head = b""
        for byte in head + body:
            handler.wfile.write(bytes([byte]))
            handler.wfile.flush()
            time.sleep(every)

    return answer


def flood(size: int, declared: int | None = None, chunk: int = 1 << 16) -> Answer:
    """``size`` bytes of JSON-looking filler, declaring ``declared`` bytes (``size`` if
    ``None``), or sent chunked with no length at all (``declared=-1``); the server stops
    when the client stops reading."""

    def answer(handler: BaseHTTPRequestHandler, seen: Seen) -> None:
        chunked = declared == -1
        handler.send_response(200)
        handler.send_header("content-type", "application/json")
        if chunked:
            handler.send_header("transfer-encoding", "chunked")
        else:
            handler.send_header("content-length", str(size if declared is None else declared))
        handler.end_headers()
        sent = 0
        block = b" " * chunk
        while sent < size:
            part = block[: size - sent]
            framed = b"%x\r\n%s\r\n" % (len(part), part) if chunked else part
            handler.wfile.write(framed)
            sent += chunk
        if chunked:
            handler.wfile.write(b"0\r\n\r\n")
        handler.close_connection = True

    return answer


# --- what a chat-completions server answers -----------------------------------------------


def completion(
    arguments: Any = None,
    usage: Any = "default",
    content: str | None = None,
    reasoning: str | None = None,
) -> dict[str, Any]:
    """A chat completion whose one choice calls ``act`` with ``arguments`` (a JSON string
    as the API sends it; a dict is encoded), or says ``content``; ``usage`` as given."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if arguments is not None:
        text = arguments if isinstance(arguments, str) else json.dumps(arguments)
        message["tool_calls"] = [
            {"id": "call_1", "type": "function", "function": {"name": "act", "arguments": text}}
        ]
    if reasoning is not None:
        message["reasoning"] = reasoning
    body: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_767_225_600,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if arguments is not None else "stop",
            }
        ],
    }
    if usage == "default":
        usage = {"prompt_tokens": 1000, "completion_tokens": 20, "total_tokens": 1020}
    if usage is not None:
        body["usage"] = usage
    return body


def legal_play(body_of: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> Answer:
    """A chat-completions answer that always plays legally: it opens ``1x6`` when the turn
    says no bid stands, and challenges otherwise. ``body_of(action)`` makes the completion
    (default: :func:`completion` with normal usage)."""

    def answer(handler: BaseHTTPRequestHandler, seen: Seen) -> None:
        request = json.loads(seen.body or b"{}")
        prompt = json.dumps(request.get("messages", ""))
        opening = "No standing bid: you open." in prompt
        action = {"action": "bid", "quantity": 1, "face": 6} if opening else {"action": "challenge"}
        made = body_of(action) if body_of else completion(action)
        raw(200, json.dumps(made).encode())(handler, seen)

    return answer
