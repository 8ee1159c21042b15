"""Any text round-trips: whatever a seat says or notes and whatever a policy or entrant is
called is written and read back exactly by every reader, and is shown as text.

The text is hypothesis's, over all of Unicode: controls and NUL, U+0085, U+2028 and
U+2029 (line breaks to ``str.splitlines``, raw-legal in a JSON string), lone surrogates
(a JSON reply may carry ``"\\ud800"``), bidi overrides, and Rich markup. The one thing JSON
cannot say is a high surrogate followed by a low one as two characters (``\\ud83d\\ude00``
is the pair's character to every reader), so such text is not drawn.

The ``echo`` seat (registered here, in process) plays bayes's moves, says its seat
argument and notes it with a prefix, so the policy name ``echo:TEXT``, the talk and
the notes all carry the drawn text.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import tempfile
from pathlib import Path

import attrs
import pytest
import structlog
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from messages_server import MessagesServer, table_player, tool_call
from plugins_for_tests.harness import plugged
from rich.console import Console

from arena import hookimpl
from arena.audit_tables import audit_tables
from arena.check import check_results, load_checked
from arena.cli import main
from arena.cli.options import print_rows
from arena.eventlog import read_log
from arena.league.config import Entrant, LeagueSpec
from arena.league.report import league_report, report_tables
from arena.league.run import run_league
from arena.league.store import LeagueStore
from arena.plugins import load
from arena.render import deal_lines, settled_lines
from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatContext, SeatSpec
from arena.terminal_text import printable
from arena.web.page import script_json
from arena.web.replay import replay_data
from arena.web.report import report_html
from arena.web.report_data import league_episodes
from arena_plugins.scripted import bayes

_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")
TEXT = st.text(st.characters(exclude_categories=()), max_size=24).filter(
    lambda text: not _PAIR.search(text)
)
"""Any text JSON can hold exactly (see the module docstring), surrogates included."""
NAME = TEXT.filter(lambda text: text.strip() == text and text)
"""An entrant's name: any such text, not empty and not padded (a league file strips)."""
NO_SURROGATE = re.compile("[\ud800-\udfff]")
_SHOWN_RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\ud800-\udfff]")
"""What must never reach a terminal raw (a newline between lines is the only control)."""


class Echo:
    """Bayes's move, saying the seat's argument and noting it after ``notes:``."""

    def __init__(self, context: SeatContext, text: str | None = None):
        self.policy = bayes(context)
        self.text = (context.arg or "") if text is None else text

    def decide(self, view):
        return attrs.evolve(self.policy.decide(view), say=self.text, notes="notes:" + self.text)


def echo_json(context: SeatContext) -> Echo:
    """An echo of the text its argument spells as a JSON string: a league stores its seats'
    specs as SQLite TEXT, which cannot hold a lone surrogate, but the talk may."""
    return Echo(context, json.loads(context.arg))


@hookimpl
def register_seats(register):
    register("echo", Echo, description="says and notes its argument", argument="the text")
    register("echo-json", echo_json, description="says a JSON string", argument="JSON")


class _Plugin:
    register_seats = staticmethod(register_seats)


@pytest.fixture(scope="module")
def echo_host():
    with plugged(_Plugin(), "echo-text") as (plugin_host, info):
        assert info.broken is None, info.broken
        yield plugin_host


def arena(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(args))
    return code, out.getvalue()


def echo_episode(host, text: str, log: Path, seed: int = 1):
    specs = (SeatSpec("echo", text), SeatSpec("bayes"), SeatSpec("pressure"), SeatSpec("bayes"))
    request = EpisodeRequest(seed=seed, deals=2, talk=True, seat_specs=specs)
    return run_episode(host, request, log_path=log)


def spoken(records: list[dict]) -> list[tuple[str | None, str | None]]:
    return [(r["say"], r["notes"]) for r in records if r["type"] in ("bid", "challenge")]


