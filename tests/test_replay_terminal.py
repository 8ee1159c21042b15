"""The terminal replay: ``arena play`` shows reveals and talk, ``--watch`` prints each
decision as it happens, and ``arena show LOG`` prints a saved log the same way."""

from __future__ import annotations

import json

import pytest
from replay_expected import hand_made_log

from arena.cli import main
from arena.eventlog import read_log
from arena.render import deal_lines, results_lines
from arena.results import Results, SeatResult
from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatSpec

VERBS = ("bids", "challenges", "forced")


def write_log(path, records) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def test_show_prints_the_hand_worked_deal(tmp_path, capsys):
    log = tmp_path / "ep.jsonl"
    write_log(log, hand_made_log())
    # The hands are made by hand, not dealt by the seed: only an unchecked read accepts them.
    assert main(["show", str(log), "--unchecked"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "UNCHECKED: this log was not fully verified against the rules",
        # Six 6s are out (2 + 1 + 0 + 3), so 7x6 was false: the challenger s2 takes the point.
        "deal   0  opener s0  s0:4x6 s1:7x6  | s2 challenges 7x6: actual 6, s2 +1, s1 -1",
        "          hands  s0 6 6 1 2 3 | s1 6 2 2 4 5 | s2 3 3 3 1 4 | s3 5 5 6 6 6",
        # Only what the table saw: the published line, never the raw words or the notes.
        "          s1 says: SEVENS, TRUST ME",
        "",
        "dice seed 0: complete, 1 deals",
        "  slot  policy  points  score  asked  rejected  fallback  fault",
        "  ----  ------  ------  -----  -----  --------  --------  -----",
        "     0  bayes       +0  0.500      1         0         0      0",
        "     1  bayes       -1  0.000      1         0         0      0",
        "     2  bayes       +1  1.000      1         0         0      0",
        "     3  bayes       +0  0.500      0         0         0      0",
    ]


def test_the_reveal_reads_the_same_with_or_without_the_header():
    # The header sets one format for the episode's hands (4 seats x 5); a deal fed without
    # it, or with hands of another shape, is joined hand by hand: the same line either way.
    records = hand_made_log()
    reveal = "          hands  s0 6 6 1 2 3 | s1 6 2 2 4 5 | s2 3 3 3 1 4 | s3 5 5 6 6 6"
    assert list(deal_lines(records))[1] == reveal
    assert list(deal_lines(records[1:]))[1] == reveal  # no header
    odd = [records[0], {**records[1], "hands": [[6, 6], [1], [], [5, 5, 6]]}, *records[2:]]
    assert list(deal_lines(odd))[1] == "          hands  s0 6 6 | s1 1 | s2  | s3 5 5 6"


def test_show_decisions_prints_one_line_per_decision(tmp_path, capsys):
    log = tmp_path / "ep.jsonl"
    write_log(log, hand_made_log())
    assert main(["show", str(log), "--decisions", "--unchecked"]) == 0
    assert capsys.readouterr().out.splitlines()[1:7] == [
        "deal   0  s0 opens",
        "deal   0  s0 bids 4x6",
        "deal   0  s1 bids 7x6",
        "          s1 says: SEVENS, TRUST ME",
        "deal   0  s2 challenges 7x6: actual 6, s2 +1, s1 -1",
        "          hands  s0 6 6 1 2 3 | s1 6 2 2 4 5 | s2 3 3 3 1 4 | s3 5 5 6 6 6",
    ]


def test_show_prints_a_saved_log_as_play_printed_it(tmp_path, capsys):
    log = tmp_path / "ep.jsonl"
    assert main(["play", "--seed", "5", "--deals", "12", "--talk", "--log", str(log)]) == 0
    played = capsys.readouterr().out.splitlines()
    assert main(["show", str(log)]) == 0
    shown = capsys.readouterr().out.splitlines()
    assert sum(line.startswith("deal ") for line in shown) == 12
    assert shown == played


def test_every_challenge_reveals_the_hands_it_was_settled_on(tmp_path, capsys):
    log = tmp_path / "ep.jsonl"
    assert main(["play", "--seed", "9", "--deals", "8", "--log", str(log)]) == 0
    out = capsys.readouterr().out.splitlines()
    hands = [r["hands"] for r in read_log(log) if r["type"] == "deal"]
    reveals = [line.split("hands  ")[1] for line in out if line.startswith(" " * 10 + "hands")]
    assert reveals == [
        " | ".join(f"s{slot} " + " ".join(map(str, hand)) for slot, hand in enumerate(deal))
        for deal in hands
    ]


def test_watch_prints_every_decision_in_log_order(tmp_path, capsys, misbehaving_host):
    log = tmp_path / "ep.jsonl"
    seen: list[dict] = []
    request = EpisodeRequest(
        seed=4, deals=6, talk=True, seat_specs=(SeatSpec.parse("misbehaving"),)
    )
    _, records = run_episode(
        misbehaving_host, request, log_path=log, environ={}, on_record=seen.append
    )
    # The callback saw every play line, in order, as a log reader parses it.
    assert seen == [r for r in records if r["type"] != "audit"]
    assert seen == [r for r in read_log(log) if r["type"] != "audit"]


def test_the_callback_runs_as_the_episode_plays_not_after(tmp_path, host):
    # Stopping at the first challenge ends the episode there: the callback ran mid-play.
    class Stop(Exception):
        pass

    def stop_at_challenge(record: dict) -> None:
        if record["type"] == "challenge":
            raise Stop

    log = tmp_path / "ep.jsonl"
    request = EpisodeRequest(seed=4, deals=50)
    with pytest.raises(Stop):
        run_episode(host, request, log_path=log, environ={}, on_record=stop_at_challenge)
    # The episode never settled, so its log is still the in-progress PATH.part.
    partial = log.with_name(log.name + ".part")
    kinds = [json.loads(line)["type"] for line in partial.read_text().splitlines()]
    assert kinds.count("deal") == 1 and kinds[-1] == "challenge" and "result" not in kinds


def test_play_watch_prints_one_line_per_decision_and_the_results(tmp_path, capsys):
    log = tmp_path / "ep.jsonl"
    assert main(["play", "--seed", "3", "--deals", "4", "--watch", "--log", str(log)]) == 0
    out = capsys.readouterr().out.splitlines()
    records = read_log(log)
    decisions = [r for r in records if r["type"] in ("bid", "challenge")]
    acted = [
        line for line in out if " bids " in line or " challenges " in line or " forced " in line
    ]
    assert len(acted) == len(decisions)
    for line, record in zip(acted, decisions, strict=True):
        assert line.startswith(f"deal {record['deal']:>3}  s{record['slot']} ")
    assert sum(" opens" in line for line in out) == 4
    assert any("points" in line for line in out)  # the results table follows


def test_the_results_table_is_plain_aligned_text():
    """``arena play``'s closing table, hand-worked: each column as wide as its widest cell
    (the "policy" column is ``pressure *``, 10 wide; "points" is its heading, 6 wide),
    the policy read from the left and every figure aligned right, the stand-in starred
    and explained under it."""
    seats = (
        SeatResult(slot=0, policy="bayes", points=12, score=0.75, decisions=40,
                   rejected=0, fallbacks=0, faults=0),
        SeatResult(slot=1, policy="pressure", points=-12, score=0.25, decisions=38,
                   rejected=2, fallbacks=1, faults=1, stand_in="bayes: the worker crashed"),
    )  # fmt: skip
    results = Results(seed=7, mode="dice", status="complete", deals_played=20, seats=seats)
    assert results_lines(results) == [
        "dice seed 7: complete, 20 deals",
        "  slot  policy      points  score  asked  rejected  fallback  fault",
        "  ----  ----------  ------  -----  -----  --------  --------  -----",
        "     0  bayes          +12  0.750     40         0         0      0",
        "     1  pressure *     -12  0.250     38         2         1      1",
        "* seat 1: bayes: the worker crashed",
    ]
