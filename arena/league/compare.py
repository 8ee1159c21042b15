"""A paired comparison of two seats: is A better than B, by how much, and how sure are we?

Each drawn table is played twice on the same seed, opponents and seating: once with
A in the compared seat, once with B. The pair (A's table, B's twin) is the unit;
the estimate is the mean over pairs of A's score minus B's, and its interval a
t-interval on the pair differences with ``pairs - 1`` degrees of freedom
(:meth:`arena.league.standings.Tables.ratio_ci` with equal weights, the one copy of
the t-interval). Pairing cancels the deal's and the seat's luck, which both
twins share; table t puts the compared seat at slot ``t % seats``, so every
position is held as often as the others, as duplicate seating does.

With a target the tables are played in rounds (a tenth of the cap, at least
``seats`` pairs) and looked at after each round; the comparison stops when the
interval's half-width is at most the target or the interval excludes 0. Stopping
on "excludes 0" at a favourable look would make a plain 95% interval cover less
than 95%, so the cap bounds the looks (``K`` rounds, at most 10) and each look's
interval, the one the stop is decided on, is drawn at Pocock's level for those K
looks (:func:`arena.league.looks.pocock_alpha`): all K hold the truth together with
probability 0.95. The interval reported at the stop is the stage-wise ordering one
(:func:`arena.league.looks.stagewise_interval`), which holds 95% at whichever look the
run stops, where Pocock's, spent over K looks, holds more when the run stops early.
bench/stopping.py measures both.
Without a target there is one look, at 95%.

Pairs that all differ by the same amount (two deterministic seats that play alike)
give a zero-width interval, which says nothing of how sure the difference is: it never
stops a run, and at the cap the verdict says the two played identically.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

import attrs
import numpy as np

from arena import seeding
from arena.figures import fixed
from arena.league.config import Entrant, LeagueError, LeagueSpec, rounds
from arena.league.cost import TOKEN_KINDS, price_of, seat_tokens
from arena.league.looks import (
    Look,
    look_ends,
    pocock_alpha,
    stagewise_interval,
)
from arena.league.run import check_league, model_of, provider_of
from arena.league.standings import DIFFERENCE_RANGE, paired_interval
from arena.plugins import PluginHost
from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatSpec

COMPARE = 5
"""Seed-stream domain of a comparison's table seeds (see arena.seeding)."""
DEFAULT_OPPONENTS = (SeatSpec("bayes"), SeatSpec("pressure"))


@attrs.frozen
class Pair:
    """One drawn table played by A and by its twin played by B."""

    table: int
    slot: int
    """The compared seat."""
    a_score: float
    b_score: float
    usd: float
    """What both episodes' model calls cost, every seat's."""
    tokens: int
    stand_in: tuple[bool, bool] = (False, False)
    """Whether A's seat, and B's, was played by a stand-in (a paid seat with no key)."""
    unpriced: tuple[str, ...] = ()
    """Models called that no price covers (a server the user runs): not in ``usd``."""
    priced: tuple[str, ...] = ()
    """Models called that a price covers: ``usd`` is theirs."""


