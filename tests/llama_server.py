"""A real llama.cpp server on 127.0.0.1, for the real-server tests: llama-cpp-python's own
(``python -m llama_cpp.server``, from PyPI's ``llama-cpp-python[server]``, compiled from its
sdist on install), serving the tiny model ``tests/tiny_gguf.py`` writes. Nothing is
downloaded and nothing but 127.0.0.1 is used.

How llama-cpp-python 0.3.36 answers the requests an ``openai:`` seat makes (read in its
source, ``llama_cpp/server/types.py``, ``errors.py`` and ``llama_chat_format.py``, and seen
from this model):

- **A forced tool** (``tool_choice`` naming a function): honoured. The function's
  ``parameters`` become a grammar (``LlamaGrammar.from_json_schema``) and the completion
  comes back as that tool's call (``finish_reason`` ``tool_calls``, ``content`` null). A
  schema with ``maxLength`` 2000 or more kills the server (SIGSEGV in the grammar
  builder, the request's connection closed with no answer); 1000 works.
- **``tool_choice`` ``auto``** (and ``required``: only a named choice is read): the tools
  go to the chat template and the model writes text; no grammar, no tool call parsed.
- **``response_format`` ``json_schema``**: refused with a **500**, its request validator's
  words (``Input should be 'text' or 'json_object'``, at ``response_format.type``).
  ``json_object`` with a ``schema`` key is its own (non-OpenAI) way to a grammar.
- **Plain text**: answered.
- **``max_tokens``** caps the output (``finish_reason`` ``length``);
  **``max_completion_tokens``** is not a field it knows, and is ignored in silence.

The chat format is the GGUF's own template (``chat_template.default``) unless
``chat_format=`` names one of llama-cpp-python's (``chatml-function-calling``, ...).

The server runs under this interpreter, or the one ``ARENA_LLAMA_SERVER_PYTHON`` names (it
is another program: ``tox -e min`` runs the arena at its lowest releases against the
server the newest run compiled).

llama.cpp's own ``llama-server`` (:func:`native_llama_server`), built from the sources
vendored in the same sdist, answers otherwise (seen from this model):

- with ``--jinja`` (its default): a named ``tool_choice`` is **ignored**, with only a line
  in its own log (``Wrong type supplied for parameter 'tool_choice', using default value:
  ... type must be string, but is object``): the reply is the model's text, no tool call
  (``auto`` and ``required`` too, as this model writes no ``<tool_call>`` block).
  ``response_format`` ``json_schema`` is taken and held to the schema by a grammar.
- with ``--no-jinja``: any request with ``tools`` is a **500**, ``tools param requires
  --jinja flag``; ``json_schema`` is still taken (200, grammar-constrained).
- ``max_tokens`` and ``max_completion_tokens`` both cap the reply.
"""

from __future__ import annotations

import contextlib
import http.client
import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

INSTALL = "pip install 'llama-cpp-python[server]' gguf (or: pip install -e '.[test,realserver]')"
MODEL = "tiny"
"""The name the server serves the model under (``--model_alias``)."""
SERVER_MODULES = (
    "llama_cpp",
    "fastapi",
    "uvicorn",
    "sse_starlette",
    "starlette_context",
    "pydantic_settings",
)
"""What ``python -m llama_cpp.server`` imports: llama-cpp-python and its ``[server]`` extra."""


_PROBE = "import importlib.util as u, sys; print(*(m for m in sys.argv[1:] if not u.find_spec(m)))"
"""Prints which of its arguments the interpreter running it cannot import."""
SERVER_PYTHON = "ARENA_LLAMA_SERVER_PYTHON"
"""An interpreter to run the server with, where the tests' own has no llama-cpp-python (the
server is another program: ``tox -e min`` runs the arena at its lowest releases against
the server the newest run compiled, whose fastapi would lift starlette's)."""


def server_python() -> str:
    return os.environ.get(SERVER_PYTHON) or sys.executable


def needed(why_missing: str | None, what: str) -> None:
    """Skip the calling test module, in one line, when ``why_missing`` says its server
    cannot run here; fail it instead where CI must run it (``ARENA_REALSERVER_REQUIRED=1``)."""
    if why_missing is None:
        return
    if os.environ.get("ARENA_REALSERVER_REQUIRED") == "1":
        pytest.fail(f"{what} cannot run: {why_missing}", pytrace=False)
    pytest.skip(why_missing, allow_module_level=True)


