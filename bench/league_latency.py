"""A model league at API latency: how many tables one machine keeps in flight.

A loopback stand-in for OpenAI's chat completions (its own process, asyncio, HTTP/1.1
keep-alive, a listen backlog for the burst) answers every request a legal move after
``--latency`` seconds. ``arena league run`` plays tables of four ``openai:`` seats
against it, the tables in flight set by ``--executor``, ``--workers`` and
``--concurrency``. Each table has one request in flight at a time, so the ideal is
``tables in flight / latency`` requests per second.

The league has exactly as many tables as are in flight, of ``--deals`` deals each (20,
the default episode: about 80 requests, nearly three minutes a table at 2 s). Figures
are taken over ``--window`` seconds starting ``--warm`` seconds after the first request,
with every table playing: requests per second against ideal, the league's CPU per
request (its process and its workers, from /proc), their RSS and threads, and the
stand-in's own CPU. The league is then killed; it would only play on.

    python bench/league_latency.py --tables-in-flight 64 256 1024 2048 --workers 2

The file-descriptor limit is raised to its hard limit (each seat's connection, and the
stand-in's, is a descriptor); run with ``ulimit -n`` high enough for the largest count.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from model_player import legal_move, split_prompt  # noqa: E402  (the tests' legal player)

POLICIES = ("honest", "bluffer", "tracker", "policies/honest.md")
TICKS = os.sysconf("SC_CLK_TCK")


# --- the stand-in ---------------------------------------------------------------------------


def completion(body: dict, number: int) -> bytes:
    """A ``chat.completion`` naming a legal move, as a tool call when tools are offered."""
    messages = [m for m in body["messages"] if m.get("role") == "user"]
    content = messages[-1]["content"]
    text = content if isinstance(content, str) else "".join(p.get("text", "") for p in content)
    move = legal_move(*split_prompt(text))
    message: dict = {"role": "assistant", "content": None, "refusal": None, "annotations": []}
    if body.get("tools"):
        name = body["tools"][0]["function"]["name"]
        message["tool_calls"] = [
            {
                "id": f"call_{number}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(move)},
            }
        ]
        finish = "tool_calls"
    else:
        message["content"] = json.dumps(move)
        finish = "stop"
    prompt_tokens = len(text) // 4
    return json.dumps(
        {
            "id": f"chatcmpl-{number}",
            "object": "chat.completion",
            "created": 1764900000,
            "model": body.get("model", ""),
            "choices": [
                {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": 20,
                "total_tokens": prompt_tokens + 20,
            },
        }
    ).encode()


class StandIn:
    """Serves until killed; appends each request's arrival time to ``arrivals``."""

    def __init__(self, latency: float, arrivals: Path):
        self.latency = latency
        self.arrivals = arrivals.open("a", buffering=1)
        self.served = 0

    async def connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                body = json.loads(await reader.readexactly(length))
                self.served += 1
                self.arrivals.write(f"{time.monotonic():.4f}\n")
                await asyncio.sleep(self.latency)
                answer = completion(body, self.served)
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                    b"content-length: %d\r\n\r\n%s" % (len(answer), answer)
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def serve(self, sock: socket.socket) -> None:
        server = await asyncio.start_server(self.connection, sock=sock, backlog=8192)
        async with server:
            await server.serve_forever()


def serve(port_file: Path, latency: float, arrivals: Path) -> None:
    raise_descriptor_limit()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8192)
    port_file.write_text(str(sock.getsockname()[1]))
    asyncio.run(StandIn(latency, arrivals).serve(sock))


# --- the league and its figures -------------------------------------------------------------


def raise_descriptor_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def family(pid: int) -> list[int]:
    """``pid`` and its children (the league's worker processes)."""
    found = [pid]
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry))
    return found


