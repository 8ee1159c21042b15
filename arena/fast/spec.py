"""A scripted table as plain numbers: what the compiled engine needs, read off the Python objects.

Every figure the C table uses comes from the same Python it replaces: the ladder and
ranks from :class:`~arena.rules.TableRules`, the likelihoods and opening shares from
:func:`~arena.probability.likelihoods` (what the scripted seats look up), the worth of
each facing from the audit reporter that declares the tally the C table keeps (a
:class:`~arena.registry.CompiledTally`), each seat's kind, numbers and stream state
from what the built seat declares (its ``compiled_spec()``, see docs/plugins.md) and
the deal stream from :class:`~arena.seeding.DealStreams`.
The C side only replays the decisions, so a change to a baseline's numbers reaches
both engines at once.
"""

from __future__ import annotations

from functools import cache

import attrs

from arena import seeding
from arena.modes import WILD_ONES, _uniform_hand
from arena.probability import likelihoods
from arena.registry import CompiledTally
from arena.rules import TableRules

SCRIPTED, RANDOM, COLLUDER = 0, 1, 2
"""The policies the C table plays (table.c): a seat declares which it is."""
MAX_SEATS, MAX_SYMBOLS, MAX_HAND = 8, 16, 16
"""What the C table's fixed arrays hold (table.h)."""

_MASK128 = (1 << 128) - 1
PCG64_MULT = 0x2360ED051FC65DA44385DF649FCCF645


@attrs.frozen
class CompiledSeat:
    """One seat as the C table plays it: what a seat's ``compiled_spec()`` returns."""

    kind: int
    rng_state: int
    rng_inc: int
    rng_has_uint32: int
    rng_uinteger: int
    chal: float = 0.0
    safe: float = 0.0
    pad: bool = False
    partners: int = 0
    """Colluder: bit s set when slot s is a partner."""
    call_below: float = 0.0


@attrs.frozen
class TableSpec:
    seats: int
    hand_size: int
    symbols: tuple[int, ...]
    max_bids: int
    max_quantity: int
    wild_index: int
    wild_ones: bool
    order: tuple[int, ...]
    ladder: tuple[int, ...]
    """Quantity, face index, for each bid lowest first."""
    rank: tuple[int, ...]
    """A bid's ladder place at ``quantity * len(symbols) + face index``."""
    chance: tuple[float, ...]
    """P(true) at ``face index * (hand_size + max_quantity) + need + hand_size - 1``."""
    expected: tuple[int, ...]
    worth: tuple[float, ...]
    """As ``chance``: what challenging the bid was worth, for the tally the C table keeps
    (all 0 when no reporter declares one)."""
    worth_band: tuple[int, ...]
    """As ``chance``: that facing's band."""
    deal_state: int
    deal_inc: int
    jump_mult: int
    jump_add: int
    seat_specs: tuple[CompiledSeat, ...]


def unsupported(rules: TableRules, seats) -> str | None:
    """Why these seats at this table cannot run compiled, or ``None`` when they can."""
    mode = rules.mode
    if mode.draw is not _uniform_hand:
        return f"mode {mode.name!r} deals with its own code"
    if rules.seats > MAX_SEATS or len(mode.symbols) > MAX_SYMBOLS or mode.hand_size > MAX_HAND:
        return "the table is larger than the compiled engine holds"
    if not all(-(2**31) < symbol < 2**31 for symbol in mode.symbols):
        return f"mode {mode.name!r} has symbols past 32 bits"
    for slot, seat in enumerate(seats):
        if not callable(getattr(seat, "compiled_spec", None)):
            return f"seat {slot} is not one the compiled engine plays (no compiled_spec)"
    return None


