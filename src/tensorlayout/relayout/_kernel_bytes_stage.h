/* _kernel_bytes_stage.h: boxes of bytes whose contiguous axes are a few bytes on both sides,
 * through an L1 stage.
 *
 * pred[512,4096,8,2]{0,2,3,1:T(4,128)(4,1)} to_physical is one box whose source moves 2 bytes
 * (the minor dim) and whose destination 4 (a (4,1) quad) contiguously: no weave, no transpose
 * of two long axes; the strided loop moved 2 bytes a call (34x a copy). Its parts are still
 * two kernels the loop nest runs well, with a stage between them:
 *
 *   R, the side with the quads: its unit axis u (e < BSTAGE_TINY items) and the axis a just
 *      outside it (R-stride e: the groups of the quads);
 *   T, the other side: its x-region, the axes that nest contiguously from its unit axis (a
 *      left out), which must hold u: each row a of T is one contiguous run of x bytes.
 *
 * A block of BSTAGE_A rows a by BSTAGE_X bytes of x goes through a stage holding x by a (a
 * innermost): T <-> stage is a transpose of two long axes (rows a, the x run), stage <-> R
 * the loop nest's own choice over the x axes and a, with a contiguous in the stage: a weave of
 * u into quads (or its unweave) when e is 2, 4 or 8. Both read and write whole lines.
 *
 *   bytes_staged   runs a plan this way when it has that shape (1), else 0 (the caller's
 *                  loops run): 1-byte items, no swapped units.
 *
 * Self-contained (include guard): it includes the loop nest it runs the passes through. */
#ifndef TENSORLAYOUT_KERNEL_BYTES_STAGE_H
#define TENSORLAYOUT_KERNEL_BYTES_STAGE_H
#include "_kernel_nest.h"
#include "_kernel_bytes.h"

#define BSTAGE_A 64    /* rows a per stage: one line of each stage row */
#define BSTAGE_X 256   /* bytes of the x-region per stage: four lines of each row a */
#define BSTAGE_TINY 16 /* a unit axis shorter than this many items is tiny */
#define BSTAGE_MIN_X 64 /* the x-region spans at least this many bytes */
#define BSTAGE_BYTES (BSTAGE_A * BSTAGE_X) /* the stage */

typedef struct {
    const Py_ssize_t *rs, *ts; /* R's strides and T's (p->ds or p->ss) */
    int r_dst;                 /* R is the destination (the stage is read into it) */
    int a, u;                  /* the axis a, R's unit axis */
    int nx, x[MAX_DIMS];       /* the x-region's axes, T's innermost first */
    int split;                 /* x[split] is blocked by f (split == nx: none) */
    Py_ssize_t f, xin;         /* ... f items a block; xin: the bytes of x[0 .. split - 1] */
    Py_ssize_t rows;           /* rows a a block (BSTAGE_A, fewer where u lies far out in x) */
    int nout, out[MAX_DIMS];   /* the axes outside a block, as the plan orders them */
} bstage_t;

/* The axis other than `skip` of extent above 1 with stride `st`; -1 if none. */
static int bstage_axis(const plan_t *p, const Py_ssize_t *strides, Py_ssize_t st, int skip)
{
    for (int k = 0; k < p->ndim; k++)
        if (k != skip && p->shape[k] > 1 && strides[k] == st) return k;
    return -1;
}

/* The x-region of T (b->ts) without a, innermost first, and its blocking; 0 if it is shorter
 * than BSTAGE_MIN_X bytes or does not hold u. */
static int bstage_region(const plan_t *p, bstage_t *b)
{
    Py_ssize_t region = 1;
    int k, has_u = 0;
    b->nx = 0;
    while ((k = bstage_axis(p, b->ts, region, b->a)) >= 0) {
        b->x[b->nx++] = k;
        has_u |= k == b->u;
        region *= p->shape[k];
    }
    if (!has_u || region < BSTAGE_MIN_X) return 0;
    b->xin = 1; /* the block holds the x axes up to u whole, then more up to BSTAGE_X bytes */
    for (b->split = 0; b->x[b->split] != b->u; b->split++) b->xin *= p->shape[b->x[b->split]];
    b->xin *= p->shape[b->u];
    for (b->split++; b->split < b->nx && b->xin * p->shape[b->x[b->split]] <= BSTAGE_X; b->split++)
        b->xin *= p->shape[b->x[b->split]];
    b->f = b->split < b->nx && b->xin < BSTAGE_X ? BSTAGE_X / b->xin : 1;
    b->rows = BSTAGE_BYTES / (b->xin * b->f) < BSTAGE_A ? BSTAGE_BYTES / (b->xin * b->f) : BSTAGE_A;
    return b->rows >= 16;
}

