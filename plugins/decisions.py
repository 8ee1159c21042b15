"""The decision read-out: how each seat bids and challenges, judged against the exact odds.

A league says who wins; this says why. Every figure is a pure function of the
full-information log (like the soft-play audit), worked out from the exact chance of
each bid from the decider's own hand (:mod:`arena.grading`), and lands in
``results.audit["decisions"]``; pooled over episodes (a league, ``arena audit A B``) it
is per entrant (seat spec), each figure with a 95% interval that names its method.

A seat's own decisions are its bids and the challenges it chose (a forced challenge,
rule 8, is the table's); a rule-11 fallback move counts as the seat's, as the audit counts
it (``fallbacks`` says how many). ``p`` is a bid's exact chance from the deciding seat's
own hand; a *facing* is a decision with another seat's bid standing.

The figures, each ``numerator / denominator`` over the seat's decisions:

- ``bidChance`` = sum(p of its own bids) / bids: how likely its bids are, to itself;
- ``bluffRate`` = false bids / bids (false when made: fewer of the face on the table);
- ``heldFace`` = bids on a face its own hand counts (by the mode's rule) / bids;
- ``overreach`` = sum(quantity - own count - unseen * P(face)) / bids: how far its bids
  sit above what its own hand supports, in symbols;
- ``challengeRate`` = challenges / facings;
- ``challengeAccuracy`` = challenges won / challenges;
- ``againstHand`` = challenges of a bid with p >= 1/2 / challenges (its own hand argued
  against them; ``againstCertain`` counts those with the bid certain);
- ``missedCatches`` = raises facing a bid with p < 1/2 / facings with p < 1/2 (challenging
  was worth 1 - 2p > 0 by its own hand);
- ``forgonePerFacing`` = sum(1 - 2p over missed catches) / facings: expected points
  forgone per facing (the soft-play ``expLoss``, over all opponents together);

and three that are not a ratio of sums:

- ``calibrationGap`` = sum over the 10 bins of p (0-0.1, ..., 0.9-1) of
  |true bids - sum(p)| / bids: the bid-weighted mean absolute gap between how often its
  bids were true and how likely its own hand made them. Truth depends only on hands it
  cannot see, so a seat that reads nothing from the table has a gap near 0 whatever it
  bids; a gap says its bids were true more (or less) often than its own dice explain;
- ``followsBluffs``: the per-opponent record rulebook play keeps. Its challenges of each
  opponent b beyond what its own hand explains: ``excess_b = (O_b - E_b) / faced_b``, where
  O_b counts its challenges of b and E_b = sum over b's bids it faced of its own challenge
  rate at that bid's chance (in :data:`STRATA` bands of p, over all its opponents). The
  figure is the least-squares slope, weighted by facings, of excess_b on b's bluff rate:
  how many more challenges per facing for each unit of an opponent's bluffing. A seat that
  challenges by its own odds alone has excess 0 against everyone, however much more often
  a bluffer's bids are unlikely. Undefined unless two opponents it faced differ in bluff
  rate;
- ``targeting``: the facing-weighted spread of excess_b over opponents,
  sqrt(sum_b faced_b excess_b^2 / facings) (their weighted mean is 0 by construction): 0
  when its own odds explain how it challenges everyone, larger when it singles some out.
  Undefined unless it faced two opponents.

Grades count each decision's grade (:mod:`arena.grading`).

Talk is not read: whether one seat's talk moves the next seat's challenges is confounded
with the bid the talk came with (the same bid with or without talk is rare), so a crude
figure would mostly measure the bids. See ``docs/decisions.md``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from arena import hookimpl
from arena.audit import per_log
from arena.grading import GRADES, NONE, Decisions, judge
from arena.intervals import jackknife_t, ratio_t, share_kg
from arena.registry import CompiledDecisions

SECTION = "decisions"

BINS = 10
"""Calibration bins by a bid's own chance: [0, 0.1), [0.1, 0.2), ..., [0.9, 1]."""

COUNTS = (
    "decisions",
    "fallbacks",
    "bids",
    "chanceSum",
    "falseBids",
    "heldFaceBids",
    "overreachSum",
    "facings",
    "challenges",
    "challengesWon",
    "againstHand",
    "againstCertain",
    "catchable",
    "missedCatches",
    "forgoneSum",
)
"""A seat's additive tallies, in the order of its row: every ratio figure reads two."""
_AT = {name: i for i, name in enumerate(COUNTS)}

