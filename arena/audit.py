"""Running the audit reporters over a finished event log.

One function, :func:`run_audit`, serves the runner, ``arena audit LOG`` and the
tests, so an episode's ``results.audit`` and the audit of its saved log are equal
by construction: both read the same records, minus any ``audit`` lines a
previous run appended. The rule for where sections land is uniform: reporter
``name``'s section is ``results.audit[name]``; reporters run in name order, and
a name registered twice is refused at registration, naming both plugins.

Flags are the one section the host reads: each entry of the ``flags`` section
becomes an ``audit`` event at the log's tail, so a replay shows it without
recomputing. A reporter that raises costs only its own section, which becomes
an ``"error: ..."`` string; the episode and the other sections stand.

The pooled audit (many episodes, by policy) reads each episode's banded facings
either from its event log or from the results a league stored; both become the
same :class:`EpisodeFacings` and go through the one pooling function of the
``collusion_flags`` plugin.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import structlog
from rich.table import Table

from arena.eventlog import LogError, read_log
from arena.events import Audit, EpisodeSettled, to_line
from arena.plugins import Reporter
from arena.store import StoreError, league_results
from arena_plugins.collusion_flags import EpisodeFacings

FLAGS_SECTION = "flags"

log = structlog.get_logger(__name__)


def play_records(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The log without the audit lines a previous run appended: what reporters read."""
    return [record for record in records if record["type"] != Audit.TYPE]


def run_audit(reporters: Iterable[Reporter], records: list[dict[str, Any]]) -> dict[str, Any]:
    """Every reporter's section, by name, as plain JSON values."""
    played = play_records(records)
    sections: dict[str, Any] = {}
    for reporter in sorted(reporters, key=lambda r: r.name):
        try:
            # The round trip makes the section plain JSON (tuples become lists), so
            # the episode's audit and the saved log's audit are the same values.
            sections[reporter.name] = json.loads(
                json.dumps(reporter.report(played), allow_nan=False)
            )
        except Exception as exc:  # a broken reporter costs its section, never the episode
            reason = f"{type(exc).__name__}: {exc}".splitlines()[0]
            log.warning("audit reporter failed", reporter=reporter.name, error=reason)
            sections[reporter.name] = f"error: {reason}"
    return sections


def audit_events(sections: dict[str, Any]) -> list[Audit]:
    """One ``audit`` event per flag, in the order the ``flags`` section lists them."""
    flags = sections.get(FLAGS_SECTION)
    if not isinstance(flags, list):
        return []
    return [Audit(FLAGS_SECTION, flag) for flag in flags]


def audit_json(sections: dict[str, Any]) -> str:
    """``arena audit --json``: the episode's ``results.audit`` re-serialised the same way."""
    return json.dumps(sections, indent=2)


def audit_tables(sections: dict[str, Any], seats: int) -> list[Table | str]:
    """A readable form: one row per ordered pair for every slot-by-slot matrix section,
    one row per seat for every per-slot list, and the other sections as JSON lines."""
    matrices = {n: v for n, v in sections.items() if _is_matrix(v, seats)}
    per_seat = {n: v for n, v in sections.items() if _is_row(v, seats) and n not in matrices}
    pairs = Table(title="per ordered pair (a faces b's bids)")
    for column in ("a", "b", *matrices):
        pairs.add_column(column, justify="right")
    for a in range(seats):
        for b in range(seats):
            if a != b:
                pairs.add_row(str(a), str(b), *(_cell(v[a][b]) for v in matrices.values()))
    seat_table = Table(title="per seat")
    for column in ("slot", *per_seat):
        seat_table.add_column(column, justify="right")
    for slot in range(seats):
        seat_table.add_row(str(slot), *(_cell(v[slot]) for v in per_seat.values()))
    rest = [
        f"{name}: {json.dumps(value)}"
        for name, value in sections.items()
        if name not in matrices and name not in per_seat
    ]
    return [pairs, seat_table, *rest]


def logged_facings(paths: Iterable[str | Path]) -> list[EpisodeFacings]:
    """The pooled audit's input from saved event logs (a bad log fails naming its file)."""
    return [EpisodeFacings.from_records(play_records(read_log(path))) for path in paths]


def league_facings(path: str | Path) -> list[EpisodeFacings]:
    """The pooled audit's input from a league's SQLite file: the results it stored."""
    facings = []
    for index, results in enumerate(league_results(path)):
        try:
            facings.append(EpisodeFacings.from_results(results))
        except KeyError as exc:
            raise StoreError(
                f"{path}: episode {index} has no {exc.args[0]} (played without the audit reporters)"
            ) from None
    return facings


def pooled_tables(report: dict[str, Any]) -> list[Table | str]:
    """A readable pooled audit: a row per ordered pair of policies that faced, one per policy."""
    policies = report["policies"]
    pairs = Table(title="per ordered pair of policies (A faces B's bids)")
    for column in ("A", "B", "faced", "expLoss", "expected", "bias"):
        pairs.add_column(column, justify="right")
    for a, first in enumerate(policies):
        for b, second in enumerate(policies):
            if report["faced"][a][b]:
                figures = (report[name][a][b] for name in ("faced", "expLoss", "expected", "bias"))
                pairs.add_row(first, second, *(_cell(value) for value in figures))
    fields = Table(title="per policy")
    fields.add_column("policy")
    fields.add_column("field", justify="right")
    for policy, value in zip(policies, report["field"], strict=True):
        fields.add_row(policy, _cell(value))
    flags = [f"flag: {json.dumps(flag)}" for flag in report["flags"]] or ["flags: none"]
    return [pairs, fields, *flags, f"power: {json.dumps(report['power'])}"]


def _is_row(value: Any, seats: int) -> bool:
    return (
        isinstance(value, list)
        and len(value) == seats
        and not any(isinstance(x, (list, dict)) for x in value)
    )


def _is_matrix(value: Any, seats: int) -> bool:
    return (
        isinstance(value, list)
        and len(value) == seats
        and all(_is_row(row, seats) for row in value)
    )


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def rewrite_audit_tail(path: str | Path, events: list[Audit]) -> None:
    """Make the saved log's audit lines exactly ``events``, after ``result``: never duplicated.

    The play lines are kept byte for byte; the file is replaced atomically, so a
    failure leaves the old log whole.
    """
    path = Path(path)
    kept = [
        line
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip() and json.loads(line)["type"] != Audit.TYPE
    ]
    if not kept or json.loads(kept[-1])["type"] != EpisodeSettled.TYPE:
        raise LogError(f"{path}: the episode has no result line; not appending audit events")
    text = "".join(line + "\n" for line in [*kept, *(to_line(event) for event in events)])
    temp = None
    try:
        with tempfile.NamedTemporaryFile(
            "w", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.", delete=False
        ) as out:
            temp = out.name
            out.write(text)
        os.chmod(temp, path.stat().st_mode)
        os.replace(temp, path)
    except OSError as exc:
        if temp is not None:
            Path(temp).unlink(missing_ok=True)
        raise LogError(f"{path}: cannot rewrite the audit lines ({exc.strerror or exc})") from None
