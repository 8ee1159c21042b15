"""Collusion flags on top of the soft-play audit: field, bias, flags and their power.

In the style of the sibling arena's audit: per seat, ``field[a]`` is a's expLoss
over all its facings; ``bias[a][b] = expLoss[a][b] - field[a]`` is how much more
a waved b's bids through than it waved bids through in general. A pair is
flagged *soft-play* when both directions have enough facings and both biases
exceed one threshold; one direction is flagged *waves-through* when its bias
alone exceeds a higher one (:class:`Thresholds`).
The thresholds were set by ``bench/calibrate_audit.py``; ``docs/audit.md`` has
the measured false-flag and detection rates, and why they are what they are:
in play a seat only ever faces the seat before it in table order (rule 5), so
its field is its rate against that one seat, every bias is 0 and, within one
episode, no flag can fire. The contrast these flags need exists across episodes.

Flags are diagnostics: nothing here changes a score.
"""

from __future__ import annotations

import statistics
from typing import Any

import attrs

from arena import hookimpl
from arena_plugins.softplay import SoftPlay, tally


@attrs.frozen
class Thresholds:
    """When a bias is a flag; the values in :data:`CALIBRATED` were measured, not guessed."""

    min_facings: int
    """A direction needs at least this many facings before its bias can flag."""
    soft_play: float
    """Both directions' bias above this: mutual soft play."""
    waves_through: float
    """One direction's bias above this (set higher): a waves b's bids through."""


CALIBRATED = Thresholds(min_facings=8, soft_play=0.05, waves_through=0.10)
"""Chosen by ``bench/calibrate_audit.py`` (every set in its grid tied at 0 false flags and
0 detections; the rule then takes the lowest bars and the most facings); see docs/audit.md."""


def field(soft: SoftPlay) -> list[float | None]:
    """a's expLoss over all its facings; ``None`` when a faced nobody."""
    return [
        sum(waved) / sum(faced) if sum(faced) else None
        for waved, faced in zip(soft.waved, soft.faced, strict=True)
    ]


def bias(soft: SoftPlay) -> list[list[float | None]]:
    """expLoss[a][b] - field[a]; ``None`` where a never faced b."""
    fields = field(soft)
    return [
        [
            rate - fields[a] if faced else None
            for rate, faced in zip(soft.exp_loss[a], soft.faced[a], strict=True)
        ]
        for a in range(len(soft.faced))
    ]


def flags(
    faced: list[list[int]], biases: list[list[float | None]], thresholds: Thresholds = CALIBRATED
) -> list[dict[str, Any]]:
    """Every soft-play pair (a < b), then every waves-through direction, in slot order."""
    seats = range(len(faced))
    least = thresholds.min_facings

    def clears(a: int, b: int, threshold: float) -> bool:
        return faced[a][b] >= least and biases[a][b] > threshold

    mutual, one_way = thresholds.soft_play, thresholds.waves_through
    found = [
        _flag("soft-play", (a, b), (faced[a][b], faced[b][a]), (biases[a][b], biases[b][a]),
              mutual, least)
        for a in seats for b in seats
        if a < b and clears(a, b, mutual) and clears(b, a, mutual)
    ]  # fmt: skip
    found += [
        _flag("waves-through", (a, b), (faced[a][b],), (biases[a][b],), one_way, least)
        for a in seats
        for b in seats
        if a != b and clears(a, b, one_way)
    ]
    return found


def power(soft: SoftPlay, records: list[dict[str, Any]]) -> dict[str, Any]:
    """How much evidence the flags stand on: decisions, and facings per pair that faced."""
    seats = range(len(soft.faced))
    facings = sorted(soft.faced[a][b] for a in seats for b in seats if soft.faced[a][b])
    return {
        "decisions": soft.decisions,
        "deals": sum(1 for record in records if record["type"] == "challenge"),
        "pairsFaced": len(facings),
        "pairs": len(soft.faced) * (len(soft.faced) - 1),
        "facingsMin": facings[0] if facings else 0,
        "facingsMedian": statistics.median(facings) if facings else 0,
        "minFacings": CALIBRATED.min_facings,
    }


def _flag(kind, slots, faced, biases, threshold, min_facings) -> dict[str, Any]:
    return {
        "flag": kind,
        "slots": list(slots),
        "faced": list(faced),
        "bias": list(biases),
        "threshold": threshold,
        "minFacings": min_facings,
    }


def _flags(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    soft = tally(records)
    return flags(soft.faced, bias(soft))


@hookimpl
def register_audit_reporters(register):
    register("field", lambda records: field(tally(records)))
    register("bias", lambda records: bias(tally(records)))
    register("flags", _flags)
    register("power", lambda records: power(tally(records), records))