def missing() -> str | None:
    """Why the real server cannot run here, in one line; ``None`` when it can."""
    absent = [] if importlib.util.find_spec("gguf") else ["gguf"]
    python = server_python()
    if python == sys.executable:
        absent += [name for name in SERVER_MODULES if importlib.util.find_spec(name) is None]
    else:
        try:
            found = subprocess.run(
                [python, "-c", _PROBE, *SERVER_MODULES], capture_output=True, text=True, timeout=60
            )
            absent += (
                found.stdout.split() if found.returncode == 0 else [f"{python} (runs no Python)"]
            )
        except OSError as error:
            absent.append(f"{python} ({error.strerror})")
    if absent:
        return f"the real llama.cpp server needs {', '.join(absent)}: {INSTALL}"
    return None


@attrs.define
class LlamaServer:
    """A running ``python -m llama_cpp.server``: its address and process; its stderr is
    kept in a file, and shown by :meth:`why` when a test fails."""

    url: str
    """``http://127.0.0.1:PORT``; the OpenAI-compatible API is under ``/v1``."""
    process: subprocess.Popen
    stderr_path: Path

    @property
    def base_url(self) -> str:
        return self.url + "/v1"

    def alive(self) -> bool:
        return self.process.poll() is None

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def why(self, lines: int = 40) -> str:
        """The server's state and the end of its stderr, for an assertion's message."""
        state = "running" if self.alive() else f"exited with {self.process.returncode}"
        tail = "\n".join(self.stderr().splitlines()[-lines:])
        return f"llama_cpp.server {state}; its stderr ends:\n{tail}"

    def seat(self, policy: str = "honest", **settings: Any) -> str:
        """An ``openai:`` seat on this server."""
        query = {"model": MODEL, "base_url": self.base_url, **settings}
        return f"openai:{policy}?" + "&".join(f"{k}={v}" for k, v in query.items())

    def post(self, body: dict[str, Any], timeout: float = 120) -> tuple[int | None, Any]:
        """``POST /v1/chat/completions`` with ``body``: the status and the parsed body (or its
        text when not JSON); ``(None, reason)`` when the server closed the connection."""
        return self.request("POST", "/v1/chat/completions", json.dumps(body).encode(), timeout)

    def request(
        self, method: str, path: str, body: bytes | None = None, timeout: float = 10
    ) -> tuple[int | None, Any]:
        host, port = self.url.removeprefix("http://").split(":")
        connection = http.client.HTTPConnection(host, int(port), timeout=timeout)
        headers = {"Content-Type": "application/json"} if body is not None else {}
        try:
            connection.request(method, path, body, headers)
            reply = connection.getresponse()
            raw = reply.read()
        except (OSError, http.client.HTTPException) as error:
            return None, repr(error)
        finally:
            connection.close()
        try:
            return reply.status, json.loads(raw)
        except ValueError:
            return reply.status, raw.decode(errors="replace")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def server_command(model: Path, port: int, chat_format: str | None = None) -> list[str]:
    """The command line: the model, loopback only, a context for the arena's longest
    prompts at one token a character, a fixed seed, one thread (the machine is shared)."""
    command = [
        server_python(), "-m", "llama_cpp.server",
        "--model", str(model),
        "--model_alias", MODEL,
        "--host", "127.0.0.1",
        "--port", str(port),
        "--n_ctx", "32768",
        "--seed", "1",
        "--n_threads", "1",
        "--n_threads_batch", "1",
    ]  # fmt: skip
    if chat_format is not None:
        command += ["--chat_format", chat_format]
    return command


def quiet_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for the server and the arena: no proxy, no hub, no key."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.lower().endswith("_proxy") and not name.startswith(("OPENAI_", "HF_"))
    }
    env.update(HF_HUB_OFFLINE="1", NO_PROXY="127.0.0.1", ANTHROPIC_API_KEY="")
    env.update(extra or {})
    return env


@contextlib.contextmanager
def llama_server(
    model: Path,
    log_dir: Path,
    chat_format: str | None = None,
    env: dict[str, str] | None = None,
    startup: float = 120.0,
) -> Iterator[LlamaServer]:
    """llama-cpp-python's server on a free loopback port, serving ``model``: started, waited
    for until it lists its model, yielded, stopped. A server that exits or does not answer
    within ``startup`` seconds fails with its stderr."""
    port = free_port()
    with _serving(server_command(model, port, chat_format), port, log_dir, env, startup) as up:
        yield up


