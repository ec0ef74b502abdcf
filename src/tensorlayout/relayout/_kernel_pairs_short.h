/* _kernel_pairs_short.h: transposes of 2-byte items between rows far apart, each a short dense
 * run of items (both items of a (2,1) pair among them), and 4-byte units [a][j] (the pair axis
 * J 2 bytes apart, the rows' axis A 4) a run of units per item of the row. A (2,1) sub-tile
 * whose tile columns are the array's major dim and whose other dims are short and contiguous
 * in the array: s16[1945,60,15,3]{0,2,3,1:T(8,128)(2,1)}, rows of dim 0 5400 bytes apart, each
 * holding 24 items of dims 2 and 3 for a tile row (4 pairs of dim 2 rows x 3 of dim 3), too
 * short a dim 3 for _kernel_pairs_split.h: the general loops moved 3 x 2 items a call
 * (to_physical 12-13x a copy, from_physical 21-25x).
 *
 * Here 8 rows go at once: their runs copied into an L1 stage, transposed 8 x 8 items in
 * registers (then 8 items of each position of the run), and the positions of each pair's two
 * items interleaved into the units of the 8 rows (32 bytes a pair position); from the units
 * the same backwards. Rows past a multiple of 8 go item by item. That layout, one thread, CPU
 * time, ratio to a copy (alternating builds): to_physical 12.4/12.8 -> 5.9/5.6, from_physical
 * 22.1/22.9 -> 5.6/5.2 (its ragged last row of pairs, a single row, still goes item by item).
 * Self-contained (include guard). */
#ifndef TENSORLAYOUT_KERNEL_PAIRS_SHORT_H
#define TENSORLAYOUT_KERNEL_PAIRS_SHORT_H
#include "_kernel_plan.h"
#include "_sse2.h"

#define SHORT_RUN 256 /* items of a row's run at most */
#define SHORT_AHEAD 8 /* rows ahead whose runs are fetched (16, 32: no faster) */

typedef struct {
    int a, j, to;                 /* the rows' axis, the pair axis, the rows side is the source */
    int nrun, run[MAX_DIMS];      /* the run's axes (J among them), innermost first */
    Py_ssize_t len, half;         /* items of a run; J's items apart in it */
    Py_ssize_t npos;              /* the pair positions (J's first items) ... */
    short pos[SHORT_RUN / 2];     /* ... their items in the run ... */
    Py_ssize_t off[SHORT_RUN / 2]; /* ... and their units' byte offsets */
} short_t;

/* The run's axes: of those other than A whose rows-side strides are positive and below A's,
 * the ones nested densely from the innermost (2 bytes apart, each the one inside's extent on,
 * up to SHORT_RUN items), J among them; 1 and fills x's run, len and half if so. */
static int short_run(const plan_t *p, const Py_ssize_t *rs, short_t *x)
{
    int n = 0, has_j = 0;
    for (int k = 0; k < p->ndim; k++)
        if (k != x->a && p->shape[k] > 1 && rs[k] > 0 && rs[k] < rs[x->a]) x->run[n++] = k;
    for (int i = 1; i < n; i++) /* by stride, innermost first */
        for (int q = i; q > 0 && rs[x->run[q]] < rs[x->run[q - 1]]; q--) {
            int k = x->run[q];
            x->run[q] = x->run[q - 1];
            x->run[q - 1] = k;
        }
    Py_ssize_t step = 2;
    int m = 0;
    for (; m < n && rs[x->run[m]] == step && step * p->shape[x->run[m]] <= 2 * SHORT_RUN; m++) {
        step *= p->shape[x->run[m]];
        has_j |= x->run[m] == x->j;
    }
    x->nrun = m;
    x->len = step / 2;
    x->half = rs[x->j] / 2;
    return has_j && step <= rs[x->a];
}

/* The pair positions of the run (items whose J index is 0) and their units' offsets. */
static void short_table(const plan_t *p, const Py_ssize_t *us, short_t *x)
{
    Py_ssize_t idx[MAX_DIMS] = {0};
    x->npos = 0;
    for (Py_ssize_t m = 0; m < x->len; m++) {
        Py_ssize_t off = 0;
        int first = 1;
        for (int i = 0; i < x->nrun; i++) {
            off += idx[i] * us[x->run[i]];
            if (x->run[i] == x->j && idx[i]) first = 0;
        }
        if (first) {
            x->pos[x->npos] = (short)m;
            x->off[x->npos++] = off;
        }
        for (int i = 0; i < x->nrun && ++idx[i] == p->shape[x->run[i]]; i++) idx[i] = 0;
    }
}

