/* _pack_loops.h: the packing kernel's partial columns and its outer loops: one call per row of
 * lines, contiguous lines, a kind-2 task's column groups. Self-contained (include guard). */
#ifndef TENSORLAYOUT_PACK_LOOPS_H
#define TENSORLAYOUT_PACK_LOOPS_H
#include "_pack_short.h"

/* ---- partial columns (see partial()): n rows, the last byte's other slots the pad code ---- */

/* 16 columns' n rows (ls apart) -> q registers, rows past n the pad code. */
static void pack_lines_n(__m128i *v, const char *log, Py_ssize_t ls, Py_ssize_t n, int bits, int q, uint8_t pad)
{
    const int per = 8 / bits;
    const __m128i m = _mm_set1_epi8((char)((1u << bits) - 1)), pv = _mm_set1_epi8((char)pad);
    for (int j = 0; j < q; j++) {
        __m128i acc = _mm_setzero_si128();
        for (int k = 0; k < per; k++) {
            Py_ssize_t row = j * per + k;
            __m128i x = row < n ? _mm_and_si128(_mm_loadu_si128((const __m128i *)(log + row * ls)), m) : pv;
            acc = _mm_or_si128(acc, _mm_sll_epi16(x, _mm_cvtsi32_si128(k * bits)));
        }
        v[j] = acc;
    }
}

static void partial_pack(const ctx_t *c, const task_t *t, uint8_t *out0, const char *log0, const rows_t *rows)
{
    const int per = c->per, last = t->ndim - 1;
    const Py_ssize_t n = t->shape[last], q = (n + per - 1) / per, nc = t->shape[last - 1];
    const Py_ssize_t P = t->ps[last - 1] / per, ls = t->ls[last], pb = rows->ps / per;
    const int own = t->kind == 2;
    for (Py_ssize_t r = 0; r < rows->n; r++) {
        uint8_t *out = out0 + r * pb;
        const char *log = log0 + r * rows->ls;
        Py_ssize_t col = 0;
        for (; col + LANES <= nc; col += LANES) {
            _Alignas(16) uint8_t tmp[MAX_Q][LANES];
            __m128i v[MAX_Q];
            pack_lines_n(v, log + col, ls, n, c->bits, (int)q, c->pad);
            if (own && q <= 4 && (P == 2 || P == 4 || P == 8 || P == 16)) { /* in vector stores */
                store_owned(out + col * P, v, P, (int)q, c->pad_byte, 0);
                continue;
            }
            for (Py_ssize_t j = 0; j < q; j++) _mm_store_si128((__m128i *)tmp[j], v[j]);
            for (Py_ssize_t i = 0; i < LANES; i++) {
                uint8_t *o = out + (col + i) * P;
                for (Py_ssize_t j = 0; j < q; j++) o[j] = tmp[j][i];
                if (own) memset(o + q, c->pad_byte, (size_t)(P - q));
            }
        }
        for (; col < nc; col++) { /* the tail column by column */
            uint8_t *o = out + col * P;
            for (Py_ssize_t j = 0; j < q; j++) {
                unsigned v = 0;
                for (int k = 0; k < per; k++) {
                    Py_ssize_t row = j * per + k;
                    unsigned x = row < n ? (unsigned)(uint8_t)log[row * ls + col] & c->mask : c->pad;
                    v |= x << (k * c->bits);
                }
                o[j] = (uint8_t)v;
            }
            if (own) memset(o + q, c->pad_byte, (size_t)(P - q));
        }
    }
}

