"""``arena check`` and the checked reader: every kind of edit to a log is caught, by line and rule.

One real episode is played and saved; each row of TAMPERED edits a copy of it one
way and names the line and rule the check must report first, with a fragment of
what was expected worked out here from the rulebook (the hands are counted by the
test, the bid order is rule 4's). Every edited log must be refused by both
``arena check`` (exit 1, one line per violation) and ``arena audit`` (exit 2, the
first violation in one line).
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import attrs
import pytest
from episode_strategies import Ending, ended_requests, requests
from hypothesis import given, settings
from hypothesis import strategies as st
from plugins_for_tests.harness import plugged

from arena import hookimpl
from arena.check import check_results, distinct_episodes, load_checked, verify
from arena.cli import main
from arena.eventlog import LogError
from arena.modes import Mode
from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatSpec

SEATS = tuple(SeatSpec.parse(name) for name in ("bayes", "pressure", "random", "bayes"))
DICE_TABLE = EpisodeRequest(mode="dice", seed=11, deals=8, max_bids=3, seat_specs=SEATS)
POKER_TABLE = EpisodeRequest(mode="poker", seed=11, deals=4, seat_specs=SEATS)


def play(host, request: EpisodeRequest, path: Path) -> list[dict]:
    _, records = run_episode(host, request, log_path=path, environ={})
    return records


@pytest.fixture(scope="module")
def dice_records(host, tmp_path_factory) -> list[dict]:
    return play(host, DICE_TABLE, tmp_path_factory.mktemp("dice") / "log.jsonl")


@pytest.fixture(scope="module")
def poker_records(host, tmp_path_factory) -> list[dict]:
    return play(host, POKER_TABLE, tmp_path_factory.mktemp("poker") / "log.jsonl")


def first(records: list[dict], predicate: Callable[[dict], bool]) -> int:
    """Index of the first record that matches (the line number is index + 1)."""
    return next(i for i, r in enumerate(records) if predicate(r))


def raising_bid(records):
    """A bid that answers a standing bid (the line before it is a bid of the same deal)."""
    return first(
        records,
        lambda r: r["type"] == "bid" and records[records.index(r) - 1]["type"] == "bid",
    )


def is_unforced_challenge(r):
    return r["type"] == "challenge" and not r["forced"]


def count_in_deal(records, challenge_index) -> int:
    """Rule 6 by hand: the standing face counted across the deal's hands."""
    challenge = records[challenge_index]
    deal = next(r for r in records if r["type"] == "deal" and r["deal"] == challenge["deal"])
    return sum(hand.count(challenge["face"]) for hand in deal["hands"])


# --- the edits ---------------------------------------------------------------------------------
# Each returns (edited records, line, rule, expected fragment).


def field_edit(name: str, where: Callable[[dict], bool], rule: str, expected: str, **changes):
    """An edit that changes fields of the first matching line."""

    def edit(records):
        i = first(records, where)
        records[i].update(changes)
        return records, i + 1, rule, expected

    edit.__name__ = name
    return edit


def is_bid(r):
    return r["type"] == "bid"


def is_result(r):
    return r["type"] == "result"


face_nine = field_edit("face_nine", is_bid, "rule 3", "face 9 is not one of 1..6", face=9)
quantity_99 = field_edit(  # 4 seats x 5 dice
    "quantity_99", is_bid, "rule 3", "quantity 99 is out of range 1..20", quantity=99
)
fifty_points_each = field_edit(
    "fifty_points_each",
    is_result,
    "scoring",
    "points [50, 50, 50, 50]; the challenges give",
    points=[50, 50, 50, 50],
)
deals_played_edited = field_edit(
    "deals_played_edited", is_result, "rule 9", "dealsPlayed 7; 8 deals resolved", dealsPlayed=7
)
deadline_although_complete = field_edit(
    "deadline_although_complete", is_result, "rule 9", "expected 'complete'", status="deadline"
)
forced_flag_flipped = field_edit(
    "forced_flag_flipped", is_unforced_challenge, "rule 8", "forced is true after", forced=True
)
fallback_mark_forged = field_edit(
    "fallback_mark_forged",
    lambda r: is_bid(r) and not r["fallback"],
    "rule 11",
    "fallback is true after 0 rejection(s); expected false",
    fallback=True,
)
talk_published_with_talk_off = field_edit(
    "talk_published_with_talk_off",
    is_bid,
    "rule 10",
    "talk is published although talk is off",
    say="six sixes",
    published="six sixes",
)


def non_raising_bid(records):
    i = raising_bid(records)
    standing = records[i - 1]
    records[i].update(quantity=standing["quantity"], face=standing["face"])  # an equal bid
    q, f = standing["quantity"], standing["face"]
    return records, i + 1, "rule 4", f"does not raise the standing bid {q}x{f}"


