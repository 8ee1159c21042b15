/* See table.h. Names follow the Python they mirror, so the two read side by side. */
#include "table.h"

#include <stdlib.h>
#include <string.h>

/* --- numpy's PCG64 and Generator.integers -------------------------------------- */

static const ft_u128 PCG_MULT =
    ((ft_u128)0x2360ED051FC65DA4ULL << 64) | (ft_u128)0x4385DF649FCCF645ULL;

uint64_t ft_next64(ft_pcg64 *r)
{
    r->state = r->state * PCG_MULT + r->inc;
    uint64_t x = (uint64_t)(r->state >> 64) ^ (uint64_t)r->state;
    unsigned rot = (unsigned)(r->state >> 122);
    return (x >> rot) | (x << ((64u - rot) & 63u));
}

uint32_t ft_next32(ft_pcg64 *r)
{
    if (r->has_uint32) {
        r->has_uint32 = 0;
        return r->uinteger;
    }
    uint64_t next = ft_next64(r);
    r->has_uint32 = 1;
    r->uinteger = (uint32_t)(next >> 32);
    return (uint32_t)(next & 0xffffffffULL);
}

/* rng.integers(n) for 1 <= n <= 2**32 - 1: Lemire's bounded draw on 32-bit words, which
 * is what numpy does for an int64 bound that fits in 32 bits. n == 1 draws nothing. */
uint64_t ft_integers(ft_pcg64 *r, uint64_t n)
{
    uint32_t rng = (uint32_t)(n - 1);
    if (rng == 0)
        return 0;
    uint32_t rng_excl = rng + 1;
    uint64_t m = (uint64_t)ft_next32(r) * rng_excl;
    uint32_t leftover = (uint32_t)m;
    if (leftover < rng_excl) {
        uint32_t threshold = (uint32_t)(UINT32_MAX - rng) % rng_excl;
        while (leftover < threshold) {
            m = (uint64_t)ft_next32(r) * rng_excl;
            leftover = (uint32_t)m;
        }
    }
    return m >> 32;
}

/* --- the log's lines ------------------------------------------------------------ */

