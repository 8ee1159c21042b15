"""Leagues: the schedule, the league file, the store, and serial == threads == processes."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import sqlite3
import subprocess
import sys
from collections import Counter

import attrs
import pytest
import structlog
from hypothesis import given
from hypothesis import strategies as st
from league_runs import play
from plugins_for_tests.harness import plugged

from arena import hookimpl
from arena.cli import main
from arena.league.config import Entrant, LeagueError, LeagueSpec, league_from_mapping
from arena.league.cost import override
from arena.league.report import league_report
from arena.league.run import check_league, model_of
from arena.league.schedule import fixtures, schedule
from arena.league.store import LeagueStore, StoreError
from arena.registry import PaidCalls, Person
from arena.runner import EpisodeRequest
from arena.seats import SeatSpec

SCRIPTED = ("bayes", "pressure", "random")


def entrants(*names: str) -> tuple[Entrant, ...]:
    """Distinct entrants from scripted seats: ``bayes``, ``bayes#2`` (same policy, own name)..."""
    return tuple(Entrant(name, SeatSpec.parse(name.partition("#")[0])) for name in names)


def spec(**overrides) -> LeagueSpec:
    settings = dict(
        entrants=entrants(*SCRIPTED, "bayes#2"),
        tables=4,
        seed=11,
        table=EpisodeRequest(deals=6),
    )
    return LeagueSpec(**{**settings, **overrides})


def rows(path) -> list[tuple]:
    """Every stored row, the compressed logs included."""
    with sqlite3.connect(path) as db:
        found = list(db.execute("SELECT * FROM league"))
        for table in ("episodes", "seats", "points"):
            found += list(db.execute(f"SELECT * FROM {table} ORDER BY 1, 2"))
        found += [(idx, bytes(log)) for idx, log in db.execute("SELECT idx, log FROM logs")]
        return found


# --- the schedule ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["balanced", "random"])
def test_a_table_depends_only_on_the_master_seed_and_its_index(kind):
    # Drawing more tables must not change the tables already drawn.
    short, long = schedule(spec(tables=3, schedule=kind)), schedule(spec(tables=7, schedule=kind))
    assert long[:3] == short
    assert len({f.request.seed for f in long}) == 7


@given(
    kind=st.sampled_from(["balanced", "combinations", "random"]),
    duplicate=st.booleans(),
    seed=st.integers(0, 2**64),
    tables=st.integers(1, 3),
)
def test_a_schedule_drawn_as_it_is_read_is_a_short_leagues_whole_schedule(
    kind, duplicate, seed, tables
):
    """``fixtures`` draws a league's schedule lazily: the first fixtures of a league of
    10**15 tables are a short league's whole schedule, and ``episodes`` counts it
    (combinations: C(4, 4) = 1 group a round; duplicate: 4 rotations a table)."""
    short = spec(tables=tables, schedule=kind, duplicate=duplicate, seed=seed)
    whole = schedule(short)
    assert len(whole) == short.episodes == tables * (4 if duplicate else 1)
    drawn = fixtures(attrs.evolve(short, tables=10**15))
    assert list(itertools.islice(drawn, len(whole))) == whole


