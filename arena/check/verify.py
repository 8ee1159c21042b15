"""An independent replay of an event log through the rules: nothing in the log is trusted.

The seed and the mode's declaration are the only inputs taken from the header; the
table order, every hand, whose turn it is, whether a bid is legal, each challenge's
count and outcome, and the points and scores are all re-derived and compared with
what the log says. The log's moves drive the turn state machine the engine plays on
(:mod:`arena.turns`), so the sequence (turns, legality, the cap, deal and episode ends,
rule 11's marks) has one reading in Python; the independent second reading is the
test suite's referee. The state plays a broken move as the log made it
(``strict=False``), so every later line is still checked.
"""

from __future__ import annotations

import math
import reprlib
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import attrs

from arena.actions import Bid, Challenge
from arena.check.header import header_problem, is_int, is_int_list
from arena.modes import from_header
from arena.plugins import Registry, UnknownName, load
from arena.rules import TableRules
from arena.turns import QUIT, DealState, EpisodeState


@attrs.frozen
class Violation:
    """One place where the log breaks the rules or disagrees with its seed."""

    line: int
    """1-based line of the log (0 when the violation is not on a line, e.g. a results file)."""
    rule: str
    """``rule N`` of docs/rules.md, ``scoring``, ``header``, ``format`` or ``complete``."""
    message: str
    """What the log says and what was expected."""

    def __str__(self) -> str:
        return f"line {self.line}: {self.rule}: {self.message}"


def verify(
    records: list[dict[str, Any]],
    *,
    registry: Registry | None = None,
    partial: bool = False,
    lines: Sequence[int] | None = None,
) -> list[Violation]:
    """Every violation in ``records``, in line order; an empty list for a sound log.

    The mode is the header's mode name resolved in ``registry`` (the installed plugins
    by default). ``partial`` accepts a log without a ``result`` line (it was stopped).
    ``lines`` are the records' line numbers in their file (default 1, 2, 3, ...).
    """
    if not records:
        return [Violation(0, "complete", "an empty log")]
    verifier = _Verifier(registry if registry is not None else installed_registry())
    numbers = list(lines) if lines is not None else list(range(1, len(records) + 1))
    try:
        for line, record in zip(numbers, records, strict=True):
            try:
                verifier.step(line, record)
            except (TypeError, KeyError, ValueError, IndexError, AttributeError) as exc:
                # A value no rule expected (e.g. a missing field in a hand-made record):
                # a violation of the log's format, never a crash of the reader.
                verifier.violations.append(Violation(line, "format", f"unreadable line ({exc!r})"))
                if not verifier.ready:
                    raise _Unreadable from None
    except _Unreadable:
        return verifier.violations
    verifier.finish(numbers[-1], partial)
    return verifier.violations


@cache
def installed_registry() -> Registry:
    """The registry of every installed plugin, loaded once for callers that give none."""
    return load().registry


class _Unreadable(Exception):
    """The header cannot be replayed (unknown mode, impossible table): nothing after it can."""


_INT = {
    *("deal", "opener", "slot", "quantity", "face", "bidder", "actual", "winner", "loser"),
    *("dealsPlayed", "inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens"),
    *("cacheWrite1hTokens", "thinkingTokens"),
}
_BOOL = {"forced", "fallback"}
_TEXT = {"say", "published", "notes", "shape"}
_STRING = {"status", "reason", "reporter"}
_INT_LISTS = {"points"}
"""The play lines' fields by JSON type; the header's are :mod:`arena.check.header`'s."""


def _shape_error(record: dict[str, Any]) -> str | None:
    """Why a play line's values have the wrong JSON types, or ``None``."""
    for key, value in record.items():
        if key in _INT and not is_int(value):
            return f"{key} must be an integer, got {value!r}"
        if key in _BOOL and not isinstance(value, bool):
            return f"{key} must be true or false, got {value!r}"
        if key in _TEXT and value is not None and not isinstance(value, str):
            return f"{key} must be text or null, got {value!r}"
        if key in _STRING and not isinstance(value, str):
            return f"{key} must be text, got {value!r}"
        if key in _INT_LISTS and not is_int_list(value):
            return f"{key} must be a list of integers, got {value!r}"
    if "hands" in record and not (
        isinstance(record["hands"], list) and all(is_int_list(h) for h in record["hands"])
    ):
        return f"hands must be lists of integers, got {record['hands']!r}"
    if "score" in record and not (
        isinstance(record["score"], list)
        and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in record["score"])
    ):
        return f"score must be a list of numbers, got {record['score']!r}"
    return None


