# ruff: noqa: F811  (pytest hands claude_tables's fixtures, imported below, in by name)
"""Claude seats on today's models (issue 24): the model table, the request shapes, adapting
to a refusal, and thinking kept as private reasoning in the log.

Every episode here goes through the real ``anthropic`` SDK over HTTP to the loopback
server, which answers by the API's rules for the request's model (``messages_server``):
it refuses a forced tool with thinking, and thinking types a model does not take, and
puts signed thinking blocks before the tool call.
"""

from __future__ import annotations

import json
import typing

import anthropic
import attrs
import pytest
from claude_tables import (  # noqa: F401
    FOUR_CLAUDES,
    api,
    gateway,
    moves,
    of,
    offline,
    tail,
    two_seat_table,
)
from messages_server import (
    FORCED_TOOL_WITH_THINKING,
    THOUGHT_MARKER,
    Answer,
    Fail,
    MessagesServer,
    made_up_thought,
    redacted,
    table_player,
    text,
    thought,
    tool_call,
)
from referee import replay
from structlog.testing import capture_logs

from arena.events import BidMade, Thought, Usage, from_record, to_line
from arena.league.config import league_from_mapping
from arena.runner import EpisodeRequest, SetupError, run_episode
from arena.seats import SeatSpec
from arena_plugins.claude.client import usage_of
from arena_plugins.claude.models import SHIPPED, UNKNOWN, shipped_rules
from arena_plugins.claude.settings import model_settings, parse_arg

pytestmark = pytest.mark.slow

# --- the shipped table, one case per model -----------------------------------------------
#
# From the API documentation (models overview, effort, thinking troubleshooting): Opus 4.7
# and later, Mythos Preview and the 5-series think adaptively and cannot be turned off,
# except Opus 5 (thinking "disabled", at effort high or lower), Sonnet 5.5 (off as
# "between_tools") and Haiku 5.5 (adaptive with effort); Opus 4.6 / Sonnet 4.6 take
# adaptive or no thinking; the 4.5 models take no adaptive thinking. Output limits: 128K
# for the 4.6 models and later, 64K for the 4.5 models. Effort: xhigh on Fable 5, Mythos 5,
# Opus 5, Opus 4.8, Opus 4.7 and Sonnet 5 (and their 5.x successors), max on those and on
# Mythos Preview and the 4.6 models; Opus 4.5 takes low..high; Sonnet 4.5 and Haiku 4.5 none.

ALL_EFFORTS = ("low", "medium", "high", "xhigh", "max")
NO_XHIGH = ("low", "medium", "high", "max")
EXPECTED = {
    "claude-mythos-5": (("adaptive",), 128_000, ALL_EFFORTS),
    "claude-mythos-preview": (("adaptive",), 128_000, NO_XHIGH),
    "claude-fable-5": (("adaptive",), 128_000, ALL_EFFORTS),
    "claude-opus-5-5": (("adaptive",), 128_000, ALL_EFFORTS),
    "claude-opus-5": (("adaptive", "off"), 128_000, ALL_EFFORTS),
    "claude-sonnet-5-5": (("adaptive", "off"), 128_000, ALL_EFFORTS),
    "claude-sonnet-5": (("adaptive",), 128_000, ALL_EFFORTS),
    "claude-haiku-5-5": (("adaptive", "off"), 128_000, NO_XHIGH),
    "claude-opus-4-8": (("adaptive",), 128_000, ALL_EFFORTS),
    "claude-opus-4-7": (("adaptive",), 128_000, ALL_EFFORTS),
    "claude-opus-4-6": (("adaptive", "off"), 128_000, NO_XHIGH),
    "claude-sonnet-4-6": (("adaptive", "off"), 128_000, NO_XHIGH),
    "claude-opus-4-5": (("off",), 64_000, ("low", "medium", "high")),
    "claude-sonnet-4-5": (("off",), 64_000, ()),
    "claude-haiku-4-5": (("off",), 64_000, ()),
}


def test_every_model_in_the_table_has_a_case():
    assert set(SHIPPED) == set(EXPECTED)


def test_every_model_the_sdk_lists_is_in_the_shipped_table():
    # The SDK's Model type lists 20 IDs (anthropic 2.15); each has a family in the table.
    listed = [m for m in typing.get_args(typing.get_args(anthropic.types.Model)[0])]
    assert len(listed) == 20
    assert [m for m in listed if shipped_rules(m).max_tokens is None] == []


