/* _pack_columns.h: the packing kernel's columns path beyond the aligned lines: short columns merged
 * with the axis continuing them, adjacent columns 32 at a time in AVX2 registers, far and
 * staged columns, and the dispatch specialised per bits and q. Self-contained (include guard). */
#ifndef TENSORLAYOUT_PACK_COLUMNS_H
#define TENSORLAYOUT_PACK_COLUMNS_H
#include "_pack_lines.h"
#include "_pack_far.h"

#if HAVE_SSE2
/* ---- short columns merged with the axis continuing them (table columns) ------------------
 * Fewer than 16 logically contiguous columns whose rows of lines continue their logical run
 * (rows->ls == nc: a short minor dim moved outermost by the layout, the next dim with it) are
 * one run of rows->n * nc columns, 16 a block, each column's bytes at its own offset (column
 * k % nc, row k / nc), instead of a tail of nc columns per row of lines
 * (u4[65,201,23,5]{0,1,2,3:T(8,128)(8,1)E(4)}: 5 columns a row, 17-19x a copy). */
static int merges(const rows_t *rows, Py_ssize_t nc, Py_ssize_t P, int per, int own, int q)
{
    return nc < LANES && rows->n > 1 && rows->ls == nc && rows->ps % per == 0 && !own && q <= 4 && P >= q;
}

/* The byte offsets of columns p0.. p0+n of the merged run (nc a row, P apart; rows pb apart). */
static inline void table_offsets(Py_ssize_t *off, Py_ssize_t p0, Py_ssize_t n, Py_ssize_t nc, Py_ssize_t P,
                                 Py_ssize_t pb)
{
    Py_ssize_t d = p0 / nc, e = p0 % nc;
    for (Py_ssize_t i = 0; i < n; i++) {
        off[i] = e * P + d * pb;
        if (++e == nc) e = 0, d++;
    }
}

/* n <= 16 contiguous columns from log, column i's q bytes to out + off[i]: packed in registers
 * where every row's 16 bytes lie inside the logical array, else byte by byte. */
ALWAYS_INLINE void pack_table_k(const ctx_t *c, uint8_t *out, const char *log, const Py_ssize_t *off,
                                Py_ssize_t n, Py_ssize_t ls, __m128i m, const int bits, const int q)
{
    const int per = 8 / bits;
    int inside = c->log_lo != NULL;
    for (int r = 0; r < per * q && inside; r++) {
        uintptr_t row = (uintptr_t)(log + r * ls);
        inside = row >= (uintptr_t)c->log_lo && row + LANES <= (uintptr_t)c->log_hi;
    }
    if (!inside) {
        for (Py_ssize_t i = 0; i < n; i++)
            for (int j = 0; j < q; j++) out[off[i] + j] = gather_k(log + j * per * ls + i, ls, bits);
        return;
    }
    __m128i v[MAX_Q] = {0};
    pack_lines(v, log, ls, m, bits, q);
    if (q == 4) {
        _Alignas(16) uint8_t w[4 * LANES];
        __m128i y[4];
        interleave4(y, v);
        for (int i = 0; i < 4; i++) _mm_store_si128((__m128i *)(w + 16 * i), y[i]);
        for (Py_ssize_t i = 0; i < n; i++) memcpy(out + off[i], w + 4 * i, 4);
    } else {
        _Alignas(16) uint8_t tmp[MAX_Q][LANES];
        for (int j = 0; j < q; j++) _mm_store_si128((__m128i *)tmp[j], v[j]);
        for (Py_ssize_t i = 0; i < n; i++)
            for (int j = 0; j < q; j++) out[off[i] + j] = tmp[j][i];
    }
}

