"""What a long replay page costs: building it in Python, and opening it in Chromium.

Building is CPU time of ``arena.web.replay.replay_html`` on a saved log, as a
ratio to the CPU time of playing that same episode (both in this run). Opening
is wall time from navigation to the page's ``data-ready`` mark in the system
headless Chromium, as a ratio to opening a small page built the same way (the
browser's own floor); the page test asserts only the functional bound (500
deals under 2 s).

    python bench/replay_page.py                  # 500 and 5000 deals, best of 3
    python bench/replay_page.py --deals 500 --repeat 5
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from browser import chromium_path  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

from arena.eventlog import read_log  # noqa: E402
from arena.plugins import load  # noqa: E402
from arena.runner import EpisodeRequest, run_episode  # noqa: E402
from arena.web.replay import replay_html  # noqa: E402

FLOOR_DEALS = 5


def cpu(action) -> tuple[float, object]:
    started = time.process_time()
    value = action()
    return time.process_time() - started, value


def build(host, folder: Path, deals: int) -> tuple[float, float, Path]:
    """(play CPU s, build CPU s, page path) for one seeded episode of ``deals``."""
    log = folder / f"{deals}.jsonl"
    played, _ = cpu(
        lambda: run_episode(host, EpisodeRequest(seed=11, deals=deals), log_path=log, environ={})
    )
    built, page = cpu(lambda: replay_html(read_log(log), host=host))
    path = folder / f"{deals}.html"
    path.write_text(page, encoding="utf-8")
    return played, built, path


def open_seconds(browser, page: Path, repeat: int) -> float:
    """Best wall time from navigation to the page's ready mark, each in a fresh tab."""
    best = float("inf")
    for _ in range(repeat):
        tab = browser.new_page()
        started = time.perf_counter()
        tab.goto(page.as_uri())
        tab.wait_for_selector("body[data-ready]", state="attached")
        best = min(best, time.perf_counter() - started)
        tab.close()
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, action="append", help="episode lengths")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    lengths = args.deals or [500, 5000]
    host = load({})
    with tempfile.TemporaryDirectory() as where, sync_playwright() as driver:
        folder = Path(where)
        browser = driver.chromium.launch(
            executable_path=chromium_path(), headless=True, args=["--no-sandbox"]
        )
        _, _, floor_page = build(host, folder, FLOOR_DEALS)
        floor = open_seconds(browser, floor_page, args.repeat)
        print(f"floor: {FLOOR_DEALS}-deal page opens in {floor:.3f} s")
        print("deals  page KB  build/play CPU  open s  open/floor")
        for deals in lengths:
            played, built, page = build(host, folder, deals)
            opened = open_seconds(browser, page, args.repeat)
            size = page.stat().st_size / 1024
            print(
                f"{deals:>5}  {size:>7.0f}  {built / played:>14.2f}  {opened:>6.3f}  "
                f"{opened / floor:>10.2f}"
            )
        browser.close()


if __name__ == "__main__":
    main()
