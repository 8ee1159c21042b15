"""Leagues with Claude seats over the loopback Messages API: concurrency, limits, stand-ins.

Each run gets its own server: the server's prompt cache, like the API's, makes
cache read/write counts depend on which request came first, so token counts
are compared only where the order is fixed (serial); scores, points, moves and
the standings must not depend on the concurrency at all.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time

import attrs
import genai_prices
import numpy as np
import pytest
from claude_tables import offline  # noqa: F401  (autouse: no key, closed loopback URL)
from genai_prices import Usage, calc_price
from league_runs import play, play_until_interrupted
from messages_server import Fail, MessagesServer, table_player, text

from arena import limits as limiter
from arena.league.config import Budget, Entrant, LeagueError, LeagueSpec
from arena.league.report import league_report
from arena.league.store import episode_log_text, open_read_only
from arena.limits import Limiter, Limits
from arena.runner import EpisodeRequest
from arena.seats import SeatSpec
from arena_plugins.claude.client import create_message, make_client
from arena_plugins.claude.settings import RetryBounds

pytestmark = pytest.mark.slow

ENTRANTS = (
    Entrant("honest", SeatSpec.parse("claude:honest")),
    Entrant("bluffer", SeatSpec.parse("claude:bluffer?model=claude-haiku-4-5")),
    Entrant("bayes", SeatSpec.parse("bayes")),
    Entrant("pressure", SeatSpec.parse("pressure")),
)
LEAGUE = LeagueSpec(
    entrants=ENTRANTS, tables=2, seed=5, duplicate=True, table=EpisodeRequest(deals=3, talk=True)
)


@pytest.fixture(autouse=True)
def unlimited():
    limiter.configure(Limits())
    yield
    limiter.configure(Limits())


def serve(monkeypatch, server: MessagesServer) -> MessagesServer:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("ARENA_CLAUDE_BACKOFF", "0.01")
    return server


def moves(path) -> list:
    """Every seat's scores and every log line but the token accounting."""
    db = open_read_only(path)
    try:
        seats = list(db.execute("SELECT idx, slot, entrant, points, score, fallbacks FROM seats"))
        logs = [
            [
                line
                for line in episode_log_text(db, idx).splitlines()
                if '"type":"usage"' not in line
            ]
            for (idx,) in db.execute("SELECT idx FROM episodes ORDER BY idx")
        ]
    finally:
        db.close()
    return sorted(seats) + logs


def test_claude_tables_in_threads_play_what_serial_plays(tmp_path, host, monkeypatch):
    with serve(monkeypatch, MessagesServer(table_player())) as server:
        state = play(tmp_path / "serial.sqlite", LEAGUE, host)
        serial_requests = len(server.requests)
    with serve(monkeypatch, MessagesServer(table_player())):
        threaded = attrs.evolve(LEAGUE, concurrency=8)
        play(tmp_path / "threads.sqlite", threaded, host, "thread")
    assert moves(tmp_path / "serial.sqlite") == moves(tmp_path / "threads.sqlite")
    serial, threads = (league_report(tmp_path / f"{n}.sqlite") for n in ("serial", "threads"))
    assert serial["standings"] == threads["standings"]
    assert serial["headToHead"] == threads["headToHead"]
    # Cost: every Claude call was counted; the price is per model (haiku for bluffer).
    cost = serial["cost"]
    assert state.done == 8 and serial_requests > 0
    assert cost["usd"] == pytest.approx(state.usd) and cost["usd"] > 0
    assert cost["byEntrant"]["bayes"]["usd"] == 0.0
    bluffer = cost["byEntrant"]["bluffer"]["tokens"]
    # claude-haiku-4-5: 1 / 5 / 0.10 / 1.25 dollars per million tokens by kind
    expected = (
        bluffer["input"] * 1
        + bluffer["output"] * 5
        + bluffer["cacheRead"] * 0.1
        + bluffer["cacheWrite"] * 1.25
    ) / 1e6
    assert cost["byEntrant"]["bluffer"]["usd"] == pytest.approx(expected)
    # league show's cache-read share: reads over every prompt token (plain, read, written)
    prompt = bluffer["input"] + bluffer["cacheRead"] + bluffer["cacheWrite"]
    assert bluffer["cacheRead"] > 0
    assert cost["byEntrant"]["bluffer"]["cacheReadShare"] == pytest.approx(
        bluffer["cacheRead"] / prompt, abs=5e-5
    )
    assert cost["byEntrant"]["bayes"]["cacheReadShare"] is None  # no prompts at all


