"""From names to a played episode: build the table from the registry, play, report.

This is the one place that turns seat specs, a mode name and options into an
:class:`~arena.engine.Engine` run with its event log, and the finished log into
:class:`~arena.results.Results`. The CLI and the tests both come through here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import attrs
import structlog

from arena import seeding
from arena.audit import audit_events, run_audit
from arena.engine import Engine, EpisodeConfig
from arena.eventlog import EventLog
from arena.exploitability import episode_report
from arena.plugins import PluginHost, Registry
from arena.results import Results, SeatResult, usage_by_slot
from arena.rules import DEFAULT_MAX_BIDS, TableRules
from arena.sandbox import SandboxedSeat, SandboxPolicy
from arena.seats import SeatContext, SeatSpec
from arena_plugins.scripted import bayes as bayes_baseline

log = structlog.get_logger(__name__)

DEFAULT_SCRIPTED = "bayes"
DEFAULT_SEATS = 4


class SetupError(ValueError):
    """The table cannot be built as asked; the message is one line for the user."""


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


def scripted_default(environ: Mapping[str, str] = os.environ) -> SeatSpec:
    """PLAYER_SCRIPTED names the policy that fills seats not otherwise given."""
    return SeatSpec.parse(environ.get("PLAYER_SCRIPTED", DEFAULT_SCRIPTED) or DEFAULT_SCRIPTED)


def table_specs(request: EpisodeRequest, environ: Mapping[str, str] = os.environ) -> list[SeatSpec]:
    given = list(request.seat_specs)
    if len(given) > request.seats:
        raise SetupError(f"{len(given)} seats given for a {request.seats}-seat table (use --seats)")
    return given + [scripted_default(environ)] * (request.seats - len(given))


def run_episode(
    host: PluginHost,
    request: EpisodeRequest,
    log_path: str | Path | None = None,
    environ: Mapping[str, str] = os.environ,
) -> tuple[Results, list[dict]]:
    """Play one episode; returns the results and the full event log's records."""
    registry = host.registry
    config = build_config(registry, request)
    specs = table_specs(request, environ)
    fallbacks = [_fallback_seat(config, slot) for slot in range(config.rules.seats)]
    filters = [f.apply for f in registry.ordered_talk_filters()]
    policies = tuple(str(spec) for spec in specs)
    seats = []
    try:
        for slot, spec in enumerate(specs):
            seats.append(_table_seat(host, config, slot, spec, policies, environ))
        with _open_log(log_path) as event_log:
            engine = Engine(config, seats, policies, fallbacks, event_log.emit, filters)
            outcome = engine.play()
            records = event_log.records()
            audit = run_audit(registry.reporters.values(), records)
            for event in audit_events(audit):  # flags go to the tail, after `result`
                event_log.emit(event)
                records.append(event.to_record())
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
        episode_report(config.rules, records),
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
):
    """The seat's policy object, built in this process by its plugin's factory.

    ``policies`` is every seat's spec by slot, as the table's name cards show them.
    """
    seat_type = registry.seat(spec.name)
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
        return seat_type.factory(context)
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
    source = host.registry.seat(spec.name).source
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


def _open_log(log_path: str | Path | None) -> EventLog:
    try:
        return EventLog(log_path)
    except OSError as exc:
        raise SetupError(f"cannot write event log {log_path}: {exc.strerror or exc}") from None


def _fallback_seat(config: EpisodeConfig, slot: int):
    """Rule 11's fallback: the bayes baseline, on its own seeded stream."""
    context = SeatContext(
        slot=slot,
        seed=config.seed,
        rules=config.rules,
        rng=seeding.stream(config.seed, seeding.FALLBACK, slot),
    )
    return bayes_baseline(context)