/* Whether the plan is such a transpose (see above); fills *x. */
static int short_axes(const plan_t *p, short_t *x)
{
    if (p->item != 2 || p->swap || p->ndim < 2) return 0;
    for (int to = 1; to >= 0; to--) {
        const Py_ssize_t *rs = to ? p->ss : p->ds, *us = to ? p->ds : p->ss;
        x->a = x->j = -1;
        for (int k = 0; k < p->ndim; k++) {
            if (p->shape[k] == 2 && us[k] == 2 && rs[k] > 0 && x->j < 0) x->j = k;
            else if (p->shape[k] >= 8 && us[k] == 4 && rs[k] > 0 && x->a < 0) x->a = k;
        }
        if (x->j < 0 || x->a < 0 || !short_run(p, rs, x)) continue;
        x->to = to;
        short_table(p, us, x);
        return 1;
    }
    return 0;
}

#if HAVE_STREAM
/* The 8 x 8 transpose of 2-byte items: item i of v[k] -> item k of v[i]. */
static inline void short_t8(__m128i *v)
{
    __m128i a[8], b[8];
    for (int k = 0; k < 4; k++) {
        a[k] = _mm_unpacklo_epi16(v[2 * k], v[2 * k + 1]);
        a[k + 4] = _mm_unpackhi_epi16(v[2 * k], v[2 * k + 1]);
    }
    for (int h = 0; h < 2; h++) /* a[4h + k]: items 4h..4h+3 of rows 2k, 2k+1 */
        for (int k = 0; k < 2; k++) {
            b[4 * h + 2 * k] = _mm_unpacklo_epi32(a[4 * h + 2 * k], a[4 * h + 2 * k + 1]);
            b[4 * h + 2 * k + 1] = _mm_unpackhi_epi32(a[4 * h + 2 * k], a[4 * h + 2 * k + 1]);
        }
    for (int h = 0; h < 2; h++) /* b[4h + 2k + e]: items 4h+2e, +1 of rows 4k..4k+3 */
        for (int e = 0; e < 2; e++) {
            v[4 * h + 2 * e] = _mm_unpacklo_epi64(b[4 * h + e], b[4 * h + 2 + e]);
            v[4 * h + 2 * e + 1] = _mm_unpackhi_epi64(b[4 * h + e], b[4 * h + 2 + e]);
        }
}

/* Stage rows (8, SHORT_RUN + 8 items apart) <-> columns (cols[m]: item m of the 8 rows). */
static inline void short_turn(__m128i *cols, char *rows, Py_ssize_t len, int to_cols)
{
    const Py_ssize_t rb = (SHORT_RUN + 8) * 2;
    for (Py_ssize_t m = 0; m < len; m += 8) {
        __m128i v[8];
        for (int k = 0; k < 8; k++)
            v[k] = to_cols ? _mm_loadu_si128((const __m128i *)(rows + k * rb + m * 2)) : cols[m + k];
        short_t8(v);
        for (int k = 0; k < 8; k++) {
            if (to_cols) cols[m + k] = v[k];
            else _mm_storeu_si128((__m128i *)(rows + k * rb + m * 2), v[k]);
        }
    }
}

/* `bytes` from s to d in 16-byte moves, the last ones overlapping (bytes >= 16), or byte by
 * byte (a call of the library's memcpy: a string move measured a third of the row's time). */
static inline void short_move(char *d, const char *s, Py_ssize_t bytes)
{
    if (bytes < 16) {
        memcpy(d, s, (size_t)bytes);
        return;
    }
    for (Py_ssize_t i = 0; i + 16 < bytes; i += 16) memcpy(d + i, s + i, 16);
    memcpy(d + bytes - 16, s + bytes - 16, 16);
}

/* 8 rows (r, ra apart) to or from their units at u (the rows' first units: u + off + a*4);
 * next: the next group's first row to fetch ahead (rows in a box far apart, a line or two
 * each, are no stream the prefetchers follow), or NULL. */
