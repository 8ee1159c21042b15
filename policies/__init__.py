"""The policy library: prompt files that tell a Claude seat how to play.

A policy is a markdown file with a short front-matter (``name``, ``author``,
``description``) between ``---`` lines, then the prompt itself. The ones that
ship live in this directory, installed as the package ``arena_policies`` (a
bare ``policies`` import would collide with other projects), so that
``claude:honest`` and ``claude:policies/honest.md`` work from a fresh clone and
from an installed wheel alike. Any other path names a user's own file.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import attrs

SUFFIX = ".md"
NOT_POLICIES = frozenset({"README.md"})
FRONT_MATTER_KEYS = ("name", "author", "description")


class PolicyError(ValueError):
    """A policy that cannot be found or read; the message is one line for the user."""


@attrs.frozen
class Policy:
    """One policy prompt and what its front-matter says about it."""

    name: str
    author: str
    description: str
    prompt: str
    """The markdown after the front-matter: what the seat is told."""
    source: str
    """Where it came from: ``policies/<file>`` for a shipped policy, else the path given."""


def shipped() -> list[Policy]:
    """Every policy that ships with the arena, by file name."""
    folder = resources.files(__name__)
    files = sorted(
        (entry for entry in folder.iterdir() if _is_policy_file(entry.name)),
        key=lambda entry: entry.name,
    )
    return [parse(entry.read_text(encoding="utf-8"), f"policies/{entry.name}") for entry in files]


def resolve(ref: str) -> Policy:
    """The policy a ``claude:REF`` seat names: a shipped name, or a path to a prompt file.

    ``policies/<file>.md`` (or just ``<file>.md``) falls back to the shipped copy
    when no such file is under the working directory, so the same command works
    outside a clone.
    """
    ref = ref.strip()
    if not ref:
        raise PolicyError("no policy given: use claude:NAME or claude:PATH (see `arena policies`)")
    if not names_a_file(ref):
        return _shipped_named(ref)
    path = Path(ref).expanduser()
    if path.is_file():
        try:
            return parse(path.read_text(encoding="utf-8"), ref)
        except (OSError, UnicodeDecodeError) as exc:
            raise PolicyError(f"cannot read policy {ref}: {exc}") from None
    if path.parent.name in ("", "policies") and _is_policy_file(path.name):
        for policy in shipped():
            if policy.source == f"policies/{path.name}":
                return policy
    raise PolicyError(f"policy file not found: {ref}")


def names_a_file(ref: str) -> bool:
    """Whether :func:`resolve` reads ``ref`` as a path (it may read that file), rather than
    as a shipped policy's name (it reads only the arena's own files). A league file, which
    people share, may name a file only where the command line allows it: it asks here."""
    ref = ref.strip()
    return "/" in ref or "\\" in ref or ref.endswith(SUFFIX)


def parse(text: str, source: str) -> Policy:
    """A policy from its file text; a file without front-matter is all prompt."""
    meta: dict[str, str] = {}
    body = text
    lines = text.splitlines(keepends=True)
    if lines and lines[0].strip() == "---":
        end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), None)
        if end is None:
            raise PolicyError(f"{source}: front-matter opened with --- is never closed")
        for line in lines[1:end]:
            key, sep, value = line.partition(":")
            if sep and key.strip() in FRONT_MATTER_KEYS:
                meta[key.strip()] = value.strip()
        body = "".join(lines[end + 1 :])
    prompt = body.strip()
    if not prompt:
        raise PolicyError(f"{source}: the policy prompt is empty")
    return Policy(
        name=meta.get("name") or Path(source).stem,
        author=meta.get("author", ""),
        description=meta.get("description", ""),
        prompt=prompt,
        source=source,
    )


def _shipped_named(name: str) -> Policy:
    policies = shipped()
    for policy in policies:
        if name in (policy.name, Path(policy.source).stem):
            return policy
    known = ", ".join(policy.name for policy in policies) or "none shipped"
    raise PolicyError(f"unknown policy {name!r} (shipped: {known}; or give a path to a .md file)")


def _is_policy_file(name: str) -> bool:
    return name.endswith(SUFFIX) and name not in NOT_POLICIES
