"""Collusion flags on top of the soft-play audit: field, bias, flags and their power.

In the style of the sibling arena's audit: ``field[a]`` is a's expLoss over all
its facings, and ``bias[a][b] = expLoss[a][b] - expected[a][b]`` is how much
more a waved b's bids through than it waves bids through in general. A pair is
flagged *soft-play* when both directions have enough facings and both biases
exceed one threshold; one direction is flagged *waves-through* when its bias
alone exceeds a higher one (:class:`Thresholds`).

``expected[a][b]`` is field[a] matched band by band (``softplay.BANDS``: how much
a challenge was worth from a's hand): a's own rate in each band, weighted by
b's facings in that band. With one band it is exactly field[a], the sibling's
formula. The bands are there because expLoss multiplies a's leniency by how
beatable b's bids are: across episodes an honest ``random`` seat facing another
``random`` seat shows a bias of +0.27 against its field (it never calls, and
random bids are wild), twice the planted colluder's +0.13. Matched by band the
honest biases fall within +-0.03 and the colluder's stays (docs/audit.md).

One computation, two scopes. The flags are a function of a :class:`Pool`: per
ordered pair of keys and per band, the facings and the summed forgone value.
The keys are

- the **slots** of one episode: the per-episode reporters ``field``, ``bias``,
  ``flags`` and ``power``. In play they are structurally silent: rule 5 passes
  the turn to the next table position and the order is fixed for the episode,
  so a seat only ever faces the seat before it, its expected rate is its rate
  against that one seat and every bias is exactly 0 (docs/audit.md);
- the **policies** (seat specs) of many episodes: :func:`pooled_audit`, behind
  ``arena audit LOG LOG ...`` and ``arena audit --league DB``. Table order is
  reshuffled per seed, so across episodes a policy faces many others and the
  contrast the flags read exists. Two seats of one policy at a table make the
  pair (P, P): its two directions are one cell ("P faces P"), so that cell is
  both directions of the soft-play test.

Thresholds were measured by ``bench/calibrate_audit.py``; docs/audit.md has the
figures. Flags are diagnostics: nothing here changes a score.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Hashable, Mapping, Sequence
from functools import cached_property
from typing import Any

import attrs

from arena import hookimpl
from arena.audit import per_log
from arena_plugins.softplay import BANDS, tally

SLOTS = "slots"
POLICIES = "policies"

Banded = Sequence[Sequence[Sequence[Any]]]
"""``[a][b][k]``: per ordered pair of keys, per band k of ``softplay.BANDS``."""


@attrs.frozen
class Thresholds:
    """When a bias is a flag; the values below were measured, not guessed."""

    min_facings: int
    """A direction needs at least this many facings before its bias can flag."""
    soft_play: float
    """Both directions' bias above this: mutual soft play."""
    waves_through: float
    """One direction's bias above this (set higher): a waves b's bids through."""


CALIBRATED = Thresholds(min_facings=8, soft_play=0.05, waves_through=0.10)
"""The per-episode bars. Inert in play (every bias is 0 within an episode); they act
only on a hand-written log in which a seat faced several opponents. See docs/audit.md."""

POOLED = Thresholds(min_facings=20, soft_play=0.05, waves_through=0.06)
"""The pooled audit's bars, chosen by ``bench/calibrate_audit.py``: the best detection of
planted pairs that falsely flags at most 0.5% of honest calibration leagues at every length
(5 to 40 episodes, both modes); fresh honest leagues then measured 0-1.0%. See docs/audit.md."""


