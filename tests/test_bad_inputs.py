"""Every bad input the CLI has been handed, one row each: one ``arena: error:`` line.

This is the place where the next bad input goes. Add a :class:`Row` to :data:`ROWS`
naming the command line (``{log}``, ``{league}``, ``{tmp}`` ... stand for the files the
fixtures make), the exit code, a fragment the error line must hold, and which files
are the command's inputs; the test then runs the real ``arena`` CLI and asserts:

- the exit code (2 for a usage error, 1 for a run that failed);
- stderr is exactly one line, starting ``arena: error:`` and holding the fragment;
- no ``Traceback`` anywhere; stdout empty unless the row says what it holds;
- every input file is byte for byte what it was.

Rows come from issue 20's table, each row's ``why`` quoting it. The commands run
in-process (``arena.cli.main``), as tests/test_cli_options.py runs them; ``serve``,
which would serve forever if it accepted its input, runs as a process with a timeout.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import json
import signal
import sqlite3
import subprocess
import sys
import tracemalloc
import zlib
from collections.abc import Callable
from pathlib import Path

import attrs
import pytest

from arena.cli import main
from arena.fast.choice import NOT_BUILT
from arena.league.config import Entrant, LeagueSpec
from arena.league.run import run_league
from arena.league.schedule import fixtures, schedule
from arena.league.store import LeagueStore
from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatSpec

# --- the files the rows damage ---------------------------------------------------------


# --- bounded: what a size that can be served costs -----------------------------------------


@pytest.mark.skipif(NOT_BUILT is not None, reason="the compiled engine plays the long episode")
def test_an_episode_without_a_log_holds_memory_bounded_in_its_deals(host, tmp_path):
    """issue 20: `arena play --deals 99999999999999` with no --log grew without bound
    (540 bytes a deal: 4.3 GB in 20 s). Ten times the deals must not cost more memory:
    a 50,000-deal log is about 27 MB of lines, so keeping them would add some 24 MB."""
    peaks = {}
    for deals in (5_000, 50_000):
        tracemalloc.start()
        results, _records = run_episode(host, EpisodeRequest(deals=deals, engine="compiled"))
        peaks[deals] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peaks[50_000] - peaks[5_000] < 4_000_000, peaks
    # what was spilled reads back as the saved log does: the same bytes, the same audit
    saved, _ = run_episode(
        host, EpisodeRequest(deals=50_000, engine="compiled"), log_path=tmp_path / "g.jsonl"
    )
    assert results.to_json() == saved.to_json()


def test_a_failing_temporary_folder_is_one_error_line(monkeypatch, capsys):
    """The spill of a long log with no file goes to the temporary folder; when it cannot,
    the run stops with one line (exit 1, as a --log write that fails)."""
    monkeypatch.setattr("tempfile.tempdir", "/nonexistent/arena-tmp")
    assert main(["play", "--deals", "20000", "--engine", "python", "--seats", "2"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("arena: error: cannot keep the event log in a temporary file")
    assert err.count("\n") == 1


class FirstLanded(Exception):
    """Raised by the progress callback once the first episode is stored."""


def test_a_league_of_10_18_tables_starts_its_first_table_at_once(host, tmp_path):
    """issue 20: `league run --tables 10^20` built its whole schedule before its first
    episode. The schedule is drawn as it is played, the same draws as a short league's."""
    entrants = (Entrant("b", SeatSpec("bayes")), Entrant("r", SeatSpec("random")))
    table = EpisodeRequest(deals=1, seats=2)
    huge = LeagueSpec(entrants=entrants, tables=10**18, table=table)
    assert huge.episodes == 10**18
    with answers_within(ANSWER_WITHIN):
        first = [next(drawn) for drawn in [fixtures(huge)] * 3]
    assert first == schedule(attrs.evolve(huge, tables=3))

    def stop_at_first(state):
        if state.done:
            raise FirstLanded

    store = LeagueStore(tmp_path / "L.sqlite")
    with pytest.raises(FirstLanded), answers_within(ANSWER_WITHIN):
        run_league(huge, store, host, progress=stop_at_first, environ={})
    assert store.finished() == {0}
    store.close()


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_bytes().split(b"\n") if line]


