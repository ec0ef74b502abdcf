/* _kernel_pairs_split.h: transposes of 2-byte items whose (2,1) pairs are split on the other
 * side: the units side holds 4-byte units [a][j] (the pair axis J 2 bytes apart, the units' axis
 * A 4), one row of units per step of an axis T; the rows side holds each (a, j) as its own row
 * along T (T 2 bytes apart), the two items of a pair anywhere. A (2,1) sub-tile against a
 * tiling that makes the tile's row dim the array's major one:
 * bf16[8,128,1024,32]{1,0,3,2:T(8,128)(2,1)}, whose pairs are rows of dim 0, 8 MiB apart in the
 * array, while dims 2 and 3 run on in it. The general transpose took the pair as the
 * destination's contiguous side, two items wide (to_physical 18.8x a copy; from_physical 3.1x).
 *
 * Here 8 rows (4 a x 2 j) x 8 t go through registers at once: the j rows interleaved into
 * units, then two 4 x 4 transposes of units (and backwards), in blocks of a 16 KiB L1 stage
 * (t x a x 4 bytes; fewer t where the rows are short, then more a), the blocks of A from the
 * units' line boundaries and those of T from the rows'. An axis R whose units-side stride is
 * the rows of A's units (a tile's rows of pairs) loops with A, so that the units side goes on
 * in order. One thread, CPU time, ratio to a copy (busy machine, alternating builds): that
 * row to_physical 20.7/19.4 -> 1.64/1.50, from_physical 3.20/2.91 -> 2.12/2.06.
 * Short rows over more than one R go SPLIT_LINE_A rows at a time along their R (split_short_to).
 * Self-contained (include guard). */
#ifndef TENSORLAYOUT_KERNEL_PAIRS_SPLIT_H
#define TENSORLAYOUT_KERNEL_PAIRS_SPLIT_H
#include "_kernel_words_pairs.h"
#include "_kernel_pairs_short.h"
#include "_sse2.h"

#define SPLIT_STAGE 16384 /* the stage: bytes of a block, t x a x 4 */
#define SPLIT_TO_T 128    /* to the units: t per block (256 bytes of each source row, 32 a) ... */
#define SPLIT_AHEAD 256   /* ... each source row fetched this many bytes ahead */
#define SPLIT_FROM_T 256  /* from the units: t per block (512 bytes of each destination row, 16 a) */
#define SPLIT_FAR_T 32    /* ... from units rows a multiple of 4 KiB apart (a line of each, 128 a) */

typedef struct {
    int t, j, a, r; /* the rows' axis, the pair axis, the units' axis, the units' next axis (-1) */
    int to;         /* the rows side is the source (weaving into units); else the destination */
} split_t;

#define SPLIT_OVER_PAIRS 16 /* items of a row from which weaving goes here, not to pairs_axes's tiles */

/* Whether pairs_axes's weave (pa) goes in 8 x 8 tiles (_kernel_pairs_wide.h), in a call not
 * streamed: then there, not here (bf16[1024,16,128]{0,1,2:T(4,128)(2,1)} to_physical, 4 MiB, one
 * thread, 4.2 -> 2.3x a copy). Streamed, the blocks here stream their unit rows out
 * (f16[2048,512,16]{0,1,2:T(8,128)(2,1)}, 32 MiB: 2.0x here, 2.9x there). */
static inline int pairs_wide_to(const plan_t *p, const pairs_t *pa)
{
    return !p->stream && p->shape[pa->k] % 8 == 0 && wide_ok();
}

/* Whether the plan is a split-pairs transpose (see above) taken here; fills *x. Not taken:
 * what pairs_axes takes, but weaving rows of SPLIT_OVER_PAIRS items or more (their 4 x 4 tiles
 * write 16 bytes a unit row: bf16[1024,16,128]{0,1,2:T(4,128)(2,1)} to_physical, rows of 128,
 * 1.6 -> 0.7 ms) unless pairs_wide_to; and unweaving from rows of units a multiple of 4 KiB apart (sharing L1 and
 * L2 sets) into rows of more than SPLIT_FAR_T items not all a multiple of a line apart, where
 * the general transposes measured faster (f16[83,969,363]{1,0,2:T(8,128)(2,1)} from_physical,
 * units 176 KiB apart, rows of 726 bytes: 3.4-3.6x a copy there, 4.7-4.9x here; bf16[8,128,1024,
 * 32]{1,0,3,2:...}, 2 KiB apart: 3.1 -> 2.1). Into rows a multiple of a line apart, blocks of
 * SPLIT_FAR_T t go through split_rows_from (s16[8,16,256,256]{2,0,1,3:T(8,128)(2,1)}, units
 * 64 KiB apart, one thread, alternating: 4.8x a copy in the general transposes, 2.6x here). */
