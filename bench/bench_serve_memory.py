"""Finished tables leave the table server's memory: its resident size over many tables.

Starts the real ``arena serve`` (no ``--log-dir``: logs go to its private folder),
then starts tables of four bayes seats one after another from "a page" (the
server's own POST, as the setup page sends it), each waited on to its end. The
server's resident memory is read from ``/proc/PID/status`` (``VmRSS``) after the
warm-up tables, then after every further batch. The target: after 100 finished
tables, within 10 % of the warm-up figure (it grew 107 to 289 MB over 80 tables
when every finished table stayed in memory).

    python bench/bench_serve_memory.py                      # 10 warm-up, then 100, 1,000 deals
    python bench/bench_serve_memory.py --tables 20 --deals 200
"""

from __future__ import annotations

import argparse
import http.client
import json
import signal
import subprocess
import sys
import time
import urllib.parse

TARGET_RATIO = 1.1
SEATS = ["bayes"] * 4


def resident_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        line = next(line for line in status if line.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


def post(url: str, path: str, body: dict) -> tuple[int, dict]:
    address = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=60)
    origin = url.rstrip("/")
    headers = {"Content-Type": "application/json", "Origin": origin}
    try:
        connection.request("POST", path, json.dumps(body), headers)
        reply = connection.getresponse()
        return reply.status, json.loads(reply.read())
    finally:
        connection.close()


def get_status(url: str, path: str) -> int:
    address = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=60)
    try:
        connection.request("GET", path)
        reply = connection.getresponse()
        reply.read()
        return reply.status
    finally:
        connection.close()


def play_table(url: str, deals: int, seed: int) -> None:
    """One table, started and waited on until its log is ready (it has ended)."""
    status, table = post(url, "/api/tables", {"seats": SEATS, "deals": deals, "seed": seed})
    if status != 200:
        sys.exit(f"bench_serve_memory: the table was refused: {status} {table}")
    token = table["watch"].rsplit("/", 1)[1]
    while get_status(url, f"/api/log/{token}") != 200:
        time.sleep(0.05)
    while post(url, "/api/tables", {"seats": []})[0] == 409:  # its thread has let go
        time.sleep(0.01)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--deals", type=int, default=1000)
    parser.add_argument("--every", type=int, default=20, help="tables between readings")
    args = parser.parse_args()
    server = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        cwd="/",
    )
    try:
        url = server.stdout.readline().split()[3]
        print(f"at start: {resident_mb(server.pid):.1f} MB")
        started = time.monotonic()
        for seed in range(args.warmup):
            play_table(url, args.deals, seed)
        warm = resident_mb(server.pid)
        print(f"after {args.warmup} warm-up tables: {warm:.1f} MB")
        for done in range(1, args.tables + 1):
            play_table(url, args.deals, args.warmup + done)
            if done % args.every == 0 or done == args.tables:
                print(f"after {done} more tables: {resident_mb(server.pid):.1f} MB", flush=True)
        last = resident_mb(server.pid)
        ratio = last / warm
        met = "met" if ratio <= TARGET_RATIO else "NOT met"
        seconds = time.monotonic() - started
        print(
            f"{args.tables} tables of {args.deals} deals: {warm:.1f} -> {last:.1f} MB, "
            f"{ratio:.3f}x (target at most {TARGET_RATIO}x: {met}), {seconds:.0f} s"
        )
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