/* The other way: column i's q bytes from in + off[i] -> per*q logical rows of n codes. */
ALWAYS_INLINE void unpack_table_k(const uint8_t *in, char *log, const Py_ssize_t *off, Py_ssize_t n, Py_ssize_t ls,
                                  const int bits, const int q, __m128i m, __m128i half)
{
    const int per = 8 / bits;
    __m128i v[MAX_Q];
    if (q == 4) {
        __m128i o[4], y[4];
        int32_t w[LANES];
        for (Py_ssize_t i = 0; i < LANES; i++) {
            w[i] = 0;
            if (i < n) memcpy(&w[i], in + off[i], 4);
        }
        for (int i = 0; i < 4; i++) o[i] = _mm_setr_epi32(w[4 * i], w[4 * i + 1], w[4 * i + 2], w[4 * i + 3]);
        interleave4(y, o);
        interleave4(v, y);
    } else {
        _Alignas(16) uint8_t tmp[MAX_Q][LANES];
        for (Py_ssize_t i = 0; i < LANES; i++)
            for (int j = 0; j < q; j++) tmp[j][i] = i < n ? in[off[i] + j] : 0;
        for (int j = 0; j < q; j++) v[j] = _mm_load_si128((const __m128i *)tmp[j]);
    }
    _Alignas(16) uint8_t row[LANES];
    for (int j = 0; j < q; j++)
        for (int k = 0; k < per; k++) {
            __m128i x = _mm_and_si128(_mm_srl_epi16(v[j], _mm_cvtsi32_si128(k * bits)), m);
            x = _mm_sub_epi8(_mm_xor_si128(x, half), half);
            if (n == LANES) {
                _mm_storeu_si128((__m128i *)(log + (j * per + k) * ls), x);
            } else {
                _mm_store_si128((__m128i *)row, x);
                copy_short(log + (j * per + k) * ls, row, n);
            }
        }
}

/* The merged run, packed or unpacked (the caller checked merges()). */
ALWAYS_INLINE void table_columns_k(const ctx_t *c, uint8_t *bytes, char *log, const rows_t *rows, Py_ssize_t nc,
                                   Py_ssize_t P, Py_ssize_t ls, int unpack, const int bits, const int q)
{
    const Py_ssize_t total = rows->n * nc, pb = rows->ps / (8 / bits);
    const __m128i m = _mm_set1_epi8((char)((1u << bits) - 1));
    const __m128i half = _mm_set1_epi8((char)(c->sign ? 1u << (bits - 1) : 0u));
    Py_ssize_t off[LANES];
    for (Py_ssize_t p0 = 0; p0 < total; p0 += LANES) {
        Py_ssize_t n = total - p0 < LANES ? total - p0 : LANES;
        table_offsets(off, p0, n, nc, P, pb);
        if (unpack) unpack_table_k(bytes, log + p0, off, n, ls, bits, q, m, half);
        else pack_table_k(c, bytes, log + p0, off, n, ls, m, bits, q);
    }
}

/* ---- adjacent columns (P == q) 32 at a time in AVX2 registers, where the CPU has them -------
 * The same packing as pack_block / unpack_block, each 256-bit register two 16-column halves
 * (AVX2 shuffles stay inside 128-bit lanes), the halves put in order by lane permutes on the
 * way out (in). Chosen at import (use_avx2); the SSE2 blocks do the last < 32 columns. */
#if HAVE_SSE2 && defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define HAVE_AVX2_PATH 1
#include <immintrin.h>
#define AVX2 __attribute__((target("avx2")))
#define AVX2_INLINE AVX2 static inline __attribute__((always_inline))
static int use_avx2;

AVX2_INLINE void put32(uint8_t *p, __m256i x, int stream)
{
    if (stream) _mm256_stream_si256((__m256i *)p, x); else _mm256_storeu_si256((__m256i *)p, x);
}

/* 32 columns of per*q logical rows (ls apart) -> their 32*P bytes, column by column: q bytes
 * of codes, then P - q pad bytes (a column owning its gaps). */
