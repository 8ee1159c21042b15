# ruff: noqa: F811  (pytest hands claude_tables's fixtures, imported below, in by name)
"""Claude seats take each model's rules from the Models API (issue 31).

The loopback server answers ``GET /v1/models/{id}`` with a ``ModelInfo`` per model and
holds every Messages request to that model's own entry; a request it refuses is counted
(``refusals``), as are its Messages calls (``requests``) and Models API calls
(``model_lookups``). Episodes run through the real SDK; the refusals before any table run
through the real ``arena`` command in a subprocess.
"""

from __future__ import annotations

import os
import subprocess
import sys
import typing
from pathlib import Path

import anthropic
import pytest
import structlog
from claude_tables import FOUR_CLAUDES, api, of, offline  # noqa: F401
from messages_server import CATALOGUE, MessagesServer, model_info, table_player, tool_call
from structlog.testing import capture_logs

from arena.results import SeatResult, cache_read_share
from arena.runner import EpisodeRequest, SetupError, run_episode
from arena.seats import SeatSpec
from arena_plugins.claude.lookup import ModelRefused, model_rules
from arena_plugins.claude.seat import CACHE_CHECK_CALLS

pytestmark = pytest.mark.slow
ARENA = str(Path(sys.executable).with_name("arena"))


# --- the loopback Models API ----------------------------------------------------------------


def same_keys(payload, model_type) -> list[str]:
    """Keys of ``payload`` the SDK type lacks, and keys it defines that ``payload`` lacks,
    at every depth: the answer is a ``ModelInfo`` exactly as the types define it."""
    wrong = []
    fields = model_type.model_fields
    wrong += [f"extra {key}" for key in set(payload) - set(fields)]
    wrong += [f"missing {key}" for key in set(fields) - set(payload)]
    for key, field in fields.items():
        inner = typing.get_args(field.annotation) or (field.annotation,)
        kinds = [t for t in inner if isinstance(t, type) and issubclass(t, anthropic.BaseModel)]
        if kinds and isinstance(payload.get(key), dict):
            wrong += [f"{key}.{w}" for w in same_keys(payload[key], kinds[0])]
    return wrong


@pytest.mark.parametrize("model", sorted(CATALOGUE))
def test_every_model_the_server_knows_is_a_model_info_as_the_sdk_defines_it(model):
    info = CATALOGUE[model].info
    assert same_keys(info, anthropic.types.ModelInfo) == []
    parsed = anthropic.types.ModelInfo.model_validate(info)
    assert parsed.id == model and parsed.type == "model"


def test_the_server_knows_every_model_the_sdk_lists():
    listed = typing.get_args(typing.get_args(anthropic.types.Model)[0])
    assert set(listed) <= set(CATALOGUE)


def test_a_model_info_reads_as_the_seat_s_rules():
    with MessagesServer() as server:
        client = anthropic.Anthropic(api_key="k", base_url=server.url, max_retries=0)
        opus_5 = model_rules(client, "claude-opus-5")
        plain = model_rules(client, "claude-test-plain")
        model_rules(client, "claude-opus-5")  # asked once per process
    assert opus_5.thinking_types == {"adaptive", "disabled"}
    assert opus_5.efforts == ("low", "medium", "high", "xhigh", "max")
    assert (opus_5.modes, opus_5.off_type, opus_5.structured_outputs) == (
        ("adaptive", "off"),
        "disabled",
        True,
    )
    assert (plain.modes, plain.efforts, plain.max_tokens, plain.structured_outputs) == (
        ("off",),
        (),
        8192,
        False,
    )
    assert server.model_lookups == ["/v1/models/claude-opus-5", "/v1/models/claude-test-plain"]


def test_no_thinking_means_disabled_is_taken_and_thinking_is_not():
    # The SDK's docstring: disabled is "True on a model that does not support thinking".
    caps = model_info("claude-x-y", ("disabled",), ())["capabilities"]
    assert caps["thinking"]["supported"] is False
    assert caps["thinking"]["types"]["disabled"] == {"supported": True}
    assert caps["effort"]["supported"] is False


