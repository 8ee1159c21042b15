"""``arena audit LOG``: the episode's audit again, byte for byte; a table; one-line errors."""

from __future__ import annotations

import json

import pytest
from audit_logs import DICE
from plugins_for_tests.flag_every_pair import FlagEveryPair

from arena.cli import main, running
from arena.plugins import load


@pytest.fixture
def played(tmp_path, capsys):
    """A logged poker episode and the ``--json`` results it printed."""
    path = tmp_path / "episode.jsonl"
    seats = "colluder,random,colluder,pressure"
    assert main(["play", "--mode", "poker", "--seed", "4", "--deals", "10", "--seat", seats,
                 "--log", str(path), "--json"]) == 0  # fmt: skip
    return path, json.loads(capsys.readouterr().out)


def test_json_is_the_episodes_audit_byte_for_byte(played, capsys):
    path, results = played
    assert main(["audit", str(path), "--json"]) == 0
    assert capsys.readouterr().out == json.dumps(results["audit"], indent=2) + "\n"


def test_the_readable_form_has_a_row_per_ordered_pair_and_per_seat(played, capsys):
    path, results = played
    assert main(["audit", str(path)]) == 0
    out = capsys.readouterr().out
    assert "per ordered pair" in out and "per seat" in out
    assert "expLoss" in out and "bluffRate" in out
    # No raw JSON: the power figures are rows of a figure/value table.
    assert "{" not in out and "[" not in out
    rows = {line.split("│")[1].strip(): line.split("│")[2].strip() for line in out.splitlines()
            if line.count("│") == 3}  # fmt: skip
    assert rows["decisions"] == str(results["audit"]["power"]["decisions"])
    assert rows["pairs"] == "12"  # 4 seats: 4 x 3 ordered pairs


def test_a_hand_built_log_is_audited_from_its_file_only_unchecked(tmp_path, capsys):
    # Its hands and table order were written by hand, not dealt from seed 0: the checked
    # reader refuses it at line 1 (the table order), --unchecked reads it and says so.
    path = tmp_path / "hand.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in DICE))
    assert main(["audit", str(path), "--json"]) == 2
    assert f"{path}:1: rule 1: table order" in capsys.readouterr().err
    assert main(["audit", str(path), "--json", "--unchecked"]) == 0
    audit = json.loads(capsys.readouterr().out)
    assert audit.pop("logCheck") == "unchecked"
    assert audit["faced"] == [[0, 0, 0, 1], [1, 0, 0, 0], [0, 2, 0, 0], [0, 0, 2, 0]]
    assert audit["power"]["decisions"] == 9


@pytest.mark.parametrize(
    "content, expected",
    [
        (None, "cannot read event log"),
        ("not json\n", ":1: not a valid event"),
        ('{"type": "deal", "deal": 0, "opener": 0, "hands": []}\n', "not an event log"),
    ],
)
def test_a_missing_or_corrupt_log_is_one_line_and_exit_2(tmp_path, capsys, content, expected):
    path = tmp_path / "bad.jsonl"
    if content is not None:
        path.write_text(content)
    assert main(["audit", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("arena: error: ") and expected in err
    assert err.count("\n") == 1


def test_append_writes_the_flags_after_result_and_never_twice(tmp_path, capsys):
    # The hand-built log plus a stale audit line: --append replaces it with the
    # recomputed flags (none: each seat faced one opponent), and a second run is a no-op.
    path = tmp_path / "hand.jsonl"
    stale = {"type": "audit", "reporter": "flags", "flag": {"flag": "old", "slots": [0, 1]}}
    play_lines = "".join(json.dumps(r) + "\n" for r in DICE)
    path.write_text(play_lines + json.dumps(stale) + "\n")
    assert main(["audit", str(path), "--append", "--json", "--unchecked"]) == 0
    assert path.read_text() == play_lines
    assert main(["audit", str(path), "--append", "--unchecked"]) == 0
    assert path.read_text() == play_lines


def test_append_keeps_play_lines_byte_for_byte_and_adds_one_line_per_flag(tmp_path, monkeypatch):
    # A stand-in flags reporter (two flags) in place of ours, so there is a tail to write.
    def flagging_host(environ=None, policy=None):
        host = load({"ARENA_BLOCK_PLUGINS": "collusion_flags"})
        host.add(FlagEveryPair(), "flag_every_pair")
        return host

    monkeypatch.setattr(running, "load", flagging_host)
    path = tmp_path / "hand.jsonl"
    play_lines = "".join(json.dumps(r) + "\n" for r in DICE)
    path.write_text(play_lines)
    for _ in range(2):
        assert main(["audit", str(path), "--append", "--unchecked"]) == 0
        lines = path.read_text().splitlines(keepends=True)
        assert "".join(lines[: len(DICE)]) == play_lines
        tail = [json.loads(line) for line in lines[len(DICE) :]]
        assert tail == [
            {"type": "audit", "reporter": "flags", "flag": {"flag": "t", "slots": [0, 1]}},
            {"type": "audit", "reporter": "flags", "flag": {"flag": "t", "slots": [2, 3]}},
        ]


def test_append_refuses_a_log_without_a_result_line(tmp_path, capsys):
    path = tmp_path / "unfinished.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in DICE[:-1]))
    assert main(["audit", str(path), "--append", "--unchecked"]) == 2
    assert "no result line" in capsys.readouterr().err
    assert path.read_text() == "".join(json.dumps(r) + "\n" for r in DICE[:-1])
