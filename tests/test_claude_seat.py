# ruff: noqa: F811  (pytest hands claude_tables's fixtures, imported below, in by name)
"""The Claude seat over the real ``anthropic`` SDK and real HTTP, against a loopback server.

Each case scripts what the Messages API answers and asserts what the event log
and the results show: the move, rule 11's rejections and fallback, faults,
token usage. Every request goes to 127.0.0.1 (see ``messages_server``); with no
server in a test, the base URL points at a closed loopback port and no API key
is set, so nothing can leave the machine.
"""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request

import pytest
from claude_tables import api, moves, of, offline, tail, tail_of, two_seat_table  # noqa: F401
from messages_server import Fail, Hang, MessagesServer, text, tool_call, tool_calls

from arena import seeding
from arena.limits import LIMITER
from arena.runner import EpisodeRequest, SetupError, run_episode
from arena.seats import SeatSpec
from arena_plugins.claude.settings import DEFAULT_MODEL
from arena_plugins.model_seat import bounded
from arena_plugins.model_seat.retries import endpoint_at, retry_after

pytestmark = pytest.mark.slow

# --- replies that are moves ------------------------------------------------------------------


def test_a_legal_tool_call_is_the_seats_move(host, api):
    api.push(tool_call({"action": "bid", "quantity": 2, "face": 3, "notes": "opened 2x3"}))
    claude, results, records = two_seat_table(host, claude_opens=True)
    first = moves(records, claude)[0]
    assert (first["type"], first["quantity"], first["face"]) == ("bid", 2, 3)
    assert first["fallback"] is False and first["notes"] == "opened 2x3"
    assert not of(records, "rejected") and not of(records, "fault")
    # The request went through the SDK to us: the key, the default model, which thinks
    # (Sonnet 4.6 takes adaptive thinking) and so leaves the tool call to the model.
    sent = api.requests[0]
    bearer = sent.headers.get("authorization", "").removeprefix("Bearer ")
    assert "test-key" in (sent.headers.get("x-api-key"), bearer)
    assert sent.json["model"] == DEFAULT_MODEL
    assert sent.json["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert sent.json["tool_choice"]["type"] == "auto"
    # One usage event per call; the first call writes the cache and reads nothing.
    usage = of(records, "usage", claude)
    assert len(usage) == len(api.requests)
    assert usage[0]["cacheReadTokens"] == 0 and usage[0]["cacheWriteTokens"] > 0
    seat = results.seats[claude]
    assert seat.usage["calls"] == len(api.requests)
    assert seat.usage["inputTokens"] == sum(u["inputTokens"] for u in usage)


def test_requests_carry_nothing_of_the_host(host, api):
    """The SDK's telemetry (the host's OS, architecture and Python version, the SDK's
    version, the attempt and its timeouts) is omitted from every request, a retry's too."""
    api.push(Fail(429, "rate_limit_error", "slow down", retry_after="0"))
    api.push(tool_call({"action": "bid", "quantity": 2, "face": 3}))
    two_seat_table(host, claude_opens=True)
    assert len(api.requests) >= 2  # the 429's request and its retry at least
    for sent in api.requests:
        assert not sent.host_facts(), sent.headers
        assert {"anthropic-version", "content-type", "user-agent"} <= set(sent.headers)


@pytest.mark.parametrize(
    ("reply", "quantity", "face"),
    [
        ("Let me count my dice.\nbid 2 3", 2, 3),
        ('I will go with {"action": "bid", "quantity": 3, "face": 4} this time.', 3, 4),
    ],
)
def test_a_text_reply_is_read_as_a_fallback(host, api, reply, quantity, face):
    api.push(text(reply))
    claude, results, records = two_seat_table(host, claude_opens=True)
    first = moves(records, claude)[0]
    assert (first["quantity"], first["face"], first["fallback"]) == (quantity, face, False)
    assert results.seats[claude].rejected == 0


def test_garbage_is_rejected_with_its_reason_and_the_retry_shows_it(host, api):
    api.push(
        text("the moon is made of cheese"), tool_call({"action": "bid", "quantity": 2, "face": 3})
    )
    claude, results, records = two_seat_table(host, claude_opens=True)
    (rejected,) = of(records, "rejected", claude)
    assert "unparseable reply" in rejected["reason"]
    assert rejected["reply"] == "the moon is made of cheese"
    assert "Your previous reply was rejected: unparseable reply" in tail(api.requests[1])
    assert "rejected" not in tail(api.requests[0])
    first = moves(records, claude)[0]
    assert (first["quantity"], first["face"], first["fallback"]) == (2, 3, False)
    assert (results.seats[claude].rejected, results.seats[claude].fallbacks) == (1, 0)


def test_an_illegal_raise_then_a_legal_one(host, api):
    def repeat_the_standing_bid_then_challenge(body):
        standing = re.search(r"Standing bid: quantity (\d+), face (\d+)", tail_of(body))
        if len(api.requests) == 1:
            return tool_call(
                {"action": "bid", "quantity": int(standing[1]), "face": int(standing[2])}
            )
        return tool_call({"action": "challenge"})

    api.responder = repeat_the_standing_bid_then_challenge
    claude, results, records = two_seat_table(host, claude_opens=False)
    opening = of(records, "bid")[0]
    (rejected,) = of(records, "rejected", claude)
    # Rule 4: an equal bid does not raise.
    q, f = opening["quantity"], opening["face"]
    assert f"does not raise the standing bid {q}x{f}" in rejected["reason"]
    assert rejected["reply"] == {"action": "bid", "quantity": q, "face": f}
    assert "does not raise" in tail(api.requests[1])
    (challenge,) = of(records, "challenge")
    assert (challenge["slot"], challenge["fallback"], challenge["forced"]) == (claude, False, False)


def test_two_illegal_replies_go_to_the_bayes_fallback(host, api):
    api.push(
        tool_call({"action": "challenge"}),  # rule 3: nothing to challenge yet
        tool_call({"action": "bid", "quantity": 11, "face": 3}),  # 2 seats x 5 dice: max 10
    )
    claude, results, records = two_seat_table(host, claude_opens=True)
    reasons = [r["reason"] for r in of(records, "rejected", claude)]
    assert len(reasons) == 2
    assert "challenge with no standing bid" in reasons[0]
    assert "quantity 11 is out of range 1..10" in reasons[1]
    first = moves(records, claude)[0]
    assert first["fallback"] is True and first["say"] is None and first["notes"] is None
    seat = results.seats[claude]
    assert (seat.rejected, seat.fallbacks, seat.faults) == (2, 1, 0)


def test_several_tool_calls_in_one_reply_are_one_illegal_reply(host, api):
    api.push(
        tool_calls(
            {"action": "bid", "quantity": 1, "face": 2}, {"action": "bid", "quantity": 2, "face": 2}
        ),
        tool_call({"action": "bid", "quantity": 1, "face": 2}),
    )
    claude, _, records = two_seat_table(host, claude_opens=True)
    (rejected,) = of(records, "rejected", claude)
    assert rejected["reason"] == "2 actions in one reply: exactly one is allowed"


# --- a reply that reaches beyond its own seat --------------------------------------------------


def test_a_reply_cannot_bid_for_another_seat(host, api):
    order = seeding.table_order(0, 2)
    other = order[1]
    api.push(
        tool_call({"action": "bid", "quantity": 2, "face": 3, "seat": other}),
        tool_call({"action": "bid", "quantity": 2, "face": 3}),
    )
    claude, _, records = two_seat_table(host, claude_opens=True)
    (rejected,) = of(records, "rejected", claude)
    assert rejected["reason"].startswith("unknown field seat:")
    assert rejected["reply"]["seat"] == other
    first_bid = of(records, "bid")[0]
    assert (first_bid["slot"], first_bid["quantity"], first_bid["face"]) == (claude, 2, 3)


def test_a_reply_cannot_claim_another_seats_hand(host, api):
    order = seeding.table_order(0, 2)
    other = order[0]  # bayes opens, Claude answers
    claim = f"s{other} holds 6 6 6 6 6, I saw it"
    api.push(
        tool_call({"action": "challenge", "hands": {str(other): [6, 6, 6, 6, 6]}}),
        tool_call({"action": "challenge", "say": claim}),
    )
    claude, _, records = two_seat_table(host, claude_opens=False, talk=True)
    (rejected,) = of(records, "rejected", claude)
    assert rejected["reason"].startswith("unknown field hands:")
    (challenge,) = of(records, "challenge")
    assert challenge["slot"] == claude
    # The count is the real one, from the hands dealt; the claim is only quoted talk.
    (deal,) = of(records, "deal")
    real = sum(hand.count(challenge["face"]) for hand in deal["hands"])
    assert challenge["actual"] == real
    assert challenge["say"] == claim and challenge["published"] == json.dumps(claim)


# --- transient API faults -----------------------------------------------------------------------


def test_429_with_retry_after_is_waited_then_retried(host, api):
    api.push(
        Fail(429, "rate_limit_error", "slow down", retry_after="1"),
        tool_call({"action": "bid", "quantity": 2, "face": 3}),
    )
    claude, results, records = two_seat_table(host, claude_opens=True)
    first, second = api.requests[:2]
    assert second.arrived - first.arrived >= 1.0  # the server asked for one second
    assert second.json == first.json  # the same request, sent again
    assert not of(records, "fault") and not of(records, "rejected")
    assert moves(records, claude)[0]["fallback"] is False


def test_529_overloaded_is_retried_until_it_answers(host, api):
    api.push(
        Fail(529, "overloaded_error", "Overloaded"),
        Fail(529, "overloaded_error", "Overloaded"),
        tool_call({"action": "bid", "quantity": 2, "face": 3}),
    )
    claude, results, records = two_seat_table(host, claude_opens=True)
    assert [r.json for r in api.requests[:3]] == [api.requests[0].json] * 3
    assert not of(records, "fault")
    first = moves(records, claude)[0]
    assert (first["quantity"], first["fallback"]) == (2, False)


def test_500_past_the_attempt_bound_is_a_fault_and_the_fallback_plays(host, api):
    api.push(*[Fail(500, "api_error", "Internal server error")] * 3)
    claude, results, records = two_seat_table(host, claude_opens=True)
    (fault,) = of(records, "fault", claude)
    assert fault["reason"] == (
        "Claude API unavailable after 3 attempts: HTTP 500 api_error: Internal server error"
    )
    assert not of(records, "rejected")  # a fault is not an illegal move: no retry with reason
    assert moves(records, claude)[0]["fallback"] is True
    seat = results.seats[claude]
    assert (seat.faults, seat.rejected, seat.fallbacks) == (1, 0, 1)
    assert results.status == "complete"  # and the episode went on
    assert all("rejected" not in tail(r) for r in api.requests)


def test_a_hang_past_the_client_timeout_is_a_fault(host, api, monkeypatch):
    monkeypatch.setenv("ARENA_CLAUDE_TIMEOUT", "0.3")
    monkeypatch.setenv("ARENA_CLAUDE_RETRY_ATTEMPTS", "2")
    api.push(Hang(30), Hang(30))
    claude, results, records = two_seat_table(host, claude_opens=True)
    (fault,) = of(records, "fault", claude)
    assert fault["reason"] == (
        "Claude API unavailable after 2 attempts: no whole reply within the call's 0.3 s deadline"
    )
    assert moves(records, claude)[0]["fallback"] is True
    assert results.status == "complete"


def test_a_hang_is_the_calls_deadline_even_when_the_seat_wakes_late(host, api, monkeypatch):
    """The client's own timeout runs past the call's bound, so a seat that wakes late from
    its wait still finds the call unanswered and names the bound: the fault line does not
    depend on which of two timers fired first. (With both at 0.3 s the client's timeout
    answered first here, as "request timed out".)"""
    monkeypatch.setenv("ARENA_CLAUDE_TIMEOUT", "0.3")
    monkeypatch.setenv("ARENA_CLAUDE_RETRY_ATTEMPTS", "2")
    wait = bounded._Job.wait

    def late(self, seconds):
        """A seat's wait for its call that wakes 0.2 s late, as on a loaded machine."""
        if wait(self, seconds):
            return True
        time.sleep(0.2)
        return wait(self, 0)

    monkeypatch.setattr(bounded._Job, "wait", late)
    api.push(Hang(30), Hang(30))
    claude, _, records = two_seat_table(host, claude_opens=True)
    (fault,) = of(records, "fault", claude)
    assert fault["reason"] == (
        "Claude API unavailable after 2 attempts: no whole reply within the call's 0.3 s deadline"
    )


def test_a_retry_after_beyond_the_time_bound_is_not_waited(host, api, monkeypatch):
    monkeypatch.setenv("ARENA_CLAUDE_RETRY_SECONDS", "5")
    api.push(Fail(429, "rate_limit_error", "come back in an hour", retry_after="3600"))
    claude, _, records = two_seat_table(host, claude_opens=True)
    (fault,) = of(records, "fault", claude)
    assert fault["reason"].startswith("Claude API unavailable after 1 attempt: HTTP 429")
    # the endpoint's pause is held to the same 5 s bound: paused for the hour asked, every
    # seat's next request to it in this process would have waited an hour
    # (paused: the endpoint's deadline is set; the seat's later turns may have waited it out)
    assert 0 < LIMITER.paused_until(endpoint_at(api.url, "test-key")) <= time.time() + 5


def test_a_refused_request_is_a_fault_without_retrying(host, api):
    api.push(Fail(401, "authentication_error", "invalid x-api-key"))
    claude, _, records = two_seat_table(host, claude_opens=True)
    (fault,) = of(records, "fault", claude)
    assert fault["reason"] == (
        "Claude API refused the request (not retried): "
        "HTTP 401 authentication_error: invalid x-api-key"
    )
    assert sum(r.json == api.requests[0].json for r in api.requests) == 1  # asked once


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [({"retry-after": "2"}, 2.0), ({"retry-after-ms": "250"}, 0.25), ({}, None)],
)
def test_retry_after_reads_seconds_and_milliseconds(headers, seconds):
    class Response:
        def __init__(self, headers):
            self.headers = headers

    class Error(Exception):
        def __init__(self, headers):
            self.response = Response(headers)

    assert retry_after(Error(headers)) == seconds


