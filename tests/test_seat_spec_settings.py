"""A setting given twice in a model seat's spec is one error line, through ``arena play``.

Issue 40, item 3: ``model=a&model=b`` (or two ``base_url``s) used to take the last value
silently, while a person reading the spec sees the first. Each case here goes through the
real ``arena`` command, against loopback servers that record every request: the spec is
refused before any request, in one ``arena: error:`` line naming the seat and the setting.
"""

from __future__ import annotations

import os
import subprocess

import pytest
from chat_server import ChatServer

pytestmark = pytest.mark.slow


def arena(*args: str) -> subprocess.CompletedProcess:
    """The real command, with no model key or base URL from the caller's environment."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    return subprocess.run(["arena", *args], capture_output=True, text=True, env=clean)


def play(spec: str) -> subprocess.CompletedProcess:
    return arena("play", "--seat", spec, "--seat", "bayes", "--deals", "1")


@pytest.mark.parametrize(
    ("spec", "setting"),
    [
        ("openai:honest?model=a&model=b", "model"),
        ("claude:honest?model=x&model=y", "model"),
        ("claude:honest?effort=low&model=x&effort=high", "effort"),
    ],
)
def test_a_setting_given_twice_is_one_error_line(spec, setting):
    played = play(spec)
    assert played.returncode == 2
    assert played.stderr == (
        f"arena: error: seat 0 ({spec}): setting {setting} given more than once:"
        " give each setting once\n"
    )
    assert played.stdout == ""


def test_two_base_urls_reach_neither_server():
    """The case that matters: the reader sees the first server, a dict kept the second."""
    with ChatServer("vllm") as first, ChatServer("vllm") as second:
        spec = f"openai:honest?model=m&base_url={first.url}/v1&base_url={second.url}/v1"
        played = play(spec)
        assert played.returncode == 2
        assert played.stderr.count("\n") == 1
        assert played.stderr.startswith("arena: error: seat 0 (openai:honest?model=m&base_url=")
        assert "setting base_url given more than once" in played.stderr
        assert first.requests == [] and second.requests == []


def test_the_same_spec_with_each_setting_once_plays():
    """The control: the refusal is the repeat's, not the spec's."""
    with ChatServer("vllm") as server:
        played = play(f"openai:honest?model=m&base_url={server.url}/v1")
        assert played.returncode == 0, played.stderr
        assert server.completions  # the seat asked its model
