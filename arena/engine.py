"""Plays one episode with seats: asks them, applies rule 11, and logs every event.

The rules' sequence (deals, turns, legality, the cap, challenges, the episode's end
and its scoring) is :mod:`arena.turns`' state machine; the engine drives it with the
seats' decisions, keeps talk, notes and usage, and hands each acting seat only its
:class:`~arena.view.SeatView`. Everything that happens is emitted as an
:mod:`arena.events` event in order; the same seed and the same seat decisions
give the same events, byte for byte. The engine never stalls: a seat that
raises, returns garbage or an illegal move is asked once more with the reason,
then the bayes baseline moves for it (rule 11).

:class:`EpisodeEngine` is what the runner asks of any engine (this one, or the
compiled one of :mod:`arena.fast`): built from one :class:`TableSetup`, played once,
then asked what it learnt besides the log (audit figures, the seats' usage).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import attrs

from arena.actions import Action, Challenge
from arena.events import (
    BidMade,
    ChallengeMade,
    DealStarted,
    EpisodeSettled,
    EpisodeStarted,
    Event,
    Fault,
    Rejected,
    SeatEntry,
    Thought,
    Usage,
    from_line,
)
from arena.logged_text import REASON_CAP, SAY_CAP, cut, cut_thoughts
from arena.logs import get_logger
from arena.render import Narrator
from arena.replies import IllegalReply, loggable, parse_action
from arena.results import usage_by_slot
from arena.rules import TableRules, score
from arena.seats import Reply, Seat, SeatQuit, SeatUnavailable
from arena.turns import DealState, EpisodeState
from arena.view import (
    History,
    LegalActions,
    PastDeal,
    PastDeals,
    SeatView,
    TalkLine,
)

if TYPE_CHECKING:
    from arena.eventlog import EventLog
    from arena.registry import Reporter

MAX_DEALS = 2**63 - 1
"""The most deals an episode plays: the compiled engine counts them in an int64."""
NOTES_CAP = 4000
"""Private notes longer than this are truncated, and the seat is told so."""
FORCED = Challenge()
"""The challenge the table makes at the cap (rule 8): immutable, so one serves every deal."""

log = get_logger(__name__)


@attrs.frozen
class EpisodeConfig:
    """The immutable setup of one episode."""

    rules: TableRules
    seed: int = attrs.field()
    deals: int = attrs.field(default=20)
    talk: bool = False
    clock: float | None = attrs.field(default=None)
    """Seconds of wall time; checked at deal boundaries (rule 9)."""

    @seed.validator
    def _check_seed(self, _attribute, value):
        if value < 0:
            raise ValueError(f"seed must be >= 0, got {value}")

    @deals.validator
    def _check_deals(self, _attribute, value):
        if not 1 <= value <= MAX_DEALS:
            raise ValueError(f"deals must be 1 to {MAX_DEALS}, got {value}")

    @clock.validator
    def _check_clock(self, _attribute, value):
        if value is not None and not (math.isfinite(value) and value > 0):
            raise ValueError(f"the clock must be finite positive seconds, got {value}")


@attrs.define
class SeatTally:
    """What happened to one seat's decisions over the episode."""

    decisions: int = 0
    rejected: int = 0
    fallbacks: int = 0
    faults: int = 0


@attrs.frozen
class Outcome:
    status: str
    deals_played: int
    points: tuple[int, ...]
    score: tuple[float, ...]
    tallies: tuple[SeatTally, ...]


TalkFilter = Callable[[str, int], "str | None"]
Thoughts = tuple[Thought, ...] | None


def episode_header(
    config: EpisodeConfig,
    policies: Sequence[str],
    order: tuple[int, ...],
    provenance: dict | None,
) -> EpisodeStarted:
    """The log's first line, the same whichever engine plays the episode."""
    mode = config.rules.mode
    return EpisodeStarted(
        seed=config.seed,
        mode=mode.name,
        symbols=mode.symbols,
        hand_size=mode.hand_size,
        seats=[SeatEntry(slot, policy) for slot, policy in enumerate(policies)],
        table_order=order,
        deals=config.deals,
        max_bids_per_deal=config.rules.max_bids,
        talk=config.talk,
        provenance=provenance,
        **mode.header_fields(),
    )


def settle(status: str, played: int, points: Sequence[int]) -> EpisodeSettled:
    """The log's ``result`` line: points and each seat's score (rules.md's formula)."""
    return EpisodeSettled(status, played, tuple(points), tuple(score(p, played) for p in points))


