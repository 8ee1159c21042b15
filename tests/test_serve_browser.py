"""A whole episode played by clicking, in a real headless Chromium, against bayes seats.

At every turn the page's numbers are read off the screen and checked against
``Mode.bid_probability`` for the hand the page shows, to the last digit shown.
The finished log is replayed through the independent referee and compared byte
for byte with the server's own log file and with the page's download. With
``ARENA_SCREENSHOTS=docs/img`` set, the table mid-game is saved for the README.
"""

from __future__ import annotations

import http.server
import json
import threading
import time
from pathlib import Path

import pytest
from referee import replay
from screenshots import save_screenshot
from serving import EventReader, serve

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
    assert offered == ["human", "bayes"]  # the person's seat and --seat's, bayes filling
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


RECORD_PAYLOADS = """
window.received = [];
const NativeSource = window.EventSource;
window.EventSource = class extends NativeSource {
  constructor(...args) {
    super(...args);
    this.addEventListener("message", (event) => window.received.push(event.data));
  }
};
const nativeFetch = window.fetch;
window.fetch = async (...args) => {
  const reply = await nativeFetch(...args);
  reply.clone().text().then((text) => window.received.push(text));
  return reply;
};
"""
"""Every server-sent message and fetch reply a page receives, in order, in ``received``."""


def hand_forms(hand: list[int]) -> list[str]:
    """How a hand could be written in a payload: as JSON either way, or as a page shows it."""
    return [json.dumps(hand), json.dumps(hand, separators=(",", ":")), DICE.render_hand(hand)]


def assert_hidden_until_revealed(payloads: list[str], hidden: dict[int, list], deals: int):
    """No payload shows a hand of ``hidden`` (slot -> hand by deal) before its deal's reveal.

    The page's own news tells where it is: a ``deal`` line opens the next deal, and a
    ``challenge`` line is that deal's reveal (rule 6)."""
    deal, revealed = -1, False
    for payload in payloads:
        message = json.loads(payload)
        if message.get("kind") == "news" and message["news"] in ("deal", "challenge"):
            deal, revealed = (deal + 1, False) if message["news"] == "deal" else (deal, True)
        for later in range(max(deal, 0) + (revealed and deal >= 0), deals):
            for slot, hands in hidden.items():
                for form in hand_forms(hands[later]):
                    assert form not in payload, (slot, later, payload)


def test_two_people_in_two_browsers_each_see_only_their_own_hand(tmp_path, open_page):
    stopping = serve(
        tmp_path, "--seat", "human", "--seat", "bayes", "--seat", "human", "--seat", "pressure",
        "--deals", "3", "--seed", "4", "--turn-timeout", "60",
    )  # fmt: skip
    served = next(stopping)
    starter, starter_watch = open_page(RECORD_PAYLOADS)
    starter.goto(served.url)
    starter.wait_for_selector("#setup-seats tr")
    starter.click("#start")
    starter.wait_for_url("**/table/**")
    # The starter's page, and no other, holds the links to hand out.
    handed = starter.get_attribute('#people a[data-link="seat 2"]', "href")
    watch_link = starter.get_attribute('#people a[data-link="watch"]', "href")
    other, other_watch = open_page(RECORD_PAYLOADS)
    other.goto(served.url.rstrip("/") + handed)
    spectator, spectator_watch = open_page(RECORD_PAYLOADS)
    spectator.goto(served.url.rstrip("/") + watch_link)
    people = {0: starter, 2: other}
    seen, shown = {0: 0, 2: 0}, []
    deadline = time.monotonic() + 90
    while not all(tab.is_visible("#end") for tab in people.values()):
        assert time.monotonic() < deadline, "the table did not finish"
        for slot, tab in people.items():
            turn = tab.get_attribute("#turn", "data-turn")
            if tab.is_hidden("#turn") or turn is None or int(turn) <= seen[slot]:
                continue
            seen[slot] = int(turn)
            turns = [m for m in tab.evaluate("window.received") if '"kind": "turn"' in m]
            screen = json.loads(turns[-1])["screen"]
            hand = json.loads(tab.get_attribute("#hand", "data-hand"))
            shown.append((slot, screen["deal"], hand, tab.inner_text("body")))
            if screen["bayes_challenges"]:
                tab.click("#challenge")
            else:
                tab.click("#options tbody tr:has(td.bayes:not(:empty)) button")
        time.sleep(0.05)
    spectator.wait_for_selector("#end", state="visible")
    _path, records = served.logged()
    stopping.close()
    hands = [r["hands"] for r in records if r["type"] == "deal"]
    assert {slot for slot, *_ in shown} == {0, 2}
    for slot, deal, hand, dom in shown:  # on screen at each turn: its own hand, no other's
        assert hand == hands[deal][slot]
        assert DICE.render_hand(hands[deal][2 - slot]) not in dom
    links = {0: starter.url, 2: handed, "watch": watch_link}
    tokens = {who: link.rsplit("/", 1)[1] for who, link in links.items()}
    everyone = {0: starter, 2: other, "watch": spectator}
    for who, tab in everyone.items():
        payloads = tab.evaluate("window.received")
        assert any('"kind": "end"' in p for p in payloads)
        hidden = {s: [h[s] for h in hands] for s in range(4) if s != who}
        assert_hidden_until_revealed(payloads, hidden, len(hands))
        others = [token for key, token in tokens.items() if key != who]
        assert not any(token in payload for token in others for payload in payloads), who
    assert other.text_content("#people") == "" and spectator.text_content("#people") == ""
    for watch in (starter_watch, other_watch, spectator_watch):
        watch.assert_clean()


