"""``openai:`` seats against the loopback chat completions server, as each server people run
answers: OpenAI, vLLM (either reasoning field), llama.cpp, a server that refuses a forced
tool, one with no tool calling; whole episodes, the request shapes, rule 11's reasons,
retries, and whose key goes where (every recorded request read).
"""

from __future__ import annotations

import json
import re
import subprocess
import time

import attrs
import pytest
from chat_server import ChatServer, Fail, cut_off, move, rate_limited, server_error, table_player
from openai_tables import offline  # noqa: F401  (autouse: no key, no base URL)
from referee import replay

from arena.limits import LIMITER
from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatSpec
from arena_plugins.model_seat.retries import endpoint_at, exhausted_wait

pytestmark = pytest.mark.slow


_SLOT = re.compile(r"You are s(\d+)\.")


def slot_of(body: dict) -> int:
    """The seat a request is for, as its system message says (``You are sN.``)."""
    return int(_SLOT.search(body["messages"][0]["content"])[1])


def marked_player():
    """The legal player, with notes and reasoning unique to each seat and request, so a test
    can find them wherever they leak to."""
    player = table_player(patience=lambda deal: 2 + deal % 3)
    served = {"n": 0}

    def respond(body):
        reply = player(body)
        slot = slot_of(body)
        served["n"] += 1
        n = served["n"]
        return attrs.evolve(
            reply,
            action={**reply.action, "notes": f"note-of-s{slot}-{n}"},
            reasoning=f"reasoning-of-s{slot}-{n}",
        )

    return respond


def spec(server: ChatServer, policy: str = "honest", **settings) -> str:
    """The seat spec of a seat on ``server``; the stand-in for OpenAI's own API is named so
    (``provider=openai``), as its loopback URL is not OpenAI's host."""
    own = {"provider": "openai"} if server.kind.name == "openai" else {}
    query = {"model": server.kind.models[0], "base_url": f"{server.url}/v1", **own, **settings}
    return f"openai:{policy}?" + "&".join(f"{k}={v}" for k, v in query.items())


def play(host, specs, deals=6, seed=3, seats=4):
    request = EpisodeRequest(
        seats=seats,
        seed=seed,
        deals=deals,
        talk=True,
        seat_specs=tuple(SeatSpec.parse(s) for s in specs),
    )
    results, records = run_episode(host, request)
    replay(records, results.to_json())  # every rule of the log checked independently
    return results, records


def decisions(records):
    return [r for r in records if r["type"] in ("bid", "challenge") and not r.get("forced")]


@pytest.mark.parametrize(
    "kind, shows_reasoning, first_shape",
    [
        ("openai", False, "named"),
        ("vllm-reasoning-content", True, "named"),
        ("auto-only", True, "auto"),
        ("no-tools", True, "no tools"),
    ],
)
def test_four_openai_seats_play_their_own_moves_and_keep_reasoning_private(
    host, kind, shows_reasoning, first_shape
):
    with ChatServer(kind, responder=marked_player()) as server:
        specs = [spec(server, policy) for policy in ("honest", "bluffer", "tracker", "honest")]
        results, records = play(host, specs)
    made = decisions(records)
    own = [r for r in made if r["fallback"] is False]
    assert results.status == "complete" and made
    assert len(own) >= 0.8 * len(made)
    assert not [r for r in records if r["type"] == "fault"]
    # The reasoning each reply showed is on its decision's line, as Claude's thinking is.
    for decision in own:
        if shows_reasoning:
            assert decision["thinking"] == [
                {"type": "thinking", "text": decision["thinking"][0]["text"]}
            ]
            assert decision["thinking"][0]["text"].startswith(f"reasoning-of-s{decision['slot']}-")
        else:  # OpenAI bills its reasoning and shows none
            assert "thinking" not in decision
    # No request carries any reasoning, and a seat's notes reach only its own requests.
    answered = [r for r in server.requests if r.path == "/v1/chat/completions"]
    assert len(answered) >= len(own)
    for sent in answered:
        text = sent.body.decode()
        assert "reasoning-of-" not in text
        assert set(re.findall(r"note-of-s(\d+)-", text)) <= {str(slot_of(sent.json))}
    # The shape the last request took: the forced tool where the server takes it, else
    # `auto`, else no tools at all (the action as JSON in the content).
    last = server.completions[-1]
    if first_shape == "named":
        assert last["tool_choice"] == {"type": "function", "function": {"name": "act"}}
    elif first_shape == "auto":
        assert last["tool_choice"] == "auto"
    else:
        assert "tools" not in last and last["response_format"]["type"] == "json_schema"


