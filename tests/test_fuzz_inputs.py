"""A fuzz pass over every file the CLI reads: damaged, truncated, deep, binary, huge.

Hypothesis damages real files (a log and the results ``arena play`` wrote, a league
file, a league's SQLite store) and hands each to the commands that read it; a log's
header is also spoiled field by field (issue 30: a header that parses but breaks its
format is refused on line 1 by every reader, checked or ``--unchecked``). Whatever
the damage, the property is issue 20's: the exit code is 0, 1 or 2; no exception
escapes (an escaped exception would be a traceback); stderr holds at most one
``arena: error:`` line; the input file is byte for byte what it was.

A bad input found here that deserves its own message goes to tests/test_bad_inputs.py
as a row. The commands run in-process (``arena.cli.main``) and the example counts are
small, so the pass takes seconds; ``HYPOTHESIS_PROFILE=explore`` draws many more.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.cli import main

MAX_BYTES = 2 << 20
"""The largest damaged file: "huge", within what a test may write and read in a moment."""


@pytest.fixture(scope="module")
def real(tmp_path_factory) -> dict[str, bytes]:
    """The undamaged files, each made by the CLI itself."""
    root = tmp_path_factory.mktemp("real")
    log, league = root / "g.jsonl", root / "L.sqlite"
    with _quiet():
        assert main(["play", "--deals", "3", "--seat", "bayes,random", "--log", str(log)]) == 0
        pool = ["--pool", "bayes,random", "--tables", "1", "--deals", "1", "--seats", "2"]
        assert main(["league", "run", *pool, "--db", str(league), "--json"]) == 0
    with _quiet() as out:
        assert main(["play", "--deals", "3", "--seat", "bayes,random", "--json"]) == 0
    results = out.getvalue()
    return {
        "log": log.read_bytes(),
        "results": results.encode(),
        "league.toml": LEAGUE_TOML,
        "league.sqlite": league.read_bytes(),
    }


LEAGUE_TOML = b"""[league]
tables = 1
schedule = "balanced"

[table]
seats = 2
deals = 1
max_bids = 12

