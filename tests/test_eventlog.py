"""The JSON Lines event log: what is written, how it is read back, and corrupt files."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time

import attrs
import pytest
from disks import fill, mounted
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.check import load_checked
from arena.cli import main
from arena.eventlog import (
    EventLog,
    LogError,
    LogLimits,
    parse_text,
    read_log,
    read_numbered,
)
from arena.eventlog.limits import PRODUCTION_LIMITS
from arena.eventlog.reader import parse_written, whole_lines
from arena.events import (
    EVENT_TYPES,
    Audit,
    BidMade,
    ChallengeMade,
    DealStarted,
    EpisodeSettled,
    EpisodeStarted,
    Fault,
    Interrupted,
    Rejected,
    SeatEntry,
    Usage,
    encode_line,
    from_line,
    from_record,
    to_line,
)

SAMPLES = [
    EpisodeStarted(
        seed=7,
        mode="dice",
        symbols=(1, 2, 3, 4, 5, 6),
        hand_size=5,
        seats=[SeatEntry(0, "bayes"), SeatEntry(1, "random")],
        table_order=(1, 0),
        deals=1,
        max_bids_per_deal=12,
        talk=True,
    ),
    DealStarted(0, 1, ((1, 2, 3, 4, 5), (6, 6, 6, 1, 2))),
    Rejected(0, 1, "unparseable reply 'x'", "x"),
    Fault(0, 1, "seat unavailable"),
    Usage(0, 1, 10, 2, 0, 0),
    BidMade(0, 1, 2, 6, "two sixes", "TWO SIXES", "note", False),
    ChallengeMade(0, 0, 1, 2, 6, 3, False, True, 1, 0, None, None, None),
    EpisodeSettled("complete", 1, (-1, 1), (0.0, 1.0)),
    Audit("flags", {"kind": "soft-play", "pair": [0, 1]}),
    Interrupted("SIGINT"),
]


def test_every_event_type_has_a_sample():
    assert {type(e).TYPE for e in SAMPLES} == set(EVENT_TYPES)


@pytest.mark.parametrize("event", SAMPLES, ids=lambda e: type(e).TYPE)
def test_events_round_trip_through_one_compact_json_line(event):
    line = to_line(event)
    assert "\n" not in line and ", " not in line.replace('", "', "")
    record = json.loads(line)
    assert record["type"] == type(event).TYPE
    assert from_record(record) == event


def test_records_use_camel_case_keys():
    record = json.loads(to_line(SAMPLES[0]))
    assert {"handSize", "tableOrder", "maxBidsPerDeal"} <= set(record)
    assert record["seats"] == [{"slot": 0, "policy": "bayes"}, {"slot": 1, "policy": "random"}]
    assert "dealsPlayed" in SAMPLES[7].to_record()


def test_written_log_reads_back_record_for_record(tmp_path):
    path = tmp_path / "episode.jsonl"
    with EventLog(path) as log:
        for event in SAMPLES:
            log.emit(event)
    assert read_log(path) == log.records()
    assert path.read_text(encoding="utf-8") == "".join(to_line(e) + "\n" for e in SAMPLES)


def on_disk(tmp_path) -> list[str]:
    """The types of the lines in the unfinished log's file."""
    text = (tmp_path / "episode.jsonl.part").read_text(encoding="utf-8")
    return [json.loads(line)["type"] for line in text.splitlines()]


def stopped_clock() -> float:
    """A clock at which no time passes: only the count of finished deals triggers a write."""
    return 100.0


def test_a_finished_deal_is_written_once_50_ms_have_passed(tmp_path):
    # A slow table loses at most the deal in progress: once 50 ms have passed since the
    # last write, a challenge that resolves puts its whole deal in the file (as NAME.part).
    clock = [100.0]
    log = EventLog(tmp_path / "episode.jsonl", clock=lambda: clock[0])
    try:
        for event in SAMPLES[:6]:  # header, deal and the deal's lines before the challenge
            log.emit(event)
        clock[0] += 0.049
        log.emit(SAMPLES[6])  # the challenge, 49 ms after the file was opened: waits
        assert on_disk(tmp_path) == []
        clock[0] += 0.001
        log.emit(SAMPLES[6])  # another deal's end, 50 ms after: both are written
        assert on_disk(tmp_path)[-2:] == ["challenge", "challenge"]
        assert len(on_disk(tmp_path)) == 8
        assert not (tmp_path / "episode.jsonl").exists()
    finally:
        log.close()