EDGES = ("a\u2028b\u2029c\x85d", "\ud800", "x\udfff\x00", "\x1b[2J [red]x[/red]", "\u202e", "")
"""The cases of issue 20 and their kin, always tried: the separators that broke every
reader, a lone surrogate of each half, NUL, an escape sequence and markup, nothing."""


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXT)
@example(text=EDGES[0])
@example(text=EDGES[1])
@example(text=EDGES[2])
@example(text=EDGES[3])
@example(text=EDGES[4])
@example(text=EDGES[5])
def test_any_text_is_written_checked_audited_and_replayed_exactly(echo_host, text):
    with tempfile.TemporaryDirectory() as where:
        log = Path(where) / "ep.jsonl"
        results, records = echo_episode(echo_host, text, log)
        data = log.read_bytes()
        # JSON Lines: one record a line, to any splitter, even str.splitlines()
        assert data.decode("utf-8").splitlines() == data.decode("utf-8").split("\n")[:-1]
        read = read_log(log)
        assert read == records  # the file reads back as the episode's own records
        assert read[0]["seats"][0]["policy"] == f"echo:{text}"
        slot0 = [r for r in read if r["type"] in ("bid", "challenge") and r["slot"] == 0]
        assert slot0 and all(
            (r["say"], r["notes"], r["fallback"]) == (text, "notes:" + text, False) for r in slot0
        )
        assert load_checked(log) == read  # arena check replays it by the rules
        results_file = Path(where) / "results.json"
        results_file.write_text(json.dumps(results.to_json()), encoding="utf-8")
        assert check_results(log, results_file) == []  # logSha256 is of these bytes
        code, audited = arena("audit", str(log), "--json")
        assert code == 0 and json.loads(audited) == results.to_json()["audit"]
        page = replay_data(read, echo_host)
        assert json.loads(script_json(page)) == page  # the page's data, as embedded
        said = [(d["say"], d["notes"]) for deal in page["deals"] for d in deal["decisions"]]
        assert said == spoken(read)
        code, shown = arena("show", "--decisions", str(log))
        assert code == 0 and not _SHOWN_RAW.search(shown)


@settings(max_examples=6, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(NAME, min_size=4, max_size=4, unique=True), text=TEXT)
@example(
    names=["<a href=https://evil.example/>official results</a>", "[red]x[/red]", "7", "a\u2028b"],
    text=EDGES[0] + EDGES[1],
)
def test_a_league_stores_reports_and_exports_any_names_and_text(echo_host, names, text):
    """The store is SQLite TEXT, which holds UTF-8 only: a name with a lone surrogate
    cannot be stored, so names here are any text without one; the talk may hold one
    (the log is stored as the bytes the writer wrote)."""
    names = [NO_SURROGATE.sub("?", name) for name in names]
    if len(set(names)) < 4:
        return
    echo = SeatSpec("echo-json", json.dumps(text))
    entrants = tuple(
        Entrant(name, echo if i == 0 else SeatSpec("bayes")) for i, name in enumerate(names)
    )
    league = LeagueSpec(entrants=entrants, tables=2, seed=5, table=EpisodeRequest(deals=2))
    league = attrs.evolve(league, table=attrs.evolve(league.table, talk=True))
    with tempfile.TemporaryDirectory() as where:
        db = Path(where) / "league.sqlite"
        store = LeagueStore(db)
        try:
            run_league(league, store, echo_host)
        finally:
            store.close()
        report = league_report(db)
        assert sorted(s["entrant"] for s in report["standings"]) == sorted(names)
        stored = list(league_episodes(db))
        code, _ = arena("league", "export", str(db), "--logs", str(Path(where) / "logs"))
        exported = sorted((Path(where) / "logs").iterdir())
        assert code == 0 and len(stored) == len(exported) == 2
        for episode, path in zip(stored, exported, strict=True):
            assert read_log(path) == episode.records
            assert set(episode.entrants) <= set(names)
            echoed = [
                r
                for r in episode.records
                if r["type"] in ("bid", "challenge") and episode.entrants[r["slot"]] == names[0]
            ]
            assert echoed and all(r["notes"] == "notes:" + text for r in echoed)
        console = Console(file=io.StringIO(), force_terminal=True, width=400)
        for table in report_tables(report, str(db)):
            console.print(table)
        shown = _ANSI.sub("", console.file.getvalue())
        assert not _SHOWN_RAW.search(shown)
        for name in names:  # every name, as text, whatever markup it looks like
            assert printable(name) in shown


def nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


class OddReplySeat:
    """Replies what its argument names: a NaN quantity, or a quantity nested 2,000 or
    100,000 lists deep. Rule 11 rejects each; the log must still be written and read."""

    REPLIES = {
        "nan": lambda: {"action": "bid", "quantity": float("nan"), "face": 2},
        "deep": lambda: {"action": "bid", "quantity": nested(2_000), "face": 2},
        "deeper": lambda: {"action": "bid", "quantity": nested(100_000), "face": 2},
    }

    def __init__(self, context: SeatContext):
        self.reply = self.REPLIES[context.arg]

    def decide(self, view):
        return self.reply()