AVX2_INLINE void pack32_k(uint8_t *out, const char *log, Py_ssize_t ls, int stream, __m256i pad, const int bits,
                          const int q, const int P)
{
    const int per = 8 / bits;
    const __m256i m = _mm256_set1_epi8((char)((1u << bits) - 1));
    __m256i v[4];
    for (int j = 0; j < q; j++) {
        const char *row = log + j * per * ls;
        __m256i acc = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)row), m);
        for (int k = 1; k < per; k++) {
            __m256i x = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(row + k * ls)), m);
            acc = _mm256_or_si256(acc, _mm256_slli_epi16(x, k * bits));
        }
        v[j] = acc;
    }
    for (int j = q; j < P; j++) v[j] = pad;
    int st = stream && ((uintptr_t)out & 31) == 0;
    if (P == 1) {
        put32(out, v[0], st);
    } else if (P == 2) {
        __m256i lo = _mm256_unpacklo_epi8(v[0], v[1]), hi = _mm256_unpackhi_epi8(v[0], v[1]);
        put32(out, _mm256_permute2x128_si256(lo, hi, 0x20), st);
        put32(out + 32, _mm256_permute2x128_si256(lo, hi, 0x31), st);
    } else {
        __m256i a = _mm256_unpacklo_epi8(v[0], v[1]), b = _mm256_unpackhi_epi8(v[0], v[1]);
        __m256i e = _mm256_unpacklo_epi8(v[2], v[3]), f = _mm256_unpackhi_epi8(v[2], v[3]);
        __m256i y0 = _mm256_unpacklo_epi16(a, e), y1 = _mm256_unpackhi_epi16(a, e);
        __m256i y2 = _mm256_unpacklo_epi16(b, f), y3 = _mm256_unpackhi_epi16(b, f);
        put32(out, _mm256_permute2x128_si256(y0, y1, 0x20), st);
        put32(out + 32, _mm256_permute2x128_si256(y2, y3, 0x20), st);
        put32(out + 64, _mm256_permute2x128_si256(y0, y1, 0x31), st);
        put32(out + 96, _mm256_permute2x128_si256(y2, y3, 0x31), st);
    }
}

/* The 4-way byte interleave of interleave4, in each 128-bit lane. */
AVX2_INLINE void interleave4_256(__m256i *y, const __m256i *x)
{
    __m256i a = _mm256_unpacklo_epi8(x[0], x[1]), b = _mm256_unpackhi_epi8(x[0], x[1]);
    __m256i e = _mm256_unpacklo_epi8(x[2], x[3]), f = _mm256_unpackhi_epi8(x[2], x[3]);
    y[0] = _mm256_unpacklo_epi16(a, e);
    y[1] = _mm256_unpackhi_epi16(a, e);
    y[2] = _mm256_unpacklo_epi16(b, f);
    y[3] = _mm256_unpackhi_epi16(b, f);
}

/* 32 columns' 32*P bytes (the first q of each column's P) -> per*q logical rows of 32 codes
 * (ls apart), sign-extended by half. */
AVX2_INLINE void unpack32_k(char *log, const uint8_t *in, Py_ssize_t ls, __m256i half, const int bits,
                            const int q, const int P)
{
    const int per = 8 / bits;
    const __m256i m = _mm256_set1_epi8((char)((1u << bits) - 1));
    const __m256i *p = (const __m256i *)in;
    __m256i v[4];
    if (P == 1) {
        v[0] = _mm256_loadu_si256(p);
    } else if (P == 2) {
        __m256i o0 = _mm256_loadu_si256(p), o1 = _mm256_loadu_si256(p + 1), ff = _mm256_set1_epi16(0xFF);
        __m256i a = _mm256_permute2x128_si256(o0, o1, 0x20), b = _mm256_permute2x128_si256(o0, o1, 0x31);
        v[0] = _mm256_packus_epi16(_mm256_and_si256(a, ff), _mm256_and_si256(b, ff));
        if (q == 2) v[1] = _mm256_packus_epi16(_mm256_srli_epi16(a, 8), _mm256_srli_epi16(b, 8));
    } else {
        __m256i o[4], a[4], y[4];
        for (int i = 0; i < 4; i++) o[i] = _mm256_loadu_si256(p + i);
        a[0] = _mm256_permute2x128_si256(o[0], o[2], 0x20);
        a[1] = _mm256_permute2x128_si256(o[0], o[2], 0x31);
        a[2] = _mm256_permute2x128_si256(o[1], o[3], 0x20);
        a[3] = _mm256_permute2x128_si256(o[1], o[3], 0x31);
        interleave4_256(y, a);
        interleave4_256(v, y);
    }
    for (int j = 0; j < q; j++)
        for (int k = 0; k < per; k++) {
            __m256i x = _mm256_and_si256(_mm256_srli_epi16(v[j], k * bits), m);
            x = _mm256_sub_epi8(_mm256_xor_si256(x, half), half);
            _mm256_storeu_si256((__m256i *)(log + (j * per + k) * ls), x);
        }
}

