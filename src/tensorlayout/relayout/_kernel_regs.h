/* _kernel_regs.h: the register tiles: V x V transposes of 1, 2, 4 and 8-byte items in SSE2/AVX2
 * registers, the weaves of 8 four-byte rows, and the table of tiles per item size (widened at
 * import by choose_tilers in _kernel_tiles.h). Self-contained (include guard). */
#ifndef TENSORLAYOUT_KERNEL_REGS_H
#define TENSORLAYOUT_KERNEL_REGS_H
#include "_kernel_loops.h"
#include "_kernel_ahead.h"
#include "_kernel_bytes.h"


/* ---- vector transposes -------------------------------------------------------------------
 * A tile function moves one V x V tile in registers: dst row a (at d + a*da) receives item a
 * of each source row b (at s + b*sb), b = 0..V-1. `nt`: non-temporal stores (the caller
 * checked that every store is 16-byte aligned; the 1-byte tile ignores it). */
typedef void (*tile_fn)(char *d, const char *s, Py_ssize_t da, Py_ssize_t sb, int nt);

#if HAVE_STREAM
#define LD(p) _mm_loadu_si128((const __m128i *)(p))
static inline void st128(char *p, __m128i v, int nt)
{
    if (nt) _mm_stream_si128((__m128i *)p, v); else _mm_storeu_si128((__m128i *)p, v);
}

static void tile_u8_sse2(char *d, const char *s, Py_ssize_t da, Py_ssize_t sb, int nt)
{ /* 8 x 8 bytes: three rounds of unpacks, 8-byte stores */
    (void)nt;
    __m128i r[8], t[4], u[4], v[4];
    for (int b = 0; b < 8; b++) r[b] = _mm_loadl_epi64((const __m128i *)(s + b * sb));
    for (int k = 0; k < 4; k++) t[k] = _mm_unpacklo_epi8(r[2 * k], r[2 * k + 1]);
    u[0] = _mm_unpacklo_epi16(t[0], t[1]);
    u[1] = _mm_unpackhi_epi16(t[0], t[1]);
    u[2] = _mm_unpacklo_epi16(t[2], t[3]);
    u[3] = _mm_unpackhi_epi16(t[2], t[3]);
    v[0] = _mm_unpacklo_epi32(u[0], u[2]);
    v[1] = _mm_unpackhi_epi32(u[0], u[2]);
    v[2] = _mm_unpacklo_epi32(u[1], u[3]);
    v[3] = _mm_unpackhi_epi32(u[1], u[3]);
    for (int k = 0; k < 4; k++) {
        _mm_storel_epi64((__m128i *)(d + (2 * k) * da), v[k]);
        _mm_storel_epi64((__m128i *)(d + (2 * k + 1) * da), _mm_unpackhi_epi64(v[k], v[k]));
    }
}

/* 16 x 16 bytes: four rounds of unpacks (bytes, pairs, quads, halves), 16-byte rows that can
 * stream; 0.4 instructions a byte against the 8 x 8 tile's 0.6 (1-byte transposes measured
 * compute-bound at 64 MiB) */
