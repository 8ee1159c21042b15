"""What a Claude seat is shown (issue 3, part 2) and how the prompt is laid out for caching.

The prompt is built from the seat's own view only. These tests check every item
the seat must see on hand-worked positions, that hidden hands never reach it
before the reveal, and that each prompt extends the same seat's previous one.
"""

from __future__ import annotations

import json
import math
from itertools import pairwise

import attrs
from hypothesis import given
from plugins_for_tests.harness import make_view
from plugins_for_tests.hiding import DealtBy, swapped_tables
from plugins_for_tests.seats import MinRaiser

from arena import seeding
from arena.engine import Engine, EpisodeConfig
from arena.rules import TableRules
from arena.seats import SeatContext
from arena.view import PastDeal, PublicBid, TalkLine
from arena_plugins.claude.prompt import build_request
from arena_plugins.claude.settings import ModelSettings
from arena_plugins.dice import DICE
from arena_plugins.model_seat.prompt import SeatRecord
from arena_plugins.poker import POKER
from arena_plugins.scripted import bayes
from arena_plugins.wild import WILD
from arena_policies import resolve

POLICY = resolve("tracker")
SETTINGS = ModelSettings()
RULES = TableRules(mode=DICE, seats=4, max_bids=12)


def text_of(request: dict) -> tuple[str, str, str]:
    """(system, table record, turn tail) as plain text."""
    system = "".join(block["text"] for block in request["system"])
    blocks = request["messages"][0]["content"]
    return system, "".join(b["text"] for b in blocks[:-1]), blocks[-1]["text"]


def markers(request: dict) -> list[tuple[str, int]]:
    found = [("system", i) for i, b in enumerate(request["system"]) if "cache_control" in b]
    content = request["messages"][0]["content"]
    return found + [("messages", i) for i, b in enumerate(content) if "cache_control" in b]


# --- a hand-worked position ---------------------------------------------------------------
#
# Four seats, table order s3 s1 s2 s0; we are s2 in deal 1, opened by s1 (position 1).
# Deal 0 (opened by s3): s3 bid 2 x 4, s1 raised to 3 x 4, s2 challenged. Fours in the
# hands: s0 none, s1 one, s2 one, s3 none: 2 < 3, so the bid was false: s2 +1, s1 -1.
# Deal 1 so far: s1 3 x 6, s2 (us) 4 x 2, s0 5 x 2. The lowest raise of 5 x 2 is 5 x 3.

PAST = PastDeal(
    deal=0,
    opener=3,
    bids=(PublicBid(3, 2, 4), PublicBid(1, 3, 4)),
    challenger=2,
    forced=False,
    actual=2,
    hands=((1, 1, 1, 1, 1), (4, 2, 2, 2, 2), (4, 5, 5, 5, 5), (3, 3, 3, 3, 3)),
    winner=2,
    loser=1,
)
VIEW = attrs.evolve(
    make_view(RULES, (6, 6, 2, 3, 1), [(1, 3, 6), (2, 4, 2), (0, 5, 2)], slot=2, deal=1),
    table_order=(3, 1, 2, 0),
    opener=1,
    history=(PAST,),
    talk=(TalkLine(1, '"six is my face"'),),
    talk_enabled=True,
    notes="s1 bluffs fours",
    notes_truncated=True,
    retry_reason="bid 5x2 does not raise the standing bid 5x2",
)


DICE4 = TableRules(mode=DICE, seats=4)  # the default cap, as the engine would build it


def prompt_after(past: PastDeal) -> str:
    view = attrs.evolve(make_view(DICE4, (1, 2, 3, 4, 5), slot=0, deal=1), history=(past,))
    _, record, _ = text_of(build_request(view, DICE4, POLICY, SETTINGS))
    return record


def test_a_bid_whose_count_equals_its_quantity_is_reported_true():
    # s1 bid 3 x 4 and s0 challenged; the hands hold exactly three 4s (s1 two, s3 one).
    # Rule 6: actual 3 >= quantity 3, so the bid was true: s1 +1, s0 -1.
    hands = ((1, 2, 3, 5, 6), (4, 4, 1, 1, 2), (6, 6, 5, 5, 2), (4, 3, 3, 2, 1))
    past = PastDeal(0, 1, (PublicBid(1, 3, 4),), 0, False, 3, hands, winner=1, loser=0)
    record = prompt_after(past)
    assert "face 4 showed 3 times, the bid was true; s1 +1, s0 (you) -1" in record
    # ... and one fewer is a lie.
    lie = attrs.evolve(past, bids=(PublicBid(1, 4, 4),), winner=0, loser=1)
    assert "face 4 showed 3 times, the bid was false; s0 (you) +1, s1 -1" in prompt_after(lie)


