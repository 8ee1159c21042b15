"""What every loopback API server of the tests shares: a real HTTP server on 127.0.0.1.

``messages_server`` (Anthropic's Messages API) and ``chat_server`` (OpenAI's chat
completions) each answer their own wire; this module holds only what is the same for
both: the threaded server and its lifecycle, the record of every request a test reads,
a JSON reply, and running one command against a server from the command line.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import attrs


@attrs.frozen
class Request:
    """One request as the server received it."""

    body: bytes
    json: dict[str, Any]
    headers: dict[str, str]
    """Names in lower case."""
    arrived: float
    """``time.monotonic()`` when the body had been read."""
    path: str = ""
    """The request's path, without its query."""

    def host_facts(self) -> list[str]:
        """What the request tells of the machine that sent it: each ``x-stainless-*``
        header (the SDKs' telemetry), and this machine's Python version, architecture or
        system where any header's value names it."""
        told = [name for name in self.headers if name.startswith("x-stainless")]
        values = " ".join(self.headers.values())
        facts = (platform.python_version(), platform.machine(), platform.system())
        return told + [fact for fact in facts if fact in values]


@attrs.frozen
class Hang:
    """Say nothing for ``seconds`` (or until the server stops)."""

    seconds: float


POLL = 0.05
"""Seconds between the serving loop's looks for a stop: ``stop()`` waits up to this long
(the standard library's half second made every test that starts a server half a second
longer)."""


class _Server(ThreadingHTTPServer):
    request_queue_size = 128
    """Many tables in flight connect at once; the default backlog of 5 refuses them."""


class LoopbackServer:
    """The lifecycle every loopback API shares: start it (or use it as a context manager),
    point a client at :attr:`url`, read :attr:`requests`, stop it. A subclass gives the
    handler class that answers its wire (:meth:`handler`)."""

    def __init__(self, port: int = 0, latency: float = 0.0):
        self.latency = latency
        """Seconds every request waits before its answer, as a live API's would."""
        self.requests: list[Request] = []
        """Every request the wire's handler recorded, in order of arrival."""
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = _Server(("127.0.0.1", port), self.handler())
        self._httpd.daemon_threads = True
        # A client that hangs up mid-request (a stopped league, a timeout) is not news.
        self._httpd.handle_error = lambda request, client_address: None
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": POLL}, daemon=True
        )

    def handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self):
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def record(self, raw: bytes, body: dict[str, Any], headers: Any, path: str) -> Request:
        request = Request(
            raw, body, {k.lower(): v for k, v in headers.items()}, time.monotonic(), path
        )
        with self._lock:
            self.requests.append(request)
        return request

    def pause(self, seconds: float) -> None:
        """Wait ``seconds``, or less if the server stops meanwhile."""
        self._stopping.wait(seconds)


class QuietHandler(BaseHTTPRequestHandler):
    """HTTP/1.1 with keep-alive, no access log on stderr."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    """Headers and body go out as two writes; with Nagle's algorithm the body waits for
    the client's delayed ACK of the headers, 40 ms a reply on Linux. Every real API
    server sets ``TCP_NODELAY``, so a reply with no latency set has none."""

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def read_body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("content-length", 0)))

    def send_bytes(
        self, status: int, data: bytes, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        try:
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
            pass

    def send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self.send_bytes(status, json.dumps(payload).encode(), "application/json", headers)


def parse_command_line(
    parser: argparse.ArgumentParser, default_port: int
) -> tuple[argparse.Namespace, list[str], int]:
    """The options every loopback API's command line takes beside its own (``--port``,
    ``--latency``, ``-- COMMAND``), parsed: the options, the command (empty: none) and the
    port to serve on, any free one when a command runs and no port was named."""
    parser.add_argument("--port", type=int, default=default_port)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per answer")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND to run against it")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    port = 0 if command and args.port == default_port else args.port
    return args, command, port


def run_against(server: LoopbackServer, command: list[str], env: dict[str, str]) -> None:
    """Run ``command`` with ``env`` added to this environment while ``server`` answers, then
    stop the server and exit with the command's status."""
    try:
        raise SystemExit(subprocess.run(command, env=os.environ | env).returncode)
    finally:
        server.stop()


def serve_until_interrupted(server: LoopbackServer, what: str) -> None:
    print(f"serving {what} on {server.url} (Ctrl-C stops)", flush=True)
    try:
        server._thread.join()
    except KeyboardInterrupt:
        server.stop()
