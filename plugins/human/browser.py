"""What the table server (``arena serve``) takes from the human seat to seat a person in a page.

The server owns the waiting: turns, timeouts, a tab that left. What a person is
shown and how their typing is read are this seat's, the same as at the terminal:
the page draws :func:`browser_screen`'s JSON of the :class:`~.screen.TurnScreen`
the terminal prints, and a typed move is read by the terminal's own
:func:`~.terminal.parse_command`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arena.actions import Action
from arena.rules import TableRules
from arena.seats import SeatContext
from arena.view import SeatView
from arena_plugins.human.screen import Advisor, build_screen
from arena_plugins.human.terminal import parse_command


def browser_screen(context: SeatContext) -> Callable[[SeatView], dict[str, Any]]:
    """The seat's turn screen at each of its views, as the JSON the table page draws."""
    advisor = Advisor(context)
    return lambda view: build_screen(view, context.rules, context.policies, advisor).to_json()


def browser_move(command: str, view: SeatView, rules: TableRules) -> Action | str:
    """The move a page's typed ``command`` asks for, or the hint why it is none."""
    parsed = parse_command(command, view, rules)
    return parsed.action if parsed.action is not None else parsed.hint or "not a move"
