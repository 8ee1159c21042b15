"""How much of each Claude prompt is a byte-identical prefix of the same seat's previous one.

Prompt caching pays only for an exact prefix, so the Claude seat lays its
prompt out to grow at the end (``docs/claude-seat.md``). This bench plays a
whole episode with four Claude seats, talk on, against the loopback Messages
API server of the tests (``tests/messages_server.py``, a scripted legal player
that talks on every bid and rewrites its notes every turn), through the real
SDK. For every request the server received it takes ``system`` and ``messages``
in the order the API reads them, serialised compactly from the body as sent,
and measures the share of its bytes that is an exact prefix of the same seat's
previous request. It also reports what the server's prompt-cache model made of
it: the share of input tokens read from the cache.

Target (issue 3): 90% or more from the third deal (deal 2) on.

    python bench/prefix_share.py                 # 20 deals, seed 0
    python bench/prefix_share.py --deals 40 --seed 7 --mode poker
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from messages_server import MessagesServer, table_player  # noqa: E402

from arena.plugins import load  # noqa: E402
from arena.runner import EpisodeRequest, run_episode  # noqa: E402
from arena.seats import SeatSpec  # noqa: E402

TARGET = 0.90
FROM_DEAL = 2
SEATS = ("claude:honest", "claude:bluffer", "claude:tracker", "claude:honest")
_SEAT = re.compile(r"# Table record, as seen by s(\d+)")
_DEAL = re.compile(r"# Your turn \(deal (\d+),")


def prompt_bytes(body: dict) -> bytes:
    """``system`` then ``messages``, as sent, compactly serialised."""
    prompt = {"system": body["system"], "messages": body["messages"]}
    return json.dumps(prompt, separators=(",", ":"), ensure_ascii=False).encode()


def common_prefix(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    low, high = 0, n  # binary search on the longest equal prefix
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def measure(requests) -> list[tuple[int, float]]:
    """(deal, prefix share) for every request after a seat's first."""
    previous: dict[int, bytes] = {}
    rows = []
    for request in requests:
        blocks = request.json["messages"][-1]["content"]
        seat = int(_SEAT.search(blocks[0]["text"])[1])
        deal = int(_DEAL.search(blocks[-1]["text"])[1])
        prompt = prompt_bytes(request.json)
        if seat in previous:
            rows.append((deal, common_prefix(previous[seat], prompt) / len(prompt)))
        previous[seat] = prompt
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mode", default="dice")
    args = parser.parse_args()

    # Deals of 2 to 6 bids before someone calls, varying with the deal number.
    player = table_player(patience=lambda deal: 2 + (deal * 3) % 5)
    with MessagesServer(player) as server:
        environ = {"ANTHROPIC_API_KEY": "bench", "ANTHROPIC_BASE_URL": server.url}
        os.environ.update(environ)
        request = EpisodeRequest(
            mode=args.mode,
            seed=args.seed,
            deals=args.deals,
            talk=True,
            seat_specs=tuple(SeatSpec.parse(spec) for spec in SEATS),
        )
        results, records = run_episode(load({}), request, environ=environ)
        requests = list(server.requests)

    rows = measure(requests)
    usages = [r for r in records if r["type"] == "usage"]
    table = Table(title=f"prefix share, {args.mode} seed {args.seed}, {len(requests)} requests")
    for column in ("deal", "prompts", "mean", "min", "cache-read share of input"):
        table.add_column(column, justify="right")
    for deal in range(args.deals):
        shares = [share for d, share in rows if d == deal]
        used = [u for u in usages if u["deal"] == deal]
        read = sum(u["cacheReadTokens"] for u in used)
        total = sum(u["inputTokens"] + u["cacheReadTokens"] + u["cacheWriteTokens"] for u in used)
        if shares:
            table.add_row(
                str(deal),
                str(len(shares)),
                f"{statistics.mean(shares):.1%}",
                f"{min(shares):.1%}",
                f"{read / total:.1%}" if total else "-",
            )
    console = Console()
    console.print(table)
    late = [share for deal, share in rows if deal >= FROM_DEAL]
    mean = statistics.mean(late)
    verdict = "meets" if mean >= TARGET else "MISSES"
    console.print(
        f"from deal {FROM_DEAL} on: mean {mean:.1%}, min {min(late):.1%} over {len(late)} prompts "
        f"({verdict} the {TARGET:.0%} target); fallbacks "
        f"{sum(seat.fallbacks for seat in results.seats)}",
        highlight=False,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
