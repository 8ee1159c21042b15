"""What a Claude model accepts, as one value, and the table shipped for when nobody can say.

A model's rules (:class:`ModelRules`) are the facts the Models API serves in its
``ModelInfo`` (:mod:`~arena_plugins.claude.lookup` reads them): the
``thinking.type`` values it takes (``adaptive``, ``enabled``, ``disabled``,
``between_tools``), its ``output_config.effort`` levels (``low`` to ``max``,
``xhigh`` on some), its ``max_tokens`` limit, whether it takes a strict tool
schema (structured outputs), and its lifecycle. This module turns them into the
seat's choices and checks a seat's settings against them; it knows nothing of
where they came from, so a seat for another provider can share it.

A seat thinks adaptively (``thinking=adaptive``, the default where the model
takes it) or not at all (``off``), which is sent explicitly, as ``disabled`` or
(on a model that turns thinking off that way) ``between_tools``: a request that
leaves ``thinking`` out thinks on the newer models. A thinking request cannot
force a tool (a 400), so the tool is forced only with ``disabled``. Effort above
``high`` buys deeper thinking; with thinking off some models refuse it (Opus 5:
a 400) and the Models API does not say which, so the seat refuses it everywhere.

:data:`SHIPPED` is the API documentation's reading of every model in the SDK's
``Model`` list (anthropic 2.15), by ID prefix: used only where the Models API
cannot be reached. A model it does not know gets :data:`UNKNOWN`, the safe shape;
if the API refuses that, the seat adapts once (:func:`adapted_after`).
"""

from __future__ import annotations

import attrs

ADAPTIVE = "adaptive"
OFF = "off"
THINKING_MODES = (ADAPTIVE, OFF)
EFFORTS = ("low", "medium", "high", "xhigh", "max")
"""The ``output_config.effort`` levels, lowest first (the SDK's ``OutputConfigParam``)."""
OFF_EFFORTS = ("low", "medium", "high")
"""The effort levels a seat may ask for with thinking off."""
THINKING_TYPES = ("adaptive", "enabled", "disabled", "between_tools")
"""The API's ``thinking.type`` values (the SDK's ``ThinkingTypes``)."""
OFF_TYPES = ("disabled", "between_tools")
"""The ``thinking.type`` values that turn thinking off, the one the seat prefers first."""


@attrs.frozen
class ModelRules:
    """What one model accepts, and where that was learnt."""

    model: str
    thinking_types: frozenset[str]
    """The ``thinking.type`` values it takes."""
    efforts: tuple[str, ...]
    """The effort levels it takes, lowest first; empty: it takes no ``output_config.effort``."""
    max_tokens: int | None
    """``max_tokens`` may not exceed this (``None``: unknown, not checked here)."""
    structured_outputs: bool
    """It takes a strict tool schema (``tools[].strict``)."""
    lifecycle: str = "active"
    """``active``, ``deprecated`` or ``retired``."""
    retires_at: str | None = None
    """The scheduled retirement date (``YYYY-MM-DD``), if any."""
    source: str = "Models API"
    """Where the rules came from: the Models API or the shipped table."""

    @property
    def off_type(self) -> str | None:
        """The ``thinking.type`` that turns thinking off on this model, if any."""
        return next((kind for kind in OFF_TYPES if kind in self.thinking_types), None)

    @property
    def modes(self) -> tuple[str, ...]:
        """The seat's thinking modes it takes, the default first (adaptive where it can)."""
        adaptive = (ADAPTIVE,) if ADAPTIVE in self.thinking_types else ()
        return adaptive + ((OFF,) if self.off_type else ())

    def check(self, thinking: str | None, effort: str | None, names: tuple[str, str]) -> str:
        """The seat's thinking mode (the model's default when ``None``); ``ValueError``
        naming what the model takes when it cannot take what was asked. ``names`` say where
        the two values came from (a spec key or an environment variable)."""
        thinking_name, effort_name = names
        if thinking is not None and thinking not in THINKING_MODES:
            modes = ", ".join(THINKING_MODES)
            raise ValueError(f"{thinking_name} must be one of {modes}, got {thinking!r}")
        if effort is not None and effort not in EFFORTS:
            raise ValueError(f"{effort_name} must be one of {', '.join(EFFORTS)}, got {effort!r}")
        if not self.modes:
            raise ValueError(f"{self.model} takes neither adaptive thinking nor thinking off")
        if thinking is not None and thinking not in self.modes:
            allowed = ", ".join(self.modes)
            raise ValueError(f"{self.model} does not take thinking={thinking} (allowed: {allowed})")
        if effort is not None and effort not in self.efforts:
            allowed = ", ".join(self.efforts) or "none: leave effort unset"
            raise ValueError(f"{self.model} does not take effort={effort} (allowed: {allowed})")
        chosen = thinking or self.modes[0]
        if chosen == OFF and effort is not None and effort not in OFF_EFFORTS:
            allowed = ", ".join(e for e in self.efforts if e in OFF_EFFORTS) or "none"
            raise ValueError(
                f"{self.model} does not take effort={effort} with thinking off (allowed: {allowed})"
            )
        return chosen

    def check_max_tokens(self, max_tokens: int) -> None:
        if self.max_tokens is not None and max_tokens > self.max_tokens:
            raise ValueError(
                f"max_tokens must be <= {self.max_tokens} for {self.model}, got {max_tokens}"
            )


