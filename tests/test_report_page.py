"""``arena report``'s page in a real headless Chromium, with the network blocked.

A league source is checked against ``arena league show --json`` of the same
file (the report must show the league's own figures, not new ones); a list of
logs is checked against figures worked out here from the logs' lines by the
rulebook (rule 7: a challenge moves one point from loser to winner). The league
plants a colluding team (the ``colluder`` seat) so the pooled audit raises real
flags at its calibrated bars, and the page must mark exactly those cells.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections import defaultdict
from pathlib import Path

import pytest
from browser import loaded
from screenshots import save_screenshot

from arena.cli import main
from arena.eventlog import read_log
from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatSpec
from arena.web.report import report_figures

# What plotly drew, read back from the chart elements plotly.js fills in.
READ_FIGURE = """(id) => document.getElementById(id).data.map((t) => ({
  name: t.name || null, type: t.type, x: Array.from(t.x || []), y: Array.from(t.y || []),
  z: t.z ? t.z.map((row) => Array.from(row)) : null,
  plus: t.error_x ? Array.from(t.error_x.array) : null,
  minus: t.error_x ? Array.from(t.error_x.arrayminus) : null,
}))"""

READ_STANDINGS = """() => [...document.querySelectorAll('#standings-table tbody tr')].map((r) => ({
  entrant: r.dataset.entrant, episodes: r.querySelector('.episodes').textContent,
  mean: r.querySelector('.mean').textContent, low: r.querySelector('.low').textContent,
  high: r.querySelector('.high').textContent,
}))"""


def arena_json(*args: str) -> dict:
    """What ``arena ARGS`` prints on stdout, as JSON (the command must succeed)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(list(args)) == 0
    return json.loads(out.getvalue())


@pytest.fixture(scope="module")
def league(tmp_path_factory):
    """An 8-table league with a planted colluding team, its show JSON and its report."""
    where = tmp_path_factory.mktemp("report")
    db = where / "league.sqlite"
    pool = "colluder,colluder,bayes,pressure"
    run = ["league", "run", "--pool", pool, "--schedule", "random", "--tables", "8"]
    arena_json(*run, "--deals", "20", "--seed", "31", "--db", str(db), "--json")
    shown = arena_json("league", "show", str(db), "--json")
    report = where / "out" / "report.html"
    report.parent.mkdir()
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["report", str(db), "-o", str(report)]) == 0
    return shown, report


def test_the_standings_on_the_page_are_the_leagues(page, league):
    tab, watch = page
    shown, report = league
    loaded(tab, report)
    rows = tab.evaluate(READ_STANDINGS)
    assert [r["entrant"] for r in rows] == [s["entrant"] for s in shown["standings"]]
    for row, standing in zip(rows, shown["standings"], strict=True):
        assert row["episodes"] == str(standing["episodes"])
        assert row["mean"] == f"{standing['meanScore']:.3f}"
        assert row["low"] == f"{standing['ci95'][0]:.3f}"
        assert row["high"] == f"{standing['ci95'][1]:.3f}"
    # The chart's bars: a point at the mean, its error bar reaching each CI bound.
    (points,) = tab.evaluate(READ_FIGURE, "standings-plot")
    drawn = {
        name: (mean, mean - minus, mean + plus)
        for name, mean, minus, plus in zip(
            points["y"], points["x"], points["minus"], points["plus"], strict=True
        )
    }
    for standing in shown["standings"]:
        mean, low, high = drawn[standing["entrant"]]
        assert f"{mean:.3f}" == f"{standing['meanScore']:.3f}"
        assert f"{low:.3f}" == f"{standing['ci95'][0]:.3f}"
        assert f"{high:.3f}" == f"{standing['ci95'][1]:.3f}"
    save_screenshot(tab, "report")
    watch.assert_clean()


def test_the_head_to_head_cells_are_the_leagues(page, league):
    tab, watch = page
    shown, report = league
    loaded(tab, report)
    (heat,) = tab.evaluate(READ_FIGURE, "duels-plot")
    cells = {(h["entrant"], h["opponent"]): h["pointsPerDeal"] for h in shown["headToHead"]}
    names = [s["entrant"] for s in shown["standings"]]
    assert heat["x"] == names and heat["y"] == names
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            expected = cells.get((a, b))
            value = heat["z"][i][j]
            assert (value is None) == (expected is None), (a, b)
            if expected is not None:
                assert f"{value:+.3f}" == f"{expected:+.3f}"
    assert len(cells) == len(names) * (len(names) - 1)  # every pair met in 8 tables of 4
    watch.assert_clean()