/* The first nc - nc % 32 columns of every row of lines (q bytes each, P apart, the P - q
 * between them owned when P > q); returns the columns done. */
AVX2_INLINE Py_ssize_t columns32_k(const ctx_t *c, uint8_t *out0, char *log0, const rows_t *rows, Py_ssize_t nc,
                                   Py_ssize_t ls, int unpack, const int bits, const int q, const int P)
{
    const Py_ssize_t pb = rows->ps / (8 / bits), done = nc - nc % 32;
    const __m256i half = _mm256_set1_epi8((char)(c->sign ? 1u << (bits - 1) : 0u));
    const __m256i pad = _mm256_set1_epi8((char)c->pad_byte);
    for (Py_ssize_t r = 0; r < rows->n; r++) {
        uint8_t *out = out0 + r * pb;
        char *log = log0 + r * rows->ls;
        if (unpack)
            for (Py_ssize_t col = 0; col < done; col += 32)
                unpack32_k(log + col, out + col * P, ls, half, bits, q, P);
        else
            for (Py_ssize_t col = 0; col < done; col += 32)
                pack32_k(out + col * P, log + col, ls, c->stream, pad, bits, q, P);
    }
    return done;
}

#define COLUMNS32(B, Q, P) (((B) * 8 + (Q)) * 8 + (P))
AVX2 static Py_ssize_t columns32(const ctx_t *c, uint8_t *out, char *log, const rows_t *rows, Py_ssize_t nc,
                                 Py_ssize_t ls, int unpack, int q, int P)
{
    switch (COLUMNS32(c->bits, q, P)) {
#define CASE(B, Q, P) case COLUMNS32(B, Q, P): return columns32_k(c, out, log, rows, nc, ls, unpack, B, Q, P)
    CASE(1, 1, 1); CASE(1, 2, 2); CASE(1, 4, 4); CASE(1, 1, 2); CASE(1, 1, 4); CASE(1, 2, 4);
    CASE(2, 1, 1); CASE(2, 2, 2); CASE(2, 4, 4); CASE(2, 1, 2); CASE(2, 1, 4); CASE(2, 2, 4);
    CASE(4, 1, 1); CASE(4, 2, 2); CASE(4, 4, 4); CASE(4, 1, 2); CASE(4, 1, 4); CASE(4, 2, 4);
#undef CASE
    default: return 0;
    }
}

/* Columns done in AVX2 first: adjacent (P == q), or P of 2 or 4 bytes whose gaps are owned (a
 * kind-2 task; unpacking reads only the codes), one row of lines at a time (column_rows 1),
 * unpacking only where nothing streams (its SSE2 loop streams whole lines). */
static Py_ssize_t avx2_first(const ctx_t *c, uint8_t *out, char *log, const rows_t *rows, Py_ssize_t nc,
                             Py_ssize_t P, Py_ssize_t ls, int unpack, int q, int own, Py_ssize_t rb)
{
    int fits = P == q || ((own || unpack) && (P == 2 || P == 4) && q < P);
    if (!use_avx2 || !fits || rb != 1 || nc < 32 || (unpack && c->stream)) return 0;
    return columns32(c, out, log, rows, nc, ls, unpack, q, (int)P);
}
#else
static Py_ssize_t avx2_first(const ctx_t *c, uint8_t *out, char *log, const rows_t *rows, Py_ssize_t nc,
                             Py_ssize_t P, Py_ssize_t ls, int unpack, int q, int own, Py_ssize_t rb)
{
    (void)c, (void)out, (void)log, (void)rows, (void)nc, (void)P, (void)ls, (void)unpack, (void)q, (void)own, (void)rb;
    return 0;
}
#endif

