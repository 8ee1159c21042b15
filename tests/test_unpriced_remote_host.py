"""A remote host nobody prices is not "a server you run" (issue 40, item 4).

An ``openai`` entrant whose ``base_url`` names a host genai-prices does not know is
unpriced, as a server on this machine is; only the latter is one you run. The remote host
here is a name no DNS knows, reached through ``HTTP_PROXY`` (which httpx honours) at a
loopback chat server, as the issue reached its listeners; the league runs through the real
``arena league run`` and is read back by ``arena league show``.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from chat_server import ChatServer

pytestmark = pytest.mark.slow

REMOTE = "models.example.net"
LOCAL_SOURCE = "unpriced: a server you run (no provider)"
"""What the store has always said of a loopback server's rows (docs/league.md, Prices)."""


class ProxyChatServer(ChatServer):
    """The chat server as the proxy every foreign host is reached through: a proxied request
    names the whole URL (``POST http://HOST/v1/...``), which it answers by its path."""

    def handler(self):
        class Proxied(super().handler()):
            def parse_request(self) -> bool:
                parsed = super().parse_request()
                self.path = urlsplit(self.path).path or self.path
                return parsed

        return Proxied


def arena(*args: str, cwd: Path, env: dict[str, str] | None = None):
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    clean = {k: v for k, v in clean.items() if k.lower() not in ("no_proxy", "http_proxy")}
    return subprocess.run(
        ["arena", *args], capture_output=True, text=True, cwd=cwd, env={**clean, **(env or {})}
    )


def league_file(folder: Path, base_url: str, budget: str = "") -> Path:
    """bayes, pressure, random and ``far``: an openai entrant of ``base_url``, no provider."""
    path = folder / "league.toml"
    path.write_text(
        f"[league]\ntables = 1\n{budget}[table]\ndeals = 2\n[entrants]\n"
        'bayes = "bayes"\npressure = "pressure"\nrandom = "random"\n'
        f'far = {{ seat = "openai", policy = "honest", model = "m", base_url = "{base_url}",'
        ' key_env = "EXAMPLE_API_KEY" }\n',
        encoding="utf-8",
    )
    return path


def played(folder: Path, base_url: str, proxy: ProxyChatServer | None) -> tuple[dict, str]:
    """The league's ``show --json`` report and ``show``'s text; ``proxy`` (if any) is where
    every request goes, as ``HTTP_PROXY``."""
    env = {"EXAMPLE_API_KEY": "sk-example"} | ({"HTTP_PROXY": proxy.url} if proxy else {})
    db = folder / "league.sqlite"
    path = league_file(folder, base_url)
    ran = arena("league", "run", str(path), "--db", str(db), cwd=folder, env=env)
    assert ran.returncode == 0, ran.stderr
    shown = arena("league", "show", str(db), "--json", cwd=folder)
    text = arena("league", "show", str(db), cwd=folder, env={"COLUMNS": "250"})
    return json.loads(shown.stdout), text.stdout


def test_a_remote_host_with_no_price_is_named_not_called_yours(tmp_path):
    with ProxyChatServer("vllm") as proxy:
        report, text = played(tmp_path, f"http://{REMOTE}/v1", proxy)
        asked = {r.headers.get("host") for r in proxy.requests if r.path == "/v1/chat/completions"}
    assert asked == {REMOTE}  # the seat played, its calls addressed to the remote host
    (row,) = report["cost"]["byPrice"]
    assert row["source"] == f"unpriced: no price known for {REMOTE} (no provider)"
    assert row["usd"] is None and row["tokens"]["total"] > 0
    assert "a server you run" not in text and f"no price known for {REMOTE}" in text


def test_a_server_on_this_machine_is_still_one_you_run(tmp_path):
    with ChatServer("vllm") as server:
        report, _ = played(tmp_path, f"{server.url}/v1", None)
        assert server.completions
    (row,) = report["cost"]["byPrice"]
    assert (row["source"], row["usd"]) == (LOCAL_SOURCE, None)


def test_a_budgeted_league_refuses_it_naming_the_host(tmp_path):
    with ProxyChatServer("vllm") as proxy:
        path = league_file(tmp_path, f"http://{REMOTE}/v1", budget="budget_usd = 1.0\n")
        ran = arena(
            "league", "run", str(path), "--db", str(tmp_path / "b.sqlite"), cwd=tmp_path,
            env={"HTTP_PROXY": proxy.url, "EXAMPLE_API_KEY": "sk-example"},
        )  # fmt: skip
        assert proxy.requests == []
    assert ran.returncode == 2
    errors = [line for line in ran.stderr.splitlines() if line.startswith("arena: error:")]
    assert errors == [
        f"arena: error: entrant 'far': model 'm' is unpriced (no price known for {REMOTE}:"
        ' no provider=) and the league has a budget; add [prices."m"] to the league file'
    ]


def test_a_private_network_server_is_one_you_run_as_the_seat_says():
    """The seat decides where its calls go (its own is_local): a private address needs no
    key and is a server you run, not a remote host nobody prices."""
    from arena_plugins.openai_chat.settings import unpriced_why

    assert unpriced_why("honest?model=m&base_url=http://192.168.1.20:8000/v1", {}) == (
        "a server you run"
    )
    assert unpriced_why("honest?model=m&base_url=http://10.0.0.7/v1", {}) == "a server you run"
    assert unpriced_why("honest?model=m&base_url=https://api.together.xyz/v1", {}) == (
        "no price known for api.together.xyz"
    )
