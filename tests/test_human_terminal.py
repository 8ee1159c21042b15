"""The human seat at the terminal: forgiving input, and whole episodes in a real pseudo-terminal.

The pseudo-terminal tests run ``arena play --seat human`` inside tmux, read the
screen as a person would, answer by typing, and then replay the log through the
independent referee: a typo must never have reached the engine (no rule-11
rejection for the person's seat), and ``q`` must leave a complete log.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import attrs
import pytest
from plugins_for_tests.harness import context, make_view
from referee import replay

from arena.actions import Bid, Challenge
from arena.cli.play import live_printer
from arena.rules import TableRules
from arena.seats import SeatQuit
from arena_plugins.dice import DICE
from arena_plugins.human import PERSON
from arena_plugins.human.feed import PublicFeed
from arena_plugins.human.terminal import TerminalSeat, parse_command

RULES = TableRules(mode=DICE, seats=4)
FACING_3X4 = make_view(RULES, (1, 2, 4, 4, 6), [(3, 3, 4)])
OPENING = make_view(RULES, (1, 2, 4, 4, 6), [])


@pytest.mark.parametrize("text", ["3 5", "3x5", "3X5", " bid 3 5 ", "bid 3x5", "3 x 5", "3*5"])
def test_a_bid_can_be_typed_many_ways(text):
    assert parse_command(text, FACING_3X4, RULES).action == Bid(3, 5)


@pytest.mark.parametrize("text", ["c", "C", "challenge", "call", "liar"])
def test_a_challenge_can_be_typed_many_ways(text):
    assert parse_command(text, FACING_3X4, RULES).action == Challenge()


@pytest.mark.parametrize(
    ("view", "text", "hint"),
    [
        (FACING_3X4, "xyz", "not understood"),
        (FACING_3X4, "3", "not understood"),
        (FACING_3X4, "3 3", "does not raise"),  # rule 4: same quantity needs a higher face
        (FACING_3X4, "21 5", "out of range"),  # rule 3: at most 4 seats x 5 dice
        (FACING_3X4, "4 7", "not one of"),
        (OPENING, "c", "rule 3"),  # an opening turn must bid
        (FACING_3X4, "say hi", "talk is off"),
    ],
)
def test_a_typo_or_an_illegal_move_is_a_hint_not_an_action(view, text, hint):
    command = parse_command(text, view, RULES)
    assert command.action is None and hint in command.hint


def test_the_seat_asks_again_until_the_move_is_legal_and_q_leaves():
    typed = iter(["oops", "3 3", "?", "4 2"])
    shown: list[str] = []
    seat = TerminalSeat(context(RULES), read=lambda _prompt: next(typed), write=shown.append)
    assert seat.decide(FACING_3X4) == Bid(4, 2)
    assert any("not understood" in s for s in shown) and any("does not raise" in s for s in shown)
    assert any("challenge the standing bid" in s for s in shown)  # the help
    leaving = TerminalSeat(context(RULES), read=lambda _prompt: "q", write=shown.append)
    with pytest.raises(SeatQuit):
        leaving.decide(FACING_3X4)


def test_the_public_feed_hides_hands_until_the_challenge_reveals_them():
    hands = [[1, 1, 1, 1, 1], [2, 2, 2, 2, 2], [3, 3, 3, 3, 3], [6, 6, 6, 6, 6]]
    feed = PublicFeed(DICE, viewer=1, deals=1)
    dealt = feed.news({"type": "deal", "deal": 0, "opener": 0, "hands": hands})
    assert "2 2 2 2 2" in dealt.text and "1 1 1" not in dealt.text and "6 6" not in dealt.text
    bid = {"type": "bid", "deal": 0, "slot": 0, "quantity": 2, "face": 6, "say": "raw secret",
           "published": "filtered", "notes": "private plan", "fallback": False}  # fmt: skip
    text = feed.news(bid).text
    assert "filtered" in text and "raw secret" not in text and "private plan" not in text
    # Rule 6: 2x6 against five 6s is true, so the challenger (slot 1) loses.
    challenge = {"type": "challenge", "deal": 0, "slot": 1, "bidder": 0, "quantity": 2,
                 "face": 6, "actual": 5, "forced": False, "fallback": False, "winner": 0,
                 "loser": 1, "say": None, "published": None, "notes": None}  # fmt: skip
    revealed = feed.news(challenge).text
    assert all(" ".join(map(str, hand)) in revealed for hand in hands)
    assert "the bid was true" in revealed and "s0 +1, you -1" in revealed
    assert (
        feed.news({"type": "rejected", "deal": 0, "slot": 2, "reason": "x", "reply": "y"}) is None
    )


def test_arena_play_prints_the_news_the_person_seat_declares_line_by_line(capsys):
    show = live_printer(PERSON.feed(DICE, 2, 0))  # what arena play does for one person
    hands = [[1, 2, 3, 4, 5], [6, 6, 6, 6, 6]]
    show({"type": "deal", "deal": 0, "opener": 1, "hands": hands})
    show({"type": "rejected", "deal": 0, "slot": 1, "reason": "x", "reply": "y"})  # no news
    # Deal 0 is shown as 1 of 2; the viewer (slot 0) sees their own hand, not slot 1's.
    assert capsys.readouterr().out == "· deal 1 of 2: s1 to open; your hand 1 2 3 4 5\n"


# --- a real pseudo-terminal ------------------------------------------------------

pytestmark_tmux = pytest.mark.skipif(
    shutil.which("tmux") is None, reason="tmux is not installed (apt-get install tmux)"
)


class Terminal:
    """``arena play`` running in a detached tmux session of its own server."""

    def __init__(self, tmp: Path, args: list[str]):
        self.socket = f"arena-test-{tmp.name}"
        conf = tmp / "tmux.conf"
        conf.write_text("set -g history-limit 100000\n")
        command = " ".join([sys.executable, "-m", "arena.cli", "play", *args])
        self._tmux("-f", str(conf), "new-session", "-d", "-x", "150", "-y", "50",
                   f"{command}; echo ARENA_EXIT=$?; sleep 600")  # fmt: skip

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-J", "-S", "-100000")

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-l", text)
        self._tmux("send-keys", "Enter")

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)

    def play(self, answer, limit: float = 90.0) -> str:
        """Answer each new prompt with ``answer(turn_screen, prompts_so_far)`` until exit."""
        answered, deadline = 0, time.monotonic() + limit
        while time.monotonic() < deadline:
            text = self.screen()
            if "ARENA_EXIT=" in text:
                return text
            prompts = text.count("your move> ")
            if prompts > answered:
                turn = text[text.rfind("── deal") :]
                self.type(answer(turn, answered))
                answered += 1
            time.sleep(0.05)
        raise AssertionError(f"the episode did not end in {limit} s:\n{self.screen()[-3000:]}")


@pytest.fixture
def terminal(tmp_path):
    made = []

    def start(args):
        made.append(Terminal(tmp_path, args))
        return made[-1]

    yield start
    for term in made:
        term.close()


FORMS = ["{q} {f}", "{q}x{f}", "bid {q} {f}"]


def bayes_line(turn: str, answered: int) -> str:
    """Play the move the screen marks as bayes's, typed in a rotating forgiving form."""
    if answered == 0:
        return "what?"  # a typo first: it must only be asked again
    if re.search(r"challenge .*<- bayes", turn):
        return "c" if answered % 2 else "challenge"
    q, f = re.search(r"^\s+(\d+) x (\d+)\s+\S+%\s+<- bayes", turn, re.M).groups()
    return FORMS[answered % 3].format(q=q, f=f)