/* Columns a line or more apart (P >= 64) whose rows of lines lie side by side (at most 16 bytes
 * apart) go COLUMN_ROWS rows at a time for each block of 16 columns, so that each column's line
 * is written (read) in a row rather than once per row of lines, in turn with every other
 * column's (s4[4303,41,469]{0,1,2:T(8,128)(8,1)E(4)}: columns 102 KiB apart; 128 rows, eight
 * lines a column, measured 4.4 / 3.1x a copy to / from, 16 rows 5.6 / 4.1x, 256 rows 6.6 / 4.5x;
 * s4[300,41,469]{0,1,2:...} 5.5 / 5.1x against 8.5 / 7.7x). */
#define COLUMN_ROWS 128
static Py_ssize_t column_rows(const rows_t *rows, Py_ssize_t P, int per)
{
    return P >= 64 && rows->n > 1 && rows->ps % per == 0 && rows->ps / per <= 16 ? COLUMN_ROWS : 1;
}

/* Far columns whose rows of lines lie side by side (rows q bytes apart, q <= STAGED_Q): a block
 * of 16 columns' rows of lines (un)packed through an L1 stage laid out column by column, each
 * column's run of the buffer written (read) in one go, not 16 columns in turn (columns 8 KiB
 * apart share their cache sets: u4[1000,16,300]{0,1,2:T(8,128)(8,1)E(4)}, 17x a copy); packing,
 * the first n of the 16 columns stored (the last n < 16 where lanes_inside: 16 a row read whole
 * instead of a column's bytes one by one, u4[1033,595,3,3]{0,1,3,2:...} 8.4 -> 5.8x a copy). */
#define STAGED_Q 4
ALWAYS_INLINE void pack_far_staged(const ctx_t *c, uint8_t *out, const char *log, Py_ssize_t P, Py_ssize_t ls,
                                   Py_ssize_t rls, Py_ssize_t nr, __m128i m, const int bits, const int q, Py_ssize_t n)
{
    _Alignas(64) uint8_t stage[LANES * COLUMN_ROWS * STAGED_Q];
    const Py_ssize_t S = COLUMN_ROWS * q; /* stage bytes a column */
    ctx_t cached = *c;
    cached.stream = 0;
    for (Py_ssize_t r = 0; r < nr; r++) pack_block(&cached, stage + r * q, log + r * rls, S, ls, 0, m, bits, q);
    for (Py_ssize_t i = 0; i < n; i++) memcpy(out + i * P, stage + i * S, (size_t)(nr * q));
}

/* The 16 lanes from log of nr rows of lines (rls apart) of per*q logical rows (ls apart) lie
 * inside the logical array (an affine span: its corners decide), so a block of fewer than 16
 * columns may read them whole (only its columns are stored). */
ALWAYS_INLINE int lanes_inside(const ctx_t *c, const char *log, Py_ssize_t ls, Py_ssize_t rls, Py_ssize_t nr,
                               int rows)
{
    if (c->log_lo == NULL) return 0;
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++) {
            uintptr_t p = (uintptr_t)(log + (a ? (nr - 1) * rls : 0) + (b ? (rows - 1) * ls : 0));
            if (p < (uintptr_t)c->log_lo || p + LANES > (uintptr_t)c->log_hi) return 0;
        }
    return 1;
}


