"""One self-contained HTML page that replays an episode from its event log.

Every number the page shows is computed here, in Python, from the log and the
arena's own functions, and embedded as data: the exact tail of each bid from
each seat's hand is :meth:`arena.modes.Mode.bid_probability` of the mode the
log names, a bid's truth is :func:`arena.rules.resolve`'s count, and the
soft-play figures are :func:`arena.audit.run_audit` over the log. The page's
script only lays the data out and navigates; it computes nothing a reader
must trust. Scripts, styles and data are inlined, so the file works offline.

The page is a spectator's: it embeds the whole log, as the log file itself holds
it (every hand, notes, raw talk, each decision's private thinking). Its seat view
("as s2 saw it") lays out only what that seat knew, and never a seat's thinking,
but it is a way of reading the file, not a boundary: a page to hand to a seat is
the table server's, which gives each browser only its own seat's secrets.
"""

from __future__ import annotations

import html
from itertools import zip_longest
from typing import Any

from arena.audit import failures, play_records, run_audit
from arena.eventlog import LogError
from arena.events import Audit
from arena.grading import judge
from arena.modes import Mode
from arena.plugins import PluginHost, load
from arena.rules import StandingBid, resolve
from arena.web.page import asset, fill, script_json

SOFT_PLAY_FIGURES = ("faced", "challenged", "net", "expLoss")
"""The per-pair matrices of the softplay reporters the page shows (docs/audit.md)."""

SEAT_FIGURES = ("bluffRate", "bluffs", "bluffsWithReasoning", "bluffsNamedFalse")
"""Per-seat figures: softplay's ``bluffRate`` and the reasoning plugin's counts."""

READ_OUT = "decisions"
"""The decision read-out's section (docs/decisions.md): its per-seat figures and grades."""


# Records that belong to the decision that follows them (rule 11 and token accounting).
_PENDING = {"rejected", "fault", "usage"}


def replay_html(
    records: list[dict], *, host: PluginHost | None = None, caution: str | None = None
) -> str:
    """The replay page of an episode's records (``read_log``'s output), as one HTML string.

    ``host`` resolves the log's mode and audit reporters; the installed plugins by default.
    ``caution`` (``unchecked``, ``partial``) marks a page built from a log that was not
    fully verified by ``arena check``, in its title and heading.
    """
    data = replay_data(records, host or load())
    data["caution"] = caution
    header = records[0]
    marked = f"{caution.upper()}: " if caution else ""
    parts = {
        "title": html.escape(f"{marked}{header['mode']} seed {header['seed']}: replay"),
        "style": asset("replay.css"),
        "script": asset("replay.js"),
        "data": script_json(data),
    }
    return fill("replay.html", parts)


def replay_data(records: list[dict], host: PluginHost) -> dict[str, Any]:
    """The episode as the page lays it out: deals of decisions, with every figure attached."""
    header = records[0]
    mode = host.registry.mode(header["mode"])
    seats = len(header["seats"])
    unseen = (seats - 1) * header["handSize"]
    deals: list[dict[str, Any]] = []
    pending: list[dict] = []
    points = [0] * seats
    result = None
    for record in play_records(records):
        kind = record["type"]
        if kind == "deal":
            deals.append(_deal(record, points))
        elif kind in _PENDING:
            pending.append(record)
        elif kind in ("bid", "challenge"):
            if not deals:
                raise LogError(f"a {kind} line comes before any deal line")
            deal = deals[-1]
            decision = _decision(record, pending)
            pending = []
            if kind == "bid":
                _price_bid(decision, deal["hands"], mode, unseen)
            else:
                points[record["winner"]] += 1
                points[record["loser"]] -= 1
                deal["pointsAfter"] = list(points)
            deal["decisions"].append(decision)
        elif kind == "result":
            result = record
    for deal in deals:
        _mark_facers(deal)
    _grade(deals, records)
    return {
        "header": header,
        "deals": deals,
        "result": result,
        "audit": _audit(records, host),
        "flags": [r["flag"] for r in records if r["type"] == Audit.TYPE],
    }


def _deal(record: dict, points: list[int]) -> dict[str, Any]:
    return {
        "deal": record["deal"],
        "opener": record["opener"],
        "hands": record["hands"],
        "pointsBefore": list(points),
        "pointsAfter": list(points),
        "decisions": [],
    }


def _decision(record: dict, pending: list[dict]) -> dict[str, Any]:
    """The bid or challenge, with the rejections, faults and token use that led to it."""
    decision = {k: v for k, v in record.items() if k != "deal"}
    mine = [r for r in pending if r["slot"] == record["slot"]]
    decision["rejected"] = [
        {"reason": r["reason"], "reply": r["reply"], "thinking": r.get("thinking")}
        for r in mine
        if r["type"] == "rejected"
    ]
    decision["faults"] = [r["reason"] for r in mine if r["type"] == "fault"]
    decision["usage"] = [
        {k: v for k, v in r.items() if k not in ("type", "deal", "slot")}
        for r in mine
        if r["type"] == "usage"
    ]
    return decision


def _price_bid(decision: dict, hands: list[list[int]], mode: Mode, unseen: int) -> None:
    """Each seat's exact chance that the bid is true, from its own hand; and the truth."""
    quantity, face = decision["quantity"], decision["face"]
    decision["p"] = [mode.bid_probability(tuple(h), quantity, face, unseen) for h in hands]
    standing = StandingBid(slot=decision["slot"], quantity=quantity, face=face)
    count = resolve(hands, standing, challenger=decision["slot"], wild=mode.wild).actual
    decision["actual"] = count
    decision["true"] = count >= quantity


def _grade(deals: list[dict], records: list[dict]) -> None:
    """Each graded decision's mark (:mod:`arena.grading`): its grade, the chance behind it
    (the standing bid's from the decider's hand, or an opening bid's own) and the expected
    points it forwent. The page shows a seat's marks to the spectator and to that seat: a
    mark reads the decider's own hand."""
    marks = {
        ordinal: {"grade": grade, "chance": chance, "forgone": forgone}
        for chunk in judge(records)
        for ordinal, grade, chance, forgone in chunk.graded()
    }
    made = (decision for deal in deals for decision in deal["decisions"])
    for ordinal, decision in enumerate(made):
        decision["grade"] = marks.get(ordinal)


def _mark_facers(deal: dict) -> None:
    """A bid was faced by whoever took the deal's next decision (forced or not)."""
    decisions = deal["decisions"]  # none at all in a deal a quit ended before its first move
    for decision, after in zip_longest(decisions, decisions[1:]):
        if decision["type"] == "bid":
            decision["facer"] = after["slot"] if after is not None else None


def _audit(records: list[dict], host: PluginHost) -> dict[str, Any]:
    """The soft-play figures the arena's own reporters compute from this log."""
    sections = run_audit(host.registry.reporters.values(), records)
    read_out = sections.get(READ_OUT)
    return {
        "pairs": {name: sections[name] for name in SOFT_PLAY_FIGURES if name in sections},
        "seats": {name: sections[name] for name in SEAT_FIGURES if name in sections},
        "readOut": [
            {"figures": seat["figures"], "grades": seat["grades"]} for seat in read_out["seats"]
        ]
        if isinstance(read_out, dict)
        else None,
        "failed": failures(sections),
    }
