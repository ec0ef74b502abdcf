/* _kernel_chains.h: transposes whose contiguous runs are each split over two axes (chains), moved
 * a block of both chains at a time through two L1/L2 stages.
 *
 * f16[1024,2048]{1,0:T(4,128)(2,1)} -> {0,1:T(8,128)(2,1)} in one pass is, in 8-byte units (2 x 2
 * items), a task of shape (8,16,32,16,4,2): the 64 units contiguous in the source are 4 x 16 (the
 * destination's 8-column tiles: 512 and 16384 bytes apart there), the 64 contiguous in the
 * destination 2 x 32 (the source's 4-row tiles: 512 and 16384 bytes apart there). No 2-D transpose
 * larger than 4 x 2 units has even strides on both sides, so the tiles' loops ran mostly scalar
 * (7.7x a copy, against 2.5x for two passes through the logical array). Here, per block of the
 * outer axes, the source's rows (each a whole run of its chain) are copied into a stage of even
 * rows, that stage is transposed (swapped units as such) into a second one by the vector tiles,
 * and its rows go out whole to the destination's runs (streamed where the call streams).
 * Self-contained (include guard). */
#ifndef TENSORLAYOUT_KERNEL_CHAINS_H
#define TENSORLAYOUT_KERNEL_CHAINS_H
#include "_kernel_tiles.h"

#define CHAIN_STAGE 32768   /* bytes of each of the two stages */
/* Taken where the even transpose inside is at most CHAIN_NARROW bytes wide on one side: one tile of 4 x 4
 * swapped units or 8 x 8 four-byte items a block measured slower than the stages (one thread, in turn:
 * bf16[1024,1024]{1,0:T(8,128)(2,1)} -> {0,1:T(8,128)(2,1)} 3.3 -> 2.4x a copy, f32[1024,1024]
 * {1,0:T(8,128)} -> {0,1:T(8,128)} 4.1 -> 2.4x, f16[2048,512,16]{0,1,2:T(8,128)(2,1)} -> {1,0,2:...}
 * 2.8 -> 1.7x); 8 x 8 eight-byte items faster (f64[1024,1024]{1,0:T(8,128)} -> {0,1:...} 1.7 -> 3.0x). */
#define CHAIN_NARROW 32
#define CHAIN_MIN_RUN 64    /* ... and both chains are at least this many bytes */
/* ... and, of plain items (not swapped units), the call's destination is smaller than this: out of
 * the caches the tiles' loops, streamed, measured faster (one thread, against a copy:
 * s32[2993,1557]{0,1:T(2,128)} -> {1,0:T(8,128)}, 19 MiB, 1.83-2.0x against 2.1-2.4x chained;
 * f32[14199,327]{1,0:T(4,128)} -> {0,1:T(8,128)} 1.9 against 2.2), in them slower
 * (f32[2000,1500]{1,0:T(2,128)} -> {0,1:T(4,128)}, 12 MiB: 8.1 against 3.2x chained). Swapped
 * units are faster chained at any size (f16[4096,4096]{1,0:T(4,128)(2,1)} -> {0,1:T(8,128)(2,1)},
 * 32 MiB: 5.0 -> 2.1x). */
#define CHAIN_PLAIN_MAX_BYTES (16 << 20)

/* The four inner axes [jh, ih, il, jl]: il contiguous in the source and ih its run going on (the
 * source's chain), jl contiguous in the destination and jh its run going on (the destination's). */
typedef struct {
    int lg;                                  /* log2 of the unit (+ SWAPPED) */
    Py_ssize_t il, ih, jl, jh;               /* the axes' extents */
    Py_ssize_t ds_il, ds_ih, ss_jl, ss_jh;   /* their strides on the other side */
    Py_ssize_t ic, jc;                       /* ih, jh steps per block */
} chains_t;

/* Whether plan p's last four axes are two chains whose inner transpose is narrow (CHAIN_NARROW),
 * both chains long (CHAIN_MIN_RUN), swapped or in the caches (CHAIN_PLAIN_MAX_BYTES); fills *c if so. */
