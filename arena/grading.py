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

from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import cache
from typing import Any

import attrs
import numpy as np

from arena.modes import Mode, from_header
from arena.probability import count, tail_table

INACCURACY = 0.2
"""Expected points forgone (of the one point a deal moves) from which a decision is an
inaccuracy: a raise facing a bid under 40% likely, a challenge of one over 60%."""
MISTAKE = 0.5
"""... a mistake: a raise facing a bid under 25% likely, a challenge of one over 75%."""

GRADES = ("inaccuracy", "mistake", "blunder")
"""The grades a decision can earn, mildest first; an ungraded decision is sound."""


def losses(challenge: np.ndarray, standing_p: np.ndarray) -> np.ndarray:
    """Expected points each decision gives up facing its standing bid: a challenge
    max(0, 2p - 1) against raising, a raise max(0, 1 - 2p) against challenging; 0 for an
    opening bid (``standing_p`` NaN)."""
    signed = np.where(challenge, 2.0 * standing_p - 1.0, 1.0 - 2.0 * standing_p)
    return np.where(np.isnan(standing_p), 0.0, np.maximum(0.0, signed))


def grades(
    challenge: np.ndarray,
    standing_p: np.ndarray,
    standing_need: np.ndarray,
    bid_need: np.ndarray,
    unseen: int,
) -> np.ndarray:
    """Each decision's grade as an index into ``(None, *GRADES)`` (0: sound).

    ``standing_p`` is NaN for an opening bid (whose ``standing_need`` is then ignored) and
    ``bid_need`` is ignored for a challenge."""
    loss = losses(challenge, standing_p)
    facing = ~np.isnan(standing_p)
    settled = np.where(
        challenge,
        facing & (standing_need <= 0),  # challenged a bid its own hand makes certain
        (bid_need > unseen) | (facing & (standing_need > unseen)),  # bid or raised past
    )  # a bid its own hand proves false
    by_loss = np.where(loss >= MISTAKE, 2, np.where(loss >= INACCURACY, 1, 0))
    return np.where(settled, 3, by_loss)


NONE = -1
"""``bidder`` of an opening bid."""


@attrs.frozen(eq=False)
class Decisions:
    """Every decision of an episode's seats (its bids and the challenges they chose), one
    column each, judged against the exact odds of the decider's own hand.

    Columns, because the audit reads every decision of every episode: numpy works out the
    odds and grades of a 10,000-deal episode in a few milliseconds, where an object per
    decision took five times as long as the table took to play it."""

    ordinal: np.ndarray
    """Which ``bid`` or ``challenge`` line of the log, from 0, forced challenges included,
    so a reader walking the same lines finds the decision without an index."""
    deal: np.ndarray
    slot: np.ndarray
    challenge: np.ndarray
    """True for a challenge the seat chose, False for a bid."""
    fallback: np.ndarray
    bidder: np.ndarray
    """The slot whose bid stood when the seat decided; :data:`NONE` for an opening bid."""
    standing_need: np.ndarray
    """How many of the standing bid's face it still needs among the unseen symbols, after
    the decider's own count (0 for an opening bid)."""
    standing_p: np.ndarray
    """The standing bid's exact chance from the decider's own hand; NaN for an opening."""
    bid_need: np.ndarray
    """A bid's quantity less the bidder's own count of its face (0 for a challenge)."""
    bid_p: np.ndarray
    """A bid's exact chance from the bidder's hand; NaN for a challenge."""
    held: np.ndarray
    """A bid on a face the bidder's hand counts at least once (by the mode's rule)."""
    overreach: np.ndarray
    """A bid's quantity less what its own hand supports: its own count of the face plus the
    unseen symbols' expected share of it (NaN for a challenge)."""
    true: np.ndarray
    """A bid true when made (rule 6's count over every hand); False for a challenge."""
    won: np.ndarray
    """A challenge won by the challenger; False for a bid."""
    loss: np.ndarray
    """Expected points given up facing the standing bid (:func:`losses`)."""
    grade: np.ndarray
    """Index into ``(None, *GRADES)``: 0 sound, 1 inaccuracy, 2 mistake, 3 blunder."""
    unseen: int

    def graded(self) -> Iterator[tuple[int, str, float | None, float]]:
        """(ordinal, grade, the chance behind it, expected points forgone) of every graded
        decision, in log order: what a replay marks. The chance is the standing bid's from
        the decider's hand, or for an opening bid its own."""
        for i in np.flatnonzero(self.grade):
            behind = self.bid_p[i] if np.isnan(self.standing_p[i]) else self.standing_p[i]
            yield (
                int(self.ordinal[i]),
                GRADES[self.grade[i] - 1],
                float(behind),
                float(self.loss[i]),
            )


CHUNK = 8192
"""Decisions judged at once: enough that numpy's fixed cost per call is spread thin, few
enough that a million-deal episode's judgement stays a few megabytes."""


