"""The seat contract: how a policy is built and what it answers.

A seat plugin registers a factory; the factory gets a :class:`SeatContext`
(its slot, its own seeded generator, the table rules, the argument of its
``--seat name:arg`` spec and every seat's spec) and returns an object with
``decide(view)``. The reply may be an :class:`arena.actions.Bid`/``Challenge``,
a JSON-like mapping or text; the engine parses it and applies rule 11 to
anything else.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from arena import seeding

# Annotations only: a sandbox worker builds contexts without numpy or the event classes,
# and the early start (arena.sandbox.early) parses seat specs before the rules load.
if TYPE_CHECKING:
    import numpy as np

    from arena.actions import Action
    from arena.events import Thought
    from arena.rules import TableRules
    from arena.view import SeatView


class Seat(Protocol):
    def decide(self, view: SeatView) -> Action | Reply | Mapping[str, Any] | str: ...


class SeatUnavailable(Exception):
    """The seat could not answer at all (its service stayed down past the retry bound, or
    answered with what is not a reply).

    Not an illegal move: the engine logs a ``fault`` and applies rule 11's fallback
    at once, without the retry-with-reason step.
    """

    def __init__(self, reason: str = "", usage: Mapping[str, int] | None = None):
        super().__init__(reason)
        self.usage = usage
        """What the unreadable call was paid for, logged before the fault."""


class SeatQuit(Exception):
    """The person in this seat left the table (``q`` at the terminal).

    Not a fault: the engine ends the episode at once, settling it ``quit`` on the
    deals already resolved, so the log stays complete with a clear end marker.
    """


@attrs.frozen
class Reply:
    """A reply plus the token accounting the model call reported."""

    content: Any
    usage: Mapping[str, int] | None = None
    thinking: tuple[Thought, ...] | None = None
    """The model's reasoning behind the reply, for the log only: no seat sees it."""
    shape: str | None = None
    """The request shape the call was made in, for a wire that has several (an ``openai:``
    seat's ``forced``, ``auto``, ``json_schema`` or ``text``): logged on the call's usage
    line, so the results can say which shape a seat really played in."""


@attrs.frozen
class SeatContext:
    """What a seat factory is given to build one seat: public table facts and a private stream.

    Never the episode seed: rule 1's dealing is public code, so the seed is every
    hand of the episode. :meth:`derive` builds a context the way the runner does.
    """

    slot: int
    rules: TableRules
    rng: np.random.Generator = attrs.field(eq=False)
    """The seat's own stream (:func:`arena.seeding.private_stream`): the seed is not
    recoverable from it."""
    arg: str | None = None
    """The part after ``name:`` in the seat spec (e.g. a policy prompt path)."""
    talk: bool = False
    policies: tuple[str, ...] = ()
    """Every seat's spec, by slot: public, like name cards at the table (not in the view)."""

    @classmethod
    def derive(
        cls, seed: int, slot: int, rules: TableRules, domain: int = seeding.SEAT, **public: Any
    ) -> SeatContext:
        """The context of ``slot`` in an episode on ``seed``; ``public`` sets the other fields."""
        return cls(slot=slot, rules=rules, rng=seeding.private_stream(seed, domain, slot), **public)


@attrs.frozen
class SeatSpec:
    """A parsed ``--seat`` value: ``name`` or ``name:arg``."""

    name: str
    arg: str | None = None

    @classmethod
    def parse(cls, text: str) -> SeatSpec:
        name, sep, arg = text.strip().partition(":")
        if not name:
            raise ValueError(f"empty seat name in {text!r}")
        return cls(name=name, arg=arg if sep else None)

    def __str__(self) -> str:
        return self.name if self.arg is None else f"{self.name}:{self.arg}"