@given(
    seed=st.integers(0, 2**32),
    entrant_count=st.integers(4, 9),
    tables=st.integers(1, 12),
)
def test_balanced_tables_give_every_entrant_the_same_number_of_seats(seed, entrant_count, tables):
    # After any number of tables the counts differ by at most one; when tables x seats
    # is a multiple of the entrants they are all equal. Nobody sits twice at a table.
    names = [f"bayes:{i}" for i in range(entrant_count)]
    fixtures = schedule(spec(entrants=entrants(*names), tables=tables, seed=seed))
    count = Counter(name for f in fixtures for name in f.entrants)
    assert max(count.values(), default=0) - min(count.get(n, 0) for n in names) <= 1
    if tables * 4 % entrant_count == 0:
        assert set(count.values()) == {tables * 4 // entrant_count}
    assert all(len(set(f.entrants)) == 4 for f in fixtures)


def test_every_combination_seats_each_set_of_four_once_per_round():
    # 5 entrants, 4 seats: C(5, 4) = 5 tables a round; two rounds, each set twice.
    names = ("bayes", "pressure", "random", "bayes#2", "bayes#3")
    fixtures = schedule(spec(entrants=entrants(*names), schedule="combinations", tables=2))
    sets = Counter(frozenset(f.entrants) for f in fixtures)
    assert len(fixtures) == 10
    assert set(sets) == {frozenset(c) for c in itertools.combinations(names, 4)}
    assert set(sets.values()) == {2}


def test_duplicate_replays_each_table_once_per_seat():
    # How each replay is seated (a Latin square on the table order) is
    # tests/test_league_duplicate.py's; here: 4 replays a table, on one seed, every
    # entrant in every slot once.
    fixtures = schedule(spec(tables=2, duplicate=True))
    assert len(fixtures) == 2 * 4
    first = [f for f in fixtures if f.table == 0]
    assert {f.request.seed for f in first} == {first[0].request.seed}
    for slot in range(4):
        assert {f.entrants[slot] for f in first} == set(first[0].entrants)


def test_too_few_entrants_need_allow_repeat():
    with pytest.raises(LeagueError, match="3 entrants cannot fill 4-seat tables"):
        spec(entrants=entrants(*SCRIPTED))
    fixtures = schedule(spec(entrants=entrants(*SCRIPTED), allow_repeat=True, tables=3))
    # 3 tables x 4 seats over 3 entrants: 4 seats each, so someone sits twice per table.
    assert Counter(n for f in fixtures for n in f.entrants) == dict.fromkeys(SCRIPTED, 4)


# --- the league file --------------------------------------------------------------------


def test_a_league_file_names_entrants_and_their_claude_settings(host):
    league = league_from_mapping(
        {
            "league": {"seed": 3, "tables": 2, "duplicate": True, "budget_usd": 1.5},
            "table": {"deals": 7, "talk": True},
            "limits": {"concurrency": 8, "max_in_flight": 4},
            "entrants": {
                "base": "bayes",
                "honest": {"seat": "claude", "policy": "honest", "model": "m", "max_tokens": 99},
                "press": {"seat": "pressure"},
                "rand": "random",
            },
            "prices": {"m": {"input": 2.0}},
        },
        host.registry.seats,
    )
    assert [str(e.spec) for e in league.entrants] == [
        "bayes",
        "claude:honest?model=m&max_tokens=99",
        "pressure",
        "random",
    ]
    assert league.table.deals == 7 and league.table.talk and league.duplicate
    assert league.budget.usd == 1.5 and league.concurrency == 8
    assert league.api_limits.max_in_flight == 4
    # "m" is in no table: the override is its whole price, from the league file.
    assert league.prices["m"].input == 2.0 and league.prices["m"].output == 0.0
    assert league.prices["m"].source == "league file"


@pytest.mark.parametrize(
    "data, message",
    [
        ({"entrants": {"a": "bayes"}, "league": {"tabels": 3}}, "unknown key 'tabels'"),
        ({"entrants": {}}, "at least one entrant"),
        ({"entrants": {"a": {"seat": "claude"}}}, "needs policy"),
        ({"entrants": {"a": "bayes"}, "league": {"schedule": "swiss"}}, "unknown schedule"),
        ({"entrants": {"a": "bayes"}, "league": {"seed": -1}}, "seed must be a whole number >= 0"),
        ({"entrants": {"a": "bayes"}, "table": {"deals": "many"}}, "deals must be a whole number"),
        ({"entrants": {"a": "bayes"}, "league": {"budget_usd": "5"}}, "budget_usd must be"),
        ({"entrants": {"a": "bayes"}, "table": {"engine": "fast"}}, "engine must be one of auto"),
    ],
)
def test_league_file_mistakes_are_named(data, message, host):
    with pytest.raises(LeagueError, match=message):
        league_from_mapping(data, host.registry.seats)


# --- running and storing ------------------------------------------------------------------


@pytest.mark.slow
def test_serial_threads_and_processes_store_the_same_rows(tmp_path, host):
    league = spec(duplicate=True, tables=2)
    play(tmp_path / "serial.sqlite", league, host)
    play(tmp_path / "threads.sqlite", attrs.evolve(league, concurrency=3), host, "thread")
    play(tmp_path / "procs.sqlite", attrs.evolve(league, concurrency=2), host, "process")
    # 2 processes playing 3 and 2 tables at once in threads
    both = attrs.evolve(league, concurrency=5)
    play(tmp_path / "both.sqlite", both, host, "process", workers=2)
    serial = rows(tmp_path / "serial.sqlite")
    assert serial == rows(tmp_path / "threads.sqlite") == rows(tmp_path / "procs.sqlite")
    assert serial == rows(tmp_path / "both.sqlite")
    report = league_report(tmp_path / "serial.sqlite")
    assert report == league_report(tmp_path / "procs.sqlite")
    assert report == league_report(tmp_path / "both.sqlite")


def test_an_interrupted_league_resumes_to_the_same_rows(tmp_path, host):
    play(tmp_path / "whole.sqlite", spec(), host)
    cut = tmp_path / "cut.sqlite"
    play(cut, spec(), host)
    with sqlite3.connect(cut) as db:  # lose the last two episodes, as a crash would
        for table in ("logs", "points", "seats", "episodes"):
            db.execute(f"DELETE FROM {table} WHERE idx >= 2")
    play(cut, spec(), host)
    assert rows(cut) == rows(tmp_path / "whole.sqlite")


def test_every_episode_keeps_its_log_and_its_points_come_from_it(tmp_path, host):
    from arena.league.store import episode_log_text, open_read_only

    play(tmp_path / "l.sqlite", spec(tables=2), host)
    db = open_read_only(tmp_path / "l.sqlite")
    try:
        for idx, points in db.execute("SELECT idx, SUM(n) FROM points GROUP BY idx"):
            text = episode_log_text(db, idx)
            lines = text.splitlines()
            assert lines[0].startswith('{"type":"episode"')
            # the log's own bytes, as its results' digest names them (not a re-encoding)
            (results,) = db.execute("SELECT results FROM episodes WHERE idx = ?", (idx,)).fetchone()
            digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
            assert digest == json.loads(results)["logSha256"]
            # rule 7: every settled challenge moves one point: points rows sum to challenges
            assert points == sum('"type":"challenge"' in line for line in lines)
        sums = [s for (s,) in db.execute("SELECT SUM(points) FROM seats GROUP BY idx")]
        assert sums == [0, 0]  # zero-sum per episode
    finally:
        db.close()


def test_resuming_with_other_settings_is_refused(tmp_path, host):
    play(tmp_path / "l.sqlite", spec(tables=1), host)
    with pytest.raises(StoreError, match="other settings"):
        play(tmp_path / "l.sqlite", spec(tables=1, seed=12), host)


def test_a_failed_start_leaves_no_settings_behind(tmp_path, host):
    from arena.plugins import UnknownName

    bad = spec(entrants=entrants(*SCRIPTED, "nobody"), tables=1)
    with pytest.raises(UnknownName):
        play(tmp_path / "l.sqlite", bad, host)
    with sqlite3.connect(tmp_path / "l.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM league").fetchone() == (0,)
    play(tmp_path / "l.sqlite", spec(tables=1), host)  # the same file, another league: fine


def test_a_second_league_on_one_file_is_refused_while_the_first_runs(tmp_path, cli):
    first = LeagueStore(tmp_path / "l.sqlite")
    try:
        with pytest.raises(StoreError, match="another league is running"):
            LeagueStore(tmp_path / "l.sqlite")
        proc = cli("league", "run", "--pool", "bayes,pressure,random,bayes",
                   "--tables", "1", "--deals", "2", "--db", "l.sqlite")  # fmt: skip
        assert proc.returncode == 2
        assert proc.stderr.strip() == (
            "arena: error: l.sqlite: another league is running on this file"
        )
    finally:
        first.close()
    LeagueStore(tmp_path / "l.sqlite").close()  # released: the next run may start


def test_resuming_across_a_plugin_upgrade_needs_allow_upgrade(tmp_path, host):
    play(tmp_path / "l.sqlite", spec(tables=2), host)
    with sqlite3.connect(tmp_path / "l.sqlite") as db:  # as if played by an older release
        db.execute("UPDATE seats SET version = '0.0.1' WHERE idx = 0 AND entrant = 'pressure'")
        db.execute("DELETE FROM logs WHERE idx = 1")
        for table in ("points", "seats", "episodes"):
            db.execute(f"DELETE FROM {table} WHERE idx = 1")
    with pytest.raises(StoreError, match="'pressure' was played with liars-arena 0.0.1"):
        play(tmp_path / "l.sqlite", spec(tables=2), host)
    play(tmp_path / "l.sqlite", spec(tables=2), host, allow_upgrade=True)


@attrs.frozen
class Ran:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def cli(capsys, monkeypatch, tmp_path):
    """``arena ARGS`` in this process, in tmp_path; structlog reset afterwards."""
    monkeypatch.chdir(tmp_path)

    def run(*args: str) -> Ran:
        code = main(list(args))
        out, err = capsys.readouterr()
        return Ran(code, out, err)

    yield run
    structlog.reset_defaults()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--pool", "bayes,nobody,random,pressure"], "unknown seat 'nobody'"),
        (["--pool", "bayes,random,pressure,bayes", "--mode", "chess"], "unknown mode 'chess'"),
        (["--pool", "bayes,random,pressure,bayes", "--db", "not-a-db"], "not a league database"),
        (["missing.toml"], "missing.toml: cannot read league file"),
        (["bad.toml"], "bad.toml: not a TOML league file"),
        # a seat that waits for a person would stall an unattended league
        (["--pool", "bayes,human,random,pressure"], "a human seat waits for a person"),
    ],
)
def test_league_errors_are_one_line(tmp_path, cli, args, message):
    (tmp_path / "not-a-db").write_text("this is not sqlite, " * 100)
    (tmp_path / "bad.toml").write_text("[league\nseed = ")
    proc = cli("league", "run", "--tables", "1", *args)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arena: error:") and message in lines[0]


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--tables", "10"], "--tables"),  # the default's own value: still not the file's
        (["--seed", "3", "--deals", "2"], "--deals, --seed"),
        (["--no-talk"], "--talk"),
        (
            ["--duplicate", "--engine", "python", "--max-bids", "9"],
            "--duplicate, --engine, --max-bids",
        ),
    ],
)
def test_a_flag_the_league_file_would_drop_is_refused(tmp_path, cli, flags, named):
    # the file says 2 tables of 2 deals: a flag that describes the league differently was
    # silently ignored; it is refused by name, and nothing is stored
    (tmp_path / "league.toml").write_text(
        "[league]\ntables = 2\n[table]\ndeals = 2\n"
        '[entrants]\nbayes = "bayes"\npressure = "pressure"\nrandom = "random"\n'
        'again = "bayes"\n'
    )
    proc = cli("league", "run", "league.toml", "--db", "l.sqlite", *flags)
    assert proc.returncode == 2
    assert proc.stderr == (
        f"arena: error: {named}: the league file league.toml describes the league; change it"
        " there (these flags describe a --pool league)\n"
    )
    assert not (tmp_path / "l.sqlite").exists()
    # the run's own flags apply to a file's league
    proc = cli("league", "run", "league.toml", "--db", "l.sqlite", "--concurrency", "2", "--json")
    assert proc.returncode == 0, proc.stderr
    # 4 entrants at 4 seats: each sits at both tables
    assert sum(s["episodes"] for s in json.loads(proc.stdout)["standings"]) == 4 * 2


