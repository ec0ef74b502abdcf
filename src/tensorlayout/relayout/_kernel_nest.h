/* _kernel_nest.h: the outer loops of the copy kernel: which inner loop a plan's innermost
 * axes take (run, weave, unweave, transpose, strided: the table in _kernel.c), and the loop
 * nest over the outer axes around it (with read-ahead for unweaves, staging for streamed
 * weaves). run_plan runs a plan as it stands; _kernel_gather.h decides when to gather first.
 * Self-contained (include guard): it includes the loops and transposes it dispatches to. */
#ifndef TENSORLAYOUT_KERNEL_NEST_H
#define TENSORLAYOUT_KERNEL_NEST_H
#include "_kernel_strips.h"
#include "_kernel_bytes_spread.h"

/* ---- the outer loops ---------------------------------------------------------------- */

typedef enum { K_RUN, K_WEAVE, K_UNWEAVE, K_TRANSPOSE, K_STRIDED, K_WEAVE_PART, K_UNWEAVE_PART } kind_t;

typedef struct {
    kind_t kind;
    int inner;            /* axes handled by the inner loop: 1 or 2 */
    Py_ssize_t bytes;     /* K_RUN: bytes per run */
    line_fn line;         /* K_RUN (fixed size) or K_STRIDED */
    weave_fn weave;       /* K_WEAVE / K_UNWEAVE; the full weave of the group for the _PART kinds */
    int lg;               /* K_TRANSPOSE: log2 of the item size */
    weave_fn unweave;     /* the _PART kinds: the full unweave of the group */
    Py_ssize_t group;     /* the _PART kinds: items per group (M) */
} inner_t;

/* Whether the innermost axes are a transpose (see K_TRANSPOSE); sets *in if so. */
static int transposing(const plan_t *p, inner_t *in, int lg)
{
    int last = p->ndim - 1;
    Py_ssize_t item = p->item, n = p->shape[last];
    if (last < 1 || p->ds[last] != item || p->ss[last - 1] != item) return 0;
    in->kind = K_TRANSPOSE;
    in->inner = 2;
    if (last >= 2 && p->shape[last - 2] > 1
        && (p->ds[last - 2] == n * item || p->ss[last - 2] == p->shape[last - 1] * item))
        in->inner = 3; /* the destination's or the source's rows run on over the axis before */
    if (last >= 2 && quads_part(p)) in->inner = 3; /* (a partial (4,1) quad's rows: _kernel_bytes.h) */
    in->lg = lg;
    return 1;
}

/* The weave rule, the one place it is decided (_kernel_path.py orders a box's axes by it, through
 * weave_axes): an axis k of `item`-byte items and an axis b of m items form a weave when b is
 * contiguous in dst, k contiguous in src and M = 2, 4 or 8 items apart in dst (dst[k*M + b] =
 * src_b[k]; returns M), an unweave when the same holds with src and dst swapped (-M); else 0.
 * m is M, or 2 <= m < M: a partial group (a ragged sub-tile's last rows), whose other M - m
 * items per group are not the task's (the _PART loops). */
static int weave_rule(Py_ssize_t item, Py_ssize_t m, Py_ssize_t ds_k, Py_ssize_t ss_k, Py_ssize_t ds_b,
                      Py_ssize_t ss_b)
{
    if (m < 2 || m > 8) return 0;
    for (int M = 2; M <= 8; M *= 2) {
        if (m > M) continue;
        if (ds_b == item && ss_k == item && ds_k == M * item) return M;
        if (ss_b == item && ds_k == item && ss_k == M * item) return -M;
    }
    return 0;
}

/* Swapped units: a transpose, else unit by unit. */
static inner_t choose_swapped(const plan_t *p)
{
    inner_t in = {K_STRIDED, 1, 0, NULL, NULL, 0, NULL, 0};
    in.line = p->item == 4 ? strided_swap_uint32_t : strided_swap_uint64_t;
    transposing(p, &in, log2_small(p->item) + SWAPPED);
    return in;
}

