/* _kernel_big.h: transposes of buffers beyond the caches (streamed copies), in big blocks that
 * read every source row and write every destination row in runs of many lines.
 *
 * A streamed transpose whose rows are far apart (each row its own pages, its lines in the
 * same cache sets as the other rows') and visited a line or two at a time leaves the
 * prefetchers behind, and the lines they do fetch evict each other from the sets the rows
 * share: measured one thread, ratio to a copy, tile by tile with streamed stores,
 * f16[512,65536]{0,1:T(2,128)(2,1)} to_physical 5.1-5.5x, pred[16384,2048]{0,1:T(4,128)(4,1)}
 * from_physical 5.3-6.1x (rows 128 / 64 KiB apart). Here a block is BIG_RUN bytes of each of
 * up to BIG_ROWS source rows, gathered row by row into a stage (whose rows are padded out of
 * each other's sets), transposed there in register tiles into a second stage, and written out
 * as BIG_COLS bytes of each destination row, streamed past the cache: each row is read and
 * written in runs of 8 and 32 lines (the same two: 1.3x and 1.75x). Shorter runs measured
 * slower: 256 + 256 bytes 2.5-3x, 1024 + 1024 2.0x, 4096 + 64 (strips) 4.5x; both stages
 * fit the 1 MiB L2.
 *
 * Rows on either side may run on over a third axis g (a tiled layout's tile columns: a tile's
 * destination rows, then the next tile's): rows are then numbered across g, row i at
 * (i / n) * outer + (i % n) * inner (big_rows_t), and a block spans tiles
 * (s16[704,43384]{0,1:T(4,128)(2,1)}: two 4-byte items per source row per tile, 8.0-8.7x a
 * copy as scalar loops, 2.1-2.3x here). Rows on both sides may each run on over an axis of
 * their own, the source's columns in pieces (big_plan: a T(2,128) tile's rows, read into logical
 * rows or another tiling's; columns numbered as rows are, big_cols_t). A block's source rows are
 * fetched BIG_AHEAD rows ahead (big_gather); destination rows off their lines of up to BIG_WHOLE
 * bytes go whole (big_transpose).
 * Self-contained (include guard): it includes the register tiles it runs. */
#ifndef TENSORLAYOUT_KERNEL_BIG_H
#define TENSORLAYOUT_KERNEL_BIG_H
#include "_kernel_tiles.h"

#define BIG_RUN 512   /* bytes of each source row per block */
#define BIG_COLS 2048 /* bytes of each destination row per block */
#define BIG_ROWS 512  /* rows per block on either side, at most (but see BIG_WHOLE) */
#define BIG_PAD 64    /* stage rows this much past a multiple of the run: apart in the L1 sets */
#define BIG_FEW 16    /* source rows (far apart) that go tile by tile as they are (big_takes) */
#define BIG_AHEAD 8    /* source rows ahead whose block pieces are fetched (big_gather) */
#define BIG_WHOLE 4096 /* destination rows of up to this many bytes ... */
#define BIG_WHOLE_ROWS 1024 /* ... and items go whole, one piece each (big_transpose) ... */
#define BIG_WHOLE_RUN 256 /* ... with this many bytes of each source row per block */
#define BIG_MIN_OUT 512 /* bytes of each destination row a block writes, at least (big_transpose) */

/* Rows numbered across an axis: row i at (i / n) * outer + (i % n) * inner bytes. */
typedef struct {
    Py_ssize_t n, outer, inner;
} big_rows_t;

/* Columns numbered across an axis: column x at (x / n) * outer + (x % n) * item bytes (n = BIG_ONE
 * and outer 0: a plain run). */
typedef struct {
    Py_ssize_t n, outer;
} big_cols_t;
#define BIG_ONE (PY_SSIZE_T_MAX / 4)

/* A big-block transpose: dst row x, column y = src row y, column x, for x < nx, y < ny; blocks
 * of bx source columns by by source rows; streamed stores where nt. */
typedef struct {
    big_rows_t sr, dr;
    big_cols_t sc, dc;
    Py_ssize_t nx, ny, bx, by;
    int nt;
} big_geom_t;