def test_a_pool_smaller_than_a_table_fills_it_by_repeats_as_before(cli):
    proc = cli("league", "--pool", "bayes,random", "--tables", "2", "--deals", "2", "--json")
    assert proc.returncode == 0, proc.stderr
    standings = json.loads(proc.stdout)["standings"]
    # 2 tables x 4 seats over 2 entrants, balanced: 4 seats each, 2 at every table.
    assert sorted((s["entrant"], s["seatings"], s["episodes"]) for s in standings) == [
        ("bayes", 4, 2),
        ("random", 4, 2),
    ]


def test_the_old_league_form_still_runs_and_show_reads_the_file(tmp_path, cli):
    proc = cli("league", "--pool", "bayes,pressure,random,bayes", "--tables", "2",
               "--deals", "3", "--db", "l.sqlite", "--json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    shown = cli("league", "show", "l.sqlite", "--json")
    assert shown.stdout == proc.stdout
    export = cli(
        "league", "export", "l.sqlite", "--csv", "out", "--logs", "logs", "--json", "r.json"
    )
    assert export.returncode == 0, export.stderr
    assert (tmp_path / "r.json").read_text() == proc.stdout.rstrip("\n")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "cost.csv",
        "head_to_head.csv",
        "standings.csv",
    ]
    logs = sorted((tmp_path / "logs").iterdir())
    assert len(logs) == 2
    audited = cli("audit", str(logs[0]), "--json")  # any league episode re-audits
    assert audited.returncode == 0, audited.stderr


