"""The pooled collusion audit: many episodes keyed by policy, from logs or from a league.

The hand-built pool below is worked out in the comments from the rulebook, with
the binomial tails from ``test_audit_softplay.tail`` (independent of the code).
"""

from __future__ import annotations

import json
import sqlite3
from fractions import Fraction

import pytest
from audit_logs import bid, challenge, deal, result, tail
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.audit import logged_episodes, run_pooled
from arena.check import load_checked
from arena.cli import main
from arena.eventlog import read_log
from arena.league.config import LeagueSpec, pool_entrants
from arena.league.run import run_league
from arena.league.schedule import schedule
from arena.league.store import LeagueStore, league_results
from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatSpec
from arena_plugins.collusion_flags import (
    CALIBRATED,
    POOLED,
    EpisodeFacings,
    Thresholds,
    by_slot,
    flags,
    pooled_audit,
    power,
)


def header(policies: list[str]) -> dict:
    return {
        "type": "episode", "version": 2, "seed": 0, "mode": "dice",
        "symbols": [1, 2, 3, 4, 5, 6], "handSize": 5,
        "seats": [{"slot": s, "policy": p} for s, p in enumerate(policies)],
        "tableOrder": [0, 1, 2, 3], "deals": 1, "maxBidsPerDeal": 12, "talk": False,
    }  # fmt: skip


# Dice, 4 seats, table order 0 1 2 3: 15 unseen dice at p = 1/6. A facing's worth is
# v = max(0, 1 - 2 P(X >= need)); need <= 2 is worth 0 (band 0); need 6 and 7 are worth
# V6 = 1 - 2 x 0.0274 = 0.9452 and V7 = 1 - 2 x 0.0066 = 0.9868, both in band 10.
V6 = 1 - 2 * tail(15, 6, Fraction(1, 6))
V7 = 1 - 2 * tail(15, 7, Fraction(1, 6))

# Log 1: seats P Q R R. P opens 2x1; Q (no 1s: need 2, band 0) raises 2x3; R (three 3s)
# raises 3x3; the second R (one 3: need 2, band 0) raises 7x6; P (no 6s: need 7, band 10)
# challenges: 6s are 2 + 3 = 5 < 7, P wins.
LOG1 = [
    header(["P", "Q", "R", "R"]),
    deal(0, 0, [[1, 1, 2, 3, 4], [2, 2, 5, 6, 6], [3, 3, 3, 4, 5], [6, 6, 6, 3, 2]]),
    bid(0, 0, 2, 1),
    bid(0, 1, 2, 3),
    bid(0, 2, 3, 3),
    bid(0, 3, 7, 6),
    challenge(0, 0, 3, 7, 6, 5, 0, 3),
    result([1, 0, 0, -1], 1),
]
# Log 2: seats Q P R R. Q opens 7x6; P (no 6s: need 7, band 10) waves it through with 8x1,
# forgoing V7; R (no 1s) challenges 8x1: 1s are 1 + 2 = 3 < 8, R wins.
LOG2 = [
    header(["Q", "P", "R", "R"]),
    deal(0, 0, [[1, 2, 3, 4, 5], [1, 1, 2, 2, 3], [4, 4, 4, 4, 6], [5, 5, 5, 6, 6]]),
    bid(0, 0, 7, 6),
    bid(0, 1, 8, 1),
    challenge(0, 2, 1, 8, 1, 3, 2, 1),
    result([0, -1, 1, 0], 1),
]
# Log 3: seats P P Q R. P opens 6x6; the other P (no 6s: need 6, band 10) waves it through
# with 7x1, forgoing V6; Q (five 1s: need 2, band 0) challenges 7x1: 1s are 1 + 1 + 5 = 7,
# true, the second P wins.
LOG3 = [
    header(["P", "P", "Q", "R"]),
    deal(0, 0, [[6, 6, 1, 2, 3], [1, 2, 3, 4, 5], [1, 1, 1, 1, 1], [2, 3, 4, 5, 6]]),
    bid(0, 0, 6, 6),
    bid(0, 1, 7, 1),
    challenge(0, 2, 1, 7, 1, 7, 1, 2),
    result([0, 1, -1, 0], 1),
]
# Pooled by policy (keys in order P, Q, R):
#   P faced P once (V6, waved), Q once (V7, waved), R once (band 10, challenged: 0).
#     All three in band 10: P's band-10 rate (V6 + V7) / 3 is its field and its expected
#     rate against everyone. bias[P][P] = V6 - (V6 + V7) / 3 = 0.3012,
#     bias[P][Q] = V7 - (V6 + V7) / 3 = 0.3428, bias[P][R] = -(V6 + V7) / 3 = -0.6440.
#   Q faced P twice (logs 1 and 3, band 0): nothing to forgo, field 0, bias 0.
#   R faced Q, R (log 1) and P (log 2, challenged): all worth 0 or challenged, bias 0.
BASE = (V6 + V7) / 3


