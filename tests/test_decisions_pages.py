"""The decision read-out where people look: the replay's marks and the league report's
charts, in a real headless Chromium with the network blocked.

Every mark the replay shows is compared with a grade worked out here from the log by the
thresholds docs/decisions.md writes down (``expected_grades``), never with the page's data.
"""

from __future__ import annotations

import pytest
from browser import loaded

from arena.cli import main
from arena.eventlog import read_log
from arena.modes import from_header
from arena.probability import count
from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatSpec

SEATS = ("random", "bayes", "random", "pressure")


def expected_grades(records: list[dict]) -> dict[tuple[int, int], tuple[str, float]]:
    """(deal, decision's place in its deal) -> (grade, the chance behind it), by the rules in
    docs/decisions.md: a decision its own hand settles is a blunder; else the expected
    points it forgoes (a challenge 2p - 1, a raise 1 - 2p) from 0.5 a mistake, from 0.2 an
    inaccuracy. Forced challenges are not graded."""
    header = records[0]
    mode = from_header(header)
    unseen = (len(header["seats"]) - 1) * header["handSize"]
    graded: dict[tuple[int, int], tuple[str, float]] = {}
    hands, standing, place = None, None, 0
    for record in records:
        if record["type"] == "deal":
            hands, standing, place = record["hands"], None, 0
            continue
        if record["type"] not in ("bid", "challenge"):
            continue
        here, place = place, place + 1
        hand = tuple(hands[record["slot"]])
        odds = None
        if standing is not None:
            need = standing["quantity"] - count(hand, standing["face"], mode.wild)
            odds = (
                mode.bid_probability(hand, standing["quantity"], standing["face"], unseen),
                need,
            )
        grade = None
        if record["type"] == "challenge":
            standing, forced = None, record["forced"]
            if forced:
                continue
            p, need = odds
            loss = max(0.0, 2 * p - 1)
            grade = "blunder" if need <= 0 else _by_loss(loss)
            behind = p
        else:
            own_need = record["quantity"] - count(hand, record["face"], mode.wild)
            behind = mode.bid_probability(hand, record["quantity"], record["face"], unseen)
            if own_need > unseen or (odds is not None and odds[1] > unseen):
                grade = "blunder"
            elif odds is not None:
                grade = _by_loss(max(0.0, 1 - 2 * odds[0]))
            if odds is not None:
                behind = odds[0]
            standing = record
        if grade is not None:
            graded[record["deal"], here] = (grade, behind)
    return graded


def _by_loss(loss: float) -> str | None:
    return "mistake" if loss >= 0.5 else "inaccuracy" if loss >= 0.2 else None


READ_MARKS = """() => [...document.querySelectorAll('#decisions tbody tr.decision')].map((row) => {
  const mark = row.querySelector('.mark.grade');
  return mark ? [Number(row.dataset.index), mark.textContent, mark.title] : null;
}).filter((x) => x)"""


@pytest.fixture(scope="module")
def replayed(tmp_path_factory, host):
    where = tmp_path_factory.mktemp("graded")
    log, html = where / "ep.jsonl", where / "ep.html"
    request = EpisodeRequest(seed=3, deals=12, seat_specs=tuple(SeatSpec(s) for s in SEATS))
    run_episode(host, request, log_path=log, environ={})
    assert main(["replay", str(log), "-o", str(html)]) == 0
    return read_log(log), html