@pytest.mark.parametrize("family", sorted(EXPECTED))
def test_a_model_takes_what_the_api_documents_for_it(family):
    thinking, max_output, efforts = EXPECTED[family]
    rules = shipped_rules(family)
    assert (rules.modes, rules.max_tokens, rules.efforts) == (thinking, max_output, efforts)
    # Its default: adaptive where the model takes it, else off.
    settings = model_settings({"model": family}, {})
    assert settings.thinking == ("adaptive" if "adaptive" in thinking else "off")
    # A dated ID is the same family.
    assert shipped_rules(f"{family}-20260416") == attrs.evolve(rules, model=f"{family}-20260416")


def test_the_longest_family_wins_and_an_unknown_model_gets_the_safe_shape():
    dated = shipped_rules("claude-opus-4-5-20251101")
    assert dated == attrs.evolve(SHIPPED["claude-opus-4-5"], model="claude-opus-4-5-20251101")
    assert shipped_rules("claude-fable-5-1") == attrs.evolve(
        SHIPPED["claude-fable-5"], model="claude-fable-5-1"
    )
    assert shipped_rules("claude-opus-4") == attrs.evolve(UNKNOWN, model="claude-opus-4")
    assert shipped_rules("claude-opus-4-70") == attrs.evolve(UNKNOWN, model="claude-opus-4-70")
    settings = model_settings({"model": "claude-next"}, {})
    assert (settings.thinking, settings.effort) == ("adaptive", None)


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("claude:honest?thinking=maybe", "thinking must be one of adaptive, off, got 'maybe'"),
        ("claude:honest?effort=extreme", "effort must be one of low, medium, high, xhigh, max"),
        (
            "claude:honest?model=claude-opus-4-7&thinking=off",
            "claude-opus-4-7 does not take thinking=off (allowed: adaptive)",
        ),
        (
            "claude:honest?model=claude-haiku-4-5&thinking=adaptive",
            "claude-haiku-4-5 does not take thinking=adaptive (allowed: off)",
        ),
        (
            "claude:honest?model=claude-opus-4-5&effort=max",
            "claude-opus-4-5 does not take effort=max (allowed: low, medium, high)",
        ),
        (
            "claude:honest?model=claude-haiku-4-5&effort=low",
            "claude-haiku-4-5 does not take effort=low (allowed: none: leave effort unset)",
        ),
        (
            "claude:honest?model=claude-sonnet-4-5&max_tokens=64001",
            "max_tokens must be <= 64000 for claude-sonnet-4-5, got 64001",
        ),
    ],
)
def test_a_setting_the_model_cannot_take_is_a_one_line_error(host, spec, fragment):
    request = EpisodeRequest(seats=2, deals=1, seat_specs=(SeatSpec.parse(spec),))
    with pytest.raises(SetupError) as caught:
        run_episode(host, request)
    assert fragment in str(caught.value) and "\n" not in str(caught.value)


def test_a_bad_environment_value_names_its_variable():
    with pytest.raises(ValueError, match="^ARENA_CLAUDE_EFFORT must be one of low, medium"):
        model_settings({}, {"ARENA_CLAUDE_EFFORT": "turbo"})
    with pytest.raises(ValueError, match="^ARENA_CLAUDE_THINKING must be one of adaptive, off"):
        model_settings({}, {"ARENA_CLAUDE_THINKING": "on"})


def test_thinking_and_effort_come_from_the_environment_unless_the_spec_says():
    env = {"ARENA_CLAUDE_THINKING": "off", "ARENA_CLAUDE_EFFORT": "medium"}
    settings = model_settings({"model": "claude-sonnet-4-6"}, env)
    # Off keeps the old default budget; adaptive's is 16000 (thinking shares max_tokens).
    assert (settings.thinking, settings.effort) == ("off", "medium")
    assert settings.request_max_tokens == 1024
    mine = model_settings({"model": "claude-sonnet-4-6", "thinking": "adaptive"}, env)
    assert (mine.thinking, mine.request_max_tokens) == ("adaptive", 16000)