def _write_records(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def _first_bid(records: list[dict]) -> dict:
    return next(r for r in records if r["type"] == "bid")


MISSING = object()
"""A field value that stands for the field's absence."""


def _with_fields(made, tmp: Path, kind: str, changes: dict) -> Path:
    """The real log with the fields of its first ``kind`` line changed (:data:`MISSING`
    deletes the key)."""
    records = _records(made["log"])
    record = next(r for r in records if r["type"] == kind)
    for key, value in changes.items():
        if value is MISSING:
            del record[key]
        else:
            record[key] = value
    path = tmp / "edited.jsonl"
    _write_records(path, records)
    return path


# Each maker takes (made, tmp) and returns {placeholder: path}; the paths are inputs.
Maker = Callable[[dict, Path], dict[str, Path]]


def _copy(name: str) -> Maker:
    def make(made, tmp):
        path = tmp / made[name].name
        path.write_bytes(made[name].read_bytes())
        return {name: path}

    return make


def _file(name: str, data: bytes) -> Maker:
    """A file ``{file}`` of these bytes."""

    def make(made, tmp):
        path = tmp / name
        path.write_bytes(data)
        return {"file": path}

    return make


def _spoiled(made_file: str, spoil: Callable[[bytes], bytes], name: str) -> Maker:
    """A file ``{file}`` called ``name``: the made file (``log``, ``league``), spoiled."""

    def make(made, tmp):
        return _file(name, spoil(made[made_file].read_bytes()))(made, tmp)

    return make


def _both(*makers: Maker) -> Maker:
    return lambda made, tmp: {k: v for maker in makers for k, v in maker(made, tmp).items()}


def _edited(kind: str, **changes) -> Maker:
    return lambda made, tmp: {"file": _with_fields(made, tmp, kind, changes)}


@attrs.frozen
class Row:
    """One bad input: the command line, what it must answer, and why it is here."""

    argv: tuple[str, ...]
    """The command line; ``{name}`` is a path the maker made, ``{tmp}`` the row's folder."""
    fragment: str | None
    """What the one error line holds; ``None`` when the command must succeed."""
    why: str
    code: int | frozenset[int] = 2
    make: Maker = lambda made, tmp: {}
    stdout: str | None = ""
    """What stdout holds: ``""`` nothing, a fragment it contains, ``None`` unchecked."""
    process: bool = False
    """Run as a process with a timeout (a command that could otherwise serve forever)."""


ROWS: dict[str, Row] = {}


# --- the rows ------------------------------------------------------------------------------

HUGE = "1" + "0" * 23  # 10**23: past every C integer the compiled engine holds
INT_PAST = str(2**31)  # one past a C int: --max-bids' top is 2**31 - 1
LONG_PAST = str(2**63)  # one past a C int64 (and SQLite's INTEGER): --deals' top is 2**63 - 1
POOL = ("league", "run", "--pool", "bayes,random", "--db", "{tmp}/new.sqlite")


def _league_toml(table: str = "", league: str = "tables = 1", **values) -> bytes:
    """A league file of two entrants at two-seat one-deal tables, with ``values`` changed."""
    numbers = {"seats": 2, "deals": 1, **values}
    lines = "".join(f"{key} = {value}\n" for key, value in numbers.items())
    entrants = '[entrants]\nb = "bayes"\nr = "random"\n'
    return f"[league]\n{league}\n[table]\n{lines}{table}\n{entrants}".encode()


ROWS.update(
    {
        # issue 20: "Tracebacks on ... --max-bids 10^23 (OverflowError in the compiled engine)"
        "play --max-bids 10^23": Row(
            ("play", "--deals", "1", "--max-bids", HUGE),
            "argument --max-bids: ",
            "sizes that cannot be served get one error line",
        ),
        "play --max-bids 2^31": Row(
            ("play", "--deals", "1", "--max-bids", INT_PAST),
            f"{INT_PAST} is out of range 1..{2**31 - 1}",
            "a C int holds the compiled engine's bid cap",
        ),
        "play --engine python --max-bids 10^23": Row(
            ("play", "--deals", "1", "--engine", "python", "--max-bids", HUGE),
            "argument --max-bids: ",
            "one range for both engines: a league may play either",
        ),
        "play --deals 2^63": Row(
            ("play", "--deals", LONG_PAST),
            f"argument --deals: {LONG_PAST} is out of range 1..{2**63 - 1}",
            "the compiled engine counts deals in an int64",
        ),
        "serve --max-bids 10^23": Row(
            ("serve", "--max-bids", HUGE, "--port", "0"),
            "argument --max-bids: ",
            "the table server's tables have the same ranges",
        ),
        "league run --max-bids 10^23": Row(
            (*POOL, "--max-bids", HUGE),
            "argument --max-bids: ",
            "a league's tables have the same ranges",
        ),
        "league run --tables 10^20": Row(
            (*POOL, "--tables", "1" + "0" * 20),
            "tables must be a whole number 1 to 9223372036854775807",
            "issue 20: league run --tables 10^20 builds its whole schedule first",
        ),
        "league run --concurrency 10^20": Row(
            (*POOL, "--concurrency", "1" + "0" * 20),
            "concurrency must be a whole number 1 to 4096",
            "each table in flight is a thread: 10**20 of them were started",
        ),
        "league run --workers 10^6": Row(
            (*POOL, "--workers", "1000000"),
            "concurrency must be a whole number 1 to 4096",
            "each worker is a process",
        ),
        "league run --duplicate --tables 2^62": Row(
            (*POOL, "--tables", str(2**62), "--duplicate"),
            "episodes",
            "two rotations of 2**62 tables are more episodes than a league file numbers",
        ),
        "league file: tables 10^20": Row(
            ("league", "run", "{file}", "--db", "{tmp}/new.sqlite"),
            "tables",
            "TOML config values have the same ranges as the options",
            make=_file("league.toml", _league_toml(league="tables = 100000000000000000000")),
        ),
        "league file: max_bids 2^31": Row(
            ("league", "run", "{file}", "--db", "{tmp}/new.sqlite"),
            "max_bids",
            "TOML config values have the same ranges as the options",
            make=_file("league.toml", _league_toml(table=f"max_bids = {2**31}")),
        ),
        "league file: deals 2^63": Row(
            ("league", "run", "{file}", "--db", "{tmp}/new.sqlite"),
            "deals",
            "TOML config values have the same ranges as the options",
            make=_file("league.toml", _league_toml(deals=2**63)),
        ),
        "league file: seats 9": Row(
            ("league", "run", "{file}", "--db", "{tmp}/new.sqlite"),
            "seats",
            "TOML config values have the same ranges as the options",
            make=_file("league.toml", _league_toml(seats=9)),
        ),
        "league file: clock nan": Row(
            ("league", "run", "{file}", "--db", "{tmp}/new.sqlite"),
            "clock",
            "TOML reads nan and inf; a clock must be finite seconds > 0",
            make=_file("league.toml", _league_toml(table="clock = nan")),
        ),
        "league file: clock inf": Row(
            ("league", "run", "{file}", "--db", "{tmp}/new.sqlite"),
            "clock",
            "TOML reads nan and inf; a clock must be finite seconds > 0",
            make=_file("league.toml", _league_toml(table="clock = inf")),
        ),
        "league file: clock a string": Row(
            ("league", "run", "{file}", "--db", "{tmp}/new.sqlite"),
            "clock",
            "a value of the wrong type is named, not a TypeError",
            make=_file("league.toml", _league_toml(table='clock = "soon"')),
        ),
        "league file: concurrency 10^20": Row(
            ("league", "run", "{file}", "--db", "{tmp}/new.sqlite"),
            "concurrency",
            "tables in flight at once is a size too",
            make=_file(
                "league.toml",
                _league_toml(league="tables = 1\n[limits]\nconcurrency = 10000000000000000000000"),
            ),
        ),
        "league file: max_in_flight 0": Row(
            ("league", "run", "{file}", "--db", "{tmp}/new.sqlite"),
            "max_in_flight must be a whole number >= 1, got 0",
            "no Claude request would ever start: the league would stall",
            make=_file(
                "league.toml", _league_toml(league="tables = 1\n[limits]\nmax_in_flight = 0")
            ),
        ),
        "league file: requests_per_minute nan": Row(
            ("league", "run", "{file}", "--db", "{tmp}/new.sqlite"),
            "requests_per_minute must be a finite number > 0, got nan",
            "a rate limit must be a rate",
            make=_file(
                "league.toml",
                _league_toml(league="tables = 1\n[limits]\nrequests_per_minute = nan"),
            ),
        ),
        # issue 20: "a binary league file (UnicodeDecodeError)"
        "league file: binary": Row(
            ("league", "run", "{file}", "--db", "{tmp}/new.sqlite"),
            "not a TOML league file",
            "issue 20: a binary league file raised UnicodeDecodeError",
            make=_file("league.toml", bytes(range(256)) * 4),
        ),
        "league file: not UTF-8": Row(
            ("league", "run", "{file}", "--db", "{tmp}/new.sqlite"),
            "not a TOML league file",
            "one byte that is not UTF-8 in a comment",
            make=_file("league.toml", _league_toml() + b"# caf\xe9\n"),
        ),
        "league file: truncated": Row(
            ("league", "run", "{file}", "--db", "{tmp}/new.sqlite"),
            "not a TOML league file",
            "a file cut short inside a string",
            make=_file("league.toml", _league_toml()[:-5]),
        ),
        "league file: deep arrays": Row(
            ("league", "run", "{file}", "--db", "{tmp}/new.sqlite"),
            "league file",
            "100,000 nested [ raise RecursionError in a recursive parser",
            make=_file("league.toml", b"x = " + b"[" * 100_000 + b"]" * 100_000 + b"\n"),
        ),
        "league file: deep inline tables": Row(
            ("league", "run", "{file}", "--db", "{tmp}/new.sqlite"),
            "league file",
            "100,000 nested inline tables",
            make=_file("league.toml", b"x = " + b"{a = " * 100_000 + b"1" + b"}" * 100_000 + b"\n"),
        ),
        "league file: entrants a list": Row(
            ("league", "run", "{file}", "--db", "{tmp}/new.sqlite"),
            "entrants",
            "a value of the wrong shape is named, not a TypeError",
            make=_file("league.toml", b"entrants = [1, 2]\n"),
        ),
    }
)


def _notes_with(text: str) -> Maker:
    """The real log, its first bid's notes holding ``text``, written by json.dumps with
    ensure_ascii=False: the raw characters, as a writer that does not escape them would."""

    def make(made, tmp):
        records = _records(made["log"])
        _first_bid(records)["notes"] = text
        path = tmp / "notes.jsonl"
        path.write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
        )
        return {"file": path}

    return make