# --- no credentials, settings -----------------------------------------------------------------


def test_with_no_key_bayes_stands_in_and_the_results_say_so(host):
    claude, results, records = two_seat_table(host, claude_opens=True)
    assert results.seats[claude].stand_in == "no ANTHROPIC_API_KEY: bayes played this seat"
    assert results.seats[claude].usage is None and results.usage is None
    # The very moves a bayes seat makes in that slot.
    bayes_only = run_episode(host, EpisodeRequest(seats=2, seed=0, deals=1))[1]
    played = [(r["type"], r.get("quantity"), r.get("face")) for r in moves(records, claude)]
    expected = [(r["type"], r.get("quantity"), r.get("face")) for r in moves(bayes_only, claude)]
    assert played == expected


def test_model_and_max_tokens_per_seat_override_the_environment(host, api, monkeypatch):
    monkeypatch.setenv("ARENA_CLAUDE_MODEL", "claude-from-env")
    monkeypatch.setenv("ARENA_CLAUDE_MAX_TOKENS", "300")
    two_seat_table(host, claude_opens=True, spec="claude:honest?model=claude-haiku-4-5")
    sent = api.requests[0].json
    assert (sent["model"], sent["max_tokens"]) == ("claude-haiku-4-5", 300)
    assert "temperature" not in sent


