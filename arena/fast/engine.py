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
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

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
from arena.registry import CompiledTally, Reporter

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
        self.table = CompiledTable(spec, narrate=on_deals is not None)

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
        )

    def play(self) -> Outcome:
        config, event_log, table = self.config, self.event_log, self.table
        event_log.emit(episode_header(config, self.policies, self.order, self.provenance))
        for start in range(0, config.deals, BATCH):
            played = min(BATCH, config.deals - start)
            event_log.emit_deals(table.play(played))
            if self.on_deals is not None:
                self.on_deals(table.narration(), start + played)
        result = settle("complete", config.deals, self.table.points)
        event_log.emit(result)
        tallies = tuple(SeatTally(decisions=n) for n in self.table.decisions)
        return Outcome(result.status, config.deals, result.points, result.score, tallies)

    def known(self) -> dict[Any, Any]:
        """The declared tally as the C table kept it: the audit then reads no more than
        the log's header for it."""
        if self.tally is None:
            return {}
        return {self.tally.figure: self.tally.from_table(**self.table.softplay())}

    def usage(self, records: Sequence[dict]) -> list[dict | None]:
        """Its seats call no model: none, without reading the log."""
        return [None] * self.config.rules.seats


def table_tally(reporters: Iterable[Reporter]) -> CompiledTally | None:
    """The tally the C table keeps: the first declared, in the audit's (name) order. The
    table keeps one; a figure another reporter declares is read from the log as usual."""
    declared = (r.compiled for r in sorted(reporters, key=lambda r: r.name))
    return next((tally for tally in declared if tally is not None), None)