static void partial_unpack(const ctx_t *c, const task_t *t, char *log0, const uint8_t *in0, const rows_t *rows)
{
    const int per = c->per, last = t->ndim - 1;
    const Py_ssize_t n = t->shape[last], q = (n + per - 1) / per, nc = t->shape[last - 1];
    const Py_ssize_t P = t->ps[last - 1] / per, ls = t->ls[last], pb = rows->ps / per;
    const __m128i m = _mm_set1_epi8((char)c->mask);
    const __m128i half = _mm_set1_epi8((char)(c->sign ? 1u << (c->bits - 1) : 0u));
    for (Py_ssize_t r = 0; r < rows->n; r++) {
        const uint8_t *in = in0 + r * pb;
        char *log = log0 + r * rows->ls;
        Py_ssize_t col = 0;
        for (; col + LANES <= nc; col += LANES) {
            _Alignas(16) uint8_t tmp[MAX_Q][LANES];
            for (Py_ssize_t i = 0; i < LANES; i++)
                for (Py_ssize_t j = 0; j < q; j++) tmp[j][i] = in[(col + i) * P + j];
            for (Py_ssize_t row = 0; row < n; row++) {
                __m128i v = _mm_load_si128((const __m128i *)tmp[row / per]);
                __m128i x = _mm_and_si128(_mm_srl_epi16(v, _mm_cvtsi32_si128((int)(row % per) * c->bits)), m);
                _mm_storeu_si128((__m128i *)(log + row * ls + col), _mm_sub_epi8(_mm_xor_si128(x, half), half));
            }
        }
        for (; col < nc; col++)
            for (Py_ssize_t row = 0; row < n; row++)
                log[row * ls + col] = (char)code(c, (unsigned)in[col * P + row / per] >> ((row % per) * c->bits));
    }
}

/* ---- the outer loops ------------------------------------------------------------------ */

/* One line per row: the inner axes (one, or two for columns) from slot and log on. */
static void line(const ctx_t *c, const task_t *t, line_t kind, int unpack, Py_ssize_t slot, char *log)
{
    int last = t->ndim - 1;
    uint8_t *bytes = c->bytes + slot / c->per;
    switch (kind) {
#if HAVE_SSE2
    case L_COLUMNS: /* not reached: a columns task runs its rows itself (see lines) */
#else
    case L_COLUMNS: /* not chosen without SSE2 */
#endif
    case L_WORDS: /* not reached (see lines) */
    case L_PARTIAL:
    case L_BYTES:
        if (unpack) unpack_bytes(c, t, log, bytes); else pack_bytes(c, t, bytes, log);
        break;
    case L_CONTIGUOUS:
        if (unpack) unpack_contiguous(c, log, bytes, t->shape[last] / c->per);
        else pack_contiguous(c, bytes, log, t->shape[last] / c->per);
        break;
    case L_SLOTS: {
        Py_ssize_t n = last < 0 ? 1 : t->shape[last], ps = last < 0 ? 0 : t->ps[last];
        Py_ssize_t ls = last < 0 ? 0 : t->ls[last];
        if (unpack) unpack_slots(c, slot, log, n, ps, ls); else pack_slots(c, slot, log, n, ps, ls);
        break;
    }
    }
}

/* The lines of one row of the innermost outer axis. */
/* k pieces of q bytes: piece r from src + r*ss to dst + r*ds (fixed-size moves for small q). */
static void pieces(uint8_t *dst, Py_ssize_t ds, const uint8_t *src, Py_ssize_t ss, Py_ssize_t k, Py_ssize_t q)
{
#define PIECES(N)                                                                            \
    for (Py_ssize_t r = 0; r < k; r++) memcpy(dst + r * ds, src + r * ss, N);                \
    return
    switch (q) {
    case 1: PIECES(1);
    case 2: PIECES(2);
    case 4: PIECES(4);
    case 8: PIECES(8);
    case 16: PIECES(16);
    default: PIECES((size_t)q);
    }
#undef PIECES
}

/* Contiguous lines whose rows continue one logical run (the caller puts such an axis there:
 * a transposing layout's sub-tile columns, or a tile row's tiles): the run goes through an
 * L1 stage in long vector steps, each row's q bytes copied to or from its place. */
static void staged_rows(const ctx_t *c, const task_t *t, int unpack, Py_ssize_t slot, char *log,
                        const rows_t *rows)
{
    _Alignas(64) uint8_t stage[STAGE_BYTES];
    ctx_t cached = *c;
    cached.stream = 0; /* the stage stays in L1 */
    Py_ssize_t n = t->shape[t->ndim - 1], q = n / c->per, chunk = STAGE_BYTES / q, pb = rows->ps / c->per;
    uint8_t *bytes = c->bytes + slot / c->per;
    for (Py_ssize_t r0 = 0; r0 < rows->n; r0 += chunk) {
        Py_ssize_t k = rows->n - r0 < chunk ? rows->n - r0 : chunk;
        if (unpack) {
            pieces(stage, q, bytes + r0 * pb, pb, k, q);
            unpack_contiguous(c, log + r0 * n, stage, k * q);
        } else {
            pack_contiguous(&cached, stage, log + r0 * n, k * q);
            pieces(bytes + r0 * pb, pb, stage, q, k, q);
        }
    }
}