def test_a_league_entrant_takes_the_same_settings_as_a_seat_spec(host):
    honest = {"seat": "claude", "policy": "honest", "model": "claude-sonnet-4-6"}
    entrants = {"honest": honest | {"thinking": "off", "effort": "low"}, "b": "bayes"}
    league = league_from_mapping({"entrants": entrants, "table": {"seats": 2}}, host.registry.seats)
    entrant, _ = league.entrants
    assert str(entrant.spec) == "claude:honest?model=claude-sonnet-4-6&thinking=off&effort=low"
    settings = model_settings(parse_arg(entrant.spec.arg).overrides, {})
    assert (settings.thinking, settings.effort) == ("off", "low")


# --- a model that always thinks ----------------------------------------------------------------


@pytest.fixture
def opus_4_7(monkeypatch):
    """The loopback API's legal player, and every Claude seat on claude-opus-4-7."""
    with MessagesServer(table_player(patience=lambda deal: 2 + deal % 3)) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ARENA_CLAUDE_MODEL", "claude-opus-4-7")
        yield server


def four_claudes(host, deals=6):
    specs = tuple(SeatSpec.parse(spec) for spec in FOUR_CLAUDES)
    return run_episode(host, EpisodeRequest(seed=3, deals=deals, talk=True, seat_specs=specs))


def decisions_of(records):
    return [r for r in records if r["type"] in ("bid", "challenge") and not r.get("forced")]


def test_four_seats_on_an_always_thinking_model_play_their_own_moves(host, opus_4_7):
    results, records = four_claudes(host)
    replay(records, results.to_json())
    assert results.status == "complete" and results.deals_played == 6
    # No refusal, no rule-11 failure: every decision is the seat's own.
    assert not of(records, "fault") and not of(records, "rejected")
    assert sum(seat.fallbacks for seat in results.seats) == 0
    decisions = decisions_of(records)
    assert len(opus_4_7.requests) == len(decisions)
    for sent in opus_4_7.requests:
        assert sent.json["thinking"] == {"type": "adaptive", "display": "summarized"}
        assert sent.json["tool_choice"]["type"] == "auto"
        assert sent.json["max_tokens"] == 16000


def test_every_thinking_block_is_on_its_decision_line(host, opus_4_7):
    _, records = four_claudes(host, deals=3)
    decisions = decisions_of(records)
    # The server made one thought per answer, marked with a digest of its request: the
    # n-th decision was the answer to the n-th request, so its line holds that thought.
    assert len(decisions) == len(opus_4_7.requests)
    for decision, sent in zip(decisions, opus_4_7.requests, strict=True):
        assert decision["thinking"] == [{"type": "thinking", "text": made_up_thought(sent.json)}]
    # A forced challenge asked nobody: no thinking on it.
    assert all("thinking" not in r for r in records if r.get("forced"))


def test_no_seat_s_thinking_reaches_any_request(host, opus_4_7):
    results, records = four_claudes(host)
    thoughts = [
        (decision["slot"], block["text"])
        for decision in decisions_of(records)
        for block in decision["thinking"]
    ]
    assert len({words for _, words in thoughts}) == len(thoughts) == len(opus_4_7.requests)
    assert {slot for slot, _ in thoughts} == {0, 1, 2, 3}
    marker = THOUGHT_MARKER.encode()
    for sent in opus_4_7.requests:
        # Not another seat's, not the same seat's earlier ones: no thought, in any encoding.
        assert marker not in sent.body and marker.decode() not in json.dumps(sent.json)
        for _, words in thoughts:
            assert words.encode() not in sent.body
        # One user message: no assistant turn, so no thinking block is ever sent back.
        assert [m["role"] for m in sent.json["messages"]] == ["user"]
        sent_types = {b["type"] for m in sent.json["messages"] for b in m["content"]}
        assert sent_types == {"text"}


def test_usage_counts_the_thinking_the_api_reported(host, api, monkeypatch):
    # The server bills a thought of b bytes as 8 + b // 4 thinking tokens (its rule),
    # plus 12 output tokens per other block: "x" * 400 is 8 + 100 = 108 thinking tokens,
    # and with the tool call 108 + 12 = 120 output tokens.
    monkeypatch.setenv("ARENA_CLAUDE_MODEL", "claude-opus-4-7")
    api.push(tool_call({"action": "bid", "quantity": 2, "face": 3}, thinking=(thought("x" * 400),)))
    claude, results, records = two_seat_table(host, claude_opens=True)
    first = of(records, "usage", claude)[0]
    assert (first["thinkingTokens"], first["outputTokens"]) == (108, 120)
    assert "cacheWrite1hTokens" not in first  # the prompt writes only 5-minute entries
    assert results.seats[claude].usage["thinkingTokens"] == sum(
        u["thinkingTokens"] for u in of(records, "usage", claude)
    )