def checked_standing_lines(text: str) -> int:
    """Each screen's standing-bid probability against Mode.bid_probability, to the digit shown."""
    checked = 0
    for turn in text.split("── deal")[1:]:
        hand = tuple(int(x) for x in re.search(r"your hand: ([\d ]+)", turn)[1].split())
        standing = re.search(r"standing bid (\d+)x(\d+): true with probability (\S+)%", turn)
        if standing:
            q, f = int(standing[1]), int(standing[2])
            assert standing[3] == f"{DICE.bid_probability(hand, q, f, 15) * 100:.2f}"
            checked += 1
    return checked


@pytestmark_tmux
def test_a_whole_episode_typed_at_the_terminal_passes_the_referee(terminal, tmp_path):
    log = tmp_path / "ep.jsonl"
    term = terminal(["--seat", "bayes", "--seat", "human", "--deals", "4", "--seed", "3",
                     "--log", str(log)])  # fmt: skip
    text = term.play(bayes_line)
    assert "ARENA_EXIT=0" in text and "Traceback" not in text
    assert "not understood: 'what?'" in text
    assert "challenged" in text and "reveal" in text  # other seats' moves and the reveal
    assert checked_standing_lines(text) >= 1
    records = [json.loads(line) for line in log.read_text().splitlines()]
    summary = replay(records)
    assert summary.status == "complete" and summary.deals_played == 4
    assert summary.rejected[1] == 0 and summary.fallbacks[1] == 0 and summary.asked[1] >= 4
    assert "complete, 4 deals" in text


@pytestmark_tmux
def test_q_leaves_at_once_with_a_complete_log_and_results(terminal, tmp_path):
    log = tmp_path / "quit.jsonl"
    term = terminal(["--seat", "human", "--deals", "5", "--seed", "1", "--log", str(log)])

    def play_then_quit(turn, answered):
        return "q" if answered == 2 else bayes_line(turn, answered + 1)

    text = term.play(play_then_quit)
    assert "ARENA_EXIT=0" in text and "Traceback" not in text
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert records[-1]["type"] in {"result", "audit"}
    result = next(r for r in records if r["type"] == "result")
    assert result["status"] == "quit" and result["dealsPlayed"] < 5
    assert replay(records).status == "quit"
    assert f"quit, {result['dealsPlayed']} deals" in text


def test_say_rides_on_the_next_move_when_talk_is_on():
    view = attrs.evolve(FACING_3X4, talk_enabled=True)
    typed = iter(["say  Nice Bid, Friend ", "challenge"])
    seat = TerminalSeat(context(RULES), read=lambda _prompt: next(typed), write=lambda _t: None)
    assert seat.decide(view) == Challenge(say="Nice Bid, Friend")
