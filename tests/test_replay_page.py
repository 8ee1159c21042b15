"""``arena replay``'s page in a real headless Chromium, with the network blocked.

Every figure read off the page is compared with the same figure worked out
from the log by the rulebook (``replay_expected``), never with the page's own
data. The episode is a talking table with two ``misbehaving`` seats, so
rejections, fallbacks, faults, notes and token use all occur.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from browser import loaded
from replay_expected import expected_deals, tail
from screenshots import save_screenshot

from arena.audit import rewrite_audit_tail
from arena.cli import main
from arena.eventlog import read_log
from arena.events import Audit
from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatSpec
from arena_plugins.collusion_flags import EpisodeFacings, Thresholds, by_slot, flags

SEATS = ("misbehaving", "bayes", "misbehaving", "pressure")
FIGURES = ("faced", "challenged", "net", "expLoss")

# Everything the test reads off the page for the deal on screen, in one round trip.
READ_DEAL = """() => {
  const text = (row, css) => { const c = row.querySelector(css); return c ? c.textContent : null; };
  const rows = [...document.querySelectorAll('#decisions tbody tr')].map((row) => ({
    kind: row.dataset.kind,
    seat: row.children[1].textContent,
    action: text(row, '.action'),
    pBidder: text(row, '.p-bidder'), pFacer: text(row, '.p-facer'), pSeat: text(row, '.p-seat'),
    facer: text(row, '.facer'), truth: text(row, '.truth'), outcome: text(row, '.outcome'),
    talk: text(row, '.published'), said: text(row, '.said'), notes: text(row, '.notes'),
    rejected: row.querySelectorAll('.mark.rejected').length,
    fallback: row.querySelectorAll('.mark.fallback').length,
    faults: row.querySelectorAll('.mark.fault').length,
    forced: row.querySelectorAll('.mark.forced').length,
    usage: [...row.querySelectorAll('.usage')].map((u) => u.textContent),
    reasons: [...row.querySelectorAll('.reason')].map((r) => r.textContent),
  }));
  const seats = {};
  for (const card of document.querySelectorAll('#table .seat')) {
    seats[card.dataset.slot] = {
      points: card.querySelector('.points').textContent,
      hand: [...card.querySelectorAll('.sym')].map((s) => s.textContent),
    };
  }
  return { position: document.getElementById('position').textContent, rows, seats };
}"""


def signed(n: int) -> str:
    return f"+{n}" if n > 0 else str(n)


@pytest.fixture(scope="module")
def episode(tmp_path_factory, misbehaving_host):
    """A 30-deal talking episode whose log tail holds real flags, and its replay page.

    Within one episode the calibrated flags are silent by construction (docs/audit.md),
    so the tail is rewritten with the flags the real ``collusion_flags.flags`` raises
    on this log at bars low enough to fire: one waves-through per seat and its predecessor.
    """
    where = tmp_path_factory.mktemp("replay")
    log = where / "ep.jsonl"
    request = EpisodeRequest(
        seed=7,
        deals=30,
        talk=True,
        max_bids=6,  # low enough that the cap forces some challenges (rule 8)
        seat_specs=tuple(SeatSpec.parse(s) for s in SEATS),
    )
    run_episode(misbehaving_host, request, log_path=log, environ={})
    low_bars = Thresholds(min_facings=1, soft_play=-0.5, waves_through=-0.5)
    raised = flags(by_slot(EpisodeFacings.from_records(read_log(log))), low_bars)
    assert raised, "the low bars must raise flags for the test to mean anything"
    rewrite_audit_tail(log, [Audit("flags", flag) for flag in raised])
    page = where / "ep.html"
    assert main(["replay", str(log), "-o", str(page)]) == 0
    return read_log(log), page


def replayed(host, folder: Path, name: str, request: EpisodeRequest) -> tuple[Path, Path]:
    """Play ``request`` to ``name.jsonl`` and write its replay beside it as ``name.html``."""
    log, html = folder / f"{name}.jsonl", folder / f"{name}.html"
    run_episode(host, request, log_path=log, environ={})
    assert main(["replay", str(log), "-o", str(html)]) == 0
    return log, html


def test_every_deals_points_bids_and_challenge_equal_the_logs(page, episode):
    tab, watch = page
    records, html = episode
    loaded(tab, html)
    for deal in expected_deals(records):
        tab.click(f'#deals tr[data-deal="{deal["deal"]}"]')  # opens the deal at its challenge
        shown = tab.evaluate(READ_DEAL)
        assert shown["position"].startswith(f"deal {deal['deal']} of")
        assert len(shown["rows"]) == len(deal["decisions"])
        for row, decision in zip(shown["rows"], deal["decisions"], strict=True):
            check_row(row, decision, deal["hands"], records)
        # At the challenge every hand is revealed and the points are those after the deal.
        for slot, points in enumerate(deal["pointsAfter"]):
            seat = shown["seats"][str(slot)]
            assert seat["points"] == signed(points)
            assert seat["hand"] == [str(s) for s in deal["hands"][slot]]
        cells = tab.locator(f'#deals tr[data-deal="{deal["deal"]}"] td.pts').all_text_contents()
        assert cells == [signed(p) for p in deal["pointsAfter"]]
    result = next(r for r in records if r["type"] == "result")
    assert deal["pointsAfter"] == result["points"]
    watch.assert_clean()


def check_row(row: dict, decision: dict, hands: list[list[int]], records: list[dict]) -> None:
    """One decision as the spectator sees it, against the log and the rulebook."""
    assert row["kind"] == decision["type"]
    assert row["seat"] == f"s{decision['slot']}"
    before = [r for r in _pending_before(records, decision) if r["slot"] == decision["slot"]]
    assert row["reasons"] == [r["reason"] for r in before if r["type"] in ("rejected", "fault")]
    assert row["rejected"] == sum(r["type"] == "rejected" for r in before)
    assert row["faults"] == sum(r["type"] == "fault" for r in before)
    assert row["usage"] == [
        f"tokens in {u['inputTokens']} out {u['outputTokens']} "
        f"cache read {u['cacheReadTokens']} write {u['cacheWriteTokens']}"
        for u in before
        if u["type"] == "usage"
    ]
    assert row["fallback"] == int(decision["fallback"])
    assert row["talk"] == decision["published"]
    raw = decision["say"]
    assert row["said"] == (f"said: {raw}" if raw and raw != decision["published"] else None)
    assert row["notes"] == (decision["notes"] or "")
    q, f = decision["quantity"], decision["face"]
    if decision["type"] == "bid":
        assert row["action"] == f"bids {q}x{f}"
        assert row["pBidder"] == f"{decision['pBidder']:.3f}"
        assert row["facer"] == f"s{decision['facer']}"
        assert row["pFacer"] == f"{decision['pFacer']:.3f}"
        truth = "true" if decision["count"] >= q else "false"
        assert row["truth"] == f"{truth} ({decision['count']})"
        return
    # Rule 6, from the hands: the count, and who took the point.
    count = sum(hand.count(f) for hand in hands)
    bidder, challenger = decision["bidder"], decision["slot"]
    winner, loser = (bidder, challenger) if count >= q else (challenger, bidder)
    assert row["outcome"] == f"actual {count}: s{winner} +1, s{loser} -1"
    assert row["forced"] == int(decision["forced"])


def _pending_before(records: list[dict], decision: dict) -> list[dict]:
    """The rejected/fault/usage lines right before ``decision`` in the log."""
    at = records.index(decision)
    start = at
    while records[start - 1]["type"] in ("rejected", "fault", "usage"):
        start -= 1
    return records[start:at]


def test_the_episode_has_the_marks_the_page_must_show(episode):
    # Guards the test above: an episode without these would check nothing about them.
    records, _ = episode
    kinds = {r["type"] for r in records}
    assert {"rejected", "fault", "usage"} <= kinds
    assert any(r.get("fallback") for r in records)
    assert any(r.get("forced") for r in records)
    assert any(r.get("say") and r["say"] != r["published"] for r in records)
    assert any(r.get("published") for r in records)
    assert any(r.get("notes") for r in records)


def test_keys_reach_the_last_decision_and_back(page, episode):
    tab, watch = page
    records, html = episode
    deals = expected_deals(records)
    decisions = sum(len(d["decisions"]) for d in deals)
    loaded(tab, html)
    assert tab.text_content("#position") == "deal 0 of 0–29 · decision 0 of 0–" + str(
        len(deals[0]["decisions"]) - 1
    )
    for _ in range(decisions - 1):
        tab.keyboard.press("ArrowRight")
    last = len(deals[-1]["decisions"]) - 1
    at_end = f"deal 29 of 0–29 · decision {last} of 0–{last}"
    assert tab.text_content("#position") == at_end
    tab.keyboard.press("ArrowRight")  # nothing after the last decision
    assert tab.text_content("#position") == at_end
    assert tab.locator("#decisions tbody tr.current").get_attribute("data-kind") == "challenge"
    tab.keyboard.press("ArrowLeft")
    assert tab.text_content("#position").startswith(f"deal 29 of 0–29 · decision {last - 1} ")
    tab.keyboard.press("Home")
    tab.keyboard.press("ArrowDown")
    tab.keyboard.press("ArrowDown")
    assert tab.text_content("#position").startswith("deal 2 of 0–29 · decision 0 ")
    tab.keyboard.press("ArrowLeft")  # back across the deal boundary, to deal 1's challenge
    assert tab.text_content("#position").startswith(
        f"deal 1 of 0–29 · decision {len(deals[1]['decisions']) - 1} "
    )
    tab.click("#next-deal")
    tab.click("#next")
    assert tab.text_content("#position").startswith("deal 2 of 0–29 · decision 1 ")
    tab.fill("#jump-deal", "17")
    tab.press("#jump-deal", "Enter")
    assert tab.text_content("#position").startswith("deal 17 of 0–29 · decision 0 ")
    watch.assert_clean()


def test_the_fragment_opens_a_deal_and_decision_and_follows_navigation(page, episode):
    tab, watch = page
    records, html = episode
    number = next(d["deal"] for d in expected_deals(records) if len(d["decisions"]) >= 4)
    loaded(tab, html, f"#deal={number}&decision=2")
    assert tab.text_content("#position").startswith(f"deal {number} of 0–29 · decision 2 ")
    assert tab.locator("#decisions tbody tr").count() == 3
    tab.keyboard.press("ArrowRight")
    assert tab.evaluate("location.hash") == f"#deal={number}&decision=3"
    tab.evaluate("location.hash = '#deal=5&decision=1'")
    tab.wait_for_function("document.getElementById('position').textContent.startsWith('deal 5 ')")
    assert tab.text_content("#position").startswith("deal 5 of 0–29 · decision 1 ")
    # A deal whose seats broke rule 11, mid-way: the picture in the README.
    busy = max(expected_deals(records), key=lambda d: len(d["decisions"]))
    loaded(tab, html, f"#deal={busy['deal']}&decision={len(busy['decisions']) - 2}")
    save_screenshot(tab, "replay-spectator")
    loaded(tab, html, "#deal=999&decision=-4")  # out of range: clamped, not broken
    assert tab.text_content("#position").startswith("deal 29 of 0–29 · decision 0 ")
    watch.assert_clean()


def test_the_flags_drawn_are_exactly_those_in_the_logs_tail(page, episode):
    tab, watch = page
    records, html = episode
    tail_flags = [r["flag"] for r in records if r["type"] == "audit"]
    loaded(tab, html)
    drawn = tab.evaluate(
        "[...document.querySelectorAll('#flags li.flag')]"
        ".map(li => [li.dataset.kind, li.dataset.pair])"
    )
    assert drawn == [[f["flag"], f"{f['slots'][0]},{f['slots'][1]}"] for f in tail_flags]
    # Every figure's matrix marks exactly the flagged directions (a faces b's bids).
    directions = {tuple(f["slots"]) for f in tail_flags}
    directions |= {tuple(reversed(f["slots"])) for f in tail_flags if f["flag"] == "soft-play"}
    marked = tab.evaluate(
        """[...document.querySelectorAll('table.figure')].flatMap(t =>
             [...t.querySelectorAll('tr')].slice(1).flatMap((tr, a) =>
               [...tr.querySelectorAll('td')].map((td, b) =>
                 [t.dataset.figure, a, b, td.className])))
             .filter(x => x[3].includes('flagged')).map(x => x.slice(0, 3))"""
    )
    assert sorted(map(tuple, marked)) == sorted((f, a, b) for f in FIGURES for a, b in directions)
    save_screenshot(tab.locator("#audit"), "replay-audit")
    watch.assert_clean()


def test_a_log_without_flags_draws_none(page, tmp_path, host):
    tab, watch = page
    _, html = replayed(host, tmp_path, "plain", EpisodeRequest(seed=2, deals=5))
    loaded(tab, html)
    assert tab.locator("#flags li.flag").count() == 0
    assert tab.locator("td.flagged").count() == 0
    assert tab.locator(".mark.flagged").count() == 0
    watch.assert_clean()


def test_as_a_seat_saw_it_shows_only_that_seats_hand_notes_and_odds(page, episode):
    tab, watch = page
    records, html = episode
    header = records[0]
    deal = next(d for d in expected_deals(records) if len(d["decisions"]) >= 3)
    seat = 0  # a misbehaving seat: it writes notes and has rejections of its own
    loaded(tab, html, f"#deal={deal['deal']}&decision=1&seat={seat}")
    shown = tab.evaluate(READ_DEAL)
    for slot, card in shown["seats"].items():
        hand = deal["hands"][int(slot)]
        expected = [str(s) for s in hand] if int(slot) == seat else ["?"] * len(hand)
        assert card["hand"] == expected
    for row, decision in zip(shown["rows"], deal["decisions"], strict=False):
        mine = decision["slot"] == seat
        assert row["notes"] == ((decision["notes"] or "") if mine else "")
        assert row["pBidder"] is None and row["pFacer"] is None
        if decision["type"] == "bid":
            q, f = decision["quantity"], decision["face"]
            assert row["pSeat"] == f"{tail(header, deal['hands'][seat], q, f):.3f}"
            assert row["truth"] == "?"  # not known before the reveal
        if not mine:
            assert row["rejected"] == row["fallback"] == row["faults"] == 0
            assert row["usage"] == row["reasons"] == []
    assert tab.is_hidden("#audit")
    # How deals ended is known for earlier deals only; the final points not at all.
    known = deal_outcomes_visible(tab)
    assert known == [number < deal["deal"] for number in range(len(known))]
    assert not tab.is_visible("#summary .after")
    save_screenshot(tab, "replay-seat-view")
    tab.goto(html.as_uri() + f"#deal={deal['deal']}&decision=99&seat={seat}")
    tab.wait_for_function("document.getElementById('position').textContent.includes('decision')")
    revealed = tab.evaluate(READ_DEAL)  # the challenge reveals every hand (rule 6)
    for slot, card in revealed["seats"].items():
        assert card["hand"] == [str(s) for s in deal["hands"][int(slot)]]
    known = deal_outcomes_visible(tab)
    assert known == [number <= deal["deal"] for number in range(len(known))]
    tab.select_option("#view", "-1")  # the spectator sees every outcome
    assert all(deal_outcomes_visible(tab)) and tab.is_visible("#summary .after")
    watch.assert_clean()


def deal_outcomes_visible(tab) -> list[bool]:
    """Per row of the deal list: are its outcome cells (bids, challenge, points) shown?"""
    return tab.evaluate(
        """[...document.querySelectorAll('#deals tbody tr')].map((row) =>
             [...row.querySelectorAll('td.after')].every((td) =>
               getComputedStyle(td).visibility === 'visible'))"""
    )


def test_hostile_talk_is_shown_as_text_and_runs_nothing(page, tmp_path, host):
    tab, watch = page
    log, html = replayed(host, tmp_path, "hostile", EpisodeRequest(seed=3, deals=2))
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    bid = next(r for r in lines if r["type"] == "bid")
    hostile = "</script><script>window.pwned = 1</script><img src=x onerror='window.pwned=2'>"
    bid.update(say=hostile, published=hostile, notes=hostile)
    log.write_text("".join(json.dumps(r) + "\n" for r in lines))
    # Talk edited in by hand is a tampered log: replayed here only unchecked, as an attacker's.
    assert main(["replay", str(log), "-o", str(html), "--unchecked"]) == 0
    loaded(tab, html, f"#deal={bid['deal']}&decision=0")
    assert tab.evaluate("window.pwned") is None
    assert tab.text_content("#decisions tbody tr .published") == hostile
    watch.assert_clean()


def test_a_500_deal_log_opens_in_under_2_seconds(page, tmp_path, host):
    tab, watch = page
    _, html = replayed(host, tmp_path, "long", EpisodeRequest(seed=11, deals=500))
    started = time.perf_counter()
    loaded(tab, html)
    opened = time.perf_counter() - started
    assert opened < 2.0, f"the 500-deal replay took {opened:.2f} s to open"
    assert tab.locator("#deals tbody tr").count() == 500
    tab.keyboard.press("End")
    assert tab.text_content("#position").startswith("deal 499 of 0–499 ")
    watch.assert_clean()


def test_thinking_shows_in_the_spectator_view_only(page, tmp_path, host):
    # A seat's thinking is written onto the first false bid (a valid thinking key leaves the
    # log sound, so the page is built from a checked log). The spectator sees each block
    # under the bid, as text; no seat view shows it, the thinking seat's own included.
    tab, watch = page
    request = EpisodeRequest(seed=3, deals=4, seat_specs=(SeatSpec.parse("pressure"),) * 4)
    log, html = replayed(host, tmp_path, "thinking", request)
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    decisions: dict[int, int] = {}  # decisions so far in each deal
    for record in lines:
        if record["type"] == "deal":
            hands = record["hands"]
        elif record["type"] in ("bid", "challenge"):
            index = decisions[record["deal"]] = decisions.get(record["deal"], -1) + 1
            # rules.md: false when the face's count over the deal's hands is under the quantity
            if record["type"] == "bid" and (
                sum(hand.count(record["face"]) for hand in hands) < record["quantity"]
            ):
                bid = record
                break
    secret = "I hold one 4 <img src=x onerror='window.pwned=1'>\nso this is a bluff"
    bid["thinking"] = [{"type": "thinking", "text": secret}, {"type": "redacted"}]
    log.write_text("".join(json.dumps(r) + "\n" for r in lines))
    assert main(["replay", str(log), "-o", str(html)]) == 0
    at = f"#deal={bid['deal']}&decision={index}"
    loaded(tab, html, at)
    thinking = tab.locator("#decisions tbody tr.thinking")
    assert thinking.count() == 1
    assert thinking.get_attribute("data-slot") == str(bid["slot"])
    assert tab.locator("#decisions tbody tr.thinking .thought").all_text_contents() == [
        secret,
        "(redacted thinking)",
    ]
    # It sits right under the decision it led to.
    assert tab.evaluate(
        "document.querySelector('tr.thinking').previousElementSibling.dataset.index"
    ) == str(index)
    assert tab.evaluate("window.pwned") is None
    # The audit panel's reasoning rows: one false bid carries thinking, which names it
    # false ("bluff"): 1 for its bidder, 0 for every other seat.
    for figure in ("bluffsWithReasoning", "bluffsNamedFalse"):
        cells = tab.locator(f'table.figure[data-figure="{figure}"] td').all_text_contents()
        assert cells == [str(int(slot == bid["slot"])) for slot in range(4)]
    for seat in range(4):
        tab.goto("about:blank")
        loaded(tab, html, f"{at}&seat={seat}")
        assert tab.locator("#decisions tbody tr.decision").count() == index + 1
        assert tab.locator("tr.thinking, .thought").count() == 0
        assert "a bluff" not in tab.inner_text("body")
    watch.assert_clean()