def test_a_server_refusing_forced_tools_is_asked_with_auto_once_per_episode(host):
    with ChatServer("auto-only") as server:
        play(host, [spec(server), "bayes"], deals=3, seats=2)
    # One refusal: the seat's first request; every later one leaves the choice to the model.
    assert len(server.refusals) == 1
    assert server.completions[0]["tool_choice"]["type"] == "function"
    assert all(body["tool_choice"] == "auto" for body in server.completions[1:])


def test_a_server_with_no_tool_calling_is_read_from_json_in_text(host):
    """A server that refuses tools and json_schema (llama-server's older builds): the action
    comes back as a fenced JSON block after a line of prose, which the same reader reads."""
    with ChatServer("no-tools-no-schema") as server:
        results, records = play(host, [spec(server), "bayes"], deals=3, seats=2)
    made = [r for r in decisions(records) if r["slot"] == 0 or r["fallback"] is False]
    assert results.seats[0].fallbacks == 0 and made
    # Refused in turn: the forced tool, the tool with auto, the JSON schema; then plain text.
    assert len(server.refusals) == 3
    assert all("tools" not in b and "response_format" not in b for b in server.completions[3:])


def test_strict_tool_where_the_provider_is_openai(host):
    """OpenAI's strict mode: every property required and no others, which the server checks;
    a nullable optional field reads as absent."""
    with ChatServer("openai") as server:
        results, _ = play(host, [spec(server, provider="openai"), "bayes"], deals=2, seats=2)
    assert results.seats[0].fallbacks == 0 and not server.refusals
    function = server.completions[0]["tools"][0]["function"]
    assert function["strict"] is True
    schema = function["parameters"]
    assert sorted(schema["required"]) == sorted(schema["properties"])
    assert server.completions[0]["parallel_tool_calls"] is False


def test_usage_counts_cached_input_apart_and_reasoning_tokens(host):
    with ChatServer("openai") as server:
        results, records = play(host, [spec(server), "bayes"], deals=3, seats=2)
        answered = server.completions
    usage = [r for r in records if r["type"] == "usage"]
    assert len(usage) == len(answered)
    seat = results.to_json()["seats"][0]["usage"]
    # Input is the uncached part; the cached part is its own kind (OpenAI counts it inside
    # prompt_tokens), and reasoning tokens are output tokens counted again apart.
    assert seat["cacheReadTokens"] > 0
    assert seat["thinkingTokens"] > 0
    assert seat["outputTokens"] >= seat["thinkingTokens"]


def one_decision(host, server, *script):
    server.push(*script)
    _, records = play(host, [spec(server), "bayes"], deals=1, seats=2, seed=0)
    return records


def test_a_length_stop_with_no_action_is_rule_11s_unparseable_reply_saying_so(host):
    with ChatServer("vllm") as server:
        records = one_decision(host, server, cut_off(reasoning="so many dice to count"))
    rejected = [r for r in records if r["type"] == "rejected"]
    assert len(rejected) == 1
    assert rejected[0]["reason"].startswith(
        "cut off at the token limit before an action (finish_reason length)"
    )
    # Its reasoning is logged with the rejection, and the second ask names the reason.
    assert rejected[0]["thinking"] == [{"type": "thinking", "text": "so many dice to count"}]
    assert "finish_reason length" in server.completions[1]["messages"][1]["content"]
    assert "so many dice" not in json.dumps(server.completions[1])