def cpu_seconds(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / TICKS


def status(pids: list[int], field: str) -> int:
    total = 0
    for pid in pids:
        try:
            lines = Path(f"/proc/{pid}/status").read_text().splitlines()
        except OSError:
            continue
        for line in lines:
            if line.startswith(field + ":"):
                total += int(line.split()[1])
    return total


def arrivals_in(path: Path) -> list[float]:
    try:
        return [float(line) for line in path.read_text().split()]
    except (OSError, ValueError):
        return []


def measure(args, in_flight: int) -> dict:
    work = Path(tempfile.mkdtemp(prefix="league-latency"))
    arrivals = work / "arrivals"
    port_file = work / "port"
    stand_in = subprocess.Popen(
        [sys.executable, __file__, "serve", str(port_file), str(args.latency), str(arrivals)]
    )
    try:
        while not port_file.exists() or not port_file.read_text():
            time.sleep(0.05)
        url = f"http://127.0.0.1:{port_file.read_text()}/v1"
        pool = ",".join(f"openai:{p}?model=bench&base_url={url}" for p in POLICIES)
        executor = ["--executor", args.executor, "--concurrency", str(in_flight)]
        if args.executor == "process":
            executor += ["--workers", str(min(args.workers, in_flight))]
        tables = max(in_flight, 4)
        command = [sys.executable, "-m", "arena.cli", "league", "run", "--pool", pool]
        command += ["--tables", str(tables), "--deals", str(args.deals), "--seed", "1"]
        command += ["--db", str(work / "l.sqlite"), "--json", *executor]
        env = os.environ | {"ARENA_OPENAI_TIMEOUT": str(args.latency * 10)}
        league = subprocess.Popen(
            command,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
        errors: list[bytes] = []
        threading.Thread(target=lambda: errors.append(league.stderr.read()), daemon=True).start()
        try:
            window = sample_window(args, league, arrivals, stand_in.pid)
        finally:  # the tables are far from done: the figures are in, the league is not needed
            if league.poll() is None:
                os.killpg(league.pid, signal.SIGKILL)
            league.wait()
        if window is None:
            raise SystemExit(f"league failed ({league.returncode}): {b''.join(errors)[-2000:]!r}")
    finally:
        stand_in.kill()
        stand_in.wait()
    requests, seconds, cpu, stand_in_cpu, rss, threads = window
    rate = requests / seconds
    ideal = in_flight / args.latency
    return {
        "tables in flight": in_flight,
        "requests/s": round(rate, 1),
        "ideal": round(ideal, 1),
        "of ideal": round(rate / ideal, 3),
        "CPU ms/request": round(1000 * cpu / requests, 2),
        "league cores": round(cpu / seconds, 2),
        "stand-in cores": round(stand_in_cpu / seconds, 2),
        "RSS MB": round(rss / 1024),
        "threads": threads,
    }


def sample_window(args, league: subprocess.Popen, arrivals: Path, stand_in: int):
    """Figures between ``--warm`` s after the first request and ``--tail`` s before the
    league's tables run out (its last round), read while it plays."""
    while not arrivals_in(arrivals) and league.poll() is None:
        time.sleep(0.1)
    first = arrivals_in(arrivals)[0] if arrivals_in(arrivals) else None
    if first is None:
        return None
    time.sleep(max(0.0, first + args.warm - time.monotonic()))
    pids = family(league.pid)
    start = (time.monotonic(), len(arrivals_in(arrivals)), cpu_seconds(pids))
    start_stand_in = cpu_seconds([stand_in])
    time.sleep(args.window)
    pids = family(league.pid)
    end = (time.monotonic(), len(arrivals_in(arrivals)), cpu_seconds(pids))
    rss, threads = status(pids, "VmRSS"), status(pids, "Threads")
    stand_in_cpu = cpu_seconds([stand_in]) - start_stand_in
    if league.poll() is not None:
        return None  # it stopped: its error is the figure
    return (end[1] - start[1], end[0] - start[0], end[2] - start[2], stand_in_cpu, rss, threads)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "serve":
        serve(Path(sys.argv[2]), float(sys.argv[3]), Path(sys.argv[4]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables-in-flight", type=int, nargs="+", default=[64, 256, 1024, 2048])
    parser.add_argument("--executor", default="process", choices=("thread", "process"))
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    parser.add_argument("--latency", type=float, default=2.0)
    parser.add_argument("--deals", type=int, default=20, help="per table (the default episode)")
    parser.add_argument("--warm", type=float, default=15.0)
    parser.add_argument("--window", type=float, default=20.0)
    args = parser.parse_args()
    raise_descriptor_limit()
    print(f"# latency {args.latency} s, {args.executor}, workers {args.workers}, "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")  # fmt: skip
    for in_flight in args.tables_in_flight:
        print(json.dumps(measure(args, in_flight)), flush=True)


if __name__ == "__main__":
    main()