static void tile_u8x16_sse2(char *d, const char *s, Py_ssize_t da, Py_ssize_t sb, int nt)
{
    __m128i r[16], t[16], q[16];
    for (int b = 0; b < 16; b++) r[b] = LD(s + b * sb);
    for (int i = 0; i < 8; i++) { /* t[2i]: items 0..7 of rows 2i, 2i+1 paired; t[2i+1]: 8..15 */
        t[2 * i] = _mm_unpacklo_epi8(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm_unpackhi_epi8(r[2 * i], r[2 * i + 1]);
    }
    for (int g = 0; g < 4; g++) /* q[4g + m]: items 4m..4m+3 of rows 4g..4g+3, a dword each */
        for (int h = 0; h < 2; h++) {
            q[4 * g + 2 * h] = _mm_unpacklo_epi16(t[4 * g + h], t[4 * g + 2 + h]);
            q[4 * g + 2 * h + 1] = _mm_unpackhi_epi16(t[4 * g + h], t[4 * g + 2 + h]);
        }
    for (int m = 0; m < 4; m++) { /* rows 0..7 and 8..15 of items 4m..4m+3, a qword each */
        __m128i lo = _mm_unpacklo_epi32(q[m], q[4 + m]), hi = _mm_unpacklo_epi32(q[8 + m], q[12 + m]);
        st128(d + (4 * m) * da, _mm_unpacklo_epi64(lo, hi), nt);
        st128(d + (4 * m + 1) * da, _mm_unpackhi_epi64(lo, hi), nt);
        lo = _mm_unpackhi_epi32(q[m], q[4 + m]);
        hi = _mm_unpackhi_epi32(q[8 + m], q[12 + m]);
        st128(d + (4 * m + 2) * da, _mm_unpacklo_epi64(lo, hi), nt);
        st128(d + (4 * m + 3) * da, _mm_unpackhi_epi64(lo, hi), nt);
    }
}

static void tile_u16_sse2(char *d, const char *s, Py_ssize_t da, Py_ssize_t sb, int nt)
{ /* 8 x 8 two-byte items */
    __m128i r[8], t[8], u[8];
    for (int b = 0; b < 8; b++) r[b] = LD(s + b * sb);
    for (int k = 0; k < 4; k++) {
        t[2 * k] = _mm_unpacklo_epi16(r[2 * k], r[2 * k + 1]);
        t[2 * k + 1] = _mm_unpackhi_epi16(r[2 * k], r[2 * k + 1]);
    }
    for (int h = 0; h < 2; h++) { /* rows 0-3, then 4-7 */
        __m128i *tt = t + 4 * h, *uu = u + 4 * h;
        uu[0] = _mm_unpacklo_epi32(tt[0], tt[2]);
        uu[1] = _mm_unpackhi_epi32(tt[0], tt[2]);
        uu[2] = _mm_unpacklo_epi32(tt[1], tt[3]);
        uu[3] = _mm_unpackhi_epi32(tt[1], tt[3]);
    }
    for (int k = 0; k < 4; k++) {
        st128(d + (2 * k) * da, _mm_unpacklo_epi64(u[k], u[k + 4]), nt);
        st128(d + (2 * k + 1) * da, _mm_unpackhi_epi64(u[k], u[k + 4]), nt);
    }
}

/* [a, b, c, d] -> [a, c, b, d] in every unit of a register (units of 4 or 8 bytes) */
static inline __m128i fix128(__m128i v, int swap)
{
    if (swap == 4) {
        __m128i keep = _mm_and_si128(v, _mm_set1_epi32((int)0xFF0000FFu));
        __m128i up = _mm_slli_epi32(_mm_and_si128(v, _mm_set1_epi32(0x0000FF00)), 8);
        return _mm_or_si128(keep, _mm_or_si128(up, _mm_srli_epi32(_mm_and_si128(v, _mm_set1_epi32(0x00FF0000)), 8)));
    }
    if (swap == 8) return _mm_shufflehi_epi16(_mm_shufflelo_epi16(v, 0xD8), 0xD8);
    return v;
}

static inline __attribute__((always_inline)) void tile_u32_body(char *d, const char *s, Py_ssize_t da,
                                                                 Py_ssize_t sb, int nt, int swap)
{ /* 4 x 4 four-byte items */
    __m128i r0 = LD(s), r1 = LD(s + sb), r2 = LD(s + 2 * sb), r3 = LD(s + 3 * sb);
    __m128i t0 = _mm_unpacklo_epi32(r0, r1), t1 = _mm_unpacklo_epi32(r2, r3);
    __m128i t2 = _mm_unpackhi_epi32(r0, r1), t3 = _mm_unpackhi_epi32(r2, r3);
    st128(d, fix128(_mm_unpacklo_epi64(t0, t1), swap), nt);
    st128(d + da, fix128(_mm_unpackhi_epi64(t0, t1), swap), nt);
    st128(d + 2 * da, fix128(_mm_unpacklo_epi64(t2, t3), swap), nt);
    st128(d + 3 * da, fix128(_mm_unpackhi_epi64(t2, t3), swap), nt);
}

static void tile_u32_sse2(char *d, const char *s, Py_ssize_t da, Py_ssize_t sb, int nt)
{
    tile_u32_body(d, s, da, sb, nt, 0);
}

static void tile_u32_swap_sse2(char *d, const char *s, Py_ssize_t da, Py_ssize_t sb, int nt)
{
    tile_u32_body(d, s, da, sb, nt, 4);
}

static inline __attribute__((always_inline)) void tile_u64_body(char *d, const char *s, Py_ssize_t da,
                                                                 Py_ssize_t sb, int nt, int swap)
{ /* 2 x 2 eight-byte items */
    __m128i r0 = LD(s), r1 = LD(s + sb);
    st128(d, fix128(_mm_unpacklo_epi64(r0, r1), swap), nt);
    st128(d + da, fix128(_mm_unpackhi_epi64(r0, r1), swap), nt);
}

static void tile_u64_sse2(char *d, const char *s, Py_ssize_t da, Py_ssize_t sb, int nt)
{
    tile_u64_body(d, s, da, sb, nt, 0);
}

static void tile_u64_swap_sse2(char *d, const char *s, Py_ssize_t da, Py_ssize_t sb, int nt)
{
    tile_u64_body(d, s, da, sb, nt, 8);
}
#endif

#if HAVE_AVX2_DISPATCH
__attribute__((target("avx2"))) static inline void st256(char *p, __m256i v, int nt)
{ /* streamed as two 16-byte halves: a row of a tile need only be 16-byte aligned */
    if (nt) {
        _mm_stream_si128((__m128i *)p, _mm256_castsi256_si128(v));
        _mm_stream_si128((__m128i *)(p + 16), _mm256_extracti128_si256(v, 1));
    } else {
        _mm256_storeu_si256((__m256i *)p, v);
    }
}

__attribute__((target("avx2"))) static inline __m256i fix256(__m256i v, int swap)
{ /* fix128 on both halves */
    if (swap == 4) {
        __m256i keep = _mm256_and_si256(v, _mm256_set1_epi32((int)0xFF0000FFu));
        __m256i up = _mm256_slli_epi32(_mm256_and_si256(v, _mm256_set1_epi32(0x0000FF00)), 8);
        return _mm256_or_si256(keep, _mm256_or_si256(up, _mm256_srli_epi32(
            _mm256_and_si256(v, _mm256_set1_epi32(0x00FF0000)), 8)));
    }
    if (swap == 8) return _mm256_shufflehi_epi16(_mm256_shufflelo_epi16(v, 0xD8), 0xD8);
    return v;
}

/* 8 x 8 four-byte items in registers: unpack, shuffle, then swap 128-bit halves; o[a] is row
 * a of the transpose of the rows r[b]. */
__attribute__((target("avx2"))) static inline __attribute__((always_inline)) void
transpose_u32x8(const __m256 *r, __m256 *o)
{
    __m256 t[8], u[8];
    for (int k = 0; k < 4; k++) {
        t[2 * k] = _mm256_unpacklo_ps(r[2 * k], r[2 * k + 1]);
        t[2 * k + 1] = _mm256_unpackhi_ps(r[2 * k], r[2 * k + 1]);
    }
    for (int h = 0; h < 2; h++) {
        __m256 *tt = t + 4 * h, *uu = u + 4 * h;
        uu[0] = _mm256_shuffle_ps(tt[0], tt[2], 0x44);
        uu[1] = _mm256_shuffle_ps(tt[0], tt[2], 0xEE);
        uu[2] = _mm256_shuffle_ps(tt[1], tt[3], 0x44);
        uu[3] = _mm256_shuffle_ps(tt[1], tt[3], 0xEE);
    }
    for (int k = 0; k < 4; k++) {
        o[k] = _mm256_permute2f128_ps(u[k], u[k + 4], 0x20);
        o[k + 4] = _mm256_permute2f128_ps(u[k], u[k + 4], 0x31);
    }
}

__attribute__((target("avx2"))) static inline __attribute__((always_inline)) void
tile_u32_avx2_body(char *d, const char *s, Py_ssize_t da, Py_ssize_t sb, int nt, int swap)
{ /* 8 x 8 four-byte items */
    __m256 r[8], o[8];
    for (int b = 0; b < 8; b++) r[b] = _mm256_loadu_ps((const float *)(s + b * sb));
    transpose_u32x8(r, o);
    for (int a = 0; a < 8; a++) st256(d + a * da, fix256(_mm256_castps_si256(o[a]), swap), nt);
}

/* The 8 x 8 four-byte tile with its rows anywhere: source row b read at srow[b], destination
 * row a written at drow[a] (the pieces of G consecutive g of a narrow transpose, whose rows
 * are 8/G items each: transpose_narrow in _kernel_strips.h). */
__attribute__((target("avx2"))) static void tile_u32_avx2_rows(char *const *drow, const char *const *srow)
{
    __m256 r[8], o[8];
    for (int b = 0; b < 8; b++) r[b] = _mm256_loadu_ps((const float *)srow[b]);
    transpose_u32x8(r, o);
    for (int a = 0; a < 8; a++) _mm256_storeu_ps((float *)drow[a], o[a]);
}

/* unweave_uint32_t_8 and weave_uint32_t_8 as 8 x 8 tiles in registers: 8 groups (256
 * contiguous bytes) a round, one 32-byte load or store per row (a (4,1) sub-tile of bytes,
 * moved as 4-byte items, against a transposed tiling: pred[65536,32]{0,1:T(4,128)(4,1)}'s
 * 8 rows of each logical row). The SSE2 loops' 4 x 4 tiles store 16 bytes per row a round. */
__attribute__((target("avx2"))) static void unweave_u32_8_tiles(char *d, const char *s, Py_ssize_t n,
                                                                 Py_ssize_t db)
{
    Py_ssize_t k = 0;
    for (; k + 8 <= n; k += 8) {
        __m256 r[8], o[8];
        for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_ps((const float *)(s + (k + i) * 32));
        transpose_u32x8(r, o);
        for (int b = 0; b < 8; b++) _mm256_storeu_ps((float *)(d + b * db + 4 * k), o[b]);
    }
    if (k < n) unweave_uint32_t_8(d + 4 * k, s + k * 32, n - k, db);
}

__attribute__((target("avx2"))) static void weave_u32_8_avx2(char *d, const char *s, Py_ssize_t n,
                                                             Py_ssize_t sb)
{
    Py_ssize_t k = 0;
    for (; k + 8 <= n; k += 8) {
        __m256 r[8], o[8];
        for (int b = 0; b < 8; b++) r[b] = _mm256_loadu_ps((const float *)(s + b * sb + 4 * k));
        transpose_u32x8(r, o);
        for (int i = 0; i < 8; i++) _mm256_storeu_ps((float *)(d + (k + i) * 32), o[i]);
    }
    if (k < n) weave_uint32_t_8(d + k * 32, s + 4 * k, n - k, sb);
}

#define UNWEAVE_STAGE_ITEMS 64 /* groups per round of unweave_u32_8_avx2's stage */
/* unweave_u32_8_tiles; where the 8 destination rows share L1 sets (a multiple of 4 KiB apart),
 * through an L1 stage whose rows do not: UNWEAVE_STAGE_ITEMS groups at a time, then each
 * row's 256 bytes out at once (pred[65536,32]{0,1:T(4,128)(4,1)} to_physical, rows 256 KiB
 * apart, one thread, ratio to a copy: SSE2 2.8, tiles 2.4, staged 1.5; rows 254 KiB apart,
 * pred[65000,32]: SSE2 1.10, tiles 1.03, staged 1.28). */
__attribute__((target("avx2"))) static void unweave_u32_8_avx2(char *d, const char *s, Py_ssize_t n,
                                                               Py_ssize_t db)
{
    const Py_ssize_t c = UNWEAVE_STAGE_ITEMS, pitch = 4 * UNWEAVE_STAGE_ITEMS + 64;
    _Alignas(64) char stage[8 * (4 * UNWEAVE_STAGE_ITEMS + 64)];
    Py_ssize_t k = 0;
    if (db % 4096 == 0)
        for (; k + c <= n; k += c) {
            unweave_u32_8_tiles(stage, s + k * 32, c, pitch);
            for (int b = 0; b < 8; b++)
                memcpy(d + b * db + 4 * k, stage + b * pitch, 4 * UNWEAVE_STAGE_ITEMS);
        }
    if (k < n) unweave_u32_8_tiles(d + 4 * k, s + k * 32, n - k, db);
}

/* A transpose of 4-byte items with a short side of 3 or 4 items against a long one (a (2,1)
 * sub-tile's 4-byte pairs of a ragged 15-row tiling, 4 and 3 to a tile row, against logical
 * rows 30 bytes long: bf16[1246,89,15]{0,2,1:T(8,128)(2,1)}), two 4 x 4 tiles at once, one in
 * each 128-bit lane: 8 items of the long side a round, the short side's rows loaded and stored
 * as 32-byte rows (to it) or its 3- or 4-item rows as 12- or 16-byte ones (from it). The 4 x 4
 * SSE2 tiles (and the three-row loop) stored 16 bytes a row a round: to_physical of that layout,
 * one thread, builds run against each other, 3.5-3.7 -> 3.1-3.3x a copy, from_physical 3.5-3.7
 * -> 3.3-3.6. Past the last multiple of 8 items, the scalar loop. na short: dst rows (na of
 * them) from nb source rows; nb short: the destination's rows of nb items. */
__attribute__((target("avx2"))) static inline void transpose_lanes4(__m256i *r)
{ /* in each lane, rows r[0..3] of 4 items to columns */
    __m256i t0 = _mm256_unpacklo_epi32(r[0], r[1]), t1 = _mm256_unpacklo_epi32(r[2], r[3]);
    __m256i t2 = _mm256_unpackhi_epi32(r[0], r[1]), t3 = _mm256_unpackhi_epi32(r[2], r[3]);
    r[0] = _mm256_unpacklo_epi64(t0, t1);
    r[1] = _mm256_unpackhi_epi64(t0, t1);
    r[2] = _mm256_unpacklo_epi64(t2, t3);
    r[3] = _mm256_unpackhi_epi64(t2, t3);
}

static inline __m128i load12(const char *p)
{ /* 12 bytes, the rest 0 (8 + 4: masked loads measured slow here) */
    int32_t w;
    memcpy(&w, p + 8, 4);
    return _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)p), _mm_cvtsi32_si128(w));
}