# --- thinking as the API returns it --------------------------------------------------------------


def test_thinking_and_redacted_blocks_are_logged_in_order_without_the_encrypted_data(host, api):
    # Sonnet 4.6 (the default) thinks adaptively by default.
    secret = "EncryptedReasoningDataThatMustNotBeLogged=="
    api.push(
        tool_call(
            {"action": "bid", "quantity": 2, "face": 3},
            thinking=(thought("I hold two 3s."), redacted(secret), thought("So 2x3 is safe.")),
        )
    )
    claude, _, records = two_seat_table(host, claude_opens=True)
    first = moves(records, claude)[0]
    assert first["thinking"] == [
        {"type": "thinking", "text": "I hold two 3s."},
        {"type": "redacted"},
        {"type": "thinking", "text": "So 2x3 is safe."},
    ]
    assert secret not in json.dumps(list(records))


def test_a_rejected_reply_s_thinking_is_on_its_rejected_line_not_on_the_move(host, api):
    api.push(
        text("hmm", thinking=(thought("first try: I cannot decide"),)),
        tool_call({"action": "bid", "quantity": 2, "face": 3}, thinking=(thought("second"),)),
    )
    claude, results, records = two_seat_table(host, claude_opens=True)
    (rejected,) = of(records, "rejected", claude)
    assert rejected["thinking"] == [{"type": "thinking", "text": "first try: I cannot decide"}]
    # A reply with no tool call and no action in its text is rule 11's unparseable reply;
    # the retry carries the reason and asks for the tool again.
    assert rejected["reason"].startswith("unparseable reply 'hmm'")
    assert "rejected: unparseable reply 'hmm'" in tail(api.requests[1])
    assert "by calling the `act` tool" in tail(api.requests[1])
    first = moves(records, claude)[0]
    assert first["thinking"] == [{"type": "thinking", "text": "second"}]
    assert (results.seats[claude].rejected, results.seats[claude].fallbacks) == (1, 0)


def test_a_reply_that_only_thinks_is_an_empty_reply_and_asked_again(host, api):
    # Out of max_tokens before the tool call: thinking and nothing else.
    api.push(
        Answer((thought("Let me count every way the 3s could fall..."),), "max_tokens"),
        tool_call({"action": "bid", "quantity": 2, "face": 3}),
    )
    claude, results, records = two_seat_table(host, claude_opens=True)
    (rejected,) = of(records, "rejected", claude)
    assert rejected["reason"] == (
        "empty reply: no action named (expected 'bid Q F' or 'challenge')"
    )
    assert rejected["thinking"][0]["text"].startswith("Let me count")
    assert "rejected: empty reply" in tail(api.requests[1])
    assert moves(records, claude)[0]["fallback"] is False


def test_with_thinking_off_nothing_thinks_and_the_tool_is_forced(host, api):
    two_seat_table(host, claude_opens=True, spec="claude:honest?model=claude-haiku-4-5")
    claude, _, records = two_seat_table(
        host, claude_opens=True, spec="claude:honest?model=claude-sonnet-4-6&thinking=off"
    )
    for sent in api.requests:  # off is said: left out, the newer models think
        assert sent.json["thinking"] == {"type": "disabled"}
        assert sent.json["tool_choice"]["type"] == "tool"
    assert all("thinking" not in r for r in records)
    assert all("thinkingTokens" not in u for u in of(records, "usage"))
    assert moves(records, claude)[0]["fallback"] is False


# --- adapting once to the API's refusal: the last resort, offline ---------------------------


