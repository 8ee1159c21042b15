"""``arena play --read-out`` and ``arena show --read-out``: the decision read-out's table.

Each row's counts are checked against the log, counted here (bids, challenges chosen, and
the bluff rate: bids with fewer of their face on the table than the quantity)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

SEATS = ("random", "bayes", "planted:overbids", "pressure")


def arena(*args: str) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli", *args], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done


def rows(out: str) -> dict[int, list[str]]:
    """The read-out table's rows by slot: its cells after the policy."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("decision read-out"))
    body = lines[start + 3 : start + 3 + len(SEATS)]
    return {int(line.split()[0]): line.split()[2:] for line in body}


def test_play_and_show_print_one_row_per_seat_counted_from_the_log(tmp_path):
    log = tmp_path / "a.jsonl"
    seats = [arg for seat in SEATS for arg in ("--seat", seat)]
    played = arena("play", "--deals", "30", "--seed", "3", "--log", str(log), "--read-out", *seats)
    shown = arena("show", str(log), "--read-out")
    assert rows(played.stdout) == rows(shown.stdout)
    records = [json.loads(line) for line in log.read_text().splitlines()]
    table = {r["deal"]: [s for h in r["hands"] for s in h] for r in records if r["type"] == "deal"}
    for slot, cells in rows(played.stdout).items():
        bids = [r for r in records if r["type"] == "bid" and r["slot"] == slot]
        chosen = [
            r for r in records if r["type"] == "challenge" and r["slot"] == slot and not r["forced"]
        ]
        false = sum(table[b["deal"]].count(b["face"]) < b["quantity"] for b in bids)
        assert cells[0] == str(len(bids))
        assert cells[1] == f"{false / len(bids):.3f}"
        assert cells[4] == str(len(chosen))
    # Without the flag, no read-out.
    assert "decision read-out" not in arena("show", str(log)).stdout


def test_a_table_without_the_reporter_says_so_in_one_line(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli", "play", "--deals", "2", "--read-out"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "ARENA_BLOCK_PLUGINS": "decisions"},
    )
    assert done.returncode == 0, done.stderr
    assert "decision read-out: no decisions section in the audit" in done.stdout


def test_league_show_read_out_tables_each_entrants_figures_with_their_intervals(tmp_path):
    db = tmp_path / "l.db"
    arena("league", "run", "--pool", "bayes,pressure,random", "--tables", "4", "--deals", "6",
          "--db", str(db), "--executor", "serial")  # fmt: skip
    shown = subprocess.run(
        [sys.executable, "-m", "arena.cli", "league", "show", str(db), "--read-out"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "250"},
    ).stdout
    document = json.loads(arena("league", "show", str(db), "--json").stdout)
    entrants = document["audit"]["decisions"]["entrants"]
    row = next(line for line in shown.splitlines() if line.strip().startswith("bluffRate"))
    for name in ("bayes", "pressure", "random"):
        entry = entrants[name]["figures"]["bluffRate"]
        low, high = entry["ci"]
        # 4 episodes: under the 20 the bench measured coverage at, so marked *.
        assert entry["coverage"] == "too few episodes"
        assert f"{entry['value']:.3f} [{low:.3f}, {high:.3f}]*" in row
    assert "decision read-out" not in arena("league", "show", str(db)).stdout