def hand_pool() -> dict:
    return pooled_audit(logged_facings_from(LOG1, LOG2, LOG3), Thresholds(1, 0.3, 0.33))


def logged_facings_from(*logs):
    return [EpisodeFacings.from_records(log) for log in logs]


def test_the_hand_pool_sums_facings_by_policy():
    report = hand_pool()
    assert report["policies"] == ["P", "Q", "R"]
    assert report["faced"] == [[1, 1, 1], [2, 0, 0], [1, 1, 1]]
    assert report["expLoss"] == [
        [pytest.approx(V6), pytest.approx(V7), 0.0],
        [0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0],
    ]
    assert report["field"] == [pytest.approx(BASE), 0.0, 0.0]


def test_the_hand_pool_biases_are_against_each_policys_own_band_rates():
    report = hand_pool()
    assert report["expected"][0] == [pytest.approx(BASE)] * 3
    assert report["bias"] == [
        [pytest.approx(0.3012, abs=1e-4), pytest.approx(0.3428, abs=1e-4), pytest.approx(-BASE)],
        [0.0, None, None],
        [0.0, 0.0, 0.0],
    ]
    assert report["bias"][0][0] == pytest.approx(V6 - BASE)


def test_a_same_policy_pair_is_one_cell_for_both_directions_of_soft_play():
    # bias[P][P] = 0.3012 clears 0.3: two copies of P going easy on each other is soft
    # play. bias[P][Q] = 0.3428 clears the one-way 0.33; bias[Q][P] = 0, so {P, Q} is
    # no soft play, and P -> P (0.3012) does not clear 0.33.
    report = hand_pool()
    assert [(f["flag"], f["policies"], f["faced"]) for f in report["flags"]] == [
        ("soft-play", ["P", "P"], [1, 1]),
        ("waves-through", ["P", "Q"], [1]),
    ]
    assert report["flags"][0]["bias"] == [pytest.approx(V6 - BASE)] * 2
    # Bars just above the biases flag nothing; so does a minimum of two facings.
    quiet = by_policy_flags(Thresholds(1, 0.31, 0.35)) + by_policy_flags(Thresholds(2, 0.0, 0.01))
    assert quiet == []


def by_policy_flags(thresholds):
    return pooled_audit(logged_facings_from(LOG1, LOG2, LOG3), thresholds)["flags"]


def test_the_hand_pool_power():
    # Pairs that shared a table: P-P (log 3), P-Q, P-R, Q-P, Q-R, R-P, R-Q, R-R (logs 1, 2);
    # never Q-Q. Faced: P->P, P->Q, P->R, Q->P (2), R->Q, R->R, R->P. Decisions 5 + 3 + 3.
    assert hand_pool()["power"] == {
        "episodes": 3,
        "decisions": 11,
        "deals": 3,
        "pairsFaced": 7,
        "pairs": 8,
        "facingsMin": 1,
        "facingsMedian": 1,
        "minFacings": 1,
    }


def test_the_pooled_defaults_are_the_calibrated_pooled_bars():
    assert pooled_audit(logged_facings_from(LOG1))["power"]["minFacings"] == POOLED.min_facings
    assert POOLED != CALIBRATED


def table(
    seed: int, deals: int = 6, specs=("colluder", "bayes", "pressure", "random"), mode="dice"
):
    request = EpisodeRequest(
        mode=mode, seed=seed, deals=deals, seat_specs=tuple(SeatSpec.parse(s) for s in specs)
    )
    return request


