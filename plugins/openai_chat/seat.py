"""The ``openai`` seat: every decision made by a model behind an OpenAI-compatible
chat-completions endpoint, from a policy prompt and the seat's view.

One decision is one (retried, bounded) chat-completions request, shaped by
:mod:`~arena_plugins.openai_chat.wire`. A seat starts with the ``act`` tool
forced and moves only on what the server answers (a refused shape, an ignored
forced choice, a shape that keeps failing, a refused cap field), once per move
per episode, saying why in a warning (:mod:`~arena_plugins.openai_chat.adapting`).
What comes back goes to the engine as an :class:`arena.seats.Reply` with the
usage the server reported and the reply's reasoning, which only the log
receives. When the server cannot be reached within the retry bounds the seat
raises :class:`arena.seats.SeatUnavailable`, which the engine logs as a fault
and answers with the bayes fallback; when the decision's deadline passes with
no answer, the model has failed rule 11, with the deadline as the reason.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import attrs

from arena.logs import get_logger
from arena.replies import IllegalReply, parse_action
from arena.seats import Reply, SeatContext, SeatUnavailable
from arena.view import SeatView
from arena_plugins.model_seat.origin import host_of
from arena_plugins.model_seat.prices import checked_provider
from arena_plugins.model_seat.prompt import SeatRecord
from arena_plugins.model_seat.reply_body import decode
from arena_plugins.model_seat.request_json import RequestBody
from arena_plugins.model_seat.retries import (
    ApiUnavailable,
    DecisionClock,
    DecisionPastDeadline,
    RetryBounds,
    call_with_retries,
    endpoint_at,
    retry_bounds,
)
from arena_plugins.model_seat.stand_in import bayes_stand_in, no_key
from arena_plugins.model_seat.usage import rate_tokens
from arena_plugins.openai_chat.adapting import (
    CAP_FIELDS,
    FAILURES_TO_MOVE,
    ignored_forced_choice,
    other_cap_field,
    refuses_shape,
    why,
)
from arena_plugins.openai_chat.client import (
    WIRE,
    make_client,
    post_completion,
    withheld_headers,
)
from arena_plugins.openai_chat.settings import (
    DEFAULT_MAX_TOKENS,
    RETRY_PREFIX,
    Endpoint,
    SeatArg,
    endpoint,
    parse_arg,
)
from arena_plugins.openai_chat.wire import (
    FORCED,
    JSON_SCHEMA,
    SHAPES,
    Answer,
    build_request,
    read_completion,
)
from arena_policies import Policy, resolve

log = get_logger(__name__)


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
        self.endpoint = endpoint_at(place.base_url, place.key)
        """What a 429 to this seat pauses (:mod:`arena.limits`)."""
        self.openai = place.openai_host or seat.provider == "openai"
        """OpenAI's own API: strict schemas, and the cap as ``max_completion_tokens``."""
        self.shape = SHAPES[0]
        """The request shape in use; it only steps down, once per shape, this episode."""
        self.cap_field = CAP_FIELDS[0] if self.openai else CAP_FIELDS[1]
        """Where the output cap goes; it moves at most once, on a refusal naming it."""
        self.cap_moved = False
        self.failures = 0
        """Replies in a row, in this shape, that named no action."""
        self.clock = DecisionClock()
        self.record = SeatRecord()
        """This seat's finished deals, each rendered once for all its requests."""
        self.body = RequestBody()
        """Its requests' bytes, the finished record's JSON kept for all its requests."""

    def decide(self, view: SeatView) -> Reply:
        answer = self._ask(view, self.clock.end(view, self.bounds.total))
        shape = self.shape
        self._watch(answer)
        return Reply(answer.content, usage=answer.usage, thinking=answer.thinking, shape=shape)

    def _ask(self, view: SeatView, until: float) -> Answer:
        cap = self.seat.max_tokens or DEFAULT_MAX_TOKENS
        request = build_request(
            view,
            self.rules,
            self.policy,
            self.seat.model,
            self.shape,
            strict=self.openai,
            cap=(self.cap_field, cap),
            reasoning_effort=self.seat.reasoning_effort,
            kept=self.record,
        )
        headers = withheld_headers(self.place)
        content = self.body(request, kept=self.record.finished)

        def call() -> tuple[Answer, int]:
            body = post_completion(self.client, content, headers)
            answer = read_completion(decode(body), cap)
            return answer, rate_tokens(answer.usage)

        try:
            return call_with_retries(
                WIRE, call, self.bounds, self.rng, until=until, endpoint=self.endpoint
            )
        except ApiUnavailable as fault:
            if isinstance(fault.__cause__, DecisionPastDeadline):
                raise IllegalReply(str(fault.__cause__)) from None
            if not self._adapt(fault.__cause__):
                raise SeatUnavailable(str(fault), usage=fault.usage) from fault
            return self._ask(view, until)

    def _adapt(self, error: BaseException | None) -> bool:
        """Send what a refusal asks for instead (the cap's other field, else the next
        shape) and say so; whether anything changed."""
        field = other_cap_field(error, self.cap_field)
        if field is not None and not self.cap_moved:
            self._warn("the output cap's field", field, self.cap_field, why(error))
            self.cap_field, self.cap_moved = field, True
            return True
        if not refuses_shape(error):
            return False
        return self._step(SHAPES.index(self.shape) + 1, why(error))

    def _watch(self, answer: Answer) -> None:
        """Move on from a shape the server does not honour, for the decisions to come: a
        forced choice answered with no call, or :data:`FAILURES_TO_MOVE` replies in a row
        that name no action."""
        if self.shape == FORCED and not answer.called:
            self._step(SHAPES.index(JSON_SCHEMA), ignored_forced_choice(answer.text))
            return
        try:
            parse_action(answer.content)
        except IllegalReply as unreadable:
            self.failures += 1
            if self.failures == FAILURES_TO_MOVE:
                self._step(
                    SHAPES.index(self.shape) + 1,
                    f"{FAILURES_TO_MOVE} replies in a row named no action: {unreadable}",
                )
        else:
            self.failures = 0

    def _step(self, to: int, reason: str) -> bool:
        """Take shape ``to`` (never back up), saying why; whether there was one to take."""
        if to >= len(SHAPES) or to <= SHAPES.index(self.shape):
            return False
        self._warn("shape", SHAPES[to], self.shape, reason)
        self.shape = SHAPES[to]
        self.failures = 0
        return True

    def _warn(self, what: str, now: str, was: str, reason: str) -> None:
        log.warning(
            "openai request adapted",
            model=self.seat.model,
            host=host_of(self.place.base_url),
            what=what,
            now=now,
            was=was,
            reason=reason,
        )


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
