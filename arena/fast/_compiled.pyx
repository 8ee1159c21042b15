# cython: language_level=3, boundscheck=False, wraparound=False
"""The C table (table.c) behind a Python class: filled from a :class:`~arena.fast.spec.TableSpec`,
it plays deals and hands back their log lines and, when asked, their terminal lines."""

from libc.stdint cimport int64_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memset

import numpy as np

from arena.fast.spec import TableSpec


cdef extern from "table.h":
    ctypedef struct ft_u128 "ft_u128":
        pass
    ctypedef struct ft_buffer:
        char *data
        size_t len, cap
    ctypedef struct ft_pcg64:
        ft_u128 state
        ft_u128 inc
        int has_uint32
        uint32_t uinteger
    ctypedef struct ft_seat:
        int kind
        double chal, safe
        int pad
        unsigned partners
        double call_below
        ft_pcg64 rng
    ctypedef struct ft_softplay:
        int64_t faced[8][8]
        int64_t challenged[8][8]
        int64_t net[8][8]
        int64_t band_faced[8][8][11]
        double band_forgone[8][8][11]
        int64_t bids[8]
        int64_t false_bids[8]
        int64_t decisions, deals
    ctypedef struct ft_table:
        int seats, hand_size, nsym, max_bids, max_q
        int symbols[16]
        int wild
        int wild_ones
        int order[8]
        int ladder_len
        int *ladder
        int *rank
        double *chance
        int *expected
        double *worth
        int *worth_band
        ft_softplay soft
        ft_pcg64 deal
        ft_u128 deal_start
        ft_u128 jump_mult, jump_add
        ft_seat seat[8]
        int64_t points[8]
        int64_t decisions[8]
        int64_t next_deal
        int keep_rows
        int64_t lines
        ft_buffer rows
    int FT_MAX_SEATS, FT_MAX_SYMBOLS, FT_MAX_HAND, FT_BANDS, FT_ROW_FIELDS
    int ft_play(ft_table *t, int64_t count, ft_buffer *out, ft_buffer *lines)
    uint64_t ft_integers(ft_pcg64 *r, uint64_t n)


cdef extern from *:
    """
    static ft_u128 ft_u128_from(uint64_t hi, uint64_t lo) { return ((ft_u128)hi << 64) | lo; }
    """
    ft_u128 ft_u128_from(uint64_t hi, uint64_t lo)


cdef ft_u128 _u128(value):
    return ft_u128_from(value >> 64, value & 0xFFFFFFFFFFFFFFFF)


cdef int *_ints(values) except NULL:
    cdef int *out = <int *>malloc(max(len(values), 1) * sizeof(int))
    if out == NULL:
        raise MemoryError()
    for i, value in enumerate(values):
        out[i] = value
    return out


cdef double *_doubles(values) except NULL:
    cdef double *out = <double *>malloc(max(len(values), 1) * sizeof(double))
    if out == NULL:
        raise MemoryError()
    for i, value in enumerate(values):
        out[i] = value
    return out


