"""``arena serve`` attacked over real HTTP: other sites, foreign hosts, hostile bodies and fields.

Each request is sent to a real ``arena serve`` subprocess (tests/serving.py) with
its headers exactly as written here, as a page on another site, a DNS-rebinding
name or a broken client would send them. The server must refuse each one with
its status and one reason, never a 500, and nothing it refused may start a table
or move a seat.
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.parse

import pytest
from serving import EventReader, serve

pytestmark = pytest.mark.slow

TABLE = {"seats": ["human", "bayes"], "deals": 1}
MAX_BODY = 64 * 1024  # the cap the issue names: 64 KiB


@pytest.fixture
def served(tmp_path):
    yield from serve(tmp_path, "--turn-timeout", "60")


def token_of(url: str) -> str:
    return url.rsplit("/", 1)[1]


def reason(body: bytes) -> str:
    return json.loads(body)["error"]


def table_logs(served, at_least: int = 0) -> list[str]:
    """The table logs in the log folder (one per table started), once ``at_least`` are there."""
    deadline = time.monotonic() + 10
    while len(names := sorted(p.name for p in served.log_dir.iterdir())) < at_least:
        assert time.monotonic() < deadline, names
        time.sleep(0.02)
    return names


def assert_nothing_started(served) -> None:
    """A refused request started no table: were one in play (TABLE's person waits 60 s for
    a move), the server's own page could not start this one, and its log is the only one."""
    status, reply = served.post("/api/tables", TABLE)
    assert status == 200, reply
    assert len(table_logs(served, at_least=1)) == 1


# --- Host: a rebinding site reaches 127.0.0.1 under its own name -----------------------------


@pytest.mark.parametrize(
    "host",
    [
        "evil.example",
        "evil.example:{port}",
        "127.0.0.1.evil.example:{port}",
        "[::2]:{port}",
        "127.0.0.1:{other}",  # the right name on another port
        "localhost",  # no port: port 80, which this server is not
        "",
    ],
)
def test_a_foreign_host_is_refused_before_anything_else(served, host):
    port = urllib.parse.urlsplit(served.url).port
    headers = {"Host": host.format(port=port, other=port + 1)}
    assert served.send("GET", "/api/setup", headers=headers)[0] == 400
    status, _ = served.send(
        "POST", "/api/tables", json.dumps(TABLE).encode(), {**served.page_headers(), **headers}
    )
    assert status == 400
    assert_nothing_started(served)


def test_the_servers_own_names_are_served(served):
    port = urllib.parse.urlsplit(served.url).port
    for name in (f"127.0.0.1:{port}", f"localhost:{port}"):
        status, body = served.send("GET", "/api/setup", headers={"Host": name})
        assert status == 200 and "bayes" in json.loads(body)["defaults"]["seats"]


# --- Origin and Content-Type: only this server's own page changes the table ----------------

FOREIGN = [
    pytest.param({"Origin": "http://evil.example"}, id="another-site"),
    pytest.param({"Origin": "http://127.0.0.1:1"}, id="another-port"),
    pytest.param({"Origin": "null"}, id="opaque-origin"),
    pytest.param({}, id="no-origin-no-fetch-metadata"),
    pytest.param({"Sec-Fetch-Site": "cross-site"}, id="cross-site-fetch"),
    pytest.param({"Sec-Fetch-Site": "same-site"}, id="same-site-fetch"),
]


@pytest.mark.parametrize("origin", FOREIGN)
def test_a_post_from_another_origin_is_refused(served, origin):
    headers = {"Content-Type": "application/json", **origin}
    status, body = served.send("POST", "/api/tables", json.dumps(TABLE).encode(), headers)
    assert status == 403 and "this server" in reason(body)
    assert_nothing_started(served)


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", None],
)
def test_a_post_that_is_not_json_is_refused_even_from_the_servers_page(served, content_type):
    # The three types a cross-site form or no-cors fetch can send without a preflight.
    headers = {"Origin": served.origin}
    if content_type is not None:
        headers["Content-Type"] = content_type
    status, body = served.send("POST", "/api/tables", json.dumps(TABLE).encode(), headers)
    assert status == 403 and "application/json" in reason(body)
    assert_nothing_started(served)