DEEP = b"[" * 100_000 + b"]" * 100_000 + b"\n"
UNCHECKED_ROWS = {
    "a string quantity": (_edited("bid", quantity="3"), "quantity must be an integer, got '3'"),
    "a null slot": (_edited("bid", slot=None), "slot must be an integer, got None"),
    "a float deal": (_edited("bid", deal=0.5), "deal must be an integer, got 0.5"),
    "a slot off the table": (_edited("bid", slot=99), "slot 99 is not a seat of the 4-seat table"),
    "a missing face": (_edited("bid", face=MISSING), "missing ['face']"),
    "a null status": (_edited("result", status=None), "status must be text, got None"),
}
"""issue 20: "`--unchecked` logs with a string quantity (TypeError in the audit)"."""
for what, (make, fragment) in UNCHECKED_ROWS.items():
    for command in ("audit", "show", "replay", "report"):
        output = ("-o", "{tmp}/out.html") if command in ("replay", "report") else ()
        ROWS[f"{command} --unchecked: {what}"] = Row(
            (command, "--unchecked", "{file}", *output),
            fragment,
            "a reader handed a value it cannot compute with refuses it in one line",
            make=make,
        )
for command in ("check", "audit", "show", "replay", "report"):
    output = ("-o", "{tmp}/out.html") if command in ("replay", "report") else ()
    # check prints its verdict on stdout, one line per log, and exits 1
    code, fragment, stdout = (1, None, "damaged.jsonl") if command == "check" else (2, "", "")
    ROWS[f"{command}: 100,000 nested ["] = Row(
        (command, "{file}", *output),
        fragment,
        "issue 20: a log of 100,000 nested [ raised RecursionError",
        code=code,
        make=_file("damaged.jsonl", DEEP),
        stdout=stdout,
    )
    ROWS[f"{command}: not UTF-8"] = Row(
        (command, "{file}", *output),
        fragment,
        "issue 20: recursion-deep or non-UTF-8 inputs",
        code=code,
        make=_spoiled("log", lambda data: data[:-3] + b"\xff}\n", "damaged.jsonl"),
        stdout=stdout,
    )
    ROWS[f"{command}: a binary file"] = Row(
        (command, "{file}", *output),
        fragment,
        "issue 20: any file a user points at",
        code=code,
        make=_file("damaged.jsonl", bytes(range(256)) * 64),
        stdout=stdout,
    )
