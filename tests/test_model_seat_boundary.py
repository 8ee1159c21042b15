"""The model seat's boundary, tried as an attacker would, through the real ``arena`` command
against hostile servers on 127.0.0.1 (:mod:`hostile_server`).

Foreign host names (``api.openai.com``, ``gw.example``) reach a recording server through
``HTTP_PROXY``, which the SDK's HTTP client honours for ``http://`` URLs, so a test sees
every host, port and header a request was sent with, and nothing leaves the machine.
Each test is a row of the attack that found the hole: keys to another port or scheme of
the paired host, credentials through a redirect, usage that is negative, fractional or
huge, a dripped or flooded reply, a hostile Models API, credentials inside a URL, a
``key_env`` naming what is no key, and replies that are not chat completions.
"""

from __future__ import annotations

import json
import time

import pytest
from hostile_server import (
    HostileServer,
    as_json,
    completion,
    drip,
    flood,
    legal_play,
    raw,
    redirect,
)
from model_seat_cli import ACCOUNT, KEY, SECRETS, arena, play, records

pytestmark = pytest.mark.slow


def leaked(server: HostileServer) -> list[str]:
    """Each secret any request to ``server`` carried, in a header or its body."""
    found = []
    for seen in server.seen:
        carried = json.dumps(seen.headers) + seen.body.decode("utf-8", "replace")
        found += [secret for secret in SECRETS if secret in carried]
    return found


# --- row 1: credentials follow the origin, not the host ---------------------------------------


def test_openai_key_goes_to_the_paired_origin_and_its_headers_with_it():
    """The control: with the account paired to this server, everything goes there, so the
    tests below that see nothing can fail."""
    with HostileServer(legal_play()) as paired:
        done = play("openai:honest?model=m", env={**ACCOUNT, "OPENAI_BASE_URL": paired.url + "/v1"})
    assert done.returncode == 0, done.stderr
    assert paired.seen and all(s.headers["authorization"] == f"Bearer {KEY}" for s in paired.seen)
    assert paired.seen[0].headers["openai-organization"] == "org-user"
    assert paired.seen[0].headers["x-gateway-token"] == "gw-secret"


def test_another_loopback_port_of_the_paired_host_gets_nothing_of_the_account():
    """OPENAI_BASE_URL on port A, the seat on port B of the same host: B got the key, the
    organization, the project and the gateway header."""
    with HostileServer(legal_play()) as paired, HostileServer(legal_play()) as other:
        env = {**ACCOUNT, "OPENAI_BASE_URL": paired.url + "/v1"}
        done = play(f"openai:honest?model=m&base_url={other.url}/v1", env=env)
    assert done.returncode == 0, done.stderr
    assert other.seen, "the seat played against the other port (a local server needs no key)"
    assert leaked(other) == []
    assert all("authorization" not in seen.headers for seen in other.seen)
    assert paired.seen == []


@pytest.mark.parametrize(
    ("base_url", "openai_base_url"),
    [
        ("http://api.openai.com:9999/v1", None),  # OpenAI's host, another port, cleartext
        ("http://api.openai.com/v1", None),  # OpenAI's host over http: another scheme
        ("http://gw.example:8080/v1", "http://gw.example/v1"),  # the paired gateway's host
    ],
)
def test_another_port_or_scheme_of_the_paired_host_is_another_origin(base_url, openai_base_url):
    env = {**ACCOUNT} | ({"OPENAI_BASE_URL": openai_base_url} if openai_base_url else {})
    with HostileServer(legal_play()) as proxy:
        env |= {"HTTP_PROXY": proxy.url, "http_proxy": proxy.url}
        done = play(f"openai:honest?model=m&base_url={base_url}", env=env)
    assert done.returncode == 0, done.stderr
    assert leaked(proxy) == []
    assert proxy.seen == []  # no key may go there, so bayes stood in and nothing was sent
    seat = json.loads(done.stdout)["seats"][0]
    assert seat["standIn"].startswith("no key_env= for ")