static inner_t choose_inner(const plan_t *p)
{
    if (p->swap) return choose_swapped(p);
    inner_t in = {K_STRIDED, 1, 0, NULL, NULL, 0, NULL, 0};
    int last = p->ndim - 1;
    Py_ssize_t item = p->item;
    int lg = log2_small(item);
    Py_ssize_t n = p->shape[last];
    if (p->ds[last] == item && p->ss[last] == item) {
        in.kind = K_RUN;
        in.bytes = n * item;
        switch (in.bytes) {
        case 4: in.line = run_4; break;
        case 8: in.line = run_8; break;
        case 16: in.line = run_16; break;
        case 32: in.line = run_32; break;
        case 64: in.line = run_64; break;
        default: in.line = NULL;
        }
        return in;
    }
    if (lg >= 0 && last >= 1) {
        int w = weave_rule(item, n, p->ds[last - 1], p->ss[last - 1], p->ds[last], p->ss[last]);
        int m = log2_small(w > 0 ? w : -w);
        if (w != 0 && (w == n || w == -n)) {
            in.kind = w > 0 ? K_WEAVE : K_UNWEAVE;
            in.inner = 2;
            in.weave = (w > 0 ? weave_table : unweave_table)[lg][m - 1];
            return in;
        }
        /* (one group: the strided loop; a weave rewrites its groups' other items, which only
         * a call into padding on one thread may: plan_t.gaps_ours) */
        if (w != 0 && p->shape[last - 1] > 1 && (w < 0 || p->gaps_ours)) {
            in.kind = w > 0 ? K_WEAVE_PART : K_UNWEAVE_PART;
            in.inner = 2;
            in.group = w > 0 ? w : -w;
            in.weave = weave_table[lg][m - 1];
            in.unweave = unweave_table[lg][m - 1];
            return in;
        }
    }
    if (lg >= 0 && transposing(p, &in, lg)) return in;
    if (lg >= 0) {
        in.line = strided_table[lg];
    }
    return in;
}

/* The weave loop through an L1 staging area, streamed out in pieces of STAGE_BYTES. */
static void weave_streamed(const plan_t *p, const inner_t *in, char *d, const char *s, Py_ssize_t n)
{
    int last = p->ndim - 1;
    Py_ssize_t m = p->shape[last], item = p->item;
    Py_ssize_t chunk = STAGE_BYTES / (m * item);
    _Alignas(64) char stage[STAGE_BYTES];
    for (Py_ssize_t k = 0; k < n; k += chunk) {
        Py_ssize_t c = n - k < chunk ? n - k : chunk;
        in->weave(stage, s + k * item, c, p->ss[last]);
        stream_out(d + k * m * item, stage, (size_t)(c * m * item));
    }
}

/* A partial weave (K_WEAVE_PART: m < M rows into every group of M items of dst) through an L1
 * stage: each chunk of whole groups is unwoven from dst into the stage, its m rows replaced
 * from src, and woven back, so the other M - m items of each group are rewritten with the
 * values they hold (padding, written before the call; or another task's, before or after it
 * in turn: only where plan_t.gaps_ours). The last
 * group, whose other items may lie past the task's checked bytes, goes item by item. */
static void weave_part(const plan_t *p, const inner_t *in, char *d, const char *s, Py_ssize_t n)
{
    int last = p->ndim - 1;
    const Py_ssize_t m = p->shape[last], M = in->group, item = p->item, sb = p->ss[last];
    const Py_ssize_t chunk = STAGE_BYTES / (M * item), row = chunk * item, whole = n - 1;
    _Alignas(64) char stage[STAGE_BYTES];
    if (item == 1 && M == 4 && m == 3) { /* three rows of bytes: woven with a fourth of zeros, then
                                          * merged three bytes a group (pred[45,7,4230]{2,1,0:
                                          * T(4,128)(4,1)}'s last tile row) */
        for (Py_ssize_t k = 0; k < n; k += chunk) {
            Py_ssize_t c = n - k < chunk ? n - k : chunk;
            weave3(stage, s + k, c, sb);
            merge3_best(d + 4 * k, stage, c, p->dhi);
        }
        return;
    }
    for (Py_ssize_t k = 0; k < whole; k += chunk) {
        Py_ssize_t c = whole - k < chunk ? whole - k : chunk;
        char *dk = d + k * M * item;
        in->unweave(stage, dk, c, row);
        for (Py_ssize_t b = 0; b < m; b++) memcpy(stage + b * row, s + b * sb + k * item, (size_t)(c * item));
        in->weave(dk, stage, c, row);
    }
    for (Py_ssize_t b = 0; b < m; b++) memcpy(d + (whole * M + b) * item, s + b * sb + whole * item, (size_t)item);
}

