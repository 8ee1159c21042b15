"""The conformance kit: the checks the arena runs on its own seats and modes, for plugin authors.

Shipped inside the package (as PettingZoo ships ``api_test``) so a third
party's test suite runs exactly the checks ours does::

    from arena.testing import check_mode, check_seat

    def test_my_seat():
        check_seat(MySeat)  # any factory: SeatContext -> object with decide(view)

    def test_my_mode():
        check_mode(MY_MODE)

``check_seat`` plays the seat on seeded tables of every size from 2 to 8 in
every installed mode, alone and beside the ``random`` and ``bayes`` seats; it
fails when the seat causes a rejection, a fault or a fallback (rule 11), when
the same seed does not give the same game, or when the seat mutates its view.
Then it plays one table per mode with the seat in every slot through the real
sandbox, as a third party's seat is played: a worker under the arena's
isolation, given only its view. A seat that only works in-process (it needs
the arena's environment, files or network) fails there.
``check_talk_filter`` and ``check_reporter`` check the other two kinds of plugin.
``check_mode`` checks a mode's ``draw`` and ``render`` contract. Failures are
plain ``AssertionError``\\ s naming the table; no test framework is required.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable, Iterable
from typing import Any

import attrs
import numpy as np

from arena.hookspecs import hookimpl
from arena.modes import Mode
from arena.plugins import PluginHost, SeatType, load
from arena.rules import MAX_SEATS, MIN_SEATS
from arena.runner import EpisodeRequest, run_episode
from arena.sandbox.protocol import WorkerCode
from arena.seats import SeatContext, SeatSpec
from arena.view import SeatView

UNDER_TEST = "seat-under-test"
OPPONENTS = ("random", "bayes")
"""Installed seats the checked seat also sits beside: random reaches every corner
of the bid space (up to the maximum quantity), bayes plays a sensible game."""


# --- seats ------------------------------------------------------------------------------


def check_seat(
    factory: Callable[[SeatContext], Any],
    modes: Iterable[str] | None = None,
    seat_counts: Iterable[int] = range(MIN_SEATS, MAX_SEATS + 1),
    seeds: Iterable[int] = (0,),
    deals: int = 4,
    sandbox: bool = True,
) -> None:
    """Play ``factory``'s seat on seeded tables; raise ``AssertionError`` on any misconduct.

    ``modes`` are installed mode names (default: all). Each table is played twice
    to check that the same seed gives the same event log. ``sandbox=False`` skips
    the sandboxed pass (for a factory that is not importable by module and name).
    """
    kit = _KitPlugin(factory)
    host = load()
    info = host.add(kit, "arena.testing")
    assert info.broken is None, f"the seat could not be registered: {info.broken}"
    mode_names = sorted(host.registry.modes) if modes is None else list(modes)
    assert mode_names, "no game mode is installed to play the seat in"
    for mode in mode_names:
        for seats in seat_counts:
            for layout, names in _layouts(host, seats):
                for seed in seeds:
                    request = EpisodeRequest(
                        mode=mode,
                        seed=seed,
                        deals=deals,
                        seats=seats,
                        seat_specs=tuple(SeatSpec(n) for n in names),
                        talk=seats % 2 == 1,  # half the tables with talk on
                    )
                    where = f"{mode}, {seats} seats, {layout}, seed {seed}"
                    _check_table(host, kit, request, where)
    if sandbox:
        _check_sandboxed(factory, mode_names, seeds, deals)


def _check_sandboxed(factory, mode_names: list[str], seeds: Iterable[int], deals: int) -> None:
    """One 4-seat table per mode, every seat the factory's, each in its own worker."""
    name = f"{factory.__module__}:{factory.__qualname__}"
    assert "<locals>" not in name and factory.__module__ != "__main__", (
        f"{name}: the sandbox imports the seat by module and name, so it must be defined "
        "at module level of an importable module (or pass sandbox=False)"
    )
    host = load()
    isolation = host.policy.isolation
    if isolation == "in-process":
        return  # ARENA_SANDBOX=off: the in-process sweep above is all there is
    provenance = {"distribution": name, "version": "", "isolation": isolation}
    host.registry.seats[UNDER_TEST] = SeatType(
        name, None, "", False, name, provenance=provenance, code=WorkerCode.seat_factory(name)
    )
    for mode in mode_names:
        for seed in seeds:
            request = EpisodeRequest(
                mode=mode, seed=seed, deals=deals, seat_specs=(SeatSpec(UNDER_TEST),) * 4
            )
            _check_table(host, _KitPlugin(factory), request, f"{mode}, sandboxed ({isolation})")


# --- talk filters and reporters -------------------------------------------------------------


SAMPLE_LINES = ("", "hello", "I hold three fives, honest", "é" * 300, "x" * 5000)


def check_talk_filter(apply: Callable[[str, int], str | None], seats: int = 4) -> None:
    """``apply(text, speaker)`` returns a str or ``None`` for any line, the same each time."""
    for text in SAMPLE_LINES:
        for speaker in range(seats):
            first, second = apply(text, speaker), apply(text, speaker)
            where = f"filter on {text[:20]!r} from seat {speaker}"
            assert first is None or isinstance(first, str), f"{where}: returned {first!r}"
            assert first == second, f"{where}: returned {first!r} and then {second!r}"


def check_reporter(report: Callable[[list[dict]], Any], seeds: Iterable[int] = (0, 1)) -> None:
    """``report(records)`` on real logs: JSON-able, the same each time, the records untouched."""
    host = load()
    for seed in seeds:
        _, records = run_episode(host, EpisodeRequest(seed=seed, deals=4), environ={})
        records = [r for r in records if r["type"] != "audit"]
        before = copy.deepcopy(records)
        section = report(records)
        assert records == before, f"seed {seed}: the reporter changed the records it was given"
        assert json.loads(json.dumps(section)) == section, (
            f"seed {seed}: the section is not plain JSON: {section!r}"
        )
        assert report(copy.deepcopy(before)) == section, (
            f"seed {seed}: the same log gave another section"
        )