def test_a_key_env_key_goes_only_to_its_seats_origin(tmp_path):
    with HostileServer(legal_play()) as proxy:
        env = {**ACCOUNT, "ROUTER_API_KEY": "router-key", "HTTP_PROXY": proxy.url}
        done = play(
            "openai:honest?model=m&base_url=http://router.example:8000/v1&key_env=ROUTER_API_KEY",
            env=env,
        )
    assert done.returncode == 0, done.stderr
    assert proxy.seen
    assert {seen.target.split("/v1")[0] for seen in proxy.seen} == {"http://router.example:8000"}
    assert {seen.headers["authorization"] for seen in proxy.seen} == {"Bearer router-key"}
    assert leaked(proxy) == []


# --- row 2: no credential, and no prompt, follows a redirect to another origin --------------


def test_a_redirect_to_another_origin_is_not_followed(tmp_path):
    log = tmp_path / "ep.jsonl"
    with HostileServer() as paired, HostileServer(legal_play()) as elsewhere:
        paired.then = redirect(elsewhere.url + "/v1/chat/completions", status=307)
        done = play(
            "openai:honest?model=m",
            env={**ACCOUNT, "OPENAI_BASE_URL": paired.url + "/v1"},
            log=log,
        )
    assert done.returncode == 0, done.stderr
    assert paired.seen and elsewhere.seen == []
    (fault, *_) = [r for r in records(log) if r["type"] == "fault"]
    assert "redirected to another origin" in fault["reason"]
    assert elsewhere.url.removeprefix("http://") in fault["reason"]


def test_a_redirect_within_the_origin_is_followed_with_the_key():
    with HostileServer(legal_play()) as paired:
        paired.push(redirect(paired.url + "/v1/chat/completions?moved=1", status=307))
        done = play("openai:honest?model=m", env={**ACCOUNT, "OPENAI_BASE_URL": paired.url + "/v1"})
    assert done.returncode == 0, done.stderr
    assert paired.seen[1].target.endswith("?moved=1")
    assert paired.seen[1].headers["authorization"] == f"Bearer {KEY}"
    assert json.loads(done.stdout)["seats"][0]["faults"] == 0


# --- rows 3, 5, 10: usage and replies are validated at the wire ------------------------------

BAD_USAGE = [
    ({"prompt_tokens": -1000000, "completion_tokens": -5, "total_tokens": 0}, "prompt_tokens"),
    ({"prompt_tokens": 10, "completion_tokens": -5, "total_tokens": 5}, "completion_tokens"),
    ({"prompt_tokens": 1e308, "completion_tokens": 5, "total_tokens": 5}, "prompt_tokens"),
    ({"prompt_tokens": 10**30, "completion_tokens": 5, "total_tokens": 5}, "prompt_tokens"),
    ({"prompt_tokens": 10.5, "completion_tokens": 5, "total_tokens": 5}, "prompt_tokens"),
    ({"prompt_tokens": "12", "completion_tokens": 5, "total_tokens": 5}, "prompt_tokens"),
    (
        {
            "prompt_tokens": 10,
            "completion_tokens": 5,
            "prompt_tokens_details": {"cached_tokens": 99},
        },
        "cached_tokens is more than prompt_tokens",
    ),
]


@pytest.mark.parametrize(("usage", "named"), BAD_USAGE)
def test_usage_that_is_no_token_count_is_a_fault_quoting_it_never_a_cost(tmp_path, usage, named):
    log = tmp_path / "ep.jsonl"
    body = json.dumps(completion({"action": "bid", "quantity": 1, "face": 6}, usage=usage))
    if "1e+308" in body or usage.get("prompt_tokens") == 10**30:
        assert json.loads(body)  # the server sends it as written
    with HostileServer(raw(200, body.encode())) as server:
        done = play(f"openai:honest?model=m&base_url={server.url}/v1", log=log)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    lines = records(log)
    assert [r for r in lines if r["type"] == "usage"] == []
    faults = [r["reason"] for r in lines if r["type"] == "fault"]
    assert faults and all(named in reason and "usage" in reason for reason in faults)
    seat = json.loads(done.stdout)["seats"][0]
    assert seat["faults"] == len(faults) and seat.get("usage") is None
    assert arena("check", str(log)).returncode == 0


