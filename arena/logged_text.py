"""How much of a seat's text the log keeps: every text a decision line carries is cut to a cap
its readers accept, and the cut says so.

A model's reply is bounded in bytes before it is read (the model seats'
``max_reply_bytes``), but a seat may be allowed a large one, and a third party's
seat answers with whatever it likes: a 70 MiB reasoning was logged whole, and
``check``, ``show``, ``replay`` and ``audit`` then refused the log (a line past
the reader's 64 MiB). Here each text is cut to its cap, with the cap and the
original length written where the text ends (:func:`cut`), so a reader sees
that it was cut and by how much. The caps keep a decision line far inside the
reader's limit even at JSON's worst escaping (12 bytes a character).
"""

from __future__ import annotations

from arena.events import Thought

SAY_CAP = 4000
"""Characters of table talk kept: as many as a seat's notes."""
THINKING_CAP = 1 << 20
"""Characters of one decision's reasoning kept, over all its blocks: a long reasoning is
some hundred thousand."""
REASON_CAP = 1000
"""Characters of a fault's reason kept (a third party's seat writes its own)."""


def cut(text: str | None, cap: int) -> str | None:
    """``text``, or its first ``cap`` characters followed by a note of the cap and of the
    length it had."""
    if text is None or len(text) <= cap:
        return text
    return text[:cap] + _note(cap, len(text))


def cut_thoughts(thoughts: tuple[Thought, ...] | None) -> tuple[Thought, ...] | None:
    """A decision's reasoning within :data:`THINKING_CAP` characters over all its blocks: the
    block that passes the cap is cut with the note, and the blocks after it are left out."""
    if thoughts is None:
        return None
    total = sum(len(thought.text or "") for thought in thoughts)
    if total <= THINKING_CAP:
        return thoughts
    kept: list[Thought] = []
    left = THINKING_CAP
    for thought in thoughts:
        text = thought.text or ""
        if len(text) > left:
            kept.append(Thought(thought.kind, text[:left] + _note(THINKING_CAP, total)))
            break
        kept.append(thought)
        left -= len(text)
    return tuple(kept)


def _note(cap: int, length: int) -> str:
    return f" [cut by the arena at {cap:,} of {length:,} characters]"
