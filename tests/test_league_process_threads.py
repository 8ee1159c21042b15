"""The process executor plays several tables at once in each worker, in threads.

One process stops at one core, so model tables past a few hundred need several
processes, each with many tables waiting on the API. The proof that one worker
really plays its tables at once is the server's: it holds the first requests until
as many as the worker's threads have arrived together, which tables played one at a
time could never do (the first would wait alone until the barrier gave up). The
standings then are serial play's.
"""

from __future__ import annotations

import threading

import attrs
import pytest
from chat_server import ChatServer, table_player
from league_runs import play
from openai_tables import offline  # noqa: F401  (autouse: no OpenAI key, fast retries)

from arena.league.config import Entrant, LeagueSpec
from arena.league.executors import Processes
from arena.league.report import league_report
from arena.limits import Limits
from arena.runner import EpisodeRequest
from arena.seats import SeatSpec

pytestmark = pytest.mark.slow

TABLES = 4
"""Tables in flight in the one worker, and requests the server waits to see together."""


def test_tables_in_flight_are_split_over_the_workers_as_evenly_as_they_go():
    # 8 tables over 3 processes: 8 = 3 + 3 + 2, the first processes taking the remainder
    pool = Processes(3, Limits(), 8)
    try:
        assert pool.threads == [3, 3, 2]
        assert pool.slots == 8
    finally:
        pool.close()
    # 2 tables asked of 3 processes: no process without a table (the CLI refuses it first)
    pool = Processes(3, Limits(), 2)
    try:
        assert pool.threads == [1, 1] and len(pool.workers) == 2
    finally:
        pool.close()


class Together:
    """A responder that holds each of the first ``count`` requests until all ``count``
    are in, then answers as the table player does; :attr:`apart` if they never were."""

    def __init__(self, count: int, patience: float):
        self.player = table_player()
        self.barrier = threading.Barrier(count, timeout=patience)
        self.count = count
        self.seen = 0
        self.apart = False
        self.lock = threading.Lock()

    def __call__(self, body):
        with self.lock:
            self.seen += 1
            waits = self.seen <= self.count
        if waits:
            try:
                self.barrier.wait()
            except threading.BrokenBarrierError:
                self.apart = True
        return self.player(body)


def league(chat: ChatServer) -> LeagueSpec:
    gpt = SeatSpec.parse(f"openai:honest?model=gpt-5-mini&base_url={chat.url}/v1")
    return LeagueSpec(  # every seat a model's: each table's first decision is a request
        entrants=tuple(Entrant(f"gpt{n}", gpt) for n in range(4)),
        tables=TABLES,
        seed=9,
        table=EpisodeRequest(deals=2),
    )


def test_one_worker_plays_its_tables_at_once_and_stores_serial_standings(tmp_path, host):
    # ARENA_OPENAI_TIMEOUT is 10 s here (openai_tables): the barrier gives up before it.
    together = Together(TABLES, patience=8.0)
    with ChatServer("openai", responder=together) as chat:
        spec = attrs.evolve(league(chat), concurrency=TABLES)
        play(tmp_path / "both.sqlite", spec, host, "process", workers=1)
    assert together.seen > TABLES
    assert not together.apart, "the worker's tables did not wait on the API together"
    with ChatServer("openai") as chat:
        play(tmp_path / "serial.sqlite", league(chat), host)
    assert (
        league_report(tmp_path / "both.sqlite")["standings"]
        == league_report(tmp_path / "serial.sqlite")["standings"]
    )
