"""A seat's decision judged against the exact odds of its own hand, as a chess engine grades a move.

Every grade is a function of one number the decider could work out itself: the exact
chance, from its own hand alone, that a bid is true (:meth:`arena.modes.Mode.bid_probability`,
whose ``need`` is the bid's quantity less the decider's own count of its face). Nothing
the decider could not see goes in, so a grade says where a policy misread its own dice,
never that it was unlucky.

**Facing a bid** (a decision with another seat's bid standing), with ``p`` its chance:

- challenging is worth ``1 - 2p`` points in expectation (won with chance ``1 - p``, lost
  with chance ``p``, one point either way, rule 6);
- raising is valued at 0, the soft-play audit's convention (``docs/audit.md``): it passes
  the risk on, and what it is worth depends on seats not yet asked.

The decision's **loss** is how far it falls short of the better of the two: a challenge
loses ``max(0, 2p - 1)``, a raise ``max(0, 1 - 2p)`` (the expected points forgone, the
audit's ``expLoss`` term). A loss of :data:`MISTAKE` or more is a ``mistake``, of
:data:`INACCURACY` or more an ``inaccuracy``.

A **blunder** is a decision the decider's own hand settles: challenging a bid its own hand
makes certain (``need <= 0``), raising past a bid its own hand proves false (``need >
unseen``), or bidding what its own hand proves false. A bid's own chance is otherwise not
graded: a bluff is a strategy, and the bluff rate and calibration say how a seat uses it.

A forced challenge (rule 8) is the table's move, not the seat's, and is not graded. A
fallback move (rule 11) is graded as the seat's own turn, as the audit counts it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import attrs

from arena.modes import from_header
from arena.probability import count, tail_at, tail_table

INACCURACY = 0.2
"""Expected points forgone (of the one point a deal moves) from which a decision is an
inaccuracy: a raise facing a bid under 40% likely, a challenge of one over 60%."""
MISTAKE = 0.5
"""... a mistake: a raise facing a bid under 25% likely, a challenge of one over 75%."""

GRADES = ("inaccuracy", "mistake", "blunder")
"""The grades a decision can earn, mildest first; an ungraded decision is sound."""


def challenge_loss(p_true: float) -> float:
    """Expected points a challenge of a bid ``p_true`` likely gives up against raising."""
    return max(0.0, 2.0 * p_true - 1.0)


def raise_loss(p_true: float) -> float:
    """Expected points a raise over a bid ``p_true`` likely gives up against challenging."""
    return max(0.0, 1.0 - 2.0 * p_true)


def by_loss(loss: float) -> str | None:
    """The grade of an expected loss: ``mistake``, ``inaccuracy``, or ``None`` (sound)."""
    if loss >= MISTAKE:
        return "mistake"
    if loss >= INACCURACY:
        return "inaccuracy"
    return None


def grade_challenge(p_true: float, need: int) -> str | None:
    """A challenge of a bid ``p_true`` likely from the challenger's hand, which still needs
    ``need`` more of its face among the unseen symbols."""
    if need <= 0:
        return "blunder"
    return by_loss(challenge_loss(p_true))


def grade_bid(p_standing: float | None, standing_need: int | None, own_need: int, unseen: int):
    """A bid: a raise over a standing bid ``p_standing`` likely (``None`` for an opening),
    whose own face still needs ``own_need`` of the ``unseen`` symbols; the worse of the two
    judgements (raising instead of challenging, and the bid itself)."""
    if own_need > unseen or (standing_need is not None and standing_need > unseen):
        return "blunder"
    if p_standing is None:
        return None
    return by_loss(raise_loss(p_standing))


@attrs.frozen
class Judged:
    """One decision of a seat (a bid, or a challenge it chose), with the odds of its own hand.

    ``ordinal`` counts the log's ``bid`` and ``challenge`` lines from 0, forced challenges
    included, so a reader walking the same lines finds the decision without an index."""

    ordinal: int
    deal: int
    slot: int
    kind: str
    """``bid`` or ``challenge``."""
    fallback: bool
    bidder: int | None
    """The slot whose bid stood when the seat decided; ``None`` for an opening bid."""
    standing_p: float | None
    """The standing bid's exact chance from the decider's own hand."""
    standing_need: int | None
    """How many of its face the standing bid still needs among the unseen symbols."""
    bid_p: float | None
    """A bid's own exact chance from the bidder's hand (``None`` for a challenge)."""
    bid_need: int | None
    held: bool | None
    """A bid on a face the bidder's hand counts at least once (by the mode's rule)."""
    overreach: float | None
    """A bid's quantity less what its own hand supports: its own count of the face plus the
    unseen symbols' expected share of it."""
    true: bool | None
    """A bid true when made (rule 6's count over every hand); a challenge: ``None``."""
    won: bool | None
    """A challenge won by the challenger; a bid: ``None``."""
    unseen: int
    grade: str | None

    @property
    def loss(self) -> float:
        """Expected points forgone facing the standing bid (0 for an opening bid)."""
        if self.standing_p is None:
            return 0.0
        if self.kind == "challenge":
            return challenge_loss(self.standing_p)
        return raise_loss(self.standing_p)


def judge(records: Iterable[Mapping[str, Any]]) -> Iterator[Judged]:
    """Every decision a seat took in an episode's records (``bid`` lines and unforced
    ``challenge`` lines), judged against the exact odds of its own hand.

    ``records`` start with the log's header; audit lines and every other kind are passed
    over. One pass, and each face's exact tail is worked out once per log.
    """
    records = iter(records)
    header = next(records)
    mode = from_header(header)
    wild = mode.wild
    unseen = (len(header["seats"]) - 1) * mode.hand_size
    tails = {face: tail_table(unseen, mode.face_p(face)) for face in mode.symbols}
    shares = {face: float(mode.face_p(face)) * unseen for face in mode.symbols}
    hands: list = []
    table: list[int] = []
    standing: Mapping[str, Any] | None = None
    ordinal = -1
    for record in records:
        kind = record["type"]
        if kind == "deal":
            hands, standing = record["hands"], None
            table = [symbol for hand in hands for symbol in hand]
            continue
        if kind not in ("bid", "challenge"):
            continue
        ordinal += 1
        slot = record["slot"]
        hand = hands[slot]
        standing_p = standing_need = None
        if standing is not None:
            standing_need = standing["quantity"] - count(hand, standing["face"], wild)
            standing_p = tail_at(tails[standing["face"]], standing_need)
        bidder = None if standing is None else standing["slot"]
        if kind == "challenge":
            standing = None
            if record["forced"]:
                continue
            yield Judged(
                ordinal, record["deal"], slot, kind, record["fallback"], bidder,
                standing_p, standing_need, None, None, None, None, None,
                record["winner"] == slot, unseen, grade_challenge(standing_p, standing_need),
            )  # fmt: skip
            continue
        quantity, face = record["quantity"], record["face"]
        own = count(hand, face, wild)
        need = quantity - own
        yield Judged(
            ordinal, record["deal"], slot, kind, record["fallback"], bidder,
            standing_p, standing_need, tail_at(tails[face], need), need, own > 0,
            quantity - own - shares[face], count(table, face, wild) >= quantity, None, unseen,
            grade_bid(standing_p, standing_need, need, unseen),
        )  # fmt: skip
        standing = record
