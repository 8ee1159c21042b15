"""What each Claude model accepts, in one table, and the request shape a seat sends it.

The Messages API's rules differ by model family (the API documentation's
models overview, adaptive thinking and effort pages):

- Opus 4.7 and 4.8, Mythos Preview and the 5-series (Mythos, Fable, Opus,
  Sonnet) think adaptively or not at all: ``thinking.type`` ``enabled`` and
  ``disabled`` are 400s, and thinking cannot be turned off;
- Opus 4.6 and Sonnet 4.6 take ``adaptive``, the deprecated ``enabled`` and
  ``disabled``;
- Opus 4.5, Sonnet 4.5 and Haiku 4.5 take ``enabled`` (with ``budget_tokens``)
  or no thinking; of them only Opus 4.5 takes ``output_config.effort``, without
  ``max``.

A seat thinks adaptively (``thinking=adaptive``) or not at all (``off``). A
thinking request cannot force a tool (a 400), so it offers ``act`` with
``tool_choice: auto`` and the prompt asks for it; with thinking off the tool is
forced. A model the table does not know gets the safe shape, adaptive and
``auto``, which every current model takes; if the API refuses it, the seat
adapts once (:func:`adapted_after`).
"""

from __future__ import annotations

import attrs

ADAPTIVE = "adaptive"
OFF = "off"
THINKING_MODES = (ADAPTIVE, OFF)
EFFORTS = ("low", "medium", "high", "max")
"""The ``output_config.effort`` levels a seat spec may ask for."""


@attrs.frozen
class ModelFacts:
    """What one model family accepts."""

    family: str
    """The model-ID prefix: ``claude-opus-4-7`` matches ``claude-opus-4-7`` and
    ``claude-opus-4-7-20260416``."""
    thinking: tuple[str, ...]
    """The seat's thinking modes the model takes (``adaptive``, ``off``), default first."""
    max_output: int | None
    """``max_tokens`` may not exceed this (``None``: unknown, not checked here)."""
    efforts: tuple[str, ...]
    """The effort levels it takes; empty: it takes no ``output_config.effort``."""

    @property
    def default_thinking(self) -> str:
        return self.thinking[0]


_ADAPTIVE_ONLY = ((ADAPTIVE,), 128_000, EFFORTS)
_HYBRID = ((ADAPTIVE, OFF), 128_000, EFFORTS)
MODELS: dict[str, ModelFacts] = {
    family: ModelFacts(family, *facts)
    for family, facts in (
        ("claude-mythos-5", _ADAPTIVE_ONLY),
        ("claude-mythos-preview", _ADAPTIVE_ONLY),
        ("claude-fable-5", _ADAPTIVE_ONLY),
        ("claude-opus-5", _ADAPTIVE_ONLY),
        ("claude-sonnet-5", _ADAPTIVE_ONLY),
        ("claude-opus-4-8", _ADAPTIVE_ONLY),
        ("claude-opus-4-7", _ADAPTIVE_ONLY),
        ("claude-opus-4-6", _HYBRID),
        ("claude-sonnet-4-6", _HYBRID),
        ("claude-opus-4-5", ((OFF,), 64_000, ("low", "medium", "high"))),
        ("claude-sonnet-4-5", ((OFF,), 64_000, ())),
        ("claude-haiku-4-5", ((OFF,), 64_000, ())),
    )
}
"""Every model family the seat knows, by ID prefix."""

UNKNOWN = ModelFacts("(unknown)", (ADAPTIVE, OFF), None, EFFORTS)
"""A model not in :data:`MODELS`: the safe shape by default, and whatever it is asked for."""


def facts_for(model: str) -> ModelFacts:
    """The facts of the longest family prefix of ``model``, else :data:`UNKNOWN`."""
    families = [f for f in MODELS if model == f or model.startswith(f + "-")]
    return MODELS[max(families, key=len)] if families else UNKNOWN


def check_choice(
    model: str,
    thinking: str | None,
    effort: str | None,
    names: tuple[str, str] = ("thinking", "effort"),
) -> str:
    """The seat's thinking mode (the model's default when ``None``); ``ValueError`` naming
    the allowed values when the model cannot take what was asked. ``names`` say where the
    two values came from (a spec key or an environment variable)."""
    facts = facts_for(model)
    thinking_name, effort_name = names
    if thinking is not None and thinking not in THINKING_MODES:
        modes = ", ".join(THINKING_MODES)
        raise ValueError(f"{thinking_name} must be one of {modes}, got {thinking!r}")
    if thinking is not None and thinking not in facts.thinking:
        raise ValueError(
            f"{model} does not take thinking={thinking} (allowed: {', '.join(facts.thinking)})"
        )
    if effort is not None and effort not in EFFORTS:
        raise ValueError(f"{effort_name} must be one of {', '.join(EFFORTS)}, got {effort!r}")
    if effort is not None and effort not in facts.efforts:
        allowed = ", ".join(facts.efforts) or "none: leave effort unset"
        raise ValueError(f"{model} does not take effort={effort} (allowed: {allowed})")
    return thinking or facts.default_thinking


def check_max_tokens(model: str, max_tokens: int) -> None:
    limit = facts_for(model).max_output
    if limit is not None and max_tokens > limit:
        raise ValueError(f"max_tokens must be <= {limit} for {model}, got {max_tokens}")


# --- adapting to what the API says ---------------------------------------------------------

_REFUSALS = (
    ("tool_choice forces tool use", ADAPTIVE),
    ('"thinking.type.adaptive" is not supported', OFF),
)
"""A 400's message, and the thinking mode it implies the model needs. (With thinking off
the seat sends no ``thinking``, so a model that always thinks refuses the forced tool.)"""


def adapted_after(status: int | None, message: str, thinking: str) -> str | None:
    """The thinking mode a 400 says this model needs instead of ``thinking``, or ``None``
    when the refusal is about something else."""
    if status != 400:
        return None
    for fragment, needed in _REFUSALS:
        if fragment in message and needed != thinking:
            return needed
    return None