def test_a_fast_table_writes_sixteen_deals_at_a_time(tmp_path):
    log = EventLog(tmp_path / "episode.jsonl", clock=stopped_clock)
    try:
        log.emit(SAMPLES[0])
        for _ in range(15):
            log.emit(SAMPLES[1])
            log.emit(SAMPLES[6])
        assert on_disk(tmp_path) == []  # 15 finished deals wait
        log.emit(SAMPLES[1])
        log.emit(SAMPLES[6])
        assert len(on_disk(tmp_path)) == 1 + 16 * 2  # the 16th sends all of them
        log.emit(SAMPLES[7])  # the result line is written at once
        assert on_disk(tmp_path)[-1] == "result"
    finally:
        log.close()


def test_the_limits_passed_in_set_the_batch_and_the_interval(tmp_path):
    # write_every_deals=3, write_every_seconds=1: with a stopped clock two finished deals
    # wait and the third writes all three (1 + 3 * 2 = 7 lines); then, one second on, the
    # next deal's end writes at once, however few deals wait.
    clock = [100.0]
    limits = LogLimits(write_every_deals=3, write_every_seconds=1.0)
    log = EventLog(tmp_path / "episode.jsonl", limits=limits, clock=lambda: clock[0])
    try:
        log.emit(SAMPLES[0])
        for _ in range(2):
            log.emit(SAMPLES[1])
            log.emit(SAMPLES[6])
        assert on_disk(tmp_path) == []
        log.emit(SAMPLES[1])
        log.emit(SAMPLES[6])
        assert on_disk(tmp_path) == ["episode", *["deal", "challenge"] * 3]
        clock[0] += 0.999
        log.emit(SAMPLES[1])
        log.emit(SAMPLES[6])
        assert len(on_disk(tmp_path)) == 7  # 999 ms after the last write: waits
        clock[0] += 0.001
        log.emit(SAMPLES[1])
        log.emit(SAMPLES[6])
        assert len(on_disk(tmp_path)) == 11  # a second after it: both deals are written
    finally:
        log.close()


def test_the_production_limits_are_the_documented_ones():
    # docs/event-log.md: a write once 50 ms have passed or 16 deals wait, at most 16
    # writes cut to fit the interrupted marker, 1 MiB kept in memory (1 << 20 =
    # 1,048,576 bytes), a line past 64 MiB refused (1 << 26 = 67,108,864 bytes).
    assert attrs.asdict(PRODUCTION_LIMITS) == {
        "write_every_deals": 16,
        "write_every_seconds": 0.05,
        "keep_bytes": 1_048_576,
        "keep_parsed": 20_000,
        "max_writes_cut": 16,
        "block_bytes": 1_048_576,
        "max_line_bytes": 67_108_864,
    }
    assert EventLog().limits is PRODUCTION_LIMITS


@pytest.mark.parametrize(
    "field", ["write_every_deals", "keep_bytes", "keep_parsed", "block_bytes", "max_line_bytes"]
)
def test_a_limit_below_one_is_refused(field):
    with pytest.raises(ValueError, match=f"'{field}' must be >= 1"):
        LogLimits(**{field: 0})


def write(tmp_path, lines: list[str]):
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def good_lines() -> list[str]:
    return [to_line(e) for e in SAMPLES]


CORRUPT = {
    "bad JSON": (lambda ls: ls[:2] + ['{"type": "bid", '] + ls[2:], ":3: not a valid event"),
    "not an object": (lambda ls: ls[:1] + ["[1, 2, 3]"] + ls[1:], ":2: not a valid event"),
    "unknown type": (
        lambda ls: ls[:3] + ['{"type": "wink", "deal": 0}'] + ls[3:],
        ":4: not a valid event (unknown event type 'wink')",
    ),
    "missing field": (
        lambda ls: ls[:1] + ['{"type": "deal", "deal": 0, "opener": 1}'] + ls[1:],
        ":2: not a valid event (deal event: missing ['hands']",
    ),
    "unknown field": (
        lambda ls: ls[:1] + ['{"type":"fault","deal":0,"slot":1,"reason":"x","why":1}'] + ls[1:],
        "unknown ['why']",
    ),
    "wrong first line": (lambda ls: ls[1:], "not an event log (the first line must be an episode"),
}


@pytest.mark.parametrize("case", sorted(CORRUPT))
def test_a_corrupt_log_raises_a_one_line_error_naming_file_and_line(tmp_path, case):
    corrupt, message = CORRUPT[case]
    path = write(tmp_path, corrupt(good_lines()))
    with pytest.raises(LogError) as caught:
        read_log(path)
    text = str(caught.value)
    assert "\n" not in text
    assert text.startswith(str(path))
    assert message in text