/* The rest of a kind-2 task's column groups, whose lines (one per column: rows is its
 * column axis) were just written: the pad code into the G - n slots after each column's n. */
static void own_gaps(const ctx_t *c, const task_t *t, line_t kind, Py_ssize_t slot, const rows_t *rows)
{
    Py_ssize_t n = t->shape[t->ndim - 1], rest = t->ps[t->ndim - 2] - n;
    for (Py_ssize_t r = 0; r < rows->n; r++) {
        Py_ssize_t s = slot + r * rows->ps + n;
        if (kind == L_SLOTS)
            pack_slots(c, s, (const char *)&c->pad, rest, 1, 0);
        else /* aligned: whole bytes */
            memset(c->bytes + s / c->per, c->pad_byte, (size_t)(rest / c->per));
    }
}

/* staged_rows for R neighbouring rows of lines at once (the axis outside the rows, blk, with
 * slot stride n: their pieces lie side by side in the buffer): R rows of codes (un)packed in
 * the stage, and the buffer's bytes of each piece written (read) for all R in a row, so that
 * each line of the buffer is visited once instead of once per row (s4[4000,6000]{0,1:T(8,128)
 * (8,1)E(4)}: pieces a tile apart, 16 KiB, all in the same L1 sets: 13.5/7.9x a copy). */
#define BLOCK_ROWS 32   /* rows at once when packing (two lines of 4-byte pieces, measured best) */
#define UNBLOCK_ROWS 16 /* ... and unpacking (32 measured slower: 3.7 -> 4.6x a copy) */
#define BLOCK_AHEAD 16  /* pieces a line is fetched ahead */
static int blocks_rows(const ctx_t *c, const task_t *t, line_t kind, const rows_t *rows, const rows_t *blk)
{
    Py_ssize_t n = t->shape[t->ndim - 1], q = n / c->per;
    return kind == L_CONTIGUOUS && t->kind == 0 && rows->n > 1 && rows->ls == n && blk->n > 1
           && blk->ps == n && q * BLOCK_ROWS <= STAGE_BYTES;
}

static void copy_piece(uint8_t *d, const uint8_t *s, Py_ssize_t q)
{
    switch (q) {
    case 1: *d = *s; return;
    case 2: memcpy(d, s, 2); return;
    case 4: memcpy(d, s, 4); return;
    case 8: memcpy(d, s, 8); return;
    case 16: memcpy(d, s, 16); return;
    default: memcpy(d, s, (size_t)q);
    }
}

static void staged_blocks(const ctx_t *c, const task_t *t, int unpack, Py_ssize_t slot, char *log,
                          const rows_t *rows, const rows_t *blk)
{
    _Alignas(64) uint8_t stage[STAGE_BYTES];
    ctx_t cached = *c;
    cached.stream = 0; /* the stage stays in L1 */
    const Py_ssize_t n = t->shape[t->ndim - 1], q = n / c->per, pb = rows->ps / c->per;
    const Py_ssize_t R = unpack ? UNBLOCK_ROWS : BLOCK_ROWS;
    const Py_ssize_t chunk = STAGE_BYTES / (R * q), row = chunk * q; /* pieces, bytes a stage row */
    for (Py_ssize_t b0 = 0; b0 < blk->n; b0 += R) {
        Py_ssize_t rb = blk->n - b0 < R ? blk->n - b0 : R;
        uint8_t *bytes = c->bytes + (slot + b0 * blk->ps) / c->per;
        char *lg = log + b0 * blk->ls;
        for (Py_ssize_t r0 = 0; r0 < rows->n; r0 += chunk) {
            Py_ssize_t k = rows->n - r0 < chunk ? rows->n - r0 : chunk;
            if (unpack) {
                for (Py_ssize_t j = 0; j < k; j++) {
                    if (j + BLOCK_AHEAD < k)
                        __builtin_prefetch(bytes + (r0 + j + BLOCK_AHEAD) * pb, 0, 3);
                    for (Py_ssize_t r = 0; r < rb; r++) copy_piece(stage + r * row + j * q, bytes + (r0 + j) * pb + r * q, q);
                }
                for (Py_ssize_t r = 0; r < rb; r++) unpack_contiguous(c, lg + r * blk->ls + r0 * n, stage + r * row, k * q);
            } else {
                for (Py_ssize_t r = 0; r < rb; r++) pack_contiguous(&cached, stage + r * row, lg + r * blk->ls + r0 * n, k * q);
                for (Py_ssize_t j = 0; j < k; j++) {
                    if (j + BLOCK_AHEAD < k) /* the lines far apart: fetched ahead to be written */
                        __builtin_prefetch(bytes + (r0 + j + BLOCK_AHEAD) * pb, 1, 3);
                    for (Py_ssize_t r = 0; r < rb; r++) copy_piece(bytes + (r0 + j) * pb + r * q, stage + r * row + j * q, q);
                }
            }
        }
    }
}