def lower_bid(records):
    i = raising_bid(records)
    records[i].update(quantity=records[i - 1]["quantity"] - 1 or 1, face=1)
    if records[i - 1]["quantity"] == 1:  # 1x1 is below every standing bid but 1x1 itself
        records[i - 1].update(face=2)
    return records, i + 1, "rule 4", "does not raise"


def hand_of_sevens(records):
    i = first(records, lambda r: r["type"] == "deal")
    records[i]["hands"][1] = [7, 7, 7, 7, 7]
    return records, i + 1, "rule 1", "slot 1's hand [7, 7, 7, 7, 7] is not the hand seed 11"


def swapped_hands(records):
    i = first(records, lambda r: r["type"] == "deal" and r["hands"][0] != r["hands"][1])
    hands = records[i]["hands"]
    hands[0], hands[1] = hands[1], hands[0]
    return records, i + 1, "rule 1", "slot 0's hand"


def wrong_actual(records):
    i = first(records, is_unforced_challenge)
    true_count = count_in_deal(records, i)
    records[i]["actual"] = true_count + 1
    return records, i + 1, "rule 6", f"the dealt hands hold {true_count} of face"


def swapped_winner_and_loser(records):
    i = first(records, is_unforced_challenge)
    r = records[i]
    r["winner"], r["loser"] = r["loser"], r["winner"]
    # Rule 6 by hand: the bidder wins iff the count reaches the quantity.
    truthful = count_in_deal(records, i) >= r["quantity"]
    winner = r["bidder"] if truthful else r["slot"]
    return records, i + 1, "rule 6", f"makes winner {winner}"


def edited_score(records):
    i = first(records, lambda r: r["type"] == "result")
    records[i]["score"][0] += 0.25
    return records, i + 1, "scoring", "0.5 + points / (2 x 8)"


def seat_bids_twice(records):
    i = raising_bid(records)
    twice = copy.deepcopy(records[i])
    twice["quantity"] += 1  # a legal raise, so only the turn is wrong
    records.insert(i + 1, twice)
    return records, i + 2, "rule 5", f"slot {twice['slot']} acts, but it is slot"


def wrong_opener(records):
    i = first(records, lambda r: r["type"] == "deal")
    records[i]["opener"] = (records[i]["opener"] + 1) % 4
    return records, i + 1, "rule 1", "deal 0 opens at slot"


def reshuffled_table_order(records):
    order = records[0]["tableOrder"]
    records[0]["tableOrder"] = order[1:] + order[:1]
    return records, 1, "rule 1", f"seed 11 draws {order}"


def cut_mid_deal(records):
    i = first(records, lambda r: r["type"] == "deal" and r["deal"] == 3)
    del records[i + 2 :]  # the deal line and its first bid
    return records, i + 2, "complete", "no result line: the log stops after 3 of 8 deals"


def result_removed(records):
    del records[first(records, lambda r: r["type"] == "result") :]
    return records, len(records), "complete", "no result line"


def relabelled_mode(records):
    records[0]["mode"] = "poker"  # symbols and hand size still say dice
    return records, 1, "header", "symbols [1, 2, 3, 4, 5, 6] are not mode poker's"


def wild_rules_on_a_dice_header(records):
    # A reader that counts by the header (the soft-play audit) would count ones as wild:
    # the header's rules must be its mode's, as the symbols and hand size must.
    records[0].update(wild=1, raiseRule="wild-ones")
    return records, 1, "header", "'raise_rule': 'wild-ones'} are not mode dice's"


def unforced_at_the_cap(records):
    i = first(records, lambda r: r["type"] == "challenge" and r["forced"])
    records[i]["forced"] = False
    return records, i + 1, "rule 8", "with a cap of 3; expected true"


def cap_lowered_in_header(records):
    records[0]["maxBidsPerDeal"] = 1
    # Rule 8 with a cap of one bid: the first deal's second decision must be a forced
    # challenge. It is either a second bid, or a challenge the log calls unforced.
    i = first(records, lambda r: r["type"] == "deal") + 2
    assert records[i - 1]["type"] == "bid"
    if records[i]["type"] == "bid":
        return records, i + 1, "rule 8", "a bid after the cap of 1 bids"
    return records, i + 1, "rule 8", "forced is false after 1 bids with a cap of 1"


def deal_skipped(records):
    start = first(records, lambda r: r["type"] == "deal" and r["deal"] == 1)
    end = first(records, lambda r: r["type"] == "deal" and r["deal"] == 2)
    del records[start:end]
    return records, start + 1, "rule 9", "deal 2 where deal 1 is due"