def test_a_seats_own_talk_stays_in_its_prompt():
    view = attrs.evolve(
        make_view(DICE4, (1, 2, 3, 4, 5), [(3, 2, 4), (0, 3, 4)], slot=1),
        talk_enabled=True,
        talk=(TalkLine(3, "fours everywhere"), TalkLine(1, "I hold none")),
    )
    _, _, tail = text_of(build_request(view, DICE4, POLICY, SETTINGS))
    assert "s3: fours everywhere" in tail
    assert "s1 (you): I hold none" in tail


def test_the_poker_odds_table_is_the_binomial_tail_at_p_one_tenth():
    # Four seats of 8 digits: 24 unseen, each showing a given digit with p = 1/10.
    # P(X >= k) = 1 - sum_{i<k} C(24, i) (1/10)^i (9/10)^(24-i):
    # k=1: 1 - 0.9^24 = 0.92023;  k=2: 0.92023 - 24 (0.1) 0.9^23 = 0.70752;
    # k=3: 0.70752 - 276 (0.01) 0.9^22 = 0.43573.
    rules = TableRules(mode=POKER, seats=4)
    view = make_view(rules, (0, 7, 3, 3, 0, 9, 1, 2))
    system, _, _ = text_of(build_request(view, rules, POLICY, SETTINGS))

    def tail(k: int) -> float:
        return 1 - sum(math.comb(24, i) * 0.1**i * 0.9 ** (24 - i) for i in range(k))

    assert f"1: {tail(1):.1%}, 2: {tail(2):.1%}, 3: {tail(3):.1%}" in system
    assert "1: 92.0%, 2: 70.8%, 3: 43.6%" in system


def test_the_prompt_shows_everything_the_seat_may_know():
    system, record, tail = text_of(build_request(VIEW, RULES, POLICY, SETTINGS))
    # Its policy and the rules in brief, with its slot and the table order.
    assert POLICY.prompt in system
    assert "4 seats: s0, s1, s2 (you), s3" in system
    assert "faces are 1 to 6" in system
    assert "table order, wrapping: s3 -> s1 -> s2 (you) -> s0" in system
    assert "(1 <= quantity <= 20)" in system
    assert "After 12 bids in a deal" in system
    assert "You are s2." in system
    # The previous deal in full: bids, challenger, count, every hand, points moved.
    assert "## Deal 0: opener s3, your hand [4 5 5 5 5]\n" in record
    assert "s3 bids quantity 2, face 4\ns1 bids quantity 3, face 4\n" in record
    assert "s2 (you) challenged s1: face 4 showed 2 times, the bid was false; " in record
    assert "s2 (you) +1, s1 -1." in record
    assert "Hands: s0 [1 1 1 1 1], s1 [4 2 2 2 2], s2 (you) [4 5 5 5 5], s3 [3 3 3 3 3]" in record
    assert "Points: s0 +0, s1 -1, s2 (you) +1, s3 +0." in record
    # This deal: opener, own hand, the bids in order with who made each.
    assert record.endswith(
        "## Deal 1: opener s1, your hand [6 6 2 3 1]\n"
        "s1 bids quantity 3, face 6\n"
        "s2 (you) bids quantity 4, face 2\n"
        "s0 bids quantity 5, face 2\n"
    )
    # The turn: standing bid, talk with its speaker, notes, legal actions, retry reason.
    assert "Standing bid: quantity 5, face 2 by s0 (bid 3 of at most 12)." in tail
    assert 's1: "six is my face"' in tail
    assert "<notes>\ns1 bluffs fours\n</notes>" in tail
    assert "cut to 4000 characters" in tail
    assert "lowest bid quantity 5, face 3; quantity up to 20" in tail
    assert "challenge or bid" in tail
    assert "rejected: bid 5x2 does not raise the standing bid 5x2" in tail


def test_an_opening_turn_says_a_challenge_is_not_allowed():
    view = make_view(RULES, (1, 2, 3, 4, 5))
    _, _, tail = text_of(build_request(view, RULES, POLICY, SETTINGS))
    assert "No standing bid: you open." in tail
    assert "you must bid; lowest bid quantity 1, face 1" in tail
    assert "Your notes: none yet." in tail
    assert "rejected" not in tail