__attribute__((target("avx2"))) static void transpose_u32_short_avx2(char *d, const char *s, Py_ssize_t na,
                                                                     Py_ssize_t nb, Py_ssize_t da, Py_ssize_t sb)
{
    if (na <= 4) { /* source rows j of na items; dst rows i of nb */
        Py_ssize_t e = nb - nb % 8;
        for (Py_ssize_t j = 0; j < e; j += 8) {
            __m256i r[4];
            for (int b = 0; b < 4; b++) {
                const char *p0 = s + (j + b) * sb, *p1 = s + (j + 4 + b) * sb;
                __m128i x0 = na == 4 ? _mm_loadu_si128((const __m128i *)p0) : load12(p0);
                __m128i x1 = na == 4 ? _mm_loadu_si128((const __m128i *)p1) : load12(p1);
                r[b] = _mm256_inserti128_si256(_mm256_castsi128_si256(x0), x1, 1);
            }
            transpose_lanes4(r);
            for (Py_ssize_t i = 0; i < na; i++) _mm256_storeu_si256((__m256i *)(d + i * da + j * 4), r[i]);
        }
        if (e < nb) transpose_uint32_t(d + e * 4, s + e * sb, na, nb - e, da, sb);
        return;
    }
    const __m256i z = _mm256_setzero_si256();
    Py_ssize_t e = na - na % 8;
    for (Py_ssize_t i = 0; i < e; i += 8) {
        __m256i r[4];
        for (int b = 0; b < 4; b++)
            r[b] = b < nb ? _mm256_loadu_si256((const __m256i *)(s + b * sb + i * 4)) : z;
        transpose_lanes4(r);
        for (int k = 0; k < 4; k++) {
            __m128i lo = _mm256_castsi256_si128(r[k]), hi = _mm256_extracti128_si256(r[k], 1);
            if (nb == 4) {
                _mm_storeu_si128((__m128i *)(d + (i + k) * da), lo);
                _mm_storeu_si128((__m128i *)(d + (i + 4 + k) * da), hi);
            } else { /* 8 + 4 bytes (masked stores measured slow here) */
                char *o = d + (i + k) * da, *q = d + (i + 4 + k) * da;
                int32_t w = _mm_extract_epi32(lo, 2), x = _mm_extract_epi32(hi, 2);
                _mm_storel_epi64((__m128i *)o, lo);
                memcpy(o + 8, &w, 4);
                _mm_storel_epi64((__m128i *)q, hi);
                memcpy(q + 8, &x, 4);
            }
        }
    }
    if (e < na) transpose_uint32_t(d + e * da, s + e * 4, na - e, nb, da, sb);
}