static int reserve(ft_buffer *b, size_t more)
{
    if (b->len + more <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 1 << 16;
    while (cap < b->len + more)
        cap *= 2;
    char *data = realloc(b->data, cap);
    if (!data)
        return -1;
    b->data = data;
    b->cap = cap;
    return 0;
}

static char *put_str(char *p, const char *s)
{
    size_t n = strlen(s);
    memcpy(p, s, n);
    return p + n;
}

static char *put_int(char *p, int64_t v)
{
    if (v >= 0 && v < 10) { /* most numbers on a line: slots, faces, symbols */
        *p++ = (char)('0' + v);
        return p;
    }
    char digits[24];
    int n = 0;
    uint64_t u = v < 0 ? (uint64_t)(-(v + 1)) + 1 : (uint64_t)v;
    if (v < 0)
        *p++ = '-';
    do {
        digits[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    while (n)
        *p++ = digits[--n];
    return p;
}

/* `key` (the text before the value, e.g. ",\"slot\":") then the number */
static char *put_field(char *p, const char *key, int64_t v) { return put_int(put_str(p, key), v); }

/* The per-decision lines, byte for byte as arena.events.to_line writes them. */
static char *put_bid_line(char *p, int64_t deal, int slot, int quantity, int face)
{
    p = put_field(p, "{\"type\":\"bid\",\"deal\":", deal);
    p = put_field(p, ",\"slot\":", slot);
    p = put_field(p, ",\"quantity\":", quantity);
    p = put_field(p, ",\"face\":", face);
    return put_str(p, ",\"say\":null,\"published\":null,\"notes\":null,\"fallback\":false}\n");
}

static char *put_challenge_line(char *p, int64_t deal, int slot, int bidder, int quantity,
                                int face, int actual, int forced, int winner, int loser)
{
    p = put_field(p, "{\"type\":\"challenge\",\"deal\":", deal);
    p = put_field(p, ",\"slot\":", slot);
    p = put_field(p, ",\"bidder\":", bidder);
    p = put_field(p, ",\"quantity\":", quantity);
    p = put_field(p, ",\"face\":", face);
    p = put_field(p, ",\"actual\":", actual);
    p = put_str(p, forced ? ",\"forced\":true" : ",\"forced\":false");
    p = put_field(p, ",\"fallback\":false,\"winner\":", winner);
    p = put_field(p, ",\"loser\":", loser);
    return put_str(p, ",\"say\":null,\"published\":null,\"notes\":null}\n");
}

static char *put_deal_line(char *p, int64_t deal, int opener, int seats, int hand_size,
                           int hands[][FT_MAX_HAND])
{
    p = put_field(p, "{\"type\":\"deal\",\"deal\":", deal);
    p = put_field(p, ",\"opener\":", opener);
    p = put_str(p, ",\"hands\":[");
    for (int slot = 0; slot < seats; slot++) {
        p = put_str(p, slot ? ",[" : "[");
        for (int i = 0; i < hand_size; i++)
            p = put_field(p, i ? "," : "", hands[slot][i]);
        *p++ = ']';
    }
    return put_str(p, "]}\n");
}

/* --- the terminal's lines (arena.render.Narrator, talk off, no fallbacks) -------------- */

/* f"{n:>3}" */
static char *put_int_width3(char *p, int64_t n)
{
    if (n >= 0 && n < 100)
        *p++ = ' ';
    if (n >= 0 && n < 10)
        *p++ = ' ';
    return put_int(p, n);
}

/* "deal   7  opener s2  " : the summary's start, before the bids */
static char *put_summary_start(char *p, int64_t deal, int opener)
{
    p = put_int_width3(put_str(p, "deal "), deal);
    return put_str(put_field(p, "  opener s", opener), "  ");
}

/* "s1:4x5" after a space unless it is the deal's first bid */
static char *put_summary_bid(char *p, int first, int slot, int quantity, int face)
{
    p = put_field(p, first ? "s" : " s", slot);
    p = put_field(p, ":", quantity);
    return put_field(p, "x", face);
}

/* "  | s3 challenges 5x5: actual 5, s3 +1, s0 -1" and the reveal line */
static char *put_summary_end(char *p, int slot, int quantity, int face, int actual, int forced,
                             int winner, int loser, int seats, int hand_size,
                             int hands[][FT_MAX_HAND])
{
    p = put_field(p, "  | s", slot);
    p = put_field(p, forced ? " forced " : " challenges ", quantity);
    p = put_field(p, "x", face);
    p = put_field(p, ": actual ", actual);
    p = put_field(p, ", s", winner);
    p = put_str(put_field(p, " +1, s", loser), " -1\n          hands  ");
    for (int slot = 0; slot < seats; slot++) {
        p = put_field(p, slot ? " | s" : "s", slot);
        for (int i = 0; i < hand_size; i++)
            p = put_field(p, " ", hands[slot][i]);
    }
    *p++ = '\n';
    return p;
}

/* --- rules.py --------------------------------------------------------------------- */

typedef struct {
    int slot, quantity, face; /* face as an index into symbols */
} standing_bid;

/* probability.count: the face's own symbols, plus the wild's for another face */
static int face_count(const ft_table *t, const int *hand, int face)
{
    int wild = t->wild >= 0 ? t->symbols[t->wild] : face; /* no wild: only the face counts */
    int n = 0;
    for (int i = 0; i < t->hand_size; i++)
        n += hand[i] == face || hand[i] == wild;
    return n;
}

/* TableRules.lowest_quantity (may exceed max_q) */
static int lowest_quantity(const ft_table *t, int face, const standing_bid *s)
{
    int q0 = s->quantity, f0 = s->face, w = t->wild;
    if (t->wild_ones && (face == w || f0 == w)) {
        if (face == f0)
            return q0 + 1;
        if (face == w)
            return (q0 + 1) / 2;
        return 2 * q0 + 1;
    }
    return face > f0 ? q0 : q0 + 1;
}

/* TableRules.min_raise: the ladder index of the lowest legal bid, or ladder_len for none */
static int min_raise(const ft_table *t, const standing_bid *s)
{
    if (!s)
        return 0;
    return t->rank[s->quantity * t->nsym + s->face] + 1;
}

static double chance(const ft_table *t, int face, int need)
{
    return t->chance[face * (t->hand_size + t->max_q) + need + t->hand_size - 1];
}

/* --- the seats ------------------------------------------------------------------------ */

typedef struct {
    int challenge;
    int quantity, face;
} action;

static action challenge_action(void)
{
    action a = {1, 0, 0};
    return a;
}

static action bid_action(int quantity, int face)
{
    action a = {0, quantity, face};
    return a;
}

/* ScriptedSeat._choices and _pick (plugins/scripted.py) */
static action scripted(ft_table *t, ft_seat *seat, double chal, const int *hand,
                       const standing_bid *s)
{
    int counts[FT_MAX_SYMBOLS];
    int quantity[FT_MAX_SYMBOLS], face[FT_MAX_SYMBOLS];
    int options = 0;
    for (int f = 0; f < t->nsym; f++)
        counts[f] = face_count(t, hand, t->symbols[f]);
    if (!s) { /* _open: the faces held most, each at count + expected */
        int most = 0;
        for (int f = 0; f < t->nsym; f++)
            if (counts[f] > most)
                most = counts[f];
        for (int f = 0; f < t->nsym; f++) {
            if (counts[f] != most)
                continue;
            int q = counts[f] + t->expected[f];
            q = q < 1 ? 1 : q;
            quantity[options] = q > t->max_q ? t->max_q : q;
            face[options++] = f;
        }
    } else {
        if (chance(t, s->face, s->quantity - counts[s->face]) < chal)
            return challenge_action();
        /* _best_raises: each face's lowest raise, ranked (likelihood, -quantity, count) */
        double best_p = 0;
        int best_q = 0, best_n = 0;
        for (int f = 0; f < t->nsym; f++) {
            int q = lowest_quantity(t, f, s);
            q = q < 1 ? 1 : q;
            if (q > t->max_q)
                continue;
            double p = chance(t, f, q - counts[f]);
            if (p < seat->safe)
                continue;
            int better = !options || p > best_p ||
                         (p == best_p && (-q > -best_q || (q == best_q && counts[f] > best_n)));
            int tie = options && p == best_p && q == best_q && counts[f] == best_n;
            if (better && !tie) {
                options = 0;
                best_p = p;
                best_q = q;
                best_n = counts[f];
            }
            if (better || tie) {
                quantity[options] = q;
                face[options++] = f;
            }
        }
        if (!options)
            return challenge_action();
        if (seat->pad)
            for (int i = 0; i < options; i++)
                if (quantity[i] + 1 <= t->max_q)
                    quantity[i] += 1;
    }
    int pick = options == 1 ? 0 : (int)ft_integers(&seat->rng, (uint64_t)options);
    return bid_action(quantity[pick], face[pick]);
}

/* RandomSeat.decide (plugins/random_seat.py) */
static action random_seat(ft_table *t, ft_seat *seat, const standing_bid *s)
{
    int start = min_raise(t, s);
    int bids = t->ladder_len - start;
    int choices = bids + (s != NULL);
    int pick = (int)ft_integers(&seat->rng, (uint64_t)choices);
    if (pick == bids)
        return challenge_action();
    return bid_action(t->ladder[2 * (start + pick)], t->ladder[2 * (start + pick) + 1]);
}

/* Colluder.decide (plugins/colluder.py) */
static action colluder(ft_table *t, ft_seat *seat, const int *hand, const standing_bid *s)
{
    if (!s || !(seat->partners >> s->slot & 1u))
        return scripted(t, seat, seat->chal, hand, s);
    if (chance(t, s->face, s->quantity - face_count(t, hand, t->symbols[s->face])) <
        seat->call_below)
        return challenge_action();
    action a = scripted(t, seat, 0.0, hand, s);
    int lowest = min_raise(t, s);
    if (!a.challenge || lowest >= t->ladder_len)
        return a;
    return bid_action(t->ladder[2 * lowest], t->ladder[2 * lowest + 1]);
}

static action decide(ft_table *t, int slot, const int *hand, const standing_bid *s)
{
    ft_seat *seat = &t->seat[slot];
    switch (seat->kind) {
    case FT_RANDOM:
        return random_seat(t, seat, s);
    case FT_COLLUDER:
        return colluder(t, seat, hand, s);
    default:
        return scripted(t, seat, seat->chal, hand, s);
    }
}

/* --- the soft-play audit's tallies (arena_plugins.softplay._tally) ---------------------- */

/* `slot` decides with `s` standing: a facing, challenged or not (a raise forgoes its worth) */
static void soft_facing(ft_table *t, int slot, const standing_bid *s, const int *hand,
                        int challenged)
{
    int need = s->quantity - face_count(t, hand, t->symbols[s->face]);
    int at = s->face * (t->hand_size + t->max_q) + need + t->hand_size - 1;
    int band = t->worth_band[at];
    ft_softplay *soft = &t->soft;
    soft->decisions++;
    soft->faced[slot][s->slot]++;
    soft->band_faced[slot][s->slot][band]++;
    if (challenged)
        soft->challenged[slot][s->slot]++;
    else
        soft->band_forgone[slot][s->slot][band] += t->worth[at];
}

/* --- the decision read-out's rows (arena.grading.judge) --------------------------------- */

/* Appends one decision's row; -1 when the buffer cannot grow. */
static int keep_row(ft_table *t, const int64_t row[FT_ROW_FIELDS])
{
    size_t size = FT_ROW_FIELDS * sizeof(int64_t);
    if (reserve(&t->rows, size))
        return -1;
    memcpy(t->rows.data + t->rows.len, row, size);
    t->rows.len += size;
    return 0;
}

/* --- the engine (arena/engine.py) ------------------------------------------------------ */

/* seeding.DealStreams + modes._uniform_hand: a block of hand_size words, then redraws */
static void deal_hands(ft_table *t, int hands[][FT_MAX_HAND])
{
    uint64_t n = (uint64_t)t->nsym;
    uint64_t limit = (uint64_t)0 - ((uint64_t)0 - n) % n; /* 2**64 - 2**64 % n */
    uint64_t words[FT_MAX_HAND];
    int whole_range = limit == 0; /* n divides 2**64: nothing to redraw */
    for (int slot = 0; slot < t->seats; slot++) {
        for (int i = 0; i < t->hand_size; i++)
            words[i] = ft_next64(&t->deal);
        for (int i = 0; i < t->hand_size; i++) {
            uint64_t word = words[i];
            while (!whole_range && word >= limit)
                word = ft_next64(&t->deal);
            hands[slot][i] = t->symbols[word % n];
        }
    }
}

static int play_deal(ft_table *t, int64_t number, ft_buffer *out, ft_buffer *lines)
{
    int hands[FT_MAX_SEATS][FT_MAX_HAND];
    int seats = t->seats;
    int opener = t->order[number % seats];
    int position = (int)(number % seats);
    standing_bid standing = {0, 0, 0}; /* the opener always bids: set before any challenge */
    int bids = 0;

    t->deal.state = t->deal_start;
    deal_hands(t, hands);
    t->deal_start = t->jump_mult * t->deal_start + t->jump_add;

    /* All of a deal's lines fit: the deal line, then at most one bid per ladder step (bids
     * strictly rise, so a cap above the ladder never binds) and the challenge, each under
     * 200 bytes. */
    int most_bids = t->max_bids < t->ladder_len ? t->max_bids : t->ladder_len;
    size_t hands_size = (size_t)seats * t->hand_size * 24;
    if (reserve(out, (size_t)(most_bids + 1) * 200 + hands_size + 64))
        return -1;
    char *p = put_deal_line(out->data + out->len, number, opener, seats, t->hand_size, hands);
    /* The summary: under 64 bytes a bid, the challenge and the reveal's hands */
    char *q = NULL;
    if (lines) {
        if (reserve(lines, (size_t)(most_bids + 2) * 64 + hands_size + 64))
            return -1;
        q = put_summary_start(lines->data + lines->len, number, opener);
    }

    for (;;) {
        int slot = t->order[position];
        action a;
        int forced = bids >= t->max_bids;
        if (forced) {
            a = challenge_action();
        } else {
            t->decisions[slot]++;
            a = decide(t, slot, hands[slot], bids ? &standing : NULL);
        }
        int64_t line = t->lines++;
        if (a.challenge) {
            int actual = 0;
            int face = t->symbols[standing.face];
            for (int s = 0; s < seats; s++)
                actual += face_count(t, hands[s], face);
            int winner = actual >= standing.quantity ? standing.slot : slot;
            int loser = actual >= standing.quantity ? slot : standing.slot;
            if (t->keep_rows && !forced) {
                int64_t row[FT_ROW_FIELDS] = {
                    line, number, slot, 1, 0, standing.slot, face,
                    standing.quantity - face_count(t, hands[slot], face), face, 0, 0, 0,
                    winner == slot};
                if (keep_row(t, row))
                    return -1;
            }
            t->points[winner] += 1;
            t->points[loser] -= 1;
            t->soft.deals++;
            t->soft.net[winner][loser]++;
            t->soft.net[loser][winner]--;
            if (!forced)
                soft_facing(t, slot, &standing, hands[slot], 1);
            p = put_challenge_line(p, number, slot, standing.slot, standing.quantity, face, actual,
                                   forced, winner, loser);
            if (q)
                q = put_summary_end(q, slot, standing.quantity, face, actual, forced, winner, loser,
                                    seats, t->hand_size, hands);
            break;
        }
        if (bids)
            soft_facing(t, slot, &standing, hands[slot], 0);
        else
            t->soft.decisions++; /* the opening bid faces nothing */
        t->soft.bids[slot]++;
        int on_table = 0;
        for (int s = 0; s < seats; s++)
            on_table += face_count(t, hands[s], t->symbols[a.face]);
        t->soft.false_bids[slot] += on_table < a.quantity;
        if (t->keep_rows) {
            int face = t->symbols[a.face];
            int own = face_count(t, hands[slot], face);
            int standing_face = bids ? t->symbols[standing.face] : t->symbols[0];
            int64_t row[FT_ROW_FIELDS] = {
                line, number, slot, 0, 0, bids ? standing.slot : -1, standing_face,
                bids ? standing.quantity - face_count(t, hands[slot], standing_face) : 0,
                face, a.quantity - own, own, on_table - a.quantity, 0};
            if (keep_row(t, row))
                return -1;
        }
        standing.slot = slot;
        standing.quantity = a.quantity;
        standing.face = a.face;
        bids++;
        p = put_bid_line(p, number, slot, a.quantity, t->symbols[a.face]);
        if (q)
            q = put_summary_bid(q, bids == 1, slot, a.quantity, t->symbols[a.face]);
        position = (position + 1) % seats;
    }
    out->len = (size_t)(p - out->data);
    if (q)
        lines->len = (size_t)(q - lines->data);
    return 0;
}

int ft_play(ft_table *t, int64_t count, ft_buffer *out, ft_buffer *lines)
{
    for (int64_t i = 0; i < count; i++) {
        if (play_deal(t, t->next_deal, out, lines))
            return -1;
        t->next_deal++;
    }
    return 0;
}