def test_a_same_origin_fetch_without_origin_is_taken(served):
    # Fetch metadata alone vouches for the page where a browser sends no Origin.
    headers = {"Content-Type": "application/json; charset=utf-8", "Sec-Fetch-Site": "same-origin"}
    status, body = served.send("POST", "/api/tables", json.dumps(TABLE).encode(), headers)
    assert status == 200 and set(json.loads(body)) == {"people", "watch"}


def test_a_foreign_move_moves_no_seat(served):
    status, table = served.post("/api/tables", TABLE)
    token = token_of(table["people"]["0"])
    tab = EventReader(served, token)
    index, turn = tab.wait_for("turn")
    command = "c" if turn["screen"]["standing"] else "1 1"
    move = json.dumps({"turn": turn["turn"], "command": command})
    for origin in ({"Origin": "http://evil.example"}, {}):
        headers = {"Content-Type": "application/json", **origin}
        assert served.send("POST", f"/api/act/{token}", move.encode(), headers)[0] == 403
    text = {"Content-Type": "text/plain", "Origin": served.origin}
    assert served.send("POST", f"/api/act/{token}", move.encode(), text)[0] == 403
    # The turn still waits for its seat: nothing after it on the stream, and the seat's
    # own move for that very turn is taken now.
    assert [m["kind"] for m in tab.messages[index + 1 :]] == []
    status, reply = served.post(f"/api/act/{token}", json.loads(move))
    assert status == 200, reply
    tab.close()


# --- bodies: capped before and while they are read ------------------------------------------


def test_a_declared_300_mb_body_is_refused_unread(served):
    headers = {**served.page_headers(), "Content-Length": str(300 * 1024 * 1024)}
    status, body = served.send("POST", "/api/tables", b"", headers)
    assert status == 413 and f"over {MAX_BODY} bytes" in reason(body)
    assert_nothing_started(served)


def test_an_undeclared_body_is_cut_off_at_the_cap(served):
    # Chunked, so no Content-Length can warn the server: it must count as it reads.
    address = urllib.parse.urlsplit(served.url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=10)
    chunk = b" " * 8192
    try:
        connection.request(
            "POST",
            "/api/tables",
            body=iter([b'{"seats": ["human", "bayes"], "pad": "', *[chunk] * 16, b'"}']),
            headers=served.page_headers(),
            encode_chunked=True,
        )
        reply = connection.getresponse()
        status, body = reply.status, reply.read()
    finally:
        connection.close()
    assert status == 413 and f"over {MAX_BODY} bytes" in reason(body)
    assert_nothing_started(served)
    assert served.get("/api/setup")[0] == 200  # and the server serves on


def test_a_body_just_under_the_cap_is_read(served):
    # 64 KiB is a cap, not a format: a padded table request under it reaches the fields.
    body = json.dumps({**TABLE, "pad": ""}).encode()
    body = body.replace(b'"pad": ""', b'"pad": "' + b" " * (MAX_BODY - len(body)) + b'"')
    assert len(body) == MAX_BODY
    status, reply = served.send("POST", "/api/tables", body, served.page_headers())
    assert status == 400 and "unknown field 'pad'" in reason(reply)


# --- fields: each wrong one is a 400 that says which and why ---------------------------------

