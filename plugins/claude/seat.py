"""The ``claude`` seat: every decision made by Claude from a policy prompt and the seat's view.

One decision is one Messages API call (the ``act`` tool, see
:mod:`~arena_plugins.claude.reply_tool`) with the request built by
:mod:`~arena_plugins.claude.prompt` in the shape the model takes
(:mod:`~arena_plugins.claude.models`). What comes back goes to the engine as an
:class:`arena.seats.Reply` with the token accounting the API reported and the
reply's thinking, which only the log receives; the engine judges legality and
applies rule 11. When the API cannot be reached within the retry bounds the
seat raises :class:`arena.seats.SeatUnavailable`, which the engine logs as a
fault and answers with the bayes fallback.

When the API refuses the request's shape (a 400 saying the model must think,
or cannot think adaptively), the seat switches to the shape the refusal implies,
says so in a warning, and asks again: once per episode, so a model the table
misjudged plays its own moves instead of the fallback's.

With no ``ANTHROPIC_API_KEY`` the factory seats the bayes baseline instead and
says so in ``stand_in``, which the results and the CLI report.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import anthropic
import attrs

from arena.logs import get_logger
from arena.seats import Reply, SeatContext, SeatUnavailable
from arena.view import SeatView
from arena_plugins.claude.client import ApiUnavailable, create_message, make_client
from arena_plugins.claude.models import adapted_after
from arena_plugins.claude.prompt import build_request
from arena_plugins.claude.reply_tool import read_reply, read_thinking
from arena_plugins.claude.settings import (
    API_KEY_ENV,
    ModelSettings,
    RetryBounds,
    model_settings,
    parse_arg,
    retry_bounds,
)
from arena_plugins.scripted import bayes
from arena_policies import Policy, resolve

NO_KEY = f"no {API_KEY_ENV}: bayes played this seat"

log = get_logger(__name__)


class ClaudeSeat:
    """A seat whose every decision is one (retried) Messages API call."""

    def __init__(
        self,
        context: SeatContext,
        policy: Policy,
        settings: ModelSettings,
        bounds: RetryBounds,
        client: anthropic.Anthropic,
    ):
        self.rules = context.rules
        self.rng = context.rng
        self.policy = policy
        self.settings = settings
        self.bounds = bounds
        self.client = client
        self.adapted = False
        """Whether the request shape was already changed once this episode."""

    def decide(self, view: SeatView) -> Reply:
        message = self._ask(view)
        content = message.content
        return Reply(read_reply(content), usage=usage_of(message), thinking=read_thinking(content))

    def _ask(self, view: SeatView) -> anthropic.types.Message:
        request = build_request(view, self.rules, self.policy, self.settings)
        try:
            return create_message(self.client, request, self.bounds, self.rng)
        except ApiUnavailable as fault:
            if not self._adapt(fault):
                raise SeatUnavailable(str(fault)) from fault
        return self._ask(view)

    def _adapt(self, fault: ApiUnavailable) -> bool:
        """Take the thinking mode a refusal implies, once an episode; whether it did."""
        error = fault.__cause__
        thinking = adapted_after(
            getattr(error, "status_code", None),
            getattr(error, "api_message", None) or "",
            self.settings.thinking,
        )
        if self.adapted or thinking is None:
            return False
        log.warning(
            "claude request shape adapted",
            model=self.settings.model,
            thinking=thinking,
            was=self.settings.thinking,
            reason=str(fault),
        )
        self.settings = attrs.evolve(self.settings, thinking=thinking)
        self.adapted = True
        return True


class StandIn:
    """Another policy playing a seat throughout, and why (reported as ``standIn``)."""

    def __init__(self, seat: Any, reason: str):
        self.seat = seat
        self.stand_in = reason

    def decide(self, view: SeatView):
        return self.seat.decide(view)


def usage_of(message: anthropic.types.Message) -> dict[str, int]:
    """The token counts the API reported, in the engine's ``usage`` vocabulary; a split the
    API does not report counts 0."""
    usage = message.usage
    split = usage.cache_creation
    details = usage.output_tokens_details
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_tokens": usage.cache_read_input_tokens or 0,
        "cache_write_tokens": usage.cache_creation_input_tokens or 0,
        "cache_write_1h_tokens": split.ephemeral_1h_input_tokens if split else 0,
        "thinking_tokens": details.thinking_tokens if details else 0,
    }


def claude_seat(context: SeatContext, environ: Mapping[str, str] = os.environ):
    """The seat factory: a bad spec or setting fails here, before the episode starts."""
    arg = parse_arg(context.arg)
    policy = resolve(arg.policy)
    settings = model_settings(arg.overrides, environ)
    bounds = retry_bounds(environ)
    api_key = environ.get(API_KEY_ENV, "").strip()
    if not api_key:
        return StandIn(bayes(context), NO_KEY)
    return ClaudeSeat(context, policy, settings, bounds, make_client(api_key, bounds))