class PersonSeatPlugin:
    """A seat of a plugin's own that a person plays: it says so with ``person=``."""

    @hookimpl
    def register_seats(self, register):
        ignored = Person(feed=lambda *_: print, screen=lambda _: dict, move=lambda *_: "no")
        register("doorman", lambda context: None, person=ignored)
        register("butler", lambda context: None)


def test_a_league_refuses_whichever_seat_declares_a_person():
    """What makes a seat wait for a person is its declaration, not the name ``human``:
    the same plugin's seat without one passes the check."""
    entrants = {"a": "bayes", "b": "random", "c": "pressure"}
    with plugged(PersonSeatPlugin(), "people") as (host, info):
        assert info.broken is None
        attended = league_from_mapping({"entrants": {**entrants, "d": "doorman"}})
        with pytest.raises(LeagueError, match="entrant 'd': a doorman seat waits for a person"):
            check_league(attended, host, allow_stand_in=False, environ={})
        unattended = league_from_mapping({"entrants": {**entrants, "d": "butler"}})
        check_league(unattended, host, allow_stand_in=False, environ={})  # raises nothing


class PaidSeatPlugin:
    """A third party's seat whose decisions are paid calls: it says so with ``paid=``."""

    @hookimpl
    def register_seats(self, register):
        def model(arg, environ):
            if arg == "broken":
                raise ValueError("no such persona")
            return environ.get("ORACLE_MODEL", "oracle-1")

        paid = PaidCalls("ORACLE_KEY", model, arg_key="persona", settings=("tone", "depth"))
        register("oracle", lambda context: None, argument="a persona", paid=paid)


