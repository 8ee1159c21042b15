"""Properties that hold over random seeds, seat mixes, modes, table sizes and caps.

Every episode is replayed by the independent referee (``tests/referee.py``),
which checks every bid's legality, turn order, forced challenges, each count,
winner and score, rule 11's marks and that bayes/pressure seats and every
fallback play their rulebook line. The mix includes ``misbehaving``, which
breaks rule 11 on purpose, so the retry and fallback paths run constantly.
Episodes also end early (``episode_strategies.ended_requests``), as a person leaving
(``quit``, which may end a deal in progress) or the clock (``deadline``, at a deal
boundary) does.
"""

from __future__ import annotations

import json

import pytest
from episode_strategies import ENDINGS, SEATS, ended_requests, requests
from hypothesis import event, given, settings
from hypothesis import strategies as st
from referee import replay

from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatSpec

NO_ENV: dict[str, str] = {}  # PLAYER_SCRIPTED unset: unfilled seats are bayes


def play(host, request, ending=None):
    seats = ending.seats(host) if ending is not None else None
    results, records = run_episode(host, request, environ=NO_ENV, local_seats=seats)
    return results, records


@pytest.mark.slow
@pytest.mark.parametrize("status", ENDINGS)
@settings(max_examples=50)
@given(data=st.data())
def test_every_episode_replays_through_the_referee(misbehaving_host, status, data):
    request, ending = data.draw(ended_requests(status))
    results, records = play(misbehaving_host, request, ending)
    summary = replay(records, results.to_json())
    assert sum(results.points) == 0
    assert abs(sum(results.score) / request.seats - 0.5) < 1e-12
    assert all(n <= request.max_bids + 1 for n in summary.decisions_per_deal)
    # Played out, or ended early the way the ending says: a quit or a deadline is only
    # ever a status of an episode short of its deals (slot 0 may not reach its ask).
    full = summary.deals_played == request.deals
    event(f"{ending.status} ended {summary.status}")
    assert summary.status == ("complete" if full else ending.status)
    if ending.status == "complete":
        assert full
    if summary.status == "quit":  # the person left at their ask: nothing after it
        end = next(i for i, r in enumerate(records) if r["type"] == "result")
        assert records[end - 1]["type"] in ("deal", "bid", "rejected", "fault", "usage")


@settings(max_examples=40)
@given(requests())
def test_the_same_seed_gives_the_same_log_and_results(misbehaving_host, request):
    first_results, first = play(misbehaving_host, request)
    second_results, second = play(misbehaving_host, request)
    assert json.dumps(list(first)) == json.dumps(list(second))
    assert json.dumps(first_results.to_json()) == json.dumps(second_results.to_json())


@settings(max_examples=40)
@given(requests(), st.lists(st.sampled_from(SEATS), max_size=8), st.integers(1, 14))
def test_table_order_and_hands_depend_only_on_the_seed(misbehaving_host, request, names, cap):
    # Same seed, table size and mode; other seats, cap and talk: same order, same hands.
    other = EpisodeRequest(
        mode=request.mode,
        seed=request.seed,
        deals=request.deals,
        seats=request.seats,
        seat_specs=tuple(SeatSpec(n) for n in names[: request.seats]),
        max_bids=cap,
        talk=not request.talk,
    )
    _, a = play(misbehaving_host, request)
    _, b = play(misbehaving_host, other)
    assert a[0]["tableOrder"] == b[0]["tableOrder"]
    assert [r["hands"] for r in a if r["type"] == "deal"] == [
        r["hands"] for r in b if r["type"] == "deal"
    ]


@settings(max_examples=15)
@given(requests(), requests())
def test_an_episodes_log_does_not_depend_on_what_ran_before_it(misbehaving_host, a, b):
    # A then B in this process, against B then A: each episode's log is the same.
    a_first, b_second = play(misbehaving_host, a)[1], play(misbehaving_host, b)[1]
    b_first, a_second = play(misbehaving_host, b)[1], play(misbehaving_host, a)[1]
    assert a_first == a_second
    assert b_first == b_second


@settings(max_examples=20)
@given(request=requests(deals=st.integers(1, 3)))
def test_the_saved_log_is_the_emitted_log(misbehaving_host, tmp_path_factory, request):
    path = tmp_path_factory.mktemp("log") / "episode.jsonl"
    _, records = run_episode(misbehaving_host, request, log_path=path, environ=NO_ENV)
    lines = path.read_bytes().decode("utf-8").split("\n")
    assert lines[-1] == ""  # newline-terminated, one event a line
    assert [json.loads(line) for line in lines[:-1]] == records
