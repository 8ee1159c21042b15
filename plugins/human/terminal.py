"""The human seat at the terminal: the turn screen as text, and forgiving input.

A typo is answered with a hint and the question again; it never reaches the
engine, so it is never a rule-11 rejection. ``q`` (or end of input) leaves the
table: the seat raises :class:`~arena.seats.SeatQuit` and the engine settles the
episode ``quit`` on the deals already resolved, log complete.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import attrs

from arena.actions import Action, Bid, Challenge
from arena.rules import TableRules
from arena.seats import SeatContext, SeatQuit
from arena.terminal_text import printable_lines
from arena.view import SeatView
from arena_plugins.human.screen import Advisor, TurnScreen, build_screen

PROMPT = "your move> "
HELP = """\
  3 5  |  3x5  |  bid 3 5     bid three 5s (quantity, then face)
  c    |  challenge         challenge the standing bid
  say some words             what you will say with your next move (when talk is on)
  ?                          this help          q   leave the table (the log stays complete)"""

_BID = re.compile(r"^(?:bid\s*)?(\d+)\s*(?:x|\*|\s)\s*(\d+)$")
_CHALLENGE = {"c", "challenge", "call", "liar"}
_QUIT = {"q", "quit", "exit"}
_HELP = {"?", "h", "help"}


def _show(text: str) -> None:
    """Print a screen or a feed line; what seats said or are called is shown, never obeyed."""
    print(printable_lines(text), flush=True)


@attrs.frozen
class Command:
    """What one line of input asked for: an action, talk, help, quitting, or a hint."""

    action: Action | None = None
    say: str | None = None
    """Talk to attach to the next move."""
    help: bool = False
    quit: bool = False
    hint: str | None = None
    """Why the line was not understood or not legal; the person is asked again."""


def parse_command(text: str, view: SeatView, rules: TableRules) -> Command:
    """Read one forgiving line of input against the legal actions of ``view``."""
    line = " ".join(text.strip().lower().split())
    if line in _QUIT:
        return Command(quit=True)
    if line in _HELP:
        return Command(help=True)
    if line.startswith("say ") or line == "say":
        if not view.talk_enabled:
            return Command(hint="talk is off at this table")
        said = text.strip()[3:].strip()
        return Command(say=said) if said else Command(hint="say what? (say some words)")
    if line in _CHALLENGE:
        if not view.legal.can_challenge:
            return Command(hint="you open this deal: a challenge needs a standing bid (rule 3)")
        return Command(action=Challenge())
    match = _BID.match(line)
    if match is None:
        return Command(hint=f"not understood: {text.strip()!r} (? for help)")
    if view.legal.min_bid is None:
        return Command(hint="no bid can raise the standing one: challenge (c)")
    quantity, face = int(match[1]), int(match[2])
    error = rules.bid_error(quantity, face, view.standing)
    if error is not None:
        return Command(hint=error)
    return Command(action=Bid(quantity, face))


def render_screen(screen: TurnScreen) -> str:
    """The turn screen as terminal text."""
    rows = [f"── deal {screen.deal + 1}, your turn (seat {screen.slot}) " + "─" * 30]
    if screen.last_deal is not None:
        last = screen.last_deal
        called = last.bids[-1]
        rows.append(
            f"last deal: s{last.challenger} challenged {called.quantity}x{called.face} "
            f"by s{called.slot}; actual {last.actual}: s{last.winner} +1, s{last.loser} -1"
        )
    rows.append(
        "table: "
        + "  ".join(
            f"{'YOU' if seat.you else f's{seat.slot}'} {seat.policy} {seat.points:+d}"
            + (" (opened)" if seat.opener else "")
            for seat in screen.table
        )
    )
    rows.append(f"your hand: {screen.hand_text}")
    bids = "  ".join(f"s{bid.slot}:{bid.quantity}x{bid.face}" for bid in screen.bids)
    rows.append(f"bids: {bids or '(none yet)'}")
    rows.extend(f'  s{line.slot} said: "{line.text}"' for line in screen.talk)
    if screen.standing is None:
        rows.append("no standing bid: you open (a bid is required)")
    else:
        s = screen.standing
        rows.append(f"standing bid {s.quantity}x{s.face}: true with probability {s.text}")
    rows.append("worth considering (likeliest first):")
    for option in screen.options:
        mark = "   <- bayes" if option.bayes else ""
        rows.append(f"  {option.quantity:>3} x {option.face:<3} {option.text:>8}{mark}")
    if screen.can_challenge:
        mark = "   <- bayes" if screen.bayes_challenges else ""
        rows.append(f"  challenge   wins with {screen.challenge_text}{mark}")
    if screen.retry_reason:
        rows.append(f"your last move was rejected: {screen.retry_reason}")
    return "\n".join(rows)


class TerminalSeat:
    """A person at the keyboard; ``read``/``write`` default to the process's terminal."""

    def __init__(
        self,
        context: SeatContext,
        read: Callable[[str], str] = input,
        write: Callable[[str], None] = _show,
    ):
        self.rules = context.rules
        self.policies = context.policies
        self.advisor = Advisor(context)
        self.read = read
        self.write = write

    def decide(self, view: SeatView) -> Action:
        screen = build_screen(view, self.rules, self.policies, self.advisor)
        self.write(render_screen(screen))
        said: str | None = None
        while True:
            try:
                line = self.read(PROMPT)
            except EOFError:
                raise SeatQuit("end of input") from None
            command = parse_command(line, view, self.rules)
            if command.quit:
                raise SeatQuit("the person left the table")
            if command.help:
                self.write(HELP)
            elif command.say is not None:
                said = command.say
                self.write(f'you will say "{said}" with your move')
            elif command.hint is not None:
                self.write(f"  {command.hint}")
            else:
                return attrs.evolve(command.action, say=said)


def human(context: SeatContext) -> TerminalSeat:
    return TerminalSeat(context)
