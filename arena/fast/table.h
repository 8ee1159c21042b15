/* The compiled scripted table: rules, the first-party scripted seats, dealing and the
 * per-decision log lines, in C. arena/fast/_compiled.pyx fills a `table` from the
 * Python objects (rules, seats, seeded streams) and asks it to play deals; everything
 * here mirrors arena/engine.py, arena/rules.py, plugins/scripted.py, random_seat.py and
 * colluder.py line for line, and the golden logs hold the two to the same bytes.
 */
#ifndef ARENA_FAST_TABLE_H
#define ARENA_FAST_TABLE_H

#include <stddef.h>
#include <stdint.h>

#define FT_MAX_SEATS 8
#define FT_MAX_SYMBOLS 16
#define FT_MAX_HAND 16
#define FT_BANDS 11 /* the soft-play audit's bands 0..10 (arena_plugins.softplay.BANDS) */

typedef unsigned __int128 ft_u128;

/* numpy's PCG64 (XSL-RR 128/64) with its 32-bit buffer, as numpy's Generator uses it. */
typedef struct {
    ft_u128 state;
    ft_u128 inc;
    int has_uint32;
    uint32_t uinteger;
} ft_pcg64;

enum ft_kind { FT_SCRIPTED = 0, FT_RANDOM = 1, FT_COLLUDER = 2 };

typedef struct {
    int kind;
    double chal, safe;
    int pad;
    unsigned partners;  /* colluder: bit s set when slot s is a partner */
    double call_below;  /* colluder: challenge a partner's bid only under this */
    ft_pcg64 rng;       /* the seat's own stream (SeatContext.rng) */
} ft_seat;

/* The soft-play audit's tallies (arena_plugins.softplay.SoftPlay), kept as the deals are
 * played: by ordered pair [a][b], a facing b's standing bid. */
typedef struct {
    int64_t faced[FT_MAX_SEATS][FT_MAX_SEATS];
    int64_t challenged[FT_MAX_SEATS][FT_MAX_SEATS];
    int64_t net[FT_MAX_SEATS][FT_MAX_SEATS];
    int64_t band_faced[FT_MAX_SEATS][FT_MAX_SEATS][FT_BANDS];
    double band_forgone[FT_MAX_SEATS][FT_MAX_SEATS][FT_BANDS]; /* summed in log order */
    int64_t bids[FT_MAX_SEATS];
    int64_t false_bids[FT_MAX_SEATS];
    int64_t decisions, deals;
} ft_softplay;

/* One decision as arena.grading.judge reads it from the log (its row layout, int64 each):
 * ordinal, deal, slot, challenge, fallback, bidder (-1 opening), standing face, standing
 * need, bid face, bid need, own count, table count - quantity, won. */
#define FT_ROW_FIELDS 13

typedef struct {
    char *data;
    size_t len, cap;
} ft_buffer;

typedef struct {
    int seats, hand_size, nsym, max_bids, max_q;
    int symbols[FT_MAX_SYMBOLS];
    int wild;         /* index of the wild symbol, or -1 */
    int wild_ones;    /* the wild-ones raise rule */
    int order[FT_MAX_SEATS];
    int ladder_len;
    int *ladder;      /* 2 * ladder_len: quantity, face index, lowest first */
    int *rank;        /* (max_q + 1) * nsym: a bid's place on the ladder */
    double *chance;   /* nsym * (hand_size + max_q): P(true) by face index, need + hand_size - 1 */
    int *expected;    /* nsym: floor(unseen * p(face)) */
    double *worth;    /* as `chance`: facing the bid, max(0, 1 - 2 P(true)) (the soft-play audit) */
    int *worth_band;  /* as `chance`: that facing's band */
    ft_softplay soft;
    ft_pcg64 deal;       /* the deal stream, reset to `deal_start` for each deal */
    ft_u128 deal_start;  /* where the next deal's stretch of the stream starts */
    ft_u128 jump_mult, jump_add;  /* one stretch (2**64 draws) as an affine step */
    ft_seat seat[FT_MAX_SEATS];
    int64_t points[FT_MAX_SEATS];
    int64_t decisions[FT_MAX_SEATS];
    int64_t next_deal;
    int keep_rows;       /* keep each decision's row in `rows` (a reporter declared it) */
    int64_t lines;       /* bid and challenge lines so far, forced ones included */
    ft_buffer rows;      /* FT_ROW_FIELDS int64 per decision, until the engine takes them */
} ft_table;

uint64_t ft_next64(ft_pcg64 *r);
uint32_t ft_next32(ft_pcg64 *r);
uint64_t ft_integers(ft_pcg64 *r, uint64_t n);

/* Play deals next_deal .. next_deal + count - 1, appending their log lines to `out` and,
 * unless `lines` is NULL, their terminal lines (arena.render.Narrator's summary) to
 * `lines`. Returns 0, or -1 when a buffer cannot grow (out of memory). */
int ft_play(ft_table *t, int64_t count, ft_buffer *out, ft_buffer *lines);

#endif
