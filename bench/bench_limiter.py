"""The league limiter's cost per request, by how many requests its 60 s window holds.

Issue 39: every request takes a slot from :class:`arena.limits.Limiter`, which used to
sum the tokens of every reply of the last 60 s under its lock, limit or none: 42 us a
call with an empty window and 369 us at 12,000 requests in it, in a league that keeps
hundreds of tables in flight. It now keeps running totals. The baseline, in the same
run and in turn, is a limiter that sums the window as before (``Summing``, below).

Each row fills the window with ``N`` requests (each reporting 100 tokens, all within the
minute), then times 5,000 more, in process CPU time, best of ``--repeat``.

    python bench/bench_limiter.py                     # no limits set, best of 5
    python bench/bench_limiter.py --tokens-per-minute 1e12
"""

from __future__ import annotations

import argparse
import time

from arena.limits import WINDOW, Limiter, Limits

CALLS = 5000


class Summing(Limiter):
    """The limiter as it was: the token window summed on every check."""

    def _wait(self) -> float:
        now, limits = self.clock(), self.limits
        while self._started and self._started[0] <= now - WINDOW:
            self._started.popleft()
        while self._tokens and self._tokens[0][0] <= now - WINDOW:
            self._tokens.popleft()
        waits = [0.0]
        if limits.max_in_flight is not None and self.in_flight >= limits.max_in_flight:
            waits.append(0.05)
        if limits.requests_per_minute and len(self._started) >= limits.requests_per_minute:
            waits.append(self._started[0] + WINDOW - now)
        used = sum(n for _, n in self._tokens)
        if limits.tokens_per_minute and used >= limits.tokens_per_minute:
            waits.append(self._tokens[0][0] + WINDOW - now)
        return max(waits)


def per_call(kind: type[Limiter], limits: Limits, window: int) -> float:
    """CPU seconds a request, with ``window`` requests already in the minute."""
    limiter = kind(limits)
    for _ in range(window):
        with limiter.request() as used:
            used(100)
    start = time.process_time()
    for _ in range(CALLS):
        with limiter.request() as used:
            used(100)
    return (time.process_time() - start) / CALLS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens-per-minute", type=float, default=None)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    limits = Limits(tokens_per_minute=args.tokens_per_minute)
    print(f"limits: {limits}; {CALLS} requests timed, best of {args.repeat}")
    print(f"{'in window':>10} {'summing us':>11} {'running us':>11} {'ratio':>8}")
    for window in (0, 1000, 12000):
        best = {Summing: float("inf"), Limiter: float("inf")}
        for _ in range(args.repeat):
            for kind in best:
                best[kind] = min(best[kind], per_call(kind, limits, window))
        old, new = best[Summing] * 1e6, best[Limiter] * 1e6
        print(f"{window:>10,} {old:>11.1f} {new:>11.1f} {old / new:>7.1f}x")


if __name__ == "__main__":
    main()
