"""The soft-play audit of rules.md: five figures per ordered pair of slots, from the log alone.

The event log holds every hand, every bid and every challenge, so the audit needs
nothing else: it is a pure function of the records, and an episode's audit and the
audit of its saved log are the same numbers. Each figure is registered as its own
reporter, so it lands in ``results.audit`` under its rulebook name.

A *facing* is a decision taken with another seat's bid standing: the next bid of
the deal, or the challenge that ends it. A forced challenge (rule 8) is the sim's
move, not the seat's, so it is no facing; a fallback move (rule 11) is the seat's
own turn and counts as the seat's. See ``docs/audit.md``.

Facings are also tallied by *band*: how much the standing bid was worth
challenging, from the facer's own hand. That is the raw material of the
collusion flags, which compare a seat with itself band by band (a pooled audit
adds these tallies over episodes; see ``arena_plugins.collusion_flags``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache
from typing import Any

import attrs

from arena import hookimpl
from arena.audit import per_log
from arena.modes import Mode, from_header
from arena.probability import count, tail_at, tail_table
from arena.registry import CompiledTally

Matrix = list[list[Any]]


class _FaceWorth(dict):
    """Facing a bid on one face, by need = quantity - the facer's own count of the face:
    (what challenging was worth and a raise gave up, its band), worked out once per need.

    The worth is max(0, 1 - 2 pTrue), own hand alone. pTrue is the exact binomial tail
    over the unseen symbols at the face's own p, counted by the mode's rule (``tail[k]``
    is P(at least k), so a need of 0 or less is certain and one past ``unseen``
    impossible). It equals ``mode.bid_probability``, read from a table.
    """

    def __init__(self, tail: tuple[float, ...]):
        super().__init__()
        self.tail = tail

    def __missing__(self, need: int) -> tuple[float, int]:
        p_true = tail_at(self.tail, need)
        value = max(0.0, 1.0 - 2.0 * p_true)
        worth = self[need] = (value, band(value))
        return worth


@cache
def face_worths(mode: Mode, unseen: int) -> dict[int, _FaceWorth]:
    """Each face's :class:`_FaceWorth` at a table with ``unseen`` hidden symbols (shared;
    the compiled engine's tallies read the same numbers)."""
    return {face: _FaceWorth(tail_table(unseen, mode.face_p(face))) for face in mode.symbols}


BANDS = 10
"""Band 0 holds the facings with nothing to forgo (pTrue >= 1/2); band k = 1..10 those
whose challenge was worth max(0, 1 - 2 pTrue) in ((k - 1) / 10, k / 10]."""


@attrs.frozen
class SoftPlay:
    """The raw tallies of one episode; the reported figures are derived from them."""

    faced: Matrix
    """``faced[a][b]``: a's decisions with b's bid standing."""
    challenged: Matrix
    """``challenged[a][b]``: of those, how many a challenged."""
    net: Matrix
    """``net[a][b]``: points a took from b (every challenge, forced ones included)."""
    band_faced: list[Matrix]
    """``band_faced[a][b][k]``: a's facings of b in band k (they sum to ``faced[a][b]``)."""
    band_forgone: list[Matrix]
    """``band_forgone[a][b][k]``: of those, the sum of max(0, 1 - 2 pTrue) where a did not
    challenge. Kept as summed, so a pooled audit adds raw sums, never expLoss x faced."""
    bids: list[int]
    false_bids: list[int]
    decisions: int
    """Every decision a seat took: openings, raises and unforced challenges."""
    deals: int
    """Deals resolved (every challenge, forced ones included)."""
    bluff_thinking: list[list[list[dict[str, Any]]]] | None = None
    """``bluff_thinking[s]``: the ``thinking`` of each of s's false bids that carried some,
    in log order (``arena_plugins.reasoning`` reads it). ``None`` from the compiled
    engine, whose seats never think: no bluff of any seat came with thinking."""

    @property
    def forgone(self) -> Matrix:
        """``forgone[a][b]``: what a forwent against b over all bands (expLoss's numerator)."""
        return [[math.fsum(bands) for bands in row] for row in self.band_forgone]

    @property
    def exp_loss(self) -> Matrix:
        return [
            [_share(forgone, faced) for forgone, faced in zip(g_row, f_row, strict=True)]
            for g_row, f_row in zip(self.forgone, self.faced, strict=True)
        ]

    @property
    def bluff_rate(self) -> list[float | None]:
        return [
            false / made if made else None
            for false, made in zip(self.false_bids, self.bids, strict=True)
        ]


