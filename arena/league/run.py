"""Running a league: check it can run, play what the store lacks, store each episode as it lands.

Nothing is written before the first episode is stored (see
:mod:`arena.league.store`), so every check here (unknown names, a Claude
entrant with no key, other settings, a plugin upgraded since the stored
episodes) fails with the file as it was. Episodes land in any order; the
store and the standings order them by schedule index, so the concurrency
never shows in the results.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator, Mapping

import attrs

from arena import limits as limiter
from arena.league.allocation import allocated_draws, stored_evidence
from arena.league.config import Entrant, LeagueError, LeagueSpec
from arena.league.cost import (
    DEFAULT_PROVIDER,
    NO_PRICE_KNOWN,
    TOKEN_KINDS,
    price_of,
    seat_tokens,
    unpriced_source,
)
from arena.league.executors import Played, make_executor
from arena.league.looks import league_alpha
from arena.league.report import league_report
from arena.league.schedule import Fixture, fixtures
from arena.league.store import LeagueStore, StoredEpisode, StoreError
from arena.plugins import PluginHost
from arena.registry import Registry
from arena.runner import refuse_unwanted_arg
from arena.seats import SeatSpec

POLL = 0.2
"""Seconds the main thread waits for a result before looking again (Ctrl-C, progress)."""


@attrs.define
class Progress:
    """What the progress line shows; updated as episodes land."""

    done: int
    total: int
    fallbacks: int = 0
    tokens: int = 0
    usd: float = 0.0
    stopped: str | None = None
    """Why the league stopped short (``budget``), or ``None``."""

    @property
    def in_flight_requests(self) -> int:
        return limiter.LIMITER.in_flight

    @property
    def retries(self) -> int:
        return limiter.LIMITER.retries


def run_league(
    spec: LeagueSpec,
    store: LeagueStore,
    host: PluginHost,
    executor: str = "serial",
    address: str | None = None,
    workers: int | None = None,
    allow_stand_in: bool = False,
    allow_upgrade: bool = False,
    progress: Callable[[Progress], None] = lambda state: None,
    environ: Mapping[str, str] = os.environ,
) -> Progress:
    """Play every fixture the store does not have yet, within the budget; the fixtures
    are drawn as they are submitted, so the first table starts at once, and with a target
    a round's fixtures only once the rounds before it are stored."""
    check_league(spec, host, allow_stand_in, environ)
    settings = spec.settings()
    store.check(settings)
    provenance = current_provenance(spec, host)
    check_provenance(store, provenance, allow_upgrade)
    registry = host.registry
    models = {
        e.name: (
            model_of(registry, e.spec, environ),
            provider_of(registry, e.spec, environ),
            unpriced_why(registry, e.spec, environ),
        )
        for e in spec.entrants
    }
    finished = store.finished()  # indexes of this schedule: the settings matched
    state = Progress(done=len(finished), total=spec.episodes)
    state.tokens, state.usd, spent_episodes = store.spent()
    limiter.configure(spec.api_limits)
    progress(state)
    if _over_budget(spec, state, spent_episodes, 1):  # spent already: no workers to start
        state.stopped = "budget"
        return state
    pool = make_executor(executor, host, spec.concurrency, spec.api_limits, address, workers)
    # With a budget, only the tables being played are paid for ahead: none waits queued.
    in_flight = pool.slots if spec.budget.limited else pool.capacity
    try:
        for round_fixtures in _rounds(spec, store):
            pending = (f for f in round_fixtures if f.index not in finished)
            upcoming = next(pending, None)
            while upcoming is not None or pool.busy:
                while upcoming is not None and pool.busy < in_flight:
                    if _over_budget(spec, state, spent_episodes, pool.busy + 1):
                        state.stopped = "budget"
                        upcoming = None
                        break
                    pool.submit(upcoming)
                    upcoming = next(pending, None)
                spent_episodes = _store_arrived(
                    spec, store, pool, provenance, models, state, spent_episodes
                )
                progress(state)
            if state.stopped is None and spec.target_ci is not None and _target_met(spec, store):
                state.stopped = "target"
            if state.stopped is not None:
                break
    finally:
        pool.close()
    store.record_stop(state.stopped or "cap", state.done // spec.rotations)
    return state


def _rounds(spec: LeagueSpec, store: LeagueStore) -> Iterator[Iterator[Fixture]]:
    """The fixtures round by round: with a target, rounds of :attr:`LeagueSpec.round_tables`,
    each drawn only once the rounds before it are stored (an allocated round is seated from
    their results, :mod:`arena.league.allocation`); else one round of every table."""
    if spec.target_ci is None:
        yield fixtures(spec)
        return
    draws = None
    if spec.allocates:
        alpha = league_alpha(spec.tables, len(spec.entrants), spec.target_ci, spec.separate)
        draws = allocated_draws(spec, lambda table: stored_evidence(store.path, table, alpha))
    every = fixtures(spec, draws)
    for _ in range(spec.looks):
        yield itertools.islice(every, spec.round_tables * spec.rotations)


def _target_met(spec: LeagueSpec, store: LeagueStore) -> bool:
    """Every entrant's mean-score interval (at the league's per-look level) within target;
    with ``separate``, every adjacent pair in the ranking settled."""
    report = league_report(store.path)
    if spec.separate:
        return all(pair["settled"] for pair in report["separation"])
    return all((s["ci95"][1] - s["ci95"][0]) / 2 <= spec.target_ci for s in report["standings"])


def _store_arrived(spec, store, pool, provenance, models, state, spent_episodes) -> int:
    """Store what the pool finished, in one transaction, and count it in ``state``."""
    arrived = [stored_episode(spec, played, provenance, models) for played in pool.collect(POLL)]
    if arrived:  # one transaction for what arrived together
        store.save(spec.settings(), arrived)
    for episode in arrived:
        spent_episodes += 1
        state.done += 1
        state.fallbacks += sum(s["fallbacks"] for s in episode.results["seats"])
        state.tokens += sum(sum(row[8:12]) for row in episode.seat_rows)
        state.usd += sum(row[12] for row in episode.seat_rows)
    return spent_episodes


def check_league(
    spec: LeagueSpec, host: PluginHost, allow_stand_in: bool, environ: Mapping[str, str]
) -> None:
    """Every name known, no paid seat's entrant silently played by bayes, and each paid
    seat's own preflight passed (its model playable)."""
    host.registry.mode(spec.table.mode)
    for entrant in spec.entrants:
        seat_type = host.registry.seat(entrant.spec.name)
        try:  # here, not at its first table: a worker's table fails after others stored
            refuse_unwanted_arg(seat_type, entrant.spec)
        except ValueError as exc:
            raise LeagueError(f"entrant {entrant.name!r}: {exc}") from None
        if seat_type.person is not None:  # it would wait for a person at an unattended table
            raise LeagueError(
                f"entrant {entrant.name!r}: a {entrant.spec.name} seat waits for a person; "
                "a league plays unattended (play it with arena play or arena serve)"
            )
    keyless: dict[str, list[Entrant]] = {}
    for entrant in spec.entrants:
        missing = missing_key(host.registry, entrant.spec, environ)
        if missing is not None:
            keyless.setdefault(missing, []).append(entrant)
    if keyless and not allow_stand_in:
        key_env, entrants = next(iter(keyless.items()))
        seats = "/".join(dict.fromkeys(e.spec.name for e in entrants))
        raise LeagueError(
            f"no {key_env}: {seats} entrants ({', '.join(e.name for e in entrants)}) would be"
            " played by bayes; set the key, or pass --allow-stand-in to run them as marked"
            " stand-ins"
        )
    for entrant in spec.entrants:
        model = model_of(host.registry, entrant.spec, environ)
        if model is None:
            continue
        provider = provider_of(host.registry, entrant.spec, environ)
        if price_of(model, spec.prices, provider) is not None:
            continue
        if provider is None and not spec.budget.limited:  # no provider: shown unpriced
            continue
        what = (
            f"no price for model {model!r}"
            if provider is not None
            else f"model {model!r} is unpriced"
            f" ({unpriced_why(host.registry, entrant.spec, environ)}: no provider=) and the"
            " league has a budget"
        )
        raise LeagueError(
            f'entrant {entrant.name!r}: {what}; add [prices."{model}"] to the league file'
        )
    for entrant in spec.entrants:  # last, as it may ask the provider: before the first table
        try:
            host.registry.preflight(entrant.spec, environ)
        except ValueError as exc:
            raise LeagueError(f"entrant {entrant.name!r}: {exc}") from None


def model_of(registry: Registry, spec: SeatSpec, environ: Mapping[str, str]) -> str | None:
    """The model a paid seat calls, as it declares (``None`` for a seat that calls none)."""
    paid = registry.seat(spec.name).paid
    if paid is None:
        return None
    try:
        return paid.model(spec.arg, environ)
    except ValueError as exc:
        raise LeagueError(f"seat {spec}: {exc}") from None


def unpriced_why(registry: Registry, spec: SeatSpec, environ: Mapping[str, str]) -> str:
    """Why a paid seat no price covers is unpriced, in its own words
    (:attr:`arena.registry.PaidCalls.unpriced`), else as the arena can say it."""
    paid = registry.seat(spec.name).paid
    if paid is None or paid.unpriced is None:
        return NO_PRICE_KNOWN
    return paid.unpriced(spec.arg, environ)


def missing_key(registry: Registry, spec: SeatSpec, environ: Mapping[str, str]) -> str | None:
    """The key a paid seat lacks (``None``: it has what it needs, or calls nothing): what
    it declares, else its ``key_env`` if that is unset."""
    paid = registry.seat(spec.name).paid
    if paid is None:
        return None
    if paid.missing_key is None:
        return None if environ.get(paid.key_env, "").strip() else paid.key_env
    try:
        return paid.missing_key(spec.arg, environ)
    except ValueError as exc:
        raise LeagueError(f"seat {spec}: {exc}") from None


def provider_of(registry: Registry, spec: SeatSpec, environ: Mapping[str, str]) -> str | None:
    """The provider a paid seat's calls are priced by, as it declares (Anthropic's when it
    declares none; ``None``: a server the user runs or a host no table knows, unpriced)."""
    paid = registry.seat(spec.name).paid
    if paid is None or paid.provider is None:
        return DEFAULT_PROVIDER
    try:
        return paid.provider(spec.arg, environ)
    except ValueError as exc:
        raise LeagueError(f"seat {spec}: {exc}") from None


def current_provenance(spec: LeagueSpec, host: PluginHost) -> dict[str, dict[str, str | None]]:
    """Each entrant's plugin distribution and version as installed now."""
    plugins = {info.name: info for info in host.plugins}
    found = {}
    for entrant in spec.entrants:
        info = plugins.get(host.registry.seat(entrant.spec.name).source)
        trust = info.trust if info else "local"
        found[entrant.name] = {
            "distribution": info.distribution if info else None,
            "version": info.version if info else None,
            "isolation": "sandbox" if trust == "third-party" else "in-process",
        }
    return found


def check_provenance(
    store: LeagueStore, provenance: Mapping[str, Mapping[str, str | None]], allow_upgrade: bool
) -> None:
    """Refuse to pool episodes played by another version of an entrant's plugin."""
    if allow_upgrade:
        return
    for entrant, played in sorted(store.provenance().items()):
        now = (provenance[entrant]["distribution"], provenance[entrant]["version"])
        other = sorted(f"{d} {v}" for d, v in played if (d, v) != now)
        if other:
            raise StoreError(
                f"{store.path}: entrant {entrant!r} was played with {', '.join(other)} and is now"
                f" {now[0]} {now[1]}; pass --allow-upgrade to pool them anyway"
            )


def stored_episode(
    spec: LeagueSpec,
    played: Played,
    provenance: Mapping[str, Mapping[str, str | None]],
    models: Mapping[str, tuple[str | None, str | None, str]],
) -> StoredEpisode:
    """A played fixture as the store's rows: seats with entrant, tokens, cost and provenance;
    ``models`` is the model each entrant calls, its provider and why it would be unpriced
    (:func:`model_of`, :func:`provider_of`, :func:`unpriced_why`). A model no price covers
    is stored with that reason (:func:`arena.league.cost.unpriced_source`)."""
    fixture, results, text, log, points = played
    rows = []
    for seat in results["seats"]:
        entrant = fixture.entrants[seat["slot"]]
        model, provider, unpriced = models[entrant]
        tokens = seat_tokens(seat)
        price = price_of(model, spec.prices, provider) if model is not None else None
        source = seat.get("provenance") or provenance[entrant]
        rows.append(
            (
                seat["slot"],
                entrant,
                seat["policy"],
                seat["points"],
                seat["score"],
                seat["fallbacks"],
                seat.get("standIn"),
                model,
                *(tokens[kind] for kind in TOKEN_KINDS),
                price.usd(tokens) if price else 0.0,
                source.get("distribution"),
                source.get("version"),
                source.get("isolation"),
                price.named_source
                if price
                else (unpriced_source(unpriced) if model is not None else None),
            )
        )
    return StoredEpisode(
        fixture.index, fixture.table, fixture.rotation, results, text, rows, points, log
    )


def _over_budget(spec: LeagueSpec, state: Progress, episodes: int, starting: int) -> bool:
    """Would ``starting`` more episodes, each costing the mean so far, pass the budget?

    A spent budget (a zero one included) starts nothing. Before any episode is done there
    is no mean: the runner then starts one table per slot, and those bound the overshoot.
    """
    budget = spec.budget
    if (budget.usd is not None and state.usd >= budget.usd) or (
        budget.tokens is not None and state.tokens >= budget.tokens
    ):
        return True
    if not episodes:
        return False
    usd = budget.usd is not None and state.usd * (1 + starting / episodes) > budget.usd
    tokens = budget.tokens is not None and state.tokens * (1 + starting / episodes) > budget.tokens
    return usd or tokens