FORCED = {"type": "tool", "name": "act"}
STRICT_TOOL = {
    "name": "act",
    "strict": True,
    "input_schema": {
        "type": "object",
        "properties": {"quantity": {"type": "integer", "minimum": 1}},
        "additionalProperties": False,
    },
}


@pytest.mark.parametrize(
    ("overrides", "status", "message"),
    [
        # Opus 5 thinks when thinking is left out: a forced tool there is refused.
        (
            {"model": "claude-opus-5", "tool_choice": FORCED},
            400,
            "Thinking may not be enabled when tool_choice forces tool use.",
        ),
        (
            {"model": "claude-opus-5", "extra_body": {"temperature": 0.5}},
            400,
            "`temperature` is deprecated for this model.",
        ),
        (
            {"model": "claude-sonnet-4-6", "output_config": {"effort": "xhigh"}},
            400,
            'output_config.effort: "xhigh" is not supported for this model.',
        ),
        (
            {"model": "claude-test-plain", "output_config": {"effort": "low"}},
            400,
            'output_config.effort: "low" is not supported for this model.',
        ),
        (
            {
                "model": "claude-opus-5",
                "thinking": {"type": "disabled"},
                "output_config": {"effort": "max"},
            },
            400,
            'output_config.effort: "max" is not supported with thinking disabled; '
            "use effort high or lower.",
        ),
        (
            {"model": "claude-test-plain", "max_tokens": 8193},
            400,
            "max_tokens: 8193 > 8192, which is the maximum allowed number of output tokens "
            "for claude-test-plain",
        ),
        (
            {"model": "claude-sonnet-5-5", "thinking": {"type": "disabled"}},
            400,
            '"thinking.type.disabled" is not supported for this model. Use'
            ' "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.',
        ),
        (
            {
                "model": "claude-sonnet-5-5",
                "thinking": {"type": "between_tools"},
                "tool_choice": FORCED,
            },
            400,
            "tool_choice: forced tool use is not supported for this model.",
        ),
        (
            {"model": "claude-opus-5", "tools": [STRICT_TOOL]},
            400,
            "tools.0.input_schema: minimum not supported with strict",
        ),
        (
            {"model": "claude-test-plain", "tools": [STRICT_TOOL]},
            400,
            "tools.0.strict: structured outputs are not supported for claude-test-plain",
        ),
        (
            {"model": "claude-test-retired"},
            404,
            "model: claude-test-retired has been retired",
        ),
    ],
)
def test_the_loopback_api_holds_a_request_to_its_model_s_entry(overrides, status, message):
    request = {
        "max_tokens": 2000,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "your turn"}]}],
        "tools": [{"name": "act", "input_schema": {"type": "object"}}],
    }
    with MessagesServer(lambda body: tool_call({"action": "challenge"})) as server:
        client = anthropic.Anthropic(api_key="k", base_url=server.url, max_retries=0)
        with pytest.raises(anthropic.APIStatusError) as caught:
            client.messages.create(**(request | overrides))
    assert caught.value.status_code == status
    assert caught.value.body["error"]["message"] == message
    assert len(server.refusals) == 1


def test_the_loopback_api_takes_each_new_kind_s_own_shape():
    with MessagesServer(lambda body: tool_call({"action": "challenge"})) as server:
        client = anthropic.Anthropic(api_key="k", base_url=server.url, max_retries=0)
        base = {
            "max_tokens": 1024,
            "messages": [{"role": "user", "content": [{"type": "text", "text": "go"}]}],
            "tools": [{"name": "act", "input_schema": {"type": "object"}}],
        }
        off = {"thinking": {"type": "disabled"}, "tool_choice": FORCED}
        unsaid = client.messages.create(model="claude-opus-5", **base)
        forced = client.messages.create(model="claude-opus-5", **base, **off)
        plain = client.messages.create(model="claude-test-plain", **base, **off)
        between = client.messages.create(
            model="claude-sonnet-5-5", thinking={"type": "between_tools"}, **base
        )
    assert [b.type for b in unsaid.content] == ["thinking", "tool_use"]  # it thought, unasked
    assert [b.type for b in forced.content] == ["tool_use"]
    assert [b.type for b in plain.content] == ["tool_use"]
    assert [b.type for b in between.content] == ["tool_use"]
    assert server.refusals == []