def test_a_garbage_reply_with_valid_usage_is_a_fault_that_keeps_its_usage(tmp_path):
    log = tmp_path / "ep.jsonl"
    body = completion(None, usage={"prompt_tokens": 700, "completion_tokens": 30})
    body["choices"] = "lots"
    with HostileServer(as_json(body)) as server:
        done = play(f"openai:honest?model=m&base_url={server.url}/v1", log=log)
    assert done.returncode == 0, done.stderr
    lines = records(log)
    fault = next(r for r in lines if r["type"] == "fault")
    assert fault["reason"] == (
        "OpenAI-compatible API: an unreadable reply: choices is a JSON string, '\"lots\"'"
    )
    usage = [r for r in lines if r["type"] == "usage"]
    # the usage line comes right before its fault, for the same decision
    assert usage and lines.index(usage[0]) == lines.index(fault) - 1
    assert (usage[0]["inputTokens"], usage[0]["outputTokens"]) == (700, 30)


@pytest.mark.parametrize(
    ("body", "content_type", "said"),
    [
        (b"<html><body>502 Bad Gateway</body></html>", "text/html", "502 Bad Gateway"),
        (b'{"choices": [\xff\xfe]}', "application/json", "not UTF-8"),
        (b'{"usage": {"prompt_tokens": NaN}}', "application/json", "NaN is not JSON"),
        (b"[1, 2, 3]", "application/json", "a JSON array where an object belongs"),
        (b"", "application/json", "not JSON"),
    ],
)
def test_a_reply_that_is_no_chat_completion_is_a_fault_with_the_servers_text(
    tmp_path, body, content_type, said
):
    log = tmp_path / "ep.jsonl"
    with HostileServer(raw(200, body, content_type)) as server:
        done = play(f"openai:honest?model=m&base_url={server.url}/v1", log=log)
    assert done.returncode == 0, done.stderr
    lines = records(log)
    assert [r for r in lines if r["type"] == "rejected"] == []  # not the model's move
    faults = [r["reason"] for r in lines if r["type"] == "fault"]
    assert faults and all(said in reason for reason in faults)
    assert not any("raised" in reason or "Error" in reason for reason in faults)


def test_arguments_nested_past_any_parser_are_rule_11s_unparseable_reply(tmp_path):
    log = tmp_path / "ep.jsonl"
    nested = '{"action": ' + "[" * 100_000 + "]" * 100_000 + "}"
    with HostileServer(as_json(completion(nested))) as server:
        done = play(f"openai:honest?model=m&base_url={server.url}/v1", log=log)
    assert done.returncode == 0, done.stderr
    reasons = [r["reason"] for r in records(log) if r["type"] == "rejected"]
    assert reasons and all(r == "unparseable JSON reply: nested too deep" for r in reasons)


