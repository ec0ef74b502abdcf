/* _kernel_words_pairs.h: transposes of 2-byte items between short rows of (2,1) pairs and
 * rows of the pairs' units. One side (the rows side) holds, per row a, a block of 2 x nk
 * items [j][k] (two runs of nk contiguous items: the pair axis J, nk*2 bytes apart); the
 * other (the units side) holds the pairs [j] as 4-byte units a row of units after another
 * (J 2 bytes apart, A 4), each k its own row of units, anywhere. A (2,1) sub-tile against a
 * tiling that moves a small logical dim major: f16[64,128,256,4]{1,2,0,3:T(8,128)(2,1)}, the
 * 4-item dim (K) contiguous in the array and a tile row of pairs (A, J) in the buffer. Item
 * by item the kernel took it as an unweave of 8 items per call of the inner loop (to_physical
 * 21x a copy; from_physical 6.5x).
 *
 * Here 4 rows x 4 k go through registers at once: each row's two 8-byte runs of 4 k are
 * interleaved into 4 units (one per k), then 4 x 4 units transposed, so 16 bytes of each of 4
 * unit rows are stored (to the units side); from it the same backwards. Where the rows side's
 * rows run on over an outer axis G in pieces shorter than a line (G the next pair of rows of
 * a tile), PAIRS_ROW bytes of each row go through an L1 stage (pairs_box). One thread, CPU
 * time, ratio to a copy of 16 MiB (median of 41, a busy machine): to_physical 21 -> 1.5-1.9,
 * from_physical 6.5 -> 2.4-2.6 (the tiles straight from and to the rows: 1.7 / 2.4; blocks
 * of 16 rows with the 4 G of a line inside them: 2.3 / 4.2). Runs of a multiple of 8 items go
 * in 8 x 8 tiles (_kernel_pairs_wide.h); in a streamed call, unit rows that run on over G are
 * woven through two stages and streamed out (pairs_lines_to).
 * Self-contained (include guard). */
#ifndef TENSORLAYOUT_KERNEL_WORDS_PAIRS_H
#define TENSORLAYOUT_KERNEL_WORDS_PAIRS_H
#include "_kernel_plan.h"
#include "_kernel_pairs_wide.h"

#define PAIRS_STAGE_ROWS 64 /* rows in pairs_box's stage ... */
#define PAIRS_ROW 256        /* ... of this many bytes each */

typedef struct {
    int a, j, k, g; /* the row axis, the pair axis, the run axis, the axis the rows run on (-1) */
    int to;         /* the rows side is the source (weaving into units); else the destination */
} pairs_t;

/* Whether the plan is a transpose of (2,1) pairs (see above); fills *pa. rs / us: the rows
 * side's and the units side's strides. */
static int pairs_axes(const plan_t *p, pairs_t *pa)
{
    if (p->item != 2 || p->swap || p->ndim < 3) return 0;
    for (int to = 1; to >= 0; to--) {
        const Py_ssize_t *rs = to ? p->ss : p->ds, *us = to ? p->ds : p->ss;
        int k = -1, j = -1, a = -1, g = -1;
        for (int x = 0; x < p->ndim; x++)
            if (rs[x] == 2 && p->shape[x] % 4 == 0 && us[x] != 0) k = x;
        if (k < 0) continue;
        for (int x = 0; x < p->ndim; x++) {
            if (p->shape[x] == 2 && rs[x] == 2 * p->shape[k] && us[x] == 2) j = x;
            else if (x != k && us[x] == 4 && p->shape[x] >= 4 && rs[x] != 0) a = x;
        }
        if (j < 0 || a < 0) continue;
        for (int x = 0; x < p->ndim; x++)
            if (x != a && x != j && x != k && p->shape[x] > 1 && rs[x] == 4 * p->shape[k]
                && PAIRS_ROW % (4 * p->shape[k]) == 0)
                g = x;
        *pa = (pairs_t){a, j, k, g, to};
        return 1;
    }
    return 0;
}

#if HAVE_STREAM
/* 4 rows x 4 k, rows side to units side: row a's items [j][k] at r + a*ra (j at nk*2 bytes), unit
 * row k's 4-byte units [j] at u + k*uk. */
