"""The compiled engine (arena/fast): the Python engine's bytes, and the choice between them.

The compiled engine replays the Python seats' decisions in C, so the one thing that
matters is that nothing differs: every log byte and every results field but
``engine``, over random seeds, modes, table sizes, caps and seat mixes, and the
independent referee (``tests/referee.py``) accepts what it writes. The turn state
machine (:mod:`arena.turns`, through ``arena check``) reads every compiled log line
for line, and an episode the Python engine ends early (quit, deadline: tables the
compiled engine does not play) is a prefix of the compiled episode. Its random
streams are numpy's own, re-implemented: they are checked draw for draw against
numpy here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import attrs
import numpy as np
import pytest
from episode_strategies import CLOCK, Ending
from hypothesis import event, given, settings
from hypothesis import strategies as st
from plugins_for_tests.harness import plugged
from referee import replay

from arena import hookimpl, seeding
from arena.audit import per_log
from arena.check import verify
from arena.cli import main
from arena.engine import EpisodeConfig, TableSetup
from arena.eventlog import EventLog
from arena.fast import choice
from arena.fast.engine import BATCH
from arena.fast.spec import lcg_jump, unsupported
from arena.league.config import league_from_mapping
from arena.modes import Mode
from arena.plugins import load
from arena.registry import CompiledTally
from arena.render import deal_lines
from arena.rules import TableRules
from arena.runner import EpisodeRequest, SetupError, build_config, build_seat, run_episode
from arena.seats import SeatContext, SeatSpec
from arena_plugins import decisions, softplay
from arena_plugins.scripted import BAYES, ScriptedSeat

COMPILED_SEATS = ["bayes", "pressure", "random", "colluder", "colluder:bayes"]
MODES = ["dice", "poker", "wild", "rung1", "rung1w"]


def play_both(host, request, tmp_path):
    """The episode under each engine: (log bytes, results JSON without ``engine``, the
    deal lines it handed ``on_deals``, records, results) by engine.

    The deal lines are checked here against the narrator's reading of the saved log
    (:func:`deal_lines`): the compiled engine writes them in C, the Python engine
    through the narrator as it plays, and both hand them over after whole deals.
    """
    played = {}
    for engine in ("python", "compiled"):
        path = tmp_path / f"{engine}.jsonl"
        handed: list[tuple[str, int]] = []
        results, records = run_episode(
            host,
            attrs.evolve(request, engine=engine),
            path,
            environ={},
            force=True,
            on_deals=lambda lines, finished, into=handed: into.append((lines, finished)),
        )
        document = results.to_json()
        assert document.pop("engine") == engine
        narrated = "".join(lines for lines, _ in handed)
        assert narrated == "".join(line + "\n" for line in deal_lines(records))
        finished = [n for _, n in handed]  # a batch of at most 16 deals at a time
        assert finished[-1] == request.deals and finished == sorted(set(finished))
        steps = [n - before for before, n in zip([0, *finished[:-1]], finished, strict=True)]
        assert all(0 < step <= BATCH for step in steps)
        played[engine] = (path.read_bytes(), json.dumps(document), narrated, records, results)
    return played


@st.composite
def scripted_requests(draw, kinds=COMPILED_SEATS):
    seats = draw(st.integers(2, 8))
    names = draw(st.lists(st.sampled_from(kinds), min_size=seats, max_size=seats))
    return EpisodeRequest(
        mode=draw(st.sampled_from(MODES)),
        seed=draw(st.integers(0, 2**63 - 1)),
        deals=draw(st.integers(1, 12)),
        seats=seats,
        seat_specs=tuple(SeatSpec.parse(name) for name in names),
        max_bids=draw(st.integers(1, 14)),
    )


@pytest.mark.slow
@settings(max_examples=150)
@given(request=scripted_requests())
def test_compiled_logs_and_results_are_the_python_engines_bytes(host, tmp_path_factory, request):
    played = play_both(host, request, tmp_path_factory.mktemp("engines"))
    python_log, python_results, python_lines, _, _ = played["python"]
    compiled_log, compiled_results, compiled_lines, records, results = played["compiled"]
    assert compiled_log == python_log
    assert compiled_results == python_results
    assert compiled_lines == python_lines
    replay(records, results.to_json())  # raises on any rule the referee sees broken


@pytest.mark.slow
@pytest.mark.parametrize("status", ["complete", "quit", "deadline"])
@settings(max_examples=30)
@given(
    # Not the colluder: it plays by its partners' names, and slot 0 changes its name here.
    request=scripted_requests(kinds=["bayes", "pressure", "random"]),
    at=st.integers(1, 3),
)
def test_the_state_machine_reads_compiled_logs_and_early_ends_are_their_prefixes(
    host, tmp_path_factory, request, status, at
):
    """The compiled log, line by line, is what the turn state machine plays (``verify``
    drives it); the same table ended early on the Python engine, by slot 0 leaving at
    its ``at``-th ask or outlasting the clock, writes the compiled log's deal lines up
    to that point, byte for byte, and settles on them as the state machine does."""
    tmp = tmp_path_factory.mktemp("early")
    compiled = attrs.evolve(
        request, seat_specs=(SeatSpec("bayes"), *request.seat_specs[1:]), engine="compiled"
    )
    _, full = run_episode(host, compiled, tmp / "full.jsonl", environ={})
    assert verify(full, registry=host.registry) == []
    # Slot 0 plays bayes's own moves (same seat stream) under the name of a person.
    early = attrs.evolve(
        compiled,
        seat_specs=(SeatSpec("human"), *compiled.seat_specs[1:]),
        clock=CLOCK if status == "deadline" else None,
        engine="python",
    )
    ending = Ending(status, at if status != "complete" else 0)
    _, ended = run_episode(
        host, early, tmp / "early.jsonl", environ={}, local_seats=ending.seats(host)
    )
    assert verify(ended, registry=host.registry) == []
    result = next(r for r in ended if r["type"] == "result")
    assert result["status"] in {status, "complete"}
    event(f"{status} ended {result['status']}")
    full_lines, ended_lines = (until_result(tmp / name) for name in ("full.jsonl", "early.jsonl"))
    played = ended_lines[1:-1]  # the deal lines: the header names slot 0 differently
    assert played == full_lines[1 : 1 + len(played)]
    if result["status"] == "complete":
        assert ended_lines[1:] == full_lines[1:]


def until_result(path: Path) -> list[bytes]:
    """A log's lines up to and including its result line (audit lines may follow it)."""
    lines = path.read_bytes().splitlines(keepends=True)
    return lines[: next(i for i, line in enumerate(lines) if b'"type":"result"' in line) + 1]


