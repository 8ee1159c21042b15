"""The compiled engine: plays a scripted table in C and logs it as the Python engine would.

It has :class:`~arena.engine.Engine`'s shape (build, then :meth:`play` once, returning
an :class:`~arena.engine.Outcome`), so the runner swaps one for the other. The
header and ``result`` lines are the Python engine's own; the deals in between come
from the C table a batch at a time, each batch written out whole, so a stop between
batches leaves a log of whole deals as the Python engine's does. The C table also
keeps the soft-play audit's tallies as it plays (:meth:`CompiledEngine.share_tallies`),
so the audit need not parse the log back.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from arena import seeding
from arena.engine import EpisodeConfig, Outcome, SeatTally, episode_header, settle
from arena.eventlog import EventLog
from arena.fast._compiled import CompiledTable
from arena.fast.spec import table_spec
from arena_plugins import softplay

BATCH = 16
"""Deals played in C between two writes (and two chances for Ctrl-C to stop the run)."""


class CompiledEngine:
    """One scripted episode in C; the seats are the built Python seats it reads its numbers off."""

    def __init__(
        self,
        config: EpisodeConfig,
        seats: Sequence,
        policies: Sequence[str],
        event_log: EventLog,
        provenance: dict | None = None,
        on_deals: Callable[[str, int], None] | None = None,
    ):
        self.config = config
        self.policies = list(policies)
        self.event_log = event_log
        self.provenance = provenance
        self.on_deals = on_deals
        """Handed each batch's terminal lines, written by the C table (see run_episode)."""
        self.order = seeding.table_order(config.seed, config.rules.seats)
        spec = table_spec(config.rules, config.seed, self.order, seats)
        self.table = CompiledTable(spec, narrate=on_deals is not None)

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

    def share_tallies(self, records) -> None:
        """Hand the soft-play audit the tallies the C table kept as it played, for this
        log's records: its reporters then read no more than the header."""
        softplay.tally.known(records, softplay.SoftPlay(**self.table.softplay()))