ROWS["check --results: 100,000 nested ["] = Row(
    ("check", "{log}", "--results", "{file}"),
    "cannot read results (RecursionError)",
    "found by tests/test_fuzz_inputs.py: json.loads raised RecursionError",
    make=_both(_copy("log"), _file("damaged.jsonl", DEEP)),
)
for char in ("\u2028", "\u2029", "\u0085"):
    # issue 20: notes holding U+2028 were refused by every reader ("Unterminated string")
    ROWS[f"check: notes holding U+{ord(char):04X}"] = Row(
        ("check", "{file}"),
        None,
        "a JSON Lines file splits on \\n only",
        code=0,
        make=_notes_with(f"one{char}two"),
        stdout=": ok (",
    )

ROWS.update(
    {
        # issue 20: "arena replay g.jsonl -o g.jsonl ... the input log is replaced by HTML"
        "replay -o its own log": Row(
            ("replay", "{log}", "-o", "{log}"),
            "",
            "no command writes over one of its own inputs",
            make=_copy("log"),
        ),
        "report -o its own log": Row(
            ("report", "{log}", "-o", "{log}"),
            "",
            "no command writes over one of its own inputs",
            make=_copy("log"),
        ),
        "league export --json over its league": Row(
            ("league", "export", "{league}", "--json", "{league}"),
            "",
            "no command writes over one of its own inputs",
            make=_copy("league"),
        ),
        "replay -o /dev/full": Row(
            ("replay", "{log}", "-o", "/dev/full"),
            "",
            "issue 20: a full disk; the old page must stay whole",
            code=frozenset({1, 2}),
            make=_copy("log"),
        ),
        "league export --json /dev/full": Row(
            ("league", "export", "{league}", "--json", "/dev/full"),
            "",
            "issue 20: league export to /dev/full raised a traceback",
            code=frozenset({1, 2}),
            make=_copy("league"),
        ),
        "league export --csv onto a file": Row(
            ("league", "export", "{league}", "--csv", "{log}"),
            "",
            "issue 20: export to a file where a directory is wanted",
            code=frozenset({1, 2}),
            make=_both(_copy("league"), _copy("log")),
        ),
        "league export --logs onto a file": Row(
            ("league", "export", "{league}", "--logs", "{log}"),
            "",
            "issue 20: export to a file where a directory is wanted",
            code=frozenset({1, 2}),
            make=_both(_copy("league"), _copy("log")),
        ),
        "league export --json into a missing folder": Row(
            ("league", "export", "{league}", "--json", "{tmp}/missing/report.json"),
            "",
            "issue 20: export to a missing folder",
            code=frozenset({1, 2}),
            make=_copy("league"),
        ),
        "league run --db a foreign SQLite file": Row(
            (*POOL[:-1], "{file}", "--tables", "1", "--deals", "1"),
            "",
            "issue 20: the league schema was written into someone else's database",
            make=lambda made, tmp: {"file": _foreign_sqlite(tmp / "theirs.sqlite")},
        ),
        "league run --db a corrupt file": Row(
            (*POOL[:-1], "{file}", "--tables", "1", "--deals", "1"),
            "",
            "issue 20: a corrupt league file raised a traceback",
            make=_spoiled("league", lambda data: data[:1500], "corrupt.sqlite"),
        ),
        "league show a binary file": Row(
            ("league", "show", "{file}"),
            "",
            "any file a user points at",
            make=_file("L.sqlite", bytes(range(256)) * 64),
        ),
        "serve --max-deals 2^63": Row(
            ("serve", "--max-deals", LONG_PAST, "--port", "0"),
            f"argument --max-deals: {LONG_PAST} is out of range 1..{2**63 - 1}",
            "a page may ask no more deals than an episode can play",
        ),
        "exploitability --max-bids 10^23": Row(
            ("exploitability", "--seat", "bayes", "--max-bids", HUGE),
            "argument --max-bids: ",
            "every command's --max-bids has the engines' range",
        ),
        "serve --turn-timeout 1e300": Row(
            ("serve", "--turn-timeout", "1e300", "--port", "0"),
            "argument --turn-timeout: ",
            "a wait that long overflows the platform's time_t (OverflowError at the first turn)",
        ),
        "serve --seat nosuch": Row(
            ("serve", "--seat", "nosuch", "--port", "0"),
            "nosuch",
            "issue 20: serve started serving; the bad seat failed only at Start",
            process=True,
        ),
        "serve --log-dir a file": Row(
            ("serve", "--log-dir", "{log}", "--port", "0"),
            "",
            "issue 20: serve's --log-dir is checked at launch",
            make=_copy("log"),
            process=True,
        ),
    }
)