@attrs.frozen
class EpisodeFacings:
    """One episode's raw material for the flags: the seats' policies and the banded tallies."""

    policies: tuple[str, ...]
    """Seat spec by slot."""
    faced: Banded
    """``faced[a][b][k]``: a's facings of b's bids in band k (``softplay.BANDS``)."""
    forgone: Banded
    """``forgone[a][b][k]``: the summed max(0, 1 - 2 pTrue) of those a did not challenge."""
    decisions: int
    deals: int

    @classmethod
    def from_records(cls, records: Sequence[Mapping[str, Any]]) -> EpisodeFacings:
        """From an event log's records (its audit lines, if any, are ignored)."""
        soft = tally(records)
        return cls(
            policies=tuple(seat["policy"] for seat in records[0]["seats"]),
            faced=soft.band_faced,
            forgone=soft.band_forgone,
            decisions=soft.decisions,
            deals=soft.deals,
        )

    @classmethod
    def from_results(cls, results: Mapping[str, Any]) -> EpisodeFacings:
        """From an episode's results JSON, as a league stores it: the same numbers as its log.

        Raises ``KeyError`` naming the missing section when the episode was played
        without the ``softplay`` or ``collusion_flags`` reporters.
        """
        audit = results.get("audit") or {}
        for section in ("bands", "power"):
            if not isinstance(audit.get(section), dict):
                raise KeyError(f"results.audit.{section}")
        return cls(
            policies=tuple(seat["policy"] for seat in results["seats"]),
            faced=audit["bands"]["faced"],
            forgone=audit["bands"]["forgone"],
            decisions=audit["power"]["decisions"],
            deals=audit["power"]["deals"],
        )


@attrs.frozen
class Pool:
    """Banded facings summed per ordered pair of keys: the flags' only input."""

    scope: str
    """:data:`SLOTS` (one episode) or :data:`POLICIES` (many)."""
    keys: tuple[Hashable, ...]
    band_faced: Banded
    band_forgone: Banded
    together: list[list[bool]]
    """Whether a seat of key a ever sat at a table with a different seat of key b."""
    episodes: int
    decisions: int
    deals: int

    @cached_property
    def faced(self) -> list[list[int]]:
        return [[sum(bands) for bands in row] for row in self.band_faced]

    @cached_property
    def forgone(self) -> list[list[float]]:
        return [[math.fsum(bands) for bands in row] for row in self.band_forgone]

    @cached_property
    def exp_loss(self) -> list[list[float]]:
        return [
            [g / n if n else 0.0 for g, n in zip(g_row, n_row, strict=True)]
            for g_row, n_row in zip(self.forgone, self.faced, strict=True)
        ]

    @cached_property
    def field(self) -> list[float | None]:
        """a's expLoss over all its facings; ``None`` when a faced nobody."""
        return [
            math.fsum(forgone) / sum(faced) if sum(faced) else None
            for forgone, faced in zip(self.forgone, self.faced, strict=True)
        ]

    @cached_property
    def cells(self) -> list[tuple[int, int, int, float]]:
        """(a, b, faced, bias) of every ordered pair that faced, in key order: what the
        flags test against each set of thresholds."""
        order = range(len(self.keys))
        return [
            (a, b, self.faced[a][b], self.bias[a][b])
            for a in order
            for b in order
            if self.faced[a][b] and self.bias[a][b] is not None
        ]

    @cached_property
    def expected(self) -> list[list[float | None]]:
        """a's expLoss against b had a waved b's bids through at its own rate in each band.

        Band k's rate is a's forgone over all its facings in band k; each band weighs
        as many of b's facings as fell in it. With a single band this is ``field[a]``;
        banding takes out what b's bids are like (how beatable they tend to be), which
        is not a's choice, and leaves how a treats them. ``None`` where a never faced b.
        """
        out = []
        for faced, forgone in zip(self.band_faced, self.band_forgone, strict=True):
            band_faced = [sum(column) for column in zip(*faced, strict=True)]
            band_forgone = [math.fsum(column) for column in zip(*forgone, strict=True)]
            out.append([_matched(band_forgone, band_faced, pair) for pair in faced])
        return out

    @cached_property
    def bias(self) -> list[list[float | None]]:
        """expLoss[a][b] - expected[a][b]; ``None`` where a never faced b."""
        return [
            [r - e if e is not None else None for r, e in zip(rates, bases, strict=True)]
            for rates, bases in zip(self.exp_loss, self.expected, strict=True)
        ]