@attrs.define
class _KitPlugin:
    """Registers the seat under test, each instance wrapped in a view guard."""

    factory: Callable[[SeatContext], Any]
    mutations: list[str] = attrs.Factory(list)

    @hookimpl
    def register_seats(self, register):
        register(UNDER_TEST, self.build, description="the seat arena.testing is checking")

    def build(self, context: SeatContext) -> _Guarded:
        return _Guarded(self.factory(context), self.mutations)


@attrs.define
class _Guarded:
    """Passes each view to the seat and notes it if the seat changed the view."""

    seat: Any
    mutations: list[str]

    def decide(self, view: SeatView):
        before = copy.deepcopy(view)
        reply = self.seat.decide(view)
        if view != before:
            self.mutations.append(f"slot {view.slot}, deal {view.deal}")
        return reply


def _layouts(host: PluginHost, seats: int) -> list[tuple[str, list[str]]]:
    tables = [("alone", [UNDER_TEST] * seats)]
    for opponent in OPPONENTS:
        if opponent in host.registry.seats:
            names = [UNDER_TEST if slot % 2 == 0 else opponent for slot in range(seats)]
            tables.append((f"beside {opponent}", names))
    return tables


def _check_table(host: PluginHost, kit: _KitPlugin, request: EpisodeRequest, where: str) -> None:
    no_environment: dict[str, str] = {}  # PLAYER_SCRIPTED must not change the table
    results, first = run_episode(host, request, environ=no_environment)
    checked = {s.slot for s in results.seats if s.policy == UNDER_TEST}
    for record in first:
        if record["type"] in ("rejected", "fault") and record["slot"] in checked:
            raise AssertionError(
                f"{where}: the seat at slot {record['slot']} caused a {record['type']} "
                f"in deal {record['deal']}: {record['reason']}"
                + (f" (reply: {record['reply']!r})" if "reply" in record else "")
            )
    for seat in results.seats:
        if seat.slot in checked:
            assert seat.fallbacks == 0, (
                f"{where}: slot {seat.slot} needed {seat.fallbacks} fallbacks"
            )
    assert not kit.mutations, f"{where}: the seat mutated its view ({kit.mutations[0]})"
    _, second = run_episode(host, request, environ=no_environment)
    for number, (a, b) in enumerate(zip(first, second, strict=False), start=1):
        assert a == b, (
            f"{where}: the same seed gave a different game at log line {number}: {a} then {b} "
            "(draw every random choice from context.rng)"
        )
    assert len(first) == len(second), f"{where}: the same seed gave a log of another length"


# --- modes ------------------------------------------------------------------------------


def check_mode(mode: Mode, draws: int = 300) -> None:
    """Check ``mode``'s declaration, ``draw`` and ``render``; raise ``AssertionError`` if wrong.

    ``draw(mode, rng)`` must return a tuple of ``hand_size`` ints from ``symbols``, the
    same hand for the same generator state (and nothing from global random state),
    and, over many hands, every symbol: the rules' p = 1 / len(symbols) assumes it.
    ``render(mode, hand)`` must return a non-empty str.
    """
    assert isinstance(mode, Mode), f"expected an arena.modes.Mode, got {type(mode).__name__}"
    assert mode.name and mode.name.strip() == mode.name and " " not in mode.name, (
        f"mode name {mode.name!r} must be one word (it is typed on the command line)"
    )
    assert mode.hand_size >= 1, f"mode {mode.name}: hand_size must be >= 1"
    seen: set[int] = set()
    for seed in range(draws):
        hand = _draw_with_global_state(mode, seed, global_seed=seed)
        again = _draw_with_global_state(mode, seed, global_seed=seed + 1)
        where = f"mode {mode.name}, draw from default_rng({seed})"
        assert isinstance(hand, tuple), f"{where}: draw returned {type(hand).__name__}, not tuple"
        assert len(hand) == mode.hand_size, (
            f"{where}: draw returned {len(hand)} symbols, hand_size is {mode.hand_size}"
        )
        strays = [s for s in hand if type(s) is not int or s not in mode.symbols]
        assert not strays, f"{where}: {strays} are not among the symbols {mode.symbols}"
        assert hand == again, (
            f"{where}: the same generator state drew {hand} and then {again} "
            "(draw only from the rng argument)"
        )
        text = mode.render_hand(hand)
        assert isinstance(text, str) and text, f"{where}: render returned {text!r}, not a str"
        seen.update(hand)
    # A symbol with p = 1/k is missed by n independent draws with probability (1 - 1/k)^n;
    # only check when that is negligible (< 1e-6 for every symbol).
    if len(mode.symbols) * (1 - 1 / len(mode.symbols)) ** (draws * mode.hand_size) < 1e-6:
        missing = sorted(set(mode.symbols) - seen)
        assert not missing, f"mode {mode.name}: {draws} hands never drew {missing}"


def _draw_with_global_state(mode: Mode, seed: int, global_seed: int) -> tuple:
    """Draw from a fresh seeded generator while the global generators hold ``global_seed``."""
    saved_random, saved_numpy = random.getstate(), np.random.get_state()
    try:
        random.seed(global_seed)
        np.random.seed(global_seed)
        return mode.draw_hand(np.random.default_rng(seed))
    finally:
        random.setstate(saved_random)
        np.random.set_state(saved_numpy)