def _tampered_league(statement: str) -> Maker:
    """The real league's store, one SQL statement later: a well-formed SQLite file whose
    values no league would hold (found by tests/test_fuzz_inputs.py's explore profile)."""

    def make(made, tmp):
        path = _copy("league")(made, tmp)["league"]
        with contextlib.closing(sqlite3.connect(path)) as db, db:
            db.execute(statement)
        return {"league": path}

    return make


STORE_READERS = {
    "league show": ("league", "show", "{league}"),
    "league export --json": ("league", "export", "{league}", "--json", "{tmp}/out.json"),
    "league export --logs": ("league", "export", "{league}", "--logs", "{tmp}/logs"),
    "audit --league": ("audit", "--league", "{league}", "--json"),
}
TAMPERED_STORES = {
    "results that are not JSON": ("UPDATE episodes SET results = 'nope'", STORE_READERS),
    "a score that is text": (  # the pooled audit reads no score
        "UPDATE seats SET score = 'x'",
        [name for name in STORE_READERS if name != "audit --league"],
    ),
    "a renamed column": ("ALTER TABLE logs RENAME COLUMN log TO lgo", ["league export --logs"]),
}
for what, (statement, readers) in TAMPERED_STORES.items():
    for name in readers:
        ROWS[f"{name}: {what}"] = Row(
            STORE_READERS[name],
            "",
            "a tampered league store is refused in one line, as a damaged log is",
            make=_tampered_league(statement),
        )


def _foreign_sqlite(path: Path) -> Path:
    """Someone else's database: one table of their own."""
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
        db.execute("INSERT INTO notes (text) VALUES ('mine')")
    db.close()
    return path


# --- running a row -----------------------------------------------------------------------


def _digests(paths) -> dict[Path, str]:
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths if p.is_file()}


def run_cli(argv: list[str], capsys, process: bool) -> tuple[int, str, str]:
    if process:
        try:
            done = subprocess.run(
                [sys.executable, "-m", "arena.cli", *argv],
                capture_output=True,
                text=True,
                timeout=ANSWER_WITHIN,
            )
        except subprocess.TimeoutExpired:
            pytest.fail(f"arena {' '.join(argv)} did not answer within {ANSWER_WITHIN} s")
        return done.returncode, done.stdout, done.stderr
    with answers_within(ANSWER_WITHIN):
        try:
            code = main(argv)
        except SystemExit as exited:  # argparse's own usage errors
            code = exited.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@contextlib.contextmanager
def answers_within(seconds: int):
    """Fail what runs inside with :class:`NoAnswer` if it takes longer than ``seconds``."""
    previous = signal.signal(signal.SIGALRM, _too_long)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


ANSWER_WITHIN = 20
"""Seconds a row may take: a bad input that is not refused may otherwise play forever.
Not a timing: a refusal takes milliseconds, and a row that hangs must fail, not stall."""


class NoAnswer(Exception):
    """The command did not answer within :data:`ANSWER_WITHIN` seconds."""


def _too_long(signum, frame):
    raise NoAnswer(f"no answer within {ANSWER_WITHIN} s")


@pytest.mark.parametrize("case", sorted(ROWS))
def test_a_bad_input_is_one_error_line(case, made, tmp_path, capsys):
    row = ROWS[case]
    paths = {"tmp": tmp_path, **row.make(made, tmp_path)}
    argv = [word.format(**paths) for word in row.argv]
    before = _digests(p for p in paths.values() if isinstance(p, Path))
    code, out, err = run_cli(argv, capsys, row.process)
    assert "Traceback" not in err + out, err
    codes = row.code if isinstance(row.code, frozenset) else {row.code}
    assert code in codes, (code, err)
    if row.fragment is not None:
        assert err.startswith("arena: error: ") and err.count("\n") == 1, err
        assert row.fragment in err, err
    else:
        assert "arena: error:" not in err, err
    if row.stdout == "":
        assert out == ""
    elif row.stdout is not None:
        assert row.stdout in out, out
    assert _digests(before) == before, "an input file changed"


# --- issue 30: rows whose tests live beside what they test ----------------------------------
# - `arena play --json > /dev/full`, and every other command that prints, with stdout full,
#   on a closed terminal (EIO), closed, or a pipe whose reader left: tests/test_output_errors.py
# - a plugin whose register_seats hook tampers with its worker's registry, listed healthy and
#   its seat "unknown": tests/test_hostile.py (test_a_hook_that_tampers_...)
# - raw structlog JSON lines on stderr from a broken plugin or a league's API retry:
#   tests/test_logs.py