/* The same out of a partial group (K_UNWEAVE_PART: m rows of dst from every group of M items
 * of src): chunks of whole groups unwoven into the stage (the other items read, not kept),
 * the m rows copied out; the last group item by item. */
static void unweave_part(const plan_t *p, const inner_t *in, char *d, const char *s, Py_ssize_t n)
{
    int last = p->ndim - 1;
    const Py_ssize_t m = p->shape[last], M = in->group, item = p->item, db = p->ds[last];
    const Py_ssize_t chunk = STAGE_BYTES / (M * item), row = chunk * item, whole = n - 1;
    _Alignas(64) char stage[STAGE_BYTES];
    if (item == 1 && M == 4 && m == 3 && whole > 0) { /* three rows of bytes straight out */
        unweave3(d, s, whole, db);
        for (Py_ssize_t b = 0; b < m; b++) d[b * db + whole] = s[whole * M + b];
        return;
    }
    for (Py_ssize_t k = 0; k < whole; k += chunk) {
        Py_ssize_t c = whole - k < chunk ? whole - k : chunk;
        in->unweave(stage, s + k * M * item, c, row);
        for (Py_ssize_t b = 0; b < m; b++) memcpy(d + b * db + k * item, stage + b * row, (size_t)(c * item));
    }
    for (Py_ssize_t b = 0; b < m; b++) memcpy(d + b * db + whole * item, s + (whole * M + b) * item, (size_t)item);
}

/* The loop nest over `shape`: outer axes in order, the inner loop last. */
/* The next index of the first n axes (the last fastest), d and s moved along; 0 past the end. */
static inline int next_index(Py_ssize_t *idx, int n, const Py_ssize_t *shape, const Py_ssize_t *ds,
                             const Py_ssize_t *ss, char **d, const char **s)
{
    for (int k = n - 1; k >= 0; k--) {
        if (++idx[k] < shape[k]) {
            *d += ds[k];
            *s += ss[k];
            return 1;
        }
        *d -= (shape[k] - 1) * ds[k];
        *s -= (shape[k] - 1) * ss[k];
        idx[k] = 0;
    }
    return 0;
}

/* The source of the inner loop READ_AHEAD bytes ahead along the innermost outer axis (the
 * hardware prefetchers, measured, leave the loads of an unweave waiting on memory): `rows`
 * contiguous pieces of `bytes`, `stride` apart (one piece, for an unweave). */
#define READ_AHEAD 4096

/* A weave of bytes (the rows of a (4,1) sub-tile) reads ahead from a task of this many source
 * bytes on, or a streamed one: beyond L2 its loads waited on memory. One thread, in turn with
 * a copy (raw tasks): f8e4m3fn[256,128,1024]{2,1,0:T(8,128)(4,1)} to_physical (32 MiB, streamed)
 * 1.98 -> 1.47x a copy, pred[8,1024,1024]{2,1,0:T(4,128)(4,1)} (8 MiB) 1.78 -> 1.14; below 4 MiB
 * slower (pred[1024,1024]{1,0:T(8,128)(4,1)} 1.67 -> 1.95, pred[2048,1024] 1.49 -> 1.64). Steps of up
 * to READ_AHEAD bytes only: the whole next step of longer rows at once measured slower
 * (pred[299,24181]{1,0:T(4,128)(4,1)} to_physical, 4 rows of 24181 bytes a step: 1.32 -> 1.50).
 * Not where the steps' rows follow one another (a 1-D tiling: the prefetchers follow; read
 * ahead, pred[33554432]{0:T(512)(128)(4,1)} to_physical went 0.75 -> 0.86x a copy, one thread). */
#define WEAVE_AHEAD_MIN (4 << 20)

typedef struct {
    Py_ssize_t ahead, rows, bytes, stride; /* ahead 0: none */
} readahead_t;