@pytest.mark.parametrize(
    ("kind", "logged"),
    [
        # JSON has no NaN and the reader refuses one: the reply is logged as its repr
        ("nan", "{'action': 'bid', 'quantity': nan, 'face': 2}"),
        # json.dumps raised RecursionError past about 1,000 levels, and the episode with it
        ("deep", "a dict nested past 32 levels"),
        ("deeper", "a dict nested past 32 levels"),
    ],
)
def test_an_odd_reply_is_logged_as_text_the_reader_takes(tmp_path, kind, logged):
    class Plugin:
        @staticmethod
        @hookimpl
        def register_seats(register):
            register("odd", OddReplySeat, argument="nan, deep or deeper")

    log = tmp_path / "odd.jsonl"
    with plugged(Plugin(), "odd") as (plugin_host, _info):
        specs = (SeatSpec("odd", kind), SeatSpec("bayes"))
        run_episode(plugin_host, EpisodeRequest(seed=1, deals=1, seat_specs=specs), log_path=log)
    rejected = [r for r in load_checked(log) if r["type"] == "rejected"]
    assert rejected and all(r["reply"] == logged for r in rejected)


def test_audit_append_keeps_a_line_holding_a_raw_separator_byte_for_byte(tmp_path, echo_host):
    """A log from before the writer escaped U+2028 holds it raw inside a string: audit
    --append reads it with the one reader (a newline ends a line, nothing else) and keeps
    every play line as it was."""
    log = tmp_path / "old.jsonl"
    echo_episode(echo_host, "a\u2028b\u2029c\x85", log)
    raw = (
        log.read_bytes()
        .replace(b"\\u2028", "\u2028".encode())
        .replace(b"\\u2029", "\u2029".encode())
        .replace(b"\\u0085", "\x85".encode())
    )
    log.write_bytes(raw)
    assert "\u2028".encode() in raw and len(raw.split(b"\n")) < len(raw.decode().splitlines())
    play = [line for line in raw.split(b"\n") if line and b'"type":"audit"' not in line]
    assert arena("audit", str(log), "--append")[0] == 0
    after = log.read_bytes().split(b"\n")
    assert after[: len(play)] == play
    assert (
        read_log(log)[1:] and read_log(log)[0]["seats"][0]["policy"] == "echo:a\u2028b\u2029c\x85"
    )


CLAUDE_NOTES = "plan\u2028\u2029\x85\ud800 [red]x[/red] \x1b[2J"


def test_a_claude_seats_notes_round_trip_and_it_keeps_playing(tmp_path, monkeypatch):
    """Issue 20's row: a Claude seat whose notes hold U+2028 made every reader refuse the
    log, and a lone surrogate in them (the API's JSON may carry "\\ud800") failed every
    later request of the seat (rule 11 fell back for the rest of the episode). Over the
    real SDK and the loopback API: the notes are logged exactly, the log passes arena
    check, the seat is never rejected, and its next prompt shows the notes back."""
    structlog.reset_defaults()
    legal = table_player()

    def respond(body):
        move = dict(legal(body).content[0]["input"])
        return tool_call(move | {"notes": CLAUDE_NOTES})

    log = tmp_path / "claude.jsonl"
    with MessagesServer(respond) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        specs = (SeatSpec.parse("claude:honest"), SeatSpec("bayes"), SeatSpec("pressure"))
        request = EpisodeRequest(seed=4, deals=3, talk=True, seat_specs=specs)
        run_episode(load({}), request, log_path=log)
    records = load_checked(log)
    mine = [r for r in records if r["type"] in ("bid", "challenge") and r["slot"] == 0]
    assert len(mine) >= 2 and all(r["notes"] == CLAUDE_NOTES for r in mine)
    assert not [r for r in records if r["type"] in ("rejected", "fault")]
    assert all(not r["fallback"] for r in mine)
    shown_back = server.requests[1].json["messages"][0]["content"][-1]["text"]
    assert "<notes>\nplan\u2028\u2029\x85\\ud800 [red]x[/red] \x1b[2J\n</notes>" in shown_back


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
"""The styles Rich itself writes (bold headings): not the names' text."""


# --- shown as text: the terminal and Rich ------------------------------------------------

HOSTILE = "\x1b[2J\x1b]8;;https://evil.example/\x07official\x1b]8;;\x07 [red]x[/red] \u202eevil"