# --- issue 30: every number in a league file is checked as its flag is ----------------------

LEAGUE_NUMBERS = [
    # (the league file's [section] and key, its flag, a value TOML and the flag both read
    #  as the same number, and the one check both must fail with)
    ("league", "budget_usd", "--budget-usd", "nan", "budget_usd must be a finite number >= 0"),
    ("league", "budget_usd", "--budget-usd", "inf", "budget_usd must be a finite number >= 0"),
    ("league", "budget_usd", "--budget-usd", "-0.5", "budget_usd must be a finite number >= 0"),
    (
        "league",
        "budget_tokens",
        "--budget-tokens",
        "-1",
        "budget_tokens must be a whole number >= 0",
    ),
    ("league", "target_ci", "--target-ci", "nan", "target_ci must be a finite number > 0"),
    ("league", "target_ci", "--target-ci", "0.0", "target_ci must be a finite number > 0"),
    ("league", "seed", "--seed", "-1", "seed must be a whole number >= 0"),
    # 9223372036854775807 = 2**63 - 1, the most episodes an SQLite INTEGER numbers
    ("league", "tables", "--tables", "0", "tables must be a whole number 1 to 9223372036854775807"),
    (
        "limits",
        "concurrency",
        "--concurrency",
        "4097",
        "concurrency must be a whole number 1 to 4096",
    ),
]


@pytest.mark.parametrize(
    "section, key, flag, value, check",
    LEAGUE_NUMBERS,
    ids=[f"{r[1]}={r[3]}" for r in LEAGUE_NUMBERS],
)
def test_a_league_files_number_fails_the_check_its_flag_fails(
    section, key, flag, value, check, tmp_path, capsys
):
    # A Claude entrant: a NaN budget there was accepted and never tripped.
    league = tmp_path / "league.toml"
    league.write_text(
        f'[{section}]\n{key} = {value}\n[entrants]\nb = "bayes"\nr = "random"\n'
        'c = { seat = "claude", policy = "honest" }\n'
    )
    db = tmp_path / "new.sqlite"
    code, out, err = run_cli(["league", "run", str(league), "--db", str(db)], capsys, False)
    assert (code, out) == (2, "")
    assert err == f"arena: error: {league}: {check}, got {value}\n"
    pool = ["league", "run", "--pool", "bayes,random,claude:honest", "--db", str(db)]
    code, out, err = run_cli([*pool, flag, value], capsys, False)
    assert (code, out) == (2, "")
    assert err == (f"arena: error: argument {flag}: {check}, got {value} (arena league run)\n")
    assert sorted(tmp_path.iterdir()) == [league]


# --- issue 30: a league's CSV export is safe to open in a spreadsheet -----------------------


def test_csv_export_neutralises_formula_entrant_names_and_keeps_negative_numbers(tmp_path, capsys):
    names = ['=HYPERLINK("http://127.0.0.1/x","y")', "+cmd", "@SUM(1)", "-1+1", "\tTAB", "\rCR"]
    policies = ["bayes", "random", "pressure", "bayes", "random", "pressure"]
    league = tmp_path / "league.toml"
    entrants = "".join(
        f"{json.dumps(name)} = {json.dumps(policy)}\n"
        for name, policy in zip(names, policies, strict=True)
    )
    league.write_text(f"[league]\ntables = 6\n[table]\ndeals = 4\n[entrants]\n{entrants}")
    db, out = tmp_path / "l.sqlite", tmp_path / "csv"
    assert main(["league", "run", str(league), "--db", str(db), "--json"]) == 0
    assert main(["league", "export", str(db), "--csv", str(out)]) == 0
    capsys.readouterr()
    with open(out / "standings.csv", newline="") as file:
        standings = list(csv.DictReader(file))
    # OWASP: a cell starting with = + - @ (or tab, CR) gets a leading single quote
    assert sorted(row["entrant"] for row in standings) == sorted("'" + name for name in names)
    # Points are zero-sum per episode and 4 deals move points, so some entrant has fewer
    # than 0: written as the number it is, never quoted as text.
    points = [row["points"] for row in standings]
    assert any(value.startswith("-") for value in points)
    assert all(int(value) == float(value) for value in points)
    with open(out / "head_to_head.csv", newline="") as file:
        duels = list(csv.DictReader(file))
    cells = [row["entrant"] for row in duels] + [row["opponent"] for row in duels]
    assert cells and all(cell.startswith("'") for cell in cells)
    assert any(row["pointsPerDeal"].startswith("-") for row in duels)
    float(duels[0]["pointsPerDeal"])  # a number, not "'-0.25"
    with open(out / "cost.csv", newline="") as file:
        assert {row["entrant"] for row in csv.DictReader(file)} == {
            *("'" + name for name in names),
            "(league)",
        }


# --- issue 30: a log's header, every field, every wrong JSON type and out-of-range value -----

