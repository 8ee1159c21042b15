"""The loopback chat completions server answers as OpenAI, vLLM, llama.cpp and the servers
with less tool support do, read through the official ``openai`` SDK.

Each test sends the arena's own prompt text (the Claude seat's record and turn) with the
``act`` tool over a real socket to ``tests/chat_server.py`` and reads the answer with
``client.chat.completions.create``: the reply parses into the SDK's types with each field
where the SDK expects it, a reasoning field arrives as an extra attribute of the message
(``message.model_extra``), and errors raise the SDK's own exception classes.

The position every request shows (worked out by hand from ``make_view`` and the prompt):
deal 1, seat s2, hand [6 6 2 3 1]; s0 bid 3x6 and s1 bid 4x2, so 2 bids stand of at most 12
and the lowest legal bid is 4x3. The player challenges once 3 bids stand, so it bids 4x3,
says so, and notes one bid seen from each of s0 and s1.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import attrs
import openai
import pytest
from chat_server import (
    BAD_GATEWAY_PAGE,
    KINDS,
    ChatServer,
    cut_off,
    move,
    rate_limited,
    said,
    server_error,
)
from model_player import THOUGHT_MARKER
from plugins_for_tests.harness import make_view

from arena.rules import TableRules
from arena_plugins.claude.reply_tool import reply_tool
from arena_plugins.dice import DICE
from arena_plugins.model_seat.prompt import record, rules_in_brief, turn

RULES = TableRules(mode=DICE, seats=4)
VIEW = make_view(RULES, (6, 6, 2, 3, 1), [(0, 3, 6), (1, 4, 2)], slot=2, deal=1)
RECORD = "".join(record(VIEW, RULES.mode))
TURN = turn(VIEW, RULES.mode)
MOVE = {
    "notes": "s0: 1 bids seen; s1: 1 bids seen",
    "action": "bid",
    "quantity": 4,
    "face": 3,
    "say": "I have plenty of 3s.",
}
MESSAGES = [
    {"role": "system", "content": rules_in_brief(VIEW, RULES.mode)},
    {"role": "user", "content": RECORD + TURN},
]
ACT = {"name": "act", "parameters": reply_tool(RULES, talk=True)["input_schema"]}
TOOLS = [{"type": "function", "function": ACT}]
NAMED = {"type": "function", "function": {"name": "act"}}
STRICT_ACT = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["bid", "challenge"]},
        "quantity": {"type": ["integer", "null"]},
        "face": {"type": ["integer", "null"]},
        "say": {"type": ["string", "null"]},
        "notes": {"type": ["string", "null"]},
    },
    "required": ["action", "quantity", "face", "say", "notes"],
    "additionalProperties": False,
}
"""The ``act`` schema as OpenAI's strict mode takes it: every property required, optional
ones nullable."""
ACT_FORMAT = {
    "type": "json_schema",
    "json_schema": {"name": "act", "schema": STRICT_ACT, "strict": True},
}
THOUGHT = "I doubt s1 holds four 2s."
# 25 bytes: 8 + 25 // 4 = 14 reasoning tokens, and 12 for the answer itself.
THOUGHT_OUTPUT_TOKENS = 14 + 12


NO_KEY = {"Authorization": openai.omit}
"""How a request sends no key: the SDK refuses an empty ``api_key`` ("Missing credentials")
and sends any other, unless the request omits the header explicitly."""


def client(server: ChatServer, key: str | None = None, retries: int = 0) -> openai.OpenAI:
    """The SDK against the loopback server; with no key, a placeholder no request sends."""
    return openai.OpenAI(
        base_url=f"{server.url}/v1", api_key=key or "never-sent", max_retries=retries
    )


def ask(server: ChatServer, key: str | None = None, retries: int = 0, **request):
    """``chat.completions.create`` with the arena's prompt, sending ``key`` or none."""
    request = {"model": server.kind.models[0], "messages": MESSAGES} | request
    if key is None:
        request["extra_headers"] = NO_KEY
    return client(server, key, retries).chat.completions.create(**request)