@attrs.frozen
class TableSetup:
    """Everything an engine is built from, assembled once by the runner whichever engine
    plays; each engine takes what it plays (the compiled one has no talk or fallback)."""

    config: EpisodeConfig
    seats: Sequence[Seat]
    """The built seats by slot."""
    policies: tuple[str, ...]
    """Every seat's spec by slot, as the header names them."""
    event_log: EventLog
    provenance: dict | None = None
    fallbacks: Sequence[Seat] = ()
    """Rule 11's fallback by slot; indexed only when a seat needs one."""
    talk_filters: Sequence[TalkFilter] = ()
    reporters: Iterable[Reporter] = ()
    """The audit's reporters: what they declare, an engine may tally as it plays."""
    on_record: Callable[[dict], None] | None = None
    """Handed every record the moment it is logged (a live display)."""
    on_deals: Callable[[str, int], None] | None = None
    """Handed finished deals' terminal lines and how many deals have finished."""
    closing: threading.Event | None = None
    """Once set, the episode ends ``quit`` at its next decision (a table server stopping)."""


class EpisodeEngine(Protocol):
    """What the runner asks of an engine, whichever plays (see :func:`arena.fast.choice.choose`):
    build it, play it once, then what it learnt besides the log."""

    name: ClassVar[str]
    """``python`` or ``compiled``, as ``results.engine`` records it."""

    @classmethod
    def build(cls, setup: TableSetup) -> EpisodeEngine:
        """The engine of one episode, wired to ``setup``'s log; nothing is played yet."""

    def play(self) -> Outcome:
        """Play the episode into the log: its header, deals and ``result`` line."""

    def known(self) -> dict[Any, Any]:
        """After :meth:`play`: audit figures worked out while playing, by the figure each is
        the value of (:class:`arena.audit.AuditContext`'s ``known``)."""

    def usage(self, records: Sequence[dict]) -> list[dict | None]:
        """After :meth:`play`: each seat's model usage, from the episode's records."""