HEADER_TYPES = {
    # Each header field of docs/event-log.md and the JSON types it may hold.
    "version": {"integer"},
    "seed": {"integer"},
    "mode": {"text"},
    "symbols": {"list"},
    "handSize": {"integer"},
    "seats": {"list"},
    "tableOrder": {"list"},
    "deals": {"integer"},
    "maxBidsPerDeal": {"integer"},
    "talk": {"bool"},
    "provenance": {"object", "null"},
    "wild": {"integer"},
    "wildCountsItself": {"bool"},
    "raiseRule": {"text"},
    "seats[0].slot": {"integer"},
    "seats[0].policy": {"text"},
}
A_VALUE_OF = {
    "integer": 3,
    "float": 1.5,
    "text": "3",
    "bool": True,
    "null": None,
    "list": [3],
    "object": {"three": 3},
}
HEADER_RANGES = [
    # (field, a value no writer makes, what the one line must say). The made log is a
    # 4-seat dice table (bayes, random and two default bayes): symbols 1..6, slots 0..3.
    # The engines' ranges: hands of 1..64 and 2..64 symbols (modes.py), 2..8 seats
    # (rules.py), a cap of 1..2**31 - 1 (a C int), 1..2**63 - 1 deals (an int64), a seed
    # >= 0; the versions are 1 and 2.
    ("version", 0, "log version 0"),
    ("version", 3, "log version 3"),
    ("seed", -1, "seed must be >= 0, got -1"),
    ("handSize", 0, "hand size must be 1 to 64, got 0"),
    ("handSize", 65, "hand size must be 1 to 64, got 65"),
    ("handSize", 10**9, "hand size must be 1 to 64, got 1000000000"),
    ("maxBidsPerDeal", 0, "max bids per deal must be 1 to 2147483647, got 0"),
    ("maxBidsPerDeal", 2**31, "max bids per deal must be 1 to 2147483647, got 2147483648"),
    ("maxBidsPerDeal", 10**23, "max bids per deal must be 1 to 2147483647"),
    ("deals", 0, "deals must be 1 to 9223372036854775807, got 0"),
    ("deals", 2**63, "deals must be 1 to 9223372036854775807, got 9223372036854775808"),
    ("symbols", [1], "symbols must be 2 to 64 distinct ints, ascending"),
    ("symbols", list(range(65)), "symbols must be 2 to 64 distinct ints, ascending"),
    ("symbols", [1, 1, 2], "symbols must be 2 to 64 distinct ints, ascending"),
    ("symbols", [1.5, 2], "symbols must be a list of integers"),
    # fewer than 2 seats: the mode the header describes would seat fewer than 2 by default
    ("seats", [{"slot": 0, "policy": "bayes"}], "default seats must be >= 2, got 1"),
    ("seats", [{"slot": s, "policy": "bayes"} for s in range(9)], "seats must be 2 to 8, got 9"),
    ("seats", [], "default seats must be >= 2, got 0"),
    (
        "tableOrder",
        [0, 1, 2, 5],
        "tableOrder [0, 1, 2, 5] is not an order of the slots [0, 1, 2, 3]",
    ),
    ("tableOrder", [0, 1, 2], "tableOrder [0, 1, 2] is not an order of the slots [0, 1, 2, 3]"),
    ("tableOrder", ["0", 1], "tableOrder must be a list of integers"),
    ("seats[0].slot", 1, "seat entries are slots [1, 1, 2, 3], not 0..3"),
    ("seats[0].slot", -1, "seat entries are slots [-1, 1, 2, 3], not 0..3"),
    ("seats[0].policy", "", "seats[0].policy: empty seat name"),
    ("wild", 7, "wild symbol 7 is not one of its symbols"),
    ("raiseRule", "none", "raise rule must be one of"),
    ("provenance", {"seats": []}, "provenance must hold seats, filters and reporters"),
    ("provenance", {"seats": [], "filters": {}, "reporters": {}}, "names 0 seats for 4"),
]


def _header_edited(field: str, value) -> Maker:
    """The made log with one header field (or ``seats[0]``'s ``slot`` or ``policy``) set."""

    def make(made, tmp):
        records = _records(made["log"])
        if field.startswith("seats[0]."):
            records[0]["seats"][0][field.removeprefix("seats[0].")] = value
        else:
            records[0][field] = value
        path = tmp / "header.jsonl"
        _write_records(path, records)
        return {"file": path}

    return make


HEADER_CASES = {
    f"{field} as {kind}": (field, A_VALUE_OF[kind], f"{field} must be")
    for field, kinds in HEADER_TYPES.items()
    for kind in A_VALUE_OF
    if kind not in kinds and not (kind == "integer" and "float" in kinds)
} | {f"{field} = {str(value)[:24]}": (field, value, says) for field, value, says in HEADER_RANGES}
HEADER_READERS = [
    ("show", "{file}"),
    ("audit", "{file}"),
    ("replay", "{file}", "-o", "{tmp}/out.html"),
    ("report", "{file}", "-o", "{tmp}/out.html"),
    ("exploitability", "--log", "{file}", "--slot", "0"),
]


