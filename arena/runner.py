"""From names to a played episode: build the table from the registry, play, audit, report.

This is the one place that turns seat specs, a mode name and options into an engine
run with its event log (either engine, through :class:`~arena.engine.EpisodeEngine`:
:func:`arena.fast.choice.choose` picks it), and the finished log, with what the engine
learnt as it played, into :class:`~arena.results.Results`. The CLI and the tests
both come through here.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import attrs

from arena import seeding
from arena.audit import AuditContext, audit_events, run_audit
from arena.engine import EpisodeConfig, Outcome, TableSetup
from arena.eventlog import EventLog, LogExists, LogRecords
from arena.exploitability import episode_report
from arena.fast.choice import EngineUnavailable, choose
from arena.heap import freeze_startup
from arena.logs import get_logger
from arena.plugins import (
    FIRST_PARTY_DISTRIBUTION,
    PluginHost,
    Registry,
    SeatType,
    UnknownName,
    one_line,
)
from arena.results import Results, SeatResult, shapes_by_slot
from arena.rules import DEFAULT_MAX_BIDS, TableRules
from arena.sandbox.remote import SandboxedSeat, WorkerFailed, close_seats
from arena.sandbox.views import mode_to_json
from arena.seats import Seat, SeatContext, SeatSpec, SeatUnavailable
from arena.terminal_text import spec_text

log = get_logger(__name__)

DEFAULT_SCRIPTED = "bayes"
DEFAULT_SEATS = 4


class SetupError(ValueError):
    """The table cannot be built as asked; the message is one line for the user."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, delivered like Ctrl-C so that both stop an episode the same way."""


class EpisodeInterrupted(Exception):
    """The episode was stopped by a signal; ``log`` is where its partial log was left."""

    def __init__(self, reason: str, log: Path | None):
        where = f"; the partial log is {log}" if log is not None else ""
        super().__init__(f"interrupted ({reason}){where}")
        self.reason = reason
        self.log = log


@attrs.frozen
class EpisodeRequest:
    """What the user asked for, by name."""

    mode: str = "dice"
    seed: int = 0
    deals: int = 20
    seats: int = DEFAULT_SEATS
    seat_specs: tuple[SeatSpec, ...] = ()
    max_bids: int = DEFAULT_MAX_BIDS
    talk: bool = False
    clock: float | None = None
    engine: str = "auto"
    """``auto``, ``python`` or ``compiled`` (:mod:`arena.fast`)."""


def scripted_default(
    environ: Mapping[str, str] = os.environ, registry: Registry | None = None
) -> SeatSpec:
    """PLAYER_SCRIPTED names the policy that fills seats not otherwise given.

    A bad value is a :class:`SetupError` that names the variable, since the user never
    typed it on this command line; with ``registry`` the name must be a known seat.
    """
    text = environ.get("PLAYER_SCRIPTED", DEFAULT_SCRIPTED) or DEFAULT_SCRIPTED
    try:
        spec = SeatSpec.parse(text)
        if registry is not None:
            refuse_unwanted_arg(registry.seat(spec.name), spec)
    except (ValueError, UnknownName) as exc:
        raise SetupError(f"PLAYER_SCRIPTED={text!r}: {exc}") from None
    return spec


def table_specs(
    request: EpisodeRequest,
    environ: Mapping[str, str] = os.environ,
    registry: Registry | None = None,
) -> list[SeatSpec]:
    given = list(request.seat_specs)
    if len(given) > request.seats:
        raise SetupError(f"{len(given)} seats given for a {request.seats}-seat table (use --seats)")
    if len(given) == request.seats:
        return given
    return given + [scripted_default(environ, registry)] * (request.seats - len(given))