/* The columns loop for constant bits and q (unrolled by the compiler). */
ALWAYS_INLINE void pack_columns_k(const ctx_t *c, const task_t *t, uint8_t *out0, const char *log0,
                                  const rows_t *rows, const int bits, const int q)
{
    const int per = 8 / bits, last = t->ndim - 1;
    Py_ssize_t nc = t->shape[last - 1], P = t->ps[last - 1] / per, ls = t->ls[last];
    __m128i m = _mm_set1_epi8((char)((1u << bits) - 1));
    /* the gaps between columns are ours: P bytes per column (the checked span includes the
     * last column's gaps) */
    int own = t->kind == 2 && P > q;
    const Py_ssize_t rb = column_rows(rows, P, per), pb = rows->ps / per;
    if (merges(rows, nc, P, per, own, q)) {
        table_columns_k(c, out0, (char *)log0, rows, nc, P, ls, 0, bits, q);
        return;
    }
#if HAVE_WIDE
    if (use_wide && bits == 4 && q == 4 && rb > 1 && pb == q && !own) { /* (_pack_far.h) */
        far_columns(0, out0, (char *)log0, rows->n, nc, P, ls, rows->ls, 0);
        return;
    }
#endif
    const Py_ssize_t first = avx2_first(c, out0, (char *)log0, rows, nc, P, ls, 0, q, own, rb);
    for (Py_ssize_t r0 = 0; r0 < rows->n; r0 += rb) {
        Py_ssize_t r1 = rows->n - r0 < rb ? rows->n : r0 + rb, col = first;
        for (; rb > 1 && pb == q && q <= STAGED_Q && !own && col + LANES <= nc; col += LANES)
            pack_far_staged(c, out0 + r0 * pb + col * P, log0 + r0 * rows->ls + col, P, ls, rows->ls, r1 - r0, m,
                            bits, q, LANES);
        if (rb > 1 && pb == q && q <= STAGED_Q && !own && col < nc
            && lanes_inside(c, log0 + r0 * rows->ls + col, ls, rows->ls, r1 - r0, per * q)) {
            /* the last columns the same way, their lanes read whole (u4[1033,595,3,3]{0,1,3,2:...}: 9) */
            pack_far_staged(c, out0 + r0 * pb + col * P, log0 + r0 * rows->ls + col, P, ls, rows->ls, r1 - r0, m,
                            bits, q, nc - col);
            continue;
        }
        for (; col + LANES <= nc; col += LANES)
            for (Py_ssize_t r = r0; r < r1; r++)
                pack_block(c, out0 + r * pb + col * P, log0 + r * rows->ls + col, P, ls, own, m, bits, q);
        for (Py_ssize_t r = r0; col < nc && r < r1; r++) /* the tail as a block where it may */
            if (!pack_tail(c, out0 + r * pb + col * P, log0 + r * rows->ls + col, P, ls, own, m, bits, q, nc - col))
                for (Py_ssize_t k = col; k < nc; k++) {
                    uint8_t *out = out0 + r * pb;
                    const char *log = log0 + r * rows->ls;
                    for (int j = 0; j < q; j++) out[k * P + j] = gather_k(log + j * per * ls + k, ls, bits);
                    if (own) memset(out + k * P + q, c->pad_byte, (size_t)(P - q));
                }
    }
}

/* One block of 16 columns: per*q rows of 16 codes. */
ALWAYS_INLINE void unpack_block(const uint8_t *in, char *log, Py_ssize_t P, Py_ssize_t ls, const int bits,
                                const int q, __m128i m, __m128i half, int wide)
{
    const int per = 8 / bits;
    __m128i v[MAX_Q] = {0}; /* (q of them are set) */
    load_columns(in, v, P, q, wide);
    for (int j = 0; j < q; j++)
        for (int k = 0; k < per; k++) {
            __m128i x = _mm_and_si128(_mm_srl_epi16(v[j], _mm_cvtsi32_si128(k * bits)), m);
            x = _mm_sub_epi8(_mm_xor_si128(x, half), half); /* sign-extends (no-op when 0) */
            _mm_storeu_si128((__m128i *)(log + (j * per + k) * ls), x);
        }
}

/* The other way (16 columns), and FAR_WIDE columns at once where the logical rows lie a multiple
 * of FAR_ALIAS bytes apart: they share a few L1 sets, so that a line a block of 16 writes a
 * quarter of is evicted before the next block writes the next quarter; 64 columns write each
 * logical line whole in one visit (s4[512,32,4096]{0,1,2:T(8,128)(8,1)E(4)} from 6.5 -> 2.5x a
 * copy; rows not so aligned measured slower wide, and packing too, whose buffer runs get shorter). */
