"""An episode's results: the rulebook's scores plus what each seat's decisions cost.

``Results.to_json()`` is the ``--json`` output and is deterministic: the same
seed and decisions give the same bytes (no timings, no paths).
"""

from __future__ import annotations

from typing import Any

import attrs

USAGE_FIELDS = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens")
USAGE_PARTS = ("cacheWrite1hTokens", "thinkingTokens")
"""Parts of the cache writes and the output that a ``usage`` line holds only when non-zero;
a total has them only when some call reported them."""


@attrs.frozen
class SeatResult:
    """One slot's line in the results."""

    slot: int
    policy: str
    points: int
    score: float
    decisions: int
    """Turns the seat was asked (forced challenges are not asked)."""
    rejected: int
    """Replies rejected under rule 11."""
    fallbacks: int
    """Moves the bayes baseline made for the seat under rule 11."""
    faults: int
    """Decisions the seat could not answer at all (e.g. its API stayed down)."""
    stand_in: str | None = None
    """Why another policy played this seat throughout (e.g. no API key), if it did."""
    usage: dict[str, int] | None = None
    """Token totals the seat's model calls reported, if it made any."""
    shapes: dict[str, int] | None = None
    """Calls per request shape, for a seat whose wire has several (:func:`shapes_by_slot`)."""
    provenance: dict[str, str] | None = None
    """The seat's ``distribution``, ``version`` and ``isolation`` (in-process, bwrap, process)."""

    def to_json(self) -> dict[str, Any]:
        data = {
            "slot": self.slot,
            "policy": self.policy,
            "points": self.points,
            "score": self.score,
            "decisions": self.decisions,
            "rejected": self.rejected,
            "fallbacks": self.fallbacks,
            "faults": self.faults,
            "standIn": self.stand_in,
        }
        if self.usage is not None:
            data["usage"] = self.usage
            data["cacheReadShare"] = cache_read_share(self.usage)
        if self.shapes is not None:
            data["shapes"] = self.shapes
        if self.provenance is not None:
            data["provenance"] = self.provenance
        return data


def cache_read_share(usage: dict[str, int]) -> float | None:
    """The share of a seat's prompt tokens read from the prompt cache, to 4 places: the
    reads over every input token (read, written or plain); ``None`` with no input at all.
    A model caches nothing below its minimum prompt (512, 1,024 or 4,096 tokens), so a
    seat whose share stays 0 pays full price for every prompt."""
    read = usage["cacheReadTokens"]
    prompt = usage["inputTokens"] + read + usage["cacheWriteTokens"]
    return round(read / prompt, 4) if prompt else None


EXPLOITABILITY_KEYS = ("exploitability", "exploitabilityFill", "exploitabilityCoverage")


@attrs.frozen
class Results:
    seed: int
    mode: str
    status: str
    """``complete``, ``deadline`` when the clock settled the episode (rule 9), or ``quit``
    when a person left the table mid-episode."""
    deals_played: int
    seats: tuple[SeatResult, ...]
    audit: dict[str, Any] | None = None
    """Diagnostics from the audit reporters; never part of any score."""
    log_sha256: str | None = None
    """SHA-256 of the event log's bytes these results describe (``arena check --results``)."""
    provenance: dict[str, Any] | None = None
    """``filters`` and ``reporters`` by name, each ``{distribution, version, isolation}``
    (each seat's is in its own line)."""
    engine: str | None = None
    """Which engine played the episode: ``python`` or ``compiled`` (:mod:`arena.fast`);
    both write the same log, byte for byte."""
    exploitability: dict[str, Any] | None = None
    """On a solvable rung: ``exploitability`` by slot, ``exploitabilityFill`` and
    ``exploitabilityCoverage`` by slot (:func:`arena.exploitability.episode_report`);
    ``None`` on tables too large to solve, written as three nulls so nothing pretends a
    figure exists. A diagnostic."""

    @property
    def points(self) -> list[int]:
        return [s.points for s in self.seats]

    @property
    def score(self) -> list[float]:
        return [s.score for s in self.seats]

    @property
    def usage(self) -> dict[str, int] | None:
        """The episode's token totals over every seat that made model calls."""
        used = [s.usage for s in self.seats if s.usage is not None]
        if not used:
            return None
        total = {key: sum(u[key] for u in used) for key in (*USAGE_FIELDS, "calls")}
        for key in USAGE_PARTS:
            if any(key in u for u in used):
                total[key] = sum(u.get(key, 0) for u in used)
        return total

    def to_json(self) -> dict[str, Any]:
        data = {
            "seed": self.seed,
            "mode": self.mode,
            "status": self.status,
            "dealsPlayed": self.deals_played,
            "points": self.points,
            "score": self.score,
            "seats": [s.to_json() for s in self.seats],
        }
        if self.usage is not None:
            data["usage"] = self.usage
        if self.audit is not None:
            data["audit"] = self.audit
        if self.log_sha256 is not None:
            data["logSha256"] = self.log_sha256
        if self.provenance is not None:
            data["provenance"] = self.provenance
        if self.engine is not None:
            data["engine"] = self.engine
        data |= self.exploitability or dict.fromkeys(EXPLOITABILITY_KEYS)
        return data


def usage_by_slot(records: list[dict[str, Any]], seats: int) -> list[dict[str, int] | None]:
    """Per-slot token totals from the log's ``usage`` events (``None`` for seats with none)."""
    totals: list[dict[str, int] | None] = [None] * seats
    for record in records:
        if record["type"] != "usage":
            continue
        slot = record["slot"]
        if totals[slot] is None:
            totals[slot] = dict.fromkeys(USAGE_FIELDS, 0) | {"calls": 0}
        totals[slot]["calls"] += 1
        for key in USAGE_FIELDS:
            totals[slot][key] += record[key]
        for key in USAGE_PARTS:
            if key in record:
                totals[slot][key] = totals[slot].get(key, 0) + record[key]
    return totals


def shapes_by_slot(records: list[dict[str, Any]], seats: int) -> list[dict[str, int] | None]:
    """Per slot, its calls in each request shape, from the ``usage`` lines' ``shape`` (in
    the order each shape was first used: a seat only steps down); ``None`` for a seat whose
    calls name none."""
    shapes: list[dict[str, int] | None] = [None] * seats
    for record in records:
        if record["type"] == "usage" and "shape" in record:
            counted = shapes[record["slot"]]
            if counted is None:
                counted = shapes[record["slot"]] = {}
            counted[record["shape"]] = counted.get(record["shape"], 0) + 1
    return shapes