def judge(records: Iterable[Mapping[str, Any]], chunk: int = CHUNK) -> Iterator[Decisions]:
    """Every decision a seat took in an episode's records (``bid`` lines and unforced
    ``challenge`` lines), judged against the exact odds of its own hand, ``chunk`` decisions
    at a time, in log order (an episode with none yields nothing).

    ``records`` start with the log's header; audit lines and every other kind are passed
    over. The walk only reads each decision's numbers; the odds, losses and grades are
    worked out for a chunk at once.

    The walk is the read-out's cost per decision, so it keeps what it reads in locals (the
    standing bid's slot, quantity and face rather than its record), lays the rows end to
    end in one list, and counts a face in a hand with the sequence's own ``count`` where
    the mode has no wild (what :func:`arena.probability.count` does then, without the call).
    """
    records = iter(records)
    header = next(records)
    mode = from_header(header)
    wild, opening_face = mode.wild, mode.symbols[0]
    unseen = (len(header["seats"]) - 1) * mode.hand_size
    full = chunk * ROW_FIELDS
    rows: list = []
    """:data:`ROW_FIELDS` numbers per decision, end to end."""
    hands: Sequence = []
    table: list[int] = []
    stands = False
    """Whether a bid stands, and then its slot, quantity and face."""
    bidder = standing_quantity = standing_face = 0
    ordinal = -1
    for record in records:
        kind = record["type"]
        if kind == "bid" or kind == "challenge":
            ordinal += 1
            if len(rows) >= full:
                yield from_rows(_int64(rows), mode, unseen)
                rows = []
            slot = record["slot"]
            hand = hands[slot]
            if stands:
                held = (
                    hand.count(standing_face) if wild is None else count(hand, standing_face, wild)
                )
                facing = (bidder, standing_face, standing_quantity - held)
            else:
                facing = (NONE, opening_face, 0)
            if kind == "challenge":
                stands = False
                if not record["forced"]:
                    rows.extend((
                        ordinal, record["deal"], slot, True, record["fallback"], *facing,
                        facing[1], 0, 0, 0, record["winner"] == slot,
                    ))  # fmt: skip
                continue
            face, quantity = record["face"], record["quantity"]
            own = hand.count(face) if wild is None else count(hand, face, wild)
            rows.extend((
                ordinal, record["deal"], slot, False, record["fallback"], *facing,
                face, quantity - own, own,
                (table.count(face) if wild is None else count(table, face, wild)) - quantity,
                False,
            ))  # fmt: skip
            stands, bidder, standing_quantity, standing_face = True, slot, quantity, face
        elif kind == "deal":
            stands, hands = False, record["hands"]
            table = [symbol for hand in hands for symbol in hand]
    if rows:
        yield from_rows(_int64(rows), mode, unseen)


def _int64(rows: list) -> np.ndarray:
    """The rows laid end to end as int64, converted as ``np.asarray`` would convert them
    (in half its time: numpy need not first find the list's shape)."""
    return np.fromiter(rows, np.int64, len(rows))


ROW_FIELDS = 13
"""A decision's row: ordinal, deal, slot, challenge, fallback, bidder, standing face,
standing need, bid face, bid need, own count of the bid's face, its table count less the
bid's quantity, won. The compiled engine's C table keeps the same rows (table.h)."""


@cache
def _odds(mode: Mode, unseen: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A table's exact tails by face index and need, each face's expected share of the
    unseen symbols, and each symbol's face index: the same for every chunk of every
    episode at that table (read-only)."""
    faces = list(mode.symbols)
    tails = np.array([tail_table(unseen, mode.face_p(f)) for f in faces])
    shares = np.array([float(mode.face_p(f)) * unseen for f in faces])
    at = np.zeros(max(faces) + 1, dtype=np.int64)
    at[faces] = np.arange(len(faces))
    for array in (tails, shares, at):
        array.flags.writeable = False
    return tails, shares, at


def from_rows(rows: Sequence, mode: Mode, unseen: int) -> Decisions:
    """The columns of decisions' rows (:data:`ROW_FIELDS` numbers each, as rows or laid end
    to end), with each one's odds and grade."""
    columns = np.asarray(rows, dtype=np.int64).reshape(-1, ROW_FIELDS).T
    (ordinal, deal, slot, challenge, fallback, bidder, standing_face, standing_need, face,
     bid_need, own, surplus, won) = columns  # fmt: skip
    challenge = challenge.astype(bool)
    tails, shares, at = _odds(mode, unseen)

    def chance(faces_of: np.ndarray, need: np.ndarray) -> np.ndarray:
        return tails[at[faces_of], np.clip(need, 0, unseen + 1)]

    standing_p = np.where(bidder == NONE, np.nan, chance(standing_face, standing_need))
    bid_p = np.where(challenge, np.nan, chance(face, bid_need))
    return Decisions(
        ordinal=ordinal,
        deal=deal,
        slot=slot,
        challenge=challenge,
        fallback=fallback.astype(bool),
        bidder=bidder,
        standing_need=standing_need,
        standing_p=standing_p,
        bid_need=bid_need,
        bid_p=bid_p,
        held=~challenge & (own > 0),
        overreach=np.where(challenge, np.nan, bid_need - shares[at[face]]),
        true=~challenge & (surplus >= 0),
        won=won.astype(bool),
        loss=losses(challenge, standing_p),
        grade=grades(challenge, standing_p, standing_need, bid_need, unseen),
        unseen=unseen,
    )
