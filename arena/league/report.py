"""What a stored league says: standings, head-to-head and cost, as JSON, tables and CSV.

Everything here reads the league file only (never writes it), so ``arena league
show`` works while the league is still running, and any tool can rebuild the
same figures from the schema in docs/league.md. ``league_report`` is the JSON
``arena league show --json`` prints; its keys are an interface.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from rich import box
from rich.table import Table
from rich.text import Text

from arena.audit import run_pooled
from arena.figures import fixed
from arena.league.config import league_rounds
from arena.league.cost import TOKEN_KINDS, UNPRICED_PREFIX, USAGE_KEYS
from arena.league.looks import ALPHA, league_alpha, settled
from arena.league.schedule import DUPLICATE_SCHEDULE, paired
from arena.league.standings import (
    STAND_IN,
    TOO_FEW,
    TOO_FEW_NOTE,
    Partners,
    SeatRow,
    Tables,
    head_to_head,
    paired_interval,
    partners,
    standings,
)
from arena.league.store import (
    StoreError,
    checked_rows,
    episode_log_text,
    has_column,
    reading,
    stored_results,
)
from arena.plugins import Reporter
from arena.results import cache_read_share
from arena.spreadsheet import safe_row
from arena.terminal_text import cell


def _entrant(seats: str) -> str:
    """SQL for a seat's standings name: a stand-in never shares its entrant's name."""
    return f"{seats}.entrant || CASE WHEN {seats}.stand_in IS NULL THEN '' ELSE '{STAND_IN}' END"


def league_report(path: str | Path, reporters: list[Reporter] = ()) -> dict[str, Any]:
    """Standings, head-to-head and cost of a league file (and its pooled audit)."""
    with reading(path) as db:
        row = db.execute("SELECT settings FROM league").fetchone()
        if row is None:
            raise StoreError(f"{path}: the league has no finished episodes")
        (settings,) = checked_rows(path, [(json.loads(row[0]),)], [dict])[0]
        seats = checked_rows(
            path,
            db.execute(
                f"SELECT s.idx, e.tbl, {_entrant('s')}, s.score, s.points, e.deals_played"
                " FROM seats s JOIN episodes e USING (idx) ORDER BY s.idx, s.slot"
            ),
            [int, int, str, (int, float), int, int],
        )
        taken = checked_rows(
            path,
            db.execute(
                f"SELECT p.idx, {_entrant('w')}, {_entrant('l')}, p.n FROM points p"
                " JOIN seats w ON w.idx = p.idx AND w.slot = p.winner"
                " JOIN seats l ON l.idx = p.idx AND l.slot = p.loser ORDER BY p.idx"
            ),
            [int, str, str, int],
        )
        partnered = _partners(path, db, settings)
        cost = _cost(db)
        faults = fault_turns(path, db)
        shapes = request_shapes(path, db)
        results = stored_results(path, db)
        stop = _stop(path, db)
    alpha = look_alpha(settings)
    return {
        "league": settings | {"episodesStored": len(results), "lookLevel": 1 - alpha} | stop,
        **ranking(seats, taken, alpha, partnered),
        **(
            {"narrowing": narrowing(seats, settings, partnered)}
            if settings.get("looks", 1) > 1
            else {}
        ),
        **(
            {"separation": separation(seats, settings, partnered)}
            if settings.get("separate")
            else {}
        ),
        "cost": cost,
        "faultTurns": faults,
        **({"requestShapes": shapes} if shapes else {}),
        "audit": run_pooled(reporters, results) if results else {},
    }


def _partners(path: str | Path, db, settings: dict[str, Any]) -> Partners | None:
    """Each entrant's partner in each group of a league seated by the paired design
    (:func:`arena.league.schedule.paired`), from its stored seeds and slots; None for any
    other league."""
    seats, entrants = settings.get("seats"), settings.get("entrants")
    if not (
        settings.get("duplicate")
        and settings.get("duplicateSchedule") == DUPLICATE_SCHEDULE
        and isinstance(seats, int)
        and isinstance(entrants, dict)
        and paired(seats, len(entrants), settings.get("allowRepeat", False))
    ):
        return None
    rows = checked_rows(
        path,
        db.execute(
            f"SELECT e.idx, e.tbl, e.seed, s.slot, {_entrant('s')}"
            " FROM seats s JOIN episodes e USING (idx) ORDER BY s.idx, s.slot"
        ),
        [int, int, int, int, str],
    )
    return partners(rows, tuple(entrants))


def look_alpha(settings: dict[str, Any]) -> float:
    """The two-sided level of each look the stored league took (:mod:`arena.league.looks`)."""
    return league_alpha(
        settings.get("tables", 1),
        len(settings.get("entrants", ())),
        settings.get("targetCi"),
        settings.get("separate", False),
    )


def _stop(path: str | Path, db) -> dict[str, Any]:
    """Why the league's last run stopped, as ``stopped`` and ``stoppedAfterTables`` (nothing
    for a league stored before the reason was kept)."""
    if not has_column(db, "stopped", "reason"):
        return {}
    rows = checked_rows(path, db.execute("SELECT reason, tables FROM stopped"), [str, int])
    return {"stopped": rows[0][0], "stoppedAfterTables": rows[0][1]} if rows else {}


def narrowing(
    seats: list[tuple], settings: dict[str, Any], partnered: Partners | None = None
) -> list[dict[str, Any]]:
    """Each entrant's half-width at each look a ``--target-ci`` league took, as it was then:
    the standings of the tables of the rounds played so far, at the league's per-look level,
    drawn as the standings draw them (post-stratified in a paired league, as its stop was)."""
    size, _ = league_rounds(
        settings["tables"], len(settings["entrants"]), settings.get("separate", False)
    )
    played = max((table for _, table, *_ in seats), default=-1) + 1
    found = []
    for end in range(size, min(played, settings["tables"]) + size, size):
        shown = [row for row in seats if row[1] < end]
        table = ranking(shown, [], look_alpha(settings), partnered)["standings"]
        found.append(
            {
                "tables": min(end, played),
                "halfWidth": {s["entrant"]: (s["ci95"][1] - s["ci95"][0]) / 2 for s in table},
            }
        )
    return found


def separation(
    seats: list[tuple], settings: dict[str, Any], partnered: Partners | None = None
) -> list[dict[str, Any]]:
    """Each adjacent pair in the ranking: the higher one's mean score less the lower one's,
    paired by table (the tables both sat at, each entrant's mean score there), with its
    t-interval at the league's per-look level; ``settled`` when that interval excludes 0 or
    lies within the league's target of 0."""
    alpha = look_alpha(settings)
    order = [s["entrant"] for s in ranking(seats, [], alpha, partnered)["standings"]]
    sums: dict[tuple[int, str], list[float]] = {}
    for _, table, name, score, *_ in seats:
        sums.setdefault((table, name), []).append(score)
    means = {key: sum(v) / len(v) for key, v in sums.items()}
    tables = sorted({table for table, _ in means})
    width = settings["targetCi"]
    found = []
    for higher, lower in itertools.pairwise(order):
        both = [t for t in tables if (t, higher) in means and (t, lower) in means]
        differences = [means[t, higher] - means[t, lower] for t in both]
        low, high = paired_interval(differences, alpha)
        found.append(
            {
                "higher": higher,
                "lower": lower,
                "tables": len(both),
                "difference": float(np.mean(differences)) if both else 0.0,
                "ci95": [low, high],
                "settled": settled(low, high, width),
            }
        )
    return found


def ranking(
    seats: list[tuple],
    taken: list[tuple],
    alpha: float = ALPHA,
    partnered: Partners | None = None,
) -> dict[str, Any]:
    """``standings`` and ``headToHead`` of seat rows and the points taken between entrants.

    ``seats``: (episode, table, entrant, score, points, deals played), one per seat;
    ``taken``: (episode, winner entrant, loser entrant, points); ``partnered``: a paired
    league's partners (its intervals are then post-stratified by them). Shared by a league
    file and a list of logs (``arena report``), so both rank by the same statistics.
    """
    tables = [table for _, table, *_ in seats]
    duplicate = len({idx for idx, *_ in seats}) > len(set(tables))
    groups = Tables(tables, duplicate, alpha, partnered)
    rows = [
        SeatRow(idx, table, name, score, points) for idx, table, name, score, points, _ in seats
    ]
    seated = sorted({(idx, table, name, deals) for idx, table, name, _, _, deals in seats})
    return {
        "standings": [s.to_json() for s in standings(rows, groups)],
        "headToHead": [h.to_json() for h in head_to_head(taken, seated, groups)],
    }


def _cost(db) -> dict[str, Any]:
    columns = "SUM(input_tokens), SUM(output_tokens), SUM(cache_read_tokens),"
    columns += " SUM(cache_write_tokens), SUM(usd)"
    source = "price_source" if has_column(db, "seats", "price_source") else "NULL"
    unpriced_row = f"{source} LIKE '{UNPRICED_PREFIX}%'"  # no price source is ever like it
    # Whether some of the calls are unpriced, and whether some are priced (a model called
    # and a price found for it): the dollars are the priced part's, and with none, unknown.
    calls = f"COALESCE(MAX({unpriced_row}), 0), COALESCE(MAX(model IS NOT NULL"
    calls += f" AND NOT COALESCE({unpriced_row}, 0)), 0)"
    *tokens, usd, unpriced, priced = db.execute(f"SELECT {columns}, {calls} FROM seats").fetchone()
    by_entrant = {}
    for name, *counts, spent, some_unpriced, some_priced in db.execute(
        f"SELECT {_entrant('seats')}, {columns}, {calls} FROM seats GROUP BY 1 ORDER BY 1"
    ):
        tokens_of = _tokens(counts)
        by_entrant[name] = {
            "tokens": tokens_of,
            "usd": _priced_part(spent, some_unpriced, some_priced),
            "cacheReadShare": _cache_read_share(tokens_of),
            "unpriced": bool(some_unpriced),
        }
    by_price = [  # a model no price covers has unknown dollars: None, never 0
        {
            "model": model,
            "source": named,
            "tokens": _tokens(counts),
            "usd": None if unpriced_source else spent or 0.0,
        }
        for model, named, *counts, spent, unpriced_source in db.execute(
            f"SELECT model, {source}, {columns}, COALESCE({unpriced_row}, 0) FROM seats"
            " WHERE model IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2"
        )
    ]
    return {
        "tokens": _tokens(tokens),
        "usd": _priced_part(usd, unpriced, priced),
        "unpriced": bool(unpriced),
        "cacheReadShare": _cache_read_share(_tokens(tokens)),
        "byEntrant": by_entrant,
        "byPrice": by_price,
    }


def _priced_part(usd: float | None, unpriced: int, priced: int) -> float | None:
    """Dollars as the JSON gives them: ``None`` when every call was unpriced (unknown,
    never $0); with some priced, the priced part (beside ``"unpriced": true``); 0.0 for
    seats that called no model."""
    return None if unpriced and not priced else usd or 0.0


def fault_turns(path: str | Path, db) -> dict[str, int]:
    """Each entrant's turns rule 11's fallback (bayes) played because its seat could not be
    reached (an API that stayed down, a seat that failed to start): the seat's ``faults``
    in its episode's results, since a fault ends the asking for that turn."""
    rows = checked_rows(
        path,
        db.execute(
            f"SELECT {_entrant('s')}, COALESCE(SUM(json_extract(r.value, '$.faults')), 0)"
            " FROM seats s JOIN episodes e USING (idx), json_each(e.results, '$.seats') r"
            " WHERE json_extract(r.value, '$.slot') = s.slot GROUP BY 1 ORDER BY 1"
        ),
        [str, int],
    )
    return dict(rows)


def request_shapes(path: str | Path, db) -> dict[str, dict[str, int]]:
    """Each entrant's model calls per request shape (its seats' ``shapes`` in their
    episodes' results, :func:`arena.results.shapes_by_slot`), for the entrants whose wire
    has several: which shape a server really took."""
    rows = checked_rows(
        path,
        db.execute(
            f"SELECT {_entrant('s')}, shape.key, SUM(shape.value)"
            " FROM seats s JOIN episodes e USING (idx), json_each(e.results, '$.seats') r,"
            " json_each(r.value, '$.shapes') shape"
            " WHERE json_extract(r.value, '$.slot') = s.slot GROUP BY 1, 2 ORDER BY 1, 2"
        ),
        [str, str, int],
    )
    shapes: dict[str, dict[str, int]] = {}
    for entrant, shape, calls in rows:
        shapes.setdefault(entrant, {})[shape] = calls
    return shapes


def _tokens(counts) -> dict[str, int]:
    tokens = {kind: int(n or 0) for kind, n in zip(TOKEN_KINDS, counts, strict=True)}
    return tokens | {"total": sum(tokens.values())}


def _cache_read_share(tokens: dict[str, int]) -> float | None:
    """The episode results' cache-read share (:func:`arena.results.cache_read_share`) over
    an entrant's stored tokens: a Claude entrant near 0 pays full price for every prompt."""
    return cache_read_share({USAGE_KEYS[kind]: tokens[kind] for kind in TOKEN_KINDS})


STOP_REASONS = {"target": "target met", "cap": "cap", "budget": "budget"}
"""How ``league show`` names why a league's last run stopped (see :mod:`arena.league.run`)."""


def means_title(league: dict[str, Any]) -> str:
    """What the standings' mean is, as ``league show`` and ``arena report`` title it.

    Allocated rounds choose each entrant's opponents from the results, so its interval
    holds its mean against those it met, not a balanced schedule's (bench/stopping.py):
    an allocated league's title says so."""
    met = " against the opponents it met (allocated rounds)" if league.get("allocation") else ""
    return f"mean episode score{met}"


def report_tables(report: dict[str, Any], source: str) -> list[Table]:
    """The terminal view: standings, head-to-head, cost."""
    league = report.get("league", {})
    looks = league.get("looks", 1)
    level = (
        f"95% CI over tables, each of {looks} looks at {league['lookLevel']:.2%}"
        if looks > 1
        else ("95% CI over tables")
    )
    stop = STOP_REASONS.get(league.get("stopped", ""), "")
    if stop:
        stop = (
            f"; stopped: {stop} after {league['stoppedAfterTables']} of {league['tables']} tables"
        )
    ranking = Table(
        title=cell(f"league standings ({source}): {means_title(league)}, {level}{stop}"),
        box=box.SIMPLE_HEAD,
    )
    for column in ("rank", "entrant", "episodes", "mean score", "95% CI", "rating", "points"):
        ranking.add_column(column, justify="left" if column == "entrant" else "right")
    for rank, row in enumerate(report["standings"], start=1):
        low, high = row["ci95"]
        ranking.add_row(
            str(rank),
            cell(row["entrant"]),
            str(row["episodes"]),
            fixed(row["meanScore"], 3),
            f"[{fixed(low, 3)}, {fixed(high, 3)}]{_marker(row)}",
            f"{row['rating']:.1f}",
            f"{row['points']:+d}",
        )
    duels = Table(
        title="head-to-head: net points per deal the row entrant took from the column's",
        box=box.SIMPLE_HEAD,
    )
    names = [row["entrant"] for row in report["standings"]]
    duels.add_column("")
    for name in names:
        duels.add_column(cell(name), justify="right")
    cells = {(h["entrant"], h["opponent"]): h for h in report["headToHead"]}
    for a in names:
        line = [cell(a)]
        for b in names:
            h = cells.get((a, b))
            line.append(
                ""
                if h is None
                else f"{fixed(h['pointsPerDeal'], 3, sign=True)}\n"
                f"[{fixed(h['ci95'][0], 2, sign=True)}, {fixed(h['ci95'][1], 2, sign=True)}]"
                + _marker(h)
            )
        duels.add_row(*line)
    if any(_marker(row) for row in [*report["standings"], *report["headToHead"]]):
        ranking.caption = duels.caption = TOO_FEW_NOTE
    spend = Table(title="cost", box=box.SIMPLE_HEAD)
    for column in ("entrant", *TOKEN_KINDS, "cache read", "usd"):
        spend.add_column(column, justify="left" if column == "entrant" else "right")
    cost = report["cost"]
    for name, part in [*cost["byEntrant"].items(), ("league", cost)]:
        share = part.get("cacheReadShare")  # None: no prompt tokens (or stored before it)
        spend.add_row(
            cell(name),
            *(f"{part['tokens'][k]:,}" for k in TOKEN_KINDS),
            "-" if share is None else f"{share:.1%}",
            _dollars(part["usd"], part.get("unpriced", False)),
        )
    priced = Table(title="cost by model and the source of its price", box=box.SIMPLE_HEAD)
    for column in ("model", "price source", "tokens", "usd"):
        priced.add_column(
            column, justify="left" if column in ("model", "price source") else "right"
        )
    for part in cost["byPrice"]:
        priced.add_row(
            cell(part["model"]),
            cell(part["source"] or "(not recorded)"),
            f"{part['tokens']['total']:,}",
            "unpriced" if part["usd"] is None else f"{part['usd']:.4f}",
        )
    return [ranking, duels, spend, priced]


READ_OUT = "decisions"
"""The decision read-out's pooled audit section (docs/decisions.md)."""
READ_OUT_FIGURES = (
    "bluffRate",
    "bidChance",
    "calibrationGap",
    "challengeRate",
    "challengeAccuracy",
    "missedCatches",
    "followsBluffs",
    "targeting",
    "blunderRate",
)
"""The figures ``league show --read-out`` tables, each with its 95% interval."""


def read_out_table(report: dict[str, Any]) -> Table | Text:
    """``league show --read-out``: per entrant, the main figures of the decision read-out,
    each with its 95% interval; a figure whose interval is over too few episodes for the
    bench's measured coverage is marked ``*``. One line when there is no read-out."""
    section = (report.get("audit") or {}).get(READ_OUT)
    if not isinstance(section, dict) or not isinstance(section.get("entrants"), dict):
        why = section if isinstance(section, str) else "no decisions section in the audit"
        return cell(f"decision read-out: {why}")
    table = Table(
        title=cell("decision read-out: value [95% interval] (docs/decisions.md)"),
        box=box.SIMPLE_HEAD,
        caption=cell(f"{section['method']}; * coverage not shown under 20 episodes"),
    )
    table.add_column("figure")
    entrants = sorted(section["entrants"])
    for name in entrants:
        table.add_column(cell(name), justify="right")
    for figure in READ_OUT_FIGURES:
        cells = []
        for name in entrants:
            entry = section["entrants"][name]["figures"][figure]
            if entry["value"] is None:
                cells.append("-")
                continue
            shown = fixed(entry["value"], 3)
            if entry["ci"] is not None:
                low, high = entry["ci"]
                shown += f" [{fixed(low, 3)}, {fixed(high, 3)}]"
            cells.append(shown + ("*" if entry.get("coverage") != "ok" else ""))
        table.add_row(figure, *cells)
    return table


def _dollars(usd: float | None, unpriced: bool) -> str:
    """A cost as shown: ``unpriced`` for calls no price covers, never a silent $0."""
    if not unpriced:
        return f"{usd:.4f}"
    return "unpriced" if usd is None else f"{usd:.4f} + unpriced"


def _marker(row: dict[str, Any]) -> str:
    """``*`` beside an interval over too few tables to trust (rows stored before the
    field was kept have no marker to show)."""
    return "*" if row.get("ciCoverage") == TOO_FEW else ""


def csv_files(report: dict[str, Any]) -> dict[str, str]:
    """standings.csv, head_to_head.csv and cost.csv, by name, as their text."""
    cost = report["cost"]
    flat_cost = [
        {"entrant": name, **part["tokens"], "usd": part["usd"]}
        for name, part in [*cost["byEntrant"].items(), ("(league)", cost)]
    ]
    files = {}
    for name, rows in (
        ("standings.csv", [_flat(row) for row in report["standings"]]),
        ("head_to_head.csv", [_flat(row) for row in report["headToHead"]]),
        ("cost.csv", flat_cost),
    ):
        text = io.StringIO()
        writer = csv.DictWriter(text, fieldnames=list(rows[0]) if rows else ["entrant"])
        writer.writeheader()
        writer.writerows(safe_row(row) for row in rows)  # entrant names are anyone's text
        files[name] = text.getvalue()
    return files


def _flat(row: dict[str, Any]) -> dict[str, Any]:
    """A row with its ``ci95`` pair as two CSV columns."""
    low, high = row["ci95"]
    return {k: v for k, v in row.items() if k != "ci95"} | {"ci95Low": low, "ci95High": high}


def episode_logs(path: str | Path) -> Iterator[tuple[str, str]]:
    """Every stored episode's event log, as (``episode-IDX.jsonl``, its JSON Lines), one at
    a time: for audit, replay, re-scoring."""
    with reading(path) as db:
        for (index,) in db.execute("SELECT idx FROM logs ORDER BY idx").fetchall():
            yield f"episode-{index:05d}.jsonl", episode_log_text(db, index)
