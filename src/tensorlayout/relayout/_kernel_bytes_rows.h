/* _kernel_bytes_rows.h: (4,1) quads of bytes between short logical rows and the tile rows of a
 * transposed tiling, 8 x 8 quads in registers.
 *
 * s8[131072,32]{0,1:T(8,128)(4,1)}: a logical row's 32 bytes are 8 quads (4 bytes contiguous on
 * both sides: moved as 4-byte items, _kernel_path.wider_items), two in each of the buffer's 4
 * tile rows (1 MiB apart), where each quad row of a tile holds 128 logical rows a. The copy is
 * a transpose of 4-byte items between rows a of K = 8 quads and K quad rows, but its tasks
 * took it as 2 quads by 128 a at a time, each logical row visited 4 times (a partial unweave
 * to_physical, 128 x 2 transposes from_physical: 4.4x and 6.9x a copy, raw, one thread).
 * _bytes_path.quad_rows_views puts such a box's axes in the order (outer..., g, then the
 * transpose's two) that copy_nest's transposes name (ng, na, nb; dg, da, sg, sb):
 *
 *   from  dst[a][g*nb + b] = src[g*sg + b*sb + a]: rows a of K = ng*nb quads (dg = nb*4),
 *         source quad rows (g, b) along a; 8 quad rows by 16 a a round (a line of each
 *         source row), the rows a outside the quads of a chunk of QROWS_CHUNK, so that the
 *         destination is written in order and at most that many source rows read at once;
 *   to    dst[g*dg + b*da + a] = src[a][g*na + b]: the same the other way (sg = na*4, nb rows
 *         a), 8 quad rows outermost, a line of each written a round (rows a outermost
 *         measured slower: u8[55641,33] 1.1 -> 1.3x a copy, s8[2547,705] 1.6 -> 2.1x, raw).
 *         Non-temporal stores measured 3-10x slower; an L1 stage for quad rows sharing L1
 *         sets (pred[32768,64]{0,1:T(4,128)(4,1)}, 128 KiB apart) no faster.
 *
 * Rows of 4 to 7 quads (u8[1048576,16]{0,1:T(8,128)(4,1)} from_physical: 5.0 -> 1.3x a copy,
 * raw) go 4 quads a round, half the tile. Edges past whole blocks are covered by one more block
 * ending at the edge, overlapping (the same values again), so K must be 4 or more and the rows
 * a 8 or more. AVX2 only (quads_avx2); from_physical with 16 quads a row or more, the AVX-512BW
 * rounds of _kernel_bytes_wide.h where the CPU has them.
 *
 *   quad_rows   runs a task this way where it has that shape (1), else 0.
 *
 * Self-contained (include guard). */
#ifndef TENSORLAYOUT_KERNEL_BYTES_ROWS_H
#define TENSORLAYOUT_KERNEL_BYTES_ROWS_H
#include "_kernel_nest.h"
#include "_kernel_bytes_wide.h"

#define QROWS_MAX 512  /* quads a logical row at most (2 KiB): the quad rows' offsets */
#define QROWS_CHUNK 32 /* from: quads of each row a at a time (the source rows they read at once) */
#define QROWS_LINES_A 256 /* from, streamed: rows a at a time (qrows_from_lines) ... */
#define QROWS_LINES_K 64  /* ... from this many quads a row (rows of 16, off their lines, took two
                           * partial lines each: f8e4m3fn[935339,64]{0,1:T(8,128)(4,1)}
                           * from_physical 1.45-1.6x a copy -> 2.3-2.6x, one thread) */

typedef struct {
    int from;              /* the destination holds the rows a (from_physical) */
    Py_ssize_t K, n, row;  /* quads a row a; rows a; bytes from row a to row a + 1 */
    Py_ssize_t nq, gq, bq; /* quad row k = (k / nq, k % nq) lies at (k / nq)*gq + (k % nq)*bq */
} qrows_t;

/* Whether p's last axes are such a transpose (see above) of quads of bytes (4-byte transposes of
 * wider arrays' items took it measured slower: f32[23395,91]{0,1:T(8,128)} from 2.9 -> 8x a
 * copy); fills q. */
static int qrows_shape(const plan_t *p, qrows_t *q)
{
    const int last = p->ndim - 1;
    if (p->item != 4 || p->unit != 1 || p->swap || last < 1 || p->ds[last] != 4 || p->ss[last - 1] != 4) return 0;
    const Py_ssize_t na = p->shape[last - 1], nb = p->shape[last];
    const int three = last >= 2 && p->shape[last - 2] > 1;
    const Py_ssize_t ng = three ? p->shape[last - 2] : 1;
    if (three && p->ds[last - 2] != nb * 4 && p->ss[last - 2] != na * 4) return 0;
    q->from = three ? p->ds[last - 2] == nb * 4 : nb <= na; /* (one g: either way a transpose) */
    q->nq = q->from ? nb : na;
    q->K = ng * q->nq;
    q->n = q->from ? na : nb;
    q->row = q->from ? p->ds[last - 1] : p->ss[last];
    q->gq = three ? (q->from ? p->ss[last - 2] : p->ds[last - 2]) : 0;
    q->bq = q->from ? p->ss[last] : p->ds[last - 1];
    return q->K >= 4 && q->K <= QROWS_MAX && q->n >= 8;
}

