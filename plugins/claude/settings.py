"""What configures a Claude seat: its ``--seat`` spec and the environment.

``claude:POLICY[?model=M&thinking=adaptive|off&effort=E&max_tokens=N&timeout=S&max_reply_bytes=B]``:
POLICY is a shipped policy name or a prompt file (:mod:`arena_policies`); the
query overrides, for this seat only, the defaults the environment sets for every
Claude seat. What a model takes (its thinking modes, effort levels, output
limit) is checked here against its :class:`~arena_plugins.claude.models.ModelRules`,
as the Models API gave them (or the shipped table). No sampling parameter is
settable: current models refuse ``temperature`` with a 400.
Retry bounds are table-wide and come from the environment only (the model-seat
core's, under :data:`RETRY_PREFIX`). Every bad value is a one-line error naming
the variable or setting.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from arena_plugins.claude.models import ADAPTIVE, ModelRules, shipped_rules
from arena_plugins.model_seat.retries import BOUND_SETTINGS, RetryBounds, number
from arena_plugins.model_seat.retries import retry_bounds as core_retry_bounds
from arena_plugins.model_seat.spec import split_arg

API_KEY_ENV = "ANTHROPIC_API_KEY"
"""Where the key is read from; named here, away from the SDK, so a league can check for
it without importing anthropic."""

DEFAULT_MODEL = "claude-sonnet-4-6"
DEFAULT_MAX_TOKENS = 1024
THINKING_MAX_TOKENS = 16_000
"""The default with thinking on: ``max_tokens`` bounds the thinking and the tool call together,
and a reply cut off before its tool call is an unparseable one."""

MODEL_ENV = "ARENA_CLAUDE_MODEL"
THINKING_ENV = "ARENA_CLAUDE_THINKING"
EFFORT_ENV = "ARENA_CLAUDE_EFFORT"
MAX_TOKENS_ENV = "ARENA_CLAUDE_MAX_TOKENS"
RETRY_PREFIX = "ARENA_CLAUDE"
"""The retry bounds' variables (:func:`arena_plugins.model_seat.retries.retry_bounds`):
``ARENA_CLAUDE_TIMEOUT``, ``_RETRY_ATTEMPTS``, ``_RETRY_SECONDS``, ``_BACKOFF``."""


@attrs.frozen
class ModelSettings:
    """How one seat calls the model."""

    model: str = DEFAULT_MODEL
    max_tokens: int | None = None
    """As set; ``None``: the default of the thinking mode (:attr:`request_max_tokens`)."""
    thinking: str = "off"
    """``adaptive`` (thinking, ``tool_choice: auto``) or ``off``."""
    effort: str | None = None
    """``output_config.effort``; sent only when set (the model's default applies)."""
    off_type: str = "disabled"
    """The ``thinking.type`` sent with thinking off: ``disabled`` (the tool forced) or
    ``between_tools`` (the choice left to the model)."""
    strict: bool = False
    """Send the tool's schema strict (the model takes structured outputs)."""
    limit: int | None = None
    """The model's own ``max_tokens`` limit, if known: a default never exceeds it."""

    @property
    def request_max_tokens(self) -> int:
        """What a request sends: the setting, else the default for the thinking mode
        (which a seat that adapts its mode mid-episode must follow) within the model's limit."""
        if self.max_tokens is not None:
            return self.max_tokens
        default = THINKING_MAX_TOKENS if self.thinking == ADAPTIVE else DEFAULT_MAX_TOKENS
        return min(default, self.limit) if self.limit is not None else default


SETTINGS = ("model", "thinking", "effort", "max_tokens", *BOUND_SETTINGS)
"""What a seat spec's query may set."""


@attrs.frozen
class SeatArg:
    """A parsed ``claude:`` argument: the policy reference and per-seat overrides."""

    policy: str
    overrides: Mapping[str, str]


def parse_arg(arg: str | None) -> SeatArg:
    policy, overrides = split_arg(
        arg, SETTINGS, "a Claude seat needs a policy: claude:NAME or claude:PATH"
    )
    return SeatArg(policy=policy, overrides=overrides)


def model_of(arg: str | None, environ: Mapping[str, str]) -> str:
    """The model a seat of ``claude:ARG`` calls under ``environ``: what a league prices."""
    return chosen_model(parse_arg(arg).overrides, environ)


def _pick(
    overrides: Mapping[str, str], environ: Mapping[str, str], key: str, env: str
) -> tuple[str | None, str]:
    """A setting's value, the seat's own over the environment's, and where it came from."""
    if key in overrides:
        return overrides[key], key
    return environ.get(env) or None, env


def chosen_model(overrides: Mapping[str, str], environ: Mapping[str, str]) -> str:
    """The model a seat calls, before anything is checked against its rules."""
    model, _ = _pick(overrides, environ, "model", MODEL_ENV)
    if model is not None and not model.strip():
        raise ValueError("model must not be empty")
    return (model or DEFAULT_MODEL).strip()


def model_settings(
    overrides: Mapping[str, str], environ: Mapping[str, str], rules: ModelRules | None = None
) -> ModelSettings:
    """Per-seat overrides on top of the environment on top of the defaults, checked against
    the model's ``rules`` (the shipped table's when ``None``: a seat that asks no API)."""
    model = chosen_model(overrides, environ)
    max_tokens, max_tokens_name = _pick(overrides, environ, "max_tokens", MAX_TOKENS_ENV)
    thinking, thinking_name = _pick(overrides, environ, "thinking", THINKING_ENV)
    effort, effort_name = _pick(overrides, environ, "effort", EFFORT_ENV)
    rules = rules or shipped_rules(model)
    settings = ModelSettings(
        model=model,
        max_tokens=number(max_tokens, max_tokens_name, int, None, low=1),
        thinking=rules.check(_word(thinking), _word(effort), names=(thinking_name, effort_name)),
        effort=_word(effort),
        off_type=rules.off_type or "disabled",
        strict=rules.structured_outputs,
        limit=rules.max_tokens,
    )
    rules.check_max_tokens(settings.request_max_tokens)
    return settings


def _word(text: str | None) -> str | None:
    """A setting's word, lower case; ``None`` when unset or blank."""
    if text is None:
        return None
    return text.strip().lower() or None


def retry_bounds(environ: Mapping[str, str], overrides: Mapping[str, str]) -> RetryBounds:
    """The bounds the ``ARENA_CLAUDE_*`` variables set (the core's, under this prefix), the
    seat's own ``timeout=`` and ``max_reply_bytes=`` first."""
    return core_retry_bounds(environ, RETRY_PREFIX, overrides)