# --- four seats per model kind, no request refused ------------------------------------------


def four_seats(host, model: str, query: str = "", deals: int = 3):
    specs = tuple(SeatSpec.parse(f"{spec}?model={model}{query}") for spec in FOUR_CLAUDES)
    request = EpisodeRequest(seed=5, deals=deals, talk=True, seat_specs=specs)
    return run_episode(host, request)


def assert_all_their_own(api, results, records):
    assert api.refusals == []  # zero 400s
    assert not of(records, "fault")
    assert sum(seat.fallbacks for seat in results.seats) == 0  # zero fallback turns
    assert results.status == "complete" and api.requests


def test_an_adaptive_only_model_with_xhigh_plays_its_own_moves(host, api):
    results, records = four_seats(host, "claude-opus-5-5", "&effort=xhigh")
    assert_all_their_own(api, results, records)
    for sent in api.requests:
        assert sent.json["thinking"] == {"type": "adaptive", "display": "summarized"}
        assert sent.json["output_config"] == {"effort": "xhigh"}
        assert sent.json["tool_choice"]["type"] == "auto"
        (tool,) = sent.json["tools"]
        assert tool["strict"] is True  # it takes structured outputs
    assert api.model_lookups == ["/v1/models/claude-opus-5-5"]  # once, for four seats


def test_a_hybrid_model_whose_unsaid_thinking_thinks_plays_with_thinking_off(host, api):
    # Opus 5 thinks when a request leaves thinking out: off must be said, as disabled.
    results, records = four_seats(host, "claude-opus-5", "&thinking=off")
    assert_all_their_own(api, results, records)
    for sent in api.requests:
        assert sent.json["thinking"] == {"type": "disabled"}
        assert sent.json["tool_choice"]["type"] == "tool"
        assert sent.json["max_tokens"] == 1024
    assert all("thinking" not in r for r in records)


def test_a_model_with_no_thinking_and_no_effort_plays_its_own_moves(host, api):
    results, records = four_seats(host, "claude-test-plain")
    assert_all_their_own(api, results, records)
    for sent in api.requests:
        assert sent.json["thinking"] == {"type": "disabled"}
        assert "output_config" not in sent.json
        assert "strict" not in sent.json["tools"][0]  # no structured outputs: no strict
        assert sent.json["max_tokens"] == 1024


def test_a_model_that_turns_thinking_off_between_tools_plays_unforced(host, api):
    results, records = four_seats(host, "claude-sonnet-5-5", "&thinking=off")
    assert_all_their_own(api, results, records)
    for sent in api.requests:
        assert sent.json["thinking"] == {"type": "between_tools"}
        assert sent.json["tool_choice"]["type"] == "auto"


def test_a_default_max_tokens_is_cut_to_the_model_s_limit(host, api):
    # claude-test-plain's max_tokens is 8192: a set 9000 is refused, not sent.
    with pytest.raises(SetupError, match="max_tokens must be <= 8192 for claude-test-plain"):
        four_seats(host, "claude-test-plain", "&max_tokens=9000")
    assert api.requests == []


# --- refused before spending, through the command ----------------------------------------


@pytest.fixture
def loopback():
    with MessagesServer(table_player(patience=lambda deal: 1)) as server:
        yield server