static int chains_axes(const plan_t *p, chains_t *c)
{
    const int L = p->ndim - 1;
    const Py_ssize_t it = p->item;
    int lg = log2_small(it);
    if (L < 3 || lg < 0 || (p->swap && it != 4 && it != 8) || p->tail_bytes > 0) return 0;
    if (!p->swap && p->dst_bytes >= CHAIN_PLAIN_MAX_BYTES) return 0;
    const Py_ssize_t *n = p->shape;
    if (p->ds[L] != it || p->ss[L - 1] != it || p->ss[L - 2] != n[L - 1] * it || p->ds[L - 3] != n[L] * it)
        return 0;
    if ((n[L - 1] < n[L] ? n[L - 1] : n[L]) * it > CHAIN_NARROW) return 0;
    if (n[L - 2] * n[L - 1] * it < CHAIN_MIN_RUN || n[L - 3] * n[L] * it < CHAIN_MIN_RUN) return 0;
    if (n[L - 1] * n[L] * it > CHAIN_STAGE) return 0;
    *c = (chains_t){lg + (p->swap ? SWAPPED : 0), n[L - 1], n[L - 2], n[L], n[L - 3],
                    p->ds[L - 1], p->ds[L - 2], p->ss[L], p->ss[L - 3], n[L - 2], n[L - 3]};
    while (c->ic * c->il * c->jc * c->jl * it > CHAIN_STAGE) { /* halve the longer side */
        if (c->ic * c->il >= c->jc * c->jl && c->ic > 1) c->ic = (c->ic + 1) / 2;
        else c->jc = (c->jc + 1) / 2;
    }
    return 1;
}

/* One block: ih in [i0, i0 + ni), jh in [j0, j0 + nj), from s and d at the block's outer step.
 * Where the call's destination is smaller than CHAIN_DIRECT_MAX_BYTES and the source's inner axis
 * il is a tile wide, the first stage goes through the tiles straight to the destination, il rows
 * at a time (one thread, in turn: s16[256,2048]{0,1:T(4,128)(2,1)} -> {1,0:T(8,128)(2,1)}, 1 MiB,
 * 3.2 -> 2.6x a copy, f16[512,1024]{1,0:T(4,128)(2,1)} -> {0,1:T(8,128)(2,1)} 3.3 -> 2.8x); larger,
 * the tiles' short pieces of lines measured slower than whole rows out of the second stage
 * (f16[1024,2048], 4 MiB, 2.5 -> 2.8x; streamed, f16[4096,4096] 2.1 -> 2.3x). */
#define CHAIN_DIRECT_MAX_BYTES (2 << 20)
static void chains_block(const plan_t *p, const chains_t *c, char *d, const char *s, Py_ssize_t i0,
                         Py_ssize_t ni, Py_ssize_t j0, Py_ssize_t nj, char *in, char *out)
{
    const Py_ssize_t it = p->item, rows_in = nj * c->jl, rows_out = ni * c->il;
    const size_t row_in = (size_t)(rows_out * it), row_out = (size_t)(rows_in * it);
    const char *sb = s + i0 * c->il * it;
    for (Py_ssize_t j = 0; j < nj; j++) /* the source's runs, each whole */
        for (Py_ssize_t l = 0; l < c->jl; l++)
            memcpy(in + (j * c->jl + l) * (Py_ssize_t)row_in, sb + (j0 + j) * c->ss_jh + l * c->ss_jl, row_in);
    char *db = d + j0 * c->jl * it;
    if (!p->stream && p->dst_bytes < CHAIN_DIRECT_MAX_BYTES && c->il >= tilers[c->lg].v) {
        for (Py_ssize_t i = 0; i < ni; i++)
            transpose_tiled(db + (i0 + i) * c->ds_ih, in + i * c->il * it, c->il, rows_in, c->ds_il,
                            (Py_ssize_t)row_in, c->lg, 0);
        return;
    }
    transpose_tiled(out, in, rows_out, rows_in, (Py_ssize_t)row_out, (Py_ssize_t)row_in, c->lg, 0);
    for (Py_ssize_t i = 0; i < ni; i++) /* the destination's runs, each whole */
        for (Py_ssize_t l = 0; l < c->il; l++) {
            char *o = db + (i0 + i) * c->ds_ih + l * c->ds_il;
            const char *q = out + (i * c->il + l) * (Py_ssize_t)row_out;
            if (p->stream) stream_out(o, q, row_out); else memcpy(o, q, row_out);
        }
}

