"""A league file never reads a local file into a request: issue 40, item 1.

A model seat sends its policy's text to its server. A league file is shared as a recipe,
so it may name only a shipped policy, or a file the command line allows by name
(``arena league run FILE --allow-policy PATH``); docs/league.md says so. Every case goes
through the real ``arena league run`` against a loopback chat server that records each
request, with the attack of the issue: an ``openai`` entrant whose policy is a secret
file and whose base URL is the attacker's server.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from chat_server import ChatServer

pytestmark = pytest.mark.slow

SECRET = "aws_secret_access_key = wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY"
"""The secret file's contents; no request may carry them unless the command line allows."""
OTHERS = 'bayes = "bayes"\npressure = "pressure"\nrandom = "random"\n'


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The real command, with no model key or base URL from the caller's environment."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    return subprocess.run(["arena", *args], capture_output=True, text=True, env=clean, cwd=cwd)


def league_file(folder: Path, helper: str) -> Path:
    """A one-table league of three scripted seats and ``helper``, a TOML entrant."""
    path = folder / "exfil.toml"
    path.write_text(
        f"[league]\ntables = 1\n[table]\ndeals = 2\n[entrants]\n{OTHERS}helper = {helper}\n",
        encoding="utf-8",
    )
    return path


@pytest.fixture
def secret(tmp_path) -> Path:
    path = tmp_path / "home" / "secret-file"  # no .md: the issue's file needed none
    path.parent.mkdir()
    path.write_text(SECRET + "\n", encoding="utf-8")
    return path


def carried(server: ChatServer) -> bool:
    """Whether any request the server received holds the secret."""
    return any(SECRET.encode() in request.body for request in server.requests)


def test_the_issues_attack_is_refused_before_any_request(tmp_path, secret):
    with ChatServer("vllm") as server:
        helper = (
            f'{{ seat = "openai", policy = "{secret}", model = "m",'
            f' base_url = "{server.url}/v1", key_env = "HOME" }}'
        )
        path = league_file(tmp_path, helper)
        db = tmp_path / "exfil.sqlite"
        ran = arena("league", "run", str(path), "--db", str(db), cwd=tmp_path)
        assert ran.returncode == 2
        assert ran.stderr == (
            f"arena: error: {path}: entrant 'helper': policy '{secret}' is a file, and a league"
            " file may name only a shipped policy (bluffer, honest, tracker) or a file the"
            " command line allows with --allow-policy PATH\n"
        )
        assert server.requests == [] and not carried(server)
        assert not db.exists()


@pytest.mark.parametrize(
    "helper",
    [
        # the seat spec as one string
        '"openai:{secret}?model=m&base_url={url}/v1"',
        # a path relative to the working directory, and one under ~
        '{{ seat = "openai", policy = "home/secret-file", model = "m", base_url = "{url}/v1" }}',
        '{{ seat = "openai", policy = "~/secret-file", model = "m", base_url = "{url}/v1" }}',
        # a Claude entrant takes a policy the same way
        '{{ seat = "claude", policy = "{secret}", model = "claude-haiku-4-5" }}',
        # a shipped policy's file is still a path: policies/honest.md may be a local file
        '{{ seat = "openai", policy = "policies/honest.md", model = "m", base_url = "{url}/v1" }}',
    ],
)
def test_every_spelling_of_a_file_is_refused_naming_the_entrant(tmp_path, secret, helper):
    with ChatServer("vllm") as server:
        entrant = helper.format(secret=secret, url=server.url)
        path = league_file(tmp_path, entrant)
        clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
        ran = subprocess.run(
            ["arena", "league", "run", str(path), "--db", str(tmp_path / "x.sqlite")],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env={**clean, "HOME": str(secret.parent)},
        )
        assert ran.returncode == 2
        assert ran.stderr.startswith(f"arena: error: {path}: entrant 'helper': policy '")
        assert ran.stderr.count("\n") == 1 and "--allow-policy PATH" in ran.stderr
        assert server.requests == []


def test_the_file_the_command_line_allows_plays(tmp_path, secret):
    """Allowed by the flag, the same file is the seat's policy: its text goes to the server
    the user chose, as it does for ``--seat openai:PATH``. The flag names the file by any
    path to it (here relative to the working directory, the league file's absolute)."""
    with ChatServer("vllm") as server:
        helper = (
            f'{{ seat = "openai", policy = "{secret}", model = "m", base_url = "{server.url}/v1" }}'
        )
        path = league_file(tmp_path, helper)
        db = tmp_path / "allowed.sqlite"
        allowed = "home/../home/secret-file"
        ran = arena(
            "league", "run", str(path), "--db", str(db), "--allow-policy", allowed, "--json",
            cwd=tmp_path,
        )  # fmt: skip
        assert ran.returncode == 0, ran.stderr
        assert server.completions and carried(server)
        assert db.exists()


def test_allowing_another_file_does_not_allow_this_one(tmp_path, secret):
    other = tmp_path / "mine.md"
    other.write_text("Play honestly.\n", encoding="utf-8")
    with ChatServer("vllm") as server:
        helper = (
            f'{{ seat = "openai", policy = "{secret}", model = "m", base_url = "{server.url}/v1" }}'
        )
        path = league_file(tmp_path, helper)
        ran = arena(
            "league", "run", str(path), "--db", str(tmp_path / "x.sqlite"),
            "--allow-policy", str(other),
            cwd=tmp_path,
        )  # fmt: skip
        assert ran.returncode == 2 and "entrant 'helper': policy '" in ran.stderr
        assert server.requests == []


def test_a_shipped_policy_needs_no_flag(tmp_path):
    with ChatServer("vllm") as server:
        helper = (
            f'{{ seat = "openai", policy = "tracker", model = "m", base_url = "{server.url}/v1" }}'
        )
        path = league_file(tmp_path, helper)
        ran = arena("league", "run", str(path), "--db", str(tmp_path / "s.sqlite"), cwd=tmp_path)
        assert ran.returncode == 0, ran.stderr
        assert server.completions


def test_allow_policy_is_for_a_league_file_only(tmp_path, secret):
    """With ``--pool`` the command line names its policies itself: the flag would be dropped."""
    ran = arena(
        "league", "run", "--pool", "bayes,pressure,random", "--allow-policy", str(secret),
        "--db", str(tmp_path / "p.sqlite"),
        cwd=tmp_path,
    )  # fmt: skip
    assert ran.returncode == 2
    assert ran.stderr == (
        "arena: error: --allow-policy lets a league file name a policy file; --pool names its own\n"
    )
