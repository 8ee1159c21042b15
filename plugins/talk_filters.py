"""First-party talk filters: clean, cap and quote every line of table talk (rule 10).

At a table of LLM seats, talk is the attack surface: one model's ``say`` lands in
every other model's next prompt. The filters run in ``order`` before anything
is published:

- ``control-chars`` (10) removes control, format and other invisible characters
  (newlines, zero-width joiners, bidi overrides) so a line cannot fake a new
  prompt section or hide text; line breaks become spaces.
- ``length-cap`` (20) keeps at most :data:`TALK_CAP` characters.
- ``quote`` (1000, after any third-party filter) turns the line into a JSON
  string literal, so a prompt shows it as quoted data with its own quotes and
  backslashes escaped: it cannot close its quotation and pose as instructions.

The log keeps what the seat said and what was published.
"""

from __future__ import annotations

import json
import unicodedata

from arena import hookimpl

TALK_CAP = 280
"""Characters of one published line; longer lines are cut and end with an ellipsis."""

ELLIPSIS = "…"
_INVISIBLE = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
"""Unicode categories no reader can see: controls, format marks, surrogates,
private use, unassigned, and the line/paragraph separators."""


def strip_control(text: str, speaker: int) -> str | None:
    """The line without invisible characters, whitespace collapsed; ``None`` if nothing is left."""
    kept = "".join(" " if _is_break(ch) else ch for ch in text if not _is_hidden(ch))
    cleaned = " ".join(kept.split())
    return cleaned or None


def cap_length(text: str, speaker: int) -> str:
    """At most :data:`TALK_CAP` characters, the cut marked with an ellipsis."""
    if len(text) <= TALK_CAP:
        return text
    return text[: TALK_CAP - len(ELLIPSIS)].rstrip() + ELLIPSIS


def quote(text: str, speaker: int) -> str:
    """The line as a JSON string literal: quoted data, never a prompt's own words."""
    return json.dumps(text, ensure_ascii=False)


def _is_break(ch: str) -> bool:
    return ch in "\t\n\r\v\f\x85\u2028\u2029"


def _is_hidden(ch: str) -> bool:
    return not _is_break(ch) and unicodedata.category(ch) in _INVISIBLE


@hookimpl
def register_talk_filters(register):
    register("control-chars", strip_control, order=10)
    register("length-cap", cap_length, order=20)
    register("quote", quote, order=1000)