/* The source rows of the block at s, ih from i0 and jh from j0 (ni, nj steps) fetched into the
 * cache ahead of its turn (out of the caches the rows' scattered reads otherwise wait on memory). */
static void chains_fetch(const chains_t *c, const char *s, Py_ssize_t i0, Py_ssize_t ni, Py_ssize_t j0,
                         Py_ssize_t nj, Py_ssize_t it)
{
#if HAVE_STREAM
    const Py_ssize_t bytes = ni * c->il * it;
    for (Py_ssize_t j = j0; j < j0 + nj; j++)
        for (Py_ssize_t l = 0; l < c->jl; l++) {
            const char *q = s + j * c->ss_jh + l * c->ss_jl + i0 * c->il * it;
            for (Py_ssize_t x = 0; x < bytes; x += 64) _mm_prefetch(q + x, _MM_HINT_T0);
            _mm_prefetch(q + bytes - 1, _MM_HINT_T0);
        }
#else
    (void)c, (void)s, (void)i0, (void)ni, (void)j0, (void)nj, (void)it;
#endif
}

/* The chained transpose of p (chains_axes holds): block by block, over the outer axes, each
 * block's source rows fetched during the one before (where the call streams: out of the caches). */
static void chains_run(const plan_t *p, const chains_t *c)
{
    _Alignas(64) char in[CHAIN_STAGE], out[CHAIN_STAGE];
    const int outer = p->ndim - 4;
    int axes[MAX_DIMS];
    Py_ssize_t idx[MAX_DIMS], nidx[MAX_DIMS];
    for (int k = 0; k < outer; k++) axes[k] = k, idx[k] = 0;
    char *d = p->dst, *nd;
    const char *s = p->src, *ns;
    Py_ssize_t i0 = 0, j0 = 0;
    for (;;) {
        Py_ssize_t ni = c->ih - i0 < c->ic ? c->ih - i0 : c->ic, nj = c->jh - j0 < c->jc ? c->jh - j0 : c->jc;
        Py_ssize_t ni0 = i0 + c->ic, nj0 = j0;
        int more = 1, stepped = 0;
        nd = d, ns = s;
        if (ni0 >= c->ih) ni0 = 0, nj0 = j0 + c->jc;
        if (nj0 >= c->jh) {
            nj0 = 0;
            memcpy(nidx, idx, sizeof idx[0] * (size_t)(outer > 0 ? outer : 0));
            more = stepped = next_outer(p, axes, outer, nidx, &nd, &ns);
        }
        if (more && p->stream)
            chains_fetch(c, ns, ni0, c->ih - ni0 < c->ic ? c->ih - ni0 : c->ic, nj0,
                         c->jh - nj0 < c->jc ? c->jh - nj0 : c->jc, p->item);
        chains_block(p, c, d, s, i0, ni, j0, nj, in, out);
        if (!more) break;
        if (stepped) memcpy(idx, nidx, sizeof idx[0] * (size_t)(outer > 0 ? outer : 0));
        d = nd, s = ns, i0 = ni0, j0 = nj0;
    }
#if HAVE_STREAM
    if (p->stream) _mm_sfence();
#endif
}

/* Task p through the chained transpose where chains_axes holds; 0 (nothing done) otherwise. */
static int chains_transpose(const plan_t *p)
{
    chains_t c;
    if (!chains_axes(p, &c)) return 0;
    chains_run(p, &c);
    return 1;
}

#endif