def test_the_flags_drawn_are_exactly_the_pooled_audits(page, league):
    tab, watch = page
    shown, report = league
    pooled = shown["audit"]["flags"]
    assert pooled["flags"], "the planted team must raise flags for the test to mean anything"
    loaded(tab, report)
    traces = tab.evaluate(READ_FIGURE, "bias-plot")
    # Row = the facer, column = the bidder it waved through. Soft-play names a pair
    # and is about both directions; waves-through about the one it names.
    expected = set()
    for flag in pooled["flags"]:
        a, b = flag["policies"]
        directions = [(a, b), (b, a)] if flag["flag"] == "soft-play" else [(a, b)]
        expected |= {(flag["flag"], row, column) for row, column in directions}
    drawn = {
        (trace["name"].removeprefix("flag: "), row, column)
        for trace in traces
        if (trace["name"] or "").startswith("flag: ")
        for row, column in zip(trace["y"], trace["x"], strict=True)
    }
    assert drawn == expected
    heat = next(t for t in traces if t["type"] == "heatmap")
    assert heat["z"] == pooled["bias"]
    listed = tab.eval_on_selector_all(
        "#flags li.flag", "(items) => items.map((li) => [li.dataset.kind, li.dataset.pair])"
    )
    assert listed == [[f["flag"], "|".join(f["policies"])] for f in pooled["flags"]]
    save_screenshot(tab.locator("#audit"), "report-audit")
    watch.assert_clean()


def test_a_replay_link_opens_a_working_replay(page, league):
    tab, watch = page
    shown, report = league
    loaded(tab, report)
    links = tab.locator("a.replay")
    assert links.count() == shown["league"]["episodesStored"]
    links.nth(3).click()
    tab.wait_for_selector("body[data-ready]", state="attached")
    assert tab.url.split("#")[0] == (report.parent / "report_replays" / "episode-3.html").as_uri()
    assert tab.locator("#table .seat").count() == 4
    tab.keyboard.press("End")
    assert tab.text_content("#position").startswith("deal 19 of 0–19")
    watch.assert_clean()


SEATS = ("misbehaving", "bayes", "random", "pressure")


@pytest.fixture(scope="module")
def logs(tmp_path_factory, misbehaving_host):
    """Three short episodes with a seat that breaks rule 11, their logs and their report."""
    where = tmp_path_factory.mktemp("report_logs")
    paths = []
    for seed in (1, 2, 3):
        order = SEATS[seed:] + SEATS[:seed]  # the seats move, so the pairs differ per log
        request = EpisodeRequest(
            seed=seed, deals=8, seat_specs=tuple(SeatSpec.parse(s) for s in order)
        )
        path = where / f"ep{seed}.jsonl"
        run_episode(misbehaving_host, request, log_path=path, environ={})
        paths.append(path)
    report = where / "logs.html"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["report", *map(str, paths), "-o", str(report)]) == 0
    return [read_log(p) for p in paths], report


def test_a_list_of_logs_is_ranked_from_its_results(page, logs):
    tab, watch = page
    records, report = logs
    # Each policy holds one seat per log: its mean score is the mean of its seats' scores.
    scores = defaultdict(list)
    for log in records:
        result = log[-1] if log[-1]["type"] == "result" else None
        assert result is not None
        for seat in log[0]["seats"]:
            scores[seat["policy"]].append(result["score"][seat["slot"]])
    loaded(tab, report)
    rows = {r["entrant"]: r for r in tab.evaluate(READ_STANDINGS)}
    assert set(rows) == set(SEATS)
    for name, values in scores.items():
        mean = sum(values) / len(values)
        assert rows[name]["mean"] == f"{mean:.3f}"
        assert rows[name]["episodes"] == "3"
        assert float(rows[name]["low"]) <= mean + 5e-4 and mean - 5e-4 <= float(rows[name]["high"])
    watch.assert_clean()


def test_a_list_of_logs_head_to_head_and_rule_11_counts_are_the_logs(page, logs):
    tab, watch = page
    records, report = logs
    took, deals = defaultdict(int), defaultdict(int)
    counts = {kind: defaultdict(int) for kind in ("rejected", "fallbacks", "faults")}
    for log in records:
        policy = [seat["policy"] for seat in log[0]["seats"]]
        played = log[-1]["dealsPlayed"]
        for a in policy:
            for b in policy:
                deals[a, b] += played if a != b else 0
        for line in log:
            if line["type"] == "challenge":  # rule 7: one point from the loser to the winner
                took[policy[line["winner"]], policy[line["loser"]]] += 1
            if line["type"] == "rejected":
                counts["rejected"][policy[line["slot"]]] += 1
            if line["type"] == "fault":
                counts["faults"][policy[line["slot"]]] += 1
            if line["type"] in ("bid", "challenge") and line["fallback"]:
                counts["fallbacks"][policy[line["slot"]]] += 1
    assert counts["rejected"]["misbehaving"] and counts["fallbacks"]["misbehaving"]
    loaded(tab, report)
    (heat,) = tab.evaluate(READ_FIGURE, "duels-plot")
    for i, a in enumerate(heat["y"]):
        for j, b in enumerate(heat["x"]):
            if a == b:
                assert heat["z"][i][j] is None
                continue
            net = (took[a, b] - took[b, a]) / deals[a, b]
            assert f"{heat['z'][i][j]:+.3f}" == f"{net:+.3f}", (a, b)
    bars = {
        t["name"]: dict(zip(t["x"], t["y"], strict=True))
        for t in tab.evaluate(READ_FIGURE, "rule11-plot")
    }
    for kind, by_policy in counts.items():
        assert bars[kind] == {name: by_policy[name] for name in SEATS}, kind
    assert tab.locator("a.replay").count() == 3
    watch.assert_clean()