cdef class CompiledTable:
    """One episode's table in C; :meth:`play` advances it by whole deals.

    With ``narrate``, each deal is also summed up for the terminal as
    :class:`arena.render.Narrator` would (see :meth:`narration`). With ``keep_rows``, each
    decision's row (:func:`arena.grading.from_rows`'s layout) is kept until
    :meth:`take_rows`.
    """

    cdef ft_table table
    cdef ft_buffer buffer
    cdef ft_buffer summary
    cdef bint narrate

    def __cinit__(self, spec: TableSpec, narrate: bool = False, keep_rows: bool = False):
        self.narrate = narrate
        cdef ft_table *t = &self.table
        t.keep_rows = keep_rows
        t.lines = 0
        t.rows.data = NULL
        t.rows.len = t.rows.cap = 0
        if (spec.seats > FT_MAX_SEATS or len(spec.symbols) > FT_MAX_SYMBOLS
                or spec.hand_size > FT_MAX_HAND):
            raise ValueError("the table is larger than the compiled engine holds")
        t.seats = spec.seats
        t.hand_size = spec.hand_size
        t.nsym = len(spec.symbols)
        t.max_bids = spec.max_bids
        t.max_q = spec.max_quantity
        for i, symbol in enumerate(spec.symbols):
            t.symbols[i] = symbol
        t.wild = spec.wild_index
        t.wild_ones = spec.wild_ones
        for i, slot in enumerate(spec.order):
            t.order[i] = slot
        t.ladder_len = len(spec.ladder) // 2
        t.ladder = _ints(spec.ladder)
        t.rank = _ints(spec.rank)
        t.expected = _ints(spec.expected)
        t.chance = _doubles(spec.chance)
        t.worth = _doubles(spec.worth)
        t.worth_band = _ints(spec.worth_band)
        memset(&t.soft, 0, sizeof(ft_softplay))
        t.deal.state = _u128(spec.deal_state)
        t.deal.inc = _u128(spec.deal_inc)
        t.deal.has_uint32 = 0
        t.deal.uinteger = 0
        t.deal_start = t.deal.state
        t.jump_mult = _u128(spec.jump_mult)
        t.jump_add = _u128(spec.jump_add)
        for slot, seat in enumerate(spec.seat_specs):
            t.seat[slot].kind = seat.kind
            t.seat[slot].chal = seat.chal
            t.seat[slot].safe = seat.safe
            t.seat[slot].pad = seat.pad
            t.seat[slot].partners = seat.partners
            t.seat[slot].call_below = seat.call_below
            t.seat[slot].rng.state = _u128(seat.rng_state)
            t.seat[slot].rng.inc = _u128(seat.rng_inc)
            t.seat[slot].rng.has_uint32 = seat.rng_has_uint32
            t.seat[slot].rng.uinteger = seat.rng_uinteger
            t.points[slot] = 0
            t.decisions[slot] = 0
        t.next_deal = 0

    def __dealloc__(self):
        free(self.table.ladder)
        free(self.table.rank)
        free(self.table.expected)
        free(self.table.chance)
        free(self.table.worth)
        free(self.table.worth_band)
        free(self.buffer.data)
        free(self.summary.data)
        free(self.table.rows.data)

    def play(self, int64_t deals) -> bytes:
        """The next ``deals`` deals' log lines (ASCII), each ending in a newline."""
        self.buffer.len = 0
        self.summary.len = 0
        if ft_play(&self.table, deals, &self.buffer, &self.summary if self.narrate else NULL):
            raise MemoryError("the compiled table could not grow its line buffer")
        return self.buffer.data[: self.buffer.len]

    @property
    def rows_kept(self) -> int:
        """Decisions' rows kept since the last :meth:`take_rows`."""
        return self.table.rows.len // (FT_ROW_FIELDS * sizeof(int64_t))

    def take_rows(self):
        """The rows kept since the last call, as an int64 array of shape (n, 13), in play
        order; the table keeps none of them after."""
        kept = np.frombuffer(self.table.rows.data[: self.table.rows.len], dtype=np.int64)
        self.table.rows.len = 0
        return kept.reshape(-1, FT_ROW_FIELDS)

    def narration(self) -> str:
        """The terminal lines of the deals the last :meth:`play` played, each ending in a
        newline ("" unless the table narrates)."""
        return self.summary.data[: self.summary.len].decode("ascii")

    def softplay(self) -> dict:
        """The soft-play audit's tallies of the deals played so far, as
        :class:`arena_plugins.softplay.SoftPlay`'s fields."""
        cdef ft_softplay *soft = &self.table.soft
        cdef int n = self.table.seats
        slots = range(n)
        return {
            "faced": [[soft.faced[a][b] for b in slots] for a in slots],
            "challenged": [[soft.challenged[a][b] for b in slots] for a in slots],
            "net": [[soft.net[a][b] for b in slots] for a in slots],
            "band_faced": [
                [[soft.band_faced[a][b][k] for k in range(FT_BANDS)] for b in slots] for a in slots
            ],
            "band_forgone": [
                [[soft.band_forgone[a][b][k] for k in range(FT_BANDS)] for b in slots]
                for a in slots
            ],
            "bids": [soft.bids[a] for a in slots],
            "false_bids": [soft.false_bids[a] for a in slots],
            "decisions": soft.decisions,
            "deals": soft.deals,
        }

    @property
    def points(self) -> tuple:
        return tuple(self.table.points[i] for i in range(self.table.seats))

    @property
    def decisions(self) -> tuple:
        return tuple(self.table.decisions[i] for i in range(self.table.seats))


def next_integers(rng_state: int, rng_inc: int, has_uint32: int, uinteger: int, bounds):
    """``[rng.integers(n) for n in bounds]`` on a PCG64 in the given state, by the C code
    the table uses: lets the tests hold it to numpy's own draws."""
    cdef ft_pcg64 rng
    rng.state = _u128(rng_state)
    rng.inc = _u128(rng_inc)
    rng.has_uint32 = has_uint32
    rng.uinteger = uinteger
    return [ft_integers(&rng, n) for n in bounds]
