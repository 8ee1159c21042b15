"""A whole episode played by clicking, in a real headless Chromium, against bayes seats.

At every turn the page's numbers are read off the screen and checked against
``Mode.bid_probability`` for the hand the page shows, to the last digit shown.
The finished log is replayed through the independent referee and compared byte
for byte with the server's own log file and with the page's download. With
``ARENA_SCREENSHOTS=docs/img`` set, the table mid-game is saved for the README.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from referee import replay
from screenshots import save_screenshot
from serving import serve

from arena_plugins.dice import DICE

DEALS = 4
UNSEEN = 15  # three other seats of five dice


@pytest.fixture
def served(tmp_path):
    yield from serve(tmp_path, "--seat", "human", "--deals", str(DEALS), "--seed", "11")


def shown(page) -> dict:
    """What the turn panel shows, read from the page."""
    return page.evaluate(
        """() => ({
            hand: JSON.parse(document.getElementById('hand').dataset.hand),
            standing: document.getElementById('standing').dataset.quantity ? {
                quantity: +document.getElementById('standing').dataset.quantity,
                face: +document.getElementById('standing').dataset.face,
                text: document.querySelector('#standing .prob').textContent } : null,
            options: [...document.querySelectorAll('#options tbody tr')].map((tr) => ({
                quantity: +tr.dataset.quantity, face: +tr.dataset.face,
                text: tr.querySelector('.prob').textContent,
                bayes: tr.textContent.includes('bayes') })),
            bayesChallenges: document.getElementById('challenge').textContent.includes('bayes'),
            challenge: document.getElementById('challenge').textContent,
        })"""
    )


def check_numbers(screen: dict) -> int:
    hand = tuple(screen["hand"])
    chances = [screen["standing"]] if screen["standing"] else []
    chances += screen["options"]
    for chance in chances:
        exact = DICE.bid_probability(hand, chance["quantity"], chance["face"], UNSEEN)
        assert chance["text"] == f"{exact * 100:.2f}%", chance
    if screen["standing"]:  # a challenge wins exactly when the standing bid is a lie
        standing = screen["standing"]
        exact = DICE.bid_probability(hand, standing["quantity"], standing["face"], UNSEEN)
        assert f"(wins {(1 - exact) * 100:.2f}%)" in screen["challenge"]
    texts = [float(o["text"].rstrip("%")) for o in screen["options"]]
    assert texts == sorted(texts, reverse=True)
    return len(chances)


def test_a_whole_episode_by_clicking_matches_the_rules_and_the_servers_log(served, page, host):
    tab, watch = page
    tab.goto(served.url)
    tab.wait_for_selector("#setup-seats tr")
    seats = tab.eval_on_selector_all("#setup-seats select", "all => all.map((s) => s.value)")
    assert seats == ["human", "bayes", "bayes", "bayes"]  # from --seat human, bayes filling
    offered = tab.eval_on_selector_all(
        "#setup-seats tr:first-child option", "all => all.map((o) => o.value)"
    )
    assert offered == sorted(host.registry.seats)  # every installed seat
    tab.click("#start")
    tab.wait_for_url("**/table/**")
    turns = checked = last = 0
    pictured = False
    while True:
        tab.wait_for_function(
            "last => !$('turn').hidden && +$('turn').dataset.turn > last || !$('end').hidden",
            arg=last,
        )
        if tab.is_visible("#end"):
            break
        last = int(tab.get_attribute("#turn", "data-turn"))
        screen = shown(tab)
        checked += check_numbers(screen)
        turns += 1
        if not pictured and screen["standing"] and len(screen["options"]) > 6:
            tab.mouse.move(0, 0)  # no hover highlight in the picture
            save_screenshot(tab, "serve-table", full_page=True)
            pictured = True
        if screen["bayesChallenges"]:
            tab.click("#challenge")
        elif turns % 3 == 0:  # now and then through the free-form bid instead of a row
            mark = next(o for o in screen["options"] if o["bayes"])
            tab.fill("#quantity", str(mark["quantity"]))
            tab.select_option("#face", str(mark["face"]))
            tab.click("#free-bid button")
        else:
            tab.click("#options tbody tr:has(td.bayes:not(:empty)) button")
    assert turns >= 2 and checked > turns  # a deal may end before it reaches the person
    results = tab.text_content("#results")
    assert "human" in results and "bayes" in results
    with tab.expect_download() as download:
        tab.click("#log-link")
    downloaded = Path(download.value.path()).read_bytes()
    path, records = served.logged()
    assert downloaded == path.read_bytes()
    summary = replay([json.loads(line) for line in downloaded.decode().splitlines()])
    assert summary.status == "complete" and summary.deals_played == DEALS
    assert summary.asked[0] == turns and summary.rejected[0] == summary.fallbacks[0] == 0
    watch.assert_clean()
