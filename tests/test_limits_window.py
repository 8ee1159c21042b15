"""The limiter's 60 s windows kept as running totals (issue 39): the same waits as summing
the window on every call, which it did before.

The reference below is that summing written out: every start and every reply's tokens
kept with its time, the window re-read whole at each check.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from arena.limits import WINDOW, Limiter, Limits


def summed_wait(limits: Limits, now: float, in_flight: int, starts, replies) -> float:
    """The wait as the window's sums say, from every start and reply ever recorded."""
    started = [t for t in starts if t > now - WINDOW]
    tokens = [(t, n) for t, n in replies if t > now - WINDOW]
    waits = [0.0]  # nothing in the windows: start now
    if limits.max_in_flight is not None and in_flight >= limits.max_in_flight:
        waits.append(0.05)
    if limits.requests_per_minute and len(started) >= limits.requests_per_minute:
        waits.append(started[0] + WINDOW - now)
    if limits.tokens_per_minute and sum(n for _, n in tokens) >= limits.tokens_per_minute:
        waits.append(tokens[0][0] + WINDOW - now)
    return max(waits)


STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("advance"), st.floats(0, 70)),
        st.tuples(st.just("start"), st.integers(0, 3000)),
        st.tuples(st.just("end"), st.integers(0, 3000)),
    ),
    max_size=80,
)
LIMITS = st.builds(
    Limits,
    st.one_of(st.none(), st.integers(1, 4)),
    st.one_of(st.none(), st.integers(1, 6)),
    st.one_of(st.none(), st.integers(1, 8000)),
)


@given(LIMITS, STEPS)
def test_the_running_totals_wait_exactly_as_long_as_summing_the_window(limits, steps):
    clock = [1000.0]
    limiter = Limiter(limits, clock=lambda: clock[0])
    starts, replies, open_requests = [], [], []
    for step, value in steps:
        if step == "advance":
            clock[0] += value
        elif step == "start":
            # A start that would wait is not made: the check is how long it would.
            expected = summed_wait(limits, clock[0], limiter.in_flight, starts, replies)
            with limiter._changed:
                assert limiter._wait() == expected
            if expected > 0:
                continue
            request = limiter.request()
            open_requests.append((request, request.__enter__(), value))
            starts.append(clock[0])
        elif open_requests:
            request, used, tokens = open_requests.pop(0)
            used(tokens)
            replies.append((clock[0], tokens))
            request.__exit__(None, None, None)
    with limiter._changed:
        expected = summed_wait(limits, clock[0], limiter.in_flight, starts, replies)
        assert limiter._wait() == expected


def test_a_token_limit_holds_requests_until_its_replies_leave_the_window():
    clock = [1000.0]
    limiter = Limiter(Limits(tokens_per_minute=1000), clock=lambda: clock[0])
    for tokens, at in ((600, 0.0), (500, 10.0)):
        clock[0] = 1000.0 + at
        with limiter.request() as used:
            used(tokens)
    with limiter._changed:
        assert limiter._wait() == 50.0  # until the 600 of t=0 are a minute old
    clock[0] = 1060.0
    with limiter._changed:
        assert limiter._wait() == 0.0  # 500 left in the window: under the limit