def test_a_model_that_must_think_refuses_thinking_off_and_the_seat_adapts_once(
    host, gateway, monkeypatch
):
    # No Models API here, and claude-mythos-6 is not in the shipped table: the safe shape.
    # The server (like the API for the Mythos line) takes no thinking "disabled": its 400.
    monkeypatch.setenv("ARENA_CLAUDE_MODEL", "claude-mythos-6")
    with capture_logs() as logs:
        claude, results, records = two_seat_table(
            host, claude_opens=True, spec="claude:honest?thinking=off"
        )
    api = gateway
    refused, *rest = api.requests
    assert refused.json["tool_choice"]["type"] == "tool"
    assert refused.json["thinking"] == {"type": "disabled"}
    assert rest and all(
        r.json["thinking"]["type"] == "adaptive" and r.json["tool_choice"]["type"] == "auto"
        for r in rest
    )
    # With max_tokens unset, the thinking default follows the mode: 1024 off, 16000 on.
    assert refused.json["max_tokens"] == 1024
    assert {r.json["max_tokens"] for r in rest} == {16000}
    (warning,) = [e for e in logs if e["event"] == "claude request shape adapted"]
    assert (warning["log_level"], warning["was"], warning["thinking"]) == (
        "warning",
        "off",
        "adaptive",
    )
    assert '"thinking.type.disabled" is not supported for this model.' in warning["reason"]
    # It played on: no fault, no fallback, its moves carry their thinking.
    assert not of(records, "fault") and results.seats[claude].fallbacks == 0
    assert all(m["thinking"] for m in moves(records, claude))


def test_a_model_without_adaptive_thinking_refuses_it_and_the_seat_turns_thinking_off(
    host, gateway, monkeypatch
):
    # Offline, an unknown model gets the safe shape; this one (the API's older Haiku) takes
    # no adaptive thinking, says so, and is asked again with thinking off and the tool forced.
    api = gateway
    monkeypatch.setenv("ARENA_CLAUDE_MODEL", "claude-3-5-haiku-20241022")
    monkeypatch.setenv("ARENA_CLAUDE_MAX_TOKENS", "2048")  # its output limit is 8192
    with capture_logs() as logs:
        claude, results, records = two_seat_table(host, claude_opens=True)
    refused, *rest = api.requests
    assert refused.json["thinking"]["type"] == "adaptive"
    assert rest and all(r.json["thinking"] == {"type": "disabled"} for r in rest)
    assert all(r.json["tool_choice"]["type"] == "tool" for r in rest)
    (warning,) = [e for e in logs if e["event"] == "claude request shape adapted"]
    assert '"thinking.type.adaptive" is not supported for this model.' in warning["reason"]
    assert not of(records, "fault") and results.seats[claude].fallbacks == 0


def test_the_seat_adapts_only_once_an_episode(host, api):
    # Sonnet 4.6 with thinking off, told first that it must think, then that it cannot:
    # the second refusal is a fault (rule 11's fallback for that decision), not a second
    # switch, and the seat plays on in the shape it took.
    api.push(
        Fail(400, "invalid_request_error", FORCED_TOOL_WITH_THINKING),
        Fail(400, "invalid_request_error", '"thinking.type.adaptive" is not supported.'),
    )
    with capture_logs() as logs:
        claude, results, records = two_seat_table(
            host, claude_opens=True, spec="claude:honest?thinking=off"
        )
    assert len([e for e in logs if e["event"] == "claude request shape adapted"]) == 1
    (fault,) = of(records, "fault", claude)
    assert fault["reason"].startswith("Claude API refused the request (not retried): HTTP 400")
    assert moves(records, claude)[0]["fallback"] is True
    later = api.requests[2:]
    assert later and all(r.json["thinking"]["type"] == "adaptive" for r in later)
    assert results.seats[claude].faults == 1


def test_a_400_about_something_else_is_a_fault_without_adapting(host, api):
    api.push(Fail(400, "invalid_request_error", "messages: at least one message is required"))
    with capture_logs() as logs:
        claude, _, records = two_seat_table(host, claude_opens=True)
    assert not [e for e in logs if e["event"] == "claude request shape adapted"]
    assert len(of(records, "fault", claude)) == 1


# --- the log's form ------------------------------------------------------------------------------