static inline void pairs_tile_in(char *u, const char *r, Py_ssize_t ra, Py_ssize_t uk, Py_ssize_t half)
{
    __m128i w[4];
    for (int i = 0; i < 4; i++) {
        const char *x = r + i * ra;
        w[i] = _mm_unpacklo_epi16(_mm_loadl_epi64((const __m128i *)x), _mm_loadl_epi64((const __m128i *)(x + half)));
    }
    __m128i t0 = _mm_unpacklo_epi32(w[0], w[1]), t1 = _mm_unpacklo_epi32(w[2], w[3]);
    __m128i t2 = _mm_unpackhi_epi32(w[0], w[1]), t3 = _mm_unpackhi_epi32(w[2], w[3]);
    _mm_storeu_si128((__m128i *)u, _mm_unpacklo_epi64(t0, t1));
    _mm_storeu_si128((__m128i *)(u + uk), _mm_unpackhi_epi64(t0, t1));
    _mm_storeu_si128((__m128i *)(u + 2 * uk), _mm_unpacklo_epi64(t2, t3));
    _mm_storeu_si128((__m128i *)(u + 3 * uk), _mm_unpackhi_epi64(t2, t3));
}

/* The same backwards: unit rows to 4 rows' items. */
static inline void pairs_tile_out(char *r, const char *u, Py_ssize_t ra, Py_ssize_t uk, Py_ssize_t half)
{
    __m128i v0 = _mm_loadu_si128((const __m128i *)u), v1 = _mm_loadu_si128((const __m128i *)(u + uk));
    __m128i v2 = _mm_loadu_si128((const __m128i *)(u + 2 * uk)), v3 = _mm_loadu_si128((const __m128i *)(u + 3 * uk));
    __m128i t0 = _mm_unpacklo_epi32(v0, v1), t1 = _mm_unpacklo_epi32(v2, v3);
    __m128i t2 = _mm_unpackhi_epi32(v0, v1), t3 = _mm_unpackhi_epi32(v2, v3);
    __m128i w[4] = {_mm_unpacklo_epi64(t0, t1), _mm_unpackhi_epi64(t0, t1), _mm_unpacklo_epi64(t2, t3),
                    _mm_unpackhi_epi64(t2, t3)};
    for (int i = 0; i < 4; i++) { /* [k0j0 k0j1 k1j0 ...] -> [k0j0 k1j0 k2j0 k3j0 | k0j1 ...] */
        __m128i x = _mm_shufflehi_epi16(_mm_shufflelo_epi16(w[i], _MM_SHUFFLE(3, 1, 2, 0)), _MM_SHUFFLE(3, 1, 2, 0));
        x = _mm_shuffle_epi32(x, _MM_SHUFFLE(3, 1, 2, 0));
        char *y = r + i * ra;
        _mm_storel_epi64((__m128i *)y, x);
        _mm_storel_epi64((__m128i *)(y + half), _mm_unpackhi_epi64(x, x));
    }
}
#endif

/* One row a's 2 x nk items, item by item (the rows past a multiple of 4). */
static void pairs_row(char *d, const char *s, Py_ssize_t nk, Py_ssize_t uk, int to)
{
    for (Py_ssize_t k = 0; k < nk; k++)
        for (Py_ssize_t j = 0; j < 2; j++) {
            Py_ssize_t ro = (j * nk + k) * 2, uo = k * uk + j * 2;
            memcpy(d + (to ? uo : ro), s + (to ? ro : uo), 2);
        }
}

/* Rows [0, na) of one step of the outer axes: to the units (to) from rows ra apart at s into
 * unit rows uk apart at d, or back; 8 rows x 8 k a tile (AVX2, nk a multiple of 8) or 4 x 4,
 * the rows past a multiple of 4 item by item. */
static void pairs_rows(char *d, const char *s, Py_ssize_t na, Py_ssize_t nk, Py_ssize_t ra, Py_ssize_t uk, int to)
{
    const Py_ssize_t ea = na - na % 4, half = 2 * nk;
    Py_ssize_t a8 = 0; /* the rows the 8 x 8 tiles move */
#if HAVE_AVX2_DISPATCH
    if (nk % 8 == 0 && wide_ok()) {
        a8 = na - na % 8;
        wide_rows(d, s, a8, nk, ra, uk, to);
    }
#endif
#if HAVE_STREAM
    for (Py_ssize_t a = a8; a < ea; a += 4)
        for (Py_ssize_t q = 0; q < nk; q += 4) {
            if (to)
                pairs_tile_in(d + q * uk + a * 4, s + a * ra + q * 2, ra, uk, half);
            else
                pairs_tile_out(d + a * ra + q * 2, s + q * uk + a * 4, ra, uk, half);
        }
#else
    (void)half;
    for (Py_ssize_t a = a8; a < ea; a++) pairs_row(d + (to ? a * 4 : a * ra), s + (to ? a * ra : a * 4), nk, uk, to);
#endif
    for (Py_ssize_t a = ea; a < na; a++) pairs_row(d + (to ? a * 4 : a * ra), s + (to ? a * ra : a * 4), nk, uk, to);
}

