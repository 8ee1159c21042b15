"""The compiled engine: plays a scripted table in C and logs it as the Python engine would.

It implements :class:`~arena.engine.EpisodeEngine` as :class:`~arena.engine.Engine`
does, so the runner builds, plays and audits either alike. The header and ``result``
lines are the Python engine's own; the deals in between come from the C table a batch
at a time, each batch written out whole, so a stop between batches leaves a log of
whole deals as the Python engine's does. The C table also keeps the tally an audit
reporter declares for it (the soft-play tallies: a
:class:`~arena.registry.CompiledTally`), and hands it to the audit as known
(:meth:`CompiledEngine.known`), so the audit need not parse the log back; which
reporter declares it, the engine learns from the registry, never from a plugin import.
Likewise a reporter that reads every decision (the decision read-out: a
:class:`~arena.registry.CompiledDecisions`) gets each decision's row from the C table,
judged :data:`arena.grading.CHUNK` at a time as :func:`arena.grading.judge` would judge
the log, and folded as the deals are played, so its memory stays bounded too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from arena import seeding
from arena.engine import (
    EpisodeConfig,
    Outcome,
    SeatTally,
    TableSetup,
    episode_header,
    settle,
)
from arena.eventlog import EventLog
from arena.fast._compiled import CompiledTable
from arena.fast.spec import table_spec
from arena.grading import CHUNK, ROW_FIELDS, from_rows
from arena.modes import Mode
from arena.registry import CompiledDecisions, CompiledTally, Reporter

BATCH = 16
"""Deals played in C between two writes (and two chances for Ctrl-C to stop the run)."""


class CompiledEngine:
    """One scripted episode in C; the seats are the built Python seats it reads its numbers off."""

    name = "compiled"

    def __init__(
        self,
        config: EpisodeConfig,
        seats: Sequence,
        policies: Sequence[str],
        event_log: EventLog,
        provenance: dict | None = None,
        on_deals: Callable[[str, int], None] | None = None,
        tally: CompiledTally | None = None,
        decisions: CompiledDecisions | None = None,
    ):
        self.config = config
        self.policies = list(policies)
        self.event_log = event_log
        self.provenance = provenance
        self.on_deals = on_deals
        """Handed each batch's terminal lines, written by the C table (see run_episode)."""
        self.tally = tally
        """What the C table keeps for the audit, or ``None`` when no reporter declares it."""
        self.order = seeding.table_order(config.seed, config.rules.seats)
        spec = table_spec(config.rules, config.seed, self.order, seats, tally)
        self.table = CompiledTable(
            spec, narrate=on_deals is not None, keep_rows=decisions is not None
        )
        self.decisions = _Judging(decisions, config.rules.mode, config.rules.seats)

    @classmethod
    def build(cls, setup: TableSetup) -> CompiledEngine:
        """Plays no talk, fallback or closing, and shows no record live:
        :func:`arena.fast.choice.choose` takes it only for a table that needs none of them."""
        return cls(
            setup.config,
            setup.seats,
            setup.policies,
            setup.event_log,
            setup.provenance,
            setup.on_deals,
            table_tally(setup.reporters),
            declared(setup.reporters, CompiledDecisions),
        )

    def play(self) -> Outcome:
        config, event_log, table = self.config, self.event_log, self.table
        event_log.emit(episode_header(config, self.policies, self.order, self.provenance))
        for start in range(0, config.deals, BATCH):
            played = min(BATCH, config.deals - start)
            event_log.emit_deals(table.play(played))
            self.decisions.take(table, whole=False)
            if self.on_deals is not None:
                self.on_deals(table.narration(), start + played)
        self.decisions.take(table, whole=True)
        result = settle("complete", config.deals, self.table.points)
        event_log.emit(result)
        tallies = tuple(SeatTally(decisions=n) for n in self.table.decisions)
        return Outcome(result.status, config.deals, result.points, result.score, tallies)

    def known(self) -> dict[Any, Any]:
        """The declared tally as the C table kept it: the audit then reads no more than
        the log's header for it."""
        known = self.decisions.known()
        if self.tally is not None:
            known[self.tally.figure] = self.tally.from_table(**self.table.softplay())
        return known

    def usage(self, records: Sequence[dict]) -> list[dict | None]:
        """Its seats call no model: none, without reading the log."""
        return [None] * self.config.rules.seats


def table_tally(reporters: Iterable[Reporter]) -> CompiledTally | None:
    """The tally the C table keeps: the first declared, in the audit's (name) order. The
    table keeps one; a figure another reporter declares is read from the log as usual."""
    return declared(reporters, CompiledTally)


def declared(reporters: Iterable[Reporter], kind: type) -> Any:
    """The first ``kind`` of declaration in the audit's (name) order, or ``None``."""
    found = (r.compiled for r in sorted(reporters, key=lambda r: r.name))
    return next((entry for entry in found if isinstance(entry, kind)), None)


class _Judging:
    """A declared decisions figure, folded from the C table's rows in whole chunks of
    :data:`arena.grading.CHUNK` (the rest waits for the next batch, or the episode's end),
    so its chunks are the ones :func:`arena.grading.judge` would make of the log."""

    def __init__(self, declared: CompiledDecisions | None, mode: Mode, seats: int):
        self.declared = declared
        self.mode, self.unseen = mode, (seats - 1) * mode.hand_size
        self.fold = declared.start(seats) if declared is not None else None
        self.pending = np.empty((0, ROW_FIELDS), dtype=np.int64)

    def take(self, table: CompiledTable, whole: bool) -> None:
        """Fold the whole chunks kept so far; with ``whole`` (the episode's end), all."""
        if self.fold is None or (not whole and table.rows_kept + len(self.pending) < CHUNK):
            return
        rows = np.concatenate([self.pending, table.take_rows()])
        kept = len(rows) if whole else len(rows) - len(rows) % CHUNK
        for start in range(0, kept, CHUNK):
            self.fold.add(from_rows(rows[start : start + CHUNK], self.mode, self.unseen))
        self.pending = rows[kept:]

    def known(self) -> dict[Any, Any]:
        return {} if self.fold is None else {self.declared.figure: self.fold.value()}
