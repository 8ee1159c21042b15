"""One table played in the browser: the episode in a thread, people on the other side of HTTP.

The engine runs synchronously in its own thread, exactly as ``arena play`` runs
it. Every seat whose type declares that a person plays it (its
:class:`~arena.registry.Person`) is a :class:`BrowserSeat`: it shows the turn
screen that seat declares (the human seat's is the one the terminal prints), reads
a typed move as that seat does, and blocks on a queue that the page's POSTs fill.
Every record the engine logs goes through one declared feed per viewer, so a tab
only ever learns what its own seat may know. A seat that does not answer within the turn
timeout is a seat that stopped answering: rule 11 applies (a logged fault, the
bayes fallback) and the table goes on; until its page connects again it is not
waited for. Each viewer has its own unguessable token, which is what lets
several people sit at one table from different tabs.

A finished table keeps only what its pages still need, on disk: each viewer's
first and last message in the server's private folder, and its log, which the
download and the replay read; the server then holds it as a :class:`Finished`,
a few hundred bytes. A server plays table after table, and none of them stays
in its memory.
"""

from __future__ import annotations

import bisect
import json
import queue
import secrets
import threading
from pathlib import Path
from typing import Any

import attrs

from arena.actions import Action
from arena.logs import get_logger
from arena.plugins import PluginHost, Registry
from arena.registry import Person
from arena.runner import EpisodeRequest, SetupError, build_config, run_episode, table_specs
from arena.seats import SeatContext, SeatQuit, SeatSpec, SeatUnavailable
from arena.view import SeatView

log = get_logger(__name__)
CLOSING = "the table server is shutting down"


class Channel:
    """One viewer's messages in order; the page reads them as server-sent events."""

    def __init__(self, kept: Path) -> None:
        self._messages: list[dict[str, Any]] | None = []
        """The messages, or ``None`` once a finished table's are kept in ``kept``."""
        self._kept = kept
        self._lock = threading.Lock()
        self.connected = 0
        """Pages reading this channel right now."""
        self._finished = False

    def publish(self, kind: str, **data: Any) -> None:
        with self._lock:
            self._messages.append({"id": len(self._messages), "kind": kind, **data})

    def since(self, index: int) -> list[dict[str, Any]]:
        """The messages numbered ``index`` on (numbers stay as published, kept or not)."""
        with self._lock:
            messages = self._messages
            if messages is None:
                lines = self._kept.read_text(encoding="utf-8").splitlines()
                messages = [json.loads(line) for line in lines]
            first = bisect.bisect_left(messages, index, key=lambda message: message["id"])
            return messages[first:]

    def connect(self) -> None:
        with self._lock:
            self.connected += 1

    def disconnect(self) -> None:
        with self._lock:
            self.connected -= 1
            self._keep_ends()

    def finish(self) -> None:
        """The table ended: its last message is published."""
        with self._lock:
            self._finished = True
            self._keep_ends()

    def _keep_ends(self) -> None:
        """Once the table ended and no page reads on, keep the first and last message on
        disk and none in memory: a page that comes back is told whom it is and how the
        table ended; the log holds what happened. A page still reading gets every
        message first. Where the disk takes no file, the two stay in memory."""
        if not self._finished or self.connected or self._messages is None:
            return
        ends = [self._messages[0], self._messages[-1]]
        try:  # JSON's ASCII escapes: one message a line, whatever its text holds
            self._kept.write_text("".join(json.dumps(m) + "\n" for m in ends), encoding="utf-8")
        except OSError:
            self._messages = ends
        else:
            self._messages = None


class BrowserSeat:
    """A person at a browser tab: one turn at a time, answered by POST or timed out."""

    def __init__(
        self,
        context: SeatContext,
        person: Person,
        channel: Channel,
        timeout: float,
        left: threading.Event,
    ):
        self.rules = context.rules
        self.screen = person.screen(context)
        self.move = person.move
        self.channel = channel
        self.timeout = timeout
        self.answers: queue.Queue = queue.Queue()
        self.turn = 0
        self.view: SeatView | None = None
        """The view of the turn being waited on; ``None`` between turns."""
        self.away = False
        """It timed out and no page has connected since: do not wait for it again."""
        self.left = left
        """Set when the server stops: this seat's current or next turn ends the episode."""
        self._lock = threading.Lock()

    def decide(self, view: SeatView) -> Action:
        if self.left.is_set():
            raise SeatQuit(CLOSING)
        if self.away and self.channel.connected == 0:
            raise SeatUnavailable("the browser left the table")
        screen = self.screen(view)
        with self._lock:
            self.turn += 1
            self.view = view
            while not self.answers.empty():  # nothing stale answers this turn
                self.answers.get_nowait()
        self.channel.publish("turn", turn=self.turn, screen=screen)
        try:
            answer = self.answers.get(timeout=self.timeout)
        except queue.Empty:
            self.away = True
            raise SeatUnavailable(f"no answer from the browser within {self.timeout:g} s") from None
        finally:
            with self._lock:
                self.view = None
            self.channel.publish("wait")
        if self.left.is_set():
            raise SeatQuit(CLOSING)
        self.away = False
        return answer

    def answer(self, turn: int, command: str, say: str | None) -> str | None:
        """Take the page's move for ``turn``; the reason it cannot be taken, or ``None``."""
        with self._lock:
            view = self.view
            if view is None or turn != self.turn:
                return "it is not your turn"
            action = self.move(command, view, self.rules)
            if isinstance(action, str):
                return action
            if say and view.talk_enabled:
                action = attrs.evolve(action, say=say)
            self.view = None  # one answer per turn
            self.answers.put(action)
        return None

    def wake(self) -> None:
        """End a wait for an answer now (the server is stopping)."""
        self.answers.put(None)