def challenge_names_another_bid(records):
    i = first(records, is_unforced_challenge)
    records[i]["quantity"] += 1
    return records, i + 1, "rule 6", "the standing bid is"


def play_after_result(records):
    extra = copy.deepcopy(records[first(records, lambda r: r["type"] == "bid")])
    records.append(extra)
    return records, len(records), "complete", "a bid line after the result"


def quantity_as_text(records):
    i = first(records, lambda r: r["type"] == "bid")
    records[i]["quantity"] = str(records[i]["quantity"])
    return records, i + 1, "format", "quantity must be an integer"


def talk_as_a_number(records):
    records[0]["talk"] = 1  # JSON's 1 is not true: the header's talk is a boolean
    return records, 1, "format", "talk must be true or false, got 1"


def seed_minus_one(records):
    records[0]["seed"] = -1  # rule 1 deals from a seed >= 0; -1 deals nothing
    return records, 1, "header", "seed must be >= 0, got -1"


TAMPERED = [
    non_raising_bid,
    lower_bid,
    face_nine,
    quantity_99,
    hand_of_sevens,
    swapped_hands,
    wrong_actual,
    swapped_winner_and_loser,
    fifty_points_each,
    edited_score,
    seat_bids_twice,
    wrong_opener,
    reshuffled_table_order,
    cut_mid_deal,
    result_removed,
    relabelled_mode,
    wild_rules_on_a_dice_header,
    forced_flag_flipped,
    unforced_at_the_cap,
    cap_lowered_in_header,
    deal_skipped,
    deals_played_edited,
    deadline_although_complete,
    challenge_names_another_bid,
    fallback_mark_forged,
    talk_published_with_talk_off,
    play_after_result,
    quantity_as_text,
    talk_as_a_number,
    seed_minus_one,
]


def save(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))
    return path


def test_the_untouched_log_passes(dice_records, poker_records, host):
    assert verify(dice_records, registry=host.registry) == []
    assert verify(poker_records, registry=host.registry) == []
    # The base log has what the table below edits: raises, both kinds of challenge.
    assert any(r["type"] == "challenge" and r["forced"] for r in dice_records)
    assert any(is_unforced_challenge(r) for r in dice_records)