static void short_group(char *u, char *r, Py_ssize_t ra, const short_t *x, int to, const char *next)
{
    _Alignas(64) char rows[8 * (SHORT_RUN + 8) * 2];
    __m128i cols[SHORT_RUN + 8];
    const Py_ssize_t rb = (SHORT_RUN + 8) * 2, bytes = x->len * 2;
    if (next)
        for (int k = 0; k < 8; k++)
            for (Py_ssize_t b = 0; b < bytes + 63; b += 64) /* (its last byte's line too) */
                _mm_prefetch(next + k * ra + (b < bytes ? b : bytes - 1), _MM_HINT_T0);
    if (to) {
        for (int k = 0; k < 8; k++) short_move(rows + k * rb, r + k * ra, bytes);
        short_turn(cols, rows, x->len, 1);
    }
    for (Py_ssize_t i = 0; i < x->npos; i++) {
        __m128i *c0 = cols + x->pos[i], *c1 = c0 + x->half;
        char *v = u + x->off[i];
        if (to) {
            _mm_storeu_si128((__m128i *)v, _mm_unpacklo_epi16(*c0, *c1));
            _mm_storeu_si128((__m128i *)(v + 16), _mm_unpackhi_epi16(*c0, *c1));
        } else { /* [j0 j1] units of rows 0..3, 4..7 -> j0 and j1 of the 8 rows */
            __m128i s0 = _mm_loadu_si128((const __m128i *)v), s1 = _mm_loadu_si128((const __m128i *)(v + 16));
            s0 = _mm_shuffle_epi32(_mm_shufflehi_epi16(_mm_shufflelo_epi16(s0, 0xD8), 0xD8), 0xD8);
            s1 = _mm_shuffle_epi32(_mm_shufflehi_epi16(_mm_shufflelo_epi16(s1, 0xD8), 0xD8), 0xD8);
            *c0 = _mm_unpacklo_epi64(s0, s1);
            *c1 = _mm_unpackhi_epi64(s0, s1);
        }
    }
    if (!to) {
        short_turn(cols, rows, x->len, 0);
        for (int k = 0; k < 8; k++) short_move(r + k * ra, rows + k * rb, bytes);
    }
}
#endif

/* One row's items to or from its units, item by item. */
static void short_row(char *u, char *r, const short_t *x, int to)
{
    for (Py_ssize_t i = 0; i < x->npos; i++)
        for (int e = 0; e < 2; e++) {
            char *v = u + x->off[i] + 2 * e, *w = r + (x->pos[i] + e * x->half) * 2;
            if (to) memcpy(v, w, 2);
            else memcpy(w, v, 2);
        }
}

/* The rows of A at d, s (short_axes holds): 8 at a time, the rest one by one. */
static void short_box(const plan_t *p, const short_t *x, char *d, const char *s)
{
    const int to = x->to;
    char *u = to ? d : (char *)s, *r = to ? (char *)s : d; /* (the source only read) */
    const Py_ssize_t na = p->shape[x->a], ra = to ? p->ss[x->a] : p->ds[x->a];
    Py_ssize_t a = 0;
#if HAVE_STREAM
    for (; a + 8 <= na; a += 8) {
        const char *next = a + 8 + SHORT_AHEAD <= na ? r + (a + SHORT_AHEAD) * ra : NULL;
        short_group(u + a * 4, r + a * ra, ra, x, to, next);
    }
#endif
    for (; a < na; a++) short_row(u + a * 4, r + a * ra, x, to);
}

/* Whether the task is such a transpose; if so, it is copied here (the axes outside A and the
 * run looped over in their order). */
static int pairs_short(const plan_t *p)
{
    short_t x;
    if (!short_axes(p, &x)) return 0;
    int outer[MAX_DIMS], n = 0;
    for (int k = 0; k < p->ndim; k++) {
        int in_run = k == x.a;
        for (int i = 0; i < x.nrun; i++) in_run |= x.run[i] == k;
        if (!in_run && p->shape[k] > 1) outer[n++] = k;
    }
    Py_ssize_t idx[MAX_DIMS] = {0};
    char *d = p->dst;
    const char *s = p->src;
    do
        short_box(p, &x, d, s);
    while (next_outer(p, outer, n, idx, &d, &s));
    return 1;
}

#endif