def run_episode(
    host: PluginHost,
    request: EpisodeRequest,
    log_path: str | Path | None = None,
    environ: Mapping[str, str] = os.environ,
    on_record: Callable[[dict], None] | None = None,
    local_seats: Mapping[str, Callable[[SeatContext], Seat]] | None = None,
    *,
    force: bool = False,
    on_deals: Callable[[str, int], None] | None = None,
    closing: threading.Event | None = None,
) -> tuple[Results, LogRecords]:
    """Play one episode; returns the results and the full event log's records
    (read back from the log as it was saved: see :class:`LogRecords`).

    ``on_record`` is handed every record, full information, as a log reader would
    parse it, the moment it is logged (a live display filters it for whoever
    watches); the compiled engine, which logs deals in batches, then stands aside.
    ``on_deals`` is handed, as deals finish, their summary for the terminal (the
    text :func:`~arena.render.deal_lines` makes of them) and how many deals have
    finished, a batch at a time as the log writes them (16 deals or 50 ms; the
    compiled engine writes the same text itself, in C). ``local_seats`` maps seat
    names to factories the caller supplies itself, e.g. the table server's browser
    seats. ``closing``, once set, ends the episode ``quit`` at its next decision (the
    table server stopping), so its log is complete; only the Python engine stops
    between decisions, so it plays such a table. The log at ``log_path`` is never
    clobbered unless ``force`` (see :class:`EventLog`). A signal raises
    :class:`EpisodeInterrupted`; a failed write ``LogWriteError``.
    """
    registry = host.registry
    config = build_config(registry, request)
    specs = table_specs(request, environ, registry)
    typed = [registry.seat_for(spec) for spec in specs]  # an unknown name fails before any start
    for slot, (seat_type, spec) in enumerate(typed):
        try:
            refuse_unwanted_arg(seat_type, spec)
        except ValueError as exc:
            raise SetupError(f"seat {slot} ({spec_text(spec)}): {exc}") from None
    filters = registry.ordered_talk_filters()
    policies = tuple(str(spec) for spec in specs)
    provenance = {
        "seats": [seat_type.provenance for seat_type, _ in typed],
        "filters": {f.name: f.provenance for f in filters},
        "reporters": {r.name: r.provenance for r in registry.reporters.values()},
    }
    seats = []
    try:
        seats = _table_seats(host, config, typed, policies, local_seats or {})
        freeze_startup()  # what importing the seats' code made, out of the full collections
        try:
            watched = on_record is not None or closing is not None
            engine_type = choose(request.engine, config, seats, watched=watched)
        except EngineUnavailable as exc:
            raise SetupError(str(exc)) from None
        event_log = _open_log(log_path, force)
        try:
            engine = engine_type.build(
                TableSetup(
                    config,
                    seats,
                    policies,
                    event_log,
                    provenance,
                    fallbacks=Fallbacks(config, registry.fallback()),
                    talk_filters=[f.apply for f in filters],
                    reporters=tuple(registry.reporters.values()),
                    on_record=on_record,
                    on_deals=on_deals,
                    closing=closing,
                )
            )
            outcome = engine.play()
            played = event_log.stream()
            made = event_log.take_made()  # a short log's records as the Python engine made them
            context = AuditContext(played, made, engine.known())
            audit = run_audit(registry.reporters.values(), context)
            flags = audit_events(audit)
            for event in flags:  # flags go to the tail, after `result`
                event_log.emit(event)
        except KeyboardInterrupt as stop:
            reason = "SIGTERM" if isinstance(stop, Terminated) else "SIGINT"
            raise EpisodeInterrupted(reason, event_log.interrupt(reason)) from None
        except Exception:
            event_log.write_finished()  # the partial log keeps every deal that ended
            raise
        event_log.close()
        records = event_log.stream() if flags else played
    finally:
        close_seats(seats)
        for f in filters:
            if hasattr(f.apply, "close"):
                f.apply.close()
    usage = engine.usage(played if made is None else made)
    shapes = (  # shapes are on usage lines: a log without any holds none
        shapes_by_slot(played if made is None else made, len(specs))
        if any(totals is not None for totals in usage)
        else [None] * len(specs)
    )
    seat_results = _seat_results(specs, seats, outcome, usage, shapes, provenance["seats"])
    plugins = {kind: provenance[kind] for kind in ("filters", "reporters")}
    results = Results(
        request.seed,
        request.mode,
        outcome.status,
        outcome.deals_played,
        seat_results,
        audit,
        exploitability=episode_report(config.rules, played),
        provenance=plugins,
        log_sha256=event_log.sha256(),
        engine=engine.name,
    )
    return results, records


def _seat_results(
    specs: Sequence[SeatSpec],
    seats: Sequence,
    outcome: Outcome,
    usage: Sequence[dict | None],
    shapes: Sequence[dict | None],
    provenance: Sequence[dict],
) -> tuple[SeatResult, ...]:
    return tuple(
        SeatResult(
            slot=slot,
            policy=str(spec),
            points=outcome.points[slot],
            score=outcome.score[slot],
            decisions=tally.decisions,
            rejected=tally.rejected,
            fallbacks=tally.fallbacks,
            faults=tally.faults,
            stand_in=getattr(seats[slot], "stand_in", None),
            usage=usage[slot],
            shapes=shapes[slot],
            provenance=provenance[slot],
        )
        for slot, (spec, tally) in enumerate(zip(specs, outcome.tallies, strict=True))
    )


def build_config(registry: Registry, request: EpisodeRequest) -> EpisodeConfig:
    mode = registry.mode(request.mode)
    try:
        rules = TableRules(mode=mode, seats=request.seats, max_bids=request.max_bids)
        return EpisodeConfig(
            rules=rules,
            seed=request.seed,
            deals=request.deals,
            talk=request.talk,
            clock=request.clock,
        )
    except ValueError as exc:
        raise SetupError(str(exc)) from None