@settings(max_examples=15)
@given(seed=st.integers(0, 2**32 - 1), mode=st.sampled_from(["dice", "poker"]))
def test_one_episode_pooled_by_slot_is_the_per_episode_audit_exactly(host, seed, mode):
    results, records = run_episode(host, table(seed, mode=mode), environ={})
    for episode in (EpisodeFacings.from_records(records), EpisodeFacings.from_results(
            results.to_json())):  # fmt: skip
        facings = by_slot(episode)
        assert facings.field == results.audit["field"]
        assert facings.bias == results.audit["bias"]
        assert flags(facings, CALIBRATED) == results.audit["flags"]
        assert power(facings, CALIBRATED) == results.audit["power"]


@pytest.fixture(scope="module")
def mixed_episodes(host):
    """Six short episodes of mixed tables, two colluders among them."""
    tables = [
        ("colluder", "bayes", "colluder", "random"),
        ("pressure", "random", "bayes", "bayes"),
        ("random", "colluder", "pressure", "colluder"),
        ("bayes", "pressure", "random", "pressure"),
        ("colluder", "colluder", "bayes", "random"),
        ("random", "random", "pressure", "bayes"),
    ]
    return [
        EpisodeFacings.from_records(run_episode(host, table(s, 8, t), environ={})[1])
        for s, t in enumerate(tables)
    ]


@settings(max_examples=25)
@given(order=st.permutations(range(6)))
def test_pooling_does_not_depend_on_the_order_of_the_logs(mixed_episodes, order):
    # The forgone sums are exactly rounded (fsum), so any order gives the same bytes.
    pooled = json.dumps(pooled_audit(mixed_episodes))
    assert json.dumps(pooled_audit([mixed_episodes[i] for i in order])) == pooled


LEAGUE = LeagueSpec(
    entrants=pool_entrants(
        SeatSpec.parse(s) for s in ("colluder", "colluder", "bayes", "pressure", "random")
    ),
    schedule="random",
    tables=6,
    seed=9,
    table=EpisodeRequest(deals=8),
)


@pytest.fixture(scope="module")
def league(host, tmp_path_factory):
    """A league in its SQLite store, and every one of its episodes replayed to a log."""
    folder = tmp_path_factory.mktemp("league")
    store = LeagueStore(folder / "league.sqlite")
    try:
        run_league(LEAGUE, store, host)
    finally:
        store.close()
    logs = []
    for fixture in schedule(LEAGUE):
        logs.append(folder / f"episode-{fixture.index}.jsonl")
        run_episode(host, fixture.request, log_path=logs[-1], environ={})
    return folder / "league.sqlite", logs


def test_pooling_a_league_equals_pooling_its_episodes_logs(league, host):
    db, logs = league
    reporters = host.registry.reporters.values()
    from_store = run_pooled(reporters, league_results(db))["flags"]
    logged = logged_episodes(reporters, [load_checked(path) for path in logs])
    assert from_store == run_pooled(reporters, logged)["flags"]
    # ... and both equal the flags plugin's own pooling of the logs' facings.
    by_hand = [EpisodeFacings.from_records(read_log(path)) for path in logs]
    assert from_store == json.loads(json.dumps(pooled_audit(by_hand)))
    assert from_store["power"]["episodes"] == 6


def pooled_league(host, mode: str, pool: tuple[str, ...]) -> dict:
    """A 20-table league of 20-deal episodes (seed 31), pooled by policy."""
    spec = LeagueSpec(
        entrants=pool_entrants(SeatSpec.parse(s) for s in pool),
        schedule="random",
        tables=20,
        seed=31,
        table=EpisodeRequest(mode=mode, deals=20),
    )
    return pooled_audit(
        [
            EpisodeFacings.from_records(run_episode(host, fixture.request, environ={})[1])
            for fixture in schedule(spec)
        ]
    )


@pytest.mark.parametrize("mode", ["dice", "poker"])
def test_a_planted_team_is_flagged_and_the_same_league_played_honestly_is_not(host, mode):
    # The same schedule (seeds, hands, table orders, seats): a colluding team at every
    # table, then the team's two seats played by bayes instead.
    planted = pooled_league(host, mode, ("colluder", "colluder", "bayes", "pressure"))
    honest = pooled_league(host, mode, ("bayes", "bayes", "bayes", "pressure"))
    team = [f for f in planted["flags"] if f["policies"] == ["colluder", "colluder"]]
    assert team and team[0]["flag"] == "soft-play"
    assert team[0]["bias"][0] > 2 * POOLED.soft_play  # a wide margin, not a near miss
    assert honest["flags"] == []
    assert max(b for row in honest["bias"] for b in row if b is not None) < POOLED.soft_play / 2