def test_a_league_budget_holds_against_a_server_that_lies_about_usage_half_the_time(tmp_path):
    """Every other reply claims -1,000,005 tokens, the rest 1,020: the lies once cancelled
    the truth and the token budget never ran out. Each lie is now a fault, so the truth
    alone counts: the first table's truthful calls (1,020 tokens each) pass the budget of
    100, and the league stops there."""
    lying = {"prompt_tokens": -1000000, "completion_tokens": -5, "total_tokens": -1000005}
    replies = iter(range(10**6))

    def body(action):
        return completion(action, usage=lying if next(replies) % 2 else "default")

    db = tmp_path / "league.sqlite"
    with HostileServer(legal_play(body)) as server:
        seat = f"openai:honest?model=gpt-4o-mini&provider=openai&base_url={server.url}/v1"
        run = arena(
            "league", "run", "--pool", seat, "--pool", "bayes", "--tables", "6",
            "--deals", "3", "--budget-tokens", "100", "--db", str(db),
        )  # fmt: skip
        assert run.returncode == 0, run.stderr
        shown = arena("league", "show", str(db), "--json")
    assert "budget reached after 1 of 6" in run.stderr
    report = json.loads(shown.stdout)
    cost = report["cost"]
    assert cost["tokens"]["total"] >= 1020 and cost["tokens"]["total"] % 1020 == 0
    assert cost["usd"] > 0 and report["faultTurns"]


@pytest.mark.parametrize("count", [1e308, 10**30, int("9" * 309)])
def test_compare_and_a_league_over_huge_usage_end_in_results_not_an_overflow(tmp_path, count):
    usage = {"prompt_tokens": count, "completion_tokens": 5, "total_tokens": 5}
    answer = legal_play(lambda action: completion(action, usage=usage))
    seat = "openai:honest?model=gpt-4o-mini&provider=openai&base_url={}/v1"
    with HostileServer(answer) as server:
        compared = arena(
            "compare", seat.format(server.url), "bayes", "--tables", "2", "--deals", "2", "--json"
        )
        league = arena(
            "league", "run", "--pool", seat.format(server.url), "--pool", "bayes",
            "--tables", "2", "--deals", "2", "--db", str(tmp_path / "l.sqlite"), "--json",
        )  # fmt: skip
    for done in (compared, league):
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr and "Overflow" not in done.stderr
    assert json.loads(compared.stdout)["cost"] == 0.0  # every lying call a fault: none priced


# --- rows 4 and 12: every call bounded in time and size ---------------------------------------


@pytest.mark.parametrize("headers_too", [False, True])
def test_a_dripping_server_costs_a_decision_its_deadline_not_the_drip(tmp_path, headers_too):
    """One byte every 0.2 s: each read comes within any read timeout, so only a deadline on
    the whole call stops it. The drip would take 60 s; the seat's deadline is 1.5 s."""
    log = tmp_path / "ep.jsonl"
    body = json.dumps(completion({"action": "challenge"})).encode().ljust(300)
    with HostileServer(drip(body, 0.2, headers_too=headers_too)) as server:
        started = time.monotonic()
        done = play(f"openai:honest?model=m&base_url={server.url}/v1&timeout=1.5", log=log)
        took = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    reasons = [r["reason"] for r in records(log) if r["type"] == "fault"]
    assert reasons and all("1.5 s deadline" in reason for reason in reasons)
    assert took < 30, f"{len(reasons)} decisions took {took:.0f} s"