def arena(server: MessagesServer, *args: str, cwd: Path | None = None):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARENA_", "PLAYER_"))}
    env |= {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.url}
    env |= {"ARENA_CLAUDE_RETRY_ATTEMPTS": "2", "ARENA_CLAUDE_BACKOFF": "0.01"}
    done = subprocess.run(
        [ARENA, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=300
    )
    return done.returncode, done.stdout, done.stderr


def four_seat_args(spec: str) -> list[str]:
    return [arg for _ in range(4) for arg in ("--seat", spec)]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "claude:honest?model=claude-test-retired",
            "seat 0 (claude:honest?model=claude-test-retired): claude-test-retired is retired: "
            "requests naming it fail (choose another model)",
        ),
        (
            "claude:honest?model=claude-nonesuch-9",
            "seat 0 (claude:honest?model=claude-nonesuch-9): unknown model 'claude-nonesuch-9': "
            "the Models API does not list it",
        ),
        (
            "claude:honest?model=claude-sonnet-4-6&effort=xhigh",
            "claude-sonnet-4-6 does not take effort=xhigh (allowed: low, medium, high, max)",
        ),
        (
            "claude:honest?model=claude-test-plain&effort=low",
            "claude-test-plain does not take effort=low (allowed: none: leave effort unset)",
        ),
        (
            "claude:honest?model=claude-opus-5-5&thinking=off",
            "claude-opus-5-5 does not take thinking=off (allowed: adaptive)",
        ),
        (
            "claude:honest?model=claude-opus-5&thinking=off&effort=max",
            "claude-opus-5 does not take effort=max with thinking off (allowed: low, medium, high)",
        ),
    ],
)
def test_play_refuses_a_seat_its_model_cannot_take_before_any_call(
    loopback, tmp_path, spec, message
):
    code, out, err = arena(loopback, "play", "--deals", "1", *four_seat_args(spec), cwd=tmp_path)
    assert code == 2 and out == ""
    (line,) = err.splitlines()
    assert line.startswith("arena: error: ") and line.endswith(message)
    assert loopback.requests == []  # zero Messages calls
    assert loopback.model_lookups  # the Models API was asked


LEAGUE = """
[league]
tables = 1
[table]
deals = 1
seats = 2
[entrants]
b = "bayes"
gone = {{ seat = "claude", policy = "honest", model = "{model}" }}
[prices."{model}"]
input = 1.0
output = 1.0
cache_read = 0.1
cache_write = 1.0
"""


def test_league_run_refuses_a_retired_model_before_the_first_table(loopback, tmp_path):
    (tmp_path / "l.toml").write_text(LEAGUE.format(model="claude-test-retired"))
    code, _, err = arena(loopback, "league", "run", "l.toml", "--db", "l.db", cwd=tmp_path)
    assert code == 2
    assert err.splitlines() == [
        "arena: error: entrant 'gone': claude-test-retired is retired: requests naming it fail"
        " (choose another model)"
    ]
    assert loopback.requests == []


def test_compare_refuses_an_effort_the_model_lacks_before_the_first_table(loopback, tmp_path):
    spec = "claude:honest?model=claude-sonnet-4-6&effort=xhigh"
    code, _, err = arena(loopback, "compare", spec, "bayes", "--tables", "2", cwd=tmp_path)
    assert code == 2
    assert err.splitlines() == [
        "arena: error: entrant 'A': claude-sonnet-4-6 does not take effort=xhigh"
        " (allowed: low, medium, high, max)"
    ]
    assert loopback.requests == []


def test_serve_refuses_a_retired_model_before_it_serves(loopback, tmp_path):
    spec = "claude:honest?model=claude-test-retired"
    code, _, err = arena(loopback, "serve", "--seat", spec, "--seat", "bayes", cwd=tmp_path)
    assert code == 2
    (line,) = err.splitlines()
    assert line.startswith("arena: error: seat 0 (") and "is retired" in line
    assert loopback.requests == []


def test_a_deprecated_model_plays_after_one_warning_naming_its_date(loopback, tmp_path):
    spec = "claude:honest?model=claude-test-deprecated"
    code, out, err = arena(loopback, "play", "--deals", "1", *four_seat_args(spec), cwd=tmp_path)
    assert code == 0 and out
    warnings = [line for line in err.splitlines() if "claude model deprecated" in line]
    assert len(warnings) == 1 and "2027-01-15" in warnings[0]
    assert loopback.model_lookups == ["/v1/models/claude-test-deprecated"]
    assert loopback.requests and loopback.refusals == []