def test_openai_answers_a_forced_strict_call_with_the_legal_move_and_hidden_reasoning():
    with ChatServer("openai") as server:
        reply = ask(
            server,
            tools=[
                {"type": "function", "function": {**ACT, "parameters": STRICT_ACT, "strict": True}}
            ],
            tool_choice=NAMED,
            max_completion_tokens=2000,
        )
    choice = reply.choices[0]
    assert isinstance(reply, openai.types.chat.ChatCompletion)
    assert choice.finish_reason == "tool_calls"
    (call,) = choice.message.tool_calls
    assert isinstance(call, openai.types.chat.ChatCompletionMessageFunctionToolCall)
    assert call.function.name == "act"
    assert json.loads(call.function.arguments) == MOVE
    assert choice.message.content is None
    assert choice.message.model_extra == {}  # OpenAI shows no reasoning text
    # The made-up thought is "[thought " + 16 hex digits + "] Weighing the standing bid.":
    # 9 + 16 + 28 = 53 bytes, so 8 + 53 // 4 = 21 reasoning tokens, billed beside the
    # answer's 12: 33 completion tokens.
    assert reply.usage.completion_tokens_details.reasoning_tokens == 21
    assert reply.usage.completion_tokens == 33
    assert reply.usage.prompt_tokens_details.cached_tokens == 0


def test_openai_refuses_a_strict_schema_whose_properties_are_not_all_required():
    strict = [{"type": "function", "function": {**ACT, "strict": True}}]
    with ChatServer("openai") as server, pytest.raises(openai.BadRequestError) as refused:
        ask(server, tools=strict, tool_choice=NAMED)
    # The act schema requires only "action"; its next property is "quantity".
    assert refused.value.code == "invalid_function_parameters"
    assert refused.value.param == "tools[0].function.parameters"
    assert refused.value.message.endswith(
        "Invalid schema for function 'act': In context=(), 'required' is required to be "
        "supplied and to be an array including every key in properties. Missing 'quantity'."
    )
    assert len(server.refusals) == 1


def test_openai_refuses_a_strict_response_format_without_additional_properties_false():
    loose = {**STRICT_ACT, "additionalProperties": True}
    response_format = {
        "type": "json_schema",
        "json_schema": {**ACT_FORMAT["json_schema"], "schema": loose},
    }
    with ChatServer("openai") as server, pytest.raises(openai.BadRequestError) as refused:
        ask(server, response_format=response_format)
    assert (refused.value.code, refused.value.param) == ("invalid_json_schema", "response_format")
    assert refused.value.message.endswith(
        "Invalid schema for response_format 'act': In context=(), 'additionalProperties' is "
        "required to be supplied and to be false."
    )


@pytest.mark.parametrize(
    ("request_", "words"),
    [
        ({"tool_choice": "required"}, "'tool_choice' is only allowed when 'tools' are specified"),
        (
            {"tools": TOOLS, "tool_choice": {"type": "function", "function": {"name": "bid"}}},
            "tool_choice names a function that is not in tools",
        ),
    ],
)
def test_a_tool_choice_with_no_tool_to_choose_is_refused(request_, words):
    with ChatServer("vllm") as server, pytest.raises(openai.BadRequestError) as refused:
        ask(server, **request_)
    assert words in refused.value.message and refused.value.param == "tool_choice"


def test_openai_refuses_max_tokens_on_a_reasoning_model():
    with ChatServer("openai") as server, pytest.raises(openai.BadRequestError) as refused:
        ask(server, tools=TOOLS, max_tokens=500)
    assert (refused.value.param, refused.value.code) == ("max_tokens", "unsupported_parameter")


def test_openai_reports_a_repeated_prefix_as_cached_tokens_in_steps_of_128():
    def asking(tail: str) -> list:
        return [{"role": "user", "content": "x" * 6000 + tail}]

    with ChatServer("openai", responder=lambda body: said("ok")) as server:
        first = ask(server, messages=asking("A"))
        second = ask(server, messages=asking("B"))
    # The prompt as read: '{"content": "' (13) + 6000 x + the tail (1) + '", "role": "user"}'
    # (18), then "\n" and "null" (no response format): 6037 bytes, 1509 tokens. The two share
    # 13 + 6000 = 6013 bytes, 1503 tokens: 1024 + 3 * 128 = 1408 cached.
    assert first.usage.prompt_tokens == second.usage.prompt_tokens == 1509
    assert first.usage.prompt_tokens_details.cached_tokens == 0
    assert second.usage.prompt_tokens_details.cached_tokens == 1408