def test_when_no_bid_can_raise_the_seat_is_told_to_challenge():
    view = make_view(RULES, (6, 6, 6, 6, 6), [(1, 20, 6)])  # 20 x 6: nothing is higher
    assert view.legal.min_bid is None
    _, _, tail = text_of(build_request(view, RULES, POLICY, SETTINGS))
    assert "no bid can raise the standing bid; you must challenge" in tail


def test_a_forced_challenge_is_marked_in_the_history():
    forced = attrs.evolve(PAST, forced=True)
    view = attrs.evolve(VIEW, history=(forced,))
    _, record, _ = text_of(build_request(view, RULES, POLICY, SETTINGS))
    assert "s2 (you) was forced (bid cap) to challenge s1:" in record


def test_poker_hands_are_shown_as_digits():
    rules = TableRules(mode=POKER, seats=4)
    view = make_view(rules, (0, 7, 3, 3, 0, 9, 1, 2))
    system, record, _ = text_of(build_request(view, rules, POLICY, SETTINGS))
    assert "your hand [07330912]" in record
    assert "faces are 0 to 9" in system
    assert "(1 <= quantity <= 32)" in system


def test_the_odds_table_is_the_exact_binomial_tail():
    system, _, _ = text_of(build_request(VIEW, RULES, POLICY, SETTINGS))
    # 15 unseen dice, p = 1/6: P(X >= 1) = 1 - (5/6)^15 = 0.93509...; P(X >= 3) = 0.46774...
    assert "1: 93.5%" in system and "3: 46.8%" in system


def test_wild_rules_state_the_counting_the_conversions_and_each_faces_odds():
    rules = TableRules(mode=WILD, seats=4)
    view = attrs.evolve(make_view(rules, (1, 4, 4, 2, 3)), wild=1, raise_rule="wild-ones")
    system, _, _ = text_of(build_request(view, rules, POLICY, SETTINGS))
    assert "1 is wild: a 1 also counts toward every other face, except in a bid on 1" in system
    assert "No face is wild" not in system
    assert "Switching to 1 may halve the quantity, rounded up" in system
    assert "switching away from 1 needs double plus one" in system
    # 15 unseen dice. Faces 2-6 at p = 1/3: P(X >= 5) = 0.5959...; ones at p = 1/6:
    # P(X >= 1) = 1 - (5/6)^15 = 0.93509...
    assert "For faces 2, 3, 4, 5, 6 it is 1/3." in system and "5: 59.6%" in system
    assert "For face 1 it is 1/6." in system and "1: 93.5%" in system


def test_talk_off_leaves_talk_out_of_rules_tail_and_tool():
    view = attrs.evolve(VIEW, talk_enabled=False, talk=())
    request = build_request(view, RULES, POLICY, SETTINGS)
    system, _, tail = text_of(request)
    assert "`say`" not in system and "Talk this deal" not in tail
    assert "say" not in request["tools"][0]["input_schema"]["properties"]


# --- the request's shape ----------------------------------------------------------------


def test_one_forced_tool_whose_schema_names_nothing_but_the_reply_fields():
    request = build_request(VIEW, RULES, POLICY, SETTINGS)
    (tool,) = request["tools"]
    assert request["tool_choice"] == {
        "type": "tool",
        "name": tool["name"],
        "disable_parallel_tool_use": True,
    }
    schema = tool["input_schema"]
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["action"]
    assert set(schema["properties"]) == {"action", "quantity", "face", "say", "notes"}
    assert schema["properties"]["action"]["enum"] == ["bid", "challenge"]
    assert schema["properties"]["face"]["enum"] == [1, 2, 3, 4, 5, 6]
    assert schema["properties"]["quantity"]["maximum"] == 20
    # no maxLength, which crashes llama-cpp-python's grammar builder: the cap is in words
    assert "maxLength" not in schema["properties"]["notes"]
    assert "At most 4000 characters are kept." in schema["properties"]["notes"]["description"]