@attrs.frozen
class Comparison:
    """A - B over the pairs played, with the interval at the look that stopped it."""

    a: str
    b: str
    pairs: tuple[Pair, ...]
    difference: float
    ci95: tuple[float, float]
    """At the stop, the stage-wise ordering interval; at a look before it, the look's
    interval at ``look_alpha`` (the one the stop is decided on)."""
    looks: int
    """The most looks the cap allows."""
    look_alpha: float
    """Each look's two-sided level: Pocock's for ``looks`` looks (0.05 with one)."""
    target: float | None
    stopped: str
    """``target`` (half-width reached), ``excludes 0``, or ``cap`` (tables all played)."""

    @property
    def tables(self) -> int:
        return len(self.pairs)

    @property
    def usd(self) -> float:
        return sum(p.usd for p in self.pairs)

    @property
    def tokens(self) -> int:
        return sum(p.tokens for p in self.pairs)

    @property
    def unpriced(self) -> tuple[str, ...]:
        """Models called that no price covers, whose cost ``usd`` leaves out."""
        return tuple(sorted({model for p in self.pairs for model in p.unpriced}))

    @property
    def cost(self) -> float | None:
        """What the calls cost in dollars, as shown: ``None`` when every model called is
        unpriced (the dollars are unknown, never $0); with a priced model too, the priced
        part, which :attr:`unpriced` says leaves the others out; 0.0 when no model was
        called (scripted seats cost nothing)."""
        priced = any(p.priced for p in self.pairs)
        return None if self.unpriced and not priced else self.usd

    def stand_in(self, which: int) -> bool:
        """Whether A (0) or B (1) was played by a stand-in at any pair."""
        return any(p.stand_in[which] for p in self.pairs)

    @property
    def half_width(self) -> float:
        return (self.ci95[1] - self.ci95[0]) / 2

    @property
    def spread(self) -> bool:
        """Whether the pairs' differences vary: with none, the interval has no width to
        measure how sure the difference is (every pair gave the same)."""
        return len({p.a_score - p.b_score for p in self.pairs}) > 1

    def verdict(self) -> str:
        low, high = self.ci95
        if not self.spread and self.difference == 0:
            return "A and B played identically: the same score at every table"
        if low > 0:
            return "A is better"
        if high < 0:
            return "B is better"
        # the true difference lies in [low, high], which holds 0: it is no larger than this
        return f"no difference larger than {fixed(max(-low, high), 3)}"

    def to_json(self) -> dict:
        return {
            "a": self.a,
            "b": self.b,
            "tables": self.tables,
            "difference": self.difference,
            "ci95": list(self.ci95),
            "cost": self.cost,
            "unpriced": list(self.unpriced),
            "stopped": self.stopped,
            "verdict": self.verdict(),
        }


def looks_allowed(tables: int, seats: int, target: float | None) -> tuple[int, int]:
    """Pairs per round and how many times the comparison may look: once per round (at
    least ``seats`` pairs, :func:`~arena.league.config.rounds`) with a target, else
    once, after all ``tables``."""
    return rounds(tables, seats) if target is not None else (tables, 1)


def compare(
    host: PluginHost,
    a: SeatSpec,
    b: SeatSpec,
    table: EpisodeRequest,
    opponents: Sequence[SeatSpec] = DEFAULT_OPPONENTS,
    tables: int = 20,
    target: float | None = None,
    seed: int = 0,
    environ: Mapping[str, str] = os.environ,
    progress: Callable[[Comparison], None] = lambda comparison: None,
    concurrency: int = 1,
    allow_stand_in: bool = False,
) -> Comparison:
    """Play pairs until the target is met or ``tables`` pairs are played; ``progress`` sees
    every look. A round's pairs play in up to ``concurrency`` threads (a Claude seat waits
    on the network) and are kept in table order, so the result does not depend on it.
    ``allow_stand_in`` lets a paid seat with no key be played by bayes, as a league's."""
    if not opponents:
        raise LeagueError("a comparison needs at least one opponent")
    if table.seats < 2:
        raise LeagueError("a comparison needs a table of two seats or more")
    entrants = (Entrant("A", a), Entrant("B", b)) + tuple(
        Entrant(f"opponent {i + 1}", spec) for i, spec in enumerate(opponents)
    )
    # the league's checks: names known, no human, a key for Claude seats, a price per model
    check_league(
        LeagueSpec(entrants, tables=tables, table=table, allow_repeat=True),
        host,
        allow_stand_in,
        environ,
    )
    round_size, looks = looks_allowed(tables, table.seats, target)
    ends = look_ends(tables, round_size)

    def play(index: int) -> Pair:
        return _play_pair(host, a, b, opponents, table, seed, index, environ)

    pairs: list[Pair] = []
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        while True:
            pairs.extend(pool.map(play, range(len(pairs), min(tables, len(pairs) + round_size))))
            result = _look(str(a), str(b), pairs, ends, target)
            if result.stopped != "cap" or len(pairs) >= tables:
                result = attrs.evolve(result, ci95=at_stop(pairs, ends))
                progress(result)
                return result
            progress(result)