def table_spec(
    rules: TableRules, seed: int, order: tuple[int, ...], seats, tally: CompiledTally | None
) -> TableSpec:
    """The numbers of one episode's table; ``seats`` are the built seat objects by slot,
    ``tally`` what the C table keeps for the audit (its facings' worths)."""
    deal_bits = seeding.DealStreams(seed).for_deal(0).bit_generator.state["state"]
    jump_mult, per_inc = _STRIDE_JUMP
    return TableSpec(
        **_table_arrays(rules),
        **_facing_worths(rules, None if tally is None else tally.face_worths),
        order=tuple(order),
        deal_state=deal_bits["state"],
        deal_inc=deal_bits["inc"],
        jump_mult=jump_mult,
        jump_add=deal_bits["inc"] * per_inc & _MASK128,
        seat_specs=tuple(seat.compiled_spec() for seat in seats),
    )


@cache
def _table_arrays(rules: TableRules) -> dict:
    """What every episode at such a table shares: its shape, ladder and likelihoods."""
    mode = rules.mode
    symbols = mode.symbols
    faces = {face: i for i, face in enumerate(symbols)}
    ladder = rules.ladder
    rank = [0] * ((rules.max_quantity + 1) * len(symbols))
    for place, (quantity, face) in enumerate(ladder):
        rank[quantity * len(symbols) + faces[face]] = place
    chance, expected = likelihoods(rules)
    return {
        "seats": rules.seats,
        "hand_size": mode.hand_size,
        "symbols": symbols,
        "max_bids": rules.max_bids,
        "max_quantity": rules.max_quantity,
        "wild_index": -1 if mode.wild is None else faces[mode.wild],
        "wild_ones": mode.raise_rule == WILD_ONES,
        "ladder": tuple(n for quantity, face in ladder for n in (quantity, faces[face])),
        "rank": tuple(rank),
        "chance": tuple(chance[face][need] for face in symbols for need in _needs(rules)),
        "expected": tuple(expected[face] for face in symbols),
    }


@cache
def _facing_worths(rules: TableRules, face_worths) -> dict:
    """``worth`` and ``worth_band`` at such a table, laid out as ``chance``:
    ``face_worths(mode, unseen)[face][need]`` is (the worth, its band)."""
    mode = rules.mode
    facings = [(face, need) for face in mode.symbols for need in _needs(rules)]
    if face_worths is None:
        return {"worth": (0.0,) * len(facings), "worth_band": (0,) * len(facings)}
    worths = face_worths(mode, (rules.seats - 1) * mode.hand_size)
    return {
        "worth": tuple(worths[face][need][0] for face, need in facings),
        "worth_band": tuple(worths[face][need][1] for face, need in facings),
    }


def _needs(rules: TableRules) -> range:
    """Every need (a bid's quantity less the facer's own count) a facing can have."""
    return range(1 - rules.mode.hand_size, rules.max_quantity + 1)


def lcg_jump(steps: int, inc: int) -> tuple[int, int]:
    """PCG64's state after ``steps`` draws as ``mult * state + add`` (mod 2**128): the
    jump-ahead numpy's ``advance`` makes, as one affine step the C table applies per deal."""
    mult, add, cur_mult, cur_add = 1, 0, PCG64_MULT, inc
    while steps:
        if steps & 1:
            mult = mult * cur_mult & _MASK128
            add = (add * cur_mult + cur_add) & _MASK128
        cur_add = (cur_mult + 1) * cur_add & _MASK128
        cur_mult = cur_mult * cur_mult & _MASK128
        steps >>= 1
    return mult, add


_STRIDE_JUMP = lcg_jump(seeding.DealStreams.STRIDE, 1)
"""One deal's jump with increment 1: the increment enters the affine step linearly,
so a stream's own jump adds ``inc`` times this one's."""


def stream_state(rng) -> dict[str, int]:
    """A seat generator's PCG64 state, as the C table takes it."""
    state = rng.bit_generator.state
    return {
        "rng_state": state["state"]["state"],
        "rng_inc": state["state"]["inc"],
        "rng_has_uint32": state["has_uint32"],
        "rng_uinteger": state["uinteger"],
    }