def test_a_decision_without_thinking_writes_the_line_it_always_did():
    # The bytes of a bid line from before thinking existed, written by hand.
    bid = BidMade(0, 2, 4, 6, None, None, None, False)
    assert to_line(bid) == (
        '{"type":"bid","deal":0,"slot":2,"quantity":4,"face":6,'
        '"say":null,"published":null,"notes":null,"fallback":false}'
    )
    usage = Usage(3, 1, 1840, 61, 1536, 0)
    assert to_line(usage) == (
        '{"type":"usage","deal":3,"slot":1,"inputTokens":1840,"outputTokens":61,'
        '"cacheReadTokens":1536,"cacheWriteTokens":0}'
    )


def test_thinking_and_the_usage_parts_round_trip_through_a_line():
    thinking = (Thought("thinking", "2x3 is a bluff"), Thought("redacted"))
    bid = BidMade(0, 2, 4, 6, None, None, None, False, thinking)
    line = to_line(bid)
    assert line.endswith(
        '"fallback":false,"thinking":[{"type":"thinking","text":"2x3 is a bluff"},'
        '{"type":"redacted"}]}'
    )
    assert from_record(json.loads(line)) == bid
    usage = Usage(0, 1, 10, 200, 0, 50, cache_write_1h_tokens=30, thinking_tokens=150)
    record = json.loads(to_line(usage))
    assert (record["cacheWrite1hTokens"], record["thinkingTokens"]) == (30, 150)
    assert from_record(record) == usage


@pytest.mark.parametrize(
    "thinking",
    [
        "plain text",
        [{"type": "thinking"}],  # no text
        [{"type": "redacted", "text": "leaked"}],  # a redacted block has no text
        [{"type": "thinking", "text": "x", "signature": "s"}],  # nothing else is kept
        [{"type": "musing", "text": "x"}],
        [["thinking", "x"]],
    ],
)
def test_a_malformed_thinking_value_is_refused_when_read(thinking):
    record = json.loads(to_line(BidMade(0, 2, 4, 6, None, None, None, False)))
    with pytest.raises(ValueError):
        from_record(record | {"thinking": thinking})


def test_usage_of_reads_the_one_hour_writes_and_the_thinking_tokens():
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-opus-4-7",
        "content": [],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 10,
            "output_tokens": 300,
            "cache_read_input_tokens": 5,
            "cache_creation_input_tokens": 70,
            "cache_creation": {
                "ephemeral_5m_input_tokens": 50,
                "ephemeral_1h_input_tokens": 20,
            },
            "output_tokens_details": {"thinking_tokens": 250},
        },
    }
    anthropic.types.Message.model_validate(message)  # the body is a Message as the API sends it
    assert usage_of(message) == {
        "input_tokens": 10,
        "output_tokens": 300,
        "cache_read_tokens": 5,
        "cache_write_tokens": 70,  # the total stays the total
        "cache_write_1h_tokens": 20,
        "thinking_tokens": 250,
    }
    bare = message | {"usage": {"input_tokens": 1, "output_tokens": 2}}
    anthropic.types.Message.model_validate(bare)
    assert usage_of(bare)["cache_write_1h_tokens"] == usage_of(bare)["thinking_tokens"] == 0


# --- the loopback API's own rules, as the API documents them --------------------------------

ADAPTIVE_ADVICE = (
    ' Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.'
)


@pytest.fixture
def sdk():
    """The real SDK against a server whose every answer is a challenge."""
    with MessagesServer(lambda body: tool_call({"action": "challenge"})) as server:
        yield (
            server,
            anthropic.Anthropic(api_key="test-key", base_url=server.url, max_retries=0, timeout=10),
        )


def ask(client, **overrides):
    request = {
        "max_tokens": 2000,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "your turn"}]}],
        "tools": [{"name": "act", "input_schema": {"type": "object"}}],
    }
    return client.messages.create(**(request | overrides))