def test_talk_and_names_reach_the_terminal_escaped():
    """ESC (0x1b) and BEL (0x07) as \\x1b and \\x07, the right-to-left override U+202E as
    \\u202e, each spelled out character for character; the markup stays as typed."""
    expected = (
        "\\x1b[2J\\x1b]8;;https://evil.example/\\x07official\\x1b]8;;\\x07 [red]x[/red] \\u202eevil"
    )
    assert printable(HOSTILE) == expected
    records = [
        {"type": "episode", "seed": 0, "mode": "dice", "handSize": 1,
         "seats": [{"slot": 0, "policy": HOSTILE}] * 2},
        {"type": "deal", "deal": 0, "opener": 0, "hands": [[1], [2]]},
        {"type": "bid", "deal": 0, "slot": 0, "quantity": 1, "face": 2, "fallback": False,
         "say": HOSTILE, "published": HOSTILE, "notes": None},
        {"type": "challenge", "deal": 0, "slot": 1, "bidder": 0, "quantity": 1, "face": 2,
         "actual": 1, "forced": False, "fallback": False, "winner": 0, "loser": 1,
         "say": None, "published": None, "notes": None},
        {"type": "result", "status": "complete", "dealsPlayed": 1, "points": [1, -1],
         "score": [1.0, 0.0]},
    ]  # fmt: skip
    lines = [*deal_lines(records, every_decision=True), *settled_lines(records)]
    assert f"          s0 says: {expected}" in lines
    assert "     0  " + expected + "      +1  1.000      1         0         0      0" in lines
    assert not any(_SHOWN_RAW.search(line) for line in lines)


def test_a_listing_shows_a_plugins_description_escaped(capsys):
    """``arena seats`` and ``arena plugins`` print third parties' names and descriptions."""
    rows = [{"name": "twin", "description": HOSTILE}]
    assert print_rows(argparse.Namespace(json=False), rows, lambda r: r["description"]) == 0
    assert capsys.readouterr().out == printable(HOSTILE) + "\n"


def test_text_in_an_error_line_is_escaped(tmp_path, capsys):
    """What a reader's error echoes (here a file named with an escape sequence, as an
    export of hostile names might make) reaches the terminal escaped: in arena check's
    output and in every command's ``arena: error:`` line."""
    log = tmp_path / "ev\x1b[2Jil.jsonl"
    log.write_text("{}\n", encoding="utf-8")
    assert main(["check", str(log)]) == 1
    assert main(["audit", str(log)]) == 2
    captured = capsys.readouterr()
    shown = f"{tmp_path}/ev\\x1b[2Jil.jsonl:1: not a valid event (unknown event type None)"
    assert captured.out == shown + "\n"
    assert captured.err == f"arena: error: {shown}\n"


def test_printable_leaves_ordinary_text_of_any_script_alone():
    for text in ("bayes", "héllo wörld", "日本語の名前", "emoji 🎲 and tab-free", "a\\b"):
        assert printable(text) == text
    # NUL, DEL and a C1 control (U+0085) by their code; a lone surrogate too
    assert printable("\x00\x7f\x85\ud800\u2028") == "\\x00\\x7f\\x85\\ud800\\u2028"


def test_audit_tables_show_names_and_sections_as_text():
    """A policy named like markup and a flag field holding an escape sequence print as
    typed (Rich would otherwise style [red]...[/red] and pass ESC through)."""
    sections = {
        "flags": [{"flag": "soft-play", "policies": ["[red]x[/red]", "\x1b[2J"]}],
        "[bold]section[/bold]": "a [link=https://evil.example/]link[/link]",
    }
    console = Console(file=io.StringIO(), force_terminal=True, width=200)
    for part in audit_tables(sections, ["[red]x[/red]", "\x1b[2J"]):
        console.print(part, highlight=False, markup=False)
    shown = _ANSI.sub("", console.file.getvalue())
    assert "[red]x[/red], \\x1b[2J" in shown  # the flag's policies, joined by ", "
    assert "[bold]section[/bold]: a [link=https://evil.example/]link[/link]" in shown
    assert "\x1b[2J" not in shown and "\x1b]8" not in shown


HOSTILE_NAMES = (
    "<a href=https://evil.example/>official results</a>",
    "[red]x[/red]",
    "7",
    "2024-01-01",
    "A&amp;B \x1b[2J",
)
"""Entrants named as a link, as Rich markup, as a number, as a date, and as an HTML entity
with an escape sequence: each must be shown as typed."""