#define FAR_WIDE 64     /* columns a wide pass (a logical line) */
#define FAR_ALIAS 1024  /* logical row strides from which unpacking goes wide */
#define FAR_RUN (LANES * COLUMN_ROWS * STAGED_Q / FAR_WIDE) /* stage bytes a column, wide */
ALWAYS_INLINE void unpack_far_staged(char *log, const uint8_t *in, Py_ssize_t P, Py_ssize_t ls, Py_ssize_t rls,
                                     Py_ssize_t nr, __m128i m, __m128i half, const int bits, const int q, Py_ssize_t n)
{
    _Alignas(64) uint8_t stage[LANES * COLUMN_ROWS * STAGED_Q];
    const Py_ssize_t S = n > LANES ? FAR_RUN : COLUMN_ROWS * q; /* (nr * q <= S: the caller's rows) */
    for (Py_ssize_t i = 0; i < n; i++) memcpy(stage + i * S, in + i * P, (size_t)(nr * q));
    for (Py_ssize_t r = 0; r < nr; r++)
        for (Py_ssize_t b = 0; b < n; b += LANES)
            unpack_block(stage + b * S + r * q, log + r * rls + b, S, ls, bits, q, m, half, 0);
}

ALWAYS_INLINE void unpack_columns_k(const ctx_t *c, const task_t *t, char *log0, const uint8_t *in0,
                                    const rows_t *rows, const int bits, const int q)
{
    const int per = 8 / bits, last = t->ndim - 1;
    Py_ssize_t nc = t->shape[last - 1], P = t->ps[last - 1] / per, ls = t->ls[last];
    __m128i m = _mm_set1_epi8((char)((1u << bits) - 1));
    __m128i half = _mm_set1_epi8((char)(c->sign ? 1u << (bits - 1) : 0u));
    const Py_ssize_t rb = column_rows(rows, P, per), pb = rows->ps / per;
    if (merges(rows, nc, P, per, 0, q)) {
        table_columns_k(c, (uint8_t *)in0, log0, rows, nc, P, ls, 1, bits, q);
        return;
    }
    const int staged = rb > 1 && pb == q && q <= STAGED_Q, wide = staged && ls % FAR_ALIAS == 0 && nc >= FAR_WIDE;
#if HAVE_WIDE
    if (use_wide && bits == 4 && q == 4 && staged) { /* (_pack_far.h) */
        far_columns(1, (uint8_t *)in0, log0, rows->n, nc, P, ls, rows->ls, c->sign);
        return;
    }
#endif
    const Py_ssize_t step = wide ? FAR_RUN / q : rb; /* rows a pass */
    for (Py_ssize_t r0 = 0; rb > 1 && r0 < rows->n; r0 += step) { /* far columns (column_rows) */
        Py_ssize_t r1 = rows->n - r0 < step ? rows->n : r0 + step, col = 0;
        for (; wide && col + FAR_WIDE <= nc; col += FAR_WIDE)
            unpack_far_staged(log0 + r0 * rows->ls + col, in0 + r0 * pb + col * P, P, ls, rows->ls, r1 - r0, m, half,
                              bits, q, FAR_WIDE);
        for (; staged && col + LANES <= nc; col += LANES)
            unpack_far_staged(log0 + r0 * rows->ls + col, in0 + r0 * pb + col * P, P, ls, rows->ls, r1 - r0, m, half,
                              bits, q, LANES);
        for (; col + LANES <= nc; col += LANES)
            for (Py_ssize_t r = r0; r < r1; r++)
                unpack_block(in0 + r * pb + col * P, log0 + r * rows->ls + col, P, ls, bits, q, m, half,
                             col + LANES < nc);
        for (Py_ssize_t r = r0; col < nc && r < r1; r++)
            unpack_tail(in0 + r * pb + col * P, log0 + r * rows->ls + col, P, ls, bits, q, m, half, nc - col);
    }
    const Py_ssize_t first = avx2_first(c, (uint8_t *)in0, log0, rows, nc, P, ls, 1, q, 0, rb);
    for (Py_ssize_t r = 0; rb == 1 && r < rows->n; r++) {
        char *log = log0 + r * rows->ls;
        const uint8_t *in = in0 + r * (rows->ps / per);
        Py_ssize_t col = first;
        /* streaming: 4 blocks at a time, each row's 64-byte line stored one piece after the
         * other, so the write-combining buffers fill whole lines; only where every row's line
         * starts at the same column (after a head of plain blocks) */
        Py_ssize_t head = (Py_ssize_t)((64 - ((uintptr_t)log & 63)) & 63);
        int stream = c->stream && ls % 64 == 0 && head % LANES == 0 && nc >= STREAM_MIN_RUN;
        for (; stream && col < head && col + LANES <= nc; col += LANES)
            unpack_block(in + col * P, log + col, P, ls, bits, q, m, half, col + LANES < nc);
        for (; stream && col + 4 * LANES <= nc; col += 4 * LANES) {
            __m128i v[4][MAX_Q]; /* q of each are set (no zeroing: a memset per step measured slow) */
            for (int b = 0; b < 4; b++)
                load_columns(in + (col + b * LANES) * P, v[b], P, q, col + (b + 1) * LANES < nc);
            for (int j = 0; j < q; j++)
                for (int k = 0; k < per; k++) {
                    uint8_t *to = (uint8_t *)(log + (j * per + k) * ls + col);
                    int st = ((uintptr_t)to & 15) == 0;
                    for (int b = 0; b < 4; b++) {
                        __m128i x = _mm_and_si128(_mm_srl_epi16(v[b][j], _mm_cvtsi32_si128(k * bits)), m);
                        put(to + b * LANES, _mm_sub_epi8(_mm_xor_si128(x, half), half), st);
                    }
                }
        }
        for (; col + LANES <= nc; col += LANES)
            unpack_block(in + col * P, log + col, P, ls, bits, q, m, half, col + LANES < nc);
        if (col < nc) unpack_tail(in + col * P, log + col, P, ls, bits, q, m, half, nc - col);
    }
}