#if HAVE_AVX2_DISPATCH
/* The start of the block of `step` from x along [0, n) (n >= step), moved back to end at n. */
static inline Py_ssize_t qrows_at(Py_ssize_t x, Py_ssize_t step, Py_ssize_t n)
{
    return x + step <= n ? x : n - step;
}

/* from: rows a .. a + 8w - 1 (w = 1 or 2: a line of each quad row) of quads k .. k + kw - 1
 * (kw = 8, or 4: the other four rows of the tile zeros, their quads not stored), row a + j's
 * quad k at d + j*row. */
__attribute__((target("avx2"))) static inline void qrows_from(const Py_ssize_t *off, char *d, Py_ssize_t row,
                                                              const char *s, Py_ssize_t a, Py_ssize_t k, int w, int kw)
{
    __m256 r[8], o[8];
    for (int i = kw; i < 8; i++) r[i] = _mm256_setzero_ps();
    for (int h = 0; h < w; h++) {
        for (int i = 0; i < kw; i++) r[i] = _mm256_loadu_ps((const float *)(s + off[k + i] + (a + 8 * h) * 4));
        transpose_u32x8(r, o); /* o[j]: row a + 8h + j's quads k .. k + 7 */
        for (int j = 0; j < 8; j++) {
            float *at = (float *)(d + (8 * h + j) * row);
            if (kw == 8)
                _mm256_storeu_ps(at, o[j]);
            else
                _mm_storeu_ps(at, _mm256_castps256_ps128(o[j]));
        }
    }
}

/* to: quad rows k .. k + kw - 1 (kw = 8 or 4), items a .. a + 8w - 1 (a line of each where
 * w = 2). */
__attribute__((target("avx2"))) static inline void qrows_to(const qrows_t *q, const Py_ssize_t *off, char *d,
                                                            const char *s, Py_ssize_t a, Py_ssize_t k, int w, int kw)
{
    __m256 r[8], o[16];
    for (int h = 0; h < w; h++) {
        for (int i = 0; i < 8; i++) {
            const float *at = (const float *)(s + (a + 8 * h + i) * q->row + k * 4);
            r[i] = kw == 8 ? _mm256_loadu_ps(at) : _mm256_castps128_ps256(_mm_loadu_ps(at));
        }
        transpose_u32x8(r, o + 8 * h); /* o[8h + j]: quad row k + j's items a + 8h .. */
    }
    for (int j = 0; j < kw; j++)
        for (int h = 0; h < w; h++) _mm256_storeu_ps((float *)(d + off[k + j] + (a + 8 * h) * 4), o[8 * h + j]);
}

/* Stage lines (64 bytes each) of rows a .. a + na - 1 (d at row a's quad 0), quads k .. k + kc
 * - 1 (kc <= 16) of each from the line's quad k0 on, out to their rows: past the cache where
 * they are whole lines. */
__attribute__((target("avx2"))) static inline void qrows_lines_out(const qrows_t *q, char *d, const char *stage,
                                                                   Py_ssize_t na, Py_ssize_t k, Py_ssize_t k0,
                                                                   Py_ssize_t kc)
{
    for (Py_ssize_t j = 0; j < na; j++) {
        char *o = d + j * q->row + k * 4;
        const char *t = stage + j * 64 + k0 * 4;
        if (kc == 16) {
            _mm256_stream_si256((__m256i *)o, _mm256_load_si256((const __m256i *)t));
            _mm256_stream_si256((__m256i *)o + 1, _mm256_load_si256((const __m256i *)t + 1));
        } else {
            memcpy(o, t, (size_t)kc * 4);
        }
    }
}

/* from, streamed (a copy past the caches), where the rows a are whole lines apart and hold
 * QROWS_LINES_K quads or more: the quads of each row a a line at a time (16: two blocks of 8
 * quad rows, each read along up to QROWS_LINES_A rows a) into a stage line, then out past the
 * cache whole, the partial lines at either end of the rows stored. Stored through the cache a
 * line of every quad row at a time (QROWS_CHUNK quads of each row a), from_physical of
 * f8e5m2[4,16,1024,512]{2,3,0,1:T(32,128)(4,1)} took 2.9-3.2x a copy (2.4-2.6x this way),
 * u8[16384,2048]{0,1:T(8,128)(4,1)} 2.85-3.2x (2.1-2.2x); one thread, alternating. */