def build_seat(
    registry: Registry,
    config: EpisodeConfig,
    slot: int,
    spec: SeatSpec,
    policies: tuple[str, ...] = (),
    factory: Callable[[SeatContext], Seat] | None = None,
):
    """The seat's policy object, built in this process by its plugin's factory
    (or by ``factory`` when the caller supplies the seat itself).

    ``policies`` is every seat's spec by slot, as the table's name cards show them.
    """
    seat_type, spec = registry.seat_for(spec)
    context = SeatContext.derive(
        config.seed, slot, config.rules, arg=spec.arg, talk=config.talk, policies=policies
    )
    return (factory or seat_type.factory)(context)


@attrs.frozen
class Unavailable:
    """A seat that could not be built or started: every turn is a fault, bayes plays it."""

    stand_in: str

    def decide(self, view):
        raise SeatUnavailable(self.stand_in)


def _table_seats(
    host: PluginHost,
    config: EpisodeConfig,
    typed,
    policies: tuple[str, ...],
    local_seats: Mapping[str, Callable[[SeatContext], Seat]],
):
    """The seats as they sit at the table; sandboxed workers are all started, then awaited.

    ``local_seats`` are factories the caller supplies for some seat names (the table
    server's browser seats); they are built here, in-process, like first-party seats.
    """
    seats: list = []
    for slot, (seat_type, spec) in enumerate(typed):
        local = local_seats.get(spec.name)
        if seat_type.sandboxed and local is None:
            seats.append(_start_sandboxed(host, config, slot, seat_type, spec, policies))
            continue
        try:
            seats.append(build_seat(host.registry, config, slot, spec, policies, local))
        except Exception as exc:
            if seat_type.provenance["distribution"] in (FIRST_PARTY_DISTRIBUTION, "local"):
                # our own factories refuse a bad spec: the user's table is wrong, say why
                raise SetupError(f"seat {slot} ({spec_text(spec)}): {exc}") from None
            # a third party's factory that raises costs its seat, not the table or league
            seats.append(_unavailable(slot, spec, f"its factory raised {one_line(exc)}"))
    for slot, seat in enumerate(seats):
        if isinstance(seat, SandboxedSeat):
            try:
                seat.ready()
            except WorkerFailed as exc:
                seat.close()
                seats[slot] = _unavailable(slot, typed[slot][1], f"its worker failed: {exc}")
    return seats


def _start_sandboxed(host, config, slot, seat_type, spec, policies):
    setup = {
        "name": seat_type.name,
        "slot": slot,
        "privateSeed": seeding.private_seed(config.seed, seeding.SEAT, slot),
        "mode": mode_to_json(config.rules.mode),
        "seats": config.rules.seats,
        "maxBids": config.rules.max_bids,
        "talk": config.talk,
        "arg": spec.arg,
        "policies": list(policies),
    }
    try:
        return SandboxedSeat(host.policy, seat_type.code, setup)
    except (OSError, WorkerFailed) as exc:
        return _unavailable(slot, spec, f"its worker did not start: {exc}")


def _unavailable(slot: int, spec: SeatSpec, reason: str) -> Unavailable:
    log.warning("seat unavailable, bayes plays it", slot=slot, seat=str(spec), reason=reason)
    return Unavailable(f"bayes played seat {slot} ({spec_text(spec)}): {reason}"[:500])


def _open_log(log_path: str | Path | None, force: bool) -> EventLog:
    try:
        return EventLog(log_path, force=force)
    except LogExists as exc:
        raise SetupError(str(exc)) from None
    except OSError as exc:
        raise SetupError(f"cannot write event log {log_path}: {exc.strerror or exc}") from None


def refuse_unwanted_arg(seat_type: SeatType, spec: SeatSpec) -> None:
    """A ``name:ARG`` spec for a seat that declared no argument would silently drop ARG."""
    if spec.arg is not None and seat_type.argument is None:
        raise ValueError(f"seat {spec.name!r} takes no argument (got {spec.arg!r})")


class Fallbacks(Sequence[Seat]):
    """Rule 11's fallback for each slot: the bayes baseline, on its own seeded stream.

    Each is built the first time its slot needs it: most episodes need none, and
    building a seat's stream is a fixed cost every short episode would pay.
    """

    def __init__(self, config: EpisodeConfig, factory: Callable[[SeatContext], Seat]):
        self.config = config
        self.factory = factory
        self._built: dict[int, Seat] = {}

    def __len__(self) -> int:
        return self.config.rules.seats

    def __getitem__(self, slot: int) -> Seat:
        if not 0 <= slot < len(self):
            raise IndexError(slot)
        seat = self._built.get(slot)
        if seat is None:
            context = SeatContext.derive(
                self.config.seed, slot, self.config.rules, seeding.FALLBACK
            )
            seat = self._built[slot] = self.factory(context)
        return seat