/* q pad bytes at each of n rows pb bytes apart, for a constant q of 1 to 8 (0: any, memset). */
ALWAYS_INLINE void pad_rows_q(uint8_t *out, Py_ssize_t pb, Py_ssize_t n, uint64_t pads, Py_ssize_t q, const int Q)
{
    if (Q == 0)
        for (Py_ssize_t r = 0; r < n; r++) memset(out + r * pb, (int)(pads & 0xFF), (size_t)q);
    else
        for (Py_ssize_t r = 0; r < n; r++) memcpy(out + r * pb, &pads, (size_t)Q);
}

/* A pad task's rows of whole-byte lines (q bytes each) in one loop of fixed-size stores
 * instead of a call and a memset per line (u4[4,164,1123,5]{1,0,3,2:T(8,128)(8,1)E(4)}: a
 * sub-tile's 4 unused rows, 2 bytes of every 4, 1.4 million lines). */
static void pad_rows(const ctx_t *c, uint8_t *out, Py_ssize_t q, const rows_t *rows)
{
    const Py_ssize_t pb = rows->ps / c->per;
    const uint64_t pads = 0x0101010101010101ULL * c->pad_byte;
    switch (q) {
    case 1: pad_rows_q(out, pb, rows->n, pads, q, 1); break;
    case 2: pad_rows_q(out, pb, rows->n, pads, q, 2); break;
    case 4: pad_rows_q(out, pb, rows->n, pads, q, 4); break;
    case 8: pad_rows_q(out, pb, rows->n, pads, q, 8); break;
    default: pad_rows_q(out, pb, rows->n, pads, q, 0);
    }
}

static void lines(const ctx_t *c, const task_t *t, line_t kind, int unpack, Py_ssize_t slot, char *log,
                  const rows_t *rows)
{
    if (t->kind == 1 && kind == L_BYTES && !unpack) { /* (aligned: whole bytes) */
        pad_rows(c, c->bytes + slot / c->per, t->shape[t->ndim - 1] / c->per, rows);
        return;
    }
#if HAVE_SSE2
    if (kind == L_COLUMNS) { /* (a kind-2 task's gaps in the same stores) */
        uint8_t *bytes = c->bytes + slot / c->per;
        if (unpack) unpack_columns(c, t, log, bytes, rows); else pack_columns(c, t, bytes, log, rows);
        return;
    }
#endif
#if HAVE_SSE2
    if (kind == L_PARTIAL) { /* (a kind-2 task's gaps in the same loop) */
        uint8_t *bytes = c->bytes + slot / c->per;
        if (unpack) partial_unpack(c, t, log, bytes, rows); else partial_pack(c, t, bytes, log, rows);
        return;
    }
#endif
#if HAVE_SWAR
    if (kind == L_WORDS) { /* (the same) */
        words(c, t, unpack, c->bytes + slot / c->per, log, rows);
        return;
    }
#endif
    if (short_lines(c, t, kind, rows)) { /* (a kind-2 task's gaps in the same loop) */
        short_rows(c, t, unpack, slot, log, rows, &(rows_t){1, 0, 0});
        return;
    }
    if (kind == L_CONTIGUOUS && rows->n > 1 && rows->ls == t->shape[t->ndim - 1]
        && t->shape[t->ndim - 1] / c->per <= STAGE_BYTES)
        staged_rows(c, t, unpack, slot, log, rows);
    else
        for (Py_ssize_t r = 0; r < rows->n; r++)
            line(c, t, kind, unpack, slot + r * rows->ps, log + r * rows->ls);
    if (t->kind == 2 && !unpack) own_gaps(c, t, kind, slot, rows);
}

