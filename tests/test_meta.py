"""Meta-tests (as datasette has): every hookspec is exercised by a test and documented.

A hook nobody tests can rot unseen, and a hook missing from docs/plugins.md
does not exist for a plugin author.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from arena import hookspecs

TESTS = Path(__file__).parent
PLUGIN_DOCS = TESTS.parent / "docs" / "plugins.md"
HOOKS = sorted(name for name, spec in vars(hookspecs).items() if hasattr(spec, "arena_spec"))


def signature(name: str) -> str:
    return f"{name}{inspect.signature(getattr(hookspecs, name))}"


def test_there_are_hookspecs_to_check():
    assert len(HOOKS) >= 4 and "register_seats" in HOOKS
    assert signature("register_seats") == "register_seats(register)"


@pytest.mark.parametrize("hook", HOOKS)
def test_every_hookspec_is_exercised_by_a_test(hook):
    sources = [p for p in TESTS.rglob("*.py") if p.resolve() != Path(__file__).resolve()]
    users = [p.relative_to(TESTS) for p in sources if hook in p.read_text(encoding="utf-8")]
    assert users, f"no test outside {Path(__file__).name} mentions {hook}"


@pytest.mark.parametrize("hook", HOOKS)
def test_every_hookspec_signature_is_documented(hook):
    assert PLUGIN_DOCS.exists(), "docs/plugins.md is missing"
    assert signature(hook) in PLUGIN_DOCS.read_text(encoding="utf-8")
