"""How reporters' sections land in results.audit, and what the audit never touches.

The rule under test (arena/hookspecs.py, docs/audit.md): reporter ``name``'s
section is ``results.audit[name]``; reporters run in name order; a duplicate
name is refused naming both plugins; a raising reporter costs only its section;
each entry of the ``flags`` section becomes an ``audit`` line after ``result``.
"""

from __future__ import annotations

import enum
import json
import os
import subprocess
import sys
import textwrap
from unittest import mock

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from plugins_for_tests.flag_every_pair import FlagEveryPair
from plugins_for_tests.harness import plugged
from structlog.testing import capture_logs

from arena import hookimpl
from arena.audit import AuditContext, _plain_sections, audit_json, per_log, run_audit
from arena.eventlog import read_log
from arena.eventlog.limits import PRODUCTION_LIMITS
from arena.events import parse_fast
from arena.plugins import LOCAL, Reporter, load
from arena.results import usage_by_slot
from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatSpec

SOFTPLAY = ("faced", "challenged", "net", "bands", "expLoss", "bluffRate")
FIGURES = (*SOFTPLAY, "field", "bias", "flags", "power")
TABLE = EpisodeRequest(
    seed=11, deals=6, seat_specs=tuple(SeatSpec.parse(s) for s in ("random", "pressure"))
)


class Broken:
    @hookimpl
    def register_audit_reporters(self, register):
        register("broken", lambda records: 1 / 0)
        register("not-json", lambda records: {1, 2})
        register("nan", lambda records: [0.5, float("nan")])  # JSON has no NaN


class Impostor:
    @hookimpl
    def register_audit_reporters(self, register):
        register("faced", lambda records: "mine")


@pytest.fixture
def flagging_host():
    host = load({"ARENA_BLOCK_PLUGINS": "collusion_flags"})
    plugin = FlagEveryPair()
    info = host.add(plugin, "flag_every_pair")
    assert info.broken is None, info.broken
    yield host
    host.manager.unregister(plugin)


def test_every_figure_is_in_results_audit_under_its_name(host):
    results, _ = run_episode(host, TABLE, environ={})
    assert set(FIGURES) <= set(results.audit)
    assert list(results.audit) == sorted(results.audit)  # name order
    assert results.to_json()["audit"] == results.audit


def test_a_raising_reporter_costs_its_section_not_the_episode(host):
    with plugged(Broken(), "broken_reporters") as (broken_host, info):
        assert info.broken is None
        with capture_logs() as logs:
            results, records = run_episode(broken_host, TABLE, environ={})
    assert results.audit["broken"] == "error: ZeroDivisionError: division by zero"
    assert results.audit["not-json"].startswith("error: TypeError")
    assert (
        results.audit["nan"]
        == "error: ValueError: Out of range float values are not JSON compliant"
    )
    assert results.audit["faced"] == run_episode(host, TABLE, environ={})[0].audit["faced"]
    warned = {e["reporter"] for e in logs if e["event"] == "audit reporter failed"}
    assert warned == {"broken", "not-json", "nan"}
    assert records[-1]["type"] == "result"


def test_a_duplicate_reporter_name_is_refused_naming_both_plugins():
    with plugged(Impostor(), "impostor") as (impostor_host, info):
        assert info.broken is not None
        assert "'faced'" in info.broken
        assert "'softplay'" in info.broken and "'impostor'" in info.broken
        assert impostor_host.registry.reporters["faced"].source == "softplay"


def test_flags_are_appended_after_the_result_line_one_event_each(flagging_host, tmp_path):
    path = tmp_path / "log.jsonl"
    results, records = run_episode(flagging_host, TABLE, log_path=path, environ={})
    saved = read_log(path)
    assert saved == records
    kinds = [r["type"] for r in saved]
    assert kinds[-3:] == ["result", "audit", "audit"]
    assert [r["flag"] for r in saved[-2:]] == results.audit["flags"]
    assert {r["reporter"] for r in saved[-2:]} == {"flags"}


