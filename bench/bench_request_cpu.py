"""The harness's CPU per model request, whole requests, over one long episode of each wire.

One episode of four model seats (``claude:`` or ``openai:``) is played in this
process against the tests' loopback API (``tests/messages_server.py`` or
``tests/chat_server.py``), run as its own process with no latency, so its CPU is
not counted. Every request is the arena's whole work for it: the engine's turn,
the prompt, the SDK call and HTTP on loopback, reading the reply, the log. Each
seat's ``decide`` is wrapped to note the process's CPU clock (all threads) and the
deal as each decision starts; a figure is the CPU between the first and the last
decision of a band of deals over the decisions between, so table set-up and the
read-out after play are outside it.

    python bench/bench_request_cpu.py --wire openai --deals 160
    python bench/bench_request_cpu.py --wire claude --deals 160
    python bench/bench_request_cpu.py --wire openai --floor     # the SDK's own share
    python bench/bench_request_cpu.py --wire claude --floor

``--floor`` times what the SDK alone costs, as the baseline in the same run: the same
request (the episode's last decision's) sent 300 times by the client's ``post``, the
call the seats make (OpenAI: the SDK encoding the body; Claude: the body encoded whole
by ``request_json.encoded``, and beside it the typed
``messages.with_raw_response.create`` the seat made before), then by the SDK's HTTP
client directly, with nothing of the arena around. The seats themselves encode only
what their requests did not repeat (``arena_plugins.model_seat.request_json``).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERVERS = {"claude": "tests/messages_server.py", "openai": "tests/chat_server.py"}
POLICIES = ("honest", "bluffer", "tracker", "policies/honest.md")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def seats(wire: str, url: str) -> list[str]:
    if wire == "claude":
        return [f"claude:{p}?model=claude-haiku-4-5" for p in POLICIES]
    return [f"openai:{p}?model=bench&base_url={url}/v1" for p in POLICIES]


def noted_decisions(wire: str, notes: list[tuple[int, float]]) -> None:
    """Wrap the wire's seat class so each decision notes (deal, process CPU) as it starts."""
    if wire == "claude":
        from arena_plugins.claude.seat import ClaudeSeat as Seat
    else:
        from arena_plugins.openai_chat.seat import OpenAISeat as Seat
    decide = Seat.decide

    def noted(self, view):
        notes.append((view.deal, time.process_time()))
        return decide(self, view)

    Seat.decide = noted


def capture_bodies(wire: str) -> list[dict]:
    """Every request the wire's seats send, as sent: a chat-completions body, or the
    keyword arguments of ``messages.create``."""
    if wire == "claude":
        from arena_plugins.claude import seat as claude

        sent: list[dict] = []
        create = claude.create_message

        def kept_message(client, request, *args, **kwargs):
            sent.append(request)
            return create(client, request, *args, **kwargs)

        claude.create_message = kept_message
        return sent
    from arena_plugins.openai_chat import seat

    bodies: list[dict] = []
    post = seat.post_completion

    def kept(client, content, headers):
        bodies.append(json.loads(content))
        return post(client, content, headers)

    seat.post_completion = kept
    return bodies


def band(notes: list[tuple[int, float]], first: int, last: int) -> tuple[int, float]:
    """Decisions started in deals ``first``..``last`` and their CPU per decision (µs)."""
    inside = [cpu for deal, cpu in notes if first <= deal <= last]
    if len(inside) < 2:
        return len(inside), float("nan")
    return len(inside), 1e6 * (inside[-1] - inside[0]) / (len(inside) - 1)


def floor(wire: str, url: str, body: dict, calls: int = 300) -> None:
    """CPU per call of the SDK call the seat makes, and of the SDK's bare HTTP client, on
    ``body``."""
    import httpx2

    if wire == "claude":
        import anthropic

        from arena_plugins.model_seat.request_json import encoded

        client = anthropic.Anthropic(base_url=url, api_key="loopback", max_retries=0)
        headers = {"x-api-key": "loopback", "anthropic-version": "2023-06-01"}
        sends = {
            "the SDK's create": lambda: (
                client.messages.with_raw_response.create(**body).http_response.content
            ),
            "the SDK's post": lambda: (
                client.post("/v1/messages", cast_to=httpx2.Response, content=encoded(body)).content
            ),
            "its HTTP client alone": lambda: (
                client._client.post(f"{url}/v1/messages", json=body, headers=headers).content
            ),
        }
    else:
        import openai

        client = openai.OpenAI(base_url=f"{url}/v1", api_key="loopback", max_retries=0)
        sends = {
            "the SDK's post": lambda: (
                client.post("/chat/completions", cast_to=httpx2.Response, body=body).content
            ),
            "its HTTP client alone": lambda: (
                client._client.post(f"{url}/v1/chat/completions", json=body).content
            ),
        }
    size = len(json.dumps(body)) // 1024
    for name, send in sends.items():
        send()
        start = time.process_time()
        for _ in range(calls):
            send()
        each = 1e6 * (time.process_time() - start) / calls
        print(f"{name:22} {each:,.0f} us CPU a call ({size} KiB body, {calls} calls)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wire", choices=SERVERS, default="openai")
    parser.add_argument("--deals", type=int, default=160)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--floor", action="store_true", help="then time the SDK alone")
    args = parser.parse_args()
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, str(ROOT / SERVERS[args.wire]), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    os.environ.update(ANTHROPIC_API_KEY="loopback", ANTHROPIC_BASE_URL=url)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        from arena.plugins import load
        from arena.runner import EpisodeRequest, run_episode
        from arena.seats import SeatSpec

        notes: list[tuple[int, float]] = []
        noted_decisions(args.wire, notes)
        host = load()
        request = EpisodeRequest(
            seat_specs=tuple(SeatSpec.parse(s) for s in seats(args.wire, url)),
            deals=args.deals,
            seed=args.seed,
            talk=True,
        )
        if args.floor:
            bodies = capture_bodies(args.wire)
        results, _ = run_episode(host, request)
        if args.floor:
            floor(args.wire, url, bodies[-1])
    finally:
        server.kill()
        server.wait()
    fallbacks = sum(seat.fallbacks for seat in results.seats)
    print(f"# {args.wire}, {args.deals} deals, {len(notes)} decisions, {fallbacks} fallbacks")
    last = args.deals - 1
    tenth = max(args.deals // 10, 1)
    for name, (first, end) in {
        "first tenth": (0, tenth - 1),
        "middle tenth": (last // 2 - tenth // 2, last // 2 + tenth // 2),
        "last tenth": (last - tenth + 1, last),
        "whole episode": (0, last),
    }.items():
        count, cpu = band(notes, first, end)
        print(f"{name:14} deals {first}-{end}: {count} decisions, {cpu:,.0f} us CPU each")


if __name__ == "__main__":
    main()
