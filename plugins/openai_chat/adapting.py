"""How an ``openai:`` seat finds the request a server really takes, from what the server answers.

A seat starts with the forced ``act`` tool and the output cap in the field the
server is expected to honour, and moves only on evidence, each move once per
seat per episode, with one warning quoting the server's own words (bounded,
printable):

- **A refused shape** (:func:`refuses_shape`): HTTP 400, 422 or 501, as vLLM,
  llama.cpp and gateways answer a forced tool, tools or a JSON schema they do
  not take; or a 5xx whose words name the shape (``llama-server`` without
  ``--jinja`` answers any tools request with ``500 "tools param requires --jinja
  flag"``; llama-cpp-python refuses a ``json_schema`` format with a 500). Such a
  5xx is not retried (:data:`~arena_plugins.openai_chat.client.WIRE`): asking
  again gets the same answer. The seat takes the next shape and asks again.
- **An ignored forced choice** (:func:`ignored_forced_choice`): a forced
  ``tool_choice`` answered with no tool call. ``llama-server`` and ``transformers
  serve`` drop a ``tool_choice`` they cannot honour and say nothing, so ``auto``
  (what the server did anyway) is skipped: the seat goes to ``json_schema``,
  which those servers hold to the schema by grammar.
- **A shape that keeps failing** while the server answers: :data:`FAILURES_TO_MOVE`
  replies in a row that name no action (rule 11 would reject each). The seat takes
  the next shape.
- **A refused cap field** (:func:`other_cap_field`): OpenAI's reasoning models
  refuse ``max_tokens`` (``max_completion_tokens`` instead), while llama-cpp-python
  ignores ``max_completion_tokens``; a 400 or 422 naming the field sent moves the
  cap to the other field.
"""

from __future__ import annotations

import re

import openai

from arena_plugins.model_seat.reply_body import quoted, words

REFUSED_SHAPE = frozenset({400, 422, 501})
"""Statuses with which a server refuses what a request asks of it."""
FAILURES_TO_MOVE = 3
"""Replies in a row naming no action after which a seat leaves the shape that made them."""
CAP_FIELDS = ("max_completion_tokens", "max_tokens")

_NAMES_A_SHAPE = re.compile(
    r"tools?\b|tool_choice|response_format|json_schema|jinja|function.?call|grammar", re.I
)
"""Words with which a server's error names the request's shape."""


def server_words(error: BaseException) -> str:
    """The server's own words for an error (OpenAI's ``error.message``, or a bare
    ``message``/``detail``/``error`` as other servers send), stripped."""
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            text = inner.get("message") or inner.get("detail")
            if isinstance(text, str):
                return text.strip()
        if isinstance(inner, str):
            return inner.strip()
    if isinstance(body, str):
        return body.strip()
    return ""


def refuses_shape(error: BaseException | None) -> bool:
    """Whether ``error`` is a server refusing the request's shape (see the module)."""
    if not isinstance(error, openai.APIStatusError):
        return False
    if error.status_code in REFUSED_SHAPE:
        return True
    return error.status_code >= 500 and bool(_NAMES_A_SHAPE.search(server_words(error)))


def other_cap_field(error: BaseException | None, sent: str) -> str | None:
    """The cap field to send instead of ``sent`` when ``error`` refuses it by name."""
    if not isinstance(error, openai.APIStatusError) or error.status_code not in (400, 422):
        return None
    if sent not in server_words(error):
        return None
    return next(field for field in CAP_FIELDS if field != sent)


def why(error: BaseException) -> str:
    """The server's words for a refusal as a warning quotes them."""
    said = words(server_words(error))
    status = getattr(error, "status_code", "?")
    return f"HTTP {status}: {said}" if said else f"HTTP {status}"


def ignored_forced_choice(content: str) -> str:
    """The warning's reason for a forced ``tool_choice`` answered with no tool call."""
    return f"a forced tool_choice was answered with no tool call: {quoted(content)}"