def test_the_audit_of_a_saved_log_is_the_episodes_audit_byte_for_byte(host, tmp_path):
    for mode in ("dice", "poker"):
        path = tmp_path / f"{mode}.jsonl"
        request = EpisodeRequest(
            mode=mode, seed=5, deals=12, seat_specs=(SeatSpec.parse("colluder"),) * 2
        )
        results, _ = run_episode(host, request, log_path=path, environ={})
        recomputed = run_audit(host.registry.reporters.values(), read_log(path))
        assert audit_json(recomputed) == json.dumps(results.to_json()["audit"], indent=2)


def test_audit_lines_at_the_tail_are_ignored_when_recomputing(flagging_host, tmp_path):
    path = tmp_path / "log.jsonl"
    results, _ = run_episode(flagging_host, TABLE, log_path=path, environ={})
    records = read_log(path)
    assert records[-1]["type"] == "audit"
    recomputed = run_audit(flagging_host.registry.reporters.values(), records)
    assert audit_json(recomputed) == audit_json(results.audit)


def test_reporters_change_no_score_and_no_line_of_play(host, flagging_host):
    bare = load({"ARENA_BLOCK_PLUGINS": "softplay,collusion_flags,reasoning,decisions"})
    assert not bare.registry.reporters
    plain, plain_log = run_episode(bare, TABLE, environ={})
    for audited_host in (host, flagging_host):
        audited, audited_log = run_episode(audited_host, TABLE, environ={})
        assert audited.seats == plain.seats
        assert audited.points == plain.points and audited.score == plain.score
        # The header's provenance names the reporters at the table; every other line agrees.
        head, plain_head = audited_log[0], plain_log[0]
        assert set(head["provenance"]["reporters"]) == set(audited_host.registry.reporters)
        assert plain_head["provenance"]["reporters"] == {}
        assert {**head, "provenance": None} == {**plain_head, "provenance": None}
        assert [r for r in audited_log[1:] if r["type"] != "audit"] == plain_log[1:]
    assert plain.audit == {}