def test_arguments_that_are_not_json_are_rule_11s_unparseable_reply(host):
    with ChatServer("vllm") as server:
        records = one_decision(host, server, move('{"action": "bid", "quantity": 2,'))
    rejected = [r for r in records if r["type"] == "rejected"]
    assert len(rejected) == 1 and rejected[0]["reason"].startswith("unparseable JSON reply")


def test_a_429_and_a_5xx_are_retried_and_the_seat_still_plays(host):
    with ChatServer("openai") as server:
        records = one_decision(
            host, server, rate_limited(retry_after="0.05", reset="50ms"), server_error(502)
        )
        asked = len(server.completions)
    assert not [r for r in records if r["type"] in ("fault", "rejected")]
    assert [r["fallback"] for r in decisions(records) if r["slot"] == 0][0] is False
    assert asked >= 3  # the 429, the 502, then the answer for the seat's first decision


def test_requests_carry_nothing_of_the_host(host):
    """The SDK's telemetry (the host's OS, architecture and Python version, the SDK's
    version, the attempt and its timeouts) is omitted from every request, a retry's too:
    the attempt number and read timeout the SDK adds per request as well."""
    with ChatServer("openai") as server:
        one_decision(host, server, rate_limited(retry_after="0.05", reset="50ms"))
        sent = list(server.requests)
    assert len(sent) >= 2  # the 429's request and its retry at least
    for request in sent:
        assert not request.host_facts(), request.headers
        assert {"content-type", "user-agent"} <= set(request.headers)  # the API's own


def test_a_server_that_stays_down_is_a_fault_and_bayes_plays_the_turn(host):
    with ChatServer("vllm") as server:
        records = one_decision(host, server, *[server_error(500)] * 6)
    faults = [r for r in records if r["type"] == "fault"]
    # rule 11: two asks, each 3 attempts (ARENA_OPENAI_RETRY_ATTEMPTS), then the fallback
    assert len(faults) == 2
    assert faults[0]["reason"].startswith("OpenAI-compatible API unavailable after 3 attempts")


# --- whose key goes where ---------------------------------------------------------------------


def all_sent(server: ChatServer) -> str:
    """Every request's headers and body, as one text to search."""
    return "\n".join(
        json.dumps(r.headers) + r.body.decode(errors="replace") for r in server.requests
    )


def test_a_local_base_url_with_no_key_plays(host):
    with ChatServer("llamacpp") as server:
        results, _ = play(host, [spec(server), "bayes"], deals=2, seats=2)
    assert results.seats[0].stand_in is None and results.seats[0].fallbacks == 0
    assert all("authorization" not in r.headers for r in server.requests)


