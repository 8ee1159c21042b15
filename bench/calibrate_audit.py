"""Calibrate the pooled collusion audit: false flags on honest leagues, detection of planted ones.

Every league is drawn by the league schedule (:func:`arena.league.schedule.schedule`): each
table's seats come from the pool and its seed, hence its table order, from the
league seed and the table's index. A *long* league has 40 tables; its consecutive
blocks of K tables are leagues of K (every table is its own independent draw, so
tables 5..9 are distributed exactly as a 5-table league). Each episode goes
through :func:`arena.runner.run_episode`, and the audit reads what it reports in
``results.audit`` (as a league store keeps it) through the one pooling function
of ``arena audit --league``.

Sets, per mode (dice and poker):

- honest calibration and honest validation leagues at 20 deals, from the pools
  in :data:`HONEST_POOLS` (fewer than 4 policies: seats are drawn with
  replacement, so policies also meet themselves), rotating by league; validation
  leagues are also played at 50 and 100 deals;
- *team* leagues: two ``colluder`` seats at every table (pool
  ``colluder, colluder, X, Y``, drawn without replacement, so the team is always
  seated, in a seat order drawn per table), X and Y rotating through
  :data:`FILLERS`; detected when a flag names (colluder, colluder);
- *one-way* leagues: pool ``colluder:bayes, bayes, X, Y``, a seat that waves
  bayes's bids through; detected when a flag names (colluder:bayes, bayes).

The sweep tries every :class:`Thresholds` in :data:`GRID`. A set *passes* when,
in every mode and at every league length K, at most 0.5% of the honest calibration
leagues raise any flag at all: half the 1% target, as a margin for the choice's
own luck (:data:`CHOOSE_FALSE_FLAGS`). Among passing sets it takes the best mean
detection over both planted kinds, modes, deal counts and K; ties go to the
higher bars, then to more facings. The chosen set is then checked on the honest
validation leagues, which the choice never saw. For comparison the same sweep is
run with every band merged into one: the sibling's formula (bias = expLoss -
field), which the bands replace.

Every seed derives from the master seed and the league's place in the run, so
``--workers 1`` and ``--workers 2`` print the same figures.

    python bench/calibrate_audit.py --leagues 100 --workers 2 --out calibration.json
    python bench/calibrate_audit.py --leagues 4 --workers 1          # a quick look
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import multiprocessing
import statistics
import sys
import time
from collections.abc import Iterable, Sequence
from typing import Any

import attrs
import numpy as np

from arena.league.config import LeagueSpec, pool_entrants
from arena.league.schedule import schedule
from arena.plugins import load
from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatSpec
from arena_plugins.collusion_flags import (
    EpisodeFacings,
    Pool,
    Thresholds,
    by_policy,
    flagged,
    flags,
)

MODES = ("dice", "poker")
SIZES = (5, 10, 20, 40)
"""League lengths K, in episodes; the longest is the length of a long league."""
DEALS = (20, 50, 100)
HONEST_DEALS = 20
MAX_FALSE_FLAGS = 0.01
"""The target: at most 1% of honest leagues raise any flag."""
CHOOSE_FALSE_FLAGS = MAX_FALSE_FLAGS / 2
"""What the choice allows on the calibration leagues: half the target, because the best
detecting set sits on the boundary of what it allows and its luck there does not carry
over (a first run that allowed 1% picked a set at 0.9-1.0% that showed 1.5% on fresh leagues)."""
HONEST_POOLS = (
    ("bayes", "pressure", "random"),
    ("bayes", "pressure"),
    ("bayes", "random"),
    ("pressure", "random"),
)
FILLERS = (("bayes", "pressure"), ("bayes", "random"), ("pressure", "random"), ("bayes", "bayes"))
ONE_WAY_FILLERS = (("pressure", "random"), ("bayes", "pressure"), ("random", "random"))
PLANTED = {"team": ("colluder", "colluder"), "one-way": ("colluder:bayes", "bayes")}
GRID = [
    Thresholds(min_facings, soft_play, waves_through)
    for min_facings in (10, 20, 40, 80)
    for soft_play in (0.02, 0.03, 0.035, 0.04, 0.045, 0.05, 0.06, 0.08)
    for waves_through in (0.04, 0.05, 0.06, 0.07, 0.08, 0.10, 0.12)
    if waves_through > soft_play
]

_host = None


# --- the leagues ------------------------------------------------------------


@attrs.frozen
class LongLeague:
    """One scheduled 40-table league of the run."""

    set: str
    """``honest-calibrate``, ``honest-validate``, ``team`` or ``one-way``."""
    mode: str
    deals: int
    pool: tuple[str, ...]
    seed: int

    def requests(self) -> list[EpisodeRequest]:
        spec = LeagueSpec(
            entrants=pool_entrants(SeatSpec.parse(s) for s in self.pool),
            schedule="random",
            allow_repeat=len(self.pool) < 4,  # a pool smaller than a table fills by repeats
            tables=SIZES[-1],
            seed=self.seed,
            table=EpisodeRequest(mode=self.mode, deals=self.deals),
        )
        return [fixture.request for fixture in schedule(spec)]


def long_leagues(master: int, leagues: int) -> list[LongLeague]:
    """Every long league of a run with ``leagues`` honest calibration leagues per mode.

    Honest validation: as many at 20 deals, a fifth as many at 50 and at 100.
    Team and one-way: half as many per deal count.
    """
    run = []
    for m, mode in enumerate(MODES):
        for s, (kind, counts) in enumerate(_sets(leagues).items()):
            for deals, count in counts.items():
                for i in range(count):
                    seed = _seed(master, m, s, deals, i)
                    run.append(LongLeague(kind, mode, deals, _pool(kind, i), seed))
    return run


def _sets(leagues: int) -> dict[str, dict[int, int]]:
    planted = max(1, leagues // 2)
    check = max(1, leagues // 5)
    return {
        "honest-calibrate": {HONEST_DEALS: leagues},
        "honest-validate": {HONEST_DEALS: leagues} | dict.fromkeys(DEALS[1:], check),
        "team": dict.fromkeys(DEALS, planted),
        "one-way": dict.fromkeys(DEALS, planted),
    }


def _pool(kind: str, i: int) -> tuple[str, ...]:
    if kind == "team":
        return (*PLANTED["team"], *FILLERS[i % len(FILLERS)])
    if kind == "one-way":
        return (*PLANTED["one-way"], *ONE_WAY_FILLERS[i % len(ONE_WAY_FILLERS)])
    return HONEST_POOLS[i % len(HONEST_POOLS)]


def _seed(master: int, *key: int) -> int:
    return int(np.random.SeedSequence(master, spawn_key=key).generate_state(1)[0])


USED_SECTIONS = {"bands", "power"}
"""The audit sections the calibration reads (EpisodeFacings.from_results); the other
reporters' figures would be computed for every episode and thrown away."""


