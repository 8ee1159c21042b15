"""Every random number in an episode comes from the master seed through here.

Each use gets its own stream, keyed by a domain and an index (``SeedSequence``
spawn keys), so no stream depends on how much another stream was used or on
process order: the hands of deal d depend only on (seed, d), the table order
only on the seed, and a seat's tie-breaking stream only on (seed, slot).
"""

from __future__ import annotations

import numpy as np

TABLE_ORDER = 0
DEAL = 1
SEAT = 2
FALLBACK = 3


def stream(seed: int, domain: int, *index: int) -> np.random.Generator:
    """An independent generator for (seed, domain, index...)."""
    return np.random.Generator(
        np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(domain, *index)))
    )


def table_order(seed: int, seats: int) -> tuple[int, ...]:
    """Rule 1: the seeded random permutation of the slots, drawn once per episode."""
    return tuple(stream(seed, TABLE_ORDER).permutation(seats).tolist())
