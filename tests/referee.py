"""An independent reading of rules.md that replays an event log and checks every fact.

The engine, ``arena.rules`` and ``arena.probability`` are what is under test, so
this module imports nothing from ``arena`` at all. It re-derives, from the log's
own records and the rulebook alone: the table order and each deal's opener
(rule 1), whose turn it is (rules 2 and 5), every bid's legality (rules 3, 4, 8),
each challenge's count, winner and loser (rule 6), forced challenges at the cap
(rule 8), rule 11's retry-then-fallback marks and that a fallback is a move the
bayes baseline would make, that bayes and pressure seats play their own lines,
and the points, scores, deal count and status of the result (rule 9, scoring).

Call :func:`replay` with the list of records (and optionally the ``--json``
results); it returns a :class:`Replay` summary or raises :class:`RefereeError`
naming the offending line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache
from typing import Any

RAISE_DEPTH = 2
"""rules.md: the baselines enumerate the raises q0 .. q0+2."""


class RefereeError(AssertionError):
    """The log breaks the rulebook; the message names the line and the rule."""


@dataclass(frozen=True)
class Baseline:
    chal: float
    safe: float
    pad: bool


BASELINES = {
    "bayes": Baseline(chal=0.15, safe=0.35, pad=False),
    "pressure": Baseline(chal=0.25, safe=0.35, pad=True),
}


@dataclass
class Replay:
    """What the referee established while replaying; tests assert on it."""

    seats: int
    deals_played: int = 0
    status: str = ""
    decisions_per_deal: list[int] = field(default_factory=list)
    bids: int = 0
    challenges: int = 0
    forced: int = 0
    baseline_moves_checked: int = 0
    points: list[int] = field(default_factory=list)
    asked: list[int] = field(default_factory=list)
    rejected: list[int] = field(default_factory=list)
    fallbacks: list[int] = field(default_factory=list)
    faults: list[int] = field(default_factory=list)


@cache
def chance(unseen: int, need: int, p: Fraction) -> Fraction:
    """P(at least ``need`` of ``unseen`` symbols show one face), exactly."""
    if need <= 0:
        return Fraction(1)
    return sum(
        (math.comb(unseen, k) * p**k * (1 - p) ** (unseen - k) for k in range(need, unseen + 1)),
        Fraction(0),
    )


def replay(
    records: list[dict[str, Any]],
    results: dict[str, Any] | None = None,
    check_baselines: bool = True,
) -> Replay:
    """Replay ``records`` by the rulebook; cross-check ``results`` (the ``--json`` object)."""
    if not records:
        raise RefereeError("empty log")
    referee = _Referee(records[0], check_baselines)
    for line, record in enumerate(records[1:], start=2):
        referee.step(line, record)
    referee.finish(len(records))
    if results is not None:
        referee.check_results(results)
    return referee.summary


@dataclass
class _Deal:
    number: int
    position: int
    hands: list[list[int]]
    bids: list[tuple[int, int, int]] = field(default_factory=list)
    rejections: int = 0
    faulted: bool = False
    usage: bool = False

    @property
    def standing(self) -> tuple[int, int, int] | None:
        return self.bids[-1] if self.bids else None


class _Referee:
    def __init__(self, header: dict[str, Any], check_baselines: bool):
        self.line = 1
        self._require(header.get("type") == "episode", "the first line is not the episode header")
        self.symbols = list(header["symbols"])
        self._require(
            len(self.symbols) >= 2 and self.symbols == sorted(set(self.symbols)),
            f"symbols {self.symbols} are not >= 2 distinct ascending faces",
        )
        self.hand_size = header["handSize"]
        self.policies = [entry["policy"] for entry in header["seats"]]
        self.n = len(self.policies)
        self._require(2 <= self.n <= 8, f"{self.n} seats: the arena seats 2 to 8")
        self._require(
            [entry["slot"] for entry in header["seats"]] == list(range(self.n)),
            "seat entries are not slots 0..n-1 in order",
        )
        self.order = list(header["tableOrder"])
        self._require(
            sorted(self.order) == list(range(self.n)),
            f"rule 1: table order {self.order} is not a permutation of the slots",
        )
        self.deals = header["deals"]
        self.max_bids = header["maxBidsPerDeal"]
        self._require(self.deals >= 1 and self.max_bids >= 1, "deals and the cap must be >= 1")
        self.talk = header["talk"]
        self.max_quantity = self.n * self.hand_size
        self.unseen = (self.n - 1) * self.hand_size
        # The mode's rule data (absent from logs of modes without wilds: strict, none wild).
        self.wild = header.get("wild")
        self.raise_rule = header.get("raiseRule", "strict")
        self._require(
            self.raise_rule in ("strict", "wild-ones"), f"unknown raise rule {self.raise_rule!r}"
        )
        self._require(
            self.wild is None or self.wild in self.symbols, f"wild {self.wild} is not a face"
        )
        self.check_baselines = check_baselines
        self.deal: _Deal | None = None
        self.next_deal = 0
        self.result: dict[str, Any] | None = None
        self.summary = Replay(
            seats=self.n,
            points=[0] * self.n,
            asked=[0] * self.n,
            rejected=[0] * self.n,
            fallbacks=[0] * self.n,
            faults=[0] * self.n,
        )

    # --- plumbing ------------------------------------------------------------

    def _require(self, condition: bool, message: str) -> None:
        if not condition:
            raise RefereeError(f"line {self.line}: {message}")

    def _actor(self) -> int:
        return self.order[self.deal.position]

    def _in_turn(self, record: dict[str, Any]) -> None:
        """Rules 2 and 5: the record is about the deal in progress and the seat on turn."""
        self._require(self.deal is not None, f"{record['type']} outside a deal")
        self._require(record["deal"] == self.deal.number, f"deal {record['deal']} is not open")
        self._require(
            record["slot"] == self._actor(),
            f"slot {record['slot']} acted but it is slot {self._actor()}'s turn "
            f"(position {self.deal.position} of table order {self.order})",
        )

    def step(self, line: int, record: dict[str, Any]) -> None:
        self.line = line
        self._require(
            self.result is None or record.get("type") == "audit",
            "a line after the result other than an audit flag",
        )
        handler = getattr(self, "_on_" + str(record.get("type")), None)
        self._require(handler is not None, f"unknown record type {record.get('type')!r}")
        handler(record)

    # --- records ---------------------------------------------------------------

    def _on_deal(self, record: dict[str, Any]) -> None:
        """Rule 1: a fresh deal, opened by table position d mod seats."""
        self._require(self.deal is None, "a deal starts before the previous one resolved (rule 7)")
        number = record["deal"]
        self._require(number == self.next_deal, f"deal {number} where {self.next_deal} is due")
        self._require(number < self.deals, f"deal {number} beyond the {self.deals} asked for")
        expected = self.order[number % self.n]
        self._require(
            record["opener"] == expected,
            f"rule 1: deal {number} opens at slot {record['opener']}, table position "
            f"{number % self.n} is slot {expected}",
        )
        hands = record["hands"]
        self._require(len(hands) == self.n, f"{len(hands)} hands for {self.n} seats")
        for slot, hand in enumerate(hands):
            self._require(
                len(hand) == self.hand_size and all(s in self.symbols for s in hand),
                f"slot {slot}'s hand {hand} is not {self.hand_size} of {self.symbols}",
            )
        self.deal = _Deal(number, number % self.n, [list(h) for h in hands])

    def _on_rejected(self, record: dict[str, Any]) -> None:
        """Rule 11: at most one retry, and every rejection carries its reason."""
        self._in_turn(record)
        self._require(not self.deal.faulted, "a rejection after a fault: the seat is not re-asked")
        self._require(self.deal.rejections < 2, "rule 11: a third ask for one decision")
        self._require(
            isinstance(record["reason"], str) and record["reason"].strip() != "",
            "rule 11: a rejection without a reason",
        )
        self.deal.rejections += 1
        self.summary.rejected[record["slot"]] += 1

    def _on_fault(self, record: dict[str, Any]) -> None:
        self._in_turn(record)
        self._require(not self.deal.faulted, "two faults for one decision")
        self.deal.faulted = True
        self.summary.faults[record["slot"]] += 1

    def _on_usage(self, record: dict[str, Any]) -> None:
        self._in_turn(record)
        for key in ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens"):
            self._require(isinstance(record[key], int) and record[key] >= 0, f"bad {key}")
        self.deal.usage = True

    def _on_bid(self, record: dict[str, Any]) -> None:
        self._in_turn(record)
        deal, quantity, face = self.deal, record["quantity"], record["face"]
        self._require(
            len(deal.bids) < self.max_bids,
            f"rule 8: a bid after the cap of {self.max_bids} bids; the challenge is forced",
        )
        self._require(
            1 <= quantity <= self.max_quantity,
            f"rule 3: quantity {quantity} outside 1..{self.max_quantity}",
        )
        self._require(face in self.symbols, f"rule 3: face {face} is not one of {self.symbols}")
        if deal.standing is not None:
            _, q0, f0 = deal.standing
            self._require(
                raises(quantity, face, q0, f0, self.raise_rule, self.wild),
                f"rule 4: {quantity}x{face} does not strictly raise {q0}x{f0}"
                if self.raise_rule == "strict"
                else f"rule 4 (wild-ones): {quantity}x{face} does not raise {q0}x{f0}",
            )
        self._check_asked(record, ("bid", quantity, face))
        deal.bids.append((record["slot"], quantity, face))
        deal.position = (deal.position + 1) % self.n  # rule 5
        self.summary.bids += 1

    def _on_challenge(self, record: dict[str, Any]) -> None:
        self._in_turn(record)
        deal = self.deal
        self._require(deal.standing is not None, "rule 3: a challenge with no standing bid")
        bidder, q0, f0 = deal.standing
        self._require(
            (record["bidder"], record["quantity"], record["face"]) == (bidder, q0, f0),
            f"rule 6: the challenge names {record['quantity']}x{record['face']} by slot "
            f"{record['bidder']}, the standing bid is {q0}x{f0} by slot {bidder}",
        )
        capped = len(deal.bids) == self.max_bids
        self._require(
            record["forced"] == capped,
            f"rule 8: forced is {record['forced']} with {len(deal.bids)} bids "
            f"and a cap of {self.max_bids}",
        )
        if capped:
            self._require(
                deal.rejections == 0 and not deal.faulted and not deal.usage,
                "rule 8: the seat was asked although the cap forces its challenge",
            )
            self._require(not record["fallback"], "rule 8: a forced challenge marked fallback")
            self._check_talk(record)
            self.summary.forced += 1
        else:
            self._check_asked(record, ("challenge",))
        actual = sum(counted(hand, f0, self.wild) for hand in deal.hands)
        self._require(
            record["actual"] == actual,
            f"rule 6: actual {record['actual']}, the hands hold {actual} of face {f0}",
        )
        challenger = record["slot"]
        winner, loser = (bidder, challenger) if actual >= q0 else (challenger, bidder)
        self._require(
            (record["winner"], record["loser"]) == (winner, loser),
            f"rule 6: {q0}x{f0} against an actual {actual}: winner {winner}, loser {loser}, "
            f"logged {record['winner']} and {record['loser']}",
        )
        self.summary.points[winner] += 1
        self.summary.points[loser] -= 1
        self.summary.challenges += 1
        self.summary.decisions_per_deal.append(len(deal.bids) + 1)
        self._require(
            len(deal.bids) + 1 <= self.max_bids + 1,
            "rule 8: more than maxBidsPerDeal + 1 decisions in one deal",
        )
        self.deal = None  # rule 7
        self.next_deal += 1

    def _on_result(self, record: dict[str, Any]) -> None:
        """Rule 9 and the scoring formulas."""
        # A person may leave mid-deal: that deal moved no point and is not counted.
        quit_ = record["status"] == "quit"
        self._require(quit_ or self.deal is None, "the episode settled in the middle of a deal")
        played = record["dealsPlayed"]
        self._require(played == self.next_deal, f"dealsPlayed {played}, {self.next_deal} resolved")
        if record["status"] == "complete":
            self._require(played == self.deals, f"complete after {played} of {self.deals} deals")
        elif quit_:
            self._require(played < self.deals, "quit although every deal was played")
        else:
            self._require(record["status"] == "deadline", f"status {record['status']!r}")
            self._require(played < self.deals, "rule 9: deadline although every deal was played")
        points = self.summary.points
        self._require(list(record["points"]) == points, f"points {record['points']} != {points}")
        self._require(sum(points) == 0, f"points {points} do not sum to 0")
        expected = [0.5 if played == 0 else 0.5 + p / (2 * played) for p in points]
        self._require(
            len(record["score"]) == self.n
            and all(
                math.isclose(a, b, abs_tol=1e-12)
                for a, b in zip(record["score"], expected, strict=False)
            ),
            f"score {record['score']} != 0.5 + points / (2 * {played}) = {expected}",
        )
        self._require(
            math.isclose(sum(record["score"]) / self.n, 0.5, abs_tol=1e-12),
            "the mean score is not 0.5",
        )
        self.summary.deals_played = played
        self.summary.status = record["status"]
        self.result = record

    def _on_audit(self, record: dict[str, Any]) -> None:
        """Soft-play audit flags trail the result; they never reach a seat or a score."""
        self._require(self.result is not None, "an audit flag before the result")
        self._require(
            isinstance(record["reporter"], str) and isinstance(record["flag"], dict),
            "an audit flag needs a reporter name and a flag object",
        )

    # --- rule 11 and the baselines ----------------------------------------------

    def _check_asked(self, record: dict[str, Any], move: tuple) -> None:
        """A decision the seat was asked for: its fallback mark and, where known, its policy."""
        deal, slot = self.deal, record["slot"]
        exhausted = deal.rejections == 2 or deal.faulted
        self._require(
            record["fallback"] == exhausted,
            f"rule 11: fallback is {record['fallback']} after {deal.rejections} rejection(s)"
            f"{' and a fault' if deal.faulted else ''}",
        )
        self._check_talk(record)
        if record["fallback"]:
            self._require(
                record["say"] is None and record["notes"] is None,
                "rule 11: the bayes fallback never talks or writes notes",
            )
            self._check_baseline("bayes", slot, move)
            self.summary.fallbacks[slot] += 1
        elif self.check_baselines and self.policies[slot].partition(":")[0] in BASELINES:
            self._check_baseline(self.policies[slot].partition(":")[0], slot, move)
            self._require(
                record["say"] is None and record["notes"] is None,
                "the scripted baselines never talk and never write notes",
            )
        self.summary.asked[slot] += 1
        deal.rejections, deal.faulted, deal.usage = 0, False, False

    def _check_talk(self, record: dict[str, Any]) -> None:
        """Rule 10: nothing is published with talk off, or when nothing was said."""
        if not self.talk or not record["say"]:
            self._require(record["published"] is None, "talk published although none was due")

    def _check_baseline(self, name: str, slot: int, move: tuple) -> None:
        allowed = baseline_moves(
            BASELINES[name],
            self.deal.hands[slot],
            self.deal.standing,
            self.symbols,
            self.max_quantity,
            self.unseen,
            self.wild,
            self.raise_rule,
        )
        self._require(
            move in allowed,
            f"{name} at slot {slot} with hand {self.deal.hands[slot]} facing "
            f"{self.deal.standing}: played {move}, its line allows {sorted(allowed)}",
        )
        self.summary.baseline_moves_checked += 1

    # --- the end -----------------------------------------------------------------

    def finish(self, lines: int) -> None:
        self.line = lines
        self._require(self.result is not None, "the log has no result line")

    def check_results(self, results: dict[str, Any]) -> None:
        """The ``--json`` results agree with the log, seat by seat."""
        self.line = 0
        r, s = self.result, self.summary
        for key in ("status", "dealsPlayed", "points", "score"):
            self._require(results[key] == r[key], f"results {key} {results[key]} != log {r[key]}")
        self._require(len(results["seats"]) == self.n, "results list a different number of seats")
        for slot, seat in enumerate(results["seats"]):
            expected = {
                "slot": slot,
                "policy": self.policies[slot],
                "points": s.points[slot],
                "decisions": s.asked[slot],
                "rejected": s.rejected[slot],
                "fallbacks": s.fallbacks[slot],
                "faults": s.faults[slot],
            }
            found = {key: seat[key] for key in expected}
            self._require(found == expected, f"results seat {slot}: {found} != {expected}")


def counted(hand: list[int], face: int, wild: int | None) -> int:
    """Symbols of ``hand`` a bid on ``face`` counts: the face, and the wild (once on its own)."""
    return sum(1 for symbol in hand if symbol in (face, wild))


def raises(quantity: int, face: int, q0: int, f0: int, rule: str, wild: int | None) -> bool:
    """Rule 4. Strict: more, or as many of a higher face. Wild-ones (seed 002): the same
    between other faces; more wilds after wilds; to wilds at least half, rounded up; away
    from wilds at least double plus one."""
    if rule == "wild-ones" and wild in (face, f0):
        if face == f0:
            return quantity > q0
        if face == wild:
            return 2 * quantity >= q0
        return quantity >= 2 * q0 + 1
    return quantity > q0 or (quantity == q0 and face > f0)


def baseline_moves(
    baseline: Baseline,
    hand: list[int],
    standing: tuple[int, int, int] | None,
    symbols: list[int],
    max_quantity: int,
    unseen: int,
    wild: int | None = None,
    rule: str = "strict",
) -> set[tuple]:
    """Every move rules.md allows the baseline here (several only when the RNG breaks a tie).

    With wilds a face's count includes them and its p is 2/len(symbols) (the wild's own
    stays 1/len(symbols)); the three raises per face start at its lowest legal quantity.
    """
    counts = {f: counted(hand, f, wild) for f in symbols}

    def p(face: int) -> Fraction:
        return Fraction(1 if wild is None or face == wild else 2, len(symbols))

    def likely(quantity: int, face: int) -> float:
        return float(chance(unseen, quantity - counts[face], p(face)))

    if standing is None:
        most = max(counts[f] for f in symbols)
        # "its own count plus the table's expected share": unseen * p, rounded down.
        return {
            ("bid", min(max(most + math.floor(unseen * p(f)), 1), max_quantity), f)
            for f in symbols
            if counts[f] == most
        }
    _, q0, f0 = standing
    if likely(q0, f0) < baseline.chal:
        return {("challenge",)}
    raises_ = []
    for f in symbols:
        low = next(
            (q for q in range(1, max_quantity + 1) if raises(q, f, q0, f0, rule, wild)), None
        )
        if low is not None:
            raises_ += [(q, f) for q in range(low, min(low + RAISE_DEPTH, max_quantity) + 1)]
    safe = [(q, f) for q, f in raises_ if likely(q, f) >= baseline.safe]
    if not safe:
        return {("challenge",)}
    best = max(likely(q, f) for q, f in safe)
    tied = [(q, f) for q, f in safe if likely(q, f) == best]
    low = min(q for q, _ in tied)
    tied = [(q, f) for q, f in tied if q == low]
    most = max(counts[f] for _, f in tied)
    tied = [(q, f) for q, f in tied if counts[f] == most]
    if baseline.pad:
        tied = [(q + 1 if q + 1 <= max_quantity else q, f) for q, f in tied]
    return {("bid", q, f) for q, f in tied}