static int split_axes(const plan_t *p, split_t *x)
{
    pairs_t pa;
    if (p->item != 2 || p->swap || p->ndim < 3) return 0;
    if (pairs_axes(p, &pa) && !(pa.to && p->shape[pa.k] >= SPLIT_OVER_PAIRS && !pairs_wide_to(p, &pa))) return 0;
    for (int to = 1; to >= 0; to--) {
        const Py_ssize_t *rs = to ? p->ss : p->ds, *us = to ? p->ds : p->ss;
        int t = -1, j = -1, a = -1, r = -1;
        for (int k = 0; k < p->ndim; k++) {
            if (p->shape[k] == 2 && us[k] == 2 && rs[k] != 0 && j < 0) j = k;
            else if (p->shape[k] >= 4 && us[k] == 4 && rs[k] != 0 && a < 0) a = k;
            else if (p->shape[k] >= 8 && rs[k] == 2 && us[k] != 0 && t < 0) t = k;
        }
        if (t < 0 || j < 0 || a < 0) continue;
        if (!to && us[t] % 4096 == 0 && p->shape[t] > SPLIT_FAR_T && (rs[a] % 64 || rs[j] % 64)) return 0;
        for (int k = 0; k < p->ndim; k++)
            if (k != t && k != j && k != a && p->shape[k] > 1 && us[k] == 4 * p->shape[a]) r = k;
        *x = (split_t){t, j, a, r, to};
        return 1;
    }
    return 0;
}

#if HAVE_STREAM
/* 4 a x 2 j rows x 8 t, rows side to units side: row (a, j) at r + a*ra + j*rj, t's units [a][j]
 * at u + t*ut. */
static inline void split_tile_to(char *u, Py_ssize_t ut, const char *r, Py_ssize_t ra, Py_ssize_t rj)
{
    __m128i w[8];
    for (int a = 0; a < 4; a++) {
        __m128i x0 = _mm_loadu_si128((const __m128i *)(r + a * ra));
        __m128i x1 = _mm_loadu_si128((const __m128i *)(r + a * ra + rj));
        w[a] = _mm_unpacklo_epi16(x0, x1); /* a's units of t 0..3 */
        w[a + 4] = _mm_unpackhi_epi16(x0, x1); /* ... of t 4..7 */
    }
    transpose4_u32(w);
    transpose4_u32(w + 4);
    for (int t = 0; t < 8; t++) _mm_storeu_si128((__m128i *)(u + t * ut), w[t]);
}

/* The 4-byte units [j0 j1] of v as [j0 of units 0..3 | j1 of units 0..3]. */
static inline __m128i split_units(__m128i v)
{
    v = _mm_shufflehi_epi16(_mm_shufflelo_epi16(v, _MM_SHUFFLE(3, 1, 2, 0)), _MM_SHUFFLE(3, 1, 2, 0));
    return _mm_shuffle_epi32(v, _MM_SHUFFLE(3, 1, 2, 0));
}

/* The same backwards: units side to 4 a x 2 j rows x 8 t. */
static inline void split_tile_from(char *r, Py_ssize_t ra, Py_ssize_t rj, const char *u, Py_ssize_t ut)
{
    __m128i w[8];
    for (int t = 0; t < 8; t++) w[t] = _mm_loadu_si128((const __m128i *)(u + t * ut));
    transpose4_u32(w); /* w[a]: a's units of t 0..3 */
    transpose4_u32(w + 4);
    for (int a = 0; a < 4; a++) {
        __m128i lo = split_units(w[a]), hi = split_units(w[a + 4]);
        _mm_storeu_si128((__m128i *)(r + a * ra), _mm_unpacklo_epi64(lo, hi));
        _mm_storeu_si128((__m128i *)(r + a * ra + rj), _mm_unpackhi_epi64(lo, hi));
    }
}
#endif

/* Items [t0, t1) x [a0, a1) one by one (the edges past whole tiles). */
static void split_items(char *u, Py_ssize_t ut, char *r, Py_ssize_t ra, Py_ssize_t rj, Py_ssize_t t0,
                        Py_ssize_t t1, Py_ssize_t a0, Py_ssize_t a1, int to)
{
    for (Py_ssize_t a = a0; a < a1; a++)
        for (Py_ssize_t t = t0; t < t1; t++)
            for (int j = 0; j < 2; j++) {
                char *x = u + t * ut + a * 4 + j * 2, *y = r + a * ra + j * rj + t * 2;
                if (to) memcpy(x, y, 2);
                else memcpy(y, x, 2);
            }
}