@pytest.mark.parametrize("case", sorted(HEADER_CASES))
def test_a_header_field_out_of_its_format_is_one_error_line_from_every_reader(
    case, made, tmp_path, capsys
):
    """issue 30: a header whose `seats[0].policy` is an object passed `arena check`, and
    `show` raised AttributeError; `handSize: 1000000000` hung the `--unchecked` readers;
    `maxBidsPerDeal: 10**23` was a ValueError traceback from `exploitability --unchecked`."""
    field, value, says = HEADER_CASES[case]
    paths = {"tmp": tmp_path, **_header_edited(field, value)(made, tmp_path)}
    before = _digests([paths["file"]])
    for reader in HEADER_READERS:
        for unchecked in ((), ("--unchecked",)):
            argv = [word.format(**paths) for word in (*reader, *unchecked)]
            code, out, err = run_cli(argv, capsys, False)
            assert (code, out) == (2, ""), (argv, err)
            assert err.startswith(f"arena: error: {paths['file']}:1: "), (argv, err)
            assert err.count("\n") == 1 and says in err, (argv, err)
    code, out, err = run_cli(["check", str(paths["file"])], capsys, False)
    assert (code, err) == (1, "")
    assert out.startswith(f"{paths['file']}:1: ") and says in out and out.count("\n") == 1
    assert _digests(before) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["header.jsonl"]  # no page written


# --- issue 30: every seat a page may choose, and the seed, is checked before serve serves ---

SERVE_LAUNCH = [
    # (serve's arguments, how its one error line starts)
    (("--seat", "bayes:x"), "seat bayes:x: seat 'bayes' takes no argument (got 'x')"),
    (("--offer", "pressure,bayes:x"), "seat bayes:x: seat 'bayes' takes no argument (got 'x')"),
    (("--seat", "claude:nosuch"), "seat claude:nosuch: unknown policy 'nosuch'"),
    (("--offer", "claude:nosuch"), "seat claude:nosuch: unknown policy 'nosuch'"),
    # nash, a rung-only seat, at the default 4-seat dice table
    (("--seat", "nash"), "seat nash: nash plays only on the calibration rungs"),
    (("--offer", "nash"), "seat nash: nash plays only on the calibration rungs"),
    # 2**53 = 9007199254740992: one past the largest whole number a page holds exactly
    (("--seed", "9007199254740992"), "--seed is over 9007199254740991, the largest a page"),
    (("--seed", "1" + "0" * 299), "--seed is over 9007199254740991, the largest a page"),
]


@pytest.mark.parametrize(
    "args, start", SERVE_LAUNCH, ids=[" ".join(a)[:30] for a, _ in SERVE_LAUNCH]
)
def test_a_seat_or_seed_serve_would_take_from_a_page_is_refused_before_it_serves(
    args, start, capsys
):
    # Accepted, serve would serve until the row's time is up: run_cli fails it then.
    code, out, err = run_cli(["serve", "--port", "0", *args], capsys, process=True)
    assert (code, out) == (2, "")
    assert err.startswith(f"arena: error: {start}") and err.count("\n") == 1, err


@pytest.mark.parametrize("rate", ["nan", "inf", "-1.0"])
def test_a_league_files_price_that_is_not_a_finite_amount_is_refused(rate, tmp_path, capsys):
    """A NaN rate would make every cost NaN, and NaN never trips a budget."""
    league = tmp_path / "league.toml"
    league.write_text(
        '[league]\nbudget_usd = 1.0\n[entrants]\nb = "bayes"\nr = "random"\n'
        'c = { seat = "claude", policy = "honest", model = "claude-haiku-4-5" }\n'
        f'[prices."claude-haiku-4-5"]\ninput = {rate}\n'
    )
    code, out, err = run_cli(
        ["league", "run", str(league), "--db", str(tmp_path / "l")], capsys, False
    )
    assert (code, out) == (2, "")
    assert err == (
        f"arena: error: {league}: [prices.'claude-haiku-4-5']: input must be a finite number"
        f" >= 0, got {rate}\n"
    )
    assert sorted(tmp_path.iterdir()) == [league]


@pytest.mark.parametrize(
    "field, value, says",
    [
        ("handSize", 10**9, "hand size must be 1 to 64, got 1000000000"),
        ("seats[0].policy", {"name": "bayes"}, "seats[0].policy must be text"),
    ],
    ids=["a hand of a billion", "a policy that is an object"],
)
def test_a_leagues_stored_log_with_a_header_out_of_its_format_is_one_report_error(
    field, value, says, made, tmp_path, capsys
):
    """issue 30: a league's stored log is a file input too. A header no writer makes in
    one (a hand of 10**9 hung the report as it did `--unchecked` readers) is refused in
    one line naming the league file and the episode."""
    league = tmp_path / made["league"].name
    league.write_bytes(made["league"].read_bytes())
    with contextlib.closing(sqlite3.connect(league)) as db, db:
        idx, stored = db.execute("SELECT idx, log FROM logs ORDER BY idx LIMIT 1").fetchone()
        header, rest = zlib.decompress(stored).split(b"\n", 1)
        record = json.loads(header)
        if field == "seats[0].policy":
            record["seats"][0]["policy"] = value
        else:
            record[field] = value
        edited = zlib.compress(json.dumps(record).encode() + b"\n" + rest)
        db.execute("UPDATE logs SET log = ? WHERE idx = ?", (edited, idx))
    before = _digests([league])
    code, out, err = run_cli(["report", str(league), "-o", f"{tmp_path}/r.html"], capsys, False)
    assert (code, out) == (2, "")
    assert err.startswith(f"arena: error: {league}: episode {idx}:1: ") and says in err, err
    assert err.count("\n") == 1
    assert _digests([league]) == before
    assert not (tmp_path / "r.html").exists()