static inline Py_ssize_t big_min(Py_ssize_t a, Py_ssize_t b) { return a < b ? a : b; }

/* The byte offsets of rows [i, i + c) into off (one division for all). */
static inline void big_offsets(const big_rows_t *r, Py_ssize_t i, Py_ssize_t c, Py_ssize_t *off)
{
    Py_ssize_t k = i % r->n, at = i / r->n * r->outer + k * r->inner;
    for (Py_ssize_t j = 0; j < c; j++) {
        off[j] = at;
        at += r->inner;
        if (++k == r->n) {
            k = 0;
            at += r->outer - r->n * r->inner;
        }
    }
}

/* A block's columns [x, x + c) of every row as pieces: bytes[i] at `at[i]` from the row's start
 * (one division per block, not per row). Pieces of n >= 2 items (big_plan's na, nb; BIG_ONE: one
 * piece) are at most BIG_PIECES for c <= BIG_ROWS. */
#define BIG_PIECES (BIG_ROWS / 2 + 2)
typedef struct {
    int n;
    Py_ssize_t at[BIG_PIECES], bytes[BIG_PIECES];
} big_pieces_t;

static void big_cut(big_pieces_t *pc, const big_cols_t *m, Py_ssize_t x, Py_ssize_t c, Py_ssize_t it)
{
    pc->n = 0;
    while (c > 0 && pc->n < BIG_PIECES) {
        Py_ssize_t k = x % m->n, run = big_min(m->n - k, c);
        pc->at[pc->n] = x / m->n * m->outer + k * it;
        pc->bytes[pc->n++] = run * it;
        x += run, c -= run;
    }
}

/* `bytes` of s to d past the cache: 16-byte pieces on 16-byte boundaries as they are
 * (stream_out), else the whole lines among them, the partial ones at either end stored
 * (stream_lines): rows off their lines (s32[2993,1557]{0,1:T(2,128)} from_physical, rows
 * 6228 bytes apart) had three in four go through the cache whole under stream_out. */
static inline void big_stream(char *d, const char *s, Py_ssize_t bytes)
{
    if ((((uintptr_t)d | (uintptr_t)bytes) & 15) == 0)
        stream_out(d, s, (size_t)bytes);
    else
        stream_lines(d, s, (size_t)bytes);
}

/* flat into a row's pieces pc, streamed where nt. */
static inline void big_write(char *row, const char *flat, const big_pieces_t *pc, int nt)
{
    for (int i = 0; i < pc->n; flat += pc->bytes[i++])
        if (nt) big_stream(row + pc->at[i], flat, pc->bytes[i]);
        else memcpy(row + pc->at[i], flat, (size_t)pc->bytes[i]);
}

/* Stage bytes for geometry b with items of `it` bytes (rows padded BIG_PAD apart in the sets):
 * the source block's rows (*ps apart), then the destination's (*pd apart). */
static inline Py_ssize_t big_stage_bytes(const big_geom_t *b, Py_ssize_t it, Py_ssize_t *ps, Py_ssize_t *pd)
{
    *ps = b->bx * it + BIG_PAD;
    *pd = b->by * it + BIG_PAD;
    return b->by * *ps + b->bx * *pd;
}

/* A block's cy source rows (at s + off[y]) into the stage's (ps apart), each row's pieces pc, the
 * pieces of the row BIG_AHEAD on fetched first: rows far apart, 512 bytes each, are no stream
 * the prefetchers follow (one thread, CPU time, alternating in one process, busy machine:
 * s16[704,43384]{0,1:T(4,128)(2,1)} to_physical 3.46 -> 3.06x a copy, f16[19571,1123]{0,1:
 * T(2,128)(2,1)} from_physical 3.77 -> 3.37). */