RATIOS = {
    "bidChance": ("chanceSum", "bids"),
    "bluffRate": ("falseBids", "bids"),
    "heldFace": ("heldFaceBids", "bids"),
    "overreach": ("overreachSum", "bids"),
    "challengeRate": ("challenges", "facings"),
    "challengeAccuracy": ("challengesWon", "challenges"),
    "againstHand": ("againstHand", "challenges"),
    "missedCatches": ("missedCatches", "catchable"),
    "forgonePerFacing": ("forgoneSum", "facings"),
}
"""Each ratio figure's (numerator, denominator) tally."""

GRADE_RATES = {f"{grade}Rate": grade for grade in GRADES}
"""Pooled per entrant: each grade's share of its decisions (``blunderRate``, ...)."""

FIGURES = (*RATIOS, "calibrationGap", "followsBluffs", "targeting", *GRADE_RATES)
"""Every figure, in the order tables show them (the last four pooled only)."""

UNBOUNDED = ("overreach", "followsBluffs")
"""The figures that are not a share between 0 and 1: every other interval is clipped to
[0, 1], the range its figure can take."""

RATIO_T, KORN_GRAUBARD, JACKKNIFE_T = "ratio-t", "korn-graubard", "jackknife-t"
METHOD = (
    "95% intervals over episodes as independent clusters: shares of counts by the exact"
    " binomial interval at the ratio estimator's effective sample size (korn-graubard); bidChance,"
    " overreach and forgonePerFacing by the ratio estimator's t-interval (ratio-t);"
    " calibrationGap, followsBluffs and targeting by the delete-one jackknife's t-interval"
    " (jackknife-t); none under two episodes"
)

MIN_EPISODES = 20
"""Fewest episodes over which ``bench/calibrate_decisions.py`` measured every figure's
interval to cover near 95% (0.91 to 1.00; at 5 episodes some covered 0.87 to 0.90): an
interval over fewer says ``coverage``: :data:`TOO_FEW` (docs/decisions.md)."""
COVERED, TOO_FEW = "ok", "too few episodes"

SHARES = frozenset(
    ("bluffRate", "heldFace", "challengeRate", "challengeAccuracy", "againstHand", "missedCatches")
)
"""The ratio figures that are shares of counts (a count over a count), drawn by
:func:`arena.intervals.share_kg`; the grade rates are too."""

STRATA = 20
"""Bands of a standing bid's chance from the facer's hand, [0, 0.05), ..., [0.95, 1], in
which its challenge rate is its own odds' explanation of its challenges. Fine enough that
the baselines' thresholds (0.15, 0.25) fall on band edges."""

FACED, CHALLENGED, BIDS, FALSE = 0, STRATA, 2 * STRATA, 2 * STRATA + 1
"""An opponent row: the seat's facings of it by band, its challenges of it by band, then
the opponent's own bids and false bids (its bluff record)."""
OPPONENT_ROW = 2 * STRATA + 2


class Fold:
    """Each slot's tallies, calibration bins, grades and facings by opponent and band (the
    section before its figures), added up over chunks of :class:`arena.grading.Decisions`
    in log order: from :func:`arena.grading.judge` over the log, or from the compiled
    engine's rows as it plays (:data:`COMPILED`). All are sums, so memory stays bounded."""

    def __init__(self, seats: int):
        self.seats = seats
        self.totals = {
            "counts": np.zeros((seats, len(COUNTS))),
            "bins": np.zeros((seats, BINS, 3)),
            "grades": np.zeros((seats, len(GRADES)), dtype=np.int64),
            "faced": np.zeros((seats, seats, STRATA), dtype=np.int64),
            "challenged": np.zeros((seats, seats, STRATA), dtype=np.int64),
        }

    def add(self, decisions: Decisions) -> None:
        for name, part in _chunk_tally(decisions, self.seats).items():
            self.totals[name] += part

    def value(self) -> dict[str, np.ndarray]:
        return self.totals