def test_the_replay_marks_every_graded_decision_with_the_figure_behind_it(page, replayed):
    tab, watch = page
    records, html = replayed
    expected = expected_grades(records)
    assert {grade for grade, _ in expected.values()} >= {"blunder", "mistake"}  # random seats
    loaded(tab, html)
    shown = {}
    for deal in sorted({r["deal"] for r in records if r["type"] == "deal"}):
        tab.click(f'#deals tr[data-deal="{deal}"]')  # the deal at its challenge: every row
        for index, text, title in tab.evaluate(READ_MARKS):
            shown[deal, index] = (text, title)
    assert set(shown) == set(expected)
    signs = {"inaccuracy": "?!", "mistake": "?", "blunder": "??"}
    for place, (grade, behind) in expected.items():
        text, title = shown[place]
        assert text == f"{signs[grade]} {grade}"
        assert title.startswith(f"chance {behind:.3f} from its own hand")
    # The per-seat read-out beside the audit: bluff rates counted from the log here.
    table = tab.locator('table[data-figure="decisions"]')
    row = table.locator("tr", has_text="bluffRate").locator("td").all_text_contents()
    for slot, cell in enumerate(row):
        bids = [r for r in records if r["type"] == "bid" and r["slot"] == slot]
        table_of = {
            r["deal"]: [s for h in r["hands"] for s in h] for r in records if r["type"] == "deal"
        }
        false = sum(table_of[b["deal"]].count(b["face"]) < b["quantity"] for b in bids)
        assert cell == (
            f"{false / len(bids):.3f}" if 0 < false < len(bids) else str(false // len(bids))
        )
    watch.assert_clean()


def test_a_seat_view_shows_only_that_seats_own_grades(page, replayed):
    tab, watch = page
    records, html = replayed
    expected = expected_grades(records)
    seen = 0
    for deal in sorted({r["deal"] for r in records if r["type"] == "deal"}):
        # As s0 saw it (a grade reads the grader's hand), the deal at its last decision.
        tab.goto(html.as_uri() + f"#deal={deal}&decision=999&seat=0")
        tab.reload()
        tab.wait_for_selector("body[data-ready]", state="attached")
        seats = tab.evaluate(
            """() => [...document.querySelectorAll('#decisions tbody tr.decision')]
              .filter((row) => row.querySelector('.mark.grade'))
              .map((row) => row.children[1].textContent)"""
        )
        assert set(seats) <= {"s0"}
        seen += len(seats)
    made = [r for r in records if r["type"] in ("bid", "challenge")]
    assert seen == sum(1 for (deal, i), _ in expected.items() if _slot(made, deal, i) == 0) > 0
    watch.assert_clean()


def _slot(made: list[dict], deal: int, index: int) -> int:
    return [r for r in made if r["deal"] == deal][index]["slot"]


def test_the_league_report_draws_calibration_and_bluffs_against_catches(page, tmp_path):
    tab, watch = page
    db, html = tmp_path / "l.db", tmp_path / "l.html"
    entrants = "bayes,pressure,random,planted:overbids,planted:never-challenges"
    assert main(["league", "run", "--pool", entrants, "--tables", "6", "--deals", "8",
                 "--db", str(db), "--executor", "serial"]) == 0  # fmt: skip
    assert main(["report", str(db), "-o", str(html)]) == 0
    loaded(tab, html)
    traces = tab.evaluate(
        """() => ['calibration-plot', 'readout-plot'].map((id) =>
             document.getElementById(id).data.map((t) => t.name))"""
    )
    calibration, readout = traces
    # The diagonal, then one line per entrant that bid; one point per entrant that bid and
    # challenged (never-challenges has no challenge accuracy to plot).
    assert calibration[0] == "own hand's odds"
    assert sorted(calibration[1:]) == sorted(entrants.split(","))
    # Who has a point to plot, counted from the league's own logs: bids and challenges chosen.
    assert main(["league", "export", str(db), "--logs", str(tmp_path / "logs")]) == 0
    acted: dict[str, set[str]] = {}
    for log in (tmp_path / "logs").iterdir():
        records = read_log(log)
        policies = [seat["policy"] for seat in records[0]["seats"]]
        for r in records:
            if r["type"] == "bid" or (r["type"] == "challenge" and not r["forced"]):
                acted.setdefault(policies[r["slot"]], set()).add(r["type"])
    plotted = sorted(name for name, kinds in acted.items() if kinds == {"bid", "challenge"})
    assert "planted:never-challenges" not in plotted  # it never chose a challenge
    assert sorted(name.split(" (")[0] for name in readout) == plotted
    assert all("korn-graubard intervals, 95%" in name for name in readout)
    watch.assert_clean()