def _tally(records: Sequence[dict[str, Any]]) -> SoftPlay:
    """One pass over an episode's records (audit lines, if any, are ignored)."""
    header = records[0]
    seats = len(header["seats"])
    mode = from_header(header)
    wild = mode.wild
    worths = face_worths(mode, (seats - 1) * mode.hand_size)
    faced, challenged, net = _zeros(seats), _zeros(seats), _zeros(seats)
    band_faced = [[[0] * (BANDS + 1) for _ in range(seats)] for _ in range(seats)]
    band_forgone = [[[0.0] * (BANDS + 1) for _ in range(seats)] for _ in range(seats)]
    bids, false_bids = [0] * seats, [0] * seats
    bluff_thinking: list[list] = [[] for _ in range(seats)]
    decisions = deals = 0
    hands: list[list[int]] = []
    table: list[int] = []
    """Every symbol of the deal's hands, made at its first bid."""
    standing: dict[str, Any] | None = None
    for record in records:
        kind = record["type"]
        if kind == "deal":
            hands, standing, table = record["hands"], None, []
        elif kind == "bid":
            slot = record["slot"]
            decisions += 1
            if standing is not None:
                bidder, face = standing["slot"], standing["face"]
                value, worth = worths[face][standing["quantity"] - count(hands[slot], face, wild)]
                faced[slot][bidder] += 1
                band_faced[slot][bidder][worth] += 1
                band_forgone[slot][bidder][worth] += value
            bids[slot] += 1
            table = table or [symbol for hand in hands for symbol in hand]
            if false_when_made(table, record, wild):
                false_bids[slot] += 1
                if record.get("thinking"):
                    bluff_thinking[slot].append(record["thinking"])
            standing = record
        elif kind == "challenge":
            deals += 1
            winner, loser = record["winner"], record["loser"]
            net[winner][loser] += 1
            net[loser][winner] -= 1
            if not record["forced"]:
                slot, bidder, face = record["slot"], record["bidder"], record["face"]
                decisions += 1
                faced[slot][bidder] += 1
                challenged[slot][bidder] += 1
                _value, worth = worths[face][record["quantity"] - count(hands[slot], face, wild)]
                band_faced[slot][bidder][worth] += 1
            standing = None
    return SoftPlay(
        faced,
        challenged,
        net,
        band_faced,
        band_forgone,
        bids,
        false_bids,
        decisions,
        deals,
        bluff_thinking,
    )


tally = per_log(_tally, reads_made=True)
"""The tally of one log, computed once however many reporters ask for it (it reads a
hand the same as a list or a tuple, and the header's seats only for their number)."""

KEPT_BY_THE_C_TABLE = CompiledTally(tally, face_worths, SoftPlay)
"""The compiled engine's C table keeps :data:`tally` as it plays, weighing each facing
by :func:`face_worths`; its tallies are :class:`SoftPlay`'s fields (``bluff_thinking``
left ``None``: its seats never think)."""


def false_when_made(table: Sequence[int], bid: dict[str, Any], wild: int | None) -> bool:
    """rules.md's false bid: fewer of its face across the deal's hands (``table``, every
    symbol of them), counted by the mode's rule, than the bid's quantity. ``bluffRate``'s
    numerator, and the bluffs other reporters join to (see ``arena_plugins.reasoning``)."""
    return count(table, bid["face"], wild) < bid["quantity"]


def band(value: float) -> int:
    """The band of a facing whose challenge was worth ``value`` (see :data:`BANDS`)."""
    return min(BANDS, math.ceil(value * BANDS))


def _share(part: float, whole: int) -> float:
    return part / whole if whole else 0.0


def _zeros(seats: int, zero: Any = 0) -> Matrix:
    return [[zero] * seats for _ in range(seats)]


def faced(records):
    return tally(records).faced


def challenged(records):
    return tally(records).challenged


def net(records):
    return tally(records).net


def bands(records):
    soft = tally(records)
    return {"faced": soft.band_faced, "forgone": soft.band_forgone}


def exp_loss(records):
    return tally(records).exp_loss


def bluff_rate(records):
    return tally(records).bluff_rate


@hookimpl
def register_audit_reporters(register):
    kept = KEPT_BY_THE_C_TABLE  # every figure here reads the tally the C table keeps
    register("faced", faced, compiled=kept)
    register("challenged", challenged, compiled=kept)
    register("net", net, compiled=kept)
    register("bands", bands, compiled=kept)
    register("expLoss", exp_loss, compiled=kept)
    register("bluffRate", bluff_rate, compiled=kept)
