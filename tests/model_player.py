"""The scripted model behind every loopback API: a legal move read from the prompt's text.

A model seat sends the arena's prompt (the table record, then the turn); whatever the
wire, the player reads only that text, as a model would, and answers with the ``act``
tool's input: the lowest legal bid until ``patience(deal)`` bids stand, then a
challenge. ``messages_server`` and ``chat_server`` wrap the same move in their own
reply shapes. It also makes up the thought a reasoning model would show, unique to the
request so a test can look for it in every later request.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from typing import Any

TURN_HEADING = "\n# Your turn"
"""Where the prompt's turn begins: everything before it is the table record."""
THOUGHT_MARKER = "[thought "
"""How every thought the server makes up begins."""

_DEAL = re.compile(r"# Your turn \(deal (\d+),")
_LOWEST = re.compile(r"lowest bid quantity (\d+), face (\d+)")
_BIDS_SO_FAR = re.compile(r"\(bid (\d+) of at most \d+\)")
_RECORD_BID = re.compile(r"^(s\d)(?: \(you\))? bids quantity", re.MULTILINE)

Patience = Callable[[int], int]


def legal_move(
    turn: str, record: str, patience: Patience = lambda deal: 3, talk: bool = True
) -> dict[str, Any]:
    """The ``act`` input a legal player sends, from the turn's text and the record's.

    In deal d it challenges once ``patience(d)`` bids stand (when allowed), else bids
    the lowest legal bid; it talks on its bids and keeps a notes line per seat counting
    the bids it has seen, the way a tracking policy would.
    """
    standing = _BIDS_SO_FAR.search(turn)
    lowest = _LOWEST.search(turn)
    counts: dict[str, int] = {}
    for seat in _RECORD_BID.findall(record):
        counts[seat] = counts.get(seat, 0) + 1
    notes = "; ".join(f"{seat}: {n} bids seen" for seat, n in sorted(counts.items()))
    move: dict[str, Any] = {"notes": notes or "nothing seen yet"}
    deal = int(_DEAL.search(turn)[1])
    if lowest is None or (standing and int(standing[1]) >= patience(deal)):
        return {"action": "challenge", **move}
    quantity, face = int(lowest[1]), int(lowest[2])
    move |= {"action": "bid", "quantity": quantity, "face": face}
    if talk:
        move["say"] = f"I have plenty of {face}s."
    return move


def split_prompt(text: str) -> tuple[str, str]:
    """A prompt's text as (turn, record): the turn from its heading on, the record before."""
    at = text.index(TURN_HEADING)
    return text[at:], text[:at]


def made_up_thought(body: dict[str, Any]) -> str:
    """The server's thought for a request whose script gave none: marked with a digest of
    the request, so it is unique to it and the same whatever order requests arrive in."""
    digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]
    return f"{THOUGHT_MARKER}{digest}] Weighing the standing bid."