ATTACK = """
async ({ target, token }) => {
  const table = JSON.stringify({ seats: ["bayes", "bayes"], deals: 1000 });
  const move = JSON.stringify({ turn: 1, command: "c" });
  const outcome = {};
  const attempt = async (name, url, type, mode) => {
    const init = { method: "POST", mode, headers: { "Content-Type": type }, body: name };
    try {
      const reply = await fetch(url, { ...init, body: url.includes("act") ? move : table });
      outcome[name] = reply.type === "opaque" ? "opaque" : reply.status;
    } catch (error) { outcome[name] = "blocked"; }
  };
  for (const path of ["/api/tables", `/api/act/${token}`]) {
    await attempt(`${path} text/plain`, target + path, "text/plain", "no-cors");
    await attempt(`${path} json`, target + path, "application/json", "cors");
  }
  // A form needs no script at all: posted into a frame, as any site could.
  const frame = document.createElement("iframe");
  frame.name = "sink";
  document.body.append(frame);
  const form = document.createElement("form");
  Object.assign(form, { method: "POST", enctype: "text/plain", target: "sink" });
  form.action = target + "/api/tables";
  const field = document.createElement("input");
  Object.assign(field, { name: table.slice(0, -1) + ', "x": "', value: '"}' });
  form.append(field);
  document.body.append(form);
  const loaded = new Promise((resolve) => { frame.onload = resolve; });
  form.submit();
  await loaded;
  return outcome;
}
"""
"""A page on another origin tries every way a site has to start a table and to move a seat."""


class AttackerPage(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"<!doctype html><title>a site you visit</title><p>nothing to see</p>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_a_page_on_another_origin_starts_nothing_and_moves_no_seat(tmp_path, open_page):
    stopping = serve(tmp_path, "--turn-timeout", "60")
    served = next(stopping)
    status, table = served.post("/api/tables", {"seats": ["human", "bayes"], "deals": 1})
    token = table["people"]["0"].rsplit("/", 1)[1]
    tab = EventReader(served, token)
    index, turn = tab.wait_for("turn")
    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), AttackerPage)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    try:
        attacker, watch = open_page()
        answered = []
        attacker.on("response", lambda r: r.url.startswith(served.origin) and answered.append(r))
        attacker.goto(f"http://127.0.0.1:{site.server_address[1]}/")
        assert not attacker.url.startswith(served.origin)  # another origin: another port
        outcome = attacker.evaluate(ATTACK, {"target": served.origin, "token": token})
    finally:
        site.shutdown()
    # What the browser sent without a preflight reached the server and was refused; what
    # needs one (a JSON body) never got past it.
    assert outcome == {
        "/api/tables text/plain": "opaque",
        "/api/tables json": "blocked",
        f"/api/act/{token} text/plain": "opaque",
        f"/api/act/{token} json": "blocked",
    }
    posts = [(r.request.method, r.url.removeprefix(served.origin), r.status) for r in answered]
    assert ("POST", "/api/tables", 403) in posts and ("POST", f"/api/act/{token}", 403) in posts
    assert [p for p in posts if p[0] == "POST" and p[2] != 403] == []
    # Nothing started (the one log is the person's table) and the seat did not move: its
    # turn still waits, and its own page's move for that turn is taken now.
    assert len(list(served.log_dir.iterdir())) == 1
    assert tab.messages[index + 1 :] == []
    move = {"turn": turn["turn"], "command": "c" if turn["screen"]["standing"] else "1 1"}
    assert served.post(f"/api/act/{token}", move)[0] == 200
    tab.close()
    stopping.close()