def test_no_sampling_parameter_is_ever_sent(host, api, monkeypatch):
    # Current models refuse temperature with a 400 (the loopback API does too): the seat
    # has no such setting, and the variable it once read is read no more.
    monkeypatch.setenv("ARENA_CLAUDE_TEMPERATURE", "0.2")
    two_seat_table(host, claude_opens=True, spec="claude:honest?max_tokens=64")
    sent = api.requests[0].json
    assert not {"temperature", "top_p", "top_k", "extra_body"} & set(sent)
    assert sent["max_tokens"] == 64


@pytest.mark.parametrize(
    ("spec", "env", "fragment"),
    [
        ("claude", {}, "a Claude seat needs a policy"),
        ("claude:honest?colour=red", {}, "unknown setting colour"),
        ("claude:honest?max_tokens=0", {}, "max_tokens must be >= 1"),
        ("claude:honest?temperature=0.2", {}, "unknown setting temperature"),
        ("claude:honest", {"ARENA_CLAUDE_RETRY_ATTEMPTS": "0"}, "ARENA_CLAUDE_RETRY_ATTEMPTS"),
        ("claude:honest", {"ARENA_CLAUDE_TIMEOUT": "-1"}, "ARENA_CLAUDE_TIMEOUT must be > 0"),
        ("claude:no-such-policy", {}, "unknown policy 'no-such-policy'"),
    ],
)
def test_a_bad_seat_setting_is_a_one_line_setup_error(host, monkeypatch, spec, env, fragment):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    request = EpisodeRequest(seats=2, deals=1, seat_specs=(SeatSpec.parse(spec),))
    with pytest.raises(SetupError) as caught:
        run_episode(host, request)
    assert fragment in str(caught.value) and "\n" not in str(caught.value)


def test_the_server_refuses_to_answer_unscripted_without_a_responder():
    # The fixture itself: a test that forgets a reply gets a loud 400, not a silent default.
    with MessagesServer() as server:
        request = urllib.request.Request(f"{server.url}/v1/messages", data=b"{}", method="POST")
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(request, timeout=5)
        assert caught.value.code == 400