def pool(
    episodes: Sequence[EpisodeFacings],
    scope: str,
    key: Callable[[EpisodeFacings, int], Hashable],
) -> Pool:
    """Sum the episodes' tallies per ordered pair of keys, ``key(episode, slot)``, and band.

    The forgone sums go through ``math.fsum``, which rounds once, exactly: the pool
    does not depend on the order of the episodes, and a one-episode pool holds that
    episode's numbers unchanged.
    """
    keys = tuple(sorted({key(e, slot) for e in episodes for slot in range(len(e.policies))}))
    at = {k: i for i, k in enumerate(keys)}
    size, bands = range(len(keys)), BANDS + 1
    faced: list[list[list[list[int]]]] = [[[] for _ in size] for _ in size]
    forgone: list[list[list[list[float]]]] = [[[] for _ in size] for _ in size]
    """Per pair of keys, each episode's band rows, summed band by band at the end."""
    together = [[False for _ in size] for _ in size]
    for episode in episodes:
        index = [at[key(episode, slot)] for slot in range(len(episode.policies))]
        for a, b in _ordered_pairs(len(index)):
            i, j = index[a], index[b]
            together[i][j] = True
            faced[i][j].append(episode.faced[a][b])
            forgone[i][j].append(episode.forgone[a][b])
    return Pool(
        scope=scope,
        keys=keys,
        band_faced=_summed_by_band(faced, sum, [0] * bands),
        band_forgone=_summed_by_band(forgone, math.fsum, [0.0] * bands),
        together=together,
        episodes=len(episodes),
        decisions=sum(e.decisions for e in episodes),
        deals=sum(e.deals for e in episodes),
    )


def _summed_by_band(pairs: list[list[list[list]]], total: Callable, none: list) -> list:
    """Each pair's band rows (one an episode) summed band by band by ``total``; ``none``
    for a pair that never met."""
    return [
        [[total(band) for band in zip(*rows, strict=True)] if rows else list(none) for rows in row]
        for row in pairs
    ]


def by_slot(episode: EpisodeFacings) -> Pool:
    """One episode, keyed by slot: what the per-episode reporters read.

    It is :func:`pool` of the one episode, whose sums are the episode's own numbers
    (a sum of one term rounds to itself), so they are taken as they are.
    """
    seats = range(len(episode.policies))
    return Pool(
        scope=SLOTS,
        keys=tuple(seats),
        band_faced=episode.faced,
        band_forgone=episode.forgone,
        together=[[a != b for b in seats] for a in seats],
        episodes=1,
        decisions=episode.decisions,
        deals=episode.deals,
    )


def by_policy(episodes: Sequence[EpisodeFacings]) -> Pool:
    """Many episodes, keyed by seat spec: the pooled audit."""
    return pool(episodes, POLICIES, lambda episode, slot: episode.policies[slot])


def _matched(band_forgone, band_faced, pair: Sequence[int]) -> float | None:
    """The band rates ``band_forgone / band_faced`` averaged over ``pair``'s facings per band.

    Written as forgone x (share of the band's facings) so that a seat that faced one
    opponent gets exactly its expLoss back: the shares are then all 1.0.
    """
    total = sum(pair)
    if not total:
        return None
    weighted = (g * (n / of) for g, n, of in zip(band_forgone, pair, band_faced, strict=True) if n)
    return math.fsum(weighted) / total


