"""The policy library: shipped prompts, how a ``claude:`` spec finds one, ``arena policies``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import structlog

from arena.cli import main
from arena_policies import PolicyError, parse, resolve, shipped

REPO_POLICIES = Path(__file__).resolve().parent.parent / "policies"


def test_at_least_three_distinct_policies_ship_with_front_matter():
    policies = shipped()
    names = {p.name for p in policies}
    assert {"honest", "bluffer", "tracker"} <= names
    assert len({p.prompt for p in policies}) == len(policies)  # all different prompts
    for policy in policies:
        assert policy.author and policy.description
        assert not policy.prompt.startswith("---")  # front-matter is not part of the prompt
        assert len(policy.prompt) > 500  # a real policy, not a placeholder


def test_the_shipped_policies_are_the_files_in_policies_dir():
    on_disk = sorted(p.name for p in REPO_POLICIES.glob("*.md") if p.name != "README.md")
    assert [Path(p.source).name for p in shipped()] == on_disk


def test_policies_play_differently_on_talk_and_notes():
    by_name = {p.name: p.prompt for p in shipped()}
    assert "Do not write notes and do not say anything" in by_name["honest"]
    assert "Talk" in by_name["bluffer"] and "say something" in by_name["bluffer"]
    assert "notes" in by_name["tracker"] and "sN: bids B, false F" in by_name["tracker"]


@pytest.mark.parametrize("ref", ["honest", "policies/honest.md", "honest.md"])
def test_a_shipped_policy_resolves_by_name_or_path_from_anywhere(tmp_path, monkeypatch, ref):
    monkeypatch.chdir(tmp_path)  # no policies/ here: the shipped copy answers
    policy = resolve(ref)
    assert policy.name == "honest"
    assert policy.source == "policies/honest.md"


def test_a_local_file_wins_over_the_shipped_one(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "honest.md").write_text("---\nname: mine\n---\nMy own honest.\n")
    assert resolve("policies/honest.md").prompt == "My own honest."


def test_any_path_names_a_users_own_policy(tmp_path):
    path = tmp_path / "calm.md"
    path.write_text("---\nname: calm\nauthor: me\ndescription: Stays calm.\n---\n\nBe calm.\n")
    policy = resolve(str(path))
    assert (policy.name, policy.author, policy.description, policy.prompt) == (
        "calm",
        "me",
        "Stays calm.",
        "Be calm.",
    )


def test_a_file_without_front_matter_is_all_prompt_named_after_the_file():
    policy = parse("Just play.\n", "somewhere/plain.md")
    assert (policy.name, policy.prompt, policy.author) == ("plain", "Just play.", "")


@pytest.mark.parametrize(
    ("ref", "fragment"),
    [
        ("nosuch", "unknown policy 'nosuch' (shipped: bluffer, honest, tracker"),
        ("policies/nosuch.md", "policy file not found: policies/nosuch.md"),
        ("/definitely/not/here.md", "policy file not found"),
        ("", "no policy given"),
    ],
)
def test_a_missing_policy_is_a_one_line_error(ref, fragment):
    with pytest.raises(PolicyError) as caught:
        resolve(ref)
    assert fragment in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [("---\nname: x\nnever closed\n", "never closed"), ("---\nname: x\n---\n   \n", "empty")],
)
def test_a_broken_policy_file_is_refused(text, fragment):
    with pytest.raises(PolicyError, match=fragment):
        parse(text, "bad.md")


@pytest.fixture
def cli():
    """``arena.cli.main``; afterwards structlog's defaults, not the CLI's captured stderr."""
    yield main
    structlog.reset_defaults()


def test_arena_policies_lists_them(capsys, cli):
    assert cli(["policies", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [row["name"] for row in rows] == [p.name for p in shipped()]
    assert set(rows[0]) == {"name", "file", "author", "description"}
    assert cli(["policies"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in ("honest", "bluffer", "tracker"))
