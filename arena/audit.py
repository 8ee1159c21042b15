"""Running the audit reporters over a finished event log.

One function, :func:`run_audit`, serves the runner, ``arena audit LOG`` and the
tests, so an episode's ``results.audit`` and the audit of its saved log are equal
by construction: both read the same records, minus any ``audit`` lines a
previous run appended. What the engine already knows of them (the records as the
Python engine made them, the compiled engine's tallies) comes in explicitly, in an
:class:`AuditContext`, and only spares reading the log: the values are the same.
The rule for where sections land is uniform: reporter ``name``'s section is
``results.audit[name]``; reporters run in name order, and a name registered
twice is refused at registration, naming both plugins.

Flags are the one section the host reads: each entry of the ``flags`` section
becomes an ``audit`` event at the log's tail, so a replay shows it without
recomputing. A reporter that raises costs only its own section, which becomes
an ``"error: ..."`` string; the episode and the other sections stand.

The pooled audit (many episodes) is the reporters' business too: a reporter
registered with ``pool=`` turns many episodes' results into one section. The
audit is handed those results and never reads a league itself: whoever reads one
(``arena audit --league``) hands over its stored results, and saved logs are
audited here into the same shape (``seats`` and ``audit``), so both sources pool
the same numbers. That keeps the audit a layer below the league and the runner.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import orjson

from arena.eventlog import LogError, LogRecords, log_lines, parse_line
from arena.events import Audit, EpisodeSettled, to_line
from arena.logs import get_logger
from arena.outputs import Outputs
from arena.plugins import Reporter

FLAGS_SECTION = "flags"

log = get_logger(__name__)


def play_records(records: Sequence[dict[str, Any]]) -> Sequence[dict[str, Any]]:
    """The log without the audit lines a previous run appended: what reporters read.

    A :class:`LogRecords` without such lines is handed on as it is, so a long
    episode's reporters still read it a chunk at a time."""
    if isinstance(records, LogRecords) and not records.has_audit:
        return records
    return [record for record in records if record["type"] != Audit.TYPE]


@attrs.frozen(eq=False)
class LogFigure:
    """A figure of one log that several reporters read, made once per audit
    (:meth:`AuditContext.figure`); called on plain records, it is simply computed."""

    compute: Callable[[Sequence[dict[str, Any]]], Any]
    reads_made: bool = False
    """``compute`` reads a list as it reads a tuple, and a header's seats only for their
    number, so it may read the records as the Python engine made them (:class:`AuditContext`)."""

    def __call__(self, records: Sequence[dict[str, Any]]) -> Any:
        if isinstance(records, AuditContext):
            return records.figure(self)
        return self.compute(records)


def per_log(compute: Callable[[list], Any], *, reads_made: bool = False) -> LogFigure:
    """``compute(records)`` as a :class:`LogFigure`: made once per audit however many
    reporters ask for it (so they must not mutate the records it reads)."""
    return LogFigure(compute, reads_made)


@attrs.define(eq=False)
class AuditContext(Sequence[dict[str, Any]]):
    """One episode as the audit reads it: its records, and what is already known of them.

    It is a sequence of the records (without audit lines), so a reporter that takes
    ``records`` reads it as any log; the :func:`per_log` figures find here what spares
    them reading it. Each figure is made at most once per context.
    """

    records: Sequence[dict[str, Any]] = attrs.field(converter=play_records)
    made: list[dict[str, Any]] | None = None
    """The same log's records as the Python engine made them, before encoding
    (:meth:`arena.eventlog.EventLog.take_made`): a ``reads_made`` figure reads these
    instead of parsing the log back."""
    known: Mapping[LogFigure, Any] = attrs.field(factory=dict)
    """Figures the engine worked out as it played (the compiled engine's C table keeps the
    soft-play tallies), by the figure each is the value of: each equals what that figure
    makes of the records."""
    _figures: dict[LogFigure, Any] = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self._figures = dict(self.known)

    def __len__(self) -> int:
        return len(self.records)

    def __getitem__(self, index):
        return self.records[index]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.records)

    def figure(self, figure: LogFigure) -> Any:
        """``figure``'s value for this log: known, or made once from the records (or from
        the records as made, for a figure that reads them alike)."""
        if figure not in self._figures:
            alike = figure.reads_made and self.made is not None
            self._figures[figure] = figure.compute(self.made if alike else self)
        return self._figures[figure]


def run_audit(
    reporters: Iterable[Reporter], episode: Sequence[dict[str, Any]] | AuditContext
) -> dict[str, Any]:
    """Every reporter's section, by name, as plain JSON values.

    ``episode`` is the finished log's records, or an :class:`AuditContext` of them that
    carries what the engine already knows; every reporter is handed the context.
    """
    context = episode if isinstance(episode, AuditContext) else AuditContext(episode)
    computed = {r.name: _computed(r.report, context) for r in _by_name(reporters)}
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
    kept, last = [], None
    for number, line in log_lines(path):
        kind = parse_line(line, f"{path}:{number}")["type"]
        if kind != Audit.TYPE:
            kept.append(line.decode("utf-8"))
            last = kind
    if last != EpisodeSettled.TYPE:
        raise LogError(f"{path}: the episode has no result line; not appending audit events")
    text = "".join(line + "\n" for line in [*kept, *(to_line(event) for event in events)])
    with Outputs() as outputs:  # the log is rewritten on purpose: it is the one output
        outputs.write(path, text)