/* Dispatch to a copy specialised for bits (1, 2, 4) and q (1, 2, 4 bytes per column). */
#define SPECIALISE(CALL, C, T, ...)                                                          \
    do {                                                                                     \
        int q_ = (int)((T)->shape[(T)->ndim - 1] / (C)->per);                                \
        switch ((C)->bits * 8 + q_) {                                                        \
        case 9: CALL(C, T, __VA_ARGS__, 1, 1); break;                                        \
        case 10: CALL(C, T, __VA_ARGS__, 1, 2); break;                                       \
        case 12: CALL(C, T, __VA_ARGS__, 1, 4); break;                                       \
        case 17: CALL(C, T, __VA_ARGS__, 2, 1); break;                                       \
        case 18: CALL(C, T, __VA_ARGS__, 2, 2); break;                                       \
        case 20: CALL(C, T, __VA_ARGS__, 2, 4); break;                                       \
        case 33: CALL(C, T, __VA_ARGS__, 4, 1); break;                                       \
        case 34: CALL(C, T, __VA_ARGS__, 4, 2); break;                                       \
        case 36: CALL(C, T, __VA_ARGS__, 4, 4); break;                                       \
        default: CALL(C, T, __VA_ARGS__, (C)->bits, q_);                                     \
        }                                                                                    \
    } while (0)

static void pack_columns(const ctx_t *c, const task_t *t, uint8_t *out, const char *log, const rows_t *rows)
{
    SPECIALISE(pack_columns_k, c, t, out, log, rows);
}

static void unpack_columns(const ctx_t *c, const task_t *t, char *log, const uint8_t *in,
                           const rows_t *rows)
{
    SPECIALISE(unpack_columns_k, c, t, log, in, rows);
}
#endif


#endif /* TENSORLAYOUT_PACK_COLUMNS_H */