__attribute__((target("avx2"))) static void qrows_from_lines(const qrows_t *q, const Py_ssize_t *off, char *d,
                                                             const char *s)
{
    _Alignas(64) char stage[QROWS_LINES_A * 64];
    const int w = q->n >= 16 ? 2 : 1;
    const Py_ssize_t unit = 8 * w, head = ((64 - ((uintptr_t)d & 63)) & 63) / 4;
    for (Py_ssize_t ax = 0; ax < q->n; ax += QROWS_LINES_A) {
        Py_ssize_t na = q->n - ax < QROWS_LINES_A ? q->n - ax : QROWS_LINES_A, a0 = ax;
        if (na < unit) a0 = q->n - unit, na = unit;
        for (Py_ssize_t kx = head ? head - 16 : 0; kx < q->K; kx += 16) {
            const Py_ssize_t k = kx < 0 ? 0 : kx + 16 <= q->K ? kx : q->K - 16; /* the window read */
            for (Py_ssize_t ay = 0; ay < na; ay += unit) {
                const Py_ssize_t a = qrows_at(ay, unit, na);
                qrows_from(off, stage + a * 64, 64, s, a0 + a, k, w, 8);
                qrows_from(off, stage + a * 64 + 32, 64, s, a0 + a, k + 8, w, 8);
            }
            const Py_ssize_t from = kx < 0 ? 0 : kx, to = kx + 16 < q->K ? kx + 16 : q->K;
            qrows_lines_out(q, d + a0 * q->row, stage, na, from, from - k, to - from);
        }
    }
    _mm_sfence();
}

/* One box's transpose (its last axes; d and s at their first bytes), as q says: a line (16
 * items) of each quad row at a time where there are 16 rows a, so that quad rows sharing L1
 * sets (a T(4,128) tile row's, 128 KiB apart) have each line read or written once; from, in a
 * streamed copy, by whole lines of the rows a where it can (qrows_from_lines). */
__attribute__((target("avx2"))) static void qrows_box(const qrows_t *q, char *d, const char *s, int stream)
{
    Py_ssize_t off[QROWS_MAX]; /* the quad rows' offsets */
    for (Py_ssize_t k = 0; k < q->K; k++) off[k] = (k / q->nq) * q->gq + (k % q->nq) * q->bq;
    const int w = q->n >= 16 ? 2 : 1, kw = q->K >= 8 ? 8 : 4;
    if (!q->from) {
        for (Py_ssize_t kx = 0; kx < q->K; kx += kw)
            for (Py_ssize_t ax = 0; ax < q->n; ax += 8 * w)
                qrows_to(q, off, d, s, qrows_at(ax, 8 * w, q->n), qrows_at(kx, kw, q->K), w, kw);
        return;
    }
    if (stream && q->K >= QROWS_LINES_K && q->row % 64 == 0 && ((uintptr_t)d & 3) == 0) {
        qrows_from_lines(q, off, d, s);
        return;
    }
    if (quads_wide && q->K >= 16) { /* 16 quads by 4 rows a a round (_kernel_bytes_wide.h) */
        qrows_from_wide(d, q->row, s, off, q->K, q->n);
        return;
    }
    const Py_ssize_t kc = q->K < QROWS_CHUNK ? q->K : QROWS_CHUNK;
    for (Py_ssize_t cx = 0; cx < q->K; cx += kc) {
        const Py_ssize_t c = qrows_at(cx, kc, q->K);
        for (Py_ssize_t ax = 0; ax < q->n; ax += 8 * w)
            for (Py_ssize_t kx = 0; kx < kc; kx += kw) {
                const Py_ssize_t a = qrows_at(ax, 8 * w, q->n);
                const Py_ssize_t k = c + qrows_at(kx, kw, kc);
                qrows_from(off, d + a * q->row + k * 4, q->row, s, a, k, w, kw);
            }
    }
}
#endif

static int quad_rows(const plan_t *p)
{
#if HAVE_AVX2_DISPATCH
    qrows_t q;
    if (!quads_avx2 || !qrows_shape(p, &q)) return 0;
    const int inner = p->ndim >= 3 && p->shape[p->ndim - 3] > 1 ? 3 : 2, outer = p->ndim - inner;
    Py_ssize_t idx[MAX_DIMS] = {0};
    char *d = p->dst;
    const char *s = p->src;
    do
        qrows_box(&q, d, s, p->stream);
    while (next_index(idx, outer, p->shape, p->ds, p->ss, &d, &s));
    return 1;
#else
    (void)p;
    return 0;
#endif
}

#endif
