"""Hand-made positions, contexts and tables for the tests.

The legal action space of a hand-built view is worked out here from rules 3
and 4, not by ``arena.rules``, so a view never inherits the code under test.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import contextmanager

from arena import seeding
from arena.engine import Engine, EpisodeConfig, Outcome
from arena.eventlog import EventLog
from arena.modes import Mode
from arena.plugins import load
from arena.rules import TableRules
from arena.seats import SeatContext
from arena.view import LegalActions, PublicBid, SeatView
from arena_plugins.scripted import bayes


@contextmanager
def plugged(module: object, name: str, environ: dict[str, str] | None = None):
    """A freshly loaded host with ``module`` added as plugin ``name``; unregistered after.

    ``environ`` holds the plugin switches the host loads under (none by default).
    """
    host = load(environ or {})
    info = host.add(module, name)
    try:
        yield host, info
    finally:
        if host.manager.is_registered(module):
            host.manager.unregister(module)


def context(rules: TableRules, slot: int = 0, seed: int = 0) -> SeatContext:
    """A seat context with the generator the runner would give (seed, slot)."""
    return SeatContext.derive(seed, slot, rules)


def legal_actions(rules: TableRules, bids: Sequence[tuple[int, int, int]]) -> LegalActions:
    """The action space by rules 3 and 4."""
    faces = rules.mode.symbols
    if not bids:
        return LegalActions(False, (1, faces[0]), rules.max_quantity)
    _, q0, f0 = bids[-1]
    higher = [f for f in faces if f > f0]
    if higher:
        low = (q0, higher[0])
    elif q0 < rules.max_quantity:
        low = (q0 + 1, faces[0])
    else:
        low = None
    return LegalActions(True, low, rules.max_quantity)


def make_view(
    rules: TableRules,
    hand: Sequence[int],
    bids: Sequence[tuple[int, int, int]] = (),
    slot: int = 0,
    deal: int = 0,
) -> SeatView:
    """A hand-built position: ``bids`` are (slot, quantity, face) in the order made."""
    order = tuple(range(rules.seats))
    return SeatView(
        slot=slot,
        deal=deal,
        mode=rules.mode.name,
        symbols=rules.mode.symbols,
        hand_size=rules.mode.hand_size,
        seats=rules.seats,
        table_order=order,
        opener=order[deal % rules.seats],
        max_bids=rules.max_bids,
        hand=tuple(hand),
        bids=tuple(PublicBid(*b) for b in bids),
        talk=(),
        history=(),
        notes=None,
        notes_truncated=False,
        legal=legal_actions(rules, bids),
        talk_enabled=False,
    )


def play_table(
    seats: Sequence[object],
    mode: Mode,
    seed: int = 0,
    deals: int = 1,
    max_bids: int = 12,
    talk: bool = False,
    clock: float | None = None,
    talk_filters: Sequence[Callable] = (),
    names: Sequence[str] | None = None,
) -> tuple[Outcome, list[dict]]:
    """Sit ``seats`` (objects with ``decide``) at an engine directly; fallbacks are bayes.

    ``names`` are the policies the log records (default: each seat's class name).
    """
    rules = TableRules(mode=mode, seats=len(seats), max_bids=max_bids)
    config = EpisodeConfig(rules=rules, seed=seed, deals=deals, talk=talk, clock=clock)
    fallbacks = [
        bayes(SeatContext.derive(seed, slot, rules, seeding.FALLBACK)) for slot in range(len(seats))
    ]
    names = list(names) if names else [type(seat).__name__ for seat in seats]
    log = EventLog()
    engine = Engine(config, list(seats), names, fallbacks, log.emit, talk_filters)
    outcome = engine.play()
    return outcome, log.records()