BAD_TABLES = [
    (b'{"seats": ["human", "bayes"], "deals": 1e400}', "deals must be a whole number, got inf"),
    (
        b'{"seats": ["human", "bayes"], "deals": 1e8}',
        "a whole number, got 100000000.0",
    ),
    (b'{"seats": ["human", "bayes"], "deals": 100000000}', "deals must be 1..1000 (serve --max"),
    (b'{"seats": ["human", "bayes"], "deals": 1001}', "deals must be 1..1000"),
    (
        b'{"seats": ["human", "bayes"], "deals": 0}',
        "deals must be 1..1000 (serve --max-deals), got 0",
    ),
    (b'{"seats": ["human", "bayes"], "deals": "many"}', "deals must be a whole number"),
    (b'{"seats": ["human", "bayes"], "deals": true}', "deals must be a whole number, got True"),
    (
        b'{"seats": ["human", "bayes"], "seed": -1}',
        "seed must be 0..9007199254740991 (what a page holds exactly), got -1",
    ),
    (b'{"seats": ["human", "bayes"], "seed": 1e999}', "seed must be a whole number"),
    (b'{"seats": ["human", "bayes"], "seed": NaN}', "NaN is not a number JSON allows"),
    (b'{"seats": ["human", "bayes"], "seed": -Infinity}', "-Infinity is not a number JSON"),
    (b'{"seats": ["human", "bayes"], "talk": "yes"}', "talk must be true or false"),
    (b'{"seats": ["human", "bayes"], "mode": 5}', "mode must be text"),
    (b'{"seats": ["human", "bayes"], "mode": "chess"}', "chess"),
    (b'{"seats": "human"}', "seats must be a list of text"),
    (b'{"seats": [1, 2]}', "seats must be a list of text"),
    (b"{}", "seats must be a list of text, got None"),
    (b'{"seats": ["human", "nosuch"]}', "seat 1: 'nosuch' is not offered here"),
    (b'{"seats": ["human", ":x"]}', "seat 1: ':x' is not offered here (human, bayes)"),
    (b'{"seats": ["human", "bayes:x"]}', "seat 1: 'bayes:x' is not offered here (human, bayes)"),
    (b'{"seats": ["human", "claude:/etc/passwd"]}', "seat 1: 'claude:/etc/passwd' is not offered"),
    (b'{"seats": ["human", "pressure"]}', "seat 1: 'pressure' is not offered here (human, bayes)"),
    (b'{"seats": ["human", " bayes"]}', "seat 1: ' bayes' is not offered here"),  # exact text
    (
        b'{"seats": ["human", "bayes"], "seed": 9007199254740992}',  # 2**53: one past exact
        "seed must be 0..9007199254740991 (what a page holds exactly), got 9007199254740992",
    ),
    (
        b'{"seats": ["human", "bayes"], "seed": 1' + b"0" * 299 + b"}",  # 300 digits
        "seed must be 0..9007199254740991 (what a page holds exactly), got 1000000000000000",
    ),
    (b'{"seats": ["human"]}', "seats must be 2 to 8"),
    (b'{"seats": ["human", "bayes"], "maxBids": 3}', "unknown field 'maxBids'"),
    (b'["human", "bayes"]', "the body must be a JSON object"),
    (b'{"seats": ', "the body is not JSON"),
    (b'{"seats": ["\xff"]}', "the body is not JSON"),
    (b"[" * 60_000, "the body is not JSON"),  # deeper than the parser recurses
    (b'{"seats": ["human", "bayes"], "seed": 1' + b"0" * 5000 + b"}", "the body is not JSON"),
]


def test_every_bad_table_field_is_a_400_with_its_reason(served):
    # One server for every row: had any row started a table, the rows after it would be
    # refused as a second table (409) instead, and the last check would see its log.
    answers = []
    for body, expected in BAD_TABLES:
        status, reply = served.send("POST", "/api/tables", body, served.page_headers())
        answers.append((status, expected in reason(reply), expected, reply[:120]))
    assert [a for a in answers if a[:2] != (400, True)] == []
    assert_nothing_started(served)


def test_a_second_table_while_one_plays_is_refused(served):
    assert served.post("/api/tables", TABLE)[0] == 200
    status, reply = served.post("/api/tables", TABLE)
    assert status == 409 and "still being played" in reply["error"]
    time.sleep(0.5)  # time enough for a second table's log to appear, had one started
    assert len(table_logs(served, at_least=1)) == 1


BAD_MOVES = [
    (b'{"turn": 1e999, "command": "c"}', "turn must be a whole number, got inf"),
    (b'{"turn": 1.5, "command": "c"}', "turn must be a whole number, got 1.5"),
    (b'{"turn": -1, "command": "c"}', "turn must be >= 0, got -1"),
    (b'{"command": "c"}', "turn must be a whole number, got None"),
    (b'{"turn": 1, "command": 7}', "command must be text, got 7"),
    (b'{"turn": 1, "command": "c", "say": []}', "say must be text, got []"),
    (b'{"turn": 1, "command": "c", "x": 1}', "unknown field 'x'"),
]


