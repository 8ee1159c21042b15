"""The decision read-out over random seeds, modes (wild ones included), table sizes, caps,
talk and misbehaving seats (rule 11's fallbacks), recomputed independently.

The check below walks the log on its own: each bid's chance from the decider's hand is
``Mode.bid_probability`` (exact fractions, not the reporter's tail tables), counts are
counted here, and a bid's truth is rule 6's count over every hand.
"""

from __future__ import annotations

import math

from episode_strategies import requests
from hypothesis import given, settings

from arena.probability import count
from arena.runner import run_episode

NO_ENV: dict[str, str] = {}


def recount(records, host):
    """Per slot: bids, false bids, sum of own-hand p, unforced challenges, challenges won,
    facings, facings with p < 1/2 where it raised, and fallbacks."""
    header = records[0]
    mode = host.registry.mode(header["mode"])
    seats = len(header["seats"])
    unseen = (seats - 1) * header["handSize"]
    tally = [dict.fromkeys(("bids", "false", "p", "ch", "won", "fac", "missed", "fb"), 0)
             for _ in range(seats)]  # fmt: skip
    hands, standing = None, None
    for record in records:
        kind = record["type"]
        if kind == "deal":
            hands, standing = record["hands"], None
        if kind not in ("bid", "challenge"):
            continue
        if kind == "challenge" and record["forced"]:
            standing = None
            continue
        mine = tally[record["slot"]]
        hand = tuple(hands[record["slot"]])
        mine["fb"] += record["fallback"]
        if standing is not None:
            mine["fac"] += 1
            p = mode.bid_probability(hand, standing["quantity"], standing["face"], unseen)
            if kind == "bid" and p < 0.5:
                mine["missed"] += 1
        if kind == "challenge":
            mine["ch"] += 1
            mine["won"] += record["winner"] == record["slot"]
            standing = None
            continue
        everything = [symbol for h in hands for symbol in h]
        mine["bids"] += 1
        mine["false"] += count(everything, record["face"], mode.wild) < record["quantity"]
        mine["p"] += mode.bid_probability(hand, record["quantity"], record["face"], unseen)
        standing = record
    return tally


@settings(max_examples=60, deadline=None)
@given(requests())
def test_every_count_matches_an_independent_walk_of_the_log(misbehaving_host, request):
    results, records = run_episode(misbehaving_host, request, environ=NO_ENV)
    section = results.audit["decisions"]
    assert isinstance(section, dict), section  # a reporter error would be a string
    for seat, mine in zip(section["seats"], recount(records, misbehaving_host), strict=True):
        assert seat["bids"] == mine["bids"] and seat["falseBids"] == mine["false"]
        assert seat["challenges"] == mine["ch"] and seat["challengesWon"] == mine["won"]
        assert seat["facings"] == mine["fac"] and seat["fallbacks"] == mine["fb"]
        assert seat["missedCatches"] == mine["missed"]
        assert math.isclose(seat["chanceSum"], mine["p"], rel_tol=1e-9, abs_tol=1e-9)
        assert seat["decisions"] == mine["bids"] + mine["ch"]
        # The bins hold every bid once; facings by opponent and band add up to facings.
        assert sum(entry[0] for entry in seat["calibration"]) == mine["bids"]
        assert sum(map(sum, seat["faced"])) == mine["fac"]
        assert sum(map(sum, seat["challenged"])) == mine["ch"]
        for name, value in seat["figures"].items():
            assert value is None or math.isfinite(value), name
            if value is not None and name not in ("overreach", "followsBluffs"):
                assert -1e-12 <= value <= 1 + 1e-12, (name, value)