def play(request: EpisodeRequest) -> EpisodeFacings:
    """One episode, audited as it reports itself (and as a league store keeps it)."""
    global _host
    if _host is None:
        _host = load({})
        for name in set(_host.registry.reporters) - USED_SECTIONS:
            del _host.registry.reporters[name]
    results, _ = run_episode(_host, request, environ={})
    return EpisodeFacings.from_results(results.to_json())


def fan_out(work, jobs: Sequence, workers: int, chunksize: int) -> list:
    """``[work(job) for job in jobs]``, shared out over ``workers`` forked processes (which
    see this process's globals as they were when the pool started)."""
    if workers == 1:
        return [work(job) for job in jobs]
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        return pool.map(work, jobs, chunksize=chunksize)


def play_all(run: Sequence[LongLeague], workers: int) -> list[list[EpisodeFacings]]:
    requests = [request for league in run for request in league.requests()]
    played = fan_out(play, requests, workers, chunksize=64)
    size = SIZES[-1]
    return [played[i : i + size] for i in range(0, len(played), size)]


@attrs.frozen
class League:
    """A league of ``size`` episodes, pooled by policy."""

    set: str
    mode: str
    deals: int
    size: int
    pool: Pool

    @property
    def planted(self) -> tuple[str, str] | None:
        return PLANTED.get(self.set)


