"""``arena serve`` as a real subprocess on a free loopback port, for the table-server tests."""

from __future__ import annotations

import http.client
import json
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import attrs


@attrs.define
class Served:
    """A running ``arena serve``: its address, its log directory and its process."""

    url: str
    log_dir: Path | None
    """Where it logs; ``None``: its own private folder."""
    process: subprocess.Popen
    stderr: str = ""
    """What the server wrote on stderr, once it has stopped."""

    def get(self, path: str) -> tuple[int, bytes]:
        try:
            with urllib.request.urlopen(self.url + path.lstrip("/"), timeout=10) as reply:
                return reply.status, reply.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    @property
    def origin(self) -> str:
        """What a browser names this server's own pages by, in ``Origin``."""
        return self.url.rstrip("/")

    def post(self, path: str, body: dict) -> tuple[int, dict]:
        """A POST as the server's own page makes it: JSON, from its own origin."""
        status, reply = self.send("POST", path, json.dumps(body).encode(), self.page_headers())
        return status, json.loads(reply)

    def page_headers(self) -> dict[str, str]:
        return {"Content-Type": "application/json", "Origin": self.origin}

    def send(
        self, method: str, path: str, body: bytes | None = None, headers: dict | None = None
    ) -> tuple[int, bytes]:
        """Any request, headers exactly as given (``Host`` too): the status and the body."""
        address = urllib.parse.urlsplit(self.url)
        connection = http.client.HTTPConnection(address.hostname, address.port, timeout=10)
        try:
            connection.putrequest(method, path, skip_host="Host" in (headers or {}))
            for name, value in (headers or {}).items():
                connection.putheader(name, value)
            if body is not None and "Content-Length" not in (headers or {}):
                connection.putheader("Content-Length", str(len(body)))
            connection.endheaders(body)
            reply = connection.getresponse()
            return reply.status, reply.read()
        finally:
            connection.close()

    def logged(self, timeout: float = 60.0) -> tuple[Path, list[dict]]:
        """The one table log in the log directory, once its result line is written."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for path in self.log_dir.glob("*.jsonl"):
                if any(r["type"] == "result" for r in read_lines(path)):
                    time.sleep(0.2)  # the audit flags trail the result
                    return path, read_lines(path)
            time.sleep(0.05)
        raise AssertionError("no finished table log")


def read_lines(path: Path) -> list[dict]:
    """A JSON Lines file's records, split on newlines only (U+2028 may sit inside a string)."""
    return [json.loads(line) for line in path.read_bytes().split(b"\n") if line]


def serve(tmp: Path, *args: str, log_dir: str | None = "logs", env: dict[str, str] | None = None):
    """Start ``arena serve --port 0`` in ``tmp``, logging to ``tmp/log_dir`` (made by the
    server if missing, kept across restarts; ``None``: no ``--log-dir``); yields a
    :class:`Served`, then stops it with Ctrl-C. ``env``: the server's whole environment
    (default: this one's)."""
    logging = () if log_dir is None else ("--log-dir", log_dir)
    process = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "serve", "--port", "0", *logging, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp,
        env=env,
    )
    line = process.stdout.readline()
    assert line.startswith("arena: serving on http://127.0.0.1:"), line + process.stderr.read()
    served = Served(line.split()[3], None if log_dir is None else tmp / log_dir, process)
    try:
        yield served
    finally:
        process.send_signal(signal.SIGINT)
        try:
            _out, served.stderr = process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            raise
        assert "Traceback" not in served.stderr, served.stderr


class EventReader:
    """A tab's event stream, read in a thread into a list of messages."""

    def __init__(self, served: Served, token: str, headers: dict[str, str] | None = None):
        self.messages: list[dict] = []
        address = urllib.parse.urlsplit(served.url)
        connection = http.client.HTTPConnection(address.hostname, address.port, timeout=120)
        connection.request("GET", f"/api/events/{token}", headers=headers or {})
        self._socket = connection.sock  # shut down to close the tab from another thread
        self._reply = connection.getresponse()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            for raw in self._reply:
                line = raw.decode().rstrip("\n")
                if line.startswith("data: "):
                    self.messages.append(json.loads(line[6:]))
        except (OSError, ValueError):  # closed by the test
            return

    def wait_for(self, kind: str, after: int = 0, timeout: float = 30.0) -> tuple[int, dict]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for index in range(after, len(self.messages)):
                if self.messages[index]["kind"] in (kind, "end"):
                    return index, self.messages[index]
            time.sleep(0.02)
        raise AssertionError(f"no {kind} message")

    def close(self) -> None:
        self._socket.shutdown(socket.SHUT_RDWR)