static inline void big_gather(char *S, Py_ssize_t ps, const char *s, const Py_ssize_t *off, Py_ssize_t cy,
                              const big_pieces_t *pc)
{
    for (Py_ssize_t y = 0; y < cy; y++) {
#if HAVE_STREAM
        if (y + BIG_AHEAD < cy)
            for (int i = 0; i < pc->n; i++)
                for (Py_ssize_t q = 0; q < pc->bytes[i]; q += 64) /* (inside the block's bytes) */
                    _mm_prefetch(s + off[y + BIG_AHEAD] + pc->at[i] + q, _MM_HINT_T0);
#endif
        if (pc->n == 1) /* (one run a row: the plain copy) */
            memcpy(S + y * ps, s + off[y] + pc->at[0], (size_t)pc->bytes[0]);
        else
            for (int i = 0, f = 0; i < pc->n; f += (int)pc->bytes[i++])
                memcpy(S + y * ps + f, s + off[y] + pc->at[i], (size_t)pc->bytes[i]);
    }
}

/* dst[drow(x) + dcol(y)] = src[srow(y) + scol(x)] for x < nx, y < ny (geometry b), in blocks
 * along the source rows (see the top); `stage`: big_stage_bytes, 64-byte aligned. Rows of a
 * partial block past its last go through the tiles too (stage bytes, never written out). */
static void big_blocks(const tiler_t *t, char *d, const char *s, const big_geom_t *b, char *stage, int lg)
{
    const Py_ssize_t it = ITEM(lg), v = t->v, bx = b->bx, by = b->by;
    Py_ssize_t ps, pd;
    big_stage_bytes(b, it, &ps, &pd);
    char *S = stage, *D = stage + by * ps;
    Py_ssize_t off[BIG_WHOLE_ROWS]; /* (by, bx <= BIG_WHOLE_ROWS) */
    big_pieces_t pc;
    for (Py_ssize_t y0 = 0; y0 < b->ny; y0 += by) {
        const Py_ssize_t cy = big_min(by, b->ny - y0), cyr = (cy + v - 1) / v * v;
        for (Py_ssize_t x0 = 0; x0 < b->nx; x0 += bx) {
            const Py_ssize_t cx = big_min(bx, b->nx - x0), cxr = (cx + v - 1) / v * v;
            big_offsets(&b->sr, y0, cy, off);
            big_cut(&pc, &b->sc, x0, cx, it);
            big_gather(S, ps, s, off, cy, &pc);
            for (Py_ssize_t xt = 0; xt < cxr; xt += v)
                for (Py_ssize_t yt = 0; yt < cyr; yt += v)
                    t->tile(D + xt * pd + yt * it, S + yt * ps + xt * it, pd, ps, 0);
            big_offsets(&b->dr, x0, cx, off);
            big_cut(&pc, &b->dc, y0, cy, it);
            if (pc.n == 1 && b->nt) {
                const Py_ssize_t at = pc.at[0], bytes = pc.bytes[0];
                for (Py_ssize_t x = 0; x < cx; x++) big_stream(d + off[x] + at, D + x * pd, bytes);
            } else
                for (Py_ssize_t x = 0; x < cx; x++) big_write(d + off[x], D + x * pd, &pc, b->nt);
        }
    }
}

/* Run geometry b (b->nx, b->ny at least a tile) from d and s, and n times more dg and sg
 * bytes on, through a stage of its own; 0 (nothing done) where it cannot be allocated. */
static int big_run(const tiler_t *t, char *d, const char *s, const big_geom_t *b, int lg, Py_ssize_t n,
                   Py_ssize_t dg, Py_ssize_t sg)
{
    Py_ssize_t ps, pd, bytes = big_stage_bytes(b, ITEM(lg), &ps, &pd);
    void *raw = PyMem_RawMalloc((size_t)bytes + 64); /* (the GIL is released) */
    if (raw == NULL) return 0;
    for (Py_ssize_t g = 0; g < n; g++)
        big_blocks(t, d + g * dg, s + g * sg, b, (char *)(((uintptr_t)raw + 63) & ~(uintptr_t)63), lg);
    PyMem_RawFree(raw);
    return 1;
}