def person_seat(registry: Registry) -> str:
    """The seat a person takes unless told otherwise: the first registered whose type
    declares that a person plays it (our own plugins register first)."""
    for name, seat_type in registry.seats.items():
        if seat_type.person is not None:
            return name
    raise SetupError("no installed seat is played by a person: the table server has no one to seat")


def checked_specs(registry: Registry, request: EpisodeRequest) -> list[SeatSpec]:
    """The table's seats by slot, once its mode, shape and every seat name are known good:
    :class:`SetupError` or :class:`UnknownName` otherwise."""
    build_config(registry, request)
    specs = table_specs(request, registry=registry)
    for spec in specs:
        registry.seat(spec.name)
    return specs


@attrs.frozen
class Finished:
    """What a finished table leaves the server: its pages' channels (kept on disk once no
    page reads them), its log and its seed; no seat moves any more."""

    channels: dict[str, Channel]
    log: Path | None
    seed: int

    def seat_for(self, token: str) -> None:
        return None


class Table:
    """One episode being played: its viewers' channels, its seats, its log."""

    def __init__(
        self,
        host: PluginHost,
        request: EpisodeRequest,
        timeout: float,
        log_path: Path,
        pages: Path,
    ):
        """``pages``: a private folder where a finished table's pages' last words are kept."""
        registry = host.registry
        self.specs = checked_specs(registry, request)  # before any thread starts
        self.host = host
        self.request = request
        self.timeout = timeout
        self.log_path = log_path
        mode = registry.mode(request.mode)
        self.persons = {
            slot: person
            for slot, spec in enumerate(self.specs)
            if (person := registry.seat(spec.name).person) is not None
        }
        """The declared front end of each seat a person plays, by slot."""
        watcher = registry.seat(person_seat(registry)).person
        self.tokens: dict[str, int | None] = {secrets.token_urlsafe(12): s for s in self.persons}
        self.watch_token = secrets.token_urlsafe(12)
        self.tokens[self.watch_token] = None
        self.channels = {token: Channel(pages / f"{token}.jsonl") for token in self.tokens}
        self.feeds = {
            token: self.persons.get(slot, watcher).feed(mode, request.deals, slot)
            for token, slot in self.tokens.items()
        }
        self.seats: dict[int, BrowserSeat] = {}
        self.left = threading.Event()
        self.log: Path | None = None
        """The episode's log, on disk, once it ended (not if it failed)."""
        self.seated = threading.Event()
        """Set once the seats are built and play began, or the table failed before it."""
        self.refused: str | None = None
        """Why the table could not be set up (a seat its plugin refused), if so."""
        self.finished = threading.Event()
        self._thread = threading.Thread(target=self._play, name="arena-table", daemon=True)
        table = {
            "seats": [str(spec) for spec in self.specs],
            "mode": request.mode,
            "deals": request.deals,
            "talk": request.talk,
        }
        for token, slot in self.tokens.items():  # each page is told its own link, no other
            self.channels[token].publish("hello", you=slot, link=self.link(token), **table)

    @staticmethod
    def link(token: str) -> str:
        return f"/table/{token}"

    @property
    def people(self) -> dict[str, str]:
        """Each person's link by slot: for whoever starts the table to hand out."""
        return {str(slot): self.link(t) for t, slot in self.tokens.items() if slot is not None}

    @property
    def playing(self) -> bool:
        return self._thread.is_alive()

    @property
    def seed(self) -> int:
        return self.request.seed

    def ended(self) -> Finished:
        """What stays of this table once it finished (see :attr:`finished`)."""
        return Finished(self.channels, self.log, self.seed)

    def start(self) -> None:
        self._thread.start()

    def seat_for(self, token: str) -> BrowserSeat | None:
        slot = self.tokens.get(token)
        return None if slot is None else self.seats.get(slot)

    def leave(self) -> None:
        """Close the table: the episode settles ``quit`` at its next decision, its log complete."""
        self.left.set()
        for seat in list(self.seats.values()):
            seat.wake()
        self._thread.join(timeout=10)

    def _seat(self, context: SeatContext) -> BrowserSeat:
        token = next(t for t, slot in self.tokens.items() if slot == context.slot)
        person = self.persons[context.slot]
        seat = BrowserSeat(context, person, self.channels[token], self.timeout, self.left)
        self.seats[context.slot] = seat
        return seat

    def _on_record(self, record: dict[str, Any]) -> None:
        if not self.seated.is_set():  # the header: every seat was built
            self.seated.set()
        for token, feed in self.feeds.items():
            news = feed(record)
            if news is not None:
                self.channels[token].publish("news", news=news.kind, text=news.text)

    def _play(self) -> None:
        try:
            results, _records = run_episode(
                self.host,
                self.request,
                log_path=self.log_path,
                on_record=self._on_record,
                local_seats={self.specs[slot].name: self._seat for slot in self.persons},
                closing=self.left,
            )
        except Exception as exc:
            if isinstance(exc, SetupError) and not self.seated.is_set():
                self.refused = str(exc)  # before play: the page that asked is told, no other
            else:  # the table is over either way; every page is told why
                log.error("table failed", error=repr(exc))
                for channel in self.channels.values():
                    channel.publish("error", text=f"the table stopped: {exc}")
        else:
            self.log = self.log_path
            for token, channel in self.channels.items():
                channel.publish(
                    "end",
                    results=results.to_json(),
                    log=f"/api/log/{token}",
                    replay=f"/replay/{token}",
                )
        finally:
            self.seats.clear()
            self.feeds.clear()
            if self.refused is None:  # a refused table is no one's: nothing to keep
                for channel in self.channels.values():
                    channel.finish()
            self.seated.set()
            self.finished.set()