def _look(
    a: str, b: str, pairs: list[Pair], ends: tuple[int, ...], target: float | None
) -> Comparison:
    """A look after ``pairs``: its interval at Pocock's level and whether it stops."""
    alpha = pocock_alpha(ends)
    differences = [p.a_score - p.b_score for p in pairs]
    low, high = paired_interval(differences, alpha)
    mean = float(np.mean(differences))
    look = Comparison(a, b, tuple(pairs), mean, (low, high), len(ends), alpha, target, "")
    return attrs.evolve(look, stopped=stop_reason(low, high, len(pairs), target, look.spread))


def at_stop(pairs: Sequence[Pair], ends: tuple[int, ...]) -> tuple[float, float]:
    """The stage-wise 95% interval of A - B at a stop after ``pairs``, the run having
    continued at every look of ``ends`` before (the plain t-interval with one look)."""
    differences = np.array([p.a_score - p.b_score for p in pairs])
    seen = [
        Look(n, float(differences[:n].mean()), float(differences[:n].std(ddof=1)) if n > 1 else 0)
        for n in ends
        if n <= len(pairs)
    ]
    return stagewise_interval(seen, pocock_alpha(ends), DIFFERENCE_RANGE)


def stop_reason(low: float, high: float, pairs: int, target: float | None, spread: bool) -> str:
    """Why a look at interval [low, high] over ``pairs`` pairs stops (``cap``: it does not).
    Pairs whose differences have no ``spread`` (all the same) give a zero-width interval,
    which says nothing of how sure the difference is: the comparison plays on, to the cap,
    where the verdict says so."""
    if target is None or pairs < 2 or not spread:
        return "cap"
    if (high - low) / 2 <= target:
        return "target"
    if low > 0 or high < 0:
        return "excludes 0"
    return "cap"


def seating(
    subject: SeatSpec, opponents: Sequence[SeatSpec], seats: int, table: int
) -> tuple[int, tuple[SeatSpec, ...]]:
    """Table ``table``'s compared slot and its seats: the opponents in turn, the subject at
    slot ``table % seats``."""
    slot = table % seats
    others = [opponents[i % len(opponents)] for i in range(seats - 1)]
    return slot, tuple(others[:slot] + [subject] + others[slot:])


def _play_pair(
    host: PluginHost,
    a: SeatSpec,
    b: SeatSpec,
    opponents: Sequence[SeatSpec],
    table: EpisodeRequest,
    seed: int,
    index: int,
    environ: Mapping[str, str],
) -> Pair:
    episode_seed = int(seeding.stream(seed, COMPARE, index).integers(2**62))
    scores, stand_in, usd, tokens, unpriced, priced = [], [], 0.0, 0, set(), set()
    for subject in (a, b):
        slot, specs = seating(subject, opponents, table.seats, index)
        request = attrs.evolve(table, seed=episode_seed, seat_specs=specs)
        results = run_episode(host, request)[0].to_json()
        for seat in results["seats"]:
            if seat["slot"] == slot:
                scores.append(seat["score"])
                stand_in.append(seat["standIn"] is not None)
            counts = seat_tokens(seat)
            spec = specs[seat["slot"]]
            model = model_of(host.registry, spec, environ)
            if model is not None:
                price = price_of(model, {}, provider_of(host.registry, spec, environ))
                usd += price.usd(counts) if price else 0.0
                (priced if price else unpriced).add(model)
            tokens += sum(counts[kind] for kind in TOKEN_KINDS)
    return Pair(
        index,
        slot,
        scores[0],
        scores[1],
        usd,
        tokens,
        (stand_in[0], stand_in[1]),
        tuple(sorted(unpriced)),
        tuple(sorted(priced)),
    )