@contextlib.contextmanager
def _serving(
    command: list[str], port: int, log_dir: Path, env: dict[str, str] | None, startup: float
) -> Iterator[LlamaServer]:
    stderr_path = log_dir / f"{Path(command[0]).name}_{port}.err"
    with stderr_path.open("wb") as stderr:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=stderr,
            stderr=subprocess.STDOUT,
            env=quiet_env(env),
        )
    server = LlamaServer(f"http://127.0.0.1:{port}", process, stderr_path)
    try:
        deadline = time.monotonic() + startup
        while True:
            status, _ = server.request("GET", "/v1/models", timeout=2)
            if status == 200:
                break
            if not server.alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start: {server.why()}")
            time.sleep(0.2)
        yield server
    finally:
        process.terminate()  # uvicorn waits for a request still generating: not for long
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# --- llama.cpp's own llama-server -------------------------------------------------------

SERVER_BIN = "ARENA_LLAMA_SERVER_BIN"
"""The ``llama-server`` binary to run (else ``llama-server`` on ``PATH``). ``.ci/run`` builds
it from the llama.cpp sources vendored in the same llama-cpp-python sdist."""
BUILD = (
    "build llama-server from the llama.cpp vendored in llama-cpp-python's sdist (.ci/run does) "
    f"and name it in {SERVER_BIN}"
)


def llama_server_bin() -> str | None:
    return os.environ.get(SERVER_BIN) or shutil.which("llama-server")


def missing_llama_server() -> str | None:
    """Why llama.cpp's ``llama-server`` cannot run here, in one line; ``None`` when it can."""
    if importlib.util.find_spec("gguf") is None:
        return f"the real llama-server tests need gguf: {INSTALL}"
    binary = llama_server_bin()
    if binary is None:
        return f"llama-server not found: {BUILD}"
    if not os.access(binary, os.X_OK):
        return f"{binary} is not an executable: {BUILD}"
    return None


def llama_server_command(model: Path, port: int, jinja: bool) -> list[str]:
    """llama-server on loopback, one slot, one thread, offline, with or without its Jinja
    chat templates (without: no tools at all)."""
    return [
        str(llama_server_bin()),
        "--model", str(model),
        "--alias", MODEL,
        "--host", "127.0.0.1",
        "--port", str(port),
        "--ctx-size", "32768",
        "--parallel", "1",
        "--threads", "1",
        "--threads-http", "1",
        "--seed", "1",
        "--offline",
        "--no-webui",
        "--jinja" if jinja else "--no-jinja",
    ]  # fmt: skip


@contextlib.contextmanager
def native_llama_server(
    model: Path,
    log_dir: Path,
    jinja: bool = True,
    env: dict[str, str] | None = None,
    startup: float = 120.0,
) -> Iterator[LlamaServer]:
    """llama.cpp's ``llama-server`` on a free loopback port, as :func:`llama_server`."""
    port = free_port()
    with _serving(llama_server_command(model, port, jinja), port, log_dir, env, startup) as up:
        yield up


# --- whose sockets go where --------------------------------------------------------------

SITECUSTOMIZE = '''
"""Installed by tests/llama_server.py: every socket address this process names, in a file."""
import os, sys

_LOG = os.environ["ARENA_TEST_SOCKET_LOG"]
_EVENTS = {"socket.connect", "socket.bind", "socket.sendto", "socket.getaddrinfo",
           "socket.gethostbyname", "socket.gethostbyaddr", "socket.gethostbyname_ex"}


def _hook(event, args):
    if event not in _EVENTS:
        return
    if event in ("socket.connect", "socket.bind", "socket.sendto"):
        address = args[-1]
    else:
        address = args[0]
    if isinstance(address, tuple):
        address = address[0]
    line = f"{os.getpid()}\\t{event}\\t{address!s}\\n"
    fd = os.open(_LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode("utf-8", "backslashreplace"))
    finally:
        os.close(fd)


sys.addaudithook(_hook)
'''


def socket_audit(directory: Path) -> tuple[dict[str, str], Path]:
    """Environment variables that make every Python process started with them log each
    socket address it connects to, binds, sends to or looks up (an audit hook in a
    ``sitecustomize``), and the log's path."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "sitecustomize.py").write_text(SITECUSTOMIZE)
    log = directory / "sockets.log"
    path = os.pathsep.join(filter(None, (str(directory), os.environ.get("PYTHONPATH"))))
    return {"PYTHONPATH": path, "ARENA_TEST_SOCKET_LOG": str(log)}, log


def sockets_named(log: Path) -> list[tuple[str, str, str]]:
    """(pid, event, address) for each line of a :func:`socket_audit` log."""
    if not log.exists():
        return []
    return [tuple(line.split("\t", 2)) for line in log.read_text().splitlines()]