def test_openai_sends_its_rate_limit_state_on_every_answer():
    with ChatServer("openai") as server:
        raw = client(server).chat.completions.with_raw_response.create(
            model="gpt-5-mini", messages=MESSAGES, tools=TOOLS, extra_headers=NO_KEY
        )
    assert raw.headers["x-ratelimit-remaining-requests"] == "9999"  # 10,000 less this one
    assert raw.parse().choices[0].message.tool_calls[0].function.name == "act"


@pytest.mark.parametrize(
    ("kind", "field"),
    [
        ("vllm", "reasoning"),
        ("vllm-reasoning-content", "reasoning_content"),
        ("llamacpp", "reasoning_content"),
    ],
)
def test_reasoning_arrives_as_an_extra_attribute_of_the_message(kind, field):
    with ChatServer(kind) as server:
        server.push(move(MOVE, reasoning=THOUGHT))
        reply = ask(server, tools=TOOLS, tool_choice=NAMED, max_tokens=4000)
    message = reply.choices[0].message
    assert message.model_extra == {field: THOUGHT}
    assert getattr(message, field) == THOUGHT
    assert json.loads(message.tool_calls[0].function.arguments) == MOVE
    assert reply.usage.completion_tokens == THOUGHT_OUTPUT_TOKENS
    assert reply.usage.completion_tokens_details is None  # only the total is reported


def test_a_reasoning_model_without_a_scripted_thought_shows_one_unique_to_the_request():
    with ChatServer("vllm") as server:
        first = ask(server, tools=TOOLS).choices[0].message.reasoning
        second = ask(server, tools=TOOLS, tool_choice="required").choices[0].message.reasoning
    assert first.startswith(THOUGHT_MARKER) and second.startswith(THOUGHT_MARKER)
    assert first != second


def test_arguments_that_are_not_json_arrive_exactly_as_sent():
    broken = '{"action": "bid", quantity: 4'
    with ChatServer("llamacpp") as server:
        server.push(move(broken))
        reply = ask(server, tools=TOOLS, tool_choice="auto")
    assert reply.choices[0].message.tool_calls[0].function.arguments == broken


@pytest.mark.parametrize("forced", ["required", NAMED])
def test_auto_only_refuses_a_forced_tool_choice_and_takes_auto(forced):
    with ChatServer("auto-only") as server:
        with pytest.raises(openai.BadRequestError) as refused:
            ask(server, tools=TOOLS, tool_choice=forced)
        taken = ask(server, tools=TOOLS, tool_choice="auto")
    assert refused.value.param == "tool_choice"
    assert "tool_choice (required/named) is not supported" in refused.value.message
    assert json.loads(taken.choices[0].message.tool_calls[0].function.arguments) == MOVE
    assert len(server.refusals) == 1


def test_no_tools_refuses_tools_as_ollama_does():
    with ChatServer("no-tools") as server, pytest.raises(openai.BadRequestError) as refused:
        ask(server, tools=TOOLS)
    assert refused.value.body == {
        "message": "registry.ollama.ai/library/gemma3:4b does not support tools",
        "type": "api_error",
        "param": None,
        "code": None,
    }


def test_no_tools_writes_the_action_as_bare_json_under_a_json_schema():
    with ChatServer("no-tools") as server:
        reply = ask(server, response_format=ACT_FORMAT)
    choice = reply.choices[0]
    assert choice.finish_reason == "stop" and choice.message.tool_calls is None
    assert json.loads(choice.message.content) == MOVE
    assert choice.message.reasoning.startswith(THOUGHT_MARKER)