@pytest.mark.parametrize("mode", MODES)
def test_long_episodes_match_too(host, tmp_path, mode):
    """300 deals of a 4-seat table with every compiled seat kind: the deal stream's jump
    and the seats' streams stay in step far past the first deals."""
    specs = tuple(SeatSpec.parse(s) for s in ("colluder", "random", "pressure", "colluder"))
    request = EpisodeRequest(mode=mode, seed=2**62 + 7, deals=300, seats=4, seat_specs=specs)
    played = play_both(host, request, tmp_path)
    assert played["compiled"][:3] == played["python"][:3]


def test_the_compiled_engine_is_built_in_this_install():
    """The tests install with a C compiler (.ci/run): a build that failed quietly would
    leave every table in Python and these comparisons comparing Python with itself."""
    assert choice.NOT_BUILT is None


@settings(max_examples=60)
@given(
    seed=st.integers(0, 2**64 - 1),
    buffered=st.booleans(),
    bounds=st.lists(st.integers(1, 2**32 - 1) | st.integers(1, 700), min_size=1, max_size=40),
)
def test_bounded_draws_are_numpys(seed, buffered, bounds):
    """``rng.integers(n)`` as the seats call it, by the C code, equals numpy's, draw for draw,
    including a generator holding half a 64-bit word from an earlier 32-bit draw."""
    from arena.fast._compiled import next_integers

    rng = np.random.Generator(np.random.PCG64(seed))
    if buffered:
        rng.integers(7)  # a 32-bit draw leaves the word's other half buffered
    state = rng.bit_generator.state
    ours = next_integers(
        state["state"]["state"], state["state"]["inc"], state["has_uint32"], state["uinteger"],
        bounds,
    )  # fmt: skip
    assert ours == [int(rng.integers(n)) for n in bounds]