def test_a_budget_stops_the_league_before_it_would_be_passed_and_resumes(
    tmp_path, host, monkeypatch
):
    def fresh(path, league):  # a fresh server each time: a warm prompt cache costs less
        with serve(monkeypatch, MessagesServer(table_player())):
            return play(path, league, host)

    whole = fresh(tmp_path / "whole.sqlite", LEAGUE)
    # Half the whole league's cost: before each episode the league projects it at the
    # mean cost so far and starts it only if the projected total stays within the
    # budget. Serial and with a fresh server the episodes cost the same as in the
    # whole run, which climb evenly here, so the spend stops short of the budget.
    budget = attrs.evolve(LEAGUE, budget=Budget(usd=whole.usd / 2))
    cut = fresh(tmp_path / "cut.sqlite", budget)
    assert cut.stopped == "budget" and 0 < cut.done < whole.done
    assert cut.usd <= whole.usd / 2
    again = fresh(tmp_path / "cut.sqlite", budget)  # the same budget: nothing new starts
    assert again.done == cut.done and again.stopped == "budget"
    done = fresh(tmp_path / "cut.sqlite", LEAGUE)  # no budget: the rest
    assert done.done == whole.done and done.stopped is None
    assert moves(tmp_path / "cut.sqlite") == moves(tmp_path / "whole.sqlite")


def test_claude_entrants_without_a_key_are_refused_unless_stand_ins_are_allowed(tmp_path, host):
    with pytest.raises(LeagueError, match=r"no ANTHROPIC_API_KEY: claude entrants \(honest, "):
        play(tmp_path / "l.sqlite", LEAGUE, host)
    with sqlite3.connect(tmp_path / "l.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM league").fetchone() == (0,)


def test_stand_in_episodes_are_never_pooled_with_real_ones(tmp_path, host, monkeypatch):
    # The story: run without a key (on purpose), stop, resume with a key.
    play_until_interrupted(tmp_path / "l.sqlite", LEAGUE, host, 2, allow_stand_in=True)
    with serve(monkeypatch, MessagesServer(table_player())):
        play(tmp_path / "l.sqlite", LEAGUE, host)
    names = {row["entrant"]: row for row in league_report(tmp_path / "l.sqlite")["standings"]}
    assert names["honest (stand-in)"]["standIn"] and not names["honest"]["standIn"]
    assert names["honest (stand-in)"]["episodes"] == 2  # both stored before the stop
    assert names["honest"]["episodes"] == 6
    with sqlite3.connect(tmp_path / "l.sqlite") as db:
        assert db.execute("SELECT SUM(stand_in) FROM episodes").fetchone() == (2,)


def test_the_in_flight_cap_holds_over_the_whole_league(tmp_path, host, monkeypatch):
    play_legally = table_player()
    lock, now, most = threading.Lock(), [0], [0]

    def counting(body):
        with lock:
            now[0] += 1
            most[0] = max(most[0], now[0])
        time.sleep(0.03)
        with lock:
            now[0] -= 1
        return play_legally(body)

    limited = attrs.evolve(LEAGUE, concurrency=8, api_limits=Limits(max_in_flight=2))
    with serve(monkeypatch, MessagesServer(counting)):
        play(tmp_path / "l.sqlite", limited, host, "thread")
    assert most[0] == 2  # 8 tables in flight, never more than 2 requests at the server


def test_a_429_with_retry_after_holds_every_seat_not_only_the_one_told(monkeypatch):
    # Seat A's first request gets 429 retry-after 0.6 s. Seat B asks once A has been
    # told (not after a fixed sleep, which a loaded machine can outrun), on its own:
    # without the shared pause its request would reach the server at once; with it,
    # no request reaches the server before 0.6 s after the 429.
    bounds = RetryBounds(timeout=5, attempts=3, total=10, backoff=0.01)
    told_a = threading.Event()
    pause = limiter.LIMITER.pause

    def pause_and_tell(seconds: float, endpoint) -> None:
        pause(seconds, endpoint)
        told_a.set()

    monkeypatch.setattr(limiter.LIMITER, "pause", pause_and_tell)
    with MessagesServer(lambda body: text("ok")) as server:
        server.push(Fail(429, "rate_limit_error", retry_after="0.6"))
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        request = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "x"}]}

        answered = []

        def ask():
            client = make_client("k", bounds)  # the process's shared client: not closed here
            answered.append(create_message(client, request, bounds, np.random.default_rng(0)))

        first = threading.Thread(target=ask)
        first.start()
        assert told_a.wait(10)
        ask()
        first.join()
    told = server.requests[0].arrived
    assert len(answered) == 2 and len(server.requests) == 3
    assert all(r.arrived - told >= 0.55 for r in server.requests[1:])