def test_a_league_spells_checks_and_prices_whichever_seat_declares_paid_calls():
    """The league knows a paid seat by its declaration, not by the name ``claude``."""
    entrants = {"a": "bayes", "b": "random", "c": "pressure"}
    # Declared settings become the arg's query in the declared order, whatever the table's:
    # {persona = "sage", depth = 3, tone = "dry"} is oracle:sage?tone=dry&depth=3.
    table = {"seat": "oracle", "depth": 3, "tone": "dry", "persona": "sage"}
    with plugged(PaidSeatPlugin(), "oracles") as (host, info):
        assert info.broken is None
        seats = host.registry.seats
        league = league_from_mapping({"entrants": {**entrants, "o": table}}, seats)
        assert str(league.entrants[3].spec) == "oracle:sage?tone=dry&depth=3"
        with pytest.raises(LeagueError, match=r"entrant 'o': unknown key 'arg' \(known: persona"):
            league_from_mapping({"entrants": {"o": {"seat": "oracle", "arg": "sage"}}}, seats)
        with pytest.raises(LeagueError, match="entrant 'o': a oracle entrant needs persona = "):
            league_from_mapping({"entrants": {"o": {"seat": "oracle", "tone": "dry"}}}, seats)
        with pytest.raises(LeagueError, match=r"^no ORACLE_KEY: oracle entrants \(o\) would"):
            check_league(league, host, allow_stand_in=False, environ={"ORACLE_KEY": "  "})
        # With stand-ins allowed, or with the key, the check goes on to the price of the
        # model the seat declares it calls: oracle-1, which no table prices.
        for allow, environ in ((True, {}), (False, {"ORACLE_KEY": "k"})):
            with pytest.raises(LeagueError, match="entrant 'o': no price for model 'oracle-1'"):
                check_league(league, host, allow_stand_in=allow, environ=environ)
        priced = attrs.evolve(league, prices={"oracle-2": override("oracle-2", {"input": 1.0})})
        check_league(priced, host, False, {"ORACLE_KEY": "k", "ORACLE_MODEL": "oracle-2"})
        assert model_of(host.registry, SeatSpec.parse("oracle:sage"), {}) == "oracle-1"
        assert model_of(host.registry, SeatSpec.parse("bayes"), {}) is None
        with pytest.raises(LeagueError, match="seat oracle:broken: no such persona"):
            model_of(host.registry, SeatSpec.parse("oracle:broken"), {})