#if HAVE_STREAM
/* From the units, a block of ea (a multiple of 4) a x et (of 8) t: 8 unit rows at a time, each read
 * along all ea*4 bytes (the next 8 rows' lines fetched meanwhile), so that each line of a unit
 * row is read once, whole, while 16 bytes of every row at a time (rows a multiple of 4 KiB apart
 * share L1 and L2 sets) had each line come in four times. One thread, alternating, ratio to a
 * copy: bf16[128,8192,16]{1,0,2:T(8,128)(2,1)} from_physical (blocks of 16 t x 256 a, rows
 * 2 MiB apart) 1.96 -> 1.68; s16[8,16,256,256]{2,0,1,3:T(8,128)(2,1)} (SPLIT_FAR_T). */
#define SPLIT_ROWS_A 64 /* a from which a block goes this way (4 lines of each unit row) */
static void split_rows_from(const char *u, Py_ssize_t ut, char *r, Py_ssize_t ra, Py_ssize_t rj, Py_ssize_t et,
                            Py_ssize_t ea, Py_ssize_t lim)
{
    for (Py_ssize_t t = 0; t < et; t += 8) {
        const int ahead = t + 8 < lim && t + 16 <= et;
        for (Py_ssize_t a = 0; a < ea; a += 4) {
            if (ahead && (a & 15) == 0)
                for (int q = 0; q < 8; q++) _mm_prefetch(u + (t + 8 + q) * ut + a * 4, _MM_HINT_T0);
            split_tile_from(r + a * ra + t * 2, ra, rj, u + t * ut + a * 4, ut);
        }
    }
}
#endif

/* A block of nt t x na a: whole tiles in registers, the rest item by item. u, r: the block's
 * first unit and row; ut, ra, rj: strides (units: t; rows: a, j). Reading the rows (to), each
 * row's line SPLIT_AHEAD bytes on is fetched into L2 where t + SPLIT_AHEAD/2 < lim (the row's t
 * past the block's first in the box): the rows, too many streams for the prefetchers, often
 * share L2 sets (64 KiB apart), so only a line of each goes ahead. */
static void split_block(char *u, Py_ssize_t ut, char *r, Py_ssize_t ra, Py_ssize_t rj, Py_ssize_t nt,
                        Py_ssize_t na, int to, Py_ssize_t lim)
{
    const Py_ssize_t et = nt - nt % 8, na4 = na - na % 4;
    Py_ssize_t ea = na4;
#if HAVE_STREAM
    if (!to && ea >= SPLIT_ROWS_A) {
        split_rows_from(u, ut, r, ra, rj, et, ea, lim);
        ea = 0;
    }
    for (Py_ssize_t a = 0; a < ea; a += 4)
        for (Py_ssize_t t = 0; t < et; t += 8) {
            if (to && (t & 31) == 0 && t + SPLIT_AHEAD / 2 < lim)
                for (Py_ssize_t q = a; q < a + 4; q++) {
                    _mm_prefetch(r + q * ra + t * 2 + SPLIT_AHEAD, _MM_HINT_T1);
                    _mm_prefetch(r + q * ra + rj + t * 2 + SPLIT_AHEAD, _MM_HINT_T1);
                }
            if (to) split_tile_to(u + t * ut + a * 4, ut, r + a * ra + t * 2, ra, rj);
            else split_tile_from(r + a * ra + t * 2, ra, rj, u + t * ut + a * 4, ut);
        }
#else
    (void)lim;
    split_items(u, ut, r, ra, rj, 0, et, 0, ea, to);
#endif
    split_items(u, ut, r, ra, rj, et, nt, 0, na4, to);
    split_items(u, ut, r, ra, rj, 0, nt, na4, na, to);
}

/* A block through an L1 stage, then to the destination (streamed out where the call streams):
 * the units side's rows of na*4 bytes, or the rows side's 2 x na rows of nt*2. Weaving, the
 * stage is used either way: the unit rows, often a multiple of 4 KiB apart, share L1 sets,
 * and their lines, written 16 bytes at a time, left L1 in between (bf16[1024,16,128]{0,1,2:
 * T(4,128)(2,1)}, 4 MiB, rows 32 KiB apart: 1.6 -> 0.7 ms). */