@pytest.mark.sandbox
def test_a_third_party_reporter_installed_by_entry_point_lands_under_its_name(tmp_path):
    # A real distribution on sys.path: a module plus a dist-info with entry_points.txt.
    (tmp_path / "deal_counter.py").write_text(
        textwrap.dedent(
            """
            from arena import hookimpl

            def challenges(records):
                return {"challenges": sum(r["type"] == "challenge" for r in records)}

            @hookimpl
            def register_audit_reporters(register):
                register("deal-counter", challenges)
            """
        )
    )
    tmp_path.chmod(0o755)  # as root, the reporter runs in a worker under another uid
    dist = tmp_path / "deal_counter-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: deal-counter\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[arena]\ndeal_counter = deal_counter\n")
    env = os.environ | {"PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    env.pop("ARENA_DISABLE_PLUGIN_AUTOLOAD", None)
    log = tmp_path / "log.jsonl"

    def arena(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "arena.cli", *args], env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    results = json.loads(arena("play", "--deals", "4", "--seed", "3", "--log", str(log), "--json"))
    challenges = sum(
        json.loads(line)["type"] == "challenge" for line in log.read_text().splitlines()
    )
    assert challenges == 4
    assert results["audit"]["deal-counter"] == {"challenges": 4}
    assert json.loads(arena("audit", str(log), "--json"))["deal-counter"] == {"challenges": 4}
    listed = {row["name"]: row for row in json.loads(arena("plugins", "--json"))}
    assert listed["deal_counter"]["trust"] == "third-party"
    assert listed["deal_counter"]["reporters"] == ["deal-counter"]
    assert listed["softplay"]["reporters"] == sorted(SOFTPLAY)


def test_a_per_log_figure_is_made_once_per_context_or_taken_as_known():
    """Reporters asking one audit's context for a figure share one computation; a figure
    the engine worked out as it played (the compiled engine's tallies) is taken for that
    context only, and plain records (no context) are simply computed."""
    calls = []

    def figure(records):
        calls.append(list(records))
        return len(records)

    once = per_log(figure)
    first = [{"type": "episode"}, {"type": "deal"}]
    context = AuditContext(first)
    assert once(context) == 2 and once(context) == 2 and calls == [first]
    assert once(AuditContext(list(first))) == 2 and len(calls) == 2  # a new audit, made anew
    played = AuditContext(first, known={once: "as played"})
    assert once(played) == "as played" and len(calls) == 2
    assert once(first) == 2 and once(first) == 2 and len(calls) == 4  # no context: no cache


def test_run_audit_reads_the_made_records_only_for_figures_that_read_them_alike():
    """``AuditContext(records, made)``: a ``reads_made`` figure reads ``made``; every other
    figure and every reporter reads the records, and an audit of the records alone reads
    them everywhere."""
    seen = []

    def figure(records):
        seen.append(records)
        return len(records)

    alike, other = per_log(figure, reads_made=True), per_log(figure)
    reporters = [
        Reporter("alike", alike, "test", None, LOCAL),
        Reporter("other", other, "test", None, LOCAL),
        Reporter("plain", len, "test", None, LOCAL),
    ]
    records = [{"type": "episode"}, {"type": "deal"}]
    made = [{"type": "episode"}]  # unequal on purpose, to see which one each read
    assert run_audit(reporters, AuditContext(records, made)) == {"alike": 1, "other": 2, "plain": 2}
    assert seen[0] is made and list(seen[1]) == records
    assert run_audit(reporters, records) == {"alike": 2, "other": 2, "plain": 2}


def test_a_reporter_reads_the_context_as_the_log_without_its_audit_lines():
    """The context a reporter is handed is a sequence of the play records: the header at
    ``[0]``, its length, its passes, and no ``audit`` line a previous run appended."""
    records = [
        {"type": "episode", "seats": [{"slot": 0}, {"slot": 1}]},
        {"type": "deal", "number": 0},
        {"type": "result", "status": "complete"},
        {"type": "audit", "reporter": "flags", "flag": {}},
    ]
    handed = []
    reporters = [Reporter("look", handed.append, "test", None, LOCAL)]
    run_audit(reporters, records)
    (context,) = handed
    assert len(context) == 3 and context[0] is records[0] and context[-1] is records[2]
    assert list(context) == records[:3] and list(context) == records[:3]  # a second pass


def _misbehaving_tables():
    return st.builds(
        EpisodeRequest,
        mode=st.sampled_from(["dice", "poker", "wild", "rung1"]),
        seed=st.integers(0, 2**63 - 1),
        deals=st.integers(1, 10),
        seats=st.integers(2, 6),
        seat_specs=st.lists(
            st.sampled_from(["misbehaving", "bayes", "pressure", "random", "colluder"]),
            min_size=6,
            max_size=6,
        ).map(lambda names: tuple(SeatSpec.parse(name) for name in names)),
        talk=st.booleans(),
        max_bids=st.integers(1, 14),
        engine=st.just("python"),
    ).map(lambda r: attrs.evolve(r, seat_specs=r.seat_specs[: r.seats]))


@settings(max_examples=40, deadline=None)
@given(request=_misbehaving_tables())
def test_the_python_engines_audit_reads_no_line_back_and_is_its_saved_logs(
    misbehaving_host, tmp_path_factory, request
):
    """The Python engine hands the audit its records as made: the episode's audit and
    token use are then those of its saved log read back (rejections, faults, fallbacks,
    talk and usage included), and no line was parsed for them; a table the exploitability
    figure is worked out for reads its log, which is the one parse allowed."""
    path = tmp_path_factory.mktemp("made") / "ep.jsonl"
    with mock.patch("arena.eventlog.reader.parse_fast", side_effect=parse_fast) as parses:
        results, _ = run_episode(misbehaving_host, request, log_path=path, environ={})
    saved = read_log(path)
    reporters = misbehaving_host.registry.reporters.values()
    assert audit_json(results.audit) == audit_json(run_audit(reporters, saved))
    assert [seat.usage for seat in results.seats] == usage_by_slot(saved, request.seats)
    if results.exploitability is None:
        assert parses.call_count == 0


def test_past_the_parse_cap_the_audit_reads_the_log_back(misbehaving_host, tmp_path):
    """A log too long to keep its made records (past the production ``keep_parsed`` of
    20,000 lines) is parsed back, and the audit and token use are those of its saved log."""
    request = EpisodeRequest(
        seed=3, deals=3000, seat_specs=(SeatSpec.parse("misbehaving"), SeatSpec.parse("bayes"))
    )
    path = tmp_path / "long.jsonl"
    with mock.patch("arena.eventlog.reader.parse_fast", side_effect=parse_fast) as parses:
        results, records = run_episode(misbehaving_host, request, log_path=path, environ={})
    assert len(records) > PRODUCTION_LIMITS.keep_parsed  # about 7.5 lines a deal here
    assert results.exploitability is None  # too large to solve: only the audit reads back
    assert parses.call_count > 0
    saved = read_log(path)
    reporters = misbehaving_host.registry.reporters.values()
    assert audit_json(results.audit) == audit_json(run_audit(reporters, saved))
    assert [seat.usage for seat in results.seats] == usage_by_slot(saved, request.seats)


@pytest.mark.parametrize(
    "section",
    [
        {"m": [[1, 2], [3, 4]], "r": [0.1, None, -0.0, 1e-05, 1e300], "t": True},
        {"pairs": (1, (2, 3))},  # tuples: lists, by the stdlib
        {"keys": {1: "a", 2.5: "b", None: "c", False: "d"}},  # keys as the stdlib writes them
        {"big": 2**70, "text": "a\u00e9\u2028\\"},  # an int past 64 bits: the stdlib reads it
        {"e": enum.IntEnum("E", "A B").B, "f": [float(1)]},
    ],
)
def test_sections_are_made_plain_as_the_strict_stdlib_round_trip_makes_them(section):
    """The fast round trip is an optimisation only: every section comes out as
    ``json.loads(json.dumps(section, allow_nan=False))`` gives it."""
    expected = json.loads(json.dumps({"s": section}, allow_nan=False))
    assert _plain_sections({"s": section}) == expected
    assert json.dumps(_plain_sections({"s": section})) == json.dumps(expected)


@pytest.mark.parametrize(
    "section, error",
    [
        ([0.5, float("nan")], "error: ValueError: Out of range float values"),
        ({"x": float("inf")}, "error: ValueError: Out of range float values"),
        ({1, 2}, "error: TypeError: Object of type set"),
        ({(1, 2): 3}, "error: TypeError: keys must be str"),
        (enum.Enum("Colour", "RED").RED, "error: TypeError: Object of type Colour"),
    ],
)
def test_what_the_stdlib_refuses_fails_its_section_alone(section, error):
    plain = _plain_sections({"bad": section, "good": [1, 2]})
    assert plain["good"] == [1, 2] and plain["bad"].startswith(error)


class FirstAndBids:
    """A reporter whose section is the first record's type, the number of bids and of audit
    lines; its pool adds the episodes' bid counts."""

    @hookimpl
    def register_audit_reporters(self, register):
        register(
            "first-and-bids",
            lambda records: [
                records[0]["type"],
                sum(r["type"] == "bid" for r in records),
                sum(r["type"] == "audit" for r in records),
            ],
            pool=lambda episodes: sum(e["audit"]["first-and-bids"][1] for e in episodes),
        )


def test_hook_register_audit_reporters(tmp_path):
    # The section lands at results.audit[name]; the reporter sees the header first and the
    # whole play (no audit lines); the pool gets each episode's results with its section.
    with plugged(FirstAndBids(), "first_and_bids") as (host, info):
        assert info.broken is None
        reporter = host.registry.reporters["first-and-bids"]
        results, records = run_episode(host, TABLE)
        bids = sum(r["type"] == "bid" for r in records)
        assert bids > 0
        assert results.audit["first-and-bids"] == ["episode", bids, 0]
        pooled = reporter.pool([results.to_json(), results.to_json()])
    assert pooled == 2 * bids