def test_the_decision_deadline_bounds_a_whole_decision_whatever_the_timeout(tmp_path):
    """ARENA_OPENAI_RETRY_SECONDS is the decision's deadline: a call with a 600 s timeout
    still ends after 1 s, and the model has failed rule 11, naming the deadline."""
    log = tmp_path / "ep.jsonl"
    body = json.dumps(completion({"action": "challenge"})).encode().ljust(600)
    env = {"ARENA_OPENAI_RETRY_SECONDS": "1", "ARENA_OPENAI_RETRY_ATTEMPTS": "5"}
    with HostileServer(drip(body, 0.1)) as server:
        started = time.monotonic()
        done = play(f"openai:honest?model=m&base_url={server.url}/v1&timeout=600", env=env, log=log)
        took = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    reasons = [r["reason"] for r in records(log) if r["type"] == "rejected"]
    assert reasons and set(reasons) == {"no reply within the decision's 1 s deadline"}
    assert took < 30


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (flood(50 * 2**20), "declared 52,428,800 bytes"),
        (flood(50 * 2**20, declared=10**11), "declared 100,000,000,000 bytes"),
        (flood(50 * 2**20, declared=-1), "more"),  # chunked, no length: read up to the cap
    ],
)
def test_a_reply_past_the_size_cap_is_refused_whatever_it_declares(tmp_path, answer, said):
    log = tmp_path / "ep.jsonl"
    with HostileServer(answer) as server:
        done = play(
            f"openai:honest?model=m&base_url={server.url}/v1&max_reply_bytes=1048576",
            log=log,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    reasons = [r["reason"] for r in records(log) if r["type"] == "fault"]
    assert reasons and all("1,048,576-byte cap" in r and said in r for r in reasons), reasons


def test_a_compressed_reply_is_refused_as_unbounded(tmp_path):
    import gzip

    log = tmp_path / "ep.jsonl"
    bomb = gzip.compress(b" " * (20 * 2**20))  # 20 KB that inflates to 20 MB
    answer = raw(200, bomb, headers={"content-encoding": "gzip"})
    with HostileServer(answer) as server:
        done = play(f"openai:honest?model=m&base_url={server.url}/v1", log=log)
    assert done.returncode == 0, done.stderr
    assert all(seen.headers.get("accept-encoding") == "identity" for seen in server.seen)
    reasons = [r["reason"] for r in records(log) if r["type"] == "fault"]
    assert reasons and all("compressed" in r for r in reasons)


# --- rows 8, 9 and 12: what a seat spec may name ---------------------------------------------


@pytest.mark.parametrize(
    ("spec", "env", "said", "never"),
    [
        (
            "openai:honest?model=m&base_url=http://alice:hunter2@127.0.0.1:9/v1",
            {},
            "base_url must not hold credentials",
            "hunter2",
        ),
        (
            "openai:honest?model=m",
            {"OPENAI_BASE_URL": "http://alice:hunter2@gw.example/v1"},
            "OPENAI_BASE_URL must not hold credentials",
            "hunter2",
        ),
        (
            "openai:honest?model=m&base_url=http://evil.example/v1&key_env=AWS_SECRET_ACCESS_KEY",
            {"AWS_SECRET_ACCESS_KEY": "aws-secret"},
            "another service's secret",
            "aws-secret",
        ),
        (
            "openai:honest?model=m&base_url=http://evil.example/v1&key_env=PATH",
            {},
            "key_env must name an API key's variable",
            "/usr/bin",
        ),
        (
            "openai:honest?model=m&base_url=http://x.example/" + "a" * 100_000,
            {"HTTP_PROXY": "http://127.0.0.1:9"},
            "",
            "a" * 200,
        ),
    ],
)
def test_a_seat_spec_naming_a_credential_or_no_key_is_one_error_line(spec, env, said, never):
    done = play(spec, env=env)
    if said:
        assert done.returncode == 2, done.stderr
        (line,) = done.stderr.strip().splitlines()
        assert line.startswith("arena: error: ") and said in line
        assert done.stdout == ""
    assert never not in done.stderr  # a --json run's own data may hold the spec it was given
    assert len(done.stderr) < 2000


# --- rows 6 and 7: a hostile Models API -------------------------------------------------------


def _model_info(**changes):
    info = {
        "id": "claude-sonnet-4-6",
        "type": "model",
        "display_name": "Claude Sonnet 4.6",
        "created_at": "2026-01-01T00:00:00Z",
        "lifecycle": "active",
        "retires_at": None,
        "max_tokens": 64000,
        "capabilities": {
            "effort": {"supported": False},
            "structured_outputs": {"supported": True},
            "thinking": {"supported": True, "types": {"disabled": {"supported": True}}},
        },
    }
    for path, value in changes.items():
        where = info
        *parents, last = path.split("__")
        for key in parents:
            where = where[key]
        where[last] = value
    return info


def _message() -> dict:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": [{"type": "tool_use", "id": "t1", "name": "act", "input": {"action": "x"}}],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def _models_api(info: dict):
    """GET /v1/models/... answers ``info``; every Messages call gets a reply rule 11 refuses."""

    def answer(handler, seen):
        payload = info if seen.method == "GET" else _message()
        as_json(payload)(handler, seen)

    return answer


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"capabilities__thinking": None}, "capabilities.thinking.types"),
        ({"capabilities": {}}, "capabilities.thinking.types"),
        ({"capabilities__thinking__types": {"telepathic": {"supported": True}}}, "names none"),
        ({"max_tokens": "lots"}, "max_tokens"),
        ({"max_tokens": -1}, "max_tokens is -1"),
        ({"max_tokens": 0}, "max_tokens is 0"),
        ({"retires_at": "not-a-date"}, "retires_at is no date"),
        ({"lifecycle": "sunsetting"}, "lifecycle unknown"),
    ],
)
def test_a_hostile_models_api_answer_is_one_warning_naming_the_field(tmp_path, changes, named):
    log = tmp_path / "ep.jsonl"
    with HostileServer(_models_api(_model_info(**changes))) as server:
        env = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": server.url}
        env |= {"ARENA_CLAUDE_RETRY_ATTEMPTS": "1", "ARENA_CLAUDE_BACKOFF": "0.01"}
        done = play("claude:honest", env=env, log=log)
        posted = [json.loads(s.body) for s in server.seen if s.method == "POST"]
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert named in done.stderr
    assert posted and all(request["max_tokens"] >= 1 for request in posted)