/* A few short rows of lines per outer step (a tile's sub-tile rows, far from the next step's):
 * the bytes each row's columns span in the buffer, which run_task fetches one outer step ahead
 * (the paths fetch ahead only inside their rows: u4[128,32,64,32]{1,3,0,2:T(8,128)(8,1)E(4)},
 * 4 rows of 128 bytes a tile, waited for each step); 0 otherwise. */
#define AHEAD_ROWS 8    /* rows of lines a step at most */
#define AHEAD_SPAN 512  /* bytes a row's columns span at most */
static Py_ssize_t ahead_span(const ctx_t *c, const task_t *t, line_t kind, const rows_t *rows, const rows_t *blk,
                             int outer)
{
    if ((kind != L_WORDS && kind != L_COLUMNS) || outer < 1 || blk->n > 1 || rows->n > AHEAD_ROWS) return 0;
    Py_ssize_t span = t->shape[t->ndim - 2] * t->ps[t->ndim - 2] / c->per;
    return span > 0 && span <= AHEAD_SPAN ? span : 0;
}

/* The buffer's lines of the next outer step's rows of lines (see ahead_span). */
static void next_rows_ahead(const ctx_t *c, const task_t *t, const Py_ssize_t *idx, int outer, Py_ssize_t slot,
                            const rows_t *rows, Py_ssize_t span, int unpack)
{
    int k = outer - 1;
    while (k >= 0 && idx[k] + 1 >= t->shape[k]) slot -= idx[k] * t->ps[k], k--;
    if (k < 0) return;
    const uint8_t *next = c->bytes + (slot + t->ps[k]) / c->per;
    for (Py_ssize_t r = 0; r < rows->n; r++)
        for (Py_ssize_t j = 0; j < span; j += 64) {
            const uint8_t *p = next + r * (rows->ps / c->per) + j;
            if (p < c->bytes || p >= c->bytes_hi) continue;
            if (unpack) __builtin_prefetch(p, 0, 3);
            else __builtin_prefetch(p, 1, 3);
        }
}

static void run_task(const ctx_t *c, const task_t *t, int unpack)
{
    line_t kind = choose(t, c->per, unpack);
    int inner = kind == L_COLUMNS || kind == L_WORDS || kind == L_PARTIAL ? 2 : (t->ndim > 0 ? 1 : 0);
    int outer = t->ndim - inner;
    rows_t rows = {1, 0, 0};
    if (outer > 0) { /* the innermost outer axis runs inside lines() */
        outer--;
        rows.n = t->shape[outer];
        rows.ps = t->ps[outer];
        rows.ls = t->ls[outer];
    }
    rows_t blk = {1, 0, 0};
    if (outer > 0) {
        blk = (rows_t){t->shape[outer - 1], t->ps[outer - 1], t->ls[outer - 1]};
        if (blocks_rows(c, t, kind, &rows, &blk) || short_lines(c, t, kind, &rows))
            outer--; /* blk runs inside short_rows or staged_blocks */
        else
            blk.n = 1;
    }
    Py_ssize_t idx[MAX_DIMS] = {0}, slot = t->slot;
    char *log = t->log;
    const Py_ssize_t span = ahead_span(c, t, kind, &rows, &blk, outer);
    for (;;) {
        if (span > 0) next_rows_ahead(c, t, idx, outer, slot, &rows, span, unpack);
        if (blk.n > 1 && blocks_rows(c, t, kind, &rows, &blk)) staged_blocks(c, t, unpack, slot, log, &rows, &blk);
        else if (blk.n > 1) short_rows(c, t, unpack, slot, log, &rows, &blk);
        else lines(c, t, kind, unpack, slot, log, &rows);
        int k = outer - 1;
        for (; k >= 0; k--) {
            if (++idx[k] < t->shape[k]) {
                slot += t->ps[k];
                log += t->ls[k];
                break;
            }
            slot -= (t->shape[k] - 1) * t->ps[k];
            log -= (t->shape[k] - 1) * t->ls[k];
            idx[k] = 0;
        }
        if (k < 0) return;
    }
}


#endif /* TENSORLAYOUT_PACK_LOOPS_H */