def _tally(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """:class:`Fold` over the log's decisions, judged a chunk at a time."""
    fold = Fold(len(records[0]["seats"]))
    for chunk in judge(records):
        fold.add(chunk)
    return fold.value()


def _chunk_tally(d: Decisions, seats: int) -> dict[str, np.ndarray]:
    """One chunk of decisions' tallies (see :func:`_tally`)."""
    slot, bid = d.slot, ~d.challenge
    facing = d.bidder != NONE
    catchable = facing & (d.standing_p < 0.5)
    chance = np.nan_to_num(d.bid_p)
    missed = catchable & bid
    columns = np.column_stack(
        [
            np.ones(len(slot)),  # decisions
            d.fallback,
            bid,
            chance,  # 0 for a challenge
            bid & ~d.true,
            d.held,
            np.nan_to_num(d.overreach),  # 0 for a challenge
            facing,
            d.challenge,
            d.won,
            d.challenge & (d.standing_p >= 0.5),  # against its hand
            d.challenge & (d.standing_need <= 0),  # against a certain bid
            catchable,
            missed,
            np.where(missed, d.loss, 0.0),  # forgone
        ]
    ).astype(float)
    # One bincount over (seat, column), adding each cell's decisions in log order.
    cells = (slot[:, None] * len(COUNTS) + np.arange(len(COUNTS))).ravel()
    counts = np.bincount(cells, columns.ravel(), seats * len(COUNTS)).reshape(seats, -1)
    cell = (slot * BINS + np.minimum(BINS - 1, (chance * BINS).astype(np.int64)))[bid]
    per_bid = columns[bid][:, [0, _AT["chanceSum"], 4]]  # 1, p, true (not false: 1 - false)
    per_bid[:, 2] = 1.0 - per_bid[:, 2]
    bin_cells = (cell[:, None] * 3 + np.arange(3)).ravel()
    bins = np.bincount(bin_cells, per_bid.ravel(), seats * BINS * 3).reshape(seats, BINS, 3)
    graded = np.bincount(slot * 4 + d.grade, minlength=seats * 4).reshape(seats, 4)[:, 1:]
    band = np.minimum(STRATA - 1, (np.nan_to_num(d.standing_p) * STRATA).astype(np.int64))
    pair = (slot * seats + d.bidder) * STRATA + band
    size = seats * seats * STRATA
    faced = np.bincount(pair[facing], minlength=size).reshape(seats, seats, STRATA)
    challenged = np.bincount(pair[d.challenge], minlength=size).reshape(seats, seats, STRATA)
    return {
        "counts": counts,
        "bins": bins,
        "grades": graded,
        "faced": faced,
        "challenged": challenged,
    }


tally = per_log(_tally, reads_made=True)
"""The tallies of one log, made once however many reporters ask for them (hands and
the header read alike as lists or tuples, so the records as made will do)."""

COMPILED = CompiledDecisions(tally, Fold)
"""The compiled engine folds :data:`tally` from its C table's rows as it plays, so a
compiled episode's read-out does not read its log back."""


def ratio(totals: Sequence[float], figure: str) -> float | None:
    """A ratio figure of a seat's summed tallies (a :data:`COUNTS` row); ``None`` with no
    denominator."""
    numerator, denominator = RATIOS[figure]
    below = totals[_AT[denominator]]
    return float(totals[_AT[numerator]] / below) if below > 0 else None


def calibration_gap(bins: Sequence[Sequence[float]]) -> float | None:
    """sum over bins of |true bids - sum(p)| / bids; ``bins`` rows are (bids, sum p, true)."""
    bids = sum(row[0] for row in bins)
    if bids <= 0:
        return None
    return float(sum(abs(row[2] - row[1]) for row in bins) / bids)


def excess(opponents: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Each opponent's facings and the seat's excess challenge rate against it (O - E) /
    faced, over the opponents (rows of :data:`OPPONENT_ROW`) it faced; ``None`` under two."""
    faced = opponents[:, FACED:CHALLENGED]
    challenged = opponents[:, CHALLENGED:BIDS]
    by_band = faced.sum(axis=0)
    rate = np.divide(challenged.sum(axis=0), by_band, out=np.zeros(STRATA), where=by_band > 0)
    total = faced.sum(axis=1)
    seen = total > 0
    if seen.sum() < 2:
        return None
    observed, expected = challenged.sum(axis=1), (faced * rate).sum(axis=1)  # not BLAS:
    # a sum numpy adds in one fixed order on every machine
    return total, np.where(seen, (observed - expected) / np.where(seen, total, 1), 0.0)


def follows_bluffs(opponents: np.ndarray) -> float | None:
    """The facing-weighted least-squares slope of the excess challenge rate on the bluff
    rate, over the opponents the seat faced that bid at least once."""
    found = excess(opponents)
    if found is None:
        return None
    faced, beyond = found
    bids, false = opponents[:, BIDS], opponents[:, FALSE]
    seen = (faced > 0) & (bids > 0)
    if seen.sum() < 2:
        return None
    w, x, y = faced[seen], false[seen] / bids[seen], beyond[seen]
    x_mean, y_mean = np.average(x, weights=w), np.average(y, weights=w)
    spread = float((w * (x - x_mean) ** 2).sum())
    if spread <= 1e-12 * float(w.sum()):
        return None
    return float((w * (x - x_mean) * (y - y_mean)).sum() / spread)


def targeting(opponents: np.ndarray) -> float | None:
    """sqrt(sum_b faced_b excess_b^2 / facings): how unevenly, beyond its own odds, the seat
    challenges the opponents it faced (at most 1: an excess lies in [-1, 1])."""
    found = excess(opponents)
    if found is None:
        return None
    faced, beyond = found
    return math.sqrt(float((faced * beyond**2).sum() / faced.sum()))


def episode_figures(totals: Sequence[float], bins: Sequence[Sequence[float]]) -> dict[str, Any]:
    """One seat's figures in one episode: the ratios and the calibration gap. Not
    ``followsBluffs`` or ``targeting``: within an episode a seat faces only the seat before
    it (rule 5, and the table order is fixed), so they need the episodes a league pools."""
    return {
        **{name: ratio(totals, name) for name in RATIOS},
        "calibrationGap": calibration_gap(bins),
    }


def section(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``results.audit["decisions"]``: each slot's tallies, calibration, grades, facings
    by opponent and figures."""
    made = tally(records)
    counts, bins = made["counts"], made["bins"]
    faced, challenged = made["faced"].tolist(), made["challenged"].tolist()
    grades = made["grades"].tolist()
    seats = []
    for slot, row in enumerate(counts.tolist()):
        calibration = [[int(n), chance, int(true)] for n, chance, true in bins[slot].tolist()]
        seats.append(
            {
                **{name: _number(value) for name, value in zip(COUNTS, row, strict=True)},
                "calibration": calibration,
                "grades": dict(zip(GRADES, grades[slot], strict=True)),
                "faced": faced[slot],
                "challenged": challenged[slot],
                "figures": episode_figures(row, calibration),
            }
        )
    return {"seats": seats}


def _number(value: float) -> int | float:
    """A tally as JSON: whole counts as integers, sums of chances as they are."""
    return int(value) if float(value).is_integer() else float(value)


# --- pooled over episodes ---------------------------------------------------------


def pool(episodes: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per entrant (seat spec), over episodes' results: pooled figures with 95% intervals.

    Each episode is one cluster: an entrant seated twice at a table adds both seats'
    tallies into that episode's cluster. An opponent is an entrant too, so ``followsBluffs``
    reads each opponent entrant's bluff rate over the same episodes.
    """
    read = [_episode(index, results) for index, results in enumerate(episodes)]
    names = sorted({policy for policies, _ in read for policy in policies})
    at = {name: i for i, name in enumerate(names)}
    clusters: dict[str, list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = defaultdict(list)
    for policies, seats in read:
        bids = np.zeros(len(names))
        false = np.zeros(len(names))
        for policy, seat in zip(policies, seats, strict=True):
            bids[at[policy]] += seat["bids"]
            false[at[policy]] += seat["falseBids"]
        mine: dict[str, list] = {}
        for slot, (policy, seat) in enumerate(zip(policies, seats, strict=True)):
            opponents = np.zeros((len(names), OPPONENT_ROW))
            for b, other in enumerate(policies):
                if b != slot:
                    opponents[at[other], FACED:CHALLENGED] += seat["faced"][b]
                    opponents[at[other], CHALLENGED:BIDS] += seat["challenged"][b]
            part = (
                np.array([seat[name] for name in COUNTS], dtype=float),
                np.array(seat["calibration"], dtype=float),
                opponents,
                np.array([seat["grades"][grade] for grade in GRADES], dtype=float),
            )
            if policy in mine:
                mine[policy] = [a + b for a, b in zip(mine[policy], part, strict=True)]
            else:
                mine[policy] = list(part)
        for policy, part in mine.items():
            # an opponent's record counts once per episode, however many seats the entrant had
            part[2][:, BIDS], part[2][:, FALSE] = bids, false
            clusters[policy].append(tuple(part))
    return {
        "method": METHOD,
        "entrants": {name: _entrant(clusters[name], names) for name in names},
    }


def _entrant(parts: list[tuple], names: list[str]) -> dict[str, Any]:
    """One entrant's pooled section from its clusters (one per episode it played)."""
    counts = np.stack([part[0] for part in parts])
    bins = np.stack([part[1] for part in parts])
    opponents = np.stack([part[2] for part in parts])
    graded = np.stack([part[3] for part in parts])
    grades = graded.sum(axis=0)
    found = {}
    for figure, (numerator, denominator) in RATIOS.items():
        method = KORN_GRAUBARD if figure in SHARES else RATIO_T
        draw = share_kg if figure in SHARES else ratio_t
        value, ci, _ = draw(counts[:, _AT[numerator]], counts[:, _AT[denominator]])
        found[figure] = _interval(
            figure, value, ci, method, counts[:, _AT[denominator]].sum(), len(parts)
        )
    bids = counts[:, _AT["bids"]].sum()
    facings = counts[:, _AT["facings"]].sum()
    for figure, statistic, parts_of, n in (
        ("calibrationGap", calibration_gap, bins, bids),
        ("followsBluffs", follows_bluffs, opponents, facings),
        ("targeting", targeting, opponents, facings),
    ):
        value, ci = jackknife_t(statistic, parts_of)
        found[figure] = _interval(figure, value, ci, JACKKNIFE_T, n, len(parts))
    decided = counts[:, _AT["decisions"]]
    for figure, grade in GRADE_RATES.items():
        value, ci, _ = share_kg(graded[:, GRADES.index(grade)], decided)
        found[figure] = _interval(figure, value, ci, KORN_GRAUBARD, decided.sum(), len(parts))
    total_bins = bins.sum(axis=0)
    total_opponents = opponents.sum(axis=0)
    episodes = len(parts)
    return {
        "episodes": episodes,
        "totals": {k: _number(v) for k, v in zip(COUNTS, counts.sum(axis=0), strict=True)},
        "figures": found,
        "calibration": [
            {
                "low": b / BINS,
                "high": (b + 1) / BINS,
                "bids": int(n),
                "meanChance": chance / n if n else None,
                "trueRate": true / n if n else None,
            }
            for b, (n, chance, true) in enumerate(total_bins)
        ],
        "grades": {
            **dict(zip(GRADES, map(int, grades), strict=True)),
            "decisions": int(counts[:, _AT["decisions"]].sum()),
        },
        "opponents": _record(names, total_opponents),
    }


def _record(names: list[str], opponents: np.ndarray) -> dict[str, Any]:
    """Per opponent entrant faced: facings, challenges, the rate and its excess over the
    seat's own odds, beside that opponent's bluff rate (what ``followsBluffs`` draws)."""
    found = excess(opponents)
    record = {}
    for index, (name, row) in enumerate(zip(names, opponents, strict=True)):
        faced, hit = row[FACED:CHALLENGED].sum(), row[CHALLENGED:BIDS].sum()
        if faced:
            record[name] = {
                "faced": int(faced),
                "challenged": int(hit),
                "challengeRate": hit / faced,
                "excessChallengeRate": float(found[1][index]) if found is not None else None,
                "bluffRate": row[FALSE] / row[BIDS] if row[BIDS] else None,
            }
    return record


def _interval(figure: str, value, ci, method: str, n: float, episodes: int) -> dict[str, Any]:
    """A pooled figure as JSON: its value, its interval within the figure's range, how the
    interval was drawn, over how many decisions (bids or facings), and whether
    ``bench/calibrate_decisions.py`` measured it to cover at that many episodes."""
    if ci is not None and figure not in UNBOUNDED:
        ci = (max(0.0, ci[0]), min(1.0, ci[1]))
    entry: dict[str, Any] = {
        "value": value,
        "ci": list(ci) if ci is not None else None,
        "ciMethod": method,
        "n": _number(n),
        "coverage": COVERED if episodes >= MIN_EPISODES else TOO_FEW,
    }
    if value is None:
        entry["why"] = "no data"
    elif ci is None:
        entry["why"] = "under two episodes with data, or undefined with one left out"
    return entry


def _episode(index: int, results: Mapping[str, Any]) -> tuple[list[str], list[dict]]:
    """An episode's policies by slot and its ``decisions`` section's seats."""
    audit = results.get("audit") or {}
    found = audit.get(SECTION)
    if not isinstance(found, dict) or not isinstance(found.get("seats"), list):
        raise ValueError(
            f"episode {index} has no results.audit.{SECTION}"
            " (played without the decisions reporter)"
        )
    return [seat["policy"] for seat in results["seats"]], found["seats"]


@hookimpl
def register_audit_reporters(register):
    register(SECTION, section, pool=pool, compiled=COMPILED)
