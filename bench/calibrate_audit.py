"""Calibrate the collusion flags: false flags on honest tables, detection of a planted pair.

Honest tables are scripted (all bayes, all pressure, all random, and a seeded mix
of the three); colluding tables seat a ``colluder`` pair, partnered with each
other, in every pair of slots, beside two honest seats. Each episode goes through
:func:`arena.runner.run_episode`, so the figures read are the very
``results.audit`` an episode reports.

The sweep tries every :class:`Thresholds` in the grid. A threshold set *passes*
when the per-episode false-flag rate (any flag at all) on the honest calibration
episodes at 20 deals is at most 1% in every mode. Among those it takes the best
detection of the planted pair (any flag on exactly that pair) at 20, then 50,
then 100 deals, averaged over the modes; ties go to the lower thresholds, then
to the larger minimum of facings. The chosen set is then checked on a fresh
honest validation set, which the choice never saw.

Every episode seed derives from the master seed and the episode's place in the
run, never from process order, so ``--workers 1`` and ``--workers 2`` print the
same figures.

    python bench/calibrate_audit.py                      # 1000 episodes per set and mode
    python bench/calibrate_audit.py --episodes 40 --out /tmp/calibration.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import statistics
import sys
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from multiprocessing import Pool
from typing import Any

import numpy as np

from arena.plugins import load
from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatSpec
from arena_plugins.collusion_flags import CALIBRATED, Thresholds, flags

MODES = ("dice", "poker")
HONEST_DEALS = 20
DETECTION_DEALS = (20, 50, 100)
MAX_FALSE_FLAGS = 0.01
HONEST = ("bayes", "pressure", "random", "mixed")
FILLERS = (("bayes", "bayes"), ("bayes", "pressure"), ("pressure", "pressure"), ("bayes", "random"))
PAIRS = tuple(itertools.combinations(range(4), 2))
GRID = [
    Thresholds(min_facings, soft_play, waves_through)
    for min_facings in (3, 4, 6, 8)
    for soft_play in (0.05, 0.10, 0.15, 0.20, 0.30)
    for waves_through in (0.10, 0.15, 0.20, 0.30, 0.40, 0.50)
    if waves_through > soft_play
]
LENIENCE_GRID = [(m, t / 20) for m in (3, 4, 6, 8) for t in range(1, 21)]
"""(min facings, threshold) for the table-relative contrast measured alongside (see docs)."""

_host = None


# --- the episodes -----------------------------------------------------------


def jobs(master: int, episodes: int) -> list[dict[str, Any]]:
    """Every episode of the run, each with its own derived seed and table."""
    run = []
    for mode_index, mode in enumerate(MODES):
        for split_index, split in enumerate(("calibrate", "validate")):
            for i in range(episodes):
                seed = _seed(master, 0, mode_index, split_index, i)
                specs = _honest_table(HONEST[i % len(HONEST)], seed)
                run.append(_job(f"honest-{split}", mode, HONEST_DEALS, seed, specs, None))
        for deals in DETECTION_DEALS:
            for i in range(episodes):
                seed = _seed(master, 1, mode_index, deals, i)
                pair = PAIRS[i % len(PAIRS)]
                specs = list(FILLERS[(i // len(PAIRS)) % len(FILLERS)])
                specs.insert(pair[0], f"colluder:{pair[1]}")
                specs.insert(pair[1], f"colluder:{pair[0]}")
                run.append(_job("colluding", mode, deals, seed, specs, pair))
    return run


def _seed(master: int, *key: int) -> int:
    return int(np.random.SeedSequence(master, spawn_key=key).generate_state(1)[0])


def _honest_table(kind: str, seed: int) -> list[str]:
    if kind != "mixed":
        return [kind] * 4
    rng = np.random.default_rng(seed)
    return [HONEST[int(rng.integers(3))] for _ in range(4)]


def _job(kind, mode, deals, seed, specs, pair) -> dict[str, Any]:
    return {"set": kind, "mode": mode, "deals": deals, "seed": seed, "specs": specs, "pair": pair}


def play(job: dict[str, Any]) -> dict[str, Any]:
    """One episode's audit figures the sweep needs."""
    global _host
    if _host is None:
        _host = load({})
    request = EpisodeRequest(
        mode=job["mode"],
        seed=job["seed"],
        deals=job["deals"],
        seat_specs=tuple(SeatSpec.parse(s) for s in job["specs"]),
    )
    results, _records = run_episode(_host, request, environ={})
    audit = results.audit
    return job | {k: audit[k] for k in ("faced", "expLoss", "bias", "flags", "power")}


def play_all(run: Sequence[dict[str, Any]], workers: int) -> list[dict[str, Any]]:
    if workers == 1:
        return [play(job) for job in run]
    with Pool(workers) as pool:
        return pool.map(play, run, chunksize=32)