@pytest.mark.parametrize("deal", [1, 2, 5, 1000, 2**40])
def test_one_jump_per_deal_is_numpys_advance(deal):
    """Deal d's stream is the episode's advanced by d * 2**64 draws (seeding.DealStreams):
    the C table's affine jump, applied d times, lands where numpy's advance does."""
    streams = seeding.DealStreams(12345)
    start = streams.for_deal(0).bit_generator.state["state"]
    expected = streams.for_deal(deal).bit_generator.state["state"]["state"]
    mult, add = lcg_jump(deal * seeding.DealStreams.STRIDE, start["inc"])
    assert (mult * start["state"] + add) % 2**128 == expected
    step_mult, step_add = lcg_jump(seeding.DealStreams.STRIDE, start["inc"])
    state = start["state"]
    for _ in range(min(deal, 1000)):
        state = (step_mult * state + step_add) % 2**128
    if deal <= 1000:
        assert state == expected


def test_auto_plays_scripted_tables_compiled_and_records_it(host):
    request = EpisodeRequest(seed=3, deals=4, seat_specs=(SeatSpec("random"),))
    results, _ = run_episode(host, request, environ={})
    assert results.engine == "compiled" and results.to_json()["engine"] == "compiled"


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"talk": True}, "talk is on"),
        ({"clock": 60.0}, "a clock is set"),
        ({"seat_specs": (SeatSpec("claude", "honest"),)}, "seat 0 is not one the compiled"),
        ({"seat_specs": (SeatSpec("nash"),), "mode": "rung1", "seats": 2}, "seat 0 is not"),
    ],
)
def test_tables_the_compiled_engine_cannot_play(host, change, reason):
    """auto falls back to Python for them; compiled refuses them in one line that says why."""
    request = EpisodeRequest(**{"deals": 2, **change})
    results, _ = run_episode(host, request, environ={})
    assert results.engine == "python"
    compiled = EpisodeRequest(**{"deals": 2, **change, "engine": "compiled"})
    with pytest.raises(SetupError, match=f"--engine compiled: {reason}"):
        run_episode(host, compiled, environ={})


def test_a_watched_episode_plays_in_python(host):
    seen = []
    results, records = run_episode(host, EpisodeRequest(deals=2), environ={}, on_record=seen.append)
    assert results.engine == "python" and seen == records[: len(seen)] and len(seen) > 3


def test_unknown_engine_is_one_line(host):
    with pytest.raises(SetupError, match=r"unknown engine 'fast' \(choose from auto, python"):
        run_episode(host, EpisodeRequest(engine="fast"), environ={})


def test_pressure_pads_up_to_the_top_quantity(host, tmp_path):
    """Rung 1w has 2 dice on the table and a wild 6, so a bid of one is a third likely and
    pressure raises it rather than challenge: its raise to one pads to two, the very top,
    which only a table this small reaches often. The Python log must hold such a bid for
    the comparison to mean anything."""
    specs = (SeatSpec("pressure"), SeatSpec("pressure"))
    request = EpisodeRequest(mode="rung1w", seed=11, deals=200, seats=2, seat_specs=specs)
    played = play_both(host, request, tmp_path)
    records = played["python"][3]
    assert any(r["type"] == "bid" and r["quantity"] == 2 for r in records[2:])
    assert played["compiled"][:3] == played["python"][:3]


