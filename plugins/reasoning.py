"""A seat's reasoning beside its bluffs: of its false bids, how many came with thinking that
named them false. Three counts per slot, never a judgement of the seat.

A Claude seat's private thinking is on the line of the decision it led to (the
``thinking`` key of a ``bid``: the API's blocks in order, ``{"type": "thinking",
"text": ...}`` or ``{"type": "redacted"}``). Three audit reporters join it to
``bluffRate``'s false bids: the soft-play tally keeps each false bid's thinking
as it counts it (one pass, one definition of a false bid), and they read it off,
each a list by slot like ``bluffRate``:

- ``bluffs``: the seat's false bids (``bluffRate``'s numerator);
- ``bluffsWithReasoning``: of those, the ones whose line carries any thinking
  (a redacted block counts: there was reasoning, unreadable);
- ``bluffsNamedFalse``: of those, the ones whose readable thinking uses one of
  :data:`NAMED_FALSE`'s words, case-insensitive, as a word.

"Named false" is deliberately crude and transparent: a word list anyone can
read, no model of what the text means. A seat that thinks "not a bluff" is
counted, and one that reasons its bid is false in other words is not; the
figure is a pointer into the replay, where the thinking sits beside the bid.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from arena import hookimpl
from arena_plugins.softplay import tally

NAMED_FALSE = (
    "bluff",
    "bluffs",
    "bluffing",
    "lie",
    "lies",
    "lying",
    "false",
    "untrue",
    "unlikely",
    "improbable",
    "overbid",
    "overbidding",
)
"""The words that name a bid false when its own thinking uses them."""
_NAMED_FALSE = re.compile(r"\b(?:" + "|".join(NAMED_FALSE) + r")\b", re.IGNORECASE)


def names_false(thinking: Sequence[dict[str, Any]]) -> bool:
    """Whether any readable block of a decision's thinking uses a word of :data:`NAMED_FALSE`."""
    return any(_NAMED_FALSE.search(block.get("text", "")) for block in thinking)


def _bluff_thinking(records: Sequence[dict[str, Any]]) -> list[list]:
    """Per slot, the thinking of each false bid that carried some (see the soft-play tally)."""
    soft = tally(records)
    return soft.bluff_thinking or [[] for _ in soft.bids]


def bluffs(records):
    return tally(records).false_bids


def bluffs_with_reasoning(records):
    return [len(reasoned) for reasoned in _bluff_thinking(records)]


def bluffs_named_false(records):
    return [sum(map(names_false, reasoned)) for reasoned in _bluff_thinking(records)]


@hookimpl
def register_audit_reporters(register):
    register("bluffs", bluffs)
    register("bluffsWithReasoning", bluffs_with_reasoning)
    register("bluffsNamedFalse", bluffs_named_false)