def test_no_tools_writes_the_action_in_a_fenced_block_after_prose_without_a_schema():
    with ChatServer("no-tools-no-schema") as server:
        reply = ask(server)
    content = reply.choices[0].message.content
    prose, fenced = content.split("\n```json\n")
    assert prose == "I will take my turn now."
    assert json.loads(fenced.removesuffix("\n```")) == MOVE


def test_a_server_that_ignores_json_schema_answers_in_prose_all_the_same():
    ignoring = attrs.evolve(KINDS["no-tools"], json_schema="ignores")
    with ChatServer(ignoring) as server:
        reply = ask(server, response_format=ACT_FORMAT)
    content = reply.choices[0].message.content
    assert content.startswith("I will take my turn now.\n```json\n")
    assert json.loads(content.split("```json\n")[1].removesuffix("\n```")) == MOVE


def test_no_tools_no_schema_refuses_a_json_schema_in_llama_servers_shape():
    with ChatServer("no-tools-no-schema") as server, pytest.raises(openai.BadRequestError) as e:
        ask(server, response_format=ACT_FORMAT)
    assert e.value.body == {
        "code": 400,
        "message": 'Illegal param: "response_format" must be one of "text" or "json_object", '
        "but got: json_schema",
        "type": "invalid_request_error",
    }


def test_a_length_stop_has_no_action_and_bills_the_whole_budget():
    with ChatServer("openai") as openai_server, ChatServer("vllm") as vllm_server:
        openai_server.push(cut_off())
        vllm_server.push(cut_off(reasoning="Counting the 2s, then the 3s, then"))
        hidden = ask(openai_server, tools=TOOLS, tool_choice=NAMED, max_completion_tokens=500)
        shown = ask(vllm_server, tools=TOOLS, tool_choice=NAMED, max_tokens=300)
    for reply, budget in ((hidden, 500), (shown, 300)):
        choice = reply.choices[0]
        assert choice.finish_reason == "length"
        assert not choice.message.tool_calls and choice.message.content is None
        assert reply.usage.completion_tokens == budget
    assert hidden.usage.completion_tokens_details.reasoning_tokens == 500
    assert shown.choices[0].message.reasoning == "Counting the 2s, then the 3s, then"


def test_a_429_raises_rate_limit_error_carrying_retry_after_and_the_rate_limit_headers():
    with ChatServer("openai") as server, pytest.raises(openai.RateLimitError) as limited:
        server.push(rate_limited(retry_after="2", reset="2s"))
        ask(server, tools=TOOLS)
    headers = limited.value.response.headers
    assert headers["retry-after"] == "2"
    assert headers["x-ratelimit-remaining-requests"] == "0"
    assert headers["x-ratelimit-reset-requests"] == "2s"
    assert limited.value.code == "rate_limit_exceeded"


def test_the_sdk_waits_out_retry_after_ms_before_its_retry():
    with ChatServer("openai") as server:
        server.push(rate_limited(retry_after=None, retry_after_ms="300"))
        reply = ask(server, retries=1, tools=TOOLS)
    first, second = server.requests
    assert second.arrived - first.arrived >= 0.3
    assert json.loads(reply.choices[0].message.tool_calls[0].function.arguments) == MOVE


def test_5xx_for_the_next_requests_raise_internal_server_error_then_it_answers():
    with ChatServer("openai") as server:
        server.push(server_error(500), server_error(502), server_error(503))
        failures = []
        for _ in range(3):
            with pytest.raises(openai.InternalServerError) as failed:
                ask(server, tools=TOOLS)
            failures.append(failed.value)
        answered = ask(server, tools=TOOLS)
    assert [f.status_code for f in failures] == [500, 502, 503]
    assert failures[0].type == failures[2].type == "server_error"
    assert failures[1].body == BAD_GATEWAY_PAGE.rstrip()  # the page as text; the SDK strips it
    assert answered.choices[0].finish_reason == "tool_calls"


def test_vllm_writes_errors_with_the_status_as_code():
    with ChatServer("vllm") as server, pytest.raises(openai.InternalServerError) as failed:
        server.push(server_error(500))
        ask(server, tools=TOOLS)
    assert failed.value.body == {
        "message": "The server had an error while processing your request. Sorry about that!",
        "type": "InternalServerError",
        "param": None,
        "code": 500,
    }