def test_without_a_models_api_a_table_plays_by_the_shipped_table_with_one_warning(tmp_path):
    with MessagesServer(table_player(patience=lambda deal: 1), models_api=False) as gateway:
        spec = "claude:honest?model=claude-opus-5&thinking=off"
        code, out, err = arena(gateway, "play", "--deals", "1", *four_seat_args(spec), cwd=tmp_path)
    assert code == 0 and out
    warnings = [line for line in err.splitlines() if "shipped table" in line]
    assert len(warnings) == 1 and "claude-opus-5" in warnings[0]
    # The 404 for the model, then for the list: no Models API here.
    assert gateway.model_lookups == ["/v1/models/claude-opus-5", "/v1/models"]
    assert gateway.requests and gateway.refusals == []
    assert all(r.json["thinking"] == {"type": "disabled"} for r in gateway.requests)


def test_a_models_api_out_of_reach_is_the_shipped_table_too():
    with capture_logs() as logs:  # nothing listens on port 9
        rules = model_rules(
            anthropic.Anthropic(api_key="k", base_url="http://127.0.0.1:9", max_retries=0),
            "claude-haiku-4-5",
        )
    assert (rules.source, rules.modes) == ("shipped table", ("off",))
    (warning,) = [e for e in logs if e["event"] == "claude model rules from the shipped table"]
    assert warning["why"] == "the Models API could not be reached"


def test_a_refusal_is_kept_for_the_process(loopback):
    client = anthropic.Anthropic(api_key="k2", base_url=loopback.url, max_retries=0)
    for _ in range(3):
        with pytest.raises(ModelRefused, match="is retired"):
            model_rules(client, "claude-test-retired")
    assert loopback.model_lookups == ["/v1/models/claude-test-retired"]


# --- the prompt cache, watched --------------------------------------------------------------


def test_a_seat_that_reads_nothing_from_the_cache_says_so_once(host, monkeypatch):
    # Every prompt here is far below the server's minimum cacheable length, so nothing is
    # written and nothing read: each seat warns once, at its CACHE_CHECK_CALLS-th call.
    structlog.reset_defaults()
    server = MessagesServer(table_player(patience=lambda deal: 3), min_cacheable=10**6)
    with server, capture_logs() as logs:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        results, records = four_seats(host, "claude-sonnet-4-6", deals=8)
    assert all(u["cacheReadTokens"] == 0 for u in of(records, "usage"))
    assert [seat["cacheReadShare"] for seat in results.to_json()["seats"]] == [0.0] * 4
    warned = [e for e in logs if e["event"] == "claude seat reads nothing from the prompt cache"]
    calls = {slot: len(of(records, "usage", slot)) for slot in range(4)}
    assert len(warned) == sum(n >= CACHE_CHECK_CALLS for n in calls.values()) > 0
    assert {e["calls"] for e in warned} == {CACHE_CHECK_CALLS}


def test_a_seat_whose_prefix_is_cached_does_not_warn(host, api):
    with capture_logs() as logs:
        _, records = four_seats(host, "claude-sonnet-4-6", deals=8)
    assert max(len(of(records, "usage", slot)) for slot in range(4)) >= CACHE_CHECK_CALLS
    assert sum(u["cacheReadTokens"] for u in of(records, "usage")) > 0
    assert not [e for e in logs if e["event"] == "claude seat reads nothing from the prompt cache"]


def test_the_results_give_each_seat_s_cache_read_share():
    # 300 read of 100 plain + 300 read + 100 written = 500 prompt tokens: 0.6.
    usage = {"inputTokens": 100, "outputTokens": 7, "cacheReadTokens": 300, "cacheWriteTokens": 100}
    assert cache_read_share(usage) == 0.6
    # 1 of 3: 0.33333... to 4 places.
    assert (
        cache_read_share(usage | {"inputTokens": 1, "cacheReadTokens": 1, "cacheWriteTokens": 1})
        == 0.3333
    )
    assert cache_read_share(dict.fromkeys(usage, 0)) is None
    seat = SeatResult(0, "claude:honest", 0, 0.0, 1, 0, 0, 0, usage=usage | {"calls": 1})
    assert seat.to_json()["cacheReadShare"] == 0.6
    assert "cacheReadShare" not in SeatResult(0, "bayes", 0, 0.0, 1, 0, 0, 0).to_json()