# --- the shipped table, for when the Models API cannot be reached ------------------------------

_ALL = EFFORTS
_NO_XHIGH = ("low", "medium", "high", "max")
_ADAPTIVE_ONLY = (frozenset({"adaptive"}), _ALL, 128_000)
_HYBRID = (frozenset({"adaptive", "enabled", "disabled"}), _NO_XHIGH, 128_000)
_BUDGETED = frozenset({"enabled", "disabled"})
SHIPPED: dict[str, ModelRules] = {
    family: ModelRules(family, types, efforts, limit, True, source="shipped table")
    for family, (types, efforts, limit) in {
        "claude-mythos-5": _ADAPTIVE_ONLY,
        "claude-mythos-preview": (frozenset({"adaptive"}), _NO_XHIGH, 128_000),
        "claude-fable-5": _ADAPTIVE_ONLY,
        "claude-opus-5-5": _ADAPTIVE_ONLY,
        "claude-opus-5": (frozenset({"adaptive", "disabled"}), _ALL, 128_000),
        "claude-sonnet-5-5": (frozenset({"adaptive", "between_tools"}), _ALL, 128_000),
        "claude-sonnet-5": _ADAPTIVE_ONLY,
        "claude-haiku-5-5": (frozenset({"adaptive", "disabled"}), _NO_XHIGH, 128_000),
        "claude-opus-4-8": _ADAPTIVE_ONLY,
        "claude-opus-4-7": _ADAPTIVE_ONLY,
        "claude-opus-4-6": _HYBRID,
        "claude-sonnet-4-6": _HYBRID,
        "claude-opus-4-5": (_BUDGETED, ("low", "medium", "high"), 64_000),
        "claude-sonnet-4-5": (_BUDGETED, (), 64_000),
        "claude-haiku-4-5": (_BUDGETED, (), 64_000),
    }.items()
}
"""Every model family of the SDK's ``Model`` list, by ID prefix: ``claude-fable-5`` also
matches ``claude-fable-5-1`` and ``claude-fable-5-20260416``."""

UNKNOWN = ModelRules(
    "(unknown)", frozenset({"adaptive", "disabled"}), EFFORTS, None, False, source="shipped table"
)
"""A model the table does not know: the safe shape by default, whatever it is asked for,
and no strict schema."""


def shipped_rules(model: str) -> ModelRules:
    """The shipped rules of the longest family prefix of ``model``, else :data:`UNKNOWN`,
    named after ``model``."""
    families = [f for f in SHIPPED if model == f or model.startswith(f + "-")]
    rules = SHIPPED[max(families, key=len)] if families else UNKNOWN
    return attrs.evolve(rules, model=model)


# --- adapting to what the API says, the last resort ----------------------------------------

_REFUSALS = (
    ("tool_choice forces tool use", ADAPTIVE),
    ('"thinking.type.disabled" is not supported', ADAPTIVE),
    ('"thinking.type.adaptive" is not supported', OFF),
)
"""A 400's message, and the thinking mode it implies the model needs."""


def adapted_after(status: int | None, message: str, thinking: str) -> str | None:
    """The thinking mode a 400 says this model needs instead of ``thinking``, or ``None``
    when the refusal is about something else."""
    if status != 400:
        return None
    for fragment, needed in _REFUSALS:
        if fragment in message and needed != thinking:
            return needed
    return None