def test_the_models_api_is_bounded_like_a_messages_call(tmp_path):
    info = json.dumps(_model_info()).encode()
    with HostileServer(_models_api(_model_info())).push(drip(info, 0.2)) as server:
        env = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": server.url}
        env |= {"ARENA_CLAUDE_TIMEOUT": "1", "ARENA_CLAUDE_RETRY_ATTEMPTS": "1"}
        started = time.monotonic()
        done = play("claude:honest", env=env)
        took = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert "deadline" in done.stderr and "shipped table" in done.stderr
    assert took < 30


def test_a_league_naming_a_key_env_for_another_machine_says_so_once_before_any_table(tmp_path):
    league = tmp_path / "league.toml"
    with HostileServer(legal_play()) as proxy:
        league.write_text(
            "[league]\ntables = 2\n\n[table]\ndeals = 1\n\n[entrants]\n"
            'a = { seat = "openai", policy = "honest", model = "m",'
            ' base_url = "http://router.example:8000/v1", key_env = "ROUTER_API_KEY" }\n'
            'b = "bayes"\nc = "pressure"\nd = "random"\n'
        )
        env = {"ROUTER_API_KEY": "router-key", "HTTP_PROXY": proxy.url}
        run = arena("league", "run", str(league), "--db", str(tmp_path / "l.sqlite"), env=env)
    assert run.returncode == 0, run.stderr
    notices = [line for line in run.stderr.splitlines() if "sends a key" in line]
    assert notices == [
        "arena: warning: openai seat sends a key to another machine"
        " (key_env=ROUTER_API_KEY, to=http://router.example:8000)"
    ]


def test_a_claude_decision_past_its_deadline_is_a_rule_11_failure_naming_it(tmp_path):
    log = tmp_path / "ep.jsonl"

    def slow(handler, seen):
        if seen.method == "GET":
            return as_json(_model_info())(handler, seen)
        time.sleep(20)  # thinking on and on: nothing before the deadline
        return as_json(_message())(handler, seen)

    with HostileServer(slow) as server:
        env = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": server.url}
        done = play("claude:honest?deadline=1", env=env, log=log)
    assert done.returncode == 0, done.stderr
    lines = records(log)
    rejected = {r["reason"] for r in lines if r["type"] == "rejected"}
    assert rejected == {"no reply within the decision's 1 s deadline"}
    assert [r for r in lines if r["type"] == "fault"] == []
