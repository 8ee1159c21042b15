"""A league's results in one SQLite file: what was played, what it scored.

Every finished episode is committed as it lands, so an interrupted league loses
at most the episodes in flight and resumes from the file. The league's settings
are stored with it; resuming with different settings is refused.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS league (settings TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS episodes (
    idx INTEGER PRIMARY KEY,
    tbl INTEGER NOT NULL,
    rotation INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    status TEXT NOT NULL,
    deals_played INTEGER NOT NULL,
    results TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS seats (
    idx INTEGER NOT NULL REFERENCES episodes(idx),
    slot INTEGER NOT NULL,
    policy TEXT NOT NULL,
    points INTEGER NOT NULL,
    score REAL NOT NULL,
    fallbacks INTEGER NOT NULL,
    PRIMARY KEY (idx, slot)
);
"""


class StoreError(ValueError):
    """The store file is unusable for this league; one line for the user."""


class LeagueStore:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        try:
            self.db = sqlite3.connect(self.path)
            self.db.executescript(SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{path}: not a league database ({exc})") from None

    def start(self, settings: dict) -> None:
        """Record the league's settings, or check them against a league being resumed."""
        text = json.dumps(settings, sort_keys=True)
        row = self.db.execute("SELECT settings FROM league").fetchone()
        if row is None:
            with self.db:
                self.db.execute("INSERT INTO league VALUES (?)", (text,))
        elif row[0] != text:
            raise StoreError(f"{self.path} holds a league with other settings: {row[0]}")

    def finished(self) -> set[int]:
        return {idx for (idx,) in self.db.execute("SELECT idx FROM episodes")}

    def save(self, index: int, table: int, rotation: int, results: dict) -> None:
        with self.db:
            self.db.execute(
                "INSERT INTO episodes VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    index,
                    table,
                    rotation,
                    results["seed"],
                    results["status"],
                    results["dealsPlayed"],
                    json.dumps(results, sort_keys=True),
                ),
            )
            self.db.executemany(
                "INSERT INTO seats VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (index, s["slot"], s["policy"], s["points"], s["score"], s["fallbacks"])
                    for s in results["seats"]
                ],
            )

    def seat_rows(self) -> list[tuple[str, int, float]]:
        """(policy, points, score) per seat per episode, in episode and slot order."""
        query = "SELECT policy, points, score FROM seats ORDER BY idx, slot"
        return list(self.db.execute(query))

    def close(self) -> None:
        self.db.close()


def league_results(path: str | Path) -> list[dict]:
    """Every finished episode's results JSON, in schedule order; the file is only read."""
    path = Path(path)
    if not path.is_file():
        raise StoreError(f"{path}: no such league database")
    try:
        db = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
        try:
            rows = db.execute("SELECT results FROM episodes ORDER BY idx").fetchall()
        finally:
            db.close()
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path}: not a league database ({exc})") from None
    if not rows:
        raise StoreError(f"{path}: the league has no finished episodes")
    return [json.loads(text) for (text,) in rows]