def test_an_empty_or_missing_log_is_a_log_error(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(LogError, match="not an event log"):
        read_log(empty)
    with pytest.raises(LogError, match="cannot read event log"):
        read_log(tmp_path / "nowhere.jsonl")
    with pytest.raises(LogError, match="cannot read event log"):
        read_log(tmp_path)  # a directory


def test_a_log_that_is_not_utf8_is_a_log_error_naming_its_line(tmp_path):
    path = tmp_path / "binary.jsonl"
    path.write_bytes(to_line(SAMPLES[0]).encode() + b"\n" + b"\xff\xfe\x00garbage")
    with pytest.raises(LogError) as caught:
        read_log(path)
    # line 2's first byte, 0xff, can start no UTF-8 character
    assert str(caught.value) == f"{path}:2: not a valid event (not UTF-8: byte 0xff at column 1)"


def test_blank_lines_are_skipped_but_counted(tmp_path):
    lines = good_lines()
    path = write(tmp_path, lines[:2] + [""] + lines[2:3] + ["oops"])
    with pytest.raises(LogError, match=r":5: not a valid event"):
        read_log(path)


def test_a_record_missing_fields_is_named_in_the_logs_own_keys(tmp_path):
    # The reader speaks the log's vocabulary (camelCase), not the classes' attributes.
    path = tmp_path / "short.jsonl"
    path.write_text('{"type":"deal","deal":0}\n', encoding="utf-8")
    with pytest.raises(LogError) as error:
        read_log(path)
    assert "deal event: missing ['hands', 'opener'], unknown []" in str(error.value)
    path.write_text('{"type":"result","status":"complete","points":[0],"score":[0.5]}\n')
    with pytest.raises(LogError, match=r"missing \['dealsPlayed'\]"):
        read_log(path)


# --- JSON Lines: one line a record, whatever the text --------------------------------------


def test_line_separators_and_lone_surrogates_are_written_escaped():
    """JSON lets a string hold U+0085, U+2028 and U+2029 raw, and str.splitlines() breaks
    a line at each; the writer spells them ``\\uXXXX`` (as json's ensure_ascii does), and
    a lone surrogate too, which UTF-8 cannot hold raw. Other non-ASCII stays raw."""
    event = BidMade(0, 1, 2, 6, "a\u2028b\u2029c\x85d", "é", "\ud800!", False)
    line = encode_line(event)
    assert line == (
        b'{"type":"bid","deal":0,"slot":1,"quantity":2,"face":6,'
        b'"say":"a\\u2028b\\u2029c\\u0085d","published":"\xc3\xa9","notes":"\\ud800!",'
        b'"fallback":false}\n'
    )
    assert line.decode("utf-8").splitlines() == [line.decode("utf-8")[:-1]]  # one line
    assert json.loads(line) == event.to_record()  # and it reads back exactly


def test_a_line_holding_raw_separators_still_reads_as_one_record(tmp_path):
    """A hand-made (or older) log may hold U+2028 raw inside a string: the reader splits
    on a newline only, so line 2 is one record and line 3 keeps its number."""
    bid = to_line(SAMPLES[5]).replace("two sixes", "two\u2028six\u2029es\x85")
    path = write(tmp_path, [to_line(SAMPLES[0]), bid, "oops"])
    with pytest.raises(LogError, match=r":3: not a valid event"):
        read_log(path)
    path = write(tmp_path, [to_line(SAMPLES[0]), bid])
    assert read_log(path)[1]["say"] == "two\u2028six\u2029es\x85"


def test_crlf_line_ends_and_a_missing_last_newline_still_read(tmp_path):
    path = tmp_path / "crlf.jsonl"
    path.write_bytes(f"{to_line(SAMPLES[0])}\r\n\r\n{to_line(SAMPLES[1])}".encode())
    assert [r["type"] for r in read_log(path)] == ["episode", "deal"]


STRICT = {
    # a line of 100,000 "[": the stdlib parser would raise RecursionError
    "deep array": (b"[" * 100_000, "nested too deeply"),
    "deep object": (b'{"a":' * 100_000, "nested too deeply"),
    # 0xc3 starts a two-byte character, and "(" cannot continue one: byte 12 of the line
    "not UTF-8": (b'{"type":"de\xc3(l"}', "not UTF-8: byte 0xc3 at column 12"),
    "NaN": (b'{"type":"fault","deal":0,"slot":NaN,"reason":"x"}', "NaN is not JSON"),
    "Infinity": (b'{"type":"fault","deal":0,"slot":1,"reason":-Infinity}', "-Infinity is not"),
    # a double holds up to about 1.8e308: the stdlib would read 1e400 as inf
    "past a float": (
        b'{"type":"result","status":"complete","dealsPlayed":1,"points":[1],"score":[1e400]}',
        "1e400 is past a float's range",
    ),
    # json.loads keeps the last "slot", another reader the first: the line is ambiguous
    "duplicate key": (
        b'{"type":"fault","deal":0,"slot":1,"slot":2,"reason":"x"}',
        "key 'slot' appears twice",
    ),
    "raw surrogate": (b'{"type":"fault","deal":0,"slot":1,"reason":"\xed\xa0\x80"}', "UTF-8"),
}


@pytest.mark.parametrize("case", sorted(STRICT))
def test_the_reader_refuses_what_is_not_strict_json_in_one_line(tmp_path, case):
    body, reason = STRICT[case]
    path = tmp_path / "bad.jsonl"
    path.write_bytes(to_line(SAMPLES[0]).encode() + b"\n" + body + b"\n")
    with pytest.raises(LogError) as caught:
        read_log(path)
    text = str(caught.value)
    assert text.startswith(f"{path}:2: not a valid event (") and "\n" not in text
    assert reason in text


def test_an_endless_line_is_refused_at_the_cap_without_reading_on(tmp_path):
    """A line is refused once it passes MAX_LINE_BYTES, read 64 bytes at a time here: an
    endless last line with no newline, a line one byte past the cap, and a header past it."""
    header = to_line(SAMPLES[0]).encode() + b"\n"
    cap = len(header)  # the header's line and its newline fit exactly
    limits = LogLimits(max_line_bytes=cap, block_bytes=64)
    path = tmp_path / "long.jsonl"
    for body in (b"x" * (100 * cap), b"x" * (cap + 1) + b"\n"):
        path.write_bytes(header + body)
        with pytest.raises(LogError) as caught:
            read_log(path, limits=limits)
        assert str(caught.value) == f"{path}:2: not a valid event (a line past {cap:,} bytes)"
    limits = LogLimits(max_line_bytes=cap - 2, block_bytes=64)  # the line without "\n"
    path.write_bytes(header)  # is cap - 1 bytes: one past
    with pytest.raises(LogError, match=r"long.jsonl:1: .*a line past"):
        read_log(path, limits=limits)


def test_lines_that_span_blocks_read_back_whole(tmp_path):
    """With 7-byte blocks every line spans several: the records and their numbers are
    those of the whole file."""
    lines = good_lines()
    path = write(tmp_path, lines[:3] + [""] + lines[3:])
    numbered = read_numbered(path, limits=LogLimits(block_bytes=7))
    assert [n for n, _ in numbered] == [1, 2, 3, *range(5, len(lines) + 2)]
    assert [r for _, r in numbered] == [json.loads(line) for line in lines]


def test_a_log_held_as_text_reads_as_its_file_does():
    """parse_text (a league's stored log) splits and refuses exactly as a file is read."""
    text = "\n".join([to_line(SAMPLES[0]), to_line(SAMPLES[5]).replace("two", "t\u2028o")]) + "\n"
    records = parse_text(text, "L.sqlite: episode 3")
    assert records[1]["say"] == "t\u2028o sixes"
    with pytest.raises(LogError) as caught:
        parse_text(text + '{"type":"fault","deal":0,"slot":NaN,"reason":"x"}\n', "L: episode 3")
    assert str(caught.value) == "L: episode 3:3: not a valid event (NaN is not JSON)"


# --- never lost, never clobbered ------------------------------------------------------------


def arena_process(args: list[str], cwd) -> subprocess.Popen:
    """The real ``arena`` command in its own process, so that signals reach it alone."""
    environ = {k: v for k, v in os.environ.items() if k != "PLAYER_SCRIPTED"}
    return subprocess.Popen(
        [sys.executable, "-m", "arena.cli", *args],
        cwd=cwd,
        env=environ,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def assert_stopped_log(path, reason: str) -> list[dict]:
    """The file ends at a line boundary with the ``interrupted`` line last; it checks as partial."""
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n")
    records = [json.loads(line) for line in text.splitlines()]
    assert records[-1] == {"type": "interrupted", "reason": reason}
    assert all(r["type"] != "result" for r in records)
    assert load_checked(path, partial=True) == records
    with pytest.raises(LogError, match=r":\d+: complete: no result line: the log was interrupted"):
        load_checked(path)
    return records


ENGINES = pytest.mark.parametrize("engine", ["python", "compiled"])
"""Both engines write through the same log, the compiled one 16 deals at a time."""


@ENGINES
@pytest.mark.parametrize("signal_number", [signal.SIGINT, signal.SIGTERM], ids=["INT", "TERM"])
def test_a_signal_leaves_a_marked_partial_log_and_the_cli_says_where(
    tmp_path, signal_number, engine
):
    # 200,000 deals take seconds even compiled: the signal arrives mid-episode, once the
    # first deals are out.
    command = ["play", "--deals", "200000", "--log", "ep.jsonl", "--engine", engine]
    process = arena_process(command, tmp_path)
    part = tmp_path / "ep.jsonl.part"
    deadline = time.monotonic() + 60
    while not (part.exists() and part.stat().st_size > 10_000):
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    process.send_signal(signal_number)
    out, err = process.communicate(timeout=60)
    name = signal.Signals(signal_number).name
    assert process.returncode == 130
    assert err == f"arena: interrupted ({name}); the partial log is ep.jsonl.part\n"
    assert not (tmp_path / "ep.jsonl").exists()  # never given the finished log's name
    assert_stopped_log(part, name)


def test_an_existing_log_is_refused_unless_forced(tmp_path, capsys):
    path = tmp_path / "kept.jsonl"
    path.write_text("precious\n")
    assert main(["play", "--deals", "1", "--log", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == f"arena: error: {path} exists; use --force to overwrite it\n"
    assert path.read_text() == "precious\n"
    assert not (tmp_path / "kept.jsonl.part").exists()

    assert main(["play", "--deals", "1", "--log", str(path), "--force"]) == 0
    capsys.readouterr()
    assert load_checked(path)[0]["type"] == "episode"
    assert not (tmp_path / "kept.jsonl.part").exists()


def test_a_leftover_part_file_is_refused_unless_forced(tmp_path, capsys):
    part = tmp_path / "ep.jsonl.part"
    part.write_text("an earlier, unfinished log\n")
    assert main(["play", "--deals", "1", "--log", str(tmp_path / "ep.jsonl")]) == 2
    assert f"{part} exists (an unfinished log?)" in capsys.readouterr().err
    assert part.read_text() == "an earlier, unfinished log\n"
    assert main(["play", "--deals", "1", "--log", str(tmp_path / "ep.jsonl"), "--force"]) == 0
    assert not part.exists() and (tmp_path / "ep.jsonl").exists()


def test_the_log_has_its_name_only_once_settled(tmp_path):
    path = tmp_path / "ep.jsonl"
    log = EventLog(path)
    for event in SAMPLES[:8]:
        log.emit(event)
    assert not path.exists()
    log.close()
    assert path.read_text(encoding="utf-8") == log.text()
    assert not (tmp_path / "ep.jsonl.part").exists()


def test_log_to_dev_full_is_one_error_line_and_exit_1(capsys):
    assert main(["play", "--deals", "2", "--log", "/dev/full"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "arena: error: cannot write event log /dev/full: disk full (No space left on device)\n"
    )


@pytest.fixture
def tiny_disk(tmp_path):
    """A 16 KiB tmpfs: room for a few dozen deals, then ENOSPC."""
    with mounted(tmp_path / "tiny", "-t", "tmpfs", "-o", "size=16k", "tmpfs") as target:
        yield target


@ENGINES
def test_a_full_disk_is_one_error_line_and_a_marked_log(tiny_disk, tmp_path, engine):
    path = tiny_disk / "ep.jsonl"
    command = ["play", "--deals", "500", "--log", str(path), "--engine", engine]
    process = arena_process(command, tmp_path)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 1
    assert err == (
        f"arena: error: cannot write event log {path}.part: disk full (No space left on device)\n"
    )
    records = assert_stopped_log(
        tiny_disk / "ep.jsonl.part", "write error: No space left on device"
    )
    assert records[-2]["type"] == "challenge"  # what is left is whole deals
    assert not path.exists()
    # stdout has the lines of the deals the log wrote (at least every deal it kept, and
    # more only where the full disk cut writes back to fit the marker), no results table.
    logged = sum(r["type"] == "deal" for r in records)
    summaries = out.splitlines()[::2]
    assert logged <= len(summaries) <= logged + 16
    assert all(line.startswith(f"deal {n:>3}  opener") for n, line in enumerate(summaries))
    assert "points" not in out


@pytest.fixture
def full_disk(tmp_path):
    """A 64 KiB tmpfs with no block left (issue 30's disk)."""
    with mounted(tmp_path / "full", "-t", "tmpfs", "-o", "size=64k", "tmpfs") as target:
        fill(target)
        yield target


def test_a_disk_full_from_the_start_leaves_no_part_and_the_next_run_starts(full_disk, capsys):
    """issue 30: `play --log new.jsonl` on a full 64 KiB disk left a 0-byte
    `new.jsonl.part` with no `interrupted` line, and the next run was refused without
    --force. Not one line fitted, so there is no log to keep: no file is left, the one
    error line says "disk full", and once there is room the same command plays."""
    path = full_disk / "new.jsonl"
    assert main(["play", "--deals", "3", "--log", str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"arena: error: cannot write event log {path}: disk full (No space left on device);"
        " nothing was kept\n"
    )
    assert sorted(p.name for p in full_disk.iterdir()) == ["filler"]
    (full_disk / "filler").unlink()
    assert main(["play", "--deals", "3", "--log", str(path)]) == 0
    capsys.readouterr()
    assert [r["type"] for r in read_log(path)][-1] == "result"
    assert sorted(p.name for p in full_disk.iterdir()) == ["new.jsonl"]


# --- orjson writes today's bytes -------------------------------------------------------

STDLIB_LINE = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def stdlib_line(record: dict) -> str:
    """The stdlib's compact line with the writer's escapes: U+0085, U+2028, U+2029 and
    lone surrogates as ``\\uXXXX`` (json's own ensure_ascii spelling), nothing else."""
    text = STDLIB_LINE.encode(record)
    return "".join(
        f"\\u{ord(c):04x}" if c in "\u0085\u2028\u2029" or "\ud800" <= c <= "\udfff" else c
        for c in text
    )


@settings(max_examples=300)
@given(
    say=st.one_of(st.none(), st.text(alphabet=st.characters(exclude_categories=()))),
    notes=st.one_of(st.none(), st.text(alphabet=st.characters(codec="utf-8"))),
    tokens=st.integers(min_value=-(2**80), max_value=2**80),
)
def test_the_fast_encoder_writes_the_stdlib_bytes(say, notes, tokens):
    """Every line is what ``json`` with compact separators and ensure_ascii=False writes,
    but for the escaped separators and surrogates: control characters, quotes, non-ASCII
    and lone surrogates (where orjson refuses and the stdlib takes over), and token
    counts past 64 bits alike."""
    events = [
        BidMade(3, 1, 4, 6, say, say, notes, False),
        ChallengeMade(3, 2, 1, 4, 6, 5, False, True, 1, 2, say, None, notes),
        Usage(3, 1, tokens, 7, 0, tokens),
    ]
    for event in events:
        line = to_line(event)
        assert line == stdlib_line(event.to_record())
        assert from_line(line) == json.loads(line)


@pytest.mark.parametrize("event", [*SAMPLES, attrs.evolve(SAMPLES[0], seed=2**70)], ids=repr)
def test_every_event_line_is_the_stdlib_encoding(event):
    """orjson writes the header and the per-decision lines, the stdlib the rest (floats,
    replies) and any line orjson refuses (a seed past 64 bits): the bytes are the same."""
    stdlib = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=attrs.asdict)
    assert to_line(event) == stdlib.encode(event.to_record())


@pytest.mark.parametrize("on_disk", [False, True], ids=["memory", "file"])
def test_records_read_ints_past_64_bits_back_as_ints(tmp_path, on_disk):
    """orjson would read 2**70 as the float 1.1805916207174113e+21; the log's reader must
    give back the int the line holds, as json.loads does, in memory and on disk alike."""
    log = EventLog(tmp_path / "long.jsonl" if on_disk else None)
    events = [*SAMPLES[:2], Usage(0, 1, 2**70, -(2**64) - 1, 0, 2**64), SAMPLES[-1]]
    for event in events:
        log.emit(event)
    records = log.records()
    usage = next(r for r in records if r["type"] == "usage")
    assert usage["inputTokens"] == 1180591620717411303424
    assert usage["outputTokens"] == -18446744073709551617
    assert usage["cacheWriteTokens"] == 18446744073709551616
    assert all(type(v) is int for k, v in usage.items() if k.endswith("Tokens"))
    assert records == [json.loads(line) for line in log.text().splitlines()]


@pytest.mark.parametrize("on_disk", [False, True], ids=["memory", "file"])
def test_a_log_past_the_memory_cap_is_read_back_from_its_file(tmp_path, on_disk):
    """Past KEEP_BYTES a log is no longer held in memory and LogRecords reads it from its
    file, chunk by chunk, on every pass; a log with no file, from an unnamed temporary one."""
    limits = LogLimits(
        keep_bytes=300,
        block_bytes=64,  # blocks end mid-line: carried over
        keep_parsed=10,  # records parsed again per pass
    )
    log = EventLog(tmp_path / "long.jsonl" if on_disk else None, limits=limits)
    events = [SAMPLES[0], *[SAMPLES[1], SAMPLES[5], SAMPLES[6]] * 40, SAMPLES[7]]
    for event in events:
        log.emit(event)
    log.close()
    assert log._kept.chunks is None
    assert (log._kept.spill is None) is on_disk
    expected = [json.loads(to_line(event)) for event in events]
    assert log.records() == expected
    stream = log.stream()
    assert len(stream) == len(events) and stream[0] == expected[0] and stream[-1] == expected[-1]
    assert list(stream) == list(stream) == expected  # every pass reads the same records


def test_the_header_is_read_without_reading_back_the_log(tmp_path):
    """``records[0]`` is the header's own line, parsed alone: a reader that needs only the
    header (an audit handed the compiled engine's tallies) reads nothing else, so here
    it is there even once the file it would read back from is cut short."""
    log = EventLog(tmp_path / "ep.jsonl", limits=LogLimits(keep_bytes=300))  # read back
    events = [SAMPLES[0], *[SAMPLES[1], SAMPLES[5], SAMPLES[6]] * 40, SAMPLES[7]]
    for event in events:
        log.emit(event)
    log.close()
    records = log.stream()
    (tmp_path / "ep.jsonl").write_bytes(b"")
    assert records[0] == json.loads(to_line(SAMPLES[0])) and len(records) == len(events)
    with pytest.raises(LogError, match="cut short"):
        list(records)


@pytest.mark.parametrize("on_disk", [False, True], ids=["memory", "file"])
def test_the_records_bytes_are_the_lines_they_hold(tmp_path, on_disk):
    """``data()`` is the view's lines as saved, without a parse: the whole file once the
    log is closed, and only the view's own lines when the log grew after it was taken."""
    limits = LogLimits(keep_bytes=300)  # the file (or the spill) is read back
    log = EventLog(tmp_path / "ep.jsonl" if on_disk else None, limits=limits)
    for event in SAMPLES[:3]:
        log.emit(event)
    early = log.stream()
    for event in [*[SAMPLES[1], SAMPLES[5], SAMPLES[6]] * 20, SAMPLES[7]]:
        log.emit(event)
    log.close()
    assert early.data() == "".join(to_line(e) + "\n" for e in SAMPLES[:3]).encode()
    whole = log.stream().data()
    assert whole == log.text().encode("utf-8")
    if on_disk:
        assert whole == (tmp_path / "ep.jsonl").read_bytes()


def test_after_an_error_the_finished_deals_are_written_not_the_one_in_progress(tmp_path):
    log = EventLog(tmp_path / "episode.jsonl", clock=stopped_clock)  # nothing written yet
    for event in SAMPLES[:7]:  # header, deal 0 to its challenge
        log.emit(event)
    log.emit(SAMPLES[1])  # the next deal starts
    log.emit(SAMPLES[5])  # and a bid is made in it
    assert on_disk(tmp_path) == []
    log.write_finished()
    assert on_disk(tmp_path)[-1] == "challenge" and len(on_disk(tmp_path)) == 7
    log.emit(SAMPLES[6])  # the run could even go on: the rest is still pending, in order
    log.emit(SAMPLES[7])
    log.close()
    kinds = [r["type"] for r in read_log(tmp_path / "episode.jsonl")]
    assert kinds[7:] == ["deal", "bid", "challenge", "result"]


def _as_parsed(record):
    """A record as made, in the shape a parse of its line has: lists, header seats as dicts."""
    return json.loads(json.dumps(record, default=attrs.asdict))


def test_the_records_as_made_are_the_parsed_records_but_for_tuples(tmp_path):
    """``take_made`` is every record emitted since ``keep_made``, in order, the same as the
    parse of its line once tuples are lists (and the header's seats dicts); asking again,
    or a log that never asked, gives ``None``."""
    log = EventLog(tmp_path / "ep.jsonl")
    assert log.take_made() is None
    log.keep_made()
    events = [e for e in SAMPLES if not isinstance(e, Interrupted)]
    for event in events:
        log.emit(event)
    made = log.take_made()
    assert [_as_parsed(record) for record in made] == log.records()
    assert made[1]["hands"] == ((1, 2, 3, 4, 5), (6, 6, 6, 1, 2))  # as the event holds them
    assert log.take_made() is None


def test_the_records_as_made_are_given_up_past_the_parse_cap(tmp_path):
    """Memory stays bounded: past KEEP_PARSED lines none are kept (a reader parses the log)."""
    kept = {}
    for lines in (10, 11):
        log = EventLog(tmp_path / f"{lines}.jsonl", limits=LogLimits(keep_parsed=10))
        log.keep_made()
        for event in [SAMPLES[0], *[SAMPLES[1], SAMPLES[5], SAMPLES[6]] * 3, SAMPLES[1]][:lines]:
            log.emit(event)
        kept[lines] = log.take_made()
    assert len(kept[10]) == 10
    assert kept[11] is None


def test_a_write_listener_is_handed_each_writes_records_once_written(tmp_path):
    """``follow_writes``: after each write (sixteen deals here, then the result), the
    listener has exactly the written lines' records, as made, in order, and never a
    line that is not in the file yet."""
    log = EventLog(tmp_path / "episode.jsonl", clock=stopped_clock)
    handed: list[list[dict]] = []
    log.follow_writes(lambda records: handed.append(list(records)))
    log.emit(SAMPLES[0])
    for _ in range(16):
        log.emit(SAMPLES[1])
        log.emit(SAMPLES[6])
    assert len(handed) == 1 and len(handed[0]) == len(on_disk(tmp_path)) == 1 + 16 * 2
    log.emit(SAMPLES[1])
    log.emit(SAMPLES[5])
    log.emit(SAMPLES[6])  # deal 17 ends: waits for fifteen more
    assert len(handed) == 1
    log.emit(SAMPLES[7])  # the result: written at once, with deal 17
    assert [r["type"] for r in handed[1]] == ["deal", "bid", "challenge", "result"]
    log.close()
    flat = [_as_parsed(record) for records in handed for record in records]
    assert flat == read_log(tmp_path / "episode.jsonl")


@pytest.mark.parametrize("stop", ["write_finished", "interrupt"])
def test_a_stopped_run_hands_its_write_listener_nothing_more(tmp_path, stop):
    """After an error (``write_finished``) or a signal (``interrupt``) the listener is not
    called: what a display would raise (a closed stdout) must not hide why the run
    stopped. The file still gets the finished deals, and the records as made keep the
    lines' order (``write_finished`` splits them with the lines)."""
    log = EventLog(tmp_path / "episode.jsonl", clock=stopped_clock)  # nothing written yet
    log.keep_made()
    handed = []
    log.follow_writes(handed.append)
    for event in [*SAMPLES[:7], SAMPLES[1], SAMPLES[5]]:  # deal 0 ends, deal 1 is under way
        log.emit(event)
    if stop == "write_finished":
        log.write_finished()
        assert len(on_disk(tmp_path)) == 7  # header to deal 0's challenge
        log.emit(SAMPLES[6])
        log.emit(SAMPLES[7])
        log.close()
        made = log.take_made()
        assert [_as_parsed(r) for r in made] == read_log(tmp_path / "episode.jsonl")
    else:
        log.interrupt("SIGINT")
        assert on_disk(tmp_path)[-1] == "interrupted"
    assert handed == []


# --- issue 30: what a mutation pass found untested in eventlog/reader.py ---------------------

SHORT_EPISODE = [SAMPLES[0], *[SAMPLES[1], SAMPLES[5], SAMPLES[6]] * 3]
"""Ten lines: a header and three deals of a bid and a challenge."""


def test_a_short_log_is_parsed_once_and_a_long_one_on_every_pass(tmp_path):
    """A log of up to ``keep_parsed`` lines is parsed on its first pass and kept: a second
    pass hands back the very same records. One line more and each pass parses again (equal
    records, new objects), so a long log is never held parsed."""
    passes = {}
    for keep_parsed in (10, 9):  # the ten-line log at the cap, then one line past it
        log = EventLog(tmp_path / f"{keep_parsed}.jsonl", limits=LogLimits(keep_parsed=keep_parsed))
        for event in SHORT_EPISODE:
            log.emit(event)
        log.close()
        stream = log.stream()
        passes[keep_parsed] = (list(stream), list(stream))
    first, second = passes[10]
    assert first == second and all(a is b for a, b in zip(first, second, strict=True))
    first, second = passes[9]
    assert first == second and not any(a is b for a, b in zip(first[1:], second[1:], strict=True))


def test_a_chunk_whose_first_line_holds_an_int_past_64_bits_reads_it_exactly():
    """orjson reads an int past 64 bits as a float (2**70 as 1.1805916207174113e+21); the
    stdlib reads the lines that may hold one again. Here that line opens the chunk (line 5
    of the log, the first of this block) and is the last such line of the log."""
    big = 2**70 + 1  # 1180591620717411303425: a float would lose the + 1
    data = b'{"type":"audit","flag":{"n":%d}}\n{"type":"deal"}\n' % big
    for long_ints in ([5], [2, 5]):
        records = parse_written(data, 5, long_ints)
        assert records[0]["flag"]["n"] == big and type(records[0]["flag"]["n"]) is int
        assert records[1] == {"type": "deal"}


def test_data_of_whole_blocks_and_one_byte_reads_back_to_its_last_line(tmp_path):
    """A log of k blocks and one byte more: the last block is one byte, and the last line
    is read back, not dropped: by the writer reading its own file back, by a reader of the
    saved file, and by a reader of a file whose last line has no newline."""
    sized = EventLog(None)
    for event in SHORT_EPISODE:
        sized.emit(event)
    size = len(sized.text().encode())
    expected = [json.loads(to_line(event)) for event in SHORT_EPISODE]
    limits = LogLimits(block_bytes=size - 1, keep_bytes=1)  # one block and "\n"; read back
    path = tmp_path / "ep.jsonl"
    log = EventLog(path, limits=limits)
    for event in SHORT_EPISODE:
        log.emit(event)
    log.close()
    assert path.stat().st_size == limits.block_bytes + 1
    assert list(log.stream()) == expected
    assert read_log(path, limits=limits) == expected
    path.write_bytes(path.read_bytes()[:-1])  # no newline: the last block is its "}"
    assert read_log(path, limits=LogLimits(block_bytes=size - 2)) == expected
    pieces = whole_lines(io.BytesIO(b"abc\ndefg\n").read, 9, "test", block_bytes=4)  # 2 x 4 + 1
    assert list(pieces) == [b"abc\n", b"defg\n"]
