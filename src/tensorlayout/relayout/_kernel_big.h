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
 * copy as scalar loops, 2.1-2.3x here).
 * Self-contained (include guard): it includes the register tiles it runs. */
#ifndef TENSORLAYOUT_KERNEL_BIG_H
#define TENSORLAYOUT_KERNEL_BIG_H
#include "_kernel_tiles.h"

#define BIG_RUN 512   /* bytes of each source row per block */
#define BIG_COLS 2048 /* bytes of each destination row per block */
#define BIG_ROWS 512  /* rows per block on either side, at most */
#define BIG_PAD 64    /* stage rows this much past a multiple of the run: apart in the L1 sets */
#define BIG_FEW 16    /* source rows (far apart) that go tile by tile as they are (big_takes) */
#define BIG_MIN_OUT 512 /* bytes of each destination row a block writes, at least (big_transpose) */

/* Rows numbered across an axis: row i at (i / n) * outer + (i % n) * inner bytes. */
typedef struct {
    Py_ssize_t n, outer, inner;
} big_rows_t;

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

/* Stage bytes for items of `it` bytes: the source block's rows, then the destination's. */
static inline Py_ssize_t big_stage_bytes(Py_ssize_t it, Py_ssize_t *bx, Py_ssize_t *by, Py_ssize_t *ps,
                                         Py_ssize_t *pd)
{
    *bx = big_min(BIG_RUN / it, BIG_ROWS);
    *by = big_min(BIG_COLS / it, BIG_ROWS);
    *ps = *bx * it + BIG_PAD;
    *pd = *by * it + BIG_PAD;
    return *by * *ps + *bx * *pd;
}

/* dst[drow(x) + y*it] = src[srow(y) + x*it] for x < nx, y < ny, in blocks along the source rows
 * (see the top); `stage`: big_stage_bytes, 64-byte aligned. Rows of a partial block past its
 * last go through the tiles too (stage bytes, never written out). */
static void big_blocks(const tiler_t *t, char *d, const char *s, Py_ssize_t nx, Py_ssize_t ny,
                       const big_rows_t *dr, const big_rows_t *sr, char *stage, int lg)
{
    const Py_ssize_t it = ITEM(lg), v = t->v;
    Py_ssize_t bx, by, ps, pd;
    big_stage_bytes(it, &bx, &by, &ps, &pd);
    char *S = stage, *D = stage + by * ps;
    Py_ssize_t off[BIG_ROWS];
    for (Py_ssize_t y0 = 0; y0 < ny; y0 += by) {
        const Py_ssize_t cy = big_min(by, ny - y0), cyr = (cy + v - 1) / v * v;
        for (Py_ssize_t x0 = 0; x0 < nx; x0 += bx) {
            const Py_ssize_t cx = big_min(bx, nx - x0), cxr = (cx + v - 1) / v * v;
            big_offsets(sr, y0, cy, off);
            for (Py_ssize_t y = 0; y < cy; y++) memcpy(S + y * ps, s + off[y] + x0 * it, (size_t)(cx * it));
            for (Py_ssize_t xt = 0; xt < cxr; xt += v)
                for (Py_ssize_t yt = 0; yt < cyr; yt += v) t->tile(D + xt * pd + yt * it, S + yt * ps + xt * it, pd, ps, 0);
            big_offsets(dr, x0, cx, off);
            for (Py_ssize_t x = 0; x < cx; x++) stream_out(d + off[x] + y0 * it, D + x * pd, (size_t)(cy * it));
        }
    }
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
    big_rows_t dr = {na, 0, da}, sr = {nb, 0, sb};
    Py_ssize_t nx = na, ny = nb, each = ng > 1;
    if (ng > 1 && sg == na * it) { /* the source rows run on over g: rows x across g */
        dr.outer = dg;
        nx = ng * na;
        each = 0;
    } else if (ng > 1 && dg == nb * it) { /* the destination's: rows y across g */
        sr.outer = sg;
        ny = ng * nb;
        each = 0;
    }
    /* Short destination runs that are not whole lines stream partial lines row after row: 33
     * source rows, f32[65,2887,33]{1,0,2:T(4,128)} from_physical, 132-byte runs, 2.3 -> 7x a copy
     * here; whole ones are fine (s32[128,2048,32]{1,0,2:T(1,128)} from, 128 bytes: 5.4 -> 2x). */
    if (nx < t->v || ny < t->v || (ny * it < BIG_MIN_OUT && ny * it % 64 != 0)) return 0;
    Py_ssize_t bx, by, ps, pd, bytes = big_stage_bytes(it, &bx, &by, &ps, &pd);
    void *raw = PyMem_RawMalloc((size_t)bytes + 64); /* (the GIL is released) */
    if (raw == NULL) return 0;
    char *stage = (char *)(((uintptr_t)raw + 63) & ~(uintptr_t)63);
    for (Py_ssize_t g = 0; g < (each ? ng : 1); g++)
        big_blocks(t, d + g * dg, s + g * sg, nx, ny, &dr, &sr, stage, lg);
    PyMem_RawFree(raw);
    return 1;
}

#endif