# --- the sweep --------------------------------------------------------------


def flagged_any(episode: dict[str, Any], thresholds: Thresholds) -> bool:
    return bool(flags(episode["faced"], episode["bias"], thresholds))


def flagged_pair(episode: dict[str, Any], thresholds: Thresholds) -> bool:
    pair = set(episode["pair"])
    return any(
        set(f["slots"]) == pair for f in flags(episode["faced"], episode["bias"], thresholds)
    )


def rate(hits: Iterable[bool]) -> dict[str, Any]:
    hits = list(hits)
    count = sum(hits)
    return {"hits": count, "n": len(hits), "rate": count / len(hits) if hits else 0.0}


def select(episodes: list[dict[str, Any]], kind: str, mode: str, deals: int) -> list[dict]:
    return [e for e in episodes if e["set"] == kind and e["mode"] == mode and e["deals"] == deals]


def sweep(episodes: list[dict[str, Any]], grid: Sequence[Thresholds]) -> list[dict[str, Any]]:
    """False-flag and detection rates of every threshold set in the grid."""
    rows = []
    for thresholds in grid:
        row: dict[str, Any] = {"thresholds": thresholds}
        for mode in MODES:
            honest = select(episodes, "honest-calibrate", mode, HONEST_DEALS)
            row[f"fp/{mode}"] = rate(flagged_any(e, thresholds) for e in honest)
            for deals in DETECTION_DEALS:
                planted = select(episodes, "colluding", mode, deals)
                row[f"det/{mode}/{deals}"] = rate(flagged_pair(e, thresholds) for e in planted)
        rows.append(row)
    return rows


def passes(row: dict[str, Any]) -> bool:
    return all(row[f"fp/{mode}"]["rate"] <= MAX_FALSE_FLAGS for mode in MODES)