/* Whether p has the shape above with R the destination (r_dst) or the source; fills b. */
static int bstage_side(const plan_t *p, bstage_t *b, int r_dst)
{
    b->r_dst = r_dst;
    b->rs = r_dst ? p->ds : p->ss;
    b->ts = r_dst ? p->ss : p->ds;
    b->u = bstage_axis(p, b->rs, 1, -1);
    const int tu = bstage_axis(p, b->ts, 1, -1);
    if (b->u < 0 || tu < 0 || p->shape[b->u] >= BSTAGE_TINY || p->shape[tu] >= BSTAGE_TINY) return 0;
    b->a = bstage_axis(p, b->rs, p->shape[b->u], b->u);
    if (b->a < 0 || p->shape[b->a] < 16 || !bstage_region(p, b)) return 0;
    b->nout = 0;
    for (int k = 0; k < p->ndim; k++) {
        int inner = k == b->a;
        for (int i = 0; i < b->split; i++) inner |= k == b->x[i];
        if (!inner && p->shape[k] > 1) b->out[b->nout++] = k;
    }
    return 1;
}

/* A plan on p's arrays with the stage on one side: no axes yet. */
static plan_t bstage_plan(const plan_t *p, char *d, const char *s, int stage_dst, char *stage)
{
    plan_t q = *p;
    q.ndim = 0;
    q.tail_bytes = 0;
    q.gaps_ours = 0;
    q.dst = d;
    q.src = s;
    if (stage_dst) {
        q.stream = 0;
        q.dlo = stage;
        q.dhi = stage + BSTAGE_BYTES;
        q.dst_bytes = 0; /* (never streamed) */
    } else {
        q.slo = stage;
        q.shi = stage + BSTAGE_BYTES;
    }
    return q;
}

static inline Py_ssize_t bstage_abs(Py_ssize_t v)
{
    return v < 0 ? -v : v;
}

static inline void bstage_push(plan_t *q, Py_ssize_t n, Py_ssize_t ds, Py_ssize_t ss)
{
    q->shape[q->ndim] = n;
    q->ds[q->ndim] = ds;
    q->ss[q->ndim] = ss;
    q->ndim++;
}

/* The pass between the stage (x by na, a innermost) and R: x's axes (x[split] nf long) by R's
 * stride, largest first, then a, then u (the weave rule's pair innermost). */