/* The stage's c rows (PAIRS_ROW bytes apart) from / to the rows side's block at rows (ra apart),
 * `bytes` of each (streamed out: stream). */
static void pairs_stage(char *stage, char *rows, Py_ssize_t c, Py_ssize_t ra, Py_ssize_t bytes, int to, int stream)
{
    for (Py_ssize_t a = 0; a < c; a++) {
        char *x = stage + a * PAIRS_ROW, *y = rows + a * ra;
        if (to && bytes == PAIRS_ROW) memcpy(x, y, PAIRS_ROW);
        else if (to) memcpy(x, y, (size_t)bytes);
        else if (stream) stream_out(y, x, (size_t)bytes);
        else if (bytes == PAIRS_ROW) memcpy(y, x, PAIRS_ROW);
        else memcpy(y, x, (size_t)bytes);
    }
}

/* The lines of c rows' first `bytes` at rows (ra apart) fetched into L1. */
static inline void pairs_ahead(const char *rows, Py_ssize_t c, Py_ssize_t ra, Py_ssize_t bytes)
{
#if HAVE_STREAM
    for (Py_ssize_t a = 0; a < c; a++)
        for (Py_ssize_t b = 0; b < bytes + 63; b += 64) /* (the last byte's line too) */
            _mm_prefetch(rows + a * ra + (b < bytes ? b : bytes - 1), _MM_HINT_T0);
#else
    (void)rows, (void)c, (void)ra, (void)bytes;
#endif
}

/* The first block of n items of `size` bytes along an axis from p: up to the next line boundary
 * (where that is a whole number of them, fewer than b, and the axis's stride `step` a multiple of
 * a line), else b; at most n. */
static inline Py_ssize_t pairs_first(const char *p, Py_ssize_t size, Py_ssize_t b, Py_ssize_t step, Py_ssize_t n)
{
    const Py_ssize_t head = (Py_ssize_t)((64 - (uintptr_t)p % 64) % 64);
    Py_ssize_t f = head && head % size == 0 && head / size < b && step % 64 == 0 ? head / size : b;
    return f < n ? f : n;
}

#define PAIRS_LINES_STAGE 8192 /* bytes of each of pairs_lines_to's two stages */

/* To the units in a streamed call, where each k's unit rows run on over G (ug = 4*na) and a
 * block of all na rows x a g holds in a stage: blocks of gl g x all rows through two L1 stages,
 * one of the rows' pieces (gl*piece bytes of each row, the next block's fetched ahead), one of
 * the units (k's gl unit rows together, a run of gl*na*4 bytes streamed out, its partial
 * lines stored). f16[64,128,256,4]{1,2,0,3:T(8,128)(2,1)} to_physical, 16 MiB, one thread:
 * 2.9-3.0 -> 2.4-2.5x a copy (the rows not fetched ahead: 3.6; the units stored: 2.65). From
 * the units the same blocks measured no faster than pairs_box's (f16[2048,512,16]{0,1,2:
 * T(8,128)(2,1)}, a g a block: 2.35 -> 3.2). 0 if the box is not such. */
static int pairs_lines_to(const plan_t *p, const pairs_t *pa, char *d, const char *s)
{
    const Py_ssize_t na = p->shape[pa->a], nk = p->shape[pa->k], ng = p->shape[pa->g];
    const Py_ssize_t ra = p->ss[pa->a], uk = p->ds[pa->k], rg = p->ss[pa->g], ug = p->ds[pa->g];
    const Py_ssize_t piece = 4 * nk, block = na * piece;
    if (!pa->to || !p->stream || ug != 4 * na || block > PAIRS_LINES_STAGE) return 0;
    const Py_ssize_t L = PAIRS_LINES_STAGE / block;
    _Alignas(64) char rows[PAIRS_LINES_STAGE], units[PAIRS_LINES_STAGE];
    for (Py_ssize_t g0 = 0; g0 < ng; g0 += L) {
        const Py_ssize_t gl = ng - g0 < L ? ng - g0 : L, run = gl * na * 4;
        const Py_ssize_t next = (ng - g0 - gl < L ? ng - g0 - gl : L) * piece;
        for (Py_ssize_t a = 0; a < na; a++) memcpy(rows + a * gl * piece, s + g0 * rg + a * ra, (size_t)(gl * piece));
        if (next) pairs_ahead(s + (g0 + gl) * rg, na, ra, next);
        for (Py_ssize_t g = 0; g < gl; g++)
            pairs_rows(units + g * na * 4, rows + g * piece, na, nk, gl * piece, run, 1);
        for (Py_ssize_t k = 0; k < nk; k++) stream_lines(d + g0 * ug + k * uk, units + k * run, (size_t)run);
    }
    return 1;
}