@pytest.fixture(scope="module")
def hostile_league(tmp_path_factory):
    """A league of scripted seats under HOSTILE_NAMES, run by the CLI, and its report page."""
    where = tmp_path_factory.mktemp("hostile")
    seats = ["bayes", "pressure", "random", "bayes", "pressure"]
    entrants = "".join(
        f"{json.dumps(name)} = {json.dumps(seat)}\n"
        for name, seat in zip(HOSTILE_NAMES, seats, strict=True)
    )
    league_toml = where / "league.toml"
    league_toml.write_text(
        f"[league]\nseed = 1\ntables = 5\n[table]\ndeals = 3\n[entrants]\n{entrants}",
        encoding="utf-8",
    )
    db = where / "league.sqlite"
    assert arena("league", "run", str(league_toml), "--db", str(db), "--json")[0] == 0
    report = where / "report.html"
    assert arena("report", str(db), "-o", str(report))[0] == 0
    return db, report


def test_league_show_prints_names_that_look_like_markup_as_typed(hostile_league):
    """``[red]x[/red]`` was read as Rich markup by ``league show``: its name printed as
    a red ``x``. Now the tables hold every name as typed, and an ESC in a name is escaped."""
    db, _ = hostile_league
    console = Console(file=io.StringIO(), force_terminal=True, width=400)
    for table in report_tables(league_report(db), str(db)):
        console.print(table)
    shown = _ANSI.sub("", console.file.getvalue())
    for name in HOSTILE_NAMES:
        assert printable(name) in shown
    assert "A&amp;B \\x1b[2J" in shown and not _SHOWN_RAW.search(shown)


# Any anchor a label drew counts, with or without its href (plotly keeps an <a> whose href
# it would not parse); plotly.js 2.8 (plotly 5.5) drew its own modebar buttons as <a>.
READ_CHARTS = """() => ({
  links: document.querySelectorAll('.js-plotly-plot a:not(.modebar-btn)').length,
  ticks: [...document.querySelectorAll('#standings-plot .ytick text')].map((t) => t.textContent),
  legend: [...document.querySelectorAll('#curve-plot .legendtext')].map((t) => t.textContent),
})"""


def test_the_report_charts_show_names_as_text_not_links_numbers_or_dates(page, hostile_league):
    """Plotly reads a subset of HTML in its labels: the name ``<a href=...>`` drew a live
    link. Now no chart holds a link, each standings tick is a name as typed (so "7" and
    "2024-01-01" are categories, not a number axis or a date axis), and the legend too."""
    tab, watch = page
    _, report = hostile_league
    tab.goto(report.as_uri())
    tab.wait_for_selector("body[data-ready]", state="attached")
    drawn = tab.evaluate(READ_CHARTS)
    assert drawn["links"] == 0
    assert sorted(drawn["ticks"]) == sorted(HOSTILE_NAMES)
    assert sorted(drawn["legend"]) == sorted(HOSTILE_NAMES)
    watch.assert_clean()


def test_names_that_read_as_dates_are_categories_on_the_charts(page, tmp_path):
    """Plotly guesses an axis's type from its labels (the template keeps numbers as
    text, not dates): bars for entrants named as dates stood on a time axis, ticked by
    month and placed by date. Each name is a category: the ticks are exactly the names."""
    names = ["2024-01-01", "2024-02-01", "2024-03-01", "2025-01-01"]
    kinds = ["input", "output", "cacheRead", "cacheWrite"]
    used = {**dict.fromkeys(kinds, 5), "total": 20}
    document = {
        "league": {"mode": "dice", "episodesStored": 1},
        "standings": [
            {"entrant": n, "meanScore": 0.5, "ci95": [0.4, 0.6], "ciMethod": "t", "episodes": 1,
             "rating": 0.0, "points": 0}
            for n in names
        ],
        "headToHead": [],
        "cost": {
            "tokens": {kind: 4 * n for kind, n in used.items()},
            "usd": None,
            "byEntrant": {n: {"tokens": used, "usd": None} for n in names},
        },
        "audit": {},
    }  # fmt: skip
    report = tmp_path / "report.html"
    report.write_text(report_html(document, [], source="hand-made"), encoding="utf-8")
    tab, watch = page
    tab.goto(report.as_uri())
    tab.wait_for_selector("body[data-ready]", state="attached")
    ticks = tab.evaluate(
        "() => [...document.querySelectorAll('#tokens-plot .xtick text')].map((t) => t.textContent)"
    )
    assert sorted(ticks) == sorted(names)
    watch.assert_clean()


def test_the_human_terminal_seat_shows_other_seats_text_escaped(capsys):
    from arena_plugins.human.terminal import _show

    _show(f'table: s1 {HOSTILE}\n  s1 said: "\x1b[2J"')
    out = capsys.readouterr().out
    assert out == f'table: s1 {printable(HOSTILE)}\n  s1 said: "\\x1b[2J"\n'