/* Whether a streamed transpose (transpose_streamed's arguments) goes in big blocks: where it
 * would go tile by tile (`tiled`: source rows far apart) past BIG_FEW source rows (16 rows
 * 1 MiB apart, f32[512,512,16]{1,0,2:T(1,128)} from_physical, measured 0.8x a copy so, 2.5x in
 * strips), and where it would go through the cache (neither side's rows run on over g as the
 * strips want: s32[2993,1557]{0,1:T(2,128)} from_physical 3.6-4.1 -> 2.6x a copy), of items of
 * 2 bytes or more (1-byte ones measured no faster). Not where the strips take it (source rows
 * that run on, not far apart: s32[8,2048,1024]{1,2,0:T(1,128)} 1.3x a copy there, 1.7x here). */
static int big_takes(int tiled, Py_ssize_t ng, Py_ssize_t na, Py_ssize_t nb, Py_ssize_t dg, Py_ssize_t sg, int lg)
{
    const Py_ssize_t it = ITEM(lg);
    if (tiled) return (ng > 1 && dg == nb * it ? ng * nb : nb) > BIG_FEW;
    return !(ng == 1 || sg == na * it) && it >= 2;
}

/* A streamed transpose of ng x na x nb items (see transpose_streamed) in big blocks: rows
 * numbered across g where one side's run on over it, else g by g. Returns 0 (nothing done)
 * where a side has fewer rows than a tile, or the stage cannot be allocated. */
static int big_transpose(const plan_t *p, char *d, const char *s, Py_ssize_t ng, Py_ssize_t na, Py_ssize_t nb,
                         Py_ssize_t dg, Py_ssize_t da, Py_ssize_t sg, Py_ssize_t sb, int lg)
{
    const tiler_t *t = &tilers[lg];
    const Py_ssize_t it = ITEM(lg);
    if (!p->stream || t->tile == NULL) return 0;
    big_geom_t b = {{nb, 0, sb}, {na, 0, da}, {BIG_ONE, 0}, {BIG_ONE, 0}, na, nb, 0, 0, 1};
    Py_ssize_t each = ng > 1;
    if (ng > 1 && sg == na * it) { /* the source rows run on over g: rows x across g */
        b.dr.outer = dg;
        b.nx = ng * na;
        each = 0;
    } else if (ng > 1 && dg == nb * it) { /* the destination's: rows y across g */
        b.sr.outer = sg;
        b.ny = ng * nb;
        each = 0;
    }
    /* Short destination runs that are not whole lines stream partial lines row after row: 33
     * source rows, f32[65,2887,33]{1,0,2:T(4,128)} from_physical, 132-byte runs, 2.3 -> 7x a copy
     * here; whole ones are fine (s32[128,2048,32]{1,0,2:T(1,128)} from, 128 bytes: 5.4 -> 2x). */
    if (b.nx < t->v || b.ny < t->v || (b.ny * it < BIG_MIN_OUT && b.ny * it % 64 != 0)) return 0;
    b.bx = big_min(BIG_RUN / it, BIG_ROWS);
    b.by = big_min(BIG_COLS / it, BIG_ROWS);
    /* Destination rows off their lines a little past BIG_COLS bytes went as BIG_COLS and the
     * rest, each row's lines at the cut written twice apart (f16[19571,1123]{0,1:T(2,128)(2,1)}
     * from_physical, rows of 2244 bytes 2246 apart); they go whole, fewer source bytes a block
     * (rows on their lines measured slower so: s32[2993,1557]{0,1:T(2,128)} to_physical). */
    if (b.ny > b.by && b.ny <= BIG_WHOLE_ROWS && b.ny * it <= BIG_WHOLE && da % 64 != 0) { /* (b.dc: one piece) */
        b.by = b.ny;
        b.bx = BIG_WHOLE_RUN / it;
    }
    return big_run(t, d, s, &b, lg, each ? ng : 1, dg, sg);
}

/* Whether axis k (of a plan transposing innermost: a, b the last two) numbers the x rows on: the
 * source's columns run on over it, or the destination's rows. */
static inline int big_x_axis(const plan_t *p, int k)
{
    const int a = p->ndim - 2;
    return p->shape[k] > 1 && (p->ss[k] == p->shape[a] * p->item || p->ds[k] == p->shape[a] * p->ds[a]);
}

/* ... the y rows: the destination's columns run on over it (rows in pieces of a few items, which
 * the gathering loops would otherwise take; where the source's rows run on instead, the strips
 * read them along: s32[2993,1557]{0,1:T(2,128)} to_physical measured slower here). */
