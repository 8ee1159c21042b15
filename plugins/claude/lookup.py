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
  (:func:`~arena_plugins.claude.models.shipped_rules`), and one warning saying so.
"""

from __future__ import annotations

import threading

import anthropic
import attrs

from arena.logs import get_logger
from arena_plugins.claude.models import EFFORTS, THINKING_TYPES, ModelRules, shipped_rules

log = get_logger(__name__)


class ModelRefused(ValueError):
    """The model cannot be played: unknown to the Models API, or retired."""


_LOCK = threading.Lock()
_ANSWERS: dict[tuple[str | None, str, str], ModelRules | str] = {}
"""Per key, base URL and model: its rules, or why it is refused."""


def model_rules(client: anthropic.Anthropic, model: str) -> ModelRules:
    """``model``'s rules, asked of the Models API once per process for each key and base URL;
    raises :class:`ModelRefused` for a model that cannot be played."""
    key = (client.api_key, str(client.base_url), model)
    with _LOCK:  # tables starting together in threads ask once, not once each
        if key not in _ANSWERS:
            _ANSWERS[key] = _ask(client, model)
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


def _ask(client: anthropic.Anthropic, model: str) -> ModelRules | str:
    try:
        info = client.models.retrieve(model)
    except anthropic.NotFoundError:
        if _models_api_answers(client):
            return f"unknown model {model!r}: the Models API does not list it"
        return _offline(model, "the Models API answers 404 here")
    except anthropic.AuthenticationError as error:
        return f"the Models API refused the key for {model!r}: HTTP {error.status_code}"
    except anthropic.APIStatusError as error:
        return _offline(model, f"the Models API answered HTTP {error.status_code}")
    except anthropic.APIConnectionError:
        return _offline(model, "the Models API could not be reached")
    rules = rules_of(info)
    if rules.lifecycle == "retired":
        return f"{model} is retired: requests naming it fail (choose another model)"
    if rules.lifecycle == "deprecated":
        log.warning("claude model deprecated", model=model, retires_at=rules.retires_at or "unset")
    return rules


def _models_api_answers(client: anthropic.Anthropic) -> bool:
    """Whether the Models API is served here at all: a 404 for one model is then an
    unknown model, not a gateway without the endpoint."""
    try:
        client.models.list(limit=1)
    except anthropic.APIError:
        return False
    return True


def _offline(model: str, why: str) -> ModelRules:
    rules = shipped_rules(model)
    known = "known" if rules.max_tokens is not None else "unknown there: the safe shape"
    log.warning("claude model rules from the shipped table", model=model, table=known, why=why)
    return rules


def rules_of(info: anthropic.types.ModelInfo) -> ModelRules:
    """A ``ModelInfo`` as the seat's rules; one without capabilities keeps the shipped
    table's, with the lifecycle the API gave."""
    retires_at = info.retires_at.date().isoformat() if info.retires_at else None
    where = {"lifecycle": info.lifecycle, "retires_at": retires_at}
    caps = info.capabilities
    if caps is None:
        return attrs.evolve(shipped_rules(info.id), **where)
    types = caps.thinking.types
    effort = caps.effort
    return ModelRules(
        model=info.id,
        thinking_types=frozenset(kind for kind in THINKING_TYPES if getattr(types, kind).supported),
        efforts=tuple(
            level
            for level in EFFORTS
            if effort.supported and getattr(effort, level) and getattr(effort, level).supported
        ),
        max_tokens=info.max_tokens,
        structured_outputs=caps.structured_outputs.supported,
        **where,
    )