def run_cli(*args: str, capsys) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_arena_audit_pools_several_logs_and_a_league_as_json(league, capsys):
    db, logs = league
    code, out, _ = run_cli("audit", *map(str, logs), "--json", capsys=capsys)
    assert code == 0
    pooled = json.loads(out)
    by_hand = [EpisodeFacings.from_records(read_log(path)) for path in logs]
    assert pooled["flags"] == json.loads(json.dumps(pooled_audit(by_hand)))
    assert set(pooled) == {"flags", "decisions"}  # the two reporters that pool
    code, out, _ = run_cli("audit", "--league", str(db), "--json", capsys=capsys)
    assert code == 0 and json.loads(out) == pooled


def test_arena_audit_prints_a_readable_pooled_table(league, capsys):
    _, logs = league
    code, out, _ = run_cli("audit", *map(str, logs[:3]), capsys=capsys)
    assert code == 0
    assert "== flags, pooled over 3 episodes" in out
    assert "per ordered pair (a faces b's bids)" in out and "per seat" in out
    # rich centres a table's title (padded to the table's width before rich 15): a line
    # that is the title alone, whatever its padding
    assert "colluder" in out and "power" in [line.strip() for line in out.splitlines()]
    assert "{" not in out


@pytest.mark.parametrize(
    "content, expected",
    [
        ("not json\n", "{bad}:1: not a valid event"),
        (None, "{bad}: cannot read event log"),
    ],
)
def test_a_corrupt_log_among_several_is_one_line_naming_it(league, tmp_path, capsys, content,
                                                           expected):  # fmt: skip
    _, logs = league
    bad = tmp_path / "bad.jsonl"
    if content is not None:
        bad.write_text(content)
    code, out, err = run_cli("audit", str(logs[0]), str(bad), str(logs[1]), capsys=capsys)
    assert code == 2 and out == ""
    assert err.startswith("arena: error: ") and expected.format(bad=bad) in err
    assert err.count("\n") == 1


def test_a_league_file_that_is_missing_or_not_a_league_is_one_line(tmp_path, capsys):
    missing = tmp_path / "missing.sqlite"
    code, _, err = run_cli("audit", "--league", str(missing), capsys=capsys)
    assert code == 2 and err == f"arena: error: {missing}: no such league database\n"
    assert not missing.exists()  # only read, never created
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE t (x)")
    code, _, err = run_cli("audit", "--league", str(other), capsys=capsys)
    assert code == 2 and "not a league database" in err and err.count("\n") == 1


def test_a_league_played_without_the_audit_is_refused_naming_the_episode(league, tmp_path,
                                                                         capsys):  # fmt: skip
    db, _ = league
    stripped = tmp_path / "stripped.sqlite"
    stripped.write_bytes(db.read_bytes())
    with sqlite3.connect(stripped) as conn:
        text = conn.execute("SELECT results FROM episodes WHERE idx = 2").fetchone()[0]
        results = json.loads(text)
        del results["audit"]["bands"]
        conn.execute("UPDATE episodes SET results = ? WHERE idx = 2", (json.dumps(results),))
    code, _, err = run_cli("audit", "--league", str(stripped), capsys=capsys)
    assert code == 2
    assert err == (
        f"arena: error: {stripped}: pooled audit failed (flags: error: ValueError: "
        "episode 2 has no results.audit.bands (played without the audit reporters))\n"
    )


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "give one or more event logs, or --league DB"),
        (["a.jsonl", "--league", "l.sqlite"], "give one or more event logs, or --league DB"),
        (["a.jsonl", "b.jsonl", "--append"], "--append rewrites a single LOG"),
    ],
)
def test_audit_usage_errors_are_one_line(args, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["audit", *args])
    assert exit_.value.code == 2
    assert capsys.readouterr().err == f"arena: error: {message} (arena audit)\n"