static inline int big_y_axis(const plan_t *p, int k)
{
    return p->shape[k] > 1 && p->ds[k] == p->shape[p->ndim - 1] * p->item;
}

/* Whether big_plan's blocks take whole source pieces (columns in pieces of n = na items, sc)
 * where a piece is up to twice BIG_RUN: a T(4,128) tile's 1 KiB rows of 8-byte items read whole,
 * not in two halves a block apart (s64[16384,128]{0,1:T(4,128)} from_physical, the kernel call
 * alone, one thread, base and this build alternating in one process, medians of 31 rounds over
 * a copy's: 2.2 -> 2.0; its relayout into {1,0:T(1,128)} 2.2-2.3 -> 2.1; BIG_RUN 1024 for every
 * big block measured s32[2993,1557]{0,1:T(2,128)} from_physical 2.6 -> 2.9). The block is na
 * rounded up to a whole tile (the tiles of a partial block run to one: its stage rows). */
static inline int big_whole_pieces(const big_cols_t *sc, Py_ssize_t na, Py_ssize_t it)
{
    return sc->n == na && na * it > BIG_RUN && na * it <= 2 * BIG_RUN && na <= BIG_ROWS - 8;
}

/* A streamed transpose of 4- or 8-byte items whose x and y rows both run on over an axis of their
 * own (xa, ya: the innermost such pair before the transpose's two), in big blocks across
 * them, the other axes looped over (the columns of a T(2,128) tile's rows, 512 bytes each
 * in tiles 1 KiB apart, read into logical rows: s32[2993,1557]{0,1:T(2,128)} from_physical).
 * Returns 0 (nothing done) where the plan is not such a transpose. */
static int big_plan(const plan_t *p)
{
    const int a = p->ndim - 2, b = p->ndim - 1, lg = log2_small(p->item);
    if (!p->stream || p->swap || a < 2 || (lg != 2 && lg != 3) || tilers[lg].tile == NULL) return 0;
    const Py_ssize_t it = p->item, na = p->shape[a], nb = p->shape[b];
    if (p->ds[b] != it || p->ss[a] != it || na < 2 || nb < 2) return 0;
    int xa = -1, ya = -1;
    for (int k = a - 1; k >= 0 && xa < 0; k--)
        for (int j = a - 1; j >= 0; j--)
            if (j != k && big_x_axis(p, k) && big_y_axis(p, j)) {
                xa = k, ya = j;
                break;
            }
    if (xa < 0) return 0;
    const Py_ssize_t sx = p->ss[xa], dy = p->ds[ya];
    big_geom_t g = {{nb, p->ss[ya], p->ss[b]}, {na, p->ds[xa], p->ds[a]}, {sx == na * it ? BIG_ONE : na, sx},
                    {dy == nb * it ? BIG_ONE : nb, dy}, na * p->shape[xa], nb * p->shape[ya], 0, 0, 1};
    const tiler_t *t = &tilers[lg];
    if (g.nx < t->v || g.ny < t->v) return 0;
    g.bx = big_whole_pieces(&g.sc, na, it) ? (na + t->v - 1) / t->v * t->v /* (a whole tile) */
                                            : big_min(BIG_RUN / it, BIG_ROWS);
    g.by = big_min(BIG_COLS / it, BIG_ROWS);
    int outer[MAX_DIMS], n = 0;
    for (int k = 0; k < a; k++)
        if (k != xa && k != ya) outer[n++] = k;
    Py_ssize_t idx[MAX_DIMS] = {0}, ps, pd;
    void *raw = PyMem_RawMalloc((size_t)big_stage_bytes(&g, it, &ps, &pd) + 64); /* (the GIL is released) */
    if (raw == NULL) return 0;
    char *d = p->dst, *stage = (char *)(((uintptr_t)raw + 63) & ~(uintptr_t)63);
    const char *s = p->src;
    do big_blocks(t, d, s, &g, stage, lg);
    while (next_outer(p, outer, n, idx, &d, &s));
    PyMem_RawFree(raw);
    return 1;
}

#endif
