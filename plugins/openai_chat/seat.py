"""The ``openai`` seat: every decision made by a model behind an OpenAI-compatible
chat-completions endpoint, from a policy prompt and the seat's view.

One decision is one (retried) ``chat.completions.create`` call, shaped by
:mod:`~arena_plugins.openai_chat.wire`. A seat starts with the ``act`` tool
forced; when the server refuses a shape (a 400 or 422, or a 501: it does not
take a forced tool, or tools at all, or a JSON schema), the seat takes the next
shape, says so in a warning and asks again, at most once per shape per episode.
What comes back goes to the engine as an :class:`arena.seats.Reply` with the
usage the server reported and the reply's reasoning, which only the log
receives. When the server cannot be reached within the retry bounds the seat
raises :class:`arena.seats.SeatUnavailable`, which the engine logs as a fault
and answers with the bayes fallback.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import attrs
import openai

from arena.logs import get_logger
from arena.seats import Reply, SeatContext, SeatUnavailable
from arena.view import SeatView
from arena_plugins.model_seat.origin import host_of
from arena_plugins.model_seat.prices import checked_provider
from arena_plugins.model_seat.reply_body import decode
from arena_plugins.model_seat.retries import (
    ApiUnavailable,
    RetryBounds,
    call_with_retries,
    retry_bounds,
)
from arena_plugins.model_seat.stand_in import bayes_stand_in, no_key
from arena_plugins.model_seat.usage import rate_tokens
from arena_plugins.openai_chat.client import WIRE, make_client, refusal_text, withheld_headers
from arena_plugins.openai_chat.settings import (
    RETRY_PREFIX,
    Endpoint,
    SeatArg,
    endpoint,
    parse_arg,
)
from arena_plugins.openai_chat.wire import SHAPES, Answer, build_request, read_completion
from arena_policies import Policy, resolve

log = get_logger(__name__)

REFUSED_SHAPE = frozenset({400, 422, 501})
"""Statuses with which a server refuses what a request asks of it (a forced tool, tools,
a JSON schema), as vLLM, llama.cpp and hosted gateways answer."""


class OpenAISeat:
    """A seat whose every decision is one (retried) chat-completions call."""

    def __init__(
        self,
        context: SeatContext,
        policy: Policy,
        seat: SeatArg,
        place: Endpoint,
        bounds: RetryBounds,
    ):
        self.rules = context.rules
        self.rng = context.rng
        self.policy = policy
        self.seat = seat
        self.place = place
        self.bounds = bounds
        self.client = make_client(place, bounds)
        self.shape = SHAPES[0]
        """The request shape in use; it only steps down, once per shape, this episode."""

    def decide(self, view: SeatView) -> Reply:
        answer = self._ask(view)
        return Reply(answer.content, usage=answer.usage, thinking=answer.thinking)

    def _ask(self, view: SeatView) -> Answer:
        request = build_request(
            view,
            self.rules,
            self.policy,
            self.seat.model,
            self.shape,
            strict=self.place.openai_host or self.seat.provider == "openai",
            reasoning_effort=self.seat.reasoning_effort,
            max_tokens=self.seat.max_tokens,
        )
        headers = withheld_headers(self.place)

        def call() -> tuple[Answer, int]:
            raw = self.client.chat.completions.with_raw_response.create(
                **request, extra_headers=headers
            )
            answer = read_completion(decode(raw.http_response.content))
            return answer, rate_tokens(answer.usage)

        try:
            return call_with_retries(WIRE, call, self.bounds, self.rng)
        except ApiUnavailable as fault:
            if not self._adapt(fault):
                raise SeatUnavailable(str(fault), usage=fault.usage) from fault
            return self._ask(view)

    def _adapt(self, fault: ApiUnavailable) -> bool:
        """Take the next request shape after a refusal of this one; whether it did."""
        error = fault.__cause__
        status = getattr(error, "status_code", None)
        at = SHAPES.index(self.shape)
        if not isinstance(error, openai.APIStatusError) or status not in REFUSED_SHAPE:
            return False
        if at + 1 == len(SHAPES):
            return False
        log.warning(
            "openai request shape adapted",
            model=self.seat.model,
            host=host_of(self.place.base_url),
            shape=SHAPES[at + 1],
            was=self.shape,
            reason=refusal_text(error)[:200] or f"HTTP {status}",
        )
        self.shape = SHAPES[at + 1]
        return True


@attrs.frozen
class SeatSetup:
    """An ``openai:`` argument read: its settings, endpoint and retry bounds."""

    seat: SeatArg
    place: Endpoint
    bounds: RetryBounds


def seat_setup(arg: str | None, environ: Mapping[str, str]) -> SeatSetup:
    """``ValueError`` (one line) for a setting that cannot be played."""
    seat = parse_arg(arg)
    bounds = retry_bounds(environ, RETRY_PREFIX, seat.bounds)
    return SeatSetup(seat, endpoint(seat, environ), bounds)


def preflight(arg: str | None, environ: Mapping[str, str] = os.environ) -> None:
    """Check, before any table starts, that an ``openai:ARG`` seat can be played (its
    ``provider=`` one genai-prices knows), and say once where a named ``key_env`` goes when
    that is not this machine: a shared league file's reader sees it before any call."""
    setup = seat_setup(arg, environ)
    if setup.seat.provider is not None:
        checked_provider(setup.seat.provider)
    place = setup.place
    if setup.seat.key_env is not None and not place.local and place.key is not None:
        scheme, host, port = place.origin
        _say_once(setup.seat.key_env, f"{scheme}://{host}:{port}")


_SAID: set[tuple[str, str]] = set()
"""Each key_env and origin already named in this process."""


def _say_once(key_env: str, origin: str) -> None:
    if (key_env, origin) not in _SAID:
        _SAID.add((key_env, origin))
        log.warning("openai seat sends a key to another machine", key_env=key_env, to=origin)


def openai_seat(context: SeatContext, environ: Mapping[str, str] = os.environ):
    """The seat factory: a bad spec or setting fails here, before the episode starts."""
    setup = seat_setup(context.arg, environ)
    policy = resolve(setup.seat.policy)
    if setup.place.missing_key is not None:
        return bayes_stand_in(context, no_key(setup.place.missing_key))
    return OpenAISeat(context, policy, setup.seat, setup.place, setup.bounds)