def leagues_of(
    run: Sequence[LongLeague], played: Sequence[Sequence[EpisodeFacings]]
) -> list[League]:
    """Every league of every length K: the consecutive blocks of K tables of each long league.

    In this process: shipping the episodes to workers and the pools back cost more than
    pooling them here.
    """
    return [
        League(long.set, long.mode, long.deals, size, by_policy(episodes[start : start + size]))
        for long, episodes in zip(run, played, strict=True)
        for size in SIZES
        for start in range(0, len(episodes), size)
    ]


def one_band(league: League) -> League:
    """The same league with every band merged: the sibling's bias = expLoss - field."""
    pool = league.pool
    merged = attrs.evolve(
        pool,
        band_faced=[[[sum(cell)] for cell in row] for row in pool.band_faced],
        band_forgone=[[[math.fsum(cell)] for cell in row] for row in pool.band_forgone],
    )
    return attrs.evolve(league, pool=merged)


# --- the sweep --------------------------------------------------------------


def names(flag: dict[str, Any]) -> set[str]:
    return set(flag["policies"])


def flagged_any(league: League, thresholds: Thresholds) -> bool:
    return bool(flagged(league.pool, thresholds))


def detected(league: League, thresholds: Thresholds) -> bool:
    """A flag names exactly the planted pair."""
    pair, keys = set(league.planted), league.pool.keys
    return any({keys[a], keys[b]} == pair for _, a, b in flagged(league.pool, thresholds))


def flagged_other(league: League, thresholds: Thresholds) -> bool:
    """A planted league's flag on some other pair."""
    pair = set(league.planted)
    return any(names(flag) != pair for flag in flags(league.pool, thresholds))


def rate(hits: Iterable[bool]) -> dict[str, Any]:
    hits = list(hits)
    count = sum(hits)
    return {
        "hits": count,
        "n": len(hits),
        "rate": count / len(hits) if hits else 0.0,
        "low95": wilson(count, len(hits))[0],
        "high95": wilson(count, len(hits))[1],
    }


def wilson(hits: int, n: int) -> tuple[float, float]:
    """The Wilson score interval of a rate at 95%."""
    if n == 0:
        return 0.0, 1.0
    z, p = 1.959964, hits / n
    centre = p + z * z / (2 * n)
    margin = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, (centre - margin) / (1 + z * z / n)), min(
        1.0, (centre + margin) / (1 + z * z / n)
    )


def select(leagues: Sequence[League], kind: str, mode: str, deals: int, size: int) -> list[League]:
    return [
        lg for lg in leagues if (lg.set, lg.mode, lg.deals, lg.size) == (kind, mode, deals, size)
    ]