class Engine:
    """One episode's referee. Build it, then call :meth:`play` once."""

    name = "python"

    def __init__(
        self,
        config: EpisodeConfig,
        seats: Sequence[Seat],
        policies: Sequence[str],
        fallbacks: Sequence[Seat],
        emit: Callable[[Event], None],
        talk_filters: Sequence[TalkFilter] = (),
        provenance: dict | None = None,
        closing: threading.Event | None = None,
    ):
        rules = config.rules
        if not len(seats) == len(policies) == len(fallbacks) == rules.seats:
            raise ValueError(f"a {rules.seats}-seat table needs {rules.seats} seats and fallbacks")
        self.config = config
        self.rules = rules
        self.seats = list(seats)
        self.policies = list(policies)
        self.fallbacks = fallbacks
        """Indexed only when rule 11 applies, so a lazy sequence builds none it never needs."""
        self.emit = emit
        self.talk_filters = list(talk_filters)
        self.provenance = provenance
        self.closing = closing
        """Set when the table is closed under the seats (a server stopping): the next
        decision ends the episode ``quit``, as a person leaving does."""
        self.state = EpisodeState(rules, config.seed, config.deals)
        self.order = self.state.order
        self.talk: tuple[TalkLine, ...] = ()
        """The deal in progress's published talk, grown by one per line (rule 10)."""
        self.notes: list[str | None] = [None] * rules.seats
        self.notes_truncated = [False] * rules.seats
        self.tallies = [SeatTally() for _ in range(rules.seats)]
        self.calls_logged = False
        """Whether any seat's model call was logged (a ``usage`` line)."""
        self.past_deals = PastDeals()
        """Every finished deal, appended once; views see it through a :class:`History`."""
        self.history = History(self.past_deals)
        self._table_fields = self._table_view_fields()
        self._mode_rule_fields = tuple(rules.mode.header_fields().values())
        """wild, wild_counts_itself, raise_rule: SeatView's last fields, in its order."""
        self._legal_by_standing: dict[tuple[int, int] | None, LegalActions] = {}

    @classmethod
    def build(cls, setup: TableSetup) -> Engine:
        """The engine playing into ``setup.event_log``, which keeps the records as made (the
        audit of a short log then parses nothing back), narrates each write to ``on_deals``
        and hands each record, parsed as a reader would, to ``on_record``."""
        event_log = setup.event_log
        event_log.keep_made()
        if setup.on_deals is not None:
            event_log.follow_writes(_narrator(setup.on_deals))
        emit = event_log.emit if setup.on_record is None else _tee(event_log, setup.on_record)
        return cls(
            setup.config,
            setup.seats,
            setup.policies,
            setup.fallbacks,
            emit,
            setup.talk_filters,
            setup.provenance,
            setup.closing,
        )

    def known(self) -> dict[Any, Any]:
        """Nothing beyond the log, whose records as made the audit reads instead."""
        return {}

    def usage(self, records: Sequence[dict]) -> list[dict | None]:
        """Each seat's token totals from the log's ``usage`` lines; without reading the log
        when no seat's call was logged (a scripted table's): a long log is parsed again on
        every pass."""
        if not self.calls_logged:
            return [None] * self.rules.seats
        return usage_by_slot(records, self.rules.seats)

    # --- the episode ---------------------------------------------------------

    def play(self) -> Outcome:
        self.emit(self._header())
        started = time.monotonic()
        state = self.state
        while not state.over:
            if self._clock_ran_out(started):
                state.run_out()
                break
            try:
                self._play_deal(state.next_deal())
            except SeatQuit:  # the deal in progress moved no point: settle on those resolved
                state.quit()
        ended = state.settlement()
        result = EpisodeSettled(ended.status, ended.deals_played, ended.points, ended.score)
        self.emit(result)
        return Outcome(
            ended.status, ended.deals_played, ended.points, ended.score, tuple(self.tallies)
        )

    def _header(self) -> EpisodeStarted:
        return episode_header(self.config, self.policies, self.order, self.provenance)

    def _clock_ran_out(self, started: float) -> bool:
        clock = self.config.clock
        return clock is not None and time.monotonic() - started >= clock

    # --- one deal ------------------------------------------------------------

    def _play_deal(self, deal: DealState) -> None:
        self.talk = ()
        self.emit(DealStarted(deal.number, deal.opener, deal.hands))
        tallies = self.tallies
        while not deal.over:
            if deal.forced:  # rule 8: the table challenges; no seat is asked
                self._apply(deal, FORCED, False, None)
            else:
                slot = deal.actor
                action, fallback, thinking = self._decide(deal, slot)
                tallies[slot].decisions += 1  # made: a seat that left made none
                self._apply(deal, action, fallback, thinking)

    def _apply(self, deal: DealState, action: Action, fallback: bool, thinking: Thoughts) -> None:
        """Play ``action`` on the state, publish its talk, keep its notes, log what happened."""
        slot = deal.actor
        applied = deal.apply(action)
        said = published = notes = None
        if action.say is not None or action.notes is not None:  # a scripted seat's have none
            said, notes = cut(action.say, SAY_CAP), cut(action.notes, NOTES_CAP)
            published = self._publish(slot, said)
            self._keep_notes(slot, action.notes)
        if not deal.over:  # a bid (BidApplied): the deal goes on
            bid = deal.standing
            self.emit(
                BidMade(
                    deal.number, slot, bid.quantity, bid.face, said, published,
                    notes, fallback, thinking,
                )
            )  # fmt: skip
            return
        bid, outcome, forced = applied.bid, applied.outcome, applied.forced
        self.emit(
            ChallengeMade(
                deal.number, slot, bid.slot, bid.quantity, bid.face,
                outcome.actual, forced, fallback, outcome.winner, outcome.loser,
                said, published, notes, thinking,
            )
        )  # fmt: skip
        self.past_deals.append(
            PastDeal(
                deal.number, deal.opener, deal.bids, slot, forced,
                outcome.actual, deal.hands, outcome.winner, outcome.loser,
            )
        )  # fmt: skip
        self.history = History(self.past_deals)

    # --- asking a seat (rule 11) ---------------------------------------------------

    def _decide(self, deal: DealState, slot: int) -> tuple[Action, bool, Thoughts]:
        """One legal action for ``slot``, whether the fallback made it, and the reasoning
        the seat returned with the reply that made it."""
        if self.closing is not None and self.closing.is_set():
            raise SeatQuit("the table was closed")
        tally = self.tallies[slot]
        reason = None
        while deal.may_ask:
            view = self._view(deal, slot, reason)
            try:
                return self._ask(deal, slot, view)
            except IllegalReply as rejection:
                reason = str(rejection)
                tally.rejected += 1
                deal.reject()
            except SeatUnavailable as fault:
                tally.faults += 1
                if fault.usage is not None:
                    self._record_usage(deal, slot, Reply(None, usage=fault.usage))
                reason = cut(str(fault), REASON_CAP) or "seat unavailable"
                self.emit(Fault(deal.number, slot, reason))
                deal.fault()
        tally.fallbacks += 1
        return self._ask_fallback(deal, slot), True, None

    def _ask(self, deal: DealState, slot: int, view: SeatView) -> tuple[Action, bool, Thoughts]:
        """The seat's own legal action, not the fallback's, and its reasoning, as
        :meth:`_decide` answers; logs and raises ``IllegalReply`` otherwise."""
        reply = thinking = None
        try:
            reply = self.seats[slot].decide(view)
            if isinstance(reply, Reply):
                self._record_usage(deal, slot, reply)
                reply, thinking = reply.content, cut_thoughts(reply.thinking)
            return _checked(deal, parse_action(reply)), False, thinking
        except (SeatUnavailable, SeatQuit):
            raise
        except IllegalReply as rejection:
            reason = str(rejection)
        except Exception as crash:  # a seat's bug is its illegal move, not the table's crash
            reason = f"seat raised {type(crash).__name__}: {crash}"[:500]
        self.emit(Rejected(deal.number, slot, reason, loggable(reply), thinking))
        raise IllegalReply(reason)

    def _ask_fallback(self, deal: DealState, slot: int) -> Action:
        view = self._view(deal, slot, None)
        action = parse_action(self.fallbacks[slot].decide(view))
        # The fallback speaks no talk and keeps the seat's notes as they were.
        return _checked(deal, attrs.evolve(action, say=None, notes=None))

    def _record_usage(self, deal: DealState, slot: int, reply: Reply) -> None:
        if reply.usage is None:
            return
        self.calls_logged = True
        u = reply.usage
        self.emit(
            Usage(
                deal.number, slot,
                int(u.get("input_tokens", 0)), int(u.get("output_tokens", 0)),
                int(u.get("cache_read_tokens", 0)), int(u.get("cache_write_tokens", 0)),
                int(u.get("cache_write_1h_tokens", 0)), int(u.get("thinking_tokens", 0)),
                reply.shape,
            )
        )  # fmt: skip

    def _view(self, deal: DealState, slot: int, retry_reason: str | None) -> SeatView:
        # Positional, in SeatView's field order: the episode's fields, this decision's,
        # then the mode's rule data (a view is built per decision; keywords cost a third).
        return SeatView(
            *self._table_fields,
            slot,
            deal.number,
            deal.opener,
            deal.hands[slot],
            deal.bids,
            self.talk,
            self.history,
            self.notes[slot],
            self.notes_truncated[slot],
            self._legal(deal),
            retry_reason,
            *self._mode_rule_fields,
        )

    def _legal(self, deal: DealState) -> LegalActions:
        """The state's action space for a seat asked to decide (so under the cap), built
        once per standing bid an episode sees: below the cap it depends on nothing else."""
        standing = deal.standing
        key = None if standing is None else (standing.quantity, standing.face)
        legal = self._legal_by_standing.get(key)
        if legal is None:
            legal = LegalActions(deal.can_challenge, deal.min_bid, self.rules.max_quantity)
            self._legal_by_standing[key] = legal
        return legal

    def _table_view_fields(self) -> tuple:
        """The view fields that hold for the whole episode, in SeatView's order, built once."""
        rules, mode = self.rules, self.rules.mode
        return (
            mode.name,
            mode.symbols,
            mode.hand_size,
            rules.seats,
            self.order,
            rules.max_bids,
            self.config.talk,
        )

    # --- talk and notes ----------------------------------------------------------

    def _publish(self, slot: int, said: str | None) -> str | None:
        """Rule 10: talk rides on the action and is published once it applies."""
        if not self.config.talk or not said:
            return None
        text: str | None = said
        for talk_filter in self.talk_filters:
            try:
                text = talk_filter(text, slot)
            except Exception as exc:  # a broken filter silences the line, not the table
                log.warning("talk filter failed", error=repr(exc), slot=slot)
                text = None
            if text is None:
                return None
        self.talk += (TalkLine(slot, text),)
        return text

    def _keep_notes(self, slot: int, notes: str | None) -> None:
        if notes is None:
            return
        self.notes[slot] = notes[:NOTES_CAP]
        self.notes_truncated[slot] = len(notes) > NOTES_CAP


def _narrator(on_deals: Callable[[str, int], None]) -> Callable[[list[dict]], None]:
    """The log's write listener (:meth:`EventLog.follow_writes`) that hands ``on_deals``
    the summaries of the deals each write took, and how many deals have ended: the
    narrator reads the records as the events made them, not a parse of the lines, and a
    write's worth at a time (16 deals or 50 ms), nothing between the seats' decisions."""
    narrator = Narrator()

    def narrate(records: list[dict]) -> None:
        lines = [line for record in records for line in narrator.lines(record)]
        if lines:
            on_deals("".join(line + "\n" for line in lines), narrator.deals_ended)

    return narrate


def _tee(event_log: EventLog, on_record: Callable[[dict], None]) -> Callable[[Event], None]:
    def emit(event: Event) -> None:
        event_log.emit(event)
        on_record(from_line(event_log.last_line.decode("utf-8")))

    return emit


def _checked(deal: DealState, action: Action) -> Action:
    """Rule 11's second half: the action if the state finds it legal; raises otherwise."""
    reason = deal.illegal(action)
    if reason is not None:
        raise IllegalReply(reason)
    return action