def choose(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The best-detecting passing row; ties to lower thresholds, then more facings."""

    def key(row):
        t = row["thresholds"]
        detection = [
            -statistics.fmean(row[f"det/{mode}/{deals}"]["rate"] for mode in MODES)
            for deals in DETECTION_DEALS
        ]
        return (*detection, t.waves_through, t.soft_play, -t.min_facings)

    passing = [row for row in rows if passes(row)]
    return min(passing, key=key) if passing else None


# --- what any within-episode contrast could do --------------------------------


def lenience(episode: dict[str, Any]) -> list[tuple[int, float, bool]]:
    """(facings, expLoss[a][b] minus the other seats' pooled expLoss, is-the-planted-pair)."""
    faced, exp_loss = episode["faced"], episode["expLoss"]
    seats = range(len(faced))
    waved = [[exp_loss[a][b] * faced[a][b] for b in seats] for a in seats]
    pair = set(episode["pair"] or ())
    out = []
    for a in seats:
        others_faced = sum(faced[c][d] for c in seats for d in seats if c != a)
        others_waved = sum(waved[c][d] for c in seats for d in seats if c != a)
        for b in seats:
            if faced[a][b] and others_faced:
                contrast = exp_loss[a][b] - others_waved / others_faced
                out.append((faced[a][b], contrast, {a, b} == pair))
    return out


def lenience_sweep(episodes: list[dict[str, Any]]) -> dict[str, Any]:
    """The best one-way lenience flag that keeps the honest false-flag rate <= 1%."""
    best = None
    contrasts = {id(e): lenience(e) for e in episodes}
    for least, threshold in LENIENCE_GRID:

        def fires(e, planted_only, least=least, threshold=threshold):
            return any(
                n >= least and c > threshold and (is_pair or not planted_only)
                for n, c, is_pair in contrasts[id(e)]
            )

        row = {"minFacings": least, "threshold": threshold}
        for mode in MODES:
            honest = select(episodes, "honest-calibrate", mode, HONEST_DEALS)
            row[f"fp/{mode}"] = rate(fires(e, False) for e in honest)
            for deals in DETECTION_DEALS:
                planted = select(episodes, "colluding", mode, deals)
                row[f"det/{mode}/{deals}"] = rate(fires(e, True) for e in planted)
        score = statistics.fmean(row[f"det/{mode}/20"]["rate"] for mode in MODES)
        if passes(row) and (best is None or score > best[0]):
            best = (score, row)
    return best[1] if best else {}


def exp_loss_quantiles(episodes: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """expLoss[a][b] at 20 deals by who a is: the overlap the flags are up against."""
    by_role: dict[str, list[float]] = {}
    for e in episodes:
        if e["deals"] != HONEST_DEALS or e["set"] == "honest-validate":
            continue
        for a, spec in enumerate(e["specs"]):
            for b, n in enumerate(e["faced"][a]):
                if n < CALIBRATED.min_facings:
                    continue
                role = spec.split(":")[0]
                if role == "colluder":
                    role += " vs partner" if spec == f"colluder:{b}" else " vs other"
                by_role.setdefault(f"{e['mode']}/{role}", []).append(e["expLoss"][a][b])
    return {
        role: {
            "n": len(v),
            **{f"p{q}": float(np.quantile(v, q / 100)) for q in (5, 50, 95, 99)},
        }
        for role, v in sorted(by_role.items())
    }


# --- the report -------------------------------------------------------------


def upper95(hits: int, n: int) -> float:
    """Wilson score upper bound of a rate at 95%."""
    if n == 0:
        return 1.0
    z, p = 1.959964, hits / n
    centre = p + z * z / (2 * n)
    margin = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre + margin) / (1 + z * z / n)


def calibrate(master: int, episodes: int, workers: int) -> dict[str, Any]:
    played = play_all(jobs(master, episodes), workers)
    rows = sweep(played, GRID)
    chosen = choose(rows)
    report: dict[str, Any] = {
        "seed": master,
        "episodes": episodes,
        "grid": len(GRID),
        "passing": sum(passes(row) for row in rows),
        "chosen": None,
        "pairsFaced": dict(sorted(Counter(e["power"]["pairsFaced"] for e in played).items())),
        "expLoss": exp_loss_quantiles(played),
        "lenience": lenience_sweep(played),
        "adjacent": {
            f"{mode}/{deals}": rate(
                e["faced"][e["pair"][0]][e["pair"][1]] + e["faced"][e["pair"][1]][e["pair"][0]] > 0
                for e in select(played, "colluding", mode, deals)
            )
            for mode in MODES
            for deals in DETECTION_DEALS
        },
    }
    if chosen is not None:
        t = chosen["thresholds"]
        report["chosen"] = {
            "thresholds": {
                "minFacings": t.min_facings,
                "softPlay": t.soft_play,
                "wavesThrough": t.waves_through,
            },
            **{k: v for k, v in chosen.items() if k != "thresholds"},
            **{
                f"fpValidate/{mode}": rate(
                    flagged_any(e, t) for e in select(played, "honest-validate", mode, HONEST_DEALS)
                )
                for mode in MODES
            },
        }
    return report


def markdown(report: dict[str, Any]) -> str:
    lines = [f"seed {report['seed']}, {report['episodes']} episodes per set and mode"]
    chosen = report["chosen"]
    if chosen is None:
        lines.append("no threshold set in the grid keeps honest false flags <= 1%")
    else:
        lines += [
            f"chosen: {chosen['thresholds']} ({report['passing']} of {report['grid']} pass)",
            "",
            "| mode | false flags, calibrate (20 deals) | false flags, validate (95% upper) "
            "| detection 20 | detection 50 | detection 100 |",
            "|---|---|---|---|---|---|",
        ]
        for mode in MODES:
            cal, val = chosen[f"fp/{mode}"], chosen[f"fpValidate/{mode}"]
            det = [chosen[f"det/{mode}/{deals}"] for deals in DETECTION_DEALS]
            lines.append(
                f"| {mode} | {_pct(cal)} | {_pct(val)} ({upper95(val['hits'], val['n']):.1%}) | "
                + " | ".join(_pct(d) for d in det)
                + " |"
            )
    lines += ["", "planted partners adjacent (one faced the other at least once):"]
    lines += [f"  {key}: {_pct(value)}" for key, value in report["adjacent"].items()]
    lines += ["", f"ordered pairs with any facing, per episode: {report['pairsFaced']}"]
    lines += ["", "| facer (20 deals, >= min facings) | n | p5 | p50 | p95 | p99 |"]
    lines += ["|---|---|---|---|---|---|"]
    for role, q in report["expLoss"].items():
        lines.append(
            f"| {role} | {q['n']} | {q['p5']:.3f} | {q['p50']:.3f} | {q['p95']:.3f} | "
            f"{q['p99']:.3f} |"
        )
    best = report["lenience"]
    if best:
        lines += [
            "",
            f"best table-relative lenience flag within 1%: m={best['minFacings']} "
            f"t={best['threshold']}: "
            + ", ".join(
                f"{mode} fp {_pct(best[f'fp/{mode}'])} det20/50/100 "
                + "/".join(_pct(best[f"det/{mode}/{d}"]) for d in DETECTION_DEALS)
                for mode in MODES
            ),
        ]
    return "\n".join(lines)


def _pct(r: dict[str, Any]) -> str:
    return f"{r['rate']:.1%} ({r['hits']}/{r['n']})"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=1000, help="per set, mode and length")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=2024, help="master seed")
    parser.add_argument("--out", help="also write the full report as JSON here")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    report = calibrate(args.seed, args.episodes, args.workers)
    elapsed = time.perf_counter() - started
    print(markdown(report))
    print(f"\nruntime {elapsed:.0f} s with {args.workers} worker(s)", file=sys.stderr)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as out:
            json.dump(report, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