static readahead_t readahead(const plan_t *p, const inner_t *in, int outer, const Py_ssize_t *shape)
{
    readahead_t ra = {0, 0, 0, 0};
    int last = p->ndim - 1;
    Py_ssize_t step = outer > 0 ? p->ss[outer - 1] : 0;
    if (step <= 0 || last < 1) return ra;
    if (in->kind == K_UNWEAVE) { /* one piece: n*M items */
        ra.rows = 1;
        ra.bytes = shape[last - 1] * shape[last] * p->item;
        if (step == ra.bytes) /* the pieces one after another: the prefetchers follow (1-D
                               * (4,1) / (2,1) tilings, one 512-byte tile a piece, from_physical,
                               * one thread, builds run against each other: pred[2097152]
                               * {0:T(1024)(128)(4,1)} 1.31-1.34 -> 1.17-1.18x a copy,
                               * bf16[892905]{0:T(1024)(128)(2,1)} 1.23-1.27 -> 1.00-1.06,
                               * bf16[3248616] 1.42-1.58 -> 1.22-1.25, 32 MiB pred 0.95 -> 0.88) */
            return ra;
    } else if (in->kind == K_WEAVE && p->item == 1 && (p->stream || p->shi - p->slo >= WEAVE_AHEAD_MIN)
               && shape[last] * shape[last - 1] <= READ_AHEAD
               && !(p->ss[last] == shape[last - 1] && step == shape[last] * shape[last - 1])) {
        ra.rows = shape[last]; /* the M rows of bytes woven into groups (see WEAVE_AHEAD_MIN) */
        ra.bytes = shape[last - 1];
        ra.stride = p->ss[last];
    } else { /* (short runs read ahead measured slower: zN to its buffer) */
        return ra;
    }
    ra.ahead = step * (step < READ_AHEAD ? READ_AHEAD / step : 1);
    return ra;
}

static inline void read_ahead(const plan_t *p, const readahead_t *ra, const char *s)
{
#if HAVE_STREAM
    for (Py_ssize_t r = 0; r < ra->rows; r++) {
        const char *a = s + ra->ahead + r * ra->stride;
        for (Py_ssize_t x = 0; x < ra->bytes; x += 64)
            if (a + x >= p->slo && a + x < p->shi) _mm_prefetch(a + x, _MM_HINT_T0);
    }
#else
    (void)p, (void)ra, (void)s;
#endif
}

/* One step of a run loop: a run (no axis before it), or the runs of the axis before it
 * (streamed, a line loop, or any size). */
static inline void run_step(const plan_t *p, const inner_t *in, char *d, const char *s,
                            const Py_ssize_t *shape)
{
    int last = p->ndim - 1;
    if (last == 0 && p->stream)
        stream_out(d, s, (size_t)in->bytes);
    else if (last == 0)
        memcpy(d, s, (size_t)in->bytes);
    else if (p->stream && (p->ds[last - 1] == in->bytes || (in->bytes >= 64 && in->bytes % 64 == 0)))
        for (Py_ssize_t i = 0; i < shape[last - 1]; i++)
            stream_out(d + i * p->ds[last - 1], s + i * p->ss[last - 1], (size_t)in->bytes);
    else if (p->stream && in->bytes >= 64) /* (runs ending inside a line: stream_lines) */
        for (Py_ssize_t i = 0; i < shape[last - 1]; i++)
            stream_lines(d + i * p->ds[last - 1], s + i * p->ss[last - 1], (size_t)in->bytes);
    else if (in->line != NULL)
        in->line(d, s, shape[last - 1], p->ds[last - 1], p->ss[last - 1]);
    else if (group_runs(p, d, s, shape[last - 1], p->ds[last - 1], p->ss[last - 1], in->bytes))
        return; /* (short runs into or out of groups: _kernel_bytes_runs.h) */
    else
        run_any(d, s, shape[last - 1], p->ds[last - 1], p->ss[last - 1], in->bytes);
}

/* One step of a weave loop of n groups: streamed in a streamed call, 2-byte pairs streamed over
 * a call destination of WEAVE_STREAM_SPAN or more (plan_t.dst_bytes), else the weave's own stores. */