def _thinking_error(blocks: Any) -> str | None:
    """Why a decision's ``thinking`` is not a list of thinking and redacted blocks, or ``None``."""
    if not isinstance(blocks, list):
        return f"thinking must be a list of blocks, got {reprlib.repr(blocks)}"
    for index, block in enumerate(blocks):
        if block != {"type": "redacted"} and not (
            isinstance(block, dict)
            and block.keys() == {"type", "text"}
            and block["type"] == "thinking"
            and isinstance(block["text"], str)
        ):
            return (
                f'thinking[{index}] must be {{"type": "thinking", "text": TEXT}} or'
                f' {{"type": "redacted"}}, got {reprlib.repr(block)}'
            )
    return None


class _Verifier:
    def __init__(self, registry: Registry):
        self.registry = registry
        self.violations: list[Violation] = []
        self.line = 0
        self.rules: TableRules | None = None
        self.ready = False
        """Whether the header was read: the first line is the header, and nothing is without it."""
        self.state: EpisodeState | None = None
        """The rules' state, driven by the log's moves once the header is read."""
        self.usage = False
        """Whether the decision on turn reported token usage (a seat was asked)."""
        self.settled = False
        self.interrupted: str | None = None

    def _flag(self, rule: str, message: str) -> None:
        self.violations.append(Violation(self.line, rule, message))

    def step(self, line: int, record: dict[str, Any]) -> None:
        self.line = line
        heading = not self.ready and record.get("type") == "episode"
        problem = header_problem(record) if heading else None
        if problem is not None:  # nothing can be read by a header that breaks the format
            self._flag(*problem)
            raise _Unreadable
        shape = _shape_error(record)
        if shape is not None:
            self._flag("format", f"{record.get('type')} line: {shape}")
            if not self.ready:
                raise _Unreadable
            return
        kind = record["type"]
        thinking = _thinking_error(record["thinking"]) if "thinking" in record else None
        if thinking is not None:  # flagged, and the move itself still replays
            self._flag("format", f"{kind} line: {thinking}")
        if not self.ready:
            self._header(record)
            return
        if self.interrupted is not None:
            self._flag("complete", f"a {kind} line after the log was interrupted")
            return
        if self.settled and kind != "audit":
            self._flag("complete", f"a {kind} line after the result; only audit lines may follow")
            return
        handler: Callable[[dict[str, Any]], None] | None = getattr(self, f"_on_{kind}", None)
        if handler is None:
            self._flag("format", f"unknown line type {kind!r}")
            return
        handler(record)

    # --- the header ------------------------------------------------------------------

    def _header(self, record: dict[str, Any]) -> None:
        if record["type"] != "episode":
            self._flag("header", f"the first line is a {record['type']} line, not the episode")
            raise _Unreadable
        try:
            mode = self.registry.mode(record["mode"])
        except UnknownName as exc:
            self._flag("header", str(exc))
            raise _Unreadable from None
        self.rules = TableRules(mode, len(record["seats"]), record["maxBidsPerDeal"])
        self.seed, self.deals, self.talk = record["seed"], record["deals"], record["talk"]
        if record["symbols"] != list(mode.symbols):
            self._flag(
                "header",
                f"symbols {record['symbols']} are not mode {mode.name}'s {list(mode.symbols)}",
            )
        if record["handSize"] != mode.hand_size:
            self._flag(
                "header", f"handSize {record['handSize']}, mode {mode.name} deals {mode.hand_size}"
            )
        logged_rules = from_header(record).header_fields()
        if logged_rules != mode.header_fields():  # what readers of the header count by
            self._flag(
                "header", f"rules {logged_rules} are not mode {mode.name}'s {mode.header_fields()}"
            )
        self.state = EpisodeState(self.rules, self.seed, self.deals)
        self.order = self.state.order
        if record["tableOrder"] != list(self.order):
            self._flag(
                "rule 1",
                f"table order {record['tableOrder']}, seed {self.seed} draws {list(self.order)}",
            )
        self.ready = True

    # --- deals and turns ----------------------------------------------------------------

    def _on_deal(self, record: dict[str, Any]) -> None:
        number, state = record["deal"], self.state
        if state.deal is not None:
            self._flag("rule 7", f"deal {number} starts before deal {state.deal.number} resolved")
        if number != state.played:
            self._flag("rule 9", f"deal {number} where deal {state.played} is due")
        if not 0 <= number < self.deals:
            self._flag("rule 9", f"deal {number} beyond the {self.deals} deals of the header")
            number = min(max(number, 0), self.deals - 1)
        deal = state.next_deal(strict=False, number=number)
        self.usage = False
        seats = self.rules.seats
        if record["opener"] != deal.opener:
            self._flag(
                "rule 1",
                f"deal {number} opens at slot {record['opener']}; table position "
                f"{number % seats} is slot {deal.opener}",
            )
        hands = deal.hands
        logged = record["hands"]
        if len(logged) != seats:
            self._flag("rule 1", f"{len(logged)} hands for {seats} seats")
        else:
            for slot, (got, dealt) in enumerate(zip(logged, hands, strict=True)):
                if got != list(dealt):
                    self._flag(
                        "rule 1",
                        f"slot {slot}'s hand {got} is not the hand seed {self.seed} deals "
                        f"in deal {number}: {list(dealt)}",
                    )
                    break

    def _on_turn(self, record: dict[str, Any]) -> DealState | None:
        """The open deal if ``record`` is about it and from the seat on turn; flags otherwise."""
        deal = self.state.deal
        if deal is None:
            self._flag("rule 7", f"a {record['type']} line outside any deal")
            return None
        if record["deal"] != deal.number:
            self._flag(
                "rule 7", f"a {record['type']} line for deal {record['deal']} in deal {deal.number}"
            )
        if not 0 <= record["slot"] < self.rules.seats:
            self._flag("rule 2", f"slot {record['slot']} is not a seat of this table")
            return None
        actor = deal.actor
        if record["slot"] != actor:
            rule = "rule 1" if not deal.bids else "rule 5"
            self._flag(
                rule,
                f"slot {record['slot']} acts, but it is slot {actor}'s turn "
                f"(table position {deal.position} of {list(self.order)})",
            )
        return deal

    # --- rule 11: asking a seat -----------------------------------------------------------

    def _on_rejected(self, record: dict[str, Any]) -> None:
        deal = self._on_turn(record)
        if deal is None:
            return
        if not deal.may_ask:
            self._flag("rule 11", "a rejection after the seat's last chance; the fallback moves")
        deal.reject()

    def _on_fault(self, record: dict[str, Any]) -> None:
        deal = self._on_turn(record)
        if deal is not None:
            if deal.faulted:
                self._flag("rule 11", "a second fault for one decision")
            elif not deal.may_ask:
                self._flag("rule 11", "a fault after the seat's last chance; the fallback moves")
            deal.fault()

    def _on_usage(self, record: dict[str, Any]) -> None:
        if self._on_turn(record) is not None:
            self.usage = True

    def _asked(self, deal: DealState, record: dict[str, Any]) -> None:
        """Rule 11's fallback mark and rule 10's talk for a decision the seat was asked for."""
        due = deal.fallback_due
        if record["fallback"] != due:
            fault = " and a fault" if deal.faulted else ""
            self._flag(
                "rule 11",
                f"fallback is {_json(record['fallback'])} after {deal.rejections} "
                f"rejection(s){fault}; expected {_json(due)}",
            )
        self._talk(record)

    def _talk(self, record: dict[str, Any]) -> None:
        if record["published"] is not None and (not self.talk or not record["say"]):
            self._flag("rule 10", "talk is published although talk is off or nothing was said")

    # --- bids and challenges -----------------------------------------------------------------

    def _on_bid(self, record: dict[str, Any]) -> None:
        deal = self._on_turn(record)
        if deal is None:
            return
        rules, quantity, face = self.rules, record["quantity"], record["face"]
        if deal.forced:
            self._flag(
                "rule 8",
                f"a bid after the cap of {rules.max_bids} bids; expected a forced challenge",
            )
        out_of_range = rules.bid_error(quantity, face, None)
        if out_of_range:
            self._flag("rule 3", out_of_range)
        else:
            no_raise = rules.bid_error(quantity, face, deal.standing)
            if no_raise:
                lowest = rules.min_raise(deal.standing)
                least = f"{lowest[0]}x{lowest[1]}" if lowest else "none (only a challenge)"
                self._flag("rule 4", f"{no_raise}; the lowest legal bid is {least}")
        self._asked(deal, record)
        deal.apply(Bid(quantity, face), strict=False)
        self.usage = False

    def _on_challenge(self, record: dict[str, Any]) -> None:
        deal = self._on_turn(record)
        if deal is None:
            return
        standing, forced = deal.standing, deal.forced
        if standing is None:
            self._flag("rule 3", "a challenge with no standing bid; the opener must bid")
            deal.apply(Challenge(), strict=False)  # rule 7: the deal ends here
            return
        logged = (record["bidder"], record["quantity"], record["face"])
        if logged != (standing.slot, standing.quantity, standing.face):
            self._flag(
                "rule 6",
                f"the challenge names {logged[1]}x{logged[2]} by slot {logged[0]}; the standing "
                f"bid is {standing.quantity}x{standing.face} by slot {standing.slot}",
            )
        if record["forced"] != forced:
            self._flag(
                "rule 8",
                f"forced is {_json(record['forced'])} after {len(deal.bids)} bids with a cap of "
                f"{self.rules.max_bids}; expected {_json(forced)}",
            )
        if forced:
            if deal.rejections or deal.faulted or self.usage or record["fallback"]:
                self._flag("rule 8", "the seat was asked, although the cap forces its challenge")
            self._talk(record)
        else:
            self._asked(deal, record)
        outcome = deal.apply(Challenge(), strict=False).outcome  # rule 7: the deal ends here
        self.usage = False
        if record["actual"] != outcome.actual:
            self._flag(
                "rule 6",
                f"actual {record['actual']}; the dealt hands hold {outcome.actual} "
                f"of face {standing.face}",
            )
        if (record["winner"], record["loser"]) != (outcome.winner, outcome.loser):
            self._flag(
                "rule 6",
                f"winner {record['winner']} and loser {record['loser']}; "
                f"{standing.quantity}x{standing.face} against {outcome.actual} makes "
                f"winner {outcome.winner} and loser {outcome.loser}",
            )

    # --- the end ------------------------------------------------------------------------------

    def _on_result(self, record: dict[str, Any]) -> None:
        self.settled = True
        # A person who leaves (or a server that stops) settles the episode at once: "quit"
        # may end the deal in progress, which moved no point, and only before the last deal.
        # Any other end before the last deal is the clock's, which waits for a deal boundary.
        state = self.state
        if record["status"] == QUIT:
            state.quit()
        else:
            if state.deal is not None:
                self._flag(
                    "rule 7", f"the episode settles in the middle of deal {state.deal.number}"
                )
            state.run_out(strict=False)
        ended = state.settlement()
        played, points = ended.deals_played, list(ended.points)
        if record["dealsPlayed"] != played:
            self._flag("rule 9", f"dealsPlayed {record['dealsPlayed']}; {played} deals resolved")
        if record["status"] != ended.status:
            self._flag(
                "rule 9",
                f"status {record['status']!r} after {played} of {self.deals} deals; "
                f"expected {ended.status!r}",
            )
        if record["points"] != points:
            self._flag("scoring", f"points {record['points']}; the challenges give {points}")
        expected = list(ended.score)
        logged = record["score"]
        if len(logged) != len(expected) or not all(
            math.isclose(a, b, rel_tol=0, abs_tol=1e-12)
            for a, b in zip(logged, expected, strict=True)
        ):
            self._flag("scoring", f"score {logged}; 0.5 + points / (2 x {played}) gives {expected}")

    def _on_episode(self, record: dict[str, Any]) -> None:
        self._flag("header", "a second episode header; one log holds one episode")

    def _on_audit(self, record: dict[str, Any]) -> None:
        if not self.settled:
            self._flag("complete", "an audit line before the result")

    def _on_interrupted(self, record: dict[str, Any]) -> None:
        if self.settled:
            self._flag("complete", "an interrupted line after the result")
        self.interrupted = record["reason"]

    def finish(self, lines: int, partial: bool) -> None:
        if self.settled or partial:
            return
        self.line = lines
        how = f"was interrupted ({self.interrupted})" if self.interrupted else "stops"
        self._flag(
            "complete",
            f"no result line: the log {how} after {self.state.played} of {self.deals} deals "
            "(read it with --partial)",
        )


def _json(value: bool) -> str:
    return "true" if value else "false"