@pytest.mark.parametrize("edit", TAMPERED, ids=lambda f: f.__name__)
def test_every_tampered_log_is_refused_naming_line_and_rule(
    edit, dice_records, host, tmp_path, capsys
):
    records, line, rule, expected = edit(copy.deepcopy(dice_records))
    path = save(tmp_path / "tampered.jsonl", records)
    violation = verify(records, registry=host.registry)[0]
    assert (violation.line, violation.rule) == (line, rule), violation
    assert expected in violation.message

    assert main(["check", str(path)]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith(f"{path}:{line}: {rule}: ")
    assert expected in out.splitlines()[0]

    assert main(["audit", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert captured.err.startswith(f"arena: error: {path}:{line}: {rule}: ")
    assert "Traceback" not in captured.err


def test_a_poker_log_relabelled_as_dice_header_and_all_is_refused(poker_records, host):
    records = copy.deepcopy(poker_records)
    records[0].update(mode="dice", symbols=[1, 2, 3, 4, 5, 6], handSize=5)
    # The header is now a consistent dice header, but seed 11 deals dice, not 8-digit serials.
    violation = verify(records, registry=host.registry)[0]
    assert (violation.line, violation.rule) == (2, "rule 1")
    assert f"slot 0's hand {poker_records[1]['hands'][0]}" in violation.message


def test_an_unknown_mode_is_a_header_violation_and_nothing_more(dice_records, host):
    records = copy.deepcopy(dice_records)
    records[0]["mode"] = "chess"
    violations = verify(records, registry=host.registry)
    assert [(v.line, v.rule) for v in violations] == [(1, "header")]
    assert "unknown mode 'chess'" in violations[0].message


def _seats(edit: Callable[[list[dict]], object]) -> Callable[[dict], None]:
    """A header edit that changes the seat entries in place."""
    return lambda header: edit(header["seats"])


def _provenance(edit: Callable[[dict], object]) -> Callable[[dict], None]:
    return lambda header: edit(header["provenance"])


def _nine_seats(header):
    header["seats"] = [{"slot": slot, "policy": "bayes"} for slot in range(9)]


HEADER_EDITS = {
    # name: (edit of DICE_TABLE's header, rule, what the message must say). The ranges are
    # the engines': 2..8 seats (rules.py), hands of 1..64 and 2..64 symbols (modes.py), a cap
    # of 1..2**31 - 1 = 2147483647 (a C int), 1..2**63 - 1 deals (an int64), a seed >= 0.
    "a policy that is an object": (
        _seats(lambda s: s[0].update(policy={"name": "bayes"})),
        "format", "seats[0].policy must be text, got {'name': 'bayes'}",
    ),
    "a policy that is a list": (
        _seats(lambda s: s[0].update(policy=["bayes"])),
        "format", "policy must be text, got ['bayes']",
    ),
    "a policy that is a number": (
        _seats(lambda s: s[2].update(policy=7)), "format", "seats[2].policy must be text, got 7"
    ),
    "a policy that is null": (
        _seats(lambda s: s[0].update(policy=None)), "format", "policy must be text, got None"
    ),
    "a policy that is true": (
        _seats(lambda s: s[0].update(policy=True)), "format", "policy must be text, got True"
    ),
    "a seat entry with a third key": (
        _seats(lambda s: s[0].update(trust=True)),
        "format", 'seats[0] must be {"slot": INTEGER, "policy": TEXT}',
    ),
    "a seat entry that is text": (
        lambda h: h.update(seats=["bayes"] * 4), "format", "seats[0] must be {"
    ),
    "seats as a number": (lambda h: h.update(seats=4), "format", "seats must be a list, got 4"),
    "an empty policy": (_seats(lambda s: s[1].update(policy="")), "header", "empty seat name"),
    "a slot as text": (
        _seats(lambda s: s[1].update(slot="1")), "format", "seats[1].slot must be an integer"
    ),
    "slots out of order": (
        _seats(lambda s: s[3].update(slot=5)), "header", "slots [0, 1, 2, 5], not 0..3"
    ),
    "nine seats": (_nine_seats, "header", "seats must be 2 to 8, got 9"),
    "a hand of a billion": (
        lambda h: h.update(handSize=10**9), "header", "hand size must be 1 to 64, got 1000000000"
    ),
    "an empty hand": (lambda h: h.update(handSize=0), "header", "hand size must be 1 to 64, got 0"),
    "a hand size as text": (
        lambda h: h.update(handSize="5"), "format", "handSize must be an integer, got '5'"
    ),
    "a cap of 10**23": (
        lambda h: h.update(maxBidsPerDeal=10**23),
        "header", "max bids per deal must be 1 to 2147483647",
    ),
    "a cap of 0": (
        lambda h: h.update(maxBidsPerDeal=0), "header", "max bids per deal must be 1 to 2147483647"
    ),
    "a cap of 3.0": (
        lambda h: h.update(maxBidsPerDeal=3.0), "format", "maxBidsPerDeal must be an integer"
    ),
    "no deals": (lambda h: h.update(deals=0), "header", "deals must be 1 to 9223372036854775807"),
    "2**63 deals": (
        lambda h: h.update(deals=2**63), "header", "deals must be 1 to 9223372036854775807"
    ),
    "deals as null": (lambda h: h.update(deals=None), "format", "deals must be an integer"),
    "a seed of true": (
        lambda h: h.update(seed=True), "format", "seed must be an integer, got True"
    ),
    "65 symbols": (
        lambda h: h.update(symbols=list(range(65))), "header", "symbols must be 2 to 64 distinct"
    ),
    "symbols descending": (
        lambda h: h.update(symbols=[6, 5, 4, 3, 2, 1]), "header", "distinct ints, ascending"
    ),
    "symbols as text": (
        lambda h: h.update(symbols="123456"), "format", "symbols must be a list of integers"
    ),
    "a table order with a slot twice": (
        lambda h: h.update(tableOrder=[0, 0, 1, 2]),
        "header", "tableOrder [0, 0, 1, 2] is not an order of the slots [0, 1, 2, 3]",
    ),
    "a table order as an object": (
        lambda h: h.update(tableOrder={}), "format", "tableOrder must be a list of integers"
    ),
    "version 3": (
        lambda h: h.update(version=3), "header", "log version 3; this reader knows versions 1, 2"
    ),
    "version as text": (lambda h: h.update(version="2"), "format", "version must be an integer"),
    "a mode that is a number": (lambda h: h.update(mode=5), "format", "mode must be text, got 5"),
    "a wild face the mode lacks": (
        lambda h: h.update(wild=9), "header", "wild symbol 9 is not one of its symbols"
    ),
    "a wild face as text": (lambda h: h.update(wild="1"), "format", "wild must be an integer"),
    "an unknown raise rule": (
        lambda h: h.update(raiseRule="loose"), "header", "raise rule must be one of"
    ),
    "wildCountsItself as text": (
        lambda h: h.update(wildCountsItself="yes"), "format", "wildCountsItself must be true or"
    ),
    "a provenance of another shape": (
        lambda h: h.update(provenance={"arena": "0.1.0"}),
        "format", "provenance must hold seats, filters and reporters",
    ),
    "a provenance that is text": (
        lambda h: h.update(provenance="ours"), "format", "provenance must be an object or null"
    ),
    "a seat's provenance as a number": (
        _provenance(lambda p: p["seats"].__setitem__(1, 1)),
        "format", "provenance.seats[1] must be {distribution, version, isolation} as text",
    ),
    "an isolation no writer names": (
        _provenance(lambda p: p["seats"][0].update(isolation="none")),
        "header", "isolation 'none' is not one of bwrap, process, in-process",
    ),
    "a provenance for three seats": (
        _provenance(lambda p: p["seats"].pop()), "header", "provenance names 3 seats for 4"
    ),
}  # fmt: skip
"""issue 30: a header that parses but that no writer makes, each refused by its field."""


@pytest.mark.parametrize("name", HEADER_EDITS)
def test_a_header_out_of_its_format_is_refused_checked_and_unchecked(
    name, dice_records, host, tmp_path
):
    edit, rule, expected = HEADER_EDITS[name]
    records = copy.deepcopy(dice_records)
    edit(records[0])
    violations = verify(records, registry=host.registry)
    # Nothing after a header that breaks its format is read: one violation, on line 1.
    assert [(v.line, v.rule) for v in violations] == [(1, rule)], violations
    assert expected in violations[0].message
    path = save(tmp_path / "header.jsonl", records)
    for unchecked in (False, True):
        with pytest.raises(LogError) as refused:
            load_checked(path, unchecked=unchecked, registry=host.registry)
        assert str(refused.value).startswith(f"{path}:1: {rule}: ")
        assert expected in str(refused.value)


def test_a_header_without_provenance_or_with_null_provenance_passes(dice_records, host):
    # A version 1 header has no provenance, and a table built without the plugin host
    # (a test's, the conformance kit's) writes null.
    records = copy.deepcopy(dice_records)
    records[0]["provenance"] = None
    assert verify(records, registry=host.registry) == []
    del records[0]["provenance"]
    assert verify(records, registry=host.registry) == []


def test_unchecked_reads_a_tampered_log_and_partial_reads_an_unfinished_one(
    dice_records, host, tmp_path
):
    tampered, *_ = fifty_points_each(copy.deepcopy(dice_records))
    path = save(tmp_path / "tampered.jsonl", tampered)
    with pytest.raises(LogError, match=r"tampered\.jsonl:\d+: scoring: "):
        load_checked(path, registry=host.registry)
    assert load_checked(path, unchecked=True) == tampered

    unfinished, *_ = cut_mid_deal(copy.deepcopy(dice_records))
    path = save(tmp_path / "unfinished.jsonl", unfinished)
    with pytest.raises(LogError, match="no result line"):
        load_checked(path, registry=host.registry)
    assert load_checked(path, partial=True, registry=host.registry) == unfinished


def test_audit_marks_unchecked_and_partial_output(dice_records, tmp_path, capsys):
    unfinished, *_ = cut_mid_deal(copy.deepcopy(dice_records))
    path = save(tmp_path / "unfinished.jsonl", unfinished)
    assert main(["audit", str(path), "--partial"]) == 0
    assert capsys.readouterr().out.startswith("PARTIAL: ")
    assert main(["audit", str(path), "--partial", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["logCheck"] == "partial"
    tampered, *_ = fifty_points_each(copy.deepcopy(dice_records))
    path = save(tmp_path / "tampered.jsonl", tampered)
    assert main(["audit", str(path), "--unchecked"]) == 0
    assert capsys.readouterr().out.startswith("UNCHECKED: ")


@given(data=st.data())
def test_any_edited_count_or_symbol_is_caught_on_its_line(dice_records, host, data):
    records = copy.deepcopy(dice_records)
    challenges = [i for i, r in enumerate(records) if r["type"] == "challenge"]
    deals = [i for i, r in enumerate(records) if r["type"] == "deal"]
    if data.draw(st.booleans(), label="edit a challenge's actual"):
        i = data.draw(st.sampled_from(challenges))
        records[i]["actual"] += data.draw(st.integers(-3, 3).filter(bool))
        rule = "rule 6"
    else:
        i = data.draw(st.sampled_from(deals))
        slot, position = data.draw(st.integers(0, 3)), data.draw(st.integers(0, 4))
        old = records[i]["hands"][slot][position]
        records[i]["hands"][slot][position] = data.draw(
            st.integers(1, 6).filter(lambda f: f != old)
        )
        rule = "rule 1"
    violation = verify(records, registry=host.registry)[0]
    assert (violation.line, violation.rule) == (i + 1, rule)


def test_check_prints_ok_per_sound_log_and_exits_0(host, tmp_path, capsys):
    path = tmp_path / "ok.jsonl"
    play(host, DICE_TABLE, path)
    assert main(["check", str(path)]) == 0
    assert capsys.readouterr().out == f"{path}: ok (dice seed 11, complete, 8 deals)\n"


def test_the_results_digest_ties_results_to_the_exact_log_bytes(tmp_path, capsys):
    log, results = tmp_path / "log.jsonl", tmp_path / "results.json"
    assert main(["play", "--deals", "3", "--seed", "2", "--log", str(log), "--json"]) == 0
    results.write_text(capsys.readouterr().out)
    assert (
        json.loads(results.read_text())["logSha256"] == hashlib.sha256(log.read_bytes()).hexdigest()
    )
    assert check_results(log, results) == []
    assert main(["check", str(log), "--results", str(results)]) == 0
    capsys.readouterr()
    other = tmp_path / "other.jsonl"
    assert main(["play", "--deals", "3", "--seed", "3", "--log", str(other)]) == 0
    capsys.readouterr()
    assert main(["check", str(other), "--results", str(results)]) == 1
    assert f"{other}:0: digest: {results} describes a log with SHA-256" in capsys.readouterr().out


def test_the_same_episode_twice_is_pooled_once_with_a_warning(dice_records, tmp_path, capsys):
    a = save(tmp_path / "a.jsonl", dice_records)
    b = save(tmp_path / "b.jsonl", dice_records)
    assert main(["audit", str(a), str(b), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["flags"]["power"]["episodes"] == 1
    assert captured.err == f"arena: warning: {b} is the same episode as {a}; counted once\n"
    # Audit lines appended later do not make a copy a different episode.
    with_audit = [*dice_records, {"type": "audit", "reporter": "flags", "flag": {"x": 1}}]
    kept, warnings = distinct_episodes([("a", dice_records), ("c", with_audit)])
    assert [path for path, _ in kept] == ["a"] and len(warnings) == 1


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 99) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=8,
)


@given(data=st.data())
def test_no_edit_makes_the_checker_crash(dice_records, host, data):
    # Whatever a hostile or broken log holds, the reader answers with violations on its
    # lines, never an exception. (Not every edit is a violation: a bid changed to another
    # legal bid that the next bid still raises is a different game, not a broken one.)
    records = copy.deepcopy(dice_records)
    i = data.draw(st.integers(0, len(records) - 1), label="line")
    key = None
    if data.draw(st.booleans(), label="delete the line"):
        del records[i]
    else:
        key = data.draw(st.sampled_from(sorted(records[i])), label="field")
        records[i][key] = data.draw(JSON_VALUES, label="value")
    violations = verify(records, registry=host.registry)
    assert all(0 <= v.line <= len(records) for v in violations)
    if i == 0 and records[0] != dice_records[0] and key not in ("talk", "seats", "provenance"):
        # every header field but talk is checked or derives the rest; another policy name,
        # or a null provenance (as a table built without the plugin host writes), is sound
        assert violations


def test_violations_name_the_files_own_line_numbers_across_blank_lines(dice_records, tmp_path):
    records, line, rule, _ = fifty_points_each(copy.deepcopy(dice_records))
    path = save(tmp_path / "spaced.jsonl", records)
    text = path.read_text().splitlines(keepends=True)
    path.write_text("".join(text[:3]) + "\n\n" + "".join(text[3:]))  # two blank lines
    with pytest.raises(LogError, match=rf"spaced\.jsonl:{line + 2}: {rule}: "):
        load_checked(path)


@settings(max_examples=40)
@given(request=requests())
def test_every_log_the_engine_writes_passes_the_check(misbehaving_host, request):
    # No false alarms: random modes, table sizes, caps and talk, with a seat that breaks
    # rule 11 on purpose (rejections, faults, fallbacks) and token usage lines.
    _, records = run_episode(misbehaving_host, request, environ={})
    assert verify(records, registry=misbehaving_host.registry) == []


def test_a_version_1_log_still_reads_and_an_unknown_version_is_refused(dice_records):
    # Version 2 only added fields and a line type (docs/event-log.md): a version 1 log is
    # the same log without the header's provenance, and still passes.
    old = copy.deepcopy(dice_records)
    old[0]["version"] = 1
    del old[0]["provenance"]
    assert verify(old) == []
    future = copy.deepcopy(dice_records)
    future[0]["version"] = 3
    assert [(v.line, v.rule) for v in verify(future)] == [(1, "header")]


# --- status "quit": a person left, or the table server stopped (docs/event-log.md) ---------

QUIT_TABLE = EpisodeRequest(
    mode="dice", seed=11, deals=8, max_bids=3, seat_specs=(SeatSpec.parse("human"), *SEATS[1:])
)
QUIT_AT = 3
"""The person's decision at which they leave: far enough in to have resolved a deal."""


def quitting_log(host, path: Path) -> list[dict]:
    """QUIT_TABLE played by a person who moves as bayes would, then leaves at decision QUIT_AT."""
    seats = Ending("quit", QUIT_AT).seats(host)
    _, records = run_episode(host, QUIT_TABLE, log_path=path, environ={}, local_seats=seats)
    return records


@pytest.fixture(scope="module")
def quit_records(host, tmp_path_factory) -> list[dict]:
    return quitting_log(host, tmp_path_factory.mktemp("quit") / "quit.jsonl")


def test_a_log_that_quits_mid_deal_passes_and_every_checked_reader_reads_it(
    quit_records, host, tmp_path, capsys
):
    result = next(r for r in quit_records if r["type"] == "result")
    resolved = sum(r["type"] == "challenge" for r in quit_records)
    # The episode stopped inside a deal: its deal line is the last one, with no challenge
    # after it, and the result counts only the deals resolved before it (here 1..7 of 8).
    last_deal = max(i for i, r in enumerate(quit_records) if r["type"] == "deal")
    assert not any(r["type"] == "challenge" for r in quit_records[last_deal:])
    assert result["status"] == "quit" and result["dealsPlayed"] == resolved
    assert 1 <= resolved < QUIT_TABLE.deals
    # Points: +1 to each challenge's winner, -1 to its loser (rule 6), summed by hand here.
    points = [0] * 4
    for r in quit_records:
        if r["type"] == "challenge":
            points[r["winner"]] += 1
            points[r["loser"]] -= 1
    assert result["points"] == points
    assert result["score"] == [0.5 + p / (2 * resolved) for p in points]
    assert verify(quit_records, registry=host.registry) == []
    path = save(tmp_path / "quit.jsonl", quit_records)
    assert main(["check", str(path)]) == 0
    assert capsys.readouterr().out == f"{path}: ok (dice seed 11, quit, {resolved} deals)\n"
    assert load_checked(path, registry=host.registry) == quit_records
    pages = [tmp_path / "replay.html", tmp_path / "report.html"]
    for command in (
        ["audit", str(path)],
        ["show", str(path)],
        ["replay", str(path), "-o", str(pages[0])],
        ["report", str(path), "-o", str(pages[1])],
    ):
        assert main(command) == 0, command
        assert "error" not in capsys.readouterr().err
    assert all(page.stat().st_size > 0 for page in pages)


def quit_with_every_deal_played(records):
    """A complete log relabelled quit: nobody left before the last deal was played."""
    i = first(records, is_result)
    records[i]["status"] = "quit"
    return records, i + 1, "rule 9", "status 'quit' after 8 of 8 deals; expected 'complete'"


def quit_relabelled(status):
    """A mid-deal quit relabelled: only quit may end a deal in progress (rules 7 and 9)."""

    def edit(records):
        i = first(records, is_result)
        records[i]["status"] = status
        open_deal = [r for r in records if r["type"] == "deal"][-1]["deal"]
        return records, i + 1, "rule 7", f"the episode settles in the middle of deal {open_deal}"

    edit.__name__ = f"quit_relabelled_{status}"
    return edit


def test_quit_only_ends_an_unfinished_episode(dice_records, host, tmp_path):
    records, line, rule, expected = quit_with_every_deal_played(copy.deepcopy(dice_records))
    [violation] = verify(records, registry=host.registry)
    assert (violation.line, violation.rule) == (line, rule) and expected in violation.message


def test_seed_zero_is_a_seed(host, tmp_path):
    # Rule 1: any seed >= 0 deals; 0 is the least of them, not a misread -1.
    records = play(host, attrs.evolve(DICE_TABLE, seed=0, deals=2), tmp_path / "zero.jsonl")
    assert records[0]["seed"] == 0 and verify(records, registry=host.registry) == []


# --- rule 11's marks: one ask, one retry, then the fallback ---------------------------------


DICE_TABLE_WITH_A_PERSON = attrs.evolve(DICE_TABLE, seat_specs=(SeatSpec("human"), *SEATS[1:]))


@pytest.fixture(scope="module")
def refused_records(host, tmp_path_factory) -> list[dict]:
    """DICE_TABLE with a person at slot 0 whose every reply is refused: each of its
    decisions is two ``rejected`` lines, then the fallback's move."""

    class Mumbler:
        def decide(self, view):
            return "hmm"

    path = tmp_path_factory.mktemp("refused") / "refused.jsonl"
    _, records = run_episode(
        host, DICE_TABLE_WITH_A_PERSON, log_path=path, environ={},
        local_seats={"human": lambda context: Mumbler()},
    )  # fmt: skip
    return records


def first_fallback(records) -> int:
    i = first(records, lambda r: r["type"] in ("bid", "challenge") and r["fallback"])
    assert [r["type"] for r in records[i - 2 : i]] == ["rejected", "rejected"]
    return i


def test_a_refused_seats_log_passes(refused_records, host):
    assert verify(refused_records, registry=host.registry) == []


def test_a_third_rejection_for_one_decision_is_refused(refused_records, host):
    records = copy.deepcopy(refused_records)
    i = first_fallback(records)
    records.insert(i, copy.deepcopy(records[i - 1]))  # a third ask: line i + 1
    [violation] = verify(records, registry=host.registry)
    assert (violation.line, violation.rule) == (i + 1, "rule 11")
    assert "a rejection after the seat's last chance" in violation.message


def test_a_fault_after_two_rejections_is_refused(refused_records, host):
    records = copy.deepcopy(refused_records)
    i = first_fallback(records)
    fault = {"type": "fault", "deal": records[i]["deal"], "slot": 0, "reason": "down"}
    records.insert(i, fault)  # the seat had its two asks: it is not asked again
    [violation] = verify(records, registry=host.registry)
    assert (violation.line, violation.rule) == (i + 1, "rule 11")
    assert "a fault after the seat's last chance" in violation.message


def test_a_fallback_after_one_rejection_is_refused(refused_records, host):
    records = copy.deepcopy(refused_records)
    i = first_fallback(records)
    del records[i - 1]  # one rejection: the seat is still owed its retry
    [violation] = verify(records, registry=host.registry)
    assert (violation.line, violation.rule) == (i, "rule 11")
    assert "fallback is true after 1 rejection(s); expected false" in violation.message


@pytest.mark.slow
@settings(max_examples=30)
@given(data=st.data())
@pytest.mark.parametrize("status", ["quit", "deadline"])
def test_every_log_the_engine_ends_early_passes_the_check(misbehaving_host, status, data):
    # A person leaving (possibly mid-deal) or the clock running out: no false alarms.
    request, ending = data.draw(ended_requests(status))
    results, records = run_episode(
        misbehaving_host, request, environ={}, local_seats=ending.seats(misbehaving_host)
    )
    assert next(r for r in records if r["type"] == "result")["status"] == results.status
    assert verify(records, registry=misbehaving_host.registry) == []


@pytest.mark.parametrize("status", ["deadline", "complete"])
def test_a_mid_deal_end_that_is_not_a_quit_is_refused(quit_records, host, status):
    records, line, rule, expected = quit_relabelled(status)(copy.deepcopy(quit_records))
    violations = verify(records, registry=host.registry)
    assert (violations[0].line, violations[0].rule) == (line, rule), violations
    assert expected in violations[0].message
    # 'complete' is also wrong on the count: fewer than 8 deals were played (rule 9).
    assert [v.rule for v in violations[1:]] == (["rule 9"] if status == "complete" else [])


class _WidestMode:
    """A plugin registering the widest mode a writer may make: 64 symbols, hands of 64."""

    WIDEST = Mode(name="widest", symbols=tuple(range(64)), hand_size=64)

    @hookimpl
    def register_modes(self, register):
        register(self.WIDEST)


def test_the_widest_mode_a_writer_makes_passes_and_one_wider_is_not_made(tmp_path):
    # The header's ranges are the engines' own: a mode of 64 symbols and hands of 64 is
    # played and its log passes every check; a 65th symbol or die is refused when the
    # mode is declared, so no log of one is ever written.
    with plugged(_WidestMode(), "widest") as (host, info):
        assert info.broken is None, info.broken
        request = EpisodeRequest(
            mode="widest", seats=2, deals=2, seat_specs=(SeatSpec.parse("random"),) * 2
        )
        _, records = run_episode(host, request, log_path=tmp_path / "w.jsonl", environ={})
        assert records[0]["handSize"] == 64 and len(records[0]["symbols"]) == 64
        assert verify(records, registry=host.registry) == []
        assert load_checked(tmp_path / "w.jsonl", registry=host.registry) == records
    with pytest.raises(ValueError, match="hand size must be 1 to 64, got 65"):
        Mode(name="wider", symbols=(1, 2), hand_size=65)
    with pytest.raises(ValueError, match="symbols must be 2 to 64 distinct ints"):
        Mode(name="wider", symbols=tuple(range(65)), hand_size=1)