[entrants]
a = "claude:honest"
b = { seat = "claude", policy = "honest", model = "claude-sonnet-4-5", max_tokens = 512 }
"""
"""Claude entrants only, and no API key in the tests: whatever the damage leaves
readable is refused after every setting is read, so no fuzzed league ever plays."""


# --- damage -----------------------------------------------------------------------------


def _at(data, where: float) -> int:
    return min(int(where * len(data)), len(data))


where = st.floats(0, 1)
Damage = Callable[[bytes], bytes]


@st.composite
def damage(draw) -> Damage:
    """One way to spoil a file: cut it, flip a bit, splice in bytes or text, nest deep,
    repeat a stretch until it is huge."""
    kind = draw(st.sampled_from(["cut", "flip", "bytes", "text", "deep", "huge"]))
    at, until = draw(where), draw(where)
    if kind == "cut":
        return lambda data: data[: _at(data, at)]
    if kind == "flip":
        bit = draw(st.integers(0, 7))

        def flip(data: bytes) -> bytes:
            i = min(_at(data, at), len(data) - 1)
            return data[:i] + bytes([data[i] ^ (1 << bit)]) + data[i + 1 :]

        return flip
    if kind in ("bytes", "text"):
        spliced = (
            draw(st.binary(min_size=1, max_size=64))
            if kind == "bytes"
            else draw(st.text(min_size=1, max_size=32)).encode("utf-8", "surrogatepass")
        )
        return lambda data: data[: _at(data, at)] + spliced + data[_at(data, max(at, until)) :]
    if kind == "deep":
        depth = draw(st.sampled_from([1_000, 100_000]))
        opener = draw(st.sampled_from([b"[", b"{", b'{"a":', b"[{", b"a = ["]))
        return lambda data: data[: _at(data, at)] + opener * depth + data[_at(data, at) :]

    def huge(data: bytes) -> bytes:
        start, end = sorted((_at(data, at), _at(data, until)))
        stretch = data[start:end] or data
        return data[:start] + stretch * (MAX_BYTES // max(len(stretch), 1)) + data[end:]

    return huge


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=8,
)
"""Any JSON value: what a hand-edited or hostile line may hold where a field should be."""


@st.composite
def field_damage(draw) -> Damage:
    """Spoil one field of one JSON Lines record: a value of any type, or no field at all
    (a string quantity, a null slot, a float deal, a 70-bit int, a missing key)."""
    line_at, key_at = draw(where), draw(st.integers(0, 64))
    value = draw(st.none() | json_values)  # none: the key is deleted
    deleted = draw(st.booleans())

    def spoil(data: bytes) -> bytes:
        lines = data.split(b"\n")
        number = min(_at(lines, line_at), len(lines) - 2)
        record = json.loads(lines[number])
        key = sorted(record)[key_at % len(record)]
        if deleted:
            del record[key]
        else:
            record[key] = value
        lines[number] = json.dumps(record).encode()
        return b"\n".join(lines)

    return spoil


# --- running a command on a damaged file -----------------------------------------------------


@contextlib.contextmanager
def _quiet():
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        out.err = err  # type: ignore[attr-defined]
        yield out


def holds(argv: list[str], inputs: list[Path]) -> None:
    """Issue 20's property for one command line over damaged ``inputs``."""
    before = [hashlib.sha256(p.read_bytes()).digest() for p in inputs]
    with _quiet() as out:
        try:
            code = main(argv)
        except SystemExit as exited:  # argparse's own usage errors
            code = exited.code
        except BaseException as exc:  # what a user would see as a traceback
            raise AssertionError(f"arena {' '.join(argv)} raised {exc!r}") from exc
    err = out.err.getvalue()
    assert code in (0, 1, 2), (argv, code, err)
    assert "Traceback" not in err
    assert err.count("arena: error:") <= 1, err
    if "arena: error:" in err:
        assert code in (1, 2) and err.endswith("\n"), err
    assert [hashlib.sha256(p.read_bytes()).digest() for p in inputs] == before, "input changed"


def _damaged(folder: Path, name: str, data: bytes, spoil: Damage) -> Path:
    path = folder / name
    path.write_bytes(spoil(data)[: MAX_BYTES + len(data)])
    return path


FUZZ = settings(
    max_examples=settings.default.max_examples // 8,  # 12 in the ci profile, 62 in explore
    suppress_health_check=[HealthCheck.function_scoped_fixture],
    deadline=None,
)


def _every_log_reader(log: Path, folder: str) -> None:
    page = f"{folder}/page.html"
    for argv in (
        ["check", str(log)],
        ["check", "--partial", str(log)],
        ["audit", str(log)],
        ["audit", "--unchecked", "--partial", "--json", str(log)],
        ["show", "--unchecked", "--partial", str(log)],
        ["replay", str(log), "-o", page],
        ["replay", "--unchecked", "--partial", str(log), "-o", page],
    ):
        holds(argv, [log])


@FUZZ
@given(spoil=damage())
def test_a_damaged_log_never_escapes_any_reader(real, spoil):
    with tempfile.TemporaryDirectory() as folder:
        _every_log_reader(_damaged(Path(folder), "g.jsonl", real["log"], spoil), folder)