def test_a_seat_whose_base_url_names_another_host_sends_no_openai_or_anthropic_key(
    host, monkeypatch
):
    """OPENAI_API_KEY pairs with OPENAI_BASE_URL (unset here: OpenAI's host); a seat's own
    base_url on another host gets neither it nor ANTHROPIC_API_KEY, nor the organization."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-secret")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    monkeypatch.setenv("OPENAI_ORG_ID", "org-secret")
    # the SDK adds OPENAI_CUSTOM_HEADERS to every client it builds, wherever it points
    monkeypatch.setenv("OPENAI_CUSTOM_HEADERS", "X-Gateway-Secret: gw-secret\nX-Team: team-secret")
    with ChatServer("vllm") as server:
        results, _ = play(host, [spec(server), "bayes"], deals=2, seats=2)
    assert results.seats[0].fallbacks == 0 and server.requests
    sent = all_sent(server)
    assert "sk-openai-secret" not in sent and "sk-ant-secret" not in sent
    assert "org-secret" not in sent and "authorization" not in sent.lower()
    assert "gw-secret" not in sent and "team-secret" not in sent


def test_key_env_names_the_only_key_a_seat_sends(host, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-secret")
    monkeypatch.setenv("MY_SERVER_KEY", "sk-mine")
    with ChatServer("vllm", key="sk-mine") as server:
        results, _ = play(host, [spec(server, key_env="MY_SERVER_KEY"), "bayes"], 2, seats=2)
    assert results.seats[0].fallbacks == 0
    assert all(r.headers["authorization"] == "Bearer sk-mine" for r in server.requests)
    assert "sk-openai-secret" not in all_sent(server)


def test_openai_api_key_goes_to_openai_base_url(host, monkeypatch):
    with ChatServer("openai", key="sk-paired") as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-paired")
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
        model = server.kind.models[0]
        results, _ = play(host, [f"openai:honest?model={model}", "bayes"], deals=2, seats=2)
    assert results.seats[0].fallbacks == 0
    assert all(r.headers["authorization"] == "Bearer sk-paired" for r in server.requests)


def test_no_key_and_no_base_url_seats_bayes_as_a_marked_stand_in(host):
    results, _ = play(host, ["openai:honest?model=gpt-5-mini", "bayes"], deals=2, seats=2)
    assert results.seats[0].stand_in == "no OPENAI_API_KEY: bayes played this seat"


def test_a_remote_base_url_with_no_key_env_is_a_stand_in_naming_key_env(host):
    arg = "openai:honest?model=m&base_url=https://api.together.xyz/v1"
    results, _ = play(host, [arg, "bayes"], deals=1, seats=2)
    assert results.seats[0].stand_in == ("no key_env= for api.together.xyz: bayes played this seat")


@pytest.mark.parametrize(
    "arg, message",
    [
        ("honest", "an openai seat needs a model: openai:POLICY?model=M"),
        ("honest?model=m&temperature=1", "unknown setting temperature (known: model, base_url"),
        ("honest?model=m&reasoning_effort=huge", "reasoning_effort must be one of none, minimal"),
        ("honest?model=m&base_url=ftp://x", "base_url must be an http(s) URL with a host"),
        ("honest?model=m&max_tokens=0", "max_tokens must be >= 1, got '0'"),
        ("honest?model=m&provider=nobody", "unknown provider 'nobody' (genai-prices knows: "),
    ],
)
def test_a_bad_setting_is_one_error_line_before_any_table(arg, message):
    out = subprocess.run(
        ["arena", "play", "--seat", f"openai:{arg}", "--seat", "bayes", "--seats", "2"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("arena: error: seat 0 (openai:")
    assert message in lines[0]


def test_a_refusal_that_is_not_about_the_shape_is_a_fault_not_a_new_shape(host):
    with ChatServer("vllm") as server:
        records = one_decision(host, server, *[Fail(401, "bad key")] * 2)
    faults = [r for r in records if r["type"] == "fault"]
    assert [f["reason"] for f in faults] == [
        "OpenAI-compatible API refused the request (not retried): HTTP 401: bad key"
    ] * 2
    assert all(b["tool_choice"]["type"] == "function" for b in server.completions)


@pytest.mark.parametrize(
    "headers, wait",
    [
        # OpenAI's reset format: 1 minute 30.5 seconds is 90.5 s
        ({"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1m30.5s"}, 90.5),
        ({"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "20ms"}, 0.02),
        # both spent: the later reset, 2 s over 6 ms
        (
            {
                "x-ratelimit-remaining-requests": "0",
                "x-ratelimit-reset-requests": "6ms",
                "x-ratelimit-remaining-tokens": "0",
                "x-ratelimit-reset-tokens": "2s",
            },
            2.0,
        ),
        ({"x-ratelimit-remaining-requests": "3", "x-ratelimit-reset-requests": "1s"}, None),
        ({"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "soon"}, None),
    ],
)
def test_a_spent_rate_limit_waits_until_its_reset(headers, wait):
    assert exhausted_wait(headers) == (pytest.approx(wait) if wait is not None else None)


def test_a_retry_after_beyond_the_time_bound_pauses_the_league_no_longer(host, monkeypatch):
    """A 429 asking for an hour (and requests spent until then) is a fault at once, and the
    league's pause is held to the 5 s bound: every seat's next request would wait an hour."""
    monkeypatch.setenv("ARENA_OPENAI_RETRY_SECONDS", "5")
    with ChatServer("openai") as server:
        records = one_decision(host, server, rate_limited(retry_after="3600", reset="1h"))
    fault = [r for r in records if r["type"] == "fault"][0]
    assert fault["reason"].startswith("OpenAI-compatible API unavailable after 1 attempt: HTTP 429")
    paused = LIMITER.paused_until(endpoint_at(f"{server.url}/v1", None))  # local: no key
    assert 0 < paused <= time.time() + 5  # set, and for 5 s at most


def test_reasoning_effort_and_max_tokens_are_sent_as_the_api_names_them(host):
    """OpenAI's reasoning models refuse ``max_tokens`` (the server does too): the seat's
    ``max_tokens`` goes as ``max_completion_tokens``; unset, the default cap (8192) goes
    there, and no ``reasoning_effort``."""
    with ChatServer("openai") as server:
        results, _ = play(
            host, [spec(server, reasoning_effort="low", max_tokens=2000), "bayes"], 1, seats=2
        )
        plain = ChatServer("openai").start()
        try:
            play(host, [spec(plain), "bayes"], deals=1, seats=2)
        finally:
            plain.stop()
    assert results.seats[0].fallbacks == 0 and not server.refusals
    sent = server.completions[0]
    assert (sent["reasoning_effort"], sent["max_completion_tokens"]) == ("low", 2000)
    assert "max_tokens" not in sent
    unset = plain.completions[0]
    assert unset["max_completion_tokens"] == 8192
    assert not {"reasoning_effort", "max_tokens"} & set(unset)


def test_any_other_server_gets_the_cap_as_max_tokens_which_llama_cpp_python_honours(host):
    with ChatServer("vllm") as server:
        play(host, [spec(server, max_tokens=300), "bayes"], deals=1, seats=2)
    assert {body["max_tokens"] for body in server.completions} == {300}
    assert not any("max_completion_tokens" in body for body in server.completions)


def test_a_server_refusing_max_tokens_by_name_gets_the_other_field_once(host, capsys):
    """OpenAI's API behind a URL that does not say so: its 400 names the field, the seat
    moves the cap to ``max_completion_tokens`` and asks again, once."""
    with ChatServer("openai") as server:
        results, _ = play(host, [spec(server, provider="openrouter"), "bayes"], 2, seats=2)
    assert len(server.refusals) == 1 and results.seats[0].faults == 0
    assert "max_tokens" in server.completions[0] and "max_tokens" not in server.completions[-1]
    assert server.completions[-1]["max_completion_tokens"] == 8192
    warned = [line for line in capsys.readouterr().out.splitlines() if "request adapted" in line]
    assert len(warned) == 1 and "Use 'max_completion_tokens' instead." in warned[0]


def test_the_same_seed_and_replies_give_the_same_log(host, monkeypatch):
    """Byte for byte, reasoning and usage included. Each server is named by OPENAI_BASE_URL,
    not in the spec, since the spec is the seat's name in the log."""
    logs = []
    for _ in range(2):
        with ChatServer("vllm-reasoning-content", marked_player()) as server:
            monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
            seat = "openai:tracker?model=Qwen/Qwen3-8B"
            _, records = play(host, [seat, "bayes", "pressure", "random"], 3)
        logs.append(records.data())
    assert logs[0] == logs[1] and b'"thinking"' in logs[0]
