"""What writing outputs safely costs: arena.outputs against a plain write, and a league's check.

- ``pages``: N pages of 100 KB written into a fresh folder (``new``) and then over
  themselves (``replacing``), by ``Path.write_text`` (the baseline: what ``arena
  replay``/``report``/``league export`` did) and by :class:`arena.outputs.Outputs`
  (a hidden temporary file each, renamed into place; a replacement is fsynced
  first). Wall time, since a sync's cost is the disk's, not the CPU's.
- ``league``: the ``PRAGMA quick_check`` every league reader runs when it opens a
  file, against ``league_report`` of the same file (CPU time, best of 3); the
  league is played here first unless ``--league`` names one.

    python bench/bench_outputs.py                    # 200 pages, a 200-table league
    python bench/bench_outputs.py --pages 50 --league big.sqlite
"""

from __future__ import annotations

import argparse
import contextlib
import io
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path

from arena.cli import main as arena
from arena.league.report import league_report
from arena.outputs import Outputs

PAGE = "x" * 100_000


def write_plain(folder: Path, count: int) -> None:
    for index in range(count):
        (folder / f"page-{index}.html").write_text(PAGE)


def write_staged(folder: Path, count: int) -> None:
    with Outputs() as outputs:
        for index in range(count):
            outputs.write(folder / f"page-{index}.html", PAGE)


def wall(write, folder: Path, count: int) -> float:
    started = time.perf_counter()
    write(folder, count)
    return time.perf_counter() - started


def pages(root: Path, count: int) -> None:
    print(f"{count} pages of 100 KB, wall seconds")
    for name, write in (("write_text", write_plain), ("Outputs", write_staged)):
        folder = root / name
        folder.mkdir()
        new = wall(write, folder, count)
        replacing = wall(write, folder, count)
        print(f"  {name:<10}  new {new:6.3f}  replacing {replacing:6.3f}")


def best_cpu(run, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        run()
        best = min(best, time.process_time() - started)
    return best


def league(path: Path) -> None:
    def check():
        db = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
        db.execute("PRAGMA quick_check").fetchall()
        db.close()

    checked = best_cpu(check)
    reported = best_cpu(lambda: league_report(path))
    size = path.stat().st_size / 1e6
    print(f"league {path} ({size:.1f} MB), CPU seconds, best of 3")
    print(f"  quick_check {checked:.4f}  league_report {reported:.4f}"
          f"  ratio {checked / reported:.3f}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--league", type=Path, help="a league file (default: play one)")
    parser.add_argument("--tables", type=int, default=200)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-outputs-", dir="."))
    try:
        pages(root, args.pages)
        db = args.league
        if db is None:
            db = root / "league.sqlite"
            pool = ["--pool", "bayes,pressure,random,bayes", "--deals", "20"]
            with contextlib.redirect_stdout(io.StringIO()):  # the league's own report
                arena(["league", "run", *pool, "--tables", str(args.tables), "--db", str(db),
                       "--json"])  # fmt: skip
        league(db)
    finally:
        shutil.rmtree(root)


if __name__ == "__main__":
    main()