/* The G x A x K box at d, s (pairs_axes holds). Where the rows side's rows run on over G in
 * pieces of less than a line, L = PAIRS_ROW / piece g at a time go through an L1 stage of
 * PAIRS_ROW bytes a row, so that each row's lines are read (written) whole at once: the rows,
 * often a multiple of 2 KiB apart, share L1 sets, and visited once per g their lines left L1
 * in between (streamed out where the call streams). The tiles go g by g, the unit rows of
 * each k then written (read) in order. The blocks of G start at the rows' line boundaries and
 * those of A at the units' (the arrays numpy allocates start 16 bytes past one): a block's
 * streamed lines are then whole (f16[64,128,256,4]{1,2,0,3:T(8,128)(2,1)} from_physical, one
 * thread, 2.75 -> 1.8x a copy). */
static void pairs_box(const plan_t *p, const pairs_t *pa, char *d, const char *s)
{
    const int to = pa->to;
    const Py_ssize_t *rs = to ? p->ss : p->ds, *us = to ? p->ds : p->ss;
    const Py_ssize_t na = p->shape[pa->a], nk = p->shape[pa->k], ra = rs[pa->a], uk = us[pa->k];
    const Py_ssize_t piece = 4 * nk;
    if (pa->g < 0) {
        pairs_rows(d, s, na, nk, ra, uk, to);
        return;
    }
    if (pairs_lines_to(p, pa, d, s)) return;
    const Py_ssize_t ng = p->shape[pa->g], dg = p->ds[pa->g], sg = p->ss[pa->g], L = PAIRS_ROW / piece;
    const Py_ssize_t rg = rs[pa->g], ug = us[pa->g];
    char *rbase = to ? (char *)s : d, *ubase = to ? d : (char *)s; /* (the source only read) */
    const Py_ssize_t fg = pairs_first(rbase, piece, L, ra, ng), fa = pairs_first(ubase, 4, PAIRS_STAGE_ROWS, ug, na);
    _Alignas(64) char stage[PAIRS_STAGE_ROWS * PAIRS_ROW];
    for (Py_ssize_t g0 = 0, gl = fg; g0 < ng; g0 += gl, gl = ng - g0 < L ? ng - g0 : L) {
        const Py_ssize_t bytes = gl * piece;
        for (Py_ssize_t a0 = 0, c = fa; a0 < na; a0 += c, c = na - a0 < PAIRS_STAGE_ROWS ? na - a0 : PAIRS_STAGE_ROWS) {
            char *rows = rbase + g0 * rg + a0 * ra; /* the rows side's block */
            if (to) pairs_stage(stage, rows, c, ra, bytes, 1, 0);
            for (Py_ssize_t g = g0; g < g0 + gl; g++) {
                char *row0 = stage + (g - g0) * piece;
                if (to) pairs_rows(d + g * dg + a0 * 4, row0, c, nk, PAIRS_ROW, uk, 1);
                else pairs_rows(row0, s + g * sg + a0 * 4, c, nk, PAIRS_ROW, uk, 0);
            }
            if (!to) pairs_stage(stage, rows, c, ra, bytes, 0, p->stream);
        }
    }
}

/* The plan as pairs_box's boxes, the other axes outside in their order. */
static void pairs_plan(const plan_t *p, const pairs_t *pa)
{
    int outer[MAX_DIMS], n = 0;
    for (int x = 0; x < p->ndim; x++)
        if (x != pa->a && x != pa->j && x != pa->k && x != pa->g && p->shape[x] > 1) outer[n++] = x;
    Py_ssize_t idx[MAX_DIMS] = {0};
    char *d = p->dst;
    const char *s = p->src;
    do
        pairs_box(p, pa, d, s);
    while (next_outer(p, outer, n, idx, &d, &s));
}

#endif