/* The 4 x 4 eight-byte items of the rows s, s + sb, ... transposed: o[k] holds item k of each. */
__attribute__((target("avx2"))) static inline __attribute__((always_inline)) void
transpose_u64x4(const char *s, Py_ssize_t sb, __m256d *o)
{
    __m256d r0 = _mm256_loadu_pd((const double *)s), r1 = _mm256_loadu_pd((const double *)(s + sb));
    __m256d r2 = _mm256_loadu_pd((const double *)(s + 2 * sb));
    __m256d r3 = _mm256_loadu_pd((const double *)(s + 3 * sb));
    __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
    __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
    o[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
    o[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
    o[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
    o[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
}

__attribute__((target("avx2"))) static inline __attribute__((always_inline)) void
tile_u64_avx2_body(char *d, const char *s, Py_ssize_t da, Py_ssize_t sb, int nt, int swap)
{ /* 4 x 4 eight-byte items */
    __m256d o[4];
    transpose_u64x4(s, sb, o);
    for (int k = 0; k < 4; k++) st256(d + k * da, fix256(_mm256_castpd_si256(o[k]), swap), nt);
}

#define AVX2_TILE(NAME, BODY, SWAP)                                                           \
    __attribute__((target("avx2"))) static void NAME(char *d, const char *s, Py_ssize_t da,  \
                                                     Py_ssize_t sb, int nt)                  \
    {                                                                                        \
        BODY(d, s, da, sb, nt, SWAP);                                                        \
    }
AVX2_TILE(tile_u32_avx2, tile_u32_avx2_body, 0)
AVX2_TILE(tile_u32_swap_avx2, tile_u32_avx2_body, 4)
AVX2_TILE(tile_u64_avx2, tile_u64_avx2_body, 0)
AVX2_TILE(tile_u64_swap_avx2, tile_u64_avx2_body, 8)
#endif

typedef struct {
    tile_fn tile;    /* NULL: the scalar loop only */
    int v;           /* tile side in items */
} tiler_t;

/* per item size (1, 2, 4, 8 bytes); widened at import (16 x 16 bytes; AVX2 where the CPU has it) */
#if HAVE_STREAM
#define SSE2_TILERS                                                                          \
    {                                                                                        \
        {tile_u8_sse2, 8}, {tile_u16_sse2, 8}, {tile_u32_sse2, 4}, {tile_u64_sse2, 2},      \
        {NULL, 1}, {NULL, 1}, {tile_u32_swap_sse2, 4}, {tile_u64_swap_sse2, 2},              \
    }
#else
#define SSE2_TILERS {{NULL, 1}, {NULL, 1}, {NULL, 1}, {NULL, 1}, {NULL, 1}, {NULL, 1}, {NULL, 1}, {NULL, 1}}
#endif
static tiler_t tilers[8] = SSE2_TILERS;
typedef void (*rows_tile_fn)(char *const *drow, const char *const *srow);
/* the 8 x 8 four-byte tile over rows anywhere (AVX2), or NULL */
static rows_tile_fn rows_tile_u32;
/* transpose_u32_short_avx2 where the CPU has AVX2, or NULL */
static transpose_fn short_u32;
/* the narrower tiles, for a transpose too short on a side for the wide ones (a (2,1) sub-tile's
 * 4-byte pairs, 4 to a tile row, against a transposed tiling: 4 x 4 tiles, not the scalar loop) */
static const tiler_t narrow_tilers[8] = SSE2_TILERS;

#endif
