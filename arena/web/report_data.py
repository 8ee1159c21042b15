"""What ``arena report`` shows, from a league file or from a list of saved logs.

Both sources end as the same two things: the ``arena league show --json``
document (standings, head-to-head, cost, pooled audit) and the episodes behind
it, each with its log so the report can link a replay. For a league the
document is :func:`arena.league.report.league_report` itself; for logs it is
built by the league's own :func:`~arena.league.report.ranking` and the pooled
audit over the logs, each log counted as its own table. The per-episode figures
(points over deals, rejections, fallbacks, tokens) are read from the logs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import attrs

from arena.audit import logged_episodes, run_pooled
from arena.check import refuse_bad_header
from arena.eventlog import LogError, parse_text
from arena.league.cost import TOKEN_KINDS, seat_tokens
from arena.league.report import ranking
from arena.league.standings import STAND_IN
from arena.league.store import challenge_points, episode_log_text, reading
from arena.plugins import Reporter
from arena.results import usage_by_slot


@attrs.frozen
class Episode:
    """One episode of the report: where it sat, who held each slot, and its log."""

    index: int
    table: int
    entrants: tuple[str, ...]
    """The standings name of each slot (a stand-in is ``NAME (stand-in)``)."""
    records: list[dict[str, Any]] = attrs.field(eq=False, repr=False)
    label: str

    @property
    def result(self) -> dict[str, Any] | None:
        last = [r for r in self.records if r["type"] == "result"]
        return last[-1] if last else None


def league_episodes(path: str | Path) -> Iterator[Episode]:
    """A league file's stored episodes in schedule order, one log in memory at a time."""
    with reading(path) as db:
        slots: dict[int, list[str]] = {}
        for idx, entrant, stand_in in db.execute(
            "SELECT idx, entrant, stand_in FROM seats ORDER BY idx, slot"
        ):
            slots.setdefault(idx, []).append(entrant + (STAND_IN if stand_in else ""))
        episodes = db.execute("SELECT idx, tbl FROM episodes ORDER BY idx").fetchall()
        for idx, table in episodes:
            records = parse_text(episode_log_text(db, idx), f"{path}: episode {idx}")
            refuse_bad_header(records[0], f"{path}: episode {idx}")
            yield Episode(idx, table, tuple(slots[idx]), records, f"episode {idx}")


def log_episodes(logs: Iterable[tuple[str, list[dict[str, Any]]]]) -> list[Episode]:
    """Saved logs as episodes: each its own table, each slot named by its seat spec."""
    return [
        Episode(i, i, tuple(seat["policy"] for seat in records[0]["seats"]), records, str(path))
        for i, (path, records) in enumerate(logs)
    ]


def logs_report(
    episodes: list[Episode], reporters: Iterable[Reporter], sources: list[str]
) -> dict[str, Any]:
    """The league document of saved logs; episodes without a result line are not ranked."""
    finished = [e for e in episodes if e.result is not None]
    if not finished:
        raise LogError("no log has a result line: nothing to rank")
    seats, taken = [], []
    for episode in finished:
        result, names = episode.result, episode.entrants
        for slot, name in enumerate(names):
            row = (result["score"][slot], result["points"][slot], result["dealsPlayed"])
            seats.append((episode.index, episode.table, name, *row))
        for (winner, loser), n in sorted(challenge_points(episode.records).items()):
            taken.append((episode.index, names[winner], names[loser], n))
    reporters = list(reporters)
    pooled = logged_episodes(reporters, [e.records for e in finished])
    header = episodes[0].records[0]
    return {
        "league": {
            "logs": sources,
            "mode": header["mode"],
            "episodesStored": len(finished),
            "unranked": [e.label for e in episodes if e.result is None],
        },
        **ranking(seats, taken),
        "cost": _log_cost(finished),
        "audit": run_pooled(reporters, pooled) if pooled else {},
    }


def _log_cost(episodes: list[Episode]) -> dict[str, Any]:
    """Tokens by entrant from the logs' usage lines; a log names no price, so no dollars."""
    by_entrant: dict[str, dict[str, int]] = {}
    for episode in episodes:
        usage = usage_by_slot(episode.records, len(episode.entrants))
        for name, used in zip(episode.entrants, usage, strict=True):
            tokens = by_entrant.setdefault(name, dict.fromkeys([*TOKEN_KINDS, "total"], 0))
            counts = seat_tokens({"usage": used})
            for kind in TOKEN_KINDS:  # cacheWrite1h is a part of cacheWrite, not more tokens
                tokens[kind] += counts[kind]
                tokens["total"] += counts[kind]
    league = {kind: sum(t[kind] for t in by_entrant.values()) for kind in [*TOKEN_KINDS, "total"]}
    return {
        "tokens": league,
        "usd": None,
        "byEntrant": {name: {"tokens": t, "usd": None} for name, t in sorted(by_entrant.items())},
    }


def episode_digest(episode: Episode) -> dict[str, Any]:
    """What the report plots of one episode, per slot: points after each deal, the
    final score, rejected replies, fallbacks and faults (rule 11), and tokens."""
    seats = len(episode.entrants)
    points, after_deal = [0] * seats, []
    counts = {kind: [0] * seats for kind in ("rejected", "fallbacks", "faults")}
    for record in episode.records:
        kind = record["type"]
        if kind == "deal":
            after_deal.append(list(points))
        elif kind == "challenge":
            points[record["winner"]] += 1
            points[record["loser"]] -= 1
            after_deal[-1] = list(points)
        elif kind == "rejected":
            counts["rejected"][record["slot"]] += 1
        elif kind == "fault":
            counts["faults"][record["slot"]] += 1
        if kind in ("bid", "challenge") and record.get("fallback"):
            counts["fallbacks"][record["slot"]] += 1
    usage = usage_by_slot(episode.records, seats)
    result = episode.result
    return {
        "index": episode.index,
        "table": episode.table,
        "label": episode.label,
        "entrants": list(episode.entrants),
        "score": result["score"] if result else None,
        "points": list(points),
        "pointsAfterDeal": after_deal,
        "tokens": [_total(seat_tokens({"usage": used})) for used in usage],
        **counts,
    }


def _total(tokens: dict[str, int]) -> int:
    return sum(tokens[kind] for kind in TOKEN_KINDS)