def test_requests_per_minute_are_spread_over_the_window():
    # 2 requests a minute: two start at once, the third waits until the first is
    # a minute old. The clock is ours, so "a minute" passes when we say so.
    clock = [1000.0]
    limits = Limiter(Limits(requests_per_minute=2), clock=lambda: clock[0])
    for _ in range(2):
        with limits.request():
            pass
    started = threading.Event()

    def third():
        with limits.request():
            started.set()

    waiting = threading.Thread(target=third)
    waiting.start()
    assert not started.wait(0.6)
    clock[0] += 60.0
    assert started.wait(2)
    waiting.join()


# --- prices from genai-prices -------------------------------------------------------------

OPUS = "claude-opus-4-7"
SMALL = dict(tables=2, seed=5, table=EpisodeRequest(deals=2))
SCRIPTED_FILL = (
    Entrant("bayes", SeatSpec.parse("bayes")),
    Entrant("pressure", SeatSpec.parse("pressure")),
    Entrant("random", SeatSpec.parse("random")),
)


def genai_prices_by_model(path) -> dict[str, float]:
    """Each model's dollars as genai-prices' own calc_price makes them, from the tokens each
    stored seat's results report (not from the store's usd column)."""
    db = open_read_only(path)
    try:
        models = dict(
            ((idx, slot), model)
            for idx, slot, model in db.execute("SELECT idx, slot, model FROM seats")
        )
        episodes = [
            (idx, json.loads(r)) for idx, r in db.execute("SELECT idx, results FROM episodes")
        ]
    finally:
        db.close()
    totals: dict[str, dict[str, int]] = {}
    for idx, results in episodes:
        for seat in results["seats"]:
            model = models[idx, seat["slot"]]
            if model is None:
                continue
            total = totals.setdefault(model, dict.fromkeys(USAGE, 0))
            for key in USAGE:
                total[key] += (seat.get("usage") or {}).get(key, 0)
    return {
        model: float(
            calc_price(
                Usage(
                    # genai-prices' input includes the cached parts; the API's does not.
                    input_tokens=t["inputTokens"] + t["cacheReadTokens"] + t["cacheWriteTokens"],
                    output_tokens=t["outputTokens"],
                    cache_read_tokens=t["cacheReadTokens"],
                    cache_write_tokens=t["cacheWriteTokens"],
                    cache_write_1h_tokens=t["cacheWrite1hTokens"],
                ),
                model,
                provider_id="anthropic",
            ).total_price
        )
        for model, t in totals.items()
    }


USAGE = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "cacheWrite1hTokens")


def test_a_league_on_claude_opus_4_7_is_priced_from_genai_prices(tmp_path, host, monkeypatch):
    league = LeagueSpec(
        entrants=(Entrant("opus", SeatSpec.parse(f"claude:honest?model={OPUS}")), *SCRIPTED_FILL),
        **SMALL,
    )
    with serve(monkeypatch, MessagesServer(table_player())):
        play(tmp_path / "l.sqlite", league, host)
    cost = league_report(tmp_path / "l.sqlite")["cost"]
    [priced] = cost["byPrice"]  # one model, one source
    assert (
        priced["model"] == OPUS and priced["source"] == f"genai-prices {genai_prices.__version__}"
    )
    assert priced["tokens"]["total"] > 0 and priced["usd"] > 0
    assert priced["usd"] == pytest.approx(genai_prices_by_model(tmp_path / "l.sqlite")[OPUS])
    assert cost["usd"] == pytest.approx(priced["usd"])  # the scripted seats cost nothing


def test_a_model_switched_mid_league_is_priced_per_model(tmp_path, host, monkeypatch):
    # The entrant names no model, so ARENA_CLAUDE_MODEL picks it: the league stops after
    # its first episode on Sonnet 4.6 and resumes on Haiku 4.5 (the stored settings, which
    # name the entrant's spec, are the same, so the resume is allowed).
    league = LeagueSpec(
        entrants=(Entrant("c", SeatSpec.parse("claude:honest")), *SCRIPTED_FILL), **SMALL
    )

    path = tmp_path / "l.sqlite"
    with serve(monkeypatch, MessagesServer(table_player())):
        monkeypatch.setenv("ARENA_CLAUDE_MODEL", "claude-sonnet-4-6")
        play_until_interrupted(path, league, host, 1)
        monkeypatch.setenv("ARENA_CLAUDE_MODEL", "claude-haiku-4-5")
        play(path, league, host)
    cost = league_report(path)["cost"]
    by_model = {row["model"]: row for row in cost["byPrice"]}
    assert sorted(by_model) == ["claude-haiku-4-5", "claude-sonnet-4-6"]
    theirs = genai_prices_by_model(path)
    for model, row in by_model.items():
        assert row["source"] == f"genai-prices {genai_prices.__version__}"
        assert row["usd"] > 0 and row["usd"] == pytest.approx(theirs[model])
    # One entrant, two models: its cost is both models' own prices together.
    assert cost["byEntrant"]["c"]["usd"] == pytest.approx(sum(theirs.values()))