static void split_staged(char *u, Py_ssize_t ut, char *r, Py_ssize_t ra, Py_ssize_t rj, Py_ssize_t nt,
                         Py_ssize_t na, int to, Py_ssize_t lim, int stream)
{
    _Alignas(64) char stage[SPLIT_STAGE];
    if (to) { /* units [t][a] at stage + t*na*4 */
        split_block(stage, na * 4, r, ra, rj, nt, na, 1, lim);
        for (Py_ssize_t t = 0; t < nt; t++) {
            if (stream) stream_out(u + t * ut, stage + t * na * 4, (size_t)(na * 4));
            else memcpy(u + t * ut, stage + t * na * 4, (size_t)(na * 4));
        }
    } else { /* row (a, j) at stage + (2a + j)*nt*2 */
        split_block(u, ut, stage, 4 * nt, 2 * nt, nt, na, 0, lim);
        for (Py_ssize_t a = 0; a < na; a++)
            for (int j = 0; j < 2; j++)
                if (stream) stream_out(r + a * ra + j * rj, stage + (2 * a + j) * nt * 2, (size_t)(nt * 2));
                else memcpy(r + a * ra + j * rj, stage + (2 * a + j) * nt * 2, (size_t)(nt * 2));
    }
}

/* One block of the box at u, r (t0, R's i, a0: its first t, r, a; tl x al of them). */
static inline void split_at(const plan_t *p, char *u, Py_ssize_t ut, Py_ssize_t ur, char *r, Py_ssize_t ra,
                            Py_ssize_t rj, Py_ssize_t rr, Py_ssize_t t0, Py_ssize_t i, Py_ssize_t a0,
                            Py_ssize_t tl, Py_ssize_t al, Py_ssize_t nt, int to)
{
    char *ub = u + t0 * ut + i * ur + a0 * 4, *rb = r + t0 * 2 + i * rr + a0 * ra;
    if (p->stream || to) split_staged(ub, ut, rb, ra, rj, tl, al, to, nt - t0, p->stream);
    else split_block(ub, ut, rb, ra, rj, tl, al, to, nt - t0);
}

/* The end of the block from x0 along [0, n) in blocks of b items of `size` bytes, the first
 * up to the next line boundary past p (the array there: p + x*size), where that is a whole
 * number of items (and not already on one). */
static inline Py_ssize_t split_next(const char *p, Py_ssize_t x0, Py_ssize_t n, Py_ssize_t b, Py_ssize_t size)
{
    Py_ssize_t head = (Py_ssize_t)((64 - (uintptr_t)p % 64) % 64);
    Py_ssize_t x1 = x0 == 0 && head % size == 0 && head / size > 0 && head / size < b ? head / size : x0 + b;
    return x1 < n ? x1 : n;
}

/* To the units in a streamed call, a box of short rows (SPLIT_TO_T items at most) over more than
 * one R: SPLIT_LINE_A rows of A at a time (from the units' line boundaries), over all of R, so
 * that each row is read on along R and each (t, r) gets a line of units at once, streamed out.
 * Block by block over all of A for each R instead, the rows (often 16 KiB apart, sharing L1 and
 * L2 sets) were read a line or two at a time: f16[1024,256,32]{0,1,2:T(8,128)(2,1)} to_physical,
 * one thread, 4.5 -> 2.6x a copy; f16[2048,512,16]{0,1,2:T(8,128)(2,1)} 2.1 -> 1.95. In cache
 * it measured slower (f16[512,64,64]{0,1,2:T(8,128)(2,1)}, 4 MiB: 3.0 -> 3.8). */
#define SPLIT_LINE_A 16
static void split_short_to(char *u, Py_ssize_t ut, Py_ssize_t ur, char *r, Py_ssize_t ra, Py_ssize_t rj,
                           Py_ssize_t rr, Py_ssize_t nt, Py_ssize_t na, Py_ssize_t nr)
{
    _Alignas(64) char stage[SPLIT_TO_T * SPLIT_LINE_A * 4];
    for (Py_ssize_t a0 = 0, a1; a0 < na; a0 = a1) {
        a1 = split_next(u, a0, na, SPLIT_LINE_A, 4);
        const Py_ssize_t al = a1 - a0;
        for (Py_ssize_t i = 0; i < nr; i++) {
            split_block(stage, SPLIT_LINE_A * 4, r + i * rr + a0 * ra, ra, rj, nt, al, 1, nt);
            for (Py_ssize_t t = 0; t < nt; t++)
                stream_out(u + t * ut + i * ur + a0 * 4, stage + t * SPLIT_LINE_A * 4, (size_t)(al * 4));
        }
    }
}

