"""What the replay page embeds, checked without a browser: a hand-worked deal, random
episodes against the rulebook and the arena's own tail, and ``arena replay``'s errors."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from replay_expected import expected_deals, hand_made_log

from arena.cli import main
from arena.runner import EpisodeRequest, run_episode
from arena.web.replay import replay_data, replay_html


def test_a_hand_worked_deal(host):
    data = replay_data(hand_made_log(), host)
    deal = data["deals"][0]
    first, second, challenge = deal["decisions"]
    # 4x6 from s0's hand (two 6s): need 2 of 15, 1 - (5/6)^15 - 15 (1/6)(5/6)^14
    # = 1 - 0.06491 - 0.19473 = 0.74036.
    assert first["p"][0] == pytest.approx(0.74036, abs=5e-5)
    # s1 faced it holding one 6: need 3, 0.74036 - C(15,2) (1/6)^2 (5/6)^13 = 0.74036 - 0.27261.
    assert first["facer"] == 1
    assert first["p"][1] == pytest.approx(0.46775, abs=5e-5)
    # s3 holds three 6s: need 1 of 15, 1 - (5/6)^15 = 0.93509.
    assert first["p"][3] == pytest.approx(0.93509, abs=5e-5)
    # Six 6s in all (2 + 1 + 0 + 3): 4x6 was true, 7x6 was not.
    assert (first["actual"], first["true"]) == (6, True)
    assert (second["actual"], second["true"]) == (6, False)
    # 7x6 from s2's hand (no 6s): need 7 of 15. P(X=7) = 6435 (1/6)^7 (5/6)^8 = 0.005346,
    # P(8) = 6435 (1/6)^8 (5/6)^7 = 0.001069, P(9) = 5005 (1/6)^9 (5/6)^6 = 0.000166,
    # P(10) = 3003 (1/6)^10 (5/6)^5 = 0.000020, P(11..15) < 0.000003: 0.006603 in all.
    assert second["facer"] == 2
    assert second["p"][2] == pytest.approx(0.006603, abs=3e-6)
    assert challenge["winner"] == 2 and challenge["loser"] == 1
    assert deal["pointsBefore"] == [0, 0, 0, 0]
    assert deal["pointsAfter"] == [0, -1, 1, 0]
    assert second["published"] == "SEVENS, TRUST ME" and second["notes"] == "bluffing"


@given(seed=st.integers(0, 2**32), mode=st.sampled_from(["dice", "poker"]))
def test_every_bid_carries_the_arenas_tail_from_every_hand(host, seed, mode):
    _, records = run_episode(host, EpisodeRequest(mode=mode, seed=seed, deals=6), environ={})
    data = replay_data(records, host)
    the_mode = host.registry.mode(mode)
    unseen = (len(records[0]["seats"]) - 1) * records[0]["handSize"]
    expected = expected_deals(records)
    assert len(data["deals"]) == len(expected)
    for shown, worked in zip(data["deals"], expected, strict=True):
        assert shown["pointsAfter"] == worked["pointsAfter"]
        for decision, record in zip(shown["decisions"], worked["decisions"], strict=True):
            if record["type"] != "bid":
                continue
            q, f = record["quantity"], record["face"]
            # The arena's own function, and the rulebook's tail worked independently.
            arena = [the_mode.bid_probability(tuple(h), q, f, unseen) for h in shown["hands"]]
            assert decision["p"] == arena
            assert decision["p"] == pytest.approx(record["pBySlot"], abs=1e-12)
            assert decision["facer"] == record["facer"]
            assert decision["actual"] == record["count"]
            assert decision["true"] == (record["count"] >= q)
    result = next(r for r in records if r["type"] == "result")
    assert data["deals"][-1]["pointsAfter"] == result["points"]


def test_an_unfinished_log_replays_up_to_where_it_stops(host, tmp_path):
    records = hand_made_log()[:-2]  # no challenge, no result: the episode was cut off
    data = replay_data(records, host)
    assert data["result"] is None
    assert [d["type"] for d in data["deals"][0]["decisions"]] == ["bid", "bid"]
    assert data["deals"][0]["decisions"][-1]["facer"] is None
    assert "<title>dice seed 0: replay</title>" in replay_html(records, host=host)


def test_the_page_is_one_file_that_names_nothing_to_fetch(host):
    page = replay_html(hand_made_log(), host=host)
    assert not re.search(r"""\b(src|href)\s*=|@import|url\(|https?://""", page)
    assert page.count("<script") == 2 and "</script>" not in _embedded_json(page)


def _embedded_json(page: str) -> str:
    start = page.index('id="replay-data">') + len('id="replay-data">')
    return page[start : page.index("</script>", start)]


def test_replay_writes_beside_the_log_by_default(tmp_path, capsys):
    log = tmp_path / "ep.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in hand_made_log()))
    # The hand-made hands are not the seed's deal: only an unchecked read replays them,
    # and the page says so.
    assert main(["replay", str(log), "--unchecked"]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "ep.html")
    page = (tmp_path / "ep.html").read_text()
    assert page.startswith("<!doctype html>") and "<title>UNCHECKED: " in page


def test_a_log_that_fails_the_check_is_refused_with_its_first_violation(tmp_path, capsys):
    log = tmp_path / "ep.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in hand_made_log()))
    assert main(["replay", str(log)]) == 2
    err = capsys.readouterr().err
    # Seed 0's table order is not the hand-made log's 0, 1, 2, 3 (rule 1).
    assert err.startswith(f"arena: error: {log}:1: rule 1: table order") and err.count("\n") == 1
    assert not (tmp_path / "ep.html").exists()


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (None, "cannot read event log"),
        (["not json"], ":1: not a valid event"),
        ([{"type": "deal", "deal": 0, "opener": 0, "hands": [[1]]}], "not an event log"),
        ("unknown-mode", "unknown mode 'nope'"),
        ("bid-first", "a bid line comes before any deal line"),
    ],
)
def test_bad_logs_get_one_error_line(tmp_path, capsys, lines, message):
    log = tmp_path / "bad.jsonl"
    records = hand_made_log()
    if lines == "unknown-mode":
        lines = [records[0] | {"mode": "nope"}, *records[1:]]
    elif lines == "bid-first":
        lines = [records[0], records[2]]
    if lines is not None:
        log.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    args = ["replay", str(log), "-o", str(tmp_path / "out.html"), "--unchecked"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("arena: error: ") and message in err and err.count("\n") == 1
    assert not (tmp_path / "out.html").exists()


def test_an_unwritable_output_is_one_error_line(tmp_path, capsys):
    log = tmp_path / "ep.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in hand_made_log()))
    args = ["replay", str(log), "-o", str(tmp_path / "missing" / "out.html"), "--unchecked"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("arena: error: cannot write ") and err.count("\n") == 1
