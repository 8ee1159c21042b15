"""Running the audit reporters over a finished event log.

One function, :func:`run_audit`, serves the runner, ``arena audit LOG`` and the
tests, so an episode's ``results.audit`` and the audit of its saved log are equal
by construction: both read the same records, minus any ``audit`` lines a
previous run appended. (A figure that reads lists and tuples alike may read the
records as the Python engine made them instead of their parse: the same values.)
The rule for where sections land is uniform: reporter ``name``'s section is
``results.audit[name]``; reporters run in name order, and a name registered
twice is refused at registration, naming both plugins.

Flags are the one section the host reads: each entry of the ``flags`` section
becomes an ``audit`` event at the log's tail, so a replay shows it without
recomputing. A reporter that raises costs only its own section, which becomes
an ``"error: ..."`` string; the episode and the other sections stand.

The pooled audit (many episodes) is the reporters' business too: a reporter
registered with ``pool=`` turns many episodes' results into one section. The
episodes come from a league's store, or from saved logs audited here into the
same shape (``seats`` and ``audit``), so both sources pool the same numbers.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import orjson

from arena.eventlog import LogError, LogRecords, log_lines, parse_line
from arena.events import Audit, EpisodeSettled, to_line
from arena.league.store import league_results
from arena.logs import get_logger
from arena.outputs import Outputs
from arena.plugins import Reporter

FLAGS_SECTION = "flags"

log = get_logger(__name__)


_made: tuple[Sequence[dict[str, Any]], list[dict[str, Any]]] | None = None
"""While :func:`run_audit` runs with ``made``: the records the reporters read, and ``made``."""


def per_log(compute: Callable[[list], Any], *, reads_made: bool = False) -> Callable[[list], Any]:
    """``compute(records)`` made once per log however many reporters ask for it.

    :func:`run_audit` hands every reporter the same records (which reporters must
    not mutate), so the result is kept by their identity; only the latest log's.
    ``once.known(records, value)`` keeps a result worked out as the log was written
    (the compiled engine tallies as it plays), which must equal ``compute(records)``.
    With ``reads_made``, ``compute`` reads a list as it reads a tuple, and a header's
    seats only for their number, so it may read the records as made (see :func:`run_audit`).
    """
    last: tuple[list, Any] | None = None

    @functools.wraps(compute)
    def once(records):
        nonlocal last
        held = last
        if held is None or held[0] is not records:
            made = _made
            source = made[1] if reads_made and made is not None and made[0] is records else records
            held = last = (records, compute(source))
        return held[1]

    def known(records, value) -> None:
        nonlocal last
        last = (records, value)

    once.known = known
    return once


def play_records(records: Sequence[dict[str, Any]]) -> Sequence[dict[str, Any]]:
    """The log without the audit lines a previous run appended: what reporters read.

    A :class:`LogRecords` without such lines is handed on as it is, so a long
    episode's reporters still read it a chunk at a time."""
    if isinstance(records, LogRecords) and not records.has_audit:
        return records
    return [record for record in records if record["type"] != Audit.TYPE]


