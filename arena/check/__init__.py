"""Every reader verifies a log before trusting it.

:func:`load_checked` is the one way a reader (audit, pooled audit, league import,
replay, report) gets a log's records: it reads the file, replays it through the
rules (:func:`verify`) and refuses it with the first violation in one line. An
incomplete log (no ``result`` line) is refused unless the caller reads it as
partial; ``unchecked`` skips the replay, for forensics, and the caller must say
so in its output (it still refuses what no reader can read: a value not of its
JSON type, a seat or face the table lacks, a header :mod:`arena.check.header` refuses).
:func:`check_results` confirms a results document describes exactly the log's bytes,
and :func:`distinct_episodes` drops copies of one episode from a pooled set.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from arena.check.digest import episode_key, log_digest
from arena.check.header import header_problem
from arena.check.verify import Violation, _shape_error, installed_registry, verify
from arena.eventlog import LogError, read_numbered
from arena.plugins import Registry

__all__ = [
    "Violation",
    "check_file",
    "check_results",
    "distinct_episodes",
    "installed_registry",
    "load_checked",
    "refuse_bad_header",
    "verify",
]


def load_checked(
    path: str | Path,
    *,
    unchecked: bool = False,
    partial: bool = False,
    registry: Registry | None = None,
) -> list[dict[str, Any]]:
    """The log's records, once they pass :func:`verify`; ``LogError`` naming the first
    violation (file, line, rule, what was expected) otherwise."""
    if unchecked:
        return _readable(path)
    records, violations = check_file(path, registry=registry, partial=partial)
    if violations:
        first = violations[0]
        more = f" (and {len(violations) - 1} more: arena check {path})" if violations[1:] else ""
        raise LogError(f"{path}:{first.line}: {first.rule}: {first.message}{more}")
    return records


def refuse_bad_header(header: dict[str, Any], source: str | Path, line: int = 1) -> None:
    """A one-line ``LogError`` (``SOURCE:LINE: RULE: why``) for a header out of its format
    (:mod:`arena.check.header`): for a reader that does not replay the log, such as an
    unchecked read or a league's stored logs, before it sizes anything by the header."""
    problem = header_problem(header)
    if problem is not None:
        rule, message = problem
        raise LogError(f"{source}:{line}: {rule}: {message}")


SLOT_KEYS = ("slot", "bidder", "winner", "loser", "opener")
"""The fields that name a seat: a reader indexes its tables by them."""
BY_SLOT_KEYS = ("hands", "points", "score")
"""The fields that hold one entry per seat."""


def _readable(path: str | Path) -> list[dict[str, Any]]:
    """An unchecked read's records: the rules are not replayed, but a value no reader can
    compute with (text for a number, a seat the table lacks, a header out of the engines'
    range, which would size a reader's tables past memory) is refused in one line."""
    numbered = read_numbered(path)
    line, header = numbered[0]
    refuse_bad_header(header, path, line)
    for line, record in numbered:
        problem = _shape_error(record) or _off_the_table(record, header)
        if problem is not None:
            raise LogError(
                f"{path}:{line}: unreadable even unchecked ({record['type']} line: {problem})"
            )
    return [record for _line, record in numbered]


def _off_the_table(record: dict[str, Any], header: dict[str, Any]) -> str | None:
    """Why a record names a seat, face or deal its header's table does not have, or ``None``."""
    seats = len(header["seats"])
    for key in SLOT_KEYS:
        if key in record and not 0 <= record[key] < seats:
            return f"{key} {record[key]} is not a seat of the {seats}-seat table"
    for key in BY_SLOT_KEYS:
        if key in record and len(record[key]) != seats:
            return f"{key} holds {len(record[key])} entries for {seats} seats"
    if "face" in record and record["face"] not in header["symbols"]:
        return f"face {record['face']} is not one of the symbols {header['symbols']}"
    if record.get("deal", 0) < 0:
        return f"deal {record['deal']} is negative"
    return None


def check_file(
    path: str | Path, *, registry: Registry | None = None, partial: bool = False
) -> tuple[list[dict[str, Any]], list[Violation]]:
    """The log's records and every violation, numbered by the file's own lines."""
    numbered = read_numbered(path)
    records = [record for _line, record in numbered]
    lines = [line for line, _record in numbered]
    return records, verify(records, registry=registry, partial=partial, lines=lines)


def check_results(log_path: str | Path, results_path: str | Path) -> list[Violation]:
    """Whether the results document at ``results_path`` describes exactly this log's bytes."""
    try:
        data = Path(log_path).read_bytes()
        results = json.loads(Path(results_path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise LogError(f"{results_path}: cannot read results ({exc.__class__.__name__})") from None
    if not isinstance(results, dict) or "logSha256" not in results:
        return [Violation(0, "digest", f"{results_path} carries no logSha256")]
    actual = log_digest(data)
    if results["logSha256"] != actual:
        return [
            Violation(
                0,
                "digest",
                f"{results_path} describes a log with SHA-256 {results['logSha256']}; "
                f"{log_path} has {actual}",
            )
        ]
    return []


def distinct_episodes(
    logs: Iterable[tuple[str, list[dict[str, Any]]]],
) -> tuple[list[tuple[str, list[dict[str, Any]]]], list[str]]:
    """Each episode once, in order, and one warning line per later copy that was dropped.

    Two logs are one episode when their header and play lines are the same (audit lines
    aside): pooling both would count its seats twice.
    """
    seen: dict[str, str] = {}
    kept, warnings = [], []
    for path, records in logs:
        key = episode_key(records)
        if key in seen:
            warnings.append(f"{path} is the same episode as {seen[key]}; counted once")
            continue
        seen[key] = str(path)
        kept.append((path, records))
    return kept, warnings