static void bstage_r_pass(const plan_t *p, const bstage_t *b, char *d, const char *s, char *stage,
                          Py_ssize_t na, Py_ssize_t nf)
{
    plan_t q = b->r_dst ? bstage_plan(p, d, stage, 0, stage) : bstage_plan(p, stage, s, 1, stage);
    int order[MAX_DIMS], n = 0;
    int last = b->split < b->nx ? b->split : b->nx - 1;
    for (int i = 0; i <= last; i++)
        if (b->x[i] != b->u) order[n++] = b->x[i];
    for (int i = 1; i < n; i++) /* (insertion sort: a few axes) */
        for (int j = i; j > 0 && bstage_abs(b->rs[order[j]]) > bstage_abs(b->rs[order[j - 1]]); j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    order[n++] = b->a;
    order[n++] = b->u;
    for (int i = 0; i < n; i++) {
        int k = order[i];
        Py_ssize_t ext = k == b->a ? na : (b->split < b->nx && k == b->x[b->split]) ? nf : p->shape[k];
        Py_ssize_t st = k == b->a ? 1 : b->ts[k] * na;
        if (b->r_dst) bstage_push(&q, ext, b->rs[k], st); else bstage_push(&q, ext, st, b->rs[k]);
    }
    run_plan(&q);
}

#if HAVE_AVX2_DISPATCH
/* stage[x][a] = src[a][x]: na >= 16 rows a (sa apart) of xb >= 32 bytes into stage rows of na
 * bytes: the rows first copied whole into `rows` (rows a multiple of 4 KiB apart share L1
 * sets: loaded 32 bytes at a time across 16 of them, each line came in twice), then 16 rows by
 * 32 bytes a round (the last ones overlapping the round before). */
__attribute__((target("avx2"))) static void bstage_rows_in(char *stage, const char *s, Py_ssize_t na,
                                                           Py_ssize_t xb, Py_ssize_t sa)
{
    _Alignas(64) char rows[BSTAGE_BYTES];
    for (Py_ssize_t a = 0; a < na; a++) row_out(rows + a * xb, s + a * sa, xb, 0);
    for (Py_ssize_t ax = 0; ax < na; ax += 16) {
        const Py_ssize_t a = block_at(ax, 16, na);
        for (Py_ssize_t xx = 0; xx < xb; xx += 32) {
            const Py_ssize_t x = block_at(xx, 32, xb);
            __m256i r[16];
            for (int k = 0; k < 16; k++) r[k] = _mm256_loadu_si256((const __m256i *)(rows + (a + k) * xb + x));
            transpose_u8x16_lanes(r); /* r[j]: byte x + j of the 16 rows; lane 1 byte x + 16 + j */
            for (int j = 0; j < 16; j++) {
                _mm_storeu_si128((__m128i *)(stage + (x + j) * na + a), _mm256_castsi256_si128(r[j]));
                _mm_storeu_si128((__m128i *)(stage + (x + 16 + j) * na + a), _mm256_extracti128_si256(r[j], 1));
            }
        }
    }
}

/* dst[a][x] = stage[x][a]: the same backwards, na >= 32, xb >= 16: 16 stage rows x by 32 a a
 * round into rows a of xb bytes in `rows`, then each row out whole (streamed where asked:
 * the rows a lie far apart, 16-byte pieces of them stored one by one measured slower). */
__attribute__((target("avx2"))) static void bstage_rows_out(char *d, const char *stage, Py_ssize_t na,
                                                            Py_ssize_t xb, Py_ssize_t da, int stream)
{
    _Alignas(64) char rows[BSTAGE_BYTES];
    for (Py_ssize_t ax = 0; ax < na; ax += 32) {
        const Py_ssize_t a = block_at(ax, 32, na);
        for (Py_ssize_t xx = 0; xx < xb; xx += 16) {
            const Py_ssize_t x = block_at(xx, 16, xb);
            __m256i r[16];
            for (int k = 0; k < 16; k++) r[k] = _mm256_loadu_si256((const __m256i *)(stage + (x + k) * na + a));
            transpose_u8x16_lanes(r); /* r[j]: row a + j's 16 bytes from x; lane 1 row a + 16 + j's */
            for (int j = 0; j < 16; j++) {
                _mm_storeu_si128((__m128i *)(rows + (a + j) * xb + x), _mm256_castsi256_si128(r[j]));
                _mm_storeu_si128((__m128i *)(rows + (a + 16 + j) * xb + x), _mm256_extracti128_si256(r[j], 1));
            }
        }
    }
    for (Py_ssize_t a = 0; a < na; a++) row_out(d + a * da, rows + a * xb, xb, stream);
    if (stream) _mm_sfence();
}
#endif

/* The pass between the stage and T in registers where the CPU and the sizes allow (1), else 0. */
static int bstage_t_fast(const plan_t *p, const bstage_t *b, char *d, const char *s, char *stage, Py_ssize_t na, Py_ssize_t xb,
                         int stream)
{
#if HAVE_AVX2_DISPATCH
    if (!quads_avx2) return 0;
    if (b->r_dst && na >= 16 && xb >= 32) {
        bstage_rows_in(stage, s, na, xb, b->ts[b->a]);
        return 1;
    }
    if (!b->r_dst && na >= 32 && xb >= 16) {
        bstage_rows_out(d, stage, na, xb, b->ts[b->a], stream);
        return 1;
    }
#else
    (void)p, (void)b, (void)d, (void)s, (void)stage, (void)na, (void)xb, (void)stream;
#endif
    return 0;
}

/* The pass between the stage and T: rows a (na, T's stride) by the x run (xb bytes). */
static void bstage_t_pass(const plan_t *p, const bstage_t *b, char *d, const char *s, char *stage,
                          Py_ssize_t na, Py_ssize_t xb)
{
    if (bstage_t_fast(p, b, d, s, stage, na, xb, p->stream)) return;
    if (b->r_dst) { /* T the source: stage[x][a] = src[a][x] */
        plan_t q = bstage_plan(p, stage, s, 1, stage);
        bstage_push(&q, xb, na, 1);
        bstage_push(&q, na, 1, b->ts[b->a]);
        run_plan(&q);
    } else { /* T the destination: dst[a][x] = stage[x][a] */
        plan_t q = bstage_plan(p, d, stage, 0, stage);
        bstage_push(&q, na, b->ts[b->a], 1);
        bstage_push(&q, xb, 1, na);
        run_plan(&q);
    }
}

/* One block: na rows a from d and s, x[split] nf long. */
static void bstage_block(const plan_t *p, const bstage_t *b, char *d, const char *s, Py_ssize_t na,
                         Py_ssize_t nf)
{
    _Alignas(64) char stage[BSTAGE_BYTES];
    Py_ssize_t xb = b->xin * nf;
    if (b->r_dst) {
        bstage_t_pass(p, b, d, s, stage, na, xb);
        bstage_r_pass(p, b, d, s, stage, na, nf);
    } else {
        bstage_r_pass(p, b, d, s, stage, na, nf);
        bstage_t_pass(p, b, d, s, stage, na, xb);
    }
}

/* The blocks over a and x[split] from d and s (the outer axes' index), in the order that
 * continues the source's runs from block to block: along x where T is the source (its rows
 * a), along a where R is (its groups; x first there measured 3.9x a copy against ... ). */
static void bstage_blocks(const plan_t *p, const bstage_t *b, char *d, const char *s)
{
    const int a = b->a, xs = b->split < b->nx ? b->x[b->split] : -1;
    const Py_ssize_t n_a = p->shape[a], n_x = xs >= 0 ? p->shape[xs] : 1;
    const Py_ssize_t blocks_a = (n_a + b->rows - 1) / b->rows, blocks_x = (n_x + b->f - 1) / b->f;
    for (Py_ssize_t i = 0; i < blocks_a * blocks_x; i++) {
        const Py_ssize_t ia = b->r_dst ? i / blocks_x : i % blocks_a, ix = b->r_dst ? i % blocks_x : i / blocks_a;
        const Py_ssize_t a0 = ia * b->rows, x0 = ix * b->f;
        const Py_ssize_t na = n_a - a0 < b->rows ? n_a - a0 : b->rows, nf = n_x - x0 < b->f ? n_x - x0 : b->f;
        Py_ssize_t dof = a0 * p->ds[a], sof = a0 * p->ss[a];
        if (xs >= 0) {
            dof += x0 * p->ds[xs];
            sof += x0 * p->ss[xs];
        }
        bstage_block(p, b, d + dof, s + sof, na, nf);
    }
}

static int bytes_staged(const plan_t *p)
{
    bstage_t b;
    if (p->item != 1 || p->swap || p->ndim < 2 || (!bstage_side(p, &b, 1) && !bstage_side(p, &b, 0)))
        return 0;
    Py_ssize_t shape[MAX_DIMS], ds[MAX_DIMS], ss[MAX_DIMS], idx[MAX_DIMS] = {0};
    int n = 0;
    for (int i = 0; i < b.nout; i++) {
        int k = b.out[i];
        if (k == b.a || (b.split < b.nx && k == b.x[b.split])) continue; /* (the block loops) */
        shape[n] = p->shape[k];
        ds[n] = p->ds[k];
        ss[n] = p->ss[k];
        n++;
    }
    char *d = p->dst;
    const char *s = p->src;
    do
        bstage_blocks(p, &b, d, s);
    while (next_index(idx, n, shape, ds, ss, &d, &s));
    return 1;
}

#endif