def flags(facings: Pool, thresholds: Thresholds) -> list[dict[str, Any]]:
    """Every soft-play pair (a <= b), then every waves-through direction, in key order.

    A same-key pair (two seats of one policy) is one cell, both of its directions:
    it is soft-play when that cell clears the lower bar.
    """
    faced, biases, keys = facings.faced, facings.bias, facings.keys

    def flag(kind: str, a: int, b: int) -> dict[str, Any]:
        directions = ((a, b), (b, a)) if kind == SOFT_PLAY else ((a, b),)
        return {
            "flag": kind,
            facings.scope: [keys[a], keys[b]],
            "faced": [faced[x][y] for x, y in directions],
            "bias": [biases[x][y] for x, y in directions],
            "threshold": thresholds.soft_play if kind == SOFT_PLAY else thresholds.waves_through,
            "minFacings": thresholds.min_facings,
        }

    return [flag(kind, a, b) for kind, a, b in flagged(facings, thresholds)]


SOFT_PLAY, WAVES_THROUGH = "soft-play", "waves-through"


def flagged(facings: Pool, thresholds: Thresholds) -> list[tuple[str, int, int]]:
    """:func:`flags` as bare (kind, a, b) by key index, in the same order: for a caller
    that tries many thresholds and needs only who was flagged."""
    least = thresholds.min_facings

    def clearing(threshold: float) -> list[tuple[int, int]]:
        """The ordered pairs (a, b), in key order, whose cell clears the bar."""
        return [(a, b) for a, b, n, bias in facings.cells if n >= least and bias > threshold]

    soft = clearing(thresholds.soft_play)
    both_ways = set(soft)
    found = [(SOFT_PLAY, a, b) for a, b in soft if a <= b and (b, a) in both_ways]
    return found + [(WAVES_THROUGH, a, b) for a, b in clearing(thresholds.waves_through)]


def power(facings: Pool, thresholds: Thresholds) -> dict[str, Any]:
    """How much evidence the flags stand on: episodes, decisions, facings per pair that faced.

    ``pairs`` counts the ordered pairs of keys that ever shared a table (for one
    episode's slots, n (n - 1)); ``pairsFaced`` those with at least one facing.
    """
    cells = [(a, b) for a in range(len(facings.keys)) for b in range(len(facings.keys))]
    counts = sorted(facings.faced[a][b] for a, b in cells if facings.faced[a][b])
    return {
        "episodes": facings.episodes,
        "decisions": facings.decisions,
        "deals": facings.deals,
        "pairsFaced": len(counts),
        "pairs": sum(facings.together[a][b] for a, b in cells),
        "facingsMin": counts[0] if counts else 0,
        "facingsMedian": statistics.median(counts) if counts else 0,
        "minFacings": thresholds.min_facings,
    }


def pooled_audit(
    episodes: Sequence[EpisodeFacings], thresholds: Thresholds = POOLED
) -> dict[str, Any]:
    """The audit of many episodes, by policy; matrices are indexed in ``policies`` order."""
    facings = by_policy(episodes)
    return {
        "policies": list(facings.keys),
        "faced": facings.faced,
        "expLoss": facings.exp_loss,
        "field": facings.field,
        "expected": facings.expected,
        "bias": facings.bias,
        "flags": flags(facings, thresholds),
        "power": power(facings, thresholds),
    }


def pool_results(episodes: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The pooled audit of episodes' results JSON (from a league's store, or from logs)."""
    facings = []
    for index, results in enumerate(episodes):
        try:
            facings.append(EpisodeFacings.from_results(results))
        except KeyError as missing:
            raise ValueError(
                f"episode {index} has no {missing.args[0]} (played without the audit reporters)"
            ) from None
    return pooled_audit(facings)


def _ordered_pairs(seats: int) -> list[tuple[int, int]]:
    return [(a, b) for a in range(seats) for b in range(seats) if a != b]


@per_log
def _episode(records: Sequence[Mapping[str, Any]]) -> Pool:
    """One episode's facings by slot, shared by the four per-episode reporters."""
    return by_slot(EpisodeFacings.from_records(records))


@hookimpl
def register_audit_reporters(register):
    register("field", lambda records: _episode(records).field)
    register("bias", lambda records: _episode(records).bias)
    register("flags", lambda records: flags(_episode(records), CALIBRATED), pool=pool_results)
    register("power", lambda records: power(_episode(records), CALIBRATED))