FORCED = {"type": "tool", "name": "act"}


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        # Thinking with a forced tool, asked for or (on a model that always thinks) not.
        (
            {"model": "claude-sonnet-4-6", "thinking": {"type": "adaptive"}, "tool_choice": FORCED},
            "Thinking may not be enabled when tool_choice forces tool use.",
        ),
        (
            {"model": "claude-opus-4-7", "tool_choice": FORCED},
            "Thinking may not be enabled when tool_choice forces tool use.",
        ),
        (
            {"model": "claude-opus-4-7", "thinking": {"type": "enabled", "budget_tokens": 1024}},
            '"thinking.type.enabled" is not supported for this model.' + ADAPTIVE_ADVICE,
        ),
        (
            {"model": "claude-fable-5", "thinking": {"type": "disabled"}},
            '"thinking.type.disabled" is not supported for this model.' + ADAPTIVE_ADVICE,
        ),
        (
            {"model": "claude-haiku-4-5", "thinking": {"type": "adaptive"}},
            '"thinking.type.adaptive" is not supported for this model.',
        ),
        (
            {"model": "claude-haiku-4-5", "thinking": {"type": "enabled", "budget_tokens": 4000}},
            "`max_tokens` must be greater than `thinking.budget_tokens`.",
        ),
        (
            {"model": "claude-sonnet-4-5", "thinking": {"type": "enabled", "budget_tokens": 512}},
            "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024",
        ),
        (
            {"model": "claude-haiku-4-5", "max_tokens": 64001},
            "max_tokens: 64001 > 64000, which is the maximum allowed number of output tokens "
            "for claude-haiku-4-5",
        ),
    ],
)
def test_the_loopback_api_refuses_what_the_api_refuses(sdk, overrides, message):
    server, client = sdk
    with pytest.raises(anthropic.BadRequestError) as caught:
        ask(client, **overrides)
    assert caught.value.body["error"] == {"type": "invalid_request_error", "message": message}
    assert not server.script  # refused before any script item is spent


def test_the_loopback_api_takes_each_family_s_own_shape(sdk):
    _, client = sdk
    # Sonnet 4.6 with no thinking and the forced tool; Haiku 4.5 with a budget under
    # max_tokens; Opus 4.7 adaptive with the choice left to it.
    assert ask(client, model="claude-sonnet-4-6", tool_choice=FORCED).content[0].type == "tool_use"
    budgeted = ask(
        client, model="claude-haiku-4-5", thinking={"type": "enabled", "budget_tokens": 1024}
    )
    assert [b.type for b in budgeted.content] == ["thinking", "tool_use"]
    adaptive = ask(client, model="claude-opus-4-7", thinking={"type": "adaptive"})
    assert [b.type for b in adaptive.content] == ["thinking", "tool_use"]


def test_thinking_comes_first_signed_and_is_billed_as_output(sdk):
    server, client = sdk
    server.push(
        Answer(
            (
                {"type": "tool_use", "name": "act", "input": {"action": "challenge"}},
                thought("a" * 40),
                redacted("opaque"),
            ),
            "tool_use",
        )
    )
    reply = ask(
        client,
        model="claude-opus-4-7",
        thinking={"type": "adaptive", "display": "summarized"},
        messages=[
            {
                "role": "user",
                "content": [
                    {
                        "type": "text",
                        "text": "x" * 400,
                        "cache_control": {"type": "ephemeral", "ttl": "1h"},
                    }
                ],
            }
        ],
    )
    assert [b.type for b in reply.content] == ["thinking", "redacted_thinking", "tool_use"]
    assert reply.content[0].thinking == "a" * 40 and reply.content[0].signature
    assert reply.content[1].data == "opaque"
    # Thinking: 8 + 40 // 4 = 18 tokens, redacted 40: 58; the tool call 12 more: 70 output.
    usage = reply.usage
    assert (usage.output_tokens_details.thinking_tokens, usage.output_tokens) == (58, 70)
    # The one breakpoint is a 1-hour one: every write is a 1-hour write.
    assert usage.cache_creation.ephemeral_1h_input_tokens == usage.cache_creation_input_tokens
    assert usage.cache_creation.ephemeral_5m_input_tokens == 0
    assert usage.cache_creation_input_tokens > 0


def test_opus_4_7_omits_the_thinking_text_unless_asked_for_a_summary(sdk):
    _, client = sdk
    quiet = ask(client, model="claude-opus-4-7", thinking={"type": "adaptive"})
    assert quiet.content[0].type == "thinking" and quiet.content[0].thinking == ""
    assert quiet.usage.output_tokens_details.thinking_tokens > 8  # billed all the same
    shown = ask(client, model="claude-sonnet-4-6", thinking={"type": "adaptive"})
    assert shown.content[0].thinking.startswith(THOUGHT_MARKER)
    plain = ask(client, model="claude-sonnet-4-6")
    assert [b.type for b in plain.content] == ["tool_use"] and not plain.usage.output_tokens_details