/* The T x R x A x J box at d, s (split_axes holds), in blocks (from units rows a multiple of 4 KiB
 * apart, SPLIT_FAR_T t: a line of each destination row, 128 a), those of A from the units' line
 * boundaries and those of T from the rows' (the arrays a numpy call allocates start 16 bytes
 * past one). To the units, a block's rows are read along (t innermost), each fetched ahead;
 * from the units, the blocks of a run of t go over all of R and A (t outermost), so the units
 * are read on in order and each destination row written SPLIT_FROM_T*2 bytes at once.
 * Measured, one thread, 64 MiB (bf16[8,128,1024,32]{1,0,3,2:T(8,128)(2,1)}, aligned), ratio to
 * a copy: to the units, t outermost in blocks of a line of each row 4.4-4.8, t innermost
 * 2.3-2.5, fetched ahead 1.5-1.6; from them, t innermost 2.4-3.4, outermost 2.1-2.2. */
static void split_box(const plan_t *p, const split_t *x, char *d, const char *s)
{
    const int to = x->to;
    const Py_ssize_t *rs = to ? p->ss : p->ds, *us = to ? p->ds : p->ss;
    char *u = to ? d : (char *)s, *r = to ? (char *)s : d; /* (the source only read) */
    const Py_ssize_t nt = p->shape[x->t], na = p->shape[x->a], nr = x->r < 0 ? 1 : p->shape[x->r];
    const Py_ssize_t ut = us[x->t], ra = rs[x->a], rj = rs[x->j];
    const Py_ssize_t ur = x->r < 0 ? 0 : us[x->r], rr = x->r < 0 ? 0 : rs[x->r];
    Py_ssize_t bt = to ? SPLIT_TO_T : us[x->t] % 4096 == 0 && nt > SPLIT_FAR_T ? SPLIT_FAR_T : SPLIT_FROM_T;
    if (bt > nt) bt = nt; /* (short rows: more of them a block, as many bytes) */
    const Py_ssize_t ba = SPLIT_STAGE / (4 * bt) / 4 * 4;
    if (to && p->stream && nt <= SPLIT_TO_T && nr > 1) {
        split_short_to(u, ut, ur, r, ra, rj, rr, nt, na, nr);
        return;
    }
    if (to) {
        for (Py_ssize_t i = 0; i < nr; i++)
            for (Py_ssize_t a0 = 0, a1; a0 < na; a0 = a1) {
                a1 = split_next(u + i * ur, a0, na, ba, 4);
                for (Py_ssize_t t0 = 0, t1; t0 < nt; t0 = t1) {
                    t1 = split_next(r + i * rr + a0 * ra, t0, nt, bt, 2);
                    split_at(p, u, ut, ur, r, ra, rj, rr, t0, i, a0, t1 - t0, a1 - a0, nt, 1);
                }
            }
        return;
    }
    for (Py_ssize_t t0 = 0, t1; t0 < nt; t0 = t1) {
        t1 = split_next(r, t0, nt, bt, 2);
        for (Py_ssize_t i = 0; i < nr; i++)
            for (Py_ssize_t a0 = 0, a1; a0 < na; a0 = a1) {
                a1 = split_next(u + i * ur, a0, na, ba, 4);
                split_at(p, u, ut, ur, r, ra, rj, rr, t0, i, a0, t1 - t0, a1 - a0, nt, 0);
            }
    }
}

/* The plan as split_box's boxes, the other axes outside in their order. */
static void split_plan(const plan_t *p, const split_t *x)
{
    int outer[MAX_DIMS], n = 0;
    for (int k = 0; k < p->ndim; k++)
        if (k != x->t && k != x->j && k != x->a && k != x->r && p->shape[k] > 1) outer[n++] = k;
    Py_ssize_t idx[MAX_DIMS] = {0};
    char *d = p->dst;
    const char *s = p->src;
    do
        split_box(p, x, d, s);
    while (next_outer(p, outer, n, idx, &d, &s));
}

/* Whether the task is a split-pairs transpose, or one of short runs (_kernel_pairs_short.h)
 * that pairs_axes does not take; if so, it is copied here. */
static int pairs_split(const plan_t *p)
{
    split_t x;
    pairs_t pa;
    for (int k = 0; k < p->ndim; k++)
        if (p->shape[k] == 0) return 0;
    if (split_axes(p, &x)) {
        split_plan(p, &x);
        return 1;
    }
    return !pairs_axes(p, &pa) && pairs_short(p);
}

#endif
