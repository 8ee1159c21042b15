"""``arena show LOG`` prints a saved episode as ``arena play`` printed it: the deals, then
the same results table, its rule-11 columns counted from the log's lines."""

from __future__ import annotations

import json

import attrs
import pytest
from replay_expected import hand_made_log

from arena.cli import main
from arena.render import logged_results, results_lines
from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatSpec


@pytest.mark.parametrize(
    "table",
    [
        ["--seed", "5", "--deals", "12", "--talk"],  # the Python engine, talk published
        ["--seed", "7", "--deals", "30", "--seat", "pressure,random", "--engine", "compiled"],
        ["--mode", "rung1w", "--seat", "nash,bayes", "--deals", "9", "--max-bids", "3"],
    ],
    ids=["talk", "compiled", "rung"],
)
def test_show_prints_what_play_printed(table, tmp_path, capsys):
    """issue 30: show was said to print a log "as `arena play` prints it", but it lacked
    the seed line and the asked, rejected, fallback and fault columns."""
    log = tmp_path / "ep.jsonl"
    assert main(["play", *table, "--log", str(log)]) == 0
    played = capsys.readouterr().out
    assert main(["show", str(log)]) == 0
    shown = capsys.readouterr().out
    assert shown == played
    assert " seed " in shown and "  asked  rejected  fallback  fault" in shown


def test_the_rule_11_columns_are_counted_as_the_engine_tallied(misbehaving_host, tmp_path):
    # The misbehaving seat sends illegal replies and goes silent: rejections, faults and
    # fallbacks in the log, each tallied by the engine as it happened.
    request = EpisodeRequest(
        seed=4, deals=12, talk=True, seat_specs=(SeatSpec.parse("misbehaving"),)
    )
    results, records = run_episode(
        misbehaving_host, request, log_path=tmp_path / "ep.jsonl", environ={}
    )
    logged = logged_results(records)
    tallied = attrs.evolve(results, seats=tuple(attrs.evolve(s, usage=None, provenance=None)
                                                for s in results.seats))  # fmt: skip
    assert [attrs.astuple(s) for s in logged.seats] == [attrs.astuple(s) for s in tallied.seats]
    first = results.seats[0]
    assert first.rejected and first.faults and first.fallbacks  # each column can be wrong
    assert results_lines(logged) == results_lines(results)


def test_a_hand_worked_deal_counts_each_seat_asked_once():
    # The hand-made deal: s0 bids 4x6, s1 bids 7x6, s2 challenges; s3 never acts. Each
    # of the three was asked once, and nothing was rejected, faulted or fallen back on.
    results = logged_results(hand_made_log())
    assert [(s.decisions, s.rejected, s.fallbacks, s.faults) for s in results.seats] == [
        (1, 0, 0, 0),
        (1, 0, 0, 0),
        (1, 0, 0, 0),
        (0, 0, 0, 0),
    ]
    assert results_lines(results)[0] == "dice seed 0: complete, 1 deals"


def test_a_log_without_a_result_line_says_where_it_stops(tmp_path, capsys):
    log = tmp_path / "ep.jsonl"
    unsettled = [record for record in hand_made_log() if record["type"] != "result"]
    log.write_text("".join(json.dumps(record) + "\n" for record in unsettled))
    assert main(["show", "--unchecked", "--partial", str(log)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "no result line: the episode stops after 1 deal(s)"
    )