def test_the_cli_names_the_engine_and_refuses_in_one_line(capsys):
    """``arena play --engine``: results say which ran; an impossible ask is one error line."""
    assert main(["play", "--deals", "2", "--seat", "random", "--engine", "compiled", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["engine"] == "compiled"
    assert main(["play", "--deals", "2", "--engine", "python", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["engine"] == "python"
    assert main(["play", "--deals", "2", "--talk", "--engine", "compiled"]) == 2
    assert capsys.readouterr().err.strip() == "arena: error: --engine compiled: talk is on"


def test_a_league_file_may_choose_the_engine():
    """``engine`` in [table] is accepted (a bad one is refused in test_league)."""
    entrants = {"b": "bayes", "p": "pressure", "r": "random", "c": "colluder"}
    league = league_from_mapping({"entrants": entrants, "table": {"engine": "python"}})
    assert league.table.engine == "python"


@pytest.mark.slow
def test_without_a_compiler_the_build_goes_on_with_a_notice(tmp_path):
    """``setup.py`` on a machine with no working C compiler (CC=false): the build succeeds,
    says in one line that the compiled engine was not built, and leaves no extension."""
    source = Path(__file__).resolve().parents[1]
    copy = tmp_path / "src"
    shutil.copytree(
        source, copy, ignore=shutil.ignore_patterns(".*", "*.so", "_compiled.c", "build")
    )
    env = {**os.environ, "CC": "false", "LDSHARED": "false"}
    built = subprocess.run(
        [sys.executable, "setup.py", "-q", "build_ext", "--inplace"],
        cwd=copy, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    notices = [
        line for line in built.stdout.splitlines() if "compiled engine was not built" in line
    ]
    assert len(notices) == 1 and "the Python engine plays every table" in notices[0]
    assert "false'" in notices[0]  # the compiler (CC=false) was tried, not a missing Cython
    assert not list((copy / "arena" / "fast").glob("_compiled*.so"))


@pytest.mark.slow
def test_an_install_without_the_compiled_engine_plays_in_python_and_says_so_once(tmp_path):
    """The same CLI with the extension missing (as a compiler-less install leaves it):
    auto plays in Python with one notice line; compiled is refused in one line."""
    block = "import sys; sys.modules['arena.fast._compiled'] = None; from arena.cli import main; "
    auto = subprocess.run(
        [sys.executable, "-c", block + "sys.exit(main(sys.argv[1:]))", "play", "--deals", "3",
         "--json", "--log", str(tmp_path / "a.jsonl")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert auto.returncode == 0, auto.stderr
    assert json.loads(auto.stdout)["engine"] == "python"
    notice = [line for line in auto.stderr.splitlines() if "compiled engine is not built" in line]
    assert len(notice) == 1, auto.stderr
    compiled = subprocess.run(
        [sys.executable, "-c", block + "sys.exit(main(sys.argv[1:]))", "play", "--engine",
         "compiled"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert compiled.returncode == 2
    assert compiled.stderr.startswith("arena: error: --engine compiled: the compiled engine is not")
    assert len(compiled.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(("mode", "seats"), [("dice", 4), ("rung1", 2)])
def test_a_cap_far_above_the_ladder_is_played_compiled_and_alike(host, tmp_path, mode, seats):
    """A bid cap of 10**8 never binds (bids strictly rise up the ladder); the compiled table
    sizes a deal's lines by the ladder, not the cap, and writes the Python engine's bytes."""
    specs = (SeatSpec("random"),) * seats
    request = EpisodeRequest(
        mode=mode, seed=5, deals=40, seats=seats, seat_specs=specs, max_bids=10**8
    )
    played = play_both(host, request, tmp_path)
    assert played["compiled"][:3] == played["python"][:3]


def test_a_mode_with_symbols_past_32_bits_plays_in_python(host):
    """The C table holds symbols as 32-bit ints: a data mode beyond them is not compiled."""
    huge = Mode(name="huge", symbols=(1, 2**40), hand_size=2)
    rules = TableRules(mode=huge, seats=2)
    seats = [ScriptedSeat(SeatContext.derive(9, slot, rules), BAYES) for slot in (0, 1)]
    assert unsupported(rules, seats) == "mode 'huge' has symbols past 32 bits"
    config = EpisodeConfig(rules=rules, seed=9)
    assert choice.choose("auto", config, seats, watched=False).name == "python"
    with pytest.raises(choice.EngineUnavailable, match="symbols past 32 bits"):
        choice.choose("compiled", config, seats, watched=False)


class DeclaredBayes:
    """A seat of a plugin's own that plays bayes and declares so (``compiled_spec``)."""

    def __init__(self, context: SeatContext):
        self.bayes = ScriptedSeat(context, BAYES)

    def decide(self, view):
        return self.bayes.decide(view)

    def compiled_spec(self):
        return self.bayes.compiled_spec()


class UndeclaredBayes(DeclaredBayes):
    """The same play, with no declaration: the compiled engine must not take it."""

    compiled_spec = None


class DeclaringPlugin:
    @hookimpl
    def register_seats(self, register):
        register("declared", DeclaredBayes)
        register("undeclared", UndeclaredBayes)


def test_the_compiled_engine_plays_the_seats_that_declare_a_compiled_spec(host, tmp_path):
    """What a seat declares is all the compiled engine goes by: not its class, not its
    plugin. A declared seat plays compiled, byte for byte as the Python engine plays it
    and as bayes plays (it is bayes, on the same seat streams: only the names differ);
    the same seat undeclared plays in Python, and ``--engine compiled`` says which seat."""
    with plugged(DeclaringPlugin(), "declaring") as (declaring, info):
        assert info.broken is None
        request = EpisodeRequest(seed=11, deals=24, seat_specs=(SeatSpec("declared"),) * 4)
        played = play_both(declaring, request, tmp_path)
        assert played["compiled"][0] == played["python"][0]
        assert played["compiled"][4].engine == "compiled"
        bayes = attrs.evolve(request, seat_specs=(SeatSpec("bayes"),) * 4, engine="compiled")
        path = tmp_path / "bayes.jsonl"
        run_episode(host, bayes, path, environ={})
        # Past the header (names, provenance), every deal and the result are bayes's.
        assert until_result(tmp_path / "compiled.jsonl")[1:] == until_result(path)[1:]
        mixed = attrs.evolve(request, seat_specs=(SeatSpec("declared"), SeatSpec("undeclared")))
        results, _ = run_episode(declaring, mixed, environ={})
        assert results.engine == "python"
        with pytest.raises(SetupError, match="seat 1 is not one the compiled engine plays"):
            run_episode(declaring, attrs.evolve(mixed, engine="compiled"), environ={})


class TallyingPlugin:
    """A reporter that declares a tally for the C table with worths of its own: every
    facing, whatever its need, worth 1 and in band 10. Its figure, read from a log,
    is only a marker, so a section shows whether the table kept it or the log was read."""

    def __init__(self):
        self.read_from_log = 0
        self.worths_asked: list[tuple[str, int]] = []
        self.kept = per_log(self._from_log)

    def _from_log(self, records):
        self.read_from_log += 1
        return {"from": "the log"}

    def _worths(self, mode: Mode, unseen: int):
        self.worths_asked.append((mode.name, unseen))
        needs = range(1 - mode.hand_size, unseen + mode.hand_size + 1)
        return {face: dict.fromkeys(needs, (1.0, 10)) for face in mode.symbols}

    @hookimpl
    def register_audit_reporters(self, register):
        declared = CompiledTally(self.kept, self._worths, lambda **tallies: tallies)
        register("kept", self.kept, compiled=declared)


def test_the_c_table_keeps_the_tally_a_reporter_declares_and_the_audit_takes_it(tmp_path):
    """The compiled engine learns what to tally from the reporter's registration alone
    (the soft-play plugin is blocked here): it weighs each facing with the declared
    worths and the audit takes the declared figure as known, never reading the log for
    it; the Python engine's audit reads it from the log."""
    plugin = TallyingPlugin()
    with plugged(plugin, "tallying", {"ARENA_BLOCK_PLUGINS": "softplay"}) as (tallying, info):
        assert info.broken is None and "faced" not in tallying.registry.reporters
        specs = tuple(SeatSpec.parse(s) for s in ("bayes", "pressure", "random", "colluder"))
        request = EpisodeRequest(seed=21, deals=30, seat_specs=specs, engine="compiled")
        results, records = run_episode(tallying, request, tmp_path / "c.jsonl", environ={})
        assert results.engine == "compiled" and plugin.read_from_log == 0
        # 4 seats of 5 dice: a facer sees its own 5, so 3 * 5 = 15 are hidden.
        assert plugin.worths_asked == [("dice", 15)]
        kept = results.audit["kept"]
        from_log = softplay.tally(records)  # the soft-play tally's own reading of the log
        assert kept["faced"] == from_log.faced and kept["challenged"] == from_log.challenged
        assert kept["decisions"] == sum(seat.decisions for seat in results.seats)
        pairs = [(a, b) for a in range(4) for b in range(4)]
        # Every facing is in band 10 and, when not challenged, forgoes a worth of 1.
        assert all(kept["band_faced"][a][b] == [0] * 10 + [kept["faced"][a][b]] for a, b in pairs)
        unchallenged = [kept["faced"][a][b] - kept["challenged"][a][b] for a, b in pairs]
        assert [kept["band_forgone"][a][b][10] for a, b in pairs] == unchallenged
        assert sum(unchallenged) > 0  # the table had raises to weigh
        python = attrs.evolve(request, engine="python")
        results, _ = run_episode(tallying, python, tmp_path / "p.jsonl", environ={})
        assert results.audit["kept"] == {"from": "the log"} and plugin.read_from_log == 1


def test_with_no_tally_declared_the_compiled_audit_reads_the_log_as_the_python_one(tmp_path):
    """With the soft-play and decisions plugins blocked nobody declares a tally: the C table
    plays on, and the reporters that read the soft-play figures from the log (the collusion flags,
    the reasoning counts) give both engines the same sections."""
    blocked = load({"ARENA_BLOCK_PLUGINS": "softplay,decisions"})
    assert not any(r.compiled for r in blocked.registry.reporters.values())
    specs = tuple(SeatSpec.parse(s) for s in ("colluder", "random", "pressure", "colluder"))
    request = EpisodeRequest(seed=8, deals=40, seat_specs=specs)
    played = play_both(blocked, request, tmp_path)
    assert played["compiled"][:3] == played["python"][:3]
    audit = played["compiled"][4].audit
    assert (
        "faced" not in audit and audit["bluffs"] == softplay.tally(played["compiled"][3]).false_bids
    )


def test_the_compiled_engine_built_from_a_table_setup_knows_the_soft_play_tally(host, tmp_path):
    """Built as the runner builds either engine (one TableSetup), the compiled engine knows
    the soft-play tally, under the figure the soft-play reporters read, with the numbers
    that figure makes of the log, and the decision read-out's; and its seats used no model."""
    request = EpisodeRequest(seed=4, deals=20, seat_specs=(SeatSpec("colluder"),) * 4)
    config = build_config(host.registry, request)
    policies = ("colluder",) * 4
    seats = [build_seat(host.registry, config, slot, SeatSpec("colluder")) for slot in range(4)]
    event_log = EventLog(tmp_path / "log.jsonl")
    setup = TableSetup(
        config, seats, policies, event_log, reporters=host.registry.reporters.values()
    )
    engine = choice.choose("compiled", config, seats, watched=False).build(setup)
    engine.play()
    event_log.close()
    records = event_log.stream()
    known = engine.known()
    assert set(known) == {softplay.tally, decisions.tally}  # the two figures declared
    from_log = softplay.tally(records)
    assert from_log.bluff_thinking == [[], [], [], []]
    assert known[softplay.tally] == attrs.evolve(from_log, bluff_thinking=None)
    # The decision read-out folded from the C table's rows: what judging the log makes.
    folded, judged = known[decisions.tally], decisions.tally(records)
    assert all((folded[name] == judged[name]).all() for name in judged)
    assert folded["counts"].sum() > 0
    assert sum(map(sum, from_log.faced)) > 0 and sum(from_log.false_bids) > 0
    assert engine.usage(records) == [None] * 4