@settings(FUZZ, max_examples=settings.default.max_examples // 4)
@given(spoil=field_damage())
def test_a_log_with_a_spoiled_field_never_escapes_any_reader(real, spoil):
    """Well-formed JSON with a value of the wrong type: what ``--unchecked`` hands on to
    readers that do not replay the rules (it found the old TypeError in 44 examples)."""
    with tempfile.TemporaryDirectory() as folder:
        _every_log_reader(_damaged(Path(folder), "g.jsonl", real["log"], spoil), folder)


@settings(FUZZ, max_examples=settings.default.max_examples // 25)
@given(spoil=st.one_of(damage(), field_damage()))
def test_a_damaged_log_never_escapes_the_report(real, spoil):
    """The report reads the log as replay does; few examples, since a log it accepts
    costs it seconds."""
    with tempfile.TemporaryDirectory() as folder:
        log = _damaged(Path(folder), "g.jsonl", real["log"], spoil)
        holds(["report", "--unchecked", "--partial", str(log), "-o", f"{folder}/r.html"], [log])


@FUZZ
@given(spoil=damage())
def test_damaged_results_never_escape_the_check(real, spoil):
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "g.jsonl"
        log.write_bytes(real["log"])
        results = _damaged(Path(folder), "results.json", real["results"], spoil)
        holds(["check", str(log), "--results", str(results)], [log, results])


@FUZZ
@given(spoil=damage())
def test_a_damaged_league_file_never_escapes_league_run(real, spoil, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with tempfile.TemporaryDirectory() as folder:
        toml = _damaged(Path(folder), "league.toml", real["league.toml"], spoil)
        holds(["league", "run", str(toml), "--db", f"{folder}/new.sqlite", "--json"], [toml])


@FUZZ
@given(spoil=damage())
def test_a_damaged_league_store_never_escapes_its_readers(real, spoil):
    with tempfile.TemporaryDirectory() as folder:
        db = _damaged(Path(folder), "L.sqlite", real["league.sqlite"], spoil)
        for argv in (
            ["league", "show", str(db)],
            ["league", "show", "--json", str(db)],
            ["league", "export", str(db), "--json", f"{folder}/out.json"],
            ["league", "export", str(db), "--csv", f"{folder}/csv", "--logs", f"{folder}/logs"],
            ["audit", "--league", str(db), "--json"],
        ):
            holds(argv, [db])


def test_the_real_files_pass_every_reader(real, tmp_path):
    """The property's other half: undamaged, each file is read and exit 0 (so a reader
    that refused everything would fail here, not pass the fuzz)."""
    for name, data in real.items():
        (tmp_path / name).write_bytes(data)
    log, db = str(tmp_path / "log"), str(tmp_path / "league.sqlite")
    for argv in (
        ["check", log, "--results", str(tmp_path / "results")],
        ["audit", log],
        ["replay", log, "-o", str(tmp_path / "page.html")],
        ["league", "show", db],
        ["league", "export", db, "--json", str(tmp_path / "out.json")],
    ):
        with _quiet() as out:
            assert main(argv) == 0, (argv, out.err.getvalue())
    assert json.loads((tmp_path / "out.json").read_text())


# --- issue 30: the header, field by field -----------------------------------------------------

HEADER_FIELDS = {
    # Each header field as docs/event-log.md gives it, its JSON types, and the integers
    # it may hold (the engines' ranges; None: no integer is its type).
    "version": ({int}, range(1, 3)),
    "seed": ({int}, None),
    "mode": ({str}, None),
    "symbols": ({list}, None),
    "handSize": ({int}, range(1, 65)),
    "seats": ({list}, None),
    "tableOrder": ({list}, None),
    "deals": ({int}, range(1, 2**63)),
    "maxBidsPerDeal": ({int}, range(1, 2**31)),
    "talk": ({bool}, None),
    "provenance": ({dict, type(None)}, None),
    "wild": ({int}, None),
    "wildCountsItself": ({bool}, None),
    "raiseRule": ({str}, None),
}


def _set_header(field: str, value) -> Damage:
    def spoil(data: bytes) -> bytes:
        first, rest = data.split(b"\n", 1)
        header = json.loads(first)
        header[field] = value
        return json.dumps(header).encode() + b"\n" + rest

    return spoil


@st.composite
def header_field_of_another_type(draw) -> Damage:
    """A header field holding a JSON value of a type it never holds."""
    field = draw(st.sampled_from(sorted(HEADER_FIELDS)))
    types, _range = HEADER_FIELDS[field]
    # type(), not isinstance: true is no integer, though Python's bool is an int
    value = draw(json_values.filter(lambda v: type(v) not in types))
    return _set_header(field, value)


@st.composite
def header_number_out_of_range(draw) -> Damage:
    """A header integer outside the engines' range, by as little as one or by 2**70."""
    field = draw(st.sampled_from([f for f, (_t, ints) in HEADER_FIELDS.items() if ints]))
    ints = HEADER_FIELDS[field][1]
    below = st.integers(-(2**70), ints.start - 1)
    above = st.integers(ints.stop, ints.stop + 2**70)
    return _set_header(field, draw(below | above | st.sampled_from([ints.start - 1, ints.stop])))


FIRST = object()
"""In a path into the header: the first entry of an object (a filter's or reporter's)."""


@st.composite
def header_field_of_any_value(draw) -> Damage:
    """Any JSON value anywhere in the header: a field, a seat entry's field, a provenance
    entry's field (a value of the right type, in or out of range, included)."""
    value = draw(json_values)
    entry_field = st.sampled_from(["distribution", "version", "isolation"])
    path = draw(
        st.tuples(st.sampled_from(sorted(HEADER_FIELDS)))
        | st.tuples(st.just("seats"), st.integers(0, 3), st.sampled_from(["slot", "policy"]))
        | st.tuples(st.just("provenance"), st.just("seats"), st.integers(0, 3), entry_field)
        | st.tuples(
            st.just("provenance"), st.sampled_from(["filters", "reporters"]), st.just(FIRST),
            entry_field,
        )
    )  # fmt: skip

    def spoil(data: bytes) -> bytes:
        first, rest = data.split(b"\n", 1)
        header = holder = json.loads(first)
        for key in path[:-1]:
            holder = next(iter(holder.values())) if key is FIRST else holder[key]
        holder[path[-1]] = value
        return json.dumps(header).encode() + b"\n" + rest

    return spoil


def _every_header_reader(log: Path, folder: str) -> list[list[str]]:
    page = f"{folder}/page.html"
    lines = []
    for unchecked in ([], ["--unchecked"]):
        lines += [
            ["show", *unchecked, str(log)],
            ["audit", *unchecked, str(log)],
            ["replay", *unchecked, str(log), "-o", page],
            ["report", *unchecked, str(log), "-o", page],
            ["exploitability", *unchecked, "--log", str(log), "--slot", "0"],
        ]
    return lines


def refused_on_line_1(argv: list[str], log: Path) -> None:
    """Issue 30's property: one ``arena: error:`` line naming the header's line, exit 2."""
    with _quiet() as out:
        try:
            code = main(argv)
        except BaseException as exc:
            raise AssertionError(f"arena {' '.join(argv)} raised {exc!r}") from exc
    err = out.err.getvalue()
    assert (code, out.getvalue()) == (2, ""), (argv, code, err)
    assert err.startswith(f"arena: error: {log}:1: ") and err.count("\n") == 1, (argv, err)


@FUZZ
@given(spoil=st.one_of(header_field_of_another_type(), header_number_out_of_range()))
def test_a_header_field_out_of_its_format_is_refused_by_every_reader(real, spoil):
    with tempfile.TemporaryDirectory() as folder:
        log = _damaged(Path(folder), "g.jsonl", real["log"], spoil)
        for argv in _every_header_reader(log, folder):
            refused_on_line_1(argv, log)
        assert sorted(p.name for p in Path(folder).iterdir()) == ["g.jsonl"]


@FUZZ
@given(spoil=header_field_of_any_value())
def test_any_value_anywhere_in_the_header_never_escapes_any_reader(real, spoil):
    with tempfile.TemporaryDirectory() as folder:
        log = _damaged(Path(folder), "g.jsonl", real["log"], spoil)
        for argv in [["check", str(log)], *_every_header_reader(log, folder)]:
            holds(argv, [log])