def test_report_errors_are_one_line(tmp_path, host, capsys):
    corrupt = tmp_path / "bad.jsonl"
    corrupt.write_text('{"type": "episode"\n', encoding="utf-8")
    good = tmp_path / "good.jsonl"
    run_episode(host, EpisodeRequest(seed=1, deals=2), log_path=good, environ={})
    (tmp_path / "blocker").write_text("a file where the report's folder would go")
    blocked = ["report", str(good), "-o", str(tmp_path / "blocker" / "r.html")]
    for args in (["report", str(tmp_path / "missing.sqlite")], ["report", str(corrupt)], blocked):
        assert main(args) == 2
        err = capsys.readouterr().err
        assert err.startswith("arena: error: ") and err.count("\n") == 1, err
        assert "Traceback" not in err


def test_partial_logs_are_refused_unless_asked_and_then_listed_unranked(tmp_path, host, capsys):
    request = EpisodeRequest(seed=5, deals=3)
    whole = tmp_path / "whole.jsonl"
    run_episode(host, request, log_path=whole, environ={})
    cut = tmp_path / "cut.jsonl"  # an interrupted episode: no result line, no audit tail
    lines = whole.read_text(encoding="utf-8").splitlines(keepends=True)
    cut.write_text(
        "".join(
            line
            for line in lines
            if '"type":"deal"' in line
            or '"type":"bid"' in line
            or '"type":"challenge"' in line
            or '"type":"episode"' in line
        ),
        encoding="utf-8",
    )
    out = tmp_path / "r.html"
    assert main(["report", str(cut), str(whole), "-o", str(out)]) == 2
    assert "no result line" in capsys.readouterr().err
    assert main(["report", "--partial", str(cut), "-o", str(out)]) == 2
    assert capsys.readouterr().err == "arena: error: no log has a result line: nothing to rank\n"
    assert main(["report", "--partial", str(cut), str(whole), "-o", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert "<title>PARTIAL: league report" in page
    assert f'"episodesStored":1,"unranked":["{cut}"]' in page  # listed, not ranked
    replays = tmp_path / "r_replays"
    assert sorted(p.name for p in replays.iterdir()) == ["episode-0.html", "episode-1.html"]
    for replay in replays.iterdir():  # the replays carry the report's mark too
        assert "<title>PARTIAL: " in replay.read_text(encoding="utf-8")


def write_report(db: Path, report: Path) -> None:
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["report", str(db), "-o", str(report)]) == 0


@pytest.fixture(scope="module")
def allocated(tmp_path_factory):
    """A --target-ci league of six entrants at four seats, so its rounds after the first
    are allocated (docs/league.md), with its show JSON, its show text and its report."""
    where = tmp_path_factory.mktemp("allocated")
    db = where / "allocated.sqlite"
    pool = "bayes,pressure,random,bayes,pressure,random"
    run = ["league", "run", "--pool", pool, "--tables", "12", "--deals", "4", "--seed", "3"]
    arena_json(*run, "--target-ci", "0.05", "--db", str(db), "--json")
    shown = arena_json("league", "show", str(db), "--json")
    assert shown["league"]["allocation"] == 1 and len(shown["narrowing"]) == 2
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        assert main(["league", "show", str(db)]) == 0
    write_report(db, where / "allocated.html")
    return shown, " ".join(text.getvalue().split()), where / "allocated.html"


@pytest.fixture(scope="module")
def paired(tmp_path_factory):
    """A paired league (four entrants, five duplicate groups): strat-t intervals throughout
    (tests/test_league_paired.py), with its show JSON and its report."""
    where = tmp_path_factory.mktemp("paired")
    db = where / "paired.sqlite"
    pool = "bayes,pressure,random,bayes"
    run = ["league", "run", "--pool", pool, "--tables", "5", "--duplicate", "--deals", "4"]
    arena_json(*run, "--seed", "3", "--db", str(db), "--json")
    shown = arena_json("league", "show", str(db), "--json")
    write_report(db, where / "paired.html")
    return shown, where / "paired.html"


ALLOCATED_MEANS = "mean episode score against the opponents it met (allocated rounds)"
"""What ``league show`` titles an allocated league's means (docs/league.md)."""


def test_an_allocated_leagues_report_says_its_means_are_against_the_opponents_met(
    open_page, allocated, league
):
    shown, text, report = allocated
    assert ALLOCATED_MEANS + "," in text  # league show says it
    tab, watch = open_page()
    loaded(tab, report)
    caption = tab.text_content("#standings-caption")
    assert caption == ALLOCATED_MEANS + ", with its 95% interval over tables"
    axis = tab.evaluate("() => document.getElementById('standings-plot').layout.xaxis.title.text")
    assert axis.startswith(ALLOCATED_MEANS)
    watch.assert_clean()
    # A league seated by its schedule says nothing of opponents met.
    plain, watch = open_page()
    loaded(plain, league[1])
    assert plain.text_content("#standings-caption") == (
        "mean episode score, with its 95% interval over tables"
    )
    assert "opponents it met" not in plain.text_content("body")
    watch.assert_clean()


READ_METHODS = """() => [...document.querySelectorAll('#standings-table tbody tr')].map(
  (r) => [r.dataset.entrant, r.querySelector('.method').textContent])"""

READ_DUEL_HOVERS = """() => document.getElementById('duels-plot').data[0].customdata.flat()"""


def test_each_interval_is_captioned_by_the_method_that_drew_it(open_page, paired, league):
    for (shown, report), method, caption in [
        (paired, "strat-t", "strat-t interval"),
        ((league[0], league[1]), "t", "t-interval"),
    ]:
        # every interval of the paired league is strat-t, of the random-schedule one a t
        rows = shown["standings"] + shown["headToHead"]
        assert {r["ciMethod"] for r in rows} == {method}
        tab, watch = open_page()
        loaded(tab, report)
        methods = tab.evaluate(READ_METHODS)
        assert methods == [[s["entrant"], caption] for s in shown["standings"]]
        hovers = [h for h in tab.evaluate(READ_DUEL_HOVERS) if " vs " in h]
        assert len(hovers) == len(shown["headToHead"])
        assert all(f"95% {caption} [" in hover for hover in hovers), hovers
        other = "t-interval" if method == "strat-t" else "strat-t interval"
        assert not any(other in hover for hover in hovers)
        watch.assert_clean()


# The colour plotly drew each entrant in, per chart, read from what plotly.js resolved
# (its _fullData: the colours a person sees, defaults included).
READ_COLOURS = """(id) => {
  const seen = [];
  for (const t of document.getElementById(id)._fullData) {
    if (t.type === 'scatter' && Array.isArray(t.marker.color)) {
      t.y.forEach((name, i) => seen.push([name, t.marker.color[i]]));
      continue;
    }
    if (t.line && t.line.color) seen.push([t.name, t.line.color]);
    if (t.marker && typeof t.marker.color === 'string') seen.push([t.name, t.marker.color]);
  }
  return seen;
}"""

ENTRANT_CHARTS = ("standings-plot", "narrowing-plot", "scores-plot", "curve-plot")


def test_an_entrant_has_one_colour_in_every_chart(page, allocated):
    tab, watch = page
    shown, _, report = allocated
    names = [s["entrant"] for s in shown["standings"]]
    # The standings rank is not the names' order, which the other charts use: a colour
    # taken from a chart's order would differ between them.
    assert names != sorted(names)
    loaded(tab, report)
    colours: dict[str, set[str]] = defaultdict(set)
    for chart in ENTRANT_CHARTS:
        seen = tab.evaluate(READ_COLOURS, chart)
        assert {name for name, _ in seen} == set(names), chart
        for name, colour in seen:
            colours[name].add(colour.lower())
    assert all(len(found) == 1 for found in colours.values()), colours
    assert len({found.pop() for found in colours.values()}) == len(names)  # each its own
    watch.assert_clean()


def standings_colours(document: dict) -> dict[str, str]:
    """The standings chart's colour of each entrant, as the report lays it out."""
    (points,) = report_figures(document, [])["standings-plot"]["data"]
    return dict(zip(points["y"], points["marker"]["color"], strict=True))


def test_an_entrants_colour_follows_its_name_not_its_place_in_the_ranking(allocated):
    shown = allocated[0]
    as_ranked = standings_colours(shown)
    # The same league ranked the other way round, as another look at it might rank it:
    # every entrant keeps its colour.
    reversed_ranking = shown | {"standings": shown["standings"][::-1]}
    assert standings_colours(reversed_ranking) == as_ranked
    assert len(set(as_ranked.values())) == len(as_ranked) == 6
