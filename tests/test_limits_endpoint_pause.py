"""A 429 pauses the seats of its endpoint (origin and key), and no other (issue 39, item 3).

The unit tests pin what names an endpoint on a pause board, and that the key itself never
reaches one. The league tests run a real league, in threads, in worker processes and as
tasks of a private local Ray instance (where the ray extra is installed), with
two entrants on two loopback chat servers: A, whose first request is answered 429 with
``retry-after: 4``, and B, always answered. The league's seed seats A with A and B with B
(two tables, drawn with repeats), so a table of B never waits on a turn of A. B's server
holds B's first request until A's 429 is sent, so B's whole table falls after it. Then:

- A's server receives nothing within the 4 s it asked for;
- B's server receives, within those 4 s, every request of B's table, as many as a league
  where A is never told to wait makes. Under the league-wide pause this replaced, B made
  one (the held one) and the rest waited out A's 4 s.
"""

from __future__ import annotations

import importlib.util
import threading
import time

import attrs
import pytest
from chat_server import ChatServer, rate_limited, table_player
from league_runs import play
from openai_tables import offline  # noqa: F401  (autouse: no key, no base URL)

from arena.league.config import Entrant, LeagueSpec
from arena.league.schedule import table_draws
from arena.limits import Limiter, Pause, SharedPause, endpoint_key
from arena.runner import EpisodeRequest
from arena.seats import SeatSpec
from arena_plugins.model_seat.retries import endpoint_at

KEY = "sk-live-0123456789abcdef"
SALT = b"s" * 16


def key_of(url: str, key: str | None = KEY, salt: bytes = SALT) -> int:
    return endpoint_key(endpoint_at(url, key), salt)


def test_the_same_origin_and_key_is_one_endpoint_however_the_url_is_written():
    # scheme and host are case-blind, 443 is https's own port, the path is not the origin
    assert key_of("https://api.example.com/v1") == key_of("HTTPS://API.example.com:443/other")


@pytest.mark.parametrize(
    "other",
    [
        ("https://api.example.com:8443/v1", KEY),  # another port
        ("http://api.example.com/v1", KEY),  # another scheme (and so port 80)
        ("https://eu.api.example.com/v1", KEY),  # another host
        ("https://api.example.com/v1", KEY + "x"),  # another key
        ("https://api.example.com/v1", None),  # no key at all
    ],
    ids=["port", "scheme", "host", "key", "no key"],
)
def test_another_port_scheme_host_or_key_is_another_endpoint(other):
    assert key_of(*other) != key_of("https://api.example.com/v1")


def test_another_boards_salt_names_the_same_endpoint_otherwise():
    # a league's names cannot be looked up from another's (or precomputed for a known key)
    assert key_of("https://api.example.com", salt=b"t" * 16) != key_of("https://api.example.com")


def test_an_endpoints_repr_never_shows_its_key():
    assert KEY not in repr(endpoint_at("https://api.example.com", KEY))


@pytest.mark.parametrize("board", [Pause(), SharedPause(2).slot(1)], ids=["Pause", "SharedPause"])
def test_a_paused_key_never_reaches_the_board(board):
    Limiter(pause=board).pause(30.0, endpoint_at("https://api.example.com", KEY))
    held = repr(vars(board)).encode()  # a Pause's dict of deadlines is all of its state
    if isinstance(board, SharedPause):
        held += bytes(board._endpoints) + bytes(board._deadlines)  # the shared memory, whole
    for form in (KEY.encode(), KEY.encode("utf-16-le"), KEY[-8:].encode()):
        assert form not in held
    # what it holds is the endpoint's keyed hash: paused there, and nowhere else
    limiter = Limiter(pause=board)
    assert limiter.paused_until(endpoint_at("https://api.example.com", KEY)) > time.time()
    assert limiter.paused_until(endpoint_at("https://api.example.com", "other")) == 0.0


# --- a league with two endpoints ---------------------------------------------------------

PAUSE = 4.0
"""Seconds A's 429 asks for: ample for B's table of about 20 loopback requests."""
KIND = "vllm"
RAY = importlib.util.find_spec("ray") is not None
PLACEHOLDER = SeatSpec.parse("bayes")


def league(a: SeatSpec, b: SeatSpec) -> LeagueSpec:
    """Two tables, A with A and B with B: the first seed whose draws (a pure function of
    the seed and the entrant count) seat no table with both."""
    spec = LeagueSpec(
        entrants=(Entrant("a", PLACEHOLDER), Entrant("b", PLACEHOLDER)),
        tables=2,
        schedule="random",
        allow_repeat=True,
        table=EpisodeRequest(seats=2, deals=2),
        concurrency=2,
    )
    seed = next(
        s
        for s in range(1000)
        if sorted(sorted(picks) for picks, _ in table_draws(attrs.evolve(spec, seed=s)))
        == [[0, 0], [1, 1]]
    )
    return attrs.evolve(spec, seed=seed, entrants=(Entrant("a", a), Entrant("b", b)))


def seat_on(server: ChatServer) -> SeatSpec:
    return SeatSpec.parse(f"openai:honest?model={server.kind.models[0]}&base_url={server.url}/v1")


def run(tmp_path, host, executor: str, tell_a: bool) -> tuple[list[float], list[float], float]:
    """Play the league; the arrivals at A's server and the times B's requests were let
    through, and when A's 429 was sent (``time.monotonic()``; 0 when not told)."""
    play_a, play_b = table_player(), table_player()
    told = threading.Event()
    sent = [0.0]
    served_b: list[float] = []
    lock = threading.Lock()
    untold = [tell_a]

    def answer_a(body):
        with lock:
            first, untold[0] = untold[0], False
        if first:
            sent[0] = time.monotonic()
            told.set()
            return rate_limited(retry_after=f"{PAUSE:g}")
        return play_a(body)

    def answer_b(body):
        if tell_a:
            told.wait(60)  # not told in time: B's requests fall before the window, and fail
        served_b.append(time.monotonic())
        return play_b(body)

    with ChatServer(KIND, answer_a) as a, ChatServer(KIND, answer_b) as b:
        state = play(tmp_path / "l.sqlite", league(seat_on(a), seat_on(b)), host, executor)
    assert state.done == 2
    return [r.arrived for r in a.requests], served_b, sent[0]


@pytest.fixture(scope="module")
def unpaused_b(tmp_path_factory, host) -> int:
    """How many requests B's table makes when A is never told to wait."""
    _, served_b, _ = run(tmp_path_factory.mktemp("unpaused"), host, "thread", tell_a=False)
    return len(served_b)


@pytest.mark.slow
@pytest.mark.parametrize(
    "executor",
    [
        "thread",
        "process",
        pytest.param("ray", marks=pytest.mark.skipif(not RAY, reason="the ray extra")),
    ],
)
def test_a_429_pauses_its_endpoint_and_the_other_keeps_its_pace(
    tmp_path, host, executor, unpaused_b
):
    arrived_a, served_b, sent = run(tmp_path, host, executor, tell_a=True)
    # A asked again, but not before its 4 s were up
    assert len(arrived_a) > 1
    assert [t - sent for t in arrived_a if sent < t < sent + PAUSE] == []
    # B's table played through A's pause: every request it makes, let through in the window
    in_window = [t for t in served_b if sent <= t < sent + PAUSE]
    assert unpaused_b > 2  # a table of 2 deals asks B's seats more than twice
    assert len(in_window) == len(served_b) == unpaused_b
