"""A model's rules from the Models API (``client.models.retrieve``), asked once per process.

Before a table's first Messages call, each Claude seat's model is looked up with the
seat's own client (its key and base URL), and the answer is kept for the process:
every later seat, table and episode on that model reuses it. The answer is the
API's ``ModelInfo`` read into :class:`~arena_plugins.claude.models.ModelRules`.

What can come back, and what the seat makes of it:

- an active model: its rules;
- a deprecated one: its rules, and one warning naming its ``retires_at`` date;
- a retired one, or a 404 from a Models API that answers (its list does): a
  :class:`ModelRefused`, which the CLI reports as one error line before any
  Messages call is paid for;
- no Models API at all (a 404 for the list too: a gateway that forwards only
  ``/v1/messages``; a connection error; a server error): the shipped table
  (:func:`~arena_plugins.claude.models.shipped_rules`), and one warning saying so;
- an answer the seat cannot use (not JSON, a field of the wrong type, a
  ``max_tokens`` below 1, no known thinking type): the shipped table, and one
  warning naming the field. The answer is read from its raw JSON, every field
  the seat uses checked: the SDK builds its ``ModelInfo`` without validating it,
  so a ``null`` there was a traceback. An unknown ``lifecycle`` is played as
  active, with a warning naming it.

The call is bounded like a Messages call (:mod:`~arena_plugins.model_seat.bounded`).
"""

from __future__ import annotations

import datetime
import threading
from typing import Any

import anthropic
import attrs

from arena.logs import get_logger
from arena_plugins.claude.models import EFFORTS, THINKING_TYPES, ModelRules, shipped_rules
from arena_plugins.model_seat.bounded import CallFault, bounded_call
from arena_plugins.model_seat.reply_body import UnreadableReply, decode, field, quoted
from arena_plugins.model_seat.retries import RetryBounds

log = get_logger(__name__)


DEFAULT_BOUNDS = RetryBounds()


class ModelRefused(ValueError):
    """The model cannot be played: unknown to the Models API, or retired."""


_LOCK = threading.Lock()
_ANSWERS: dict[tuple[str | None, str, str], ModelRules | str] = {}
"""Per key, base URL and model: its rules, or why it is refused."""


def model_rules(
    client: anthropic.Anthropic, model: str, bounds: RetryBounds = DEFAULT_BOUNDS
) -> ModelRules:
    """``model``'s rules, asked of the Models API once per process for each key and base URL;
    raises :class:`ModelRefused` for a model that cannot be played."""
    key = (client.api_key, str(client.base_url), model)
    with _LOCK:  # tables starting together in threads ask once, not once each
        if key not in _ANSWERS:
            _ANSWERS[key] = _ask(client, model, bounds)
    answer = _ANSWERS[key]
    if isinstance(answer, str):
        raise ModelRefused(answer)
    return answer


def forget_answers() -> None:
    """Drop every kept answer, so the next seat asks again: a process that outlives a
    model's lifecycle change (a long ``arena serve``), or a test whose loopback API is on a
    port an earlier one used."""
    with _LOCK:
        _ANSWERS.clear()


def _ask(client: anthropic.Anthropic, model: str, bounds: RetryBounds) -> ModelRules | str:
    def retrieve() -> dict[str, Any]:
        raw = client.models.with_raw_response.retrieve(model)
        return decode(raw.http_response.content)

    try:
        rules = rules_of(bounded_call(retrieve, bounds.timeout, bounds.max_reply_bytes), model)
    except anthropic.NotFoundError:
        if _models_api_answers(client, bounds):
            return f"unknown model {model!r}: the Models API does not list it"
        return _offline(model, "the Models API answers 404 here")
    except anthropic.AuthenticationError as error:
        return f"the Models API refused the key for {model!r}: HTTP {error.status_code}"
    except anthropic.APIStatusError as error:
        return _offline(model, f"the Models API answered HTTP {error.status_code}")
    except anthropic.APIConnectionError:
        return _offline(model, "the Models API could not be reached")
    except CallFault as fault:
        return _offline(model, f"the Models API's answer is not usable: {fault}")
    if rules.lifecycle == "retired":
        return f"{model} is retired: requests naming it fail (choose another model)"
    if rules.lifecycle == "deprecated":
        log.warning("claude model deprecated", model=model, retires_at=rules.retires_at or "unset")
    return rules


def _models_api_answers(client: anthropic.Anthropic, bounds: RetryBounds) -> bool:
    """Whether the Models API is served here at all: a 404 for one model is then an
    unknown model, not a gateway without the endpoint."""
    try:
        bounded_call(
            lambda: client.models.with_raw_response.list(limit=1),
            bounds.timeout,
            bounds.max_reply_bytes,
        )
    except (anthropic.APIError, CallFault):
        return False
    return True


def _offline(model: str, why: str) -> ModelRules:
    rules = shipped_rules(model)
    known = "known" if rules.max_tokens is not None else "unknown there: the safe shape"
    log.warning("claude model rules from the shipped table", model=model, table=known, why=why)
    return rules


LIFECYCLES = ("active", "deprecated", "retired")


def rules_of(info: dict[str, Any], model: str) -> ModelRules:
    """A ``ModelInfo``'s JSON as the seat's rules, each field the seat uses checked
    (:class:`~arena_plugins.model_seat.reply_body.UnreadableReply` naming the first that is
    not usable); one without capabilities keeps the shipped table's, with the lifecycle the
    API gave."""
    model = field(info, "id", str, optional=True) or model
    lifecycle = field(info, "lifecycle", str, optional=True) or "active"
    if lifecycle not in LIFECYCLES:
        log.warning("claude model lifecycle unknown", model=model, lifecycle=quoted(lifecycle))
        lifecycle = "active"
    where = {"lifecycle": lifecycle, "retires_at": _date(info, model)}
    caps = field(info, "capabilities", dict, optional=True)
    if caps is None:
        return attrs.evolve(shipped_rules(model), **where)
    max_tokens = field(info, "max_tokens", int)
    if max_tokens < 1:
        raise UnreadableReply(f"max_tokens is {max_tokens}, below 1")
    types = field(info, "capabilities.thinking.types", dict)
    thinking = {kind for kind in THINKING_TYPES if _supported(types, kind)}
    if not thinking:
        raise UnreadableReply(f"capabilities.thinking.types names none of {THINKING_TYPES}")
    effort = field(info, "capabilities.effort", dict)
    efforts = (
        tuple(level for level in EFFORTS if _supported(effort, level))
        if field(info, "capabilities.effort.supported", bool)
        else ()
    )
    return ModelRules(
        model=model,
        thinking_types=frozenset(thinking),
        efforts=efforts,
        max_tokens=max_tokens,
        structured_outputs=field(info, "capabilities.structured_outputs.supported", bool),
        **where,
    )


def _supported(capabilities: dict[str, Any], name: str) -> bool:
    """Whether ``capabilities[name]`` says it is supported; an absent one is not."""
    return field(capabilities, f"{name}.supported", bool, optional=True) is True


def _date(info: dict[str, Any], model: str) -> str | None:
    """``retires_at`` as ``YYYY-MM-DD``; ``None`` (with a warning) where it is no date."""
    when = info.get("retires_at")
    if when is None:
        return None
    try:
        return datetime.datetime.fromisoformat(str(when).replace("Z", "+00:00")).date().isoformat()
    except ValueError:
        log.warning("claude model retires_at is no date", model=model, retires_at=quoted(str(when)))
        return None
