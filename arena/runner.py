"""From names to a played episode: build the table from the registry, play, report.

This is the one place that turns seat specs, a mode name and options into an
:class:`~arena.engine.Engine` run with its event log, and the finished log into
:class:`~arena.results.Results`. The CLI and the tests both come through here.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path

import attrs
import structlog

from arena import seeding
from arena.audit import audit_events, run_audit
from arena.check.digest import log_digest
from arena.engine import Engine, EpisodeConfig
from arena.eventlog import EventLog, LogExists
from arena.events import Event
from arena.plugins import PluginHost, Registry, SeatType, UnknownName
from arena.results import Results, SeatResult, usage_by_slot
from arena.rules import DEFAULT_MAX_BIDS, TableRules
from arena.sandbox import SandboxedSeat, SandboxPolicy
from arena.seats import Seat, SeatContext, SeatSpec
from arena_plugins.scripted import bayes as bayes_baseline

log = structlog.get_logger(__name__)

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
            _refuse_unwanted_arg(registry.seat(spec.name), spec)
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
) -> tuple[Results, list[dict]]:
    """Play one episode; returns the results and the full event log's records.

    ``on_record`` is handed every record, full information, as a log reader would
    parse it, the moment it is logged (a live display filters it for whoever
    watches). ``local_seats`` maps seat names to factories the caller supplies
    itself, e.g. the table server's browser seats. The log at ``log_path`` is
    never clobbered unless ``force`` (see :class:`EventLog`). A signal raises
    :class:`EpisodeInterrupted`; a failed write ``LogWriteError``.
    """
    registry = host.registry
    config = build_config(registry, request)
    specs = table_specs(request, environ, registry)
    fallbacks = [_fallback_seat(config, slot) for slot in range(config.rules.seats)]
    filters = [f.apply for f in registry.ordered_talk_filters()]
    policies = tuple(str(spec) for spec in specs)
    seats = []
    try:
        for slot, spec in enumerate(specs):
            local = (local_seats or {}).get(spec.name)
            if local is not None:
                seats.append(build_seat(registry, config, slot, spec, policies, local))
            else:
                seats.append(_table_seat(host, config, slot, spec, policies, environ))
        event_log = _open_log(log_path, force)
        try:
            emit = event_log.emit if on_record is None else _tee(event_log, on_record)
            engine = Engine(config, seats, policies, fallbacks, emit, filters)
            outcome = engine.play()
            records = event_log.records()
            audit = run_audit(registry.reporters.values(), records)
            for event in audit_events(audit):  # flags go to the tail, after `result`
                event_log.emit(event)
                records.append(event.to_record())
        except KeyboardInterrupt as stop:
            reason = "SIGTERM" if isinstance(stop, Terminated) else "SIGINT"
            raise EpisodeInterrupted(reason, event_log.interrupt(reason)) from None
        event_log.close()
    finally:
        for seat in seats:
            if hasattr(seat, "close"):
                seat.close()
    usage = usage_by_slot(records, config.rules.seats)
    seat_results = tuple(
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
        )
        for slot, (spec, tally) in enumerate(zip(specs, outcome.tallies, strict=True))
    )
    results = Results(
        request.seed,
        request.mode,
        outcome.status,
        outcome.deals_played,
        seat_results,
        audit,
        log_sha256=log_digest(event_log.text().encode("utf-8")),
    )
    return results, records


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
    if factory is None:
        factory = registry.seat(spec.name).factory
    context = SeatContext(
        slot=slot,
        seed=config.seed,
        rules=config.rules,
        rng=seeding.stream(config.seed, seeding.SEAT, slot),
        arg=spec.arg,
        talk=config.talk,
        policies=policies,
    )
    try:
        return factory(context)
    except Exception as exc:  # a seat that cannot be built is a setup error, with its reason
        raise SetupError(f"seat {slot} ({spec}): {exc}") from None


def _table_seat(
    host: PluginHost,
    config: EpisodeConfig,
    slot: int,
    spec: SeatSpec,
    policies: tuple[str, ...],
    environ: Mapping[str, str],
):
    """A seat as it will sit at the table: third-party policies go into the sandbox."""
    seat_type = host.registry.seat(spec.name)
    try:
        _refuse_unwanted_arg(seat_type, spec)
    except ValueError as exc:
        raise SetupError(f"seat {slot} ({spec}): {exc}") from None
    source = seat_type.source
    if host.trust(source) != "third-party":
        return build_seat(host.registry, config, slot, spec, policies)
    try:
        policy = SandboxPolicy.from_environ(environ)
    except ValueError as exc:
        raise SetupError(str(exc)) from None
    if policy.mode == "off":
        return build_seat(host.registry, config, slot, spec, policies)
    if policy.mode == "process":
        log.warning("bubblewrap not found: third-party seat runs in a plain subprocess", slot=slot)
    setup = {
        "mode": config.rules.mode.name,
        "seed": config.seed,
        "seats": config.rules.seats,
        "maxBids": config.rules.max_bids,
        "talk": config.talk,
        "slot": slot,
        "spec": str(spec),
        "policies": list(policies),
    }
    try:
        return SandboxedSeat(setup, policy)
    except Exception as exc:  # the plugin could not even start: the user's table is wrong
        raise SetupError(f"seat {slot} ({spec}): {exc}") from None


def _tee(event_log: EventLog, on_record: Callable[[dict], None]) -> Callable[[Event], None]:
    def emit(event: Event) -> None:
        event_log.emit(event)
        on_record(json.loads(event_log.lines[-1]))

    return emit


def _open_log(log_path: str | Path | None, force: bool) -> EventLog:
    try:
        return EventLog(log_path, force=force)
    except LogExists as exc:
        raise SetupError(str(exc)) from None
    except OSError as exc:
        raise SetupError(f"cannot write event log {log_path}: {exc.strerror or exc}") from None


def _refuse_unwanted_arg(seat_type: SeatType, spec: SeatSpec) -> None:
    """A ``name:ARG`` spec for a seat that declared no argument would silently drop ARG."""
    if spec.arg is not None and seat_type.argument is None:
        raise ValueError(f"seat {spec.name!r} takes no argument (got {spec.arg!r})")


def _fallback_seat(config: EpisodeConfig, slot: int):
    """Rule 11's fallback: the bayes baseline, on its own seeded stream."""
    context = SeatContext(
        slot=slot,
        seed=config.seed,
        rules=config.rules,
        rng=seeding.stream(config.seed, seeding.FALLBACK, slot),
    )
    return bayes_baseline(context)