def test_a_server_with_a_key_answers_only_requests_that_carry_it():
    with ChatServer("vllm", key="sk-loop-5678") as server:
        with pytest.raises(openai.AuthenticationError) as wrong:
            ask(server, key="sk-other-1234", tools=TOOLS)
        with pytest.raises(openai.AuthenticationError) as missing:
            ask(server, tools=TOOLS)
        answered = ask(server, key="sk-loop-5678", tools=TOOLS)
    assert wrong.value.message.startswith("Error code: 401")
    assert "Incorrect API key provided: sk-***1234." in wrong.value.message
    assert "You didn't provide an API key" in missing.value.message
    assert [r.headers.get("authorization") for r in server.requests] == [
        "Bearer sk-other-1234",
        None,
        "Bearer sk-loop-5678",
    ]
    assert answered.choices[0].message.tool_calls[0].function.name == "act"


def test_a_keyless_server_answers_a_client_that_sends_no_key():
    with ChatServer("llamacpp") as server:
        models = client(server).models.list(extra_headers=NO_KEY)
        reply = ask(server, tools=TOOLS)
    assert [m.id for m in models.data] == ["Qwen3-8B-Q4_K_M.gguf"]
    assert [(r.path, "authorization" in r.headers) for r in server.requests] == [
        ("/v1/models", False),
        ("/v1/chat/completions", False),
    ]
    assert json.loads(reply.choices[0].message.tool_calls[0].function.arguments) == MOVE


def test_every_request_is_recorded_with_its_path_headers_and_body():
    with ChatServer("vllm") as server:
        ask(server, tools=TOOLS)
        with pytest.raises(openai.NotFoundError):  # a base URL without /v1
            openai.OpenAI(base_url=server.url, api_key="k", max_retries=0).chat.completions.create(
                model="m", messages=MESSAGES
            )
    sent, lost = server.requests
    assert (sent.path, lost.path) == ("/v1/chat/completions", "/chat/completions")
    assert sent.json["messages"] == MESSAGES and json.loads(sent.body) == sent.json
    assert sent.headers["content-type"] == "application/json"
    assert server.completions == [sent.json]


def test_the_player_reads_a_prompt_sent_as_text_parts_as_it_reads_a_string():
    parts = [{"type": "text", "text": RECORD}, {"type": "text", "text": TURN}]
    with ChatServer("vllm") as server:
        reply = ask(server, messages=[MESSAGES[0], {"role": "user", "content": parts}], tools=TOOLS)
    assert json.loads(reply.choices[0].message.tool_calls[0].function.arguments) == MOVE


def test_a_prompt_with_no_turn_is_a_400_that_says_so():
    with ChatServer("vllm") as server, pytest.raises(openai.BadRequestError) as refused:
        ask(server, messages=[{"role": "user", "content": "hello"}])
    assert "found no '# Your turn'" in refused.value.message


def test_a_kind_can_be_varied_with_attrs_evolve():
    plain = attrs.evolve(KINDS["vllm"], reasoning_field=None)
    with ChatServer(plain) as server:
        reply = ask(server, tools=TOOLS)
    assert reply.choices[0].message.model_extra == {}
    assert reply.usage.completion_tokens == 12  # no reasoning: the answer alone


@pytest.mark.slow
def test_standalone_runs_a_command_with_openai_base_url_set():
    script = (
        "import openai; c = openai.OpenAI(api_key='never-sent', max_retries=0); "
        "print(c.models.list(extra_headers={'Authorization': openai.omit}).data[0].id)"
    )
    done = subprocess.run(
        [
            sys.executable,
            str(Path(__file__).parent / "chat_server.py"),
            "--kind",
            "vllm",
            "--",
            sys.executable,
            "-c",
            script,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "Qwen/Qwen3-8B\n", "")


def test_a_get_outside_the_models_route_is_a_404():
    with ChatServer("openai") as server, pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(f"{server.url}/v1/files", timeout=10)
    assert missing.value.code == 404