def sweep(
    leagues: Sequence[League],
    grid: Sequence[Thresholds],
    workers: int = 1,
    one_bands: bool = False,
) -> list[dict[str, Any]]:
    """Honest false-flag and planted detection rates of every threshold set in the grid
    (with ``one_bands``, of each league with its bands merged, :func:`one_band`).

    Each league is tried against every set where it is (a worker, for a share of the
    leagues): flagged at all for an honest league, the planted pair flagged for a
    planted one. The rates are then gathered per set.
    """
    honest = {
        f"fp/{mode}/{size}": select(leagues, "honest-calibrate", mode, HONEST_DEALS, size)
        for mode in MODES
        for size in SIZES
    }
    planted = {
        f"det/{kind}/{mode}/{deals}/{size}": select(leagues, kind, mode, deals, size)
        for kind, mode, deals, size in itertools.product(PLANTED, MODES, DEALS, SIZES)
    }
    groups = honest | planted
    global _sweeping
    _sweeping = ([league for chosen in groups.values() for league in chosen], grid, one_bands)
    tried = range(len(_sweeping[0]))
    chunk = max(1, len(tried) // (8 * workers))
    hits = fan_out(league_hits, tried, workers, chunksize=chunk)  # forked: sees _sweeping
    by_league = {id(league): hit for league, hit in zip(_sweeping[0], hits, strict=True)}
    return [
        {"thresholds": thresholds}
        | {key: rate(by_league[id(lg)][t] for lg in chosen) for key, chosen in groups.items()}
        for t, thresholds in enumerate(grid)
    ]


_sweeping: tuple[Sequence[League], Sequence[Thresholds], bool] = ((), (), False)
"""The leagues, the grid and whether to merge the bands, as :func:`league_hits` reads
them (set by :func:`sweep`)."""


def league_hits(index: int) -> list[bool]:
    """League ``index`` against every set of the grid: flagged (honest) or detected (planted)."""
    leagues, grid, merge = _sweeping
    league = one_band(leagues[index]) if merge else leagues[index]
    hit = flagged_any if league.planted is None else detected
    return [hit(league, thresholds) for thresholds in grid]


def passes(row: dict[str, Any]) -> bool:
    return all(
        row[f"fp/{mode}/{size}"]["rate"] <= CHOOSE_FALSE_FLAGS for mode in MODES for size in SIZES
    )


def detection(row: dict[str, Any]) -> float:
    return statistics.fmean(v["rate"] for k, v in row.items() if k.startswith("det/"))


def worst_false_flags(row: dict[str, Any]) -> float:
    return max(v["rate"] for k, v in row.items() if k.startswith("fp/"))


def choose(rows: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The best-detecting passing row; ties go to the higher bars, then to more facings."""

    def key(row):
        t = row["thresholds"]
        return (detection(row), t.waves_through, t.soft_play, t.min_facings)

    passing = [row for row in rows if passes(row)]
    return max(passing, key=key) if passing else None


# --- what the chosen bars stand on -------------------------------------------


def validation(leagues: Sequence[League], t: Thresholds) -> dict[str, Any]:
    """Honest validation leagues (never seen by the choice) and the planted leagues' other flags."""
    out: dict[str, Any] = {}
    for mode in MODES:
        for deals in DEALS:
            for size in SIZES:
                honest = select(leagues, "honest-validate", mode, deals, size)
                if honest:
                    out[f"fp/{mode}/{deals}/{size}"] = rate(flagged_any(lg, t) for lg in honest)
                for kind in PLANTED:
                    planted = select(leagues, kind, mode, deals, size)
                    out[f"other/{kind}/{mode}/{deals}/{size}"] = rate(
                        flagged_other(lg, t) for lg in planted
                    )
    return out


def false_flags_by_pair(leagues: Sequence[League], t: Thresholds) -> dict[str, int]:
    """How many flags the chosen bars raised on honest leagues (both sets), by flag and pair."""
    counts: dict[str, int] = {}
    for league in leagues:
        if league.set.startswith("honest"):
            for flag in flags(league.pool, t):
                key = f"{flag['flag']} {'/'.join(flag['policies'])}"
                counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def margins(leagues: Sequence[League], t: Thresholds) -> dict[str, dict[str, float]]:
    """Honest leagues' largest bias (pairs with enough facings) against the planted pair's."""
    out = {}
    for mode in MODES:
        for size in SIZES:
            honest = select(leagues, "honest-calibrate", mode, HONEST_DEALS, size)
            out[f"honest max/{mode}/{size}"] = _quantiles(_largest_bias(lg, t) for lg in honest)
            for kind in PLANTED:
                planted = select(leagues, kind, mode, HONEST_DEALS, size)
                out[f"{kind}/{mode}/{size}"] = _quantiles(_planted_bias(lg) for lg in planted)
    return out


def _largest_bias(league: League, t: Thresholds) -> float | None:
    pool = league.pool
    cells = [
        pool.bias[a][b]
        for a in range(len(pool.keys))
        for b in range(len(pool.keys))
        if pool.faced[a][b] >= t.min_facings
    ]
    return max(cells) if cells else None


def _planted_bias(league: League) -> float | None:
    pool = league.pool
    a, b = (pool.keys.index(key) for key in league.planted)
    return pool.bias[a][b]


def _quantiles(values: Iterable[float | None]) -> dict[str, float]:
    kept = [v for v in values if v is not None]
    if not kept:
        return {"n": 0}
    return (
        {"n": len(kept)}
        | {f"p{q}": float(np.quantile(kept, q / 100)) for q in (1, 5, 50, 95, 99)}
        | {"max": max(kept)}
    )


def pair_biases(leagues: Sequence[League]) -> dict[str, dict[str, float]]:
    """Median bias per ordered pair of policies in the longest 20-deal leagues, with bands
    and with one band: how much of a one-band bias is the bidders' style."""
    out: dict[str, dict[str, Any]] = {}
    for kind in ("honest-calibrate", *PLANTED):
        for mode in MODES:
            chosen = select(leagues, kind, mode, HONEST_DEALS, SIZES[-1])
            cells: dict[str, tuple[list[float], list[float]]] = {}
            for league in chosen:
                banded, merged = league.pool, one_band(league).pool
                for a, first in enumerate(banded.keys):
                    for b, second in enumerate(banded.keys):
                        if banded.bias[a][b] is not None:
                            both = cells.setdefault(f"{kind}/{mode}/{first}->{second}", ([], []))
                            both[0].append(banded.bias[a][b])
                            both[1].append(merged.bias[a][b])
            for key, (banded_biases, merged_biases) in sorted(cells.items()):
                out[key] = {
                    "n": len(banded_biases),
                    "banded": statistics.median(banded_biases),
                    "oneBand": statistics.median(merged_biases),
                }
    return out


def power(leagues: Sequence[League]) -> dict[str, dict[str, float]]:
    """Median evidence per league: decisions, facings of the planted pair, facings per pair."""
    out = {}
    for kind in ("honest-calibrate", *PLANTED):
        for mode in MODES:
            for deals in DEALS:
                for size in SIZES:
                    chosen = select(leagues, kind, mode, deals, size)
                    if not chosen:
                        continue
                    row = {
                        "leagues": len(chosen),
                        "decisions": statistics.median(lg.pool.decisions for lg in chosen),
                        "facingsMin": statistics.median(_facings(lg)[0] for lg in chosen),
                        "facingsMedian": statistics.median(_facings(lg)[1] for lg in chosen),
                    }
                    if kind in PLANTED:
                        planted = [_planted_facings(lg) for lg in chosen]
                        row["plantedFacings"] = statistics.median(planted)
                        row["plantedFacingsP5"] = float(np.quantile(planted, 0.05))
                    out[f"{kind}/{mode}/{deals}/{size}"] = row
    return out


def _facings(league: League) -> tuple[int, float]:
    faced = league.pool.faced
    counts = sorted(n for row in faced for n in row if n)
    return counts[0], statistics.median(counts)


def _planted_facings(league: League) -> int:
    pool = league.pool
    a, b = (pool.keys.index(key) for key in league.planted)
    return pool.faced[a][b]


# --- the report -------------------------------------------------------------


def calibrate(master: int, leagues: int, workers: int) -> dict[str, Any]:
    run = long_leagues(master, leagues)
    started = time.perf_counter()
    played = play_all(run, workers)
    episodes = sum(len(episodes) for episodes in played)
    print(f"played {episodes} episodes in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    pooled = leagues_of(run, played)
    rows = sweep(pooled, GRID, workers)
    chosen = choose(rows)
    merged_rows = sweep(pooled, GRID, workers, one_bands=True)
    merged_best = choose(merged_rows)
    report: dict[str, Any] = {
        "seed": master,
        "leagues": leagues,
        "episodes": {
            f"{kind}/{mode}": sum(
                len(episodes)
                for long, episodes in zip(run, played, strict=True)
                if (long.set, long.mode) == (kind, mode)
            )
            for kind in ("honest-calibrate", "honest-validate", *PLANTED)
            for mode in MODES
        },
        "grid": len(GRID),
        "passing": sum(passes(row) for row in rows),
        "chosen": None,
        "power": power(pooled),
        "pairBiases": pair_biases(pooled),
        "oneBand": {
            "passing": sum(passes(row) for row in merged_rows),
            "best": _row_json(merged_best),
            "mostDetecting": _row_json(max(merged_rows, key=detection)),
            "fewestFalseFlags": _row_json(min(merged_rows, key=worst_false_flags)),
        },
    }
    if chosen is not None:
        t = chosen["thresholds"]
        report["chosen"] = _row_json(chosen) | {
            "validation": validation(pooled, t),
            "falseFlagsByPair": false_flags_by_pair(pooled, t),
            "margins": margins(pooled, t),
        }
    return report


def _row_json(row: dict[str, Any] | None) -> dict[str, Any] | None:
    if row is None:
        return None
    t = row["thresholds"]
    thresholds = {
        "minFacings": t.min_facings,
        "softPlay": t.soft_play,
        "wavesThrough": t.waves_through,
    }
    return {"thresholds": thresholds, "detection": detection(row)} | {
        k: v for k, v in row.items() if k != "thresholds"
    }


def markdown(report: dict[str, Any]) -> str:
    lines = [
        f"seed {report['seed']}, {report['leagues']} honest calibration leagues of 40 per mode"
    ]
    lines.append("episodes: " + ", ".join(f"{k} {v}" for k, v in report["episodes"].items()))
    chosen = report["chosen"]
    if chosen is None:
        lines.append("no threshold set in the grid keeps honest false flags <= 1%")
        return "\n".join(lines)
    t = chosen["thresholds"]
    lines += [
        f"chosen: {t} ({report['passing']} of {report['grid']} sets pass)",
        "",
        "False flags on honest leagues (any flag), 20 deals per episode:",
        "",
        "| mode | K | calibration | validation (95% bounds) |",
        "|---|---:|---|---|",
    ]
    val = chosen["validation"]
    for mode in MODES:
        for size in SIZES:
            lines.append(
                f"| {mode} | {size} | {_pct(chosen[f'fp/{mode}/{size}'])} | "
                f"{_bounded(val[f'fp/{mode}/{HONEST_DEALS}/{size}'])} |"
            )
    lines += ["", "Honest validation at longer episodes:", ""]
    lines += ["| mode | deals | K | false flags (95% bounds) |", "|---|---:|---:|---|"]
    for mode in MODES:
        for deals in DEALS[1:]:
            for size in SIZES:
                key = f"fp/{mode}/{deals}/{size}"
                if key in val:
                    lines.append(f"| {mode} | {deals} | {size} | {_bounded(val[key])} |")
    for kind, pair in PLANTED.items():
        lines += ["", f"Detection of the planted {kind} pair {pair} (95% bounds):", ""]
        lines += ["| mode | deals | " + " | ".join(f"K={s}" for s in SIZES) + " |"]
        lines += ["|---|---:|" + "---|" * len(SIZES)]
        for mode in MODES:
            for deals in DEALS:
                cells = [_bounded(chosen[f"det/{kind}/{mode}/{deals}/{s}"]) for s in SIZES]
                lines.append(f"| {mode} | {deals} | " + " | ".join(cells) + " |")
    lines += ["", "Flags raised on honest leagues (calibration and validation), by pair:", ""]
    lines += [f"  {count} {key}" for key, count in chosen["falseFlagsByPair"].items()]
    lines += ["", "Planted leagues flagging some other pair too (20 deals):", ""]
    lines += ["| set | mode | " + " | ".join(f"K={s}" for s in SIZES) + " |"]
    lines += ["|---|---|" + "---|" * len(SIZES)]
    for kind in PLANTED:
        for mode in MODES:
            cells = [_pct(val[f"other/{kind}/{mode}/{HONEST_DEALS}/{s}"]) for s in SIZES]
            lines.append(f"| {kind} | {mode} | " + " | ".join(cells) + " |")
    lines += ["", "Largest honest bias vs the planted pair's bias (20 deals):", ""]
    lines += ["| who | mode | K | n | p1 | p5 | p50 | p95 | p99 | max |"]
    lines += ["|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for key, q in chosen["margins"].items():
        who, mode, size = key.split("/")
        if q["n"]:
            lines.append(
                f"| {who} | {mode} | {size} | {q['n']} | "
                + " | ".join(f"{q[p]:+.3f}" for p in ("p1", "p5", "p50", "p95", "p99", "max"))
                + " |"
            )
    one = report["oneBand"]
    lines += ["", f"One band (the sibling's bias = expLoss - field): {one['passing']} sets pass."]
    for label in ("best", "mostDetecting", "fewestFalseFlags"):
        row = one[label]
        if row is not None:
            lines.append(
                f"  {label}: {row['thresholds']}: mean detection {row['detection']:.1%}, "
                f"worst honest false-flag rate {worst_false_flags(row):.1%}"
            )
    lines += ["", f"Median bias per ordered pair, 20 deals, K={SIZES[-1]}:", ""]
    lines += ["| set | mode | pair | n | one band | banded |", "|---|---|---|---:|---:|---:|"]
    for key, row in report["pairBiases"].items():
        kind, mode, pair = key.split("/")
        lines.append(
            f"| {kind} | {mode} | {pair} | {row['n']} | {row['oneBand']:+.3f} | "
            f"{row['banded']:+.3f} |"
        )
    lines += ["", "Power (medians per league):", ""]
    lines += [
        "| set | mode | deals | K | decisions | planted facings (p5) | facings min | median |"
    ]
    lines += ["|---|---|---:|---:|---:|---:|---:|---:|"]
    for key, row in report["power"].items():
        kind, mode, deals, size = key.split("/")
        planted = (
            f"{row['plantedFacings']:.0f} ({row['plantedFacingsP5']:.0f})"
            if "plantedFacings" in row
            else "-"
        )
        lines.append(
            f"| {kind} | {mode} | {deals} | {size} | {row['decisions']:.0f} | {planted} | "
            f"{row['facingsMin']:.0f} | {row['facingsMedian']:.0f} |"
        )
    return "\n".join(lines)


def _pct(r: dict[str, Any]) -> str:
    return f"{r['rate']:.1%} ({r['hits']}/{r['n']})"


def _bounded(r: dict[str, Any]) -> str:
    return f"{_pct(r)} [{r['low95']:.1%}, {r['high95']:.1%}]"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--leagues", type=int, default=100, help="honest calibration leagues of 40 per mode"
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=2024, help="master seed")
    parser.add_argument("--out", help="also write the full report as JSON here")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    report = calibrate(args.seed, args.leagues, args.workers)
    elapsed = time.perf_counter() - started
    print(markdown(report))
    print(f"\nruntime {elapsed:.0f} s with {args.workers} worker(s)", file=sys.stderr)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as out:
            json.dump(report | {"runtimeSeconds": round(elapsed)}, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
