"""Every random number in an episode comes from the master seed through here.

Each use gets its own stream, keyed by a domain and an index (``SeedSequence``
spawn keys), so no stream depends on how much another stream was used or on
process order: the hands of deal d depend only on (seed, d), the table order
only on the seed, and a seat's tie-breaking stream only on (seed, slot).

A seat's own stream is the one exception to spawn keys: a seat holds its
generator, so its state must not lead back to the master seed (rule 1's
dealing is public code, and the seed is all it needs). :func:`private_stream`
seeds it from a keyed BLAKE2b digest of (seed, domain, slot) instead, see there.

Deals are the one hot spot: a ``SeedSequence`` per deal cost more than all of a
scripted deal's decisions, so :class:`DealStreams` seeds one stream per episode
and jumps it ahead to each deal's own stretch instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from arena.modes import Mode

TABLE_ORDER = 0
DEAL = 1
SEAT = 2
FALLBACK = 3


def stream(seed: int, domain: int, *index: int) -> np.random.Generator:
    """An independent generator for (seed, domain, index...)."""
    import numpy as np  # here, not at the top: a sandbox worker imports this module's callers

    return np.random.Generator(
        np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(domain, *index)))
    )


PRIVATE_STREAM_KEY = b"liars-arena private seat stream v1"
"""Separates private-stream digests from any other use of BLAKE2b over the same text."""


def private_stream(seed: int, domain: int, slot: int) -> np.random.Generator:
    """A seat's own generator for (seed, domain, slot); see :func:`private_seed`."""
    import numpy as np

    return np.random.Generator(np.random.PCG64(private_seed(seed, domain, slot)))


def private_seed(seed: int, domain: int, slot: int) -> int:
    """The seed of a seat's own stream, from which the episode seed cannot be recovered.

    The generator's state is a function of a 256-bit keyed BLAKE2b digest, never of
    the seed directly. Going back from the state to the seed means inverting
    BLAKE2b (preimage resistance), so the deal streams, which are keyed by the seed
    itself, stay out of reach. What no derivation can stop is guessing: a seat that
    tries candidate seeds against its own dealt hands finds a small seed (0, 1, 42)
    at once, so adversarial tables need seeds drawn from a large space (a league
    draws 62-bit table seeds).
    """
    import hashlib  # here, not at the top: 3 ms of every sandbox worker's start, never called

    message = f"{seed}/{domain}/{slot}".encode()
    digest = hashlib.blake2b(message, digest_size=32, key=PRIVATE_STREAM_KEY).digest()
    return int.from_bytes(digest, "big")


class DealStreams:
    """Rule 1's generators: the one for deal d depends only on (seed, d).

    A single PCG64 is seeded from (seed, DEAL); deal d's generator is that stream
    advanced by d * 2**64 draws, a stretch of its 2**128 period disjoint from every
    other deal's that no deal can use up (numpy documents ``advance`` for
    exactly this). The generator object is reused: draw a deal's hands before
    asking for the next deal.
    """

    STRIDE = 1 << 64

    def __init__(self, seed: int):
        import numpy as np

        self._bits = np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(DEAL,)))
        self._start = self._bits.state
        self._generator = np.random.Generator(self._bits)
        self._into: tuple[int, int] | None = None
        """(deal, words): the generator stands ``words`` raw draws into that deal's stretch
        and holds nothing buffered, so the next deal starts a relative advance away."""

    def for_deal(self, deal: int) -> np.random.Generator:
        self._bits.state = self._start
        self._bits.advance(deal * self.STRIDE)
        self._into = None
        return self._generator

    def hands(self, deal: int, seats: int, mode: Mode) -> tuple[tuple[int, ...], ...]:
        """Rule 1: deal ``deal``'s hands in slot order, each from the mode's draw."""
        if mode.draws_uniformly:
            dealt = uniform_hands(self._next_after(deal), mode.symbols, mode.hand_size, seats)
            if dealt is not None:
                self._into = (deal, seats * mode.hand_size)
                return dealt
            # a word needs redrawing: deal hand by hand instead, from the deal's start
        rng = self.for_deal(deal)
        return tuple(mode.draw_hand(rng) for _ in range(seats))

    def _next_after(self, deal: int) -> np.random.Generator:
        """:meth:`for_deal`, stepping on from the previous deal's words where it can:
        setting the state costs more than the advance itself."""
        if self._into is not None and self._into[0] == deal - 1:
            self._bits.advance(self.STRIDE - self._into[1])
            self._into = None
            return self._generator
        return self.for_deal(deal)


_WORD = 1 << 64


def _unbiased_below(n: int) -> int:
    """The largest multiple of n up to 2**64: a raw word at or above it is redrawn."""
    return _WORD - _WORD % n


def uniform_indices(rng: np.random.Generator, n: int, count: int) -> list[int]:
    """``count`` independent draws from ``range(n)``, each exactly uniform.

    Raw 64-bit words reduced modulo n; a word at or above the largest multiple of
    n below 2**64 would favour low indices, so it is redrawn (chance below n / 2**64).
    ``rng.integers(n, size=count)`` has the same law, but its call overhead was
    most of the cost of dealing a hand.
    """
    bits = rng.bit_generator
    limit = _unbiased_below(n)
    indices = []
    for word in bits.random_raw(count).tolist():
        while word >= limit:
            word = int(bits.random_raw())
        indices.append(word % n)
    return indices


def uniform_hands(
    rng: np.random.Generator, symbols: Sequence[int], hand_size: int, seats: int
) -> tuple[tuple[int, ...], ...] | None:
    """Every seat's uniform hand from one batch of raw words, or ``None`` if a word is
    one :func:`uniform_indices` would redraw (chance below seats * hand size * n / 2**64).

    Without a redraw, drawing each hand by :func:`uniform_indices` in slot order reads
    these same words in this same order, so the hands are the same; one call instead
    of one per seat is most of what dealing costs. With one, the caller deals again
    from the same state, hand by hand.
    """
    n = len(symbols)
    words = rng.bit_generator.random_raw(seats * hand_size).tolist()
    if max(words) >= _unbiased_below(n):
        return None
    picked = [symbols[word % n] for word in words]
    return tuple(
        tuple(picked[start : start + hand_size]) for start in range(0, len(picked), hand_size)
    )


def table_order(seed: int, seats: int) -> tuple[int, ...]:
    """Rule 1: the seeded random permutation of the slots, drawn once per episode."""
    return tuple(stream(seed, TABLE_ORDER).permutation(seats).tolist())