def test_every_bad_move_field_is_a_400_with_its_reason(served):
    status, table = served.post("/api/tables", TABLE)
    token = token_of(table["people"]["0"])
    tab = EventReader(served, token)
    tab.wait_for("turn")
    for body, expected in BAD_MOVES:
        status, reply = served.send("POST", f"/api/act/{token}", body, served.page_headers())
        assert (status, expected in reason(reply)) == (400, True), (body, reply)
    tab.close()


@pytest.mark.parametrize("header", ["abc", "-1", "1.5", "²", "9" * 40, ""])
def test_a_bad_last_event_id_is_a_400(served, header):
    status, table = served.post("/api/tables", TABLE)
    token = token_of(table["watch"])
    status, body = served.send("GET", f"/api/events/{token}", headers={"Last-Event-ID": header})
    assert status == 400 and "Last-Event-ID must be a message number" in reason(body)


def test_every_page_of_two_people_is_told_its_own_link_only(served):
    status, table = served.post("/api/tables", {"seats": ["human", "bayes", "human"], "deals": 1})
    assert status == 200
    links = {**table["people"], "watch": table["watch"]}
    assert len(set(links.values())) == 3
    for who, link in links.items():
        tab = EventReader(served, token_of(link))
        _index, hello = tab.wait_for("hello")
        tab.close()
        assert hello["link"] == link and hello["you"] == (None if who == "watch" else int(who))
        others = [token_of(url) for url in links.values() if url != link]
        assert not any(token in json.dumps(tab.messages) for token in others), who


# --- the exact bounds of a count and of a quoted bad value -----------------------------------


@pytest.mark.parametrize(
    ("declared", "status", "expected"),
    [
        # 18 digits is still a count: 10**17 bytes is over the 64 KiB cap, refused unread.
        ("1" + "0" * 17, 413, f"the body is over {MAX_BODY} bytes"),
        # 19 and 20 digits are past any real count (and near or past 2**63): not read as one.
        ("1" + "0" * 18, 400, "Content-Length '1000000000000000000' is not a byte count"),
        ("1" + "0" * 19, 400, "Content-Length '10000000000000000000' is not a byte count"),
    ],
)
def test_a_content_length_of_19_digits_or_more_is_not_a_count(served, declared, status, expected):
    headers = {**served.page_headers(), "Content-Length": declared}
    answer, body = served.send("POST", "/api/tables", b"", headers)
    assert (answer, reason(body)) == (status, expected)
    assert_nothing_started(served)


def test_a_stream_reconnecting_with_last_event_id_resumes_after_it(served):
    status, table = served.post("/api/tables", TABLE)
    token = token_of(table["people"]["0"])
    tab = EventReader(served, token)
    index, _turn = tab.wait_for("turn")  # hello (0), a deal's news, then the turn
    seen = tab.messages[: index + 1]
    tab.close()
    assert index >= 2 and [m["id"] for m in seen] == list(range(index + 1))
    # A browser that saw message 1 reconnects naming it: the stream goes on at message 2.
    again = EventReader(served, token, {"Last-Event-ID": "1"})
    again.wait_for("turn")
    again.close()
    assert again.messages[: index - 1] == seen[2:]


def test_a_bad_value_is_quoted_whole_up_to_40_characters_then_cut(served):
    # "x" * 38 quotes as 40 characters ('...' with its two quotes): shown whole. One more
    # is 41: cut to its first 37 characters (the quote and 36 x) and "...", 40 again.
    cases = {
        "x" * 38: "seed must be a whole number, got '" + "x" * 38 + "'",
        "x" * 39: "seed must be a whole number, got '" + "x" * 36 + "...",
    }
    for seed, expected in cases.items():
        body = json.dumps({**TABLE, "seed": seed}).encode()
        status, reply = served.send("POST", "/api/tables", body, served.page_headers())
        assert (status, reason(reply)) == (400, expected)
    # A header is quoted from its first 40 characters: 41 "a" show as 40 in quotes.
    status, table = served.post("/api/tables", TABLE)
    token = token_of(table["watch"])
    status, body = served.send("GET", f"/api/events/{token}", headers={"Last-Event-ID": "a" * 41})
    assert (status, reason(body)) == (
        400,
        "Last-Event-ID must be a message number, got '" + "a" * 40 + "'",
    )
