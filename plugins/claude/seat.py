"""The ``claude`` seat: every decision made by Claude from a policy prompt and the seat's view.

One decision is one Messages API call (the ``act`` tool, see
:mod:`~arena_plugins.claude.reply_tool`) with the request built by
:mod:`~arena_plugins.claude.prompt` in the shape the model takes: its rules come
from the Models API, once per process (:mod:`~arena_plugins.claude.lookup`), and
the seat's settings are checked against them before the first call
(:func:`preflight`, which the CLI runs for every Claude seat before any table
starts, and the factory again). What comes back goes to the engine as an
:class:`arena.seats.Reply` with the token accounting the API reported and the
reply's thinking, which only the log receives; the engine judges legality and
applies rule 11. When the API cannot be reached within the retry bounds the
seat raises :class:`arena.seats.SeatUnavailable`, which the engine logs as a
fault and answers with the bayes fallback.

When the API still refuses the request's shape (a 400 saying the model must
think, or cannot think adaptively: only likely where its rules came from the
shipped table), the seat switches to the shape the refusal implies, says so in a
warning, and asks again: once per episode, a last resort.

A seat that has read nothing from the prompt cache after its first
:data:`CACHE_CHECK_CALLS` calls says so once: a prefix shorter than the model's
minimum cacheable prompt (512, 1,024 or 4,096 tokens, by model) caches nothing.

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
from arena.replies import IllegalReply
from arena.seats import Reply, SeatContext, SeatUnavailable
from arena.view import SeatView
from arena_plugins.claude.client import create_message, make_client
from arena_plugins.claude.lookup import model_rules
from arena_plugins.claude.models import adapted_after
from arena_plugins.claude.prompt import build_request
from arena_plugins.claude.reply_tool import read_reply, read_thinking
from arena_plugins.claude.settings import (
    API_KEY_ENV,
    ModelSettings,
    RetryBounds,
    SeatArg,
    chosen_model,
    model_settings,
    parse_arg,
    retry_bounds,
)
from arena_plugins.model_seat.prompt import SeatRecord
from arena_plugins.model_seat.request_json import RequestBody
from arena_plugins.model_seat.retries import ApiUnavailable, DecisionClock, DecisionPastDeadline
from arena_plugins.model_seat.stand_in import bayes_stand_in, no_key
from arena_policies import Policy, resolve

CACHE_CHECK_CALLS = 4
"""Calls after which a seat that has read nothing from the prompt cache says so."""

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
        self.calls = 0
        self.cache_read = 0
        self.clock = DecisionClock()
        self.record = SeatRecord()
        """This seat's finished deals, each rendered once for all its requests."""
        self.body = RequestBody()
        """Its requests' bytes, each record block encoded once for all its requests."""

    def decide(self, view: SeatView) -> Reply:
        content, used = self._ask(view, self.clock.end(view, self.bounds.total))
        self._watch_cache(used["cache_read_tokens"])
        return Reply(read_reply(content), usage=used, thinking=read_thinking(content))

    def _watch_cache(self, read: int) -> None:
        self.calls += 1
        self.cache_read += read
        if self.calls == CACHE_CHECK_CALLS and not self.cache_read:
            log.warning(
                "claude seat reads nothing from the prompt cache",
                model=self.settings.model,
                calls=self.calls,
                why="a prompt prefix shorter than the model's minimum cacheable length "
                "(512, 1024 or 4096 tokens, by model) is not cached",
            )

    def _ask(self, view: SeatView, until: float) -> tuple[list[dict[str, Any]], dict[str, int]]:
        request = build_request(view, self.rules, self.policy, self.settings, self.record)
        try:
            return create_message(
                self.client, request, self.bounds, self.rng, until=until, encode=self.body
            )
        except ApiUnavailable as fault:
            if isinstance(fault.__cause__, DecisionPastDeadline):
                raise IllegalReply(str(fault.__cause__)) from None
            if not self._adapt(fault):
                raise SeatUnavailable(str(fault), usage=fault.usage) from fault
        return self._ask(view, until)

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


@attrs.frozen
class SeatSetup:
    """A ``claude:`` argument read, and checked against its model's rules."""

    arg: SeatArg
    settings: ModelSettings
    bounds: RetryBounds
    client: anthropic.Anthropic | None
    """``None``: no key, so no call; the settings were checked against the shipped table."""


def seat_setup(arg: str | None, environ: Mapping[str, str]) -> SeatSetup:
    """The seat's settings in the shape its model takes, the model looked up with the
    seat's key; ``ValueError`` (one line) for a setting, or a model, that cannot be played."""
    parsed = parse_arg(arg)
    bounds = retry_bounds(environ, parsed.overrides)
    api_key = environ.get(API_KEY_ENV, "").strip()
    if not api_key:
        return SeatSetup(parsed, model_settings(parsed.overrides, environ), bounds, None)
    client = make_client(api_key, bounds, environ)
    rules = model_rules(client, chosen_model(parsed.overrides, environ), bounds)
    settings = model_settings(parsed.overrides, environ, rules)
    return SeatSetup(parsed, settings, bounds, client)


def preflight(arg: str | None, environ: Mapping[str, str] = os.environ) -> None:
    """Check, before any table starts, that a ``claude:ARG`` seat can be played."""
    seat_setup(arg, environ)


def claude_seat(context: SeatContext, environ: Mapping[str, str] = os.environ):
    """The seat factory: a bad spec or setting fails here, before the episode starts."""
    policy = resolve(parse_arg(context.arg).policy)
    setup = seat_setup(context.arg, environ)
    if setup.client is None:
        return bayes_stand_in(context, no_key(API_KEY_ENV))
    return ClaudeSeat(context, policy, setup.settings, setup.bounds, setup.client)