def test_other_settings_name_each_setting_that_differs_with_its_stored_and_asked_value(
    tmp_path, capsys
):
    db = tmp_path / "l.sqlite"
    pool = ["league", "run", "--pool", "bayes,pressure,random", "--deals", "2", "--db", str(db)]
    assert main([*pool, "--tables", "1", "--json"]) == 0
    capsys.readouterr()
    before = db.read_bytes()
    # Two settings differ: the tables (1 stored, 2 asked) and the seed (0 stored, 5 asked);
    # the entrants, deals and schedule are the same and are not named.
    assert main([*pool, "--tables", "2", "--seed", "5", "--json"]) == 2
    _, err = capsys.readouterr()
    assert err == (
        f"arena: error: {db} holds a league with other settings (seed: stored 0, asked 5;"
        " tables: stored 1, asked 2); resume it with its settings, or play this league in"
        " another file (--db)\n"
    )
    assert db.read_bytes() == before


def test_turns_the_fallback_played_after_api_faults_are_counted_per_entrant_and_said(tmp_path):
    """An outage of every request: each turn of the Claude entrant's seat faults once its
    retries run out, and bayes plays it (rule 11). The count is checked against the
    ``fault`` events of the stored logs, a record the count is not read from."""
    from messages_server import Fail, MessagesServer

    db, logs = tmp_path / "l.sqlite", tmp_path / "logs"
    pool = ["--pool", "bayes,random,claude:honest", "--tables", "1", "--deals", "2"]
    with MessagesServer(lambda body: Fail(500, "api_error", "down")) as server:
        env = os.environ | {
            "ANTHROPIC_API_KEY": "test-key",
            "ANTHROPIC_BASE_URL": server.url,
            "ARENA_CLAUDE_RETRY_ATTEMPTS": "1",
        }
        ran = subprocess.run(
            [sys.executable, "-m", "arena.cli", "league", "run", *pool, "--db", str(db)],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
    assert ran.returncode == 0, ran.stderr
    assert main(["league", "export", str(db), "--logs", str(logs)]) == 0
    faults = {}
    for log in logs.iterdir():
        records = [json.loads(line) for line in log.read_text().splitlines()]
        seats = records[0]["seats"]
        for record in records:
            if record["type"] == "fault":
                name = seats[record["slot"]]["policy"]
                faults[name] = faults.get(name, 0) + 1
    turns = faults.pop("claude:honest")
    assert turns > 0 and faults == {}  # only the Claude seat faulted
    note = (
        f"bayes (rule 11's fallback) played {turns} turns after API faults"
        f" (claude:honest {turns}); those turns count in the standings as the entrant's"
    )
    assert f"arena: warning: {note}\n" in ran.stderr
    shown = subprocess.run(
        [sys.executable, "-m", "arena.cli", "league", "show", str(db), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(shown.stdout)["faultTurns"] == {
        "bayes": 0,
        "claude:honest": turns,
        "random": 0,
    }
    shown = subprocess.run(
        [sys.executable, "-m", "arena.cli", "league", "show", str(db)],
        capture_output=True,
        text=True,
        check=True,
        env=os.environ | {"COLUMNS": "400"},
    )
    assert note in shown.stdout.splitlines()