def test_a_thinking_request_offers_the_tool_and_asks_for_it_without_forcing_it():
    # A forced tool with thinking is the API's 400, so the choice is the model's ("auto"),
    # the rules ask for the call, and the reasoning's text is asked for (Opus 4.7 and
    # later omit it unless display says "summarized").
    settings = ModelSettings(thinking="adaptive", effort="low", max_tokens=16000)
    request = build_request(VIEW, RULES, POLICY, settings)
    assert request["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}
    assert request["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert request["output_config"] == {"effort": "low"}
    system, _, tail = text_of(request)
    assert "Reply by calling the `act` tool exactly once." in system
    assert "Reply again with one legal action, by calling the `act` tool." in tail


def test_with_thinking_off_the_request_says_disabled_and_sends_no_effort_unless_set():
    # Leaving thinking out thinks on the newer models, so off is said, and forces the tool.
    request = build_request(VIEW, RULES, POLICY, ModelSettings(thinking="off"))
    assert request["thinking"] == {"type": "disabled"} and "output_config" not in request
    assert request["tool_choice"]["type"] == "tool"
    steady = build_request(VIEW, RULES, POLICY, ModelSettings(thinking="off", effort="high"))
    assert steady["output_config"] == {"effort": "high"}


def test_a_model_that_turns_thinking_off_between_tools_is_not_forced():
    settings = ModelSettings(thinking="off", off_type="between_tools")
    request = build_request(VIEW, RULES, POLICY, settings)
    assert request["thinking"] == {"type": "between_tools"}
    assert request["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}


def test_a_strict_tool_keeps_its_bounds_only_in_words():
    # A strict schema may not say minimum, maximum or maxLength (the structured outputs
    # page); the SDK's transform moves them into the descriptions.
    tool = build_request(VIEW, RULES, POLICY, ModelSettings(strict=True))["tools"][0]
    assert tool["strict"] is True
    quantity = tool["input_schema"]["properties"]["quantity"]
    assert "maximum" not in quantity and "{minimum: 1, maximum: 20}" in quantity["description"]
    assert "maxLength" not in tool["input_schema"]["properties"]["notes"]
    plain = build_request(VIEW, RULES, POLICY, SETTINGS)["tools"][0]
    assert (
        "strict" not in plain and plain["input_schema"]["properties"]["quantity"]["maximum"] == 20
    )


def test_two_cache_breakpoints_end_of_system_and_end_of_the_record():
    request = build_request(VIEW, RULES, POLICY, SETTINGS)
    content = request["messages"][0]["content"]
    # A seat's first request: the record is one block, marked, and the turn follows it.
    assert len(content) == 2
    assert markers(request) == [("system", 1), ("messages", 0)]
    assert content[0]["text"].endswith("s0 bids quantity 5, face 2\n")


def test_a_kept_record_goes_as_the_pieces_it_grew_by_marked_on_the_last():
    """The same seat asked again after one more bid (s1 5 x 3): the first request's record
    block again, then one block with the one new line, which carries the breakpoint."""
    kept = SeatRecord()
    before = build_request(VIEW, RULES, POLICY, SETTINGS, kept)["messages"][0]["content"]
    later = attrs.evolve(
        make_view(
            RULES, (6, 6, 2, 3, 1), [(1, 3, 6), (2, 4, 2), (0, 5, 2), (1, 5, 3)], slot=2, deal=1
        ),
        table_order=(3, 1, 2, 0),
        opener=1,
        history=(PAST,),
    )
    request = build_request(later, RULES, POLICY, SETTINGS, kept)
    content = request["messages"][0]["content"]
    assert markers(request) == [("system", 1), ("messages", 1)]
    assert content[0] == {"type": "text", "text": before[0]["text"]}
    assert content[1] == {
        "type": "text",
        "text": "s1 bids quantity 5, face 3\n",
        "cache_control": {"type": "ephemeral"},
    }


def test_model_and_max_tokens_come_from_the_settings_and_no_sampling_parameter_is_sent():
    request = build_request(VIEW, RULES, POLICY, ModelSettings(model="m-1", max_tokens=77))
    assert (request["model"], request["max_tokens"]) == ("m-1", 77)
    assert not {"temperature", "top_p", "top_k", "extra_body"} & set(request)


def test_a_default_max_tokens_stays_within_the_model_s_limit():
    # Thinking's default budget is 16000; a model whose limit is 8192 gets 8192.
    settings = ModelSettings(thinking="adaptive", limit=8192)
    assert build_request(VIEW, RULES, POLICY, settings)["max_tokens"] == 8192
    assert ModelSettings(thinking="off", limit=8192).request_max_tokens == 1024


# --- through the engine ---------------------------------------------------------------------


class PromptRecorder:
    """Records the request a Claude seat would send, then plays a hand-blind min-raise with
    talk and notes (so every public fact is the same whatever the hidden hands are)."""

    def __init__(self, rules: TableRules):
        self.rules = rules
        self.inner = MinRaiser()
        self.requests: list[dict] = []
        self.record = SeatRecord()

    def decide(self, view):
        self.requests.append(build_request(view, self.rules, POLICY, SETTINGS, self.record))
        action = self.inner.decide(view)
        turn = len(self.requests)
        return attrs.evolve(action, say=f"turn {turn}", notes=f"notes after turn {turn}")


def play_recorded(mode, seats, seed, deals, max_bids, observer, swaps, talk=True):
    """The observer's prompts with hand-blind seats elsewhere; ``swaps`` replaces hands."""
    dealt = attrs.evolve(mode, draw=DealtBy(seats, swaps))
    rules = TableRules(mode=dealt, seats=seats, max_bids=max_bids)
    config = EpisodeConfig(rules=rules, seed=seed, deals=deals, talk=talk)
    table = [PromptRecorder(rules) for _ in range(seats)]
    fallbacks = [
        bayes(SeatContext.derive(seed, slot, rules, seeding.FALLBACK)) for slot in range(seats)
    ]
    Engine(config, table, ["claude"] * seats, fallbacks, lambda event: None).play()
    return [json.dumps(r, sort_keys=True) for r in table[observer].requests]


@given(swapped_tables(max_seats=6))
def test_a_seats_prompt_is_unchanged_when_other_hidden_hands_change(table):
    """Information hiding, at the prompt: before the reveal, the other seats' hands of the
    deal in play may be anything; the observer's prompts are the same bytes."""
    mode, seats, seed, deals, max_bids, observer, swaps = table
    plain = play_recorded(mode, seats, seed, deals, max_bids, observer, {})
    swapped = play_recorded(mode, seats, seed, deals, max_bids, observer, swaps)
    assert swapped == plain


def test_after_the_reveal_the_prompt_does_show_the_other_hands():
    """The check above can fail: a hand swapped in deal 0 shows in every deal-1 prompt."""
    swaps = {(0, 1): (6, 6, 6, 6, 6)}
    plain = play_recorded(DICE, 2, 11, 2, 4, 0, {})
    swapped = play_recorded(DICE, 2, 11, 2, 4, 0, swaps)
    deal_1 = [i for i, p in enumerate(plain) if "# Your turn (deal 1," in p]
    assert deal_1 and all(plain[i] != swapped[i] for i in deal_1)
    assert all("s1 [6 6 6 6 6]" in swapped[i] for i in deal_1)


def test_each_prompt_extends_the_same_seats_previous_one():
    """The cache layout: tools and system never change within an episode, and the previous
    prompt's record (every block up to its breakpoint) is a block-for-block prefix of the
    next prompt's record, one block before the next breakpoint, so the API finds the
    cached prefix at a block boundary well within its 20-block lookback."""
    seats, deals = 4, 12
    rules = TableRules(mode=DICE, seats=seats, max_bids=6)
    config = EpisodeConfig(rules=rules, seed=5, deals=deals, talk=True)
    table = [PromptRecorder(rules) for _ in range(seats)]
    fallbacks = [bayes(SeatContext.derive(5, s, rules, seeding.FALLBACK)) for s in range(seats)]
    Engine(config, table, ["claude"] * seats, fallbacks, lambda event: None).play()
    for seat in table:
        assert len(seat.requests) >= deals
        for before, after in pairwise(seat.requests):
            assert after["tools"] == before["tools"]
            assert after["system"] == before["system"]
            old = [dict(b) for b in before["messages"][0]["content"][:-1]]
            new = [dict(b) for b in after["messages"][0]["content"][:-1]]
            assert old[-1].pop("cache_control") == {"type": "ephemeral"}
            assert new[-1].pop("cache_control") == {"type": "ephemeral"}
            assert new[: len(old)] == old and len(new) == len(old) + 1
        # One block per request, where a block a line would have sent several a request.
        record = "".join(b["text"] for b in seat.requests[-1]["messages"][0]["content"][:-1])
        assert len(seat.requests[-1]["messages"][0]["content"]) - 1 == len(seat.requests)
        assert record.count("\n") > 2 * len(seat.requests)