def run_audit(
    reporters: Iterable[Reporter],
    records: Sequence[dict[str, Any]],
    made: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Every reporter's section, by name, as plain JSON values.

    ``made`` is the same log's records as the Python engine made them, before encoding
    (:meth:`arena.eventlog.EventLog.take_made`): the computations that read them alike
    (``per_log(..., reads_made=True)``) read those, which spares parsing the log back;
    every reporter is still handed ``records``.
    """
    global _made
    played = play_records(records)
    _made = None if made is None else (played, made)
    try:
        computed = {r.name: _computed(r.report, played) for r in _by_name(reporters)}
    finally:
        _made = None
    sections = _plain_sections(computed)
    for name, section in sections.items():
        if _failed(section):
            log.warning("audit reporter failed", reporter=name, error=section)
    return sections


def run_pooled(reporters: Iterable[Reporter], episodes: list[dict[str, Any]]) -> dict[str, Any]:
    """Every pooling reporter's section over many episodes' results, by name.

    A failed section is the string ``"error: ..."``, as in :func:`run_audit`; the
    caller decides how to report it (see :func:`failures`).
    """
    return _plain_sections(
        {r.name: _computed(r.pool, episodes) for r in _by_name(reporters) if r.pool}
    )


def failures(sections: dict[str, Any]) -> list[str]:
    """``name: error: ...`` for every section a reporter failed to produce."""
    return [f"{name}: {section}" for name, section in sections.items() if _failed(section)]


def logged_episodes(
    reporters: Iterable[Reporter], logs: Iterable[list[dict[str, Any]]]
) -> list[dict]:
    """Saved logs' records as the results a league would have stored: seats and audit."""
    reporters = list(reporters)
    return [
        {"seats": records[0]["seats"], "audit": run_audit(reporters, records)} for records in logs
    ]


def league_episodes(path: str | Path) -> list[dict]:
    """A league's stored results, in schedule order."""
    return league_results(path)


def _by_name(reporters: Iterable[Reporter]) -> list[Reporter]:
    return sorted(reporters, key=lambda r: r.name)


def _computed(compute, argument) -> Any:
    try:
        return compute(argument)
    except Exception as exc:  # a broken reporter costs its section, never the episode
        return _failure(exc)


def _failure(exc: Exception) -> str:
    """The section of a reporter that failed: ``"error: "`` and the exception's first line."""
    return "error: " + f"{type(exc).__name__}: {exc}".splitlines()[0]


def _plain_sections(computed: dict[str, Any]) -> dict[str, Any]:
    """Every section as plain JSON values (tuples become lists, keys strings, no NaN).

    The round trip makes the episode's audit and the saved log's audit the same
    values. All sections make it in one encode; only when that fails is each section
    tried alone, so the one that cannot be JSON costs its own section, not the rest.

    orjson makes the round trip in a fifth of the stdlib's time (a twentieth of a
    20-deal episode), and is taken when what it gives back equals the sections as
    computed: then they held nothing it reads differently from the strict stdlib
    encoder (a NaN comes back as null, a tuple as a list, an enum as its value; an
    int key or a long int it refuses), and the stdlib would give the same values.
    """
    try:
        plain = orjson.loads(orjson.dumps(computed))
        if plain == computed:
            return plain
    except orjson.JSONEncodeError:
        pass
    try:
        return json.loads(_STRICT.encode(computed))
    except Exception:  # some section is not JSON: find which, below
        return {name: _plain(section) for name, section in computed.items()}


def _plain(section: Any) -> Any:
    try:
        return json.loads(_STRICT.encode(section))
    except Exception as exc:  # a section that is not JSON is that reporter's failure
        return _failure(exc)


_STRICT = json.JSONEncoder(allow_nan=False)
"""``json.dumps(..., allow_nan=False)``, built once."""


def _failed(section: Any) -> bool:
    return isinstance(section, str) and section.startswith("error: ")


def audit_events(sections: dict[str, Any]) -> list[Audit]:
    """One ``audit`` event per flag, in the order the ``flags`` section lists them."""
    flags = sections.get(FLAGS_SECTION)
    if not isinstance(flags, list):
        return []
    return [Audit(FLAGS_SECTION, flag) for flag in flags]


def audit_json(sections: dict[str, Any]) -> str:
    """``arena audit --json``: the episode's ``results.audit`` re-serialised the same way."""
    return json.dumps(sections, indent=2)


def rewrite_audit_tail(path: str | Path, events: list[Audit]) -> None:
    """Make the saved log's audit lines exactly ``events``, after ``result``: never duplicated.

    The play lines are kept byte for byte; the file is replaced atomically
    (:mod:`arena.outputs`), so a failure leaves the old log whole. A symlinked log's
    target is replaced; another hard link to it keeps the old lines.
    """
    path = Path(path)
    kept = [
        line.decode("utf-8")
        for number, line in log_lines(path)
        if parse_line(line, f"{path}:{number}")["type"] != Audit.TYPE
    ]
    if not kept or json.loads(kept[-1])["type"] != EpisodeSettled.TYPE:
        raise LogError(f"{path}: the episode has no result line; not appending audit events")
    text = "".join(line + "\n" for line in [*kept, *(to_line(event) for event in events)])
    with Outputs() as outputs:  # the log is rewritten on purpose: it is the one output
        outputs.write(path, text)