static inline void weave_step(const plan_t *p, const inner_t *in, char *d, const char *s,
                              Py_ssize_t n)
{
    if (p->stream)
        weave_streamed(p, in, d, s, n);
#if HAVE_AVX2_DISPATCH
    else if (in->weave == weave_u16_2_avx2 && p->dst_bytes >= WEAVE_STREAM_SPAN)
        weave_u16_2_stream(d, s, n, p->ss[p->ndim - 1]);
#endif
    else
        in->weave(d, s, n, p->ss[p->ndim - 1]);
}

static void copy_nest(const plan_t *p, const inner_t *in, int outer, char *d, const char *s,
                      const Py_ssize_t *shape)
{
    int last = p->ndim - 1;
    Py_ssize_t idx[MAX_DIMS]; /* the outer ones zeroed: a whole-array memset per call measured slow */
    memset(idx, 0, sizeof idx[0] * (size_t)(outer > 0 ? outer : 0));
    readahead_t ra = readahead(p, in, outer, shape);
    for (;;) {
        if (ra.ahead) read_ahead(p, &ra, s);
        switch (in->kind) {
        case K_RUN:
            run_step(p, in, d, s, shape);
            break;
        case K_WEAVE:
            weave_step(p, in, d, s, shape[last - 1]);
            break;
        case K_TRANSPOSE:
        {
            int three = in->inner == 3;
            Py_ssize_t ng = three ? shape[last - 2] : 1, sg = three ? p->ss[last - 2] : 0;
            Py_ssize_t dg = three ? p->ds[last - 2] : 0;
            Py_ssize_t na = shape[last - 1], nb = shape[last], da = p->ds[last - 1], sb = p->ss[last];
            if (three && transpose_quads(p, d, s, ng, na, nb, dg, da, sg, sb, in->lg))
                break; /* (bytes in (4,1) quads: _kernel_bytes.h) */
            if (woven(ng, na, nb, dg, sg, in->lg))
                transpose_woven(d, s, ng, na, nb, dg, da, sg, sb, in->lg);
            else if (woven3(ng, na, nb, dg, sg, sb, in->lg))
                transpose_woven3(p, d, s, ng, na, nb, da, sb);
            else if (p->stream)
                transpose_streamed(p, d, s, ng, na, nb, dg, da, sg, sb, in->lg);
            else
                transpose_rows_ahead(p, d, s, ng, na, nb, dg, da, sg, sb, in->lg);
        }
            break;
        case K_WEAVE_PART:
            weave_part(p, in, d, s, shape[last - 1]);
            break;
        case K_UNWEAVE_PART:
            unweave_part(p, in, d, s, shape[last - 1]);
            break;
        case K_UNWEAVE: /* M short row pieces: streaming them measured slower */
            in->weave(d, s, shape[last - 1], p->ds[last]);
            break;
        case K_STRIDED:
            if (spread_bytes(p, d, s, shape[last], p->ds[last], p->ss[last]))
                break; /* (one row of bytes into or out of groups: _kernel_bytes_spread.h) */
            if (in->line != NULL) {
                in->line(d, s, shape[last], p->ds[last], p->ss[last]);
            } else {
                for (Py_ssize_t i = 0; i < shape[last]; i++)
                    memcpy(d + i * p->ds[last], s + i * p->ss[last], (size_t)p->item);
            }
            break;
        }
        if (!next_index(idx, outer, shape, p->ds, p->ss, &d, &s)) return;
    }
}

/* Whether the plan's transpose goes through transpose_woven (whole pieces per row already:
 * nothing to gather). */
static int woven_inner(const plan_t *p, const inner_t *in)
{
    int last = p->ndim - 1;
    return in->kind == K_TRANSPOSE && in->inner == 3
           && woven(p->shape[last - 2], p->shape[last - 1], p->shape[last], p->ds[last - 2], p->ss[last - 2],
                    in->lg);
}

/* The plan's loop nest as it stands (no gathering). */
static void run_inner(const plan_t *p, inner_t in)
{
    if (in.kind == K_RUN && p->ndim >= 2) in.inner = 2; /* a run loop covers the axis before it */
    copy_nest(p, &in, p->ndim - in.inner, p->dst, p->src, p->shape);
#if HAVE_STREAM
    _mm_sfence(); /* (the weaves and unweaves that stream below a streamed call's size) */
#endif
}

static void run_plan(const plan_t *p)
{
    run_inner(p, choose_inner(p));
}

#endif
