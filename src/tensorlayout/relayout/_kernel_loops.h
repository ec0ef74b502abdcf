/* _kernel_loops.h: the innermost loops of the copy kernel (runs, strided, weaves and their
 * AVX2 forms, swapped units), and the tables the outer loops pick them from.
 * Self-contained (include guard): it includes _kernel_plan.h. The kernel is one translation
 * unit (_kernel.c includes the top of the chain), so the copy paths inline across the parts. */
#ifndef TENSORLAYOUT_KERNEL_LOOPS_H
#define TENSORLAYOUT_KERNEL_LOOPS_H
#include "_kernel_plan.h"
#include "_sse2.h"


/* ---- innermost loops ---------------------------------------------------------------- */

#define RUN_FIXED(BYTES)                                                                     \
    static void run_##BYTES(char *d, const char *s, Py_ssize_t n, Py_ssize_t ds, Py_ssize_t ss) \
    {                                                                                        \
        for (Py_ssize_t i = 0; i < n; i++) memcpy(d + i * ds, s + i * ss, BYTES);            \
    }
RUN_FIXED(4)
RUN_FIXED(8)
RUN_FIXED(16)
RUN_FIXED(32)
RUN_FIXED(64)

/* Items are moved through memcpy (one load and one store each): a task's wider items (see
 * read_task in _kernel_tasks.h) need not be aligned to their size. */
#define STRIDED(T)                                                                           \
    static void strided_##T(char *d, const char *s, Py_ssize_t n, Py_ssize_t ds, Py_ssize_t ss) \
    {                                                                                        \
        for (Py_ssize_t i = 0; i < n; i++) memcpy(d + i * ds, s + i * ss, sizeof(T));       \
    }
STRIDED(uint8_t)
STRIDED(uint16_t)
STRIDED(uint32_t)
STRIDED(uint64_t)

/* dst[k*M + b] = *(src + b*sb + k): M rows of n items each, woven into one stream. */
#define WEAVE(T, M)                                                                          \
    static void weave_##T##_##M(char *restrict d, const char *s, Py_ssize_t n, Py_ssize_t sb) \
    {                                                                                        \
        const Py_ssize_t it = (Py_ssize_t)sizeof(T);                                         \
        for (Py_ssize_t k = 0; k < n; k++)                                                   \
            for (int b = 0; b < M; b++) memcpy(d + (k * M + b) * it, s + b * sb + k * it, sizeof(T)); \
    }
/* *(dst + b*db + k) = src[k*M + b]: one stream split into M rows. */
#define UNWEAVE(T, M)                                                                        \
    static void unweave_##T##_##M(char *d, const char *restrict s, Py_ssize_t n, Py_ssize_t db) \
    {                                                                                        \
        const Py_ssize_t it = (Py_ssize_t)sizeof(T);                                         \
        for (Py_ssize_t k = 0; k < n; k++)                                                   \
            for (int b = 0; b < M; b++) memcpy(d + b * db + k * it, s + (k * M + b) * it, sizeof(T)); \
    }
#define WEAVES(T) WEAVE(T, 2) WEAVE(T, 4) WEAVE(T, 8) UNWEAVE(T, 2) UNWEAVE(T, 4) UNWEAVE(T, 8)
WEAVES(uint8_t)
WEAVES(uint16_t)
WEAVES(uint32_t)
WEAVES(uint64_t)

/* Three rows of bytes into (out of) 4-byte groups whose fourth byte is not theirs (a ragged
 * (4,1) sub-tile's last three rows): the weave writes 0 there (the stage it fills is merged
 * into the destination three bytes a group: merge3), the unweave skips it. */
static void weave_u8_3(char *restrict d, const char *s, Py_ssize_t n, Py_ssize_t sb)
{
    for (Py_ssize_t k = 0; k < n; k++) {
        d[4 * k] = s[k];
        d[4 * k + 1] = s[sb + k];
        d[4 * k + 2] = s[2 * sb + k];
        d[4 * k + 3] = 0;
    }
}

static void unweave_u8_3(char *d, const char *restrict s, Py_ssize_t n, Py_ssize_t db)
{
    for (Py_ssize_t k = 0; k < n; k++) {
        d[k] = s[4 * k];
        d[db + k] = s[4 * k + 1];
        d[2 * db + k] = s[4 * k + 2];
    }
}

/* d's n 4-byte groups get bytes 0..2 of the groups at s (their fourth bytes are left as they
 * are; the caller may rewrite them with what they hold: merge3_avx2). */
static void merge3(char *d, const char *s, Py_ssize_t n, const char *dhi)
{
    (void)dhi;
    for (Py_ssize_t k = 0; k < n; k++) memcpy(d + 4 * k, s + 4 * k, 3);
}

/* dst[i*da + j] = src[i + j*sb] over na x nb items (item units for the contiguous sides,
 * bytes for the strides da and sb), in TB x TB blocks: the scalar loop, for the edges the
 * vector tiles below leave and for machines without SSE2. Inside a block the inner loop runs
 * along the side whose other stride is the smaller, so the far-apart rows (a different page
 * each) are visited once per block rather than once per item. */
#define TB 16
#define TRANSPOSE(T)                                                                         \
    static void transpose_##T(char *d, const char *s, Py_ssize_t na, Py_ssize_t nb,          \
                              Py_ssize_t da, Py_ssize_t sb)                                  \
    {                                                                                        \
        const Py_ssize_t it = (Py_ssize_t)sizeof(T);                                         \
        for (Py_ssize_t i0 = 0; i0 < na; i0 += TB) {                                         \
            Py_ssize_t i1 = i0 + TB < na ? i0 + TB : na;                                     \
            for (Py_ssize_t j0 = 0; j0 < nb; j0 += TB) {                                     \
                Py_ssize_t j1 = j0 + TB < nb ? j0 + TB : nb;                                 \
                if (sb <= da) {                                                              \
                    for (Py_ssize_t i = i0; i < i1; i++) {                                   \
                        char *restrict out = d + i * da;                                     \
                        const char *in = s + i * it;                                         \
                        for (Py_ssize_t j = j0; j < j1; j++) memcpy(out + j * it, in + j * sb, sizeof(T)); \
                    }                                                                        \
                } else {                                                                     \
                    for (Py_ssize_t j = j0; j < j1; j++) {                                   \
                        const char *restrict in = s + j * sb;                                \
                        char *out = d + j * it;                                              \
                        for (Py_ssize_t i = i0; i < i1; i++) memcpy(out + i * da, in + i * it, sizeof(T)); \
                    }                                                                        \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
    }
TRANSPOSE(uint8_t)
TRANSPOSE(uint16_t)
TRANSPOSE(uint32_t)
TRANSPOSE(uint64_t)

typedef void (*transpose_fn)(char *, const char *, Py_ssize_t, Py_ssize_t, Py_ssize_t, Py_ssize_t);
/* ---- swapped units ----------------------------------------------------------------------
 * A unit is a 2 x 2 block [a, b, c, d] of 1- or 2-byte items (4 or 8 bytes), moved as
 * [a, c, b, d]: the (2,1) sub-tiles of one tiling read as those of its transpose. The unit
 * variants of the loops are indexed by lg + SWAPPED (lg: log2 of the unit's bytes); their
 * scalar loops load and store through memcpy (units are only item-aligned). */
#define SWAPPED 4
#define ITEM(lg) ((Py_ssize_t)1 << ((lg) & 3))

static inline uint32_t swap_u32(uint32_t x)
{
    return (x & 0xFF0000FFu) | ((x & 0x0000FF00u) << 8) | ((x & 0x00FF0000u) >> 8);
}

static inline uint64_t swap_u64(uint64_t x)
{
    return (x & 0xFFFF00000000FFFFull) | ((x & 0x00000000FFFF0000ull) << 16)
           | ((x & 0x0000FFFF00000000ull) >> 16);
}

#define SWAP_LOOPS(T, FIX)                                                                   \
    static void strided_swap_##T(char *d, const char *s, Py_ssize_t n, Py_ssize_t ds, Py_ssize_t ss) \
    {                                                                                        \
        for (Py_ssize_t i = 0; i < n; i++) {                                                 \
            T v;                                                                             \
            memcpy(&v, s + i * ss, sizeof v);                                                \
            v = FIX(v);                                                                      \
            memcpy(d + i * ds, &v, sizeof v);                                                \
        }                                                                                    \
    }                                                                                        \
    static void transpose_swap_##T(char *d, const char *s, Py_ssize_t na, Py_ssize_t nb,     \
                                   Py_ssize_t da, Py_ssize_t sb)                             \
    {                                                                                        \
        for (Py_ssize_t i0 = 0; i0 < na; i0 += TB) {                                         \
            Py_ssize_t i1 = i0 + TB < na ? i0 + TB : na;                                     \
            for (Py_ssize_t j0 = 0; j0 < nb; j0 += TB) {                                     \
                Py_ssize_t j1 = j0 + TB < nb ? j0 + TB : nb;                                 \
                for (Py_ssize_t i = i0; i < i1; i++)                                         \
                    strided_swap_##T(d + i * da + j0 * (Py_ssize_t)sizeof(T),                \
                                     s + i * (Py_ssize_t)sizeof(T) + j0 * sb, j1 - j0,        \
                                     (Py_ssize_t)sizeof(T), sb);                             \
            }                                                                                \
        }                                                                                    \
    }
SWAP_LOOPS(uint32_t, swap_u32)
SWAP_LOOPS(uint64_t, swap_u64)

static transpose_fn transpose_table[8] = {transpose_uint8_t, transpose_uint16_t, transpose_uint32_t,
                                          transpose_uint64_t, NULL, NULL, transpose_swap_uint32_t,
                                          transpose_swap_uint64_t};


typedef void (*line_fn)(char *, const char *, Py_ssize_t, Py_ssize_t, Py_ssize_t);
typedef void (*weave_fn)(char *, const char *, Py_ssize_t, Py_ssize_t);

static int log2_small(Py_ssize_t x)
{
    switch (x) {
    case 1: return 0;
    case 2: return 1;
    case 4: return 2;
    case 8: return 3;
    default: return -1;
    }
}

static weave_fn weave_table[4][3] = {
    {weave_uint8_t_2, weave_uint8_t_4, weave_uint8_t_8},
    {weave_uint16_t_2, weave_uint16_t_4, weave_uint16_t_8},
    {weave_uint32_t_2, weave_uint32_t_4, weave_uint32_t_8},
    {weave_uint64_t_2, weave_uint64_t_4, weave_uint64_t_8},
};
static weave_fn unweave_table[4][3] = {
    {unweave_uint8_t_2, unweave_uint8_t_4, unweave_uint8_t_8},
    {unweave_uint16_t_2, unweave_uint16_t_4, unweave_uint16_t_8},
    {unweave_uint32_t_2, unweave_uint32_t_4, unweave_uint32_t_8},
    {unweave_uint64_t_2, unweave_uint64_t_4, unweave_uint64_t_8},
};
#if HAVE_STREAM
/* 4 x 4 blocks of 4-byte items transposed in SSE2 registers: the weaves of 4-byte items (a
 * (4,1) sub-tile of bytes or a (2,1) one of 2-byte items, moved as 4-byte items, against a
 * transposed tiling) in groups of 4 or 8 rows, 4 positions per round (the scalar loops
 * measured 5.7x a copy: pred[65536,32]{0,1:T(4,128)(4,1)}); transpose4_u32 is in _sse2.h. */
#define WEAVE_U32_SSE2(M)                                                                    \
    static void weave_u32_##M##_sse2(char *d, const char *s, Py_ssize_t n, Py_ssize_t sb)    \
    {                                                                                        \
        Py_ssize_t k = 0;                                                                    \
        for (; k + 4 <= n; k += 4)                                                           \
            for (int h = 0; h < M; h += 4) { /* rows h..h+3 of positions k..k+3 */           \
                __m128i r[4];                                                                \
                for (int b = 0; b < 4; b++)                                                  \
                    r[b] = _mm_loadu_si128((const __m128i *)(s + (h + b) * sb + 4 * k));     \
                transpose4_u32(r);                                                           \
                for (int i = 0; i < 4; i++)                                                  \
                    _mm_storeu_si128((__m128i *)(d + ((k + i) * M + h) * 4), r[i]);           \
            }                                                                                \
        if (k < n) weave_uint32_t_##M(d + k * M * 4, s + 4 * k, n - k, sb);                  \
    }                                                                                        \
    static void unweave_u32_##M##_sse2(char *d, const char *s, Py_ssize_t n, Py_ssize_t db)  \
    {                                                                                        \
        Py_ssize_t k = 0;                                                                    \
        for (; k + 4 <= n; k += 4)                                                           \
            for (int h = 0; h < M; h += 4) {                                                 \
                __m128i r[4];                                                                \
                for (int i = 0; i < 4; i++)                                                  \
                    r[i] = _mm_loadu_si128((const __m128i *)(s + ((k + i) * M + h) * 4));    \
                transpose4_u32(r);                                                           \
                for (int b = 0; b < 4; b++)                                                  \
                    _mm_storeu_si128((__m128i *)(d + (h + b) * db + 4 * k), r[b]);           \
            }                                                                                \
        if (k < n) unweave_uint32_t_##M(d + 4 * k, s + k * M * 4, n - k, db);                \
    }
WEAVE_U32_SSE2(4)
WEAVE_U32_SSE2(8)
#endif

#if HAVE_AVX2_DISPATCH
/* The next round's first pair k of a loop of 16 pairs a round over n: k + 16 while a whole
 * round is left, else the last 16 pairs (n - 16: the round overlaps the one before it, writing
 * the same bytes again) once, where n >= 16, there is a rest and the stores are not streamed
 * (a cached store into a line just streamed measured slow: f16[3519,1016]{1,0:T(2,128)(2,1)}
 * to_physical). Rows of 207 pairs had 15 go one by one (f16[4445,207]{1,0:T(2,128)(2,1)}, one
 * thread, in turn with a copy: to_physical 1.63 -> 1.57x, from 1.53 -> 1.40). */
static inline Py_ssize_t pairs16_next(Py_ssize_t k, Py_ssize_t n, int nt)
{
    return k + 32 <= n || k + 16 >= n || n < 16 || nt ? k + 16 : n - 16;
}

/* weave_uint16_t_2 in 32-byte vectors: 16 items of each row per round (the compiler's SSE2
 * loop for 2-byte pairs measured compute-bound, below the copy's speed in L3); nt: non-temporal
 * stores (the caller put d on a line) */
__attribute__((target("avx2"))) static inline __attribute__((always_inline)) void
weave_u16_2_body(char *d, const char *s, Py_ssize_t n, Py_ssize_t sb, int nt)
{
    Py_ssize_t k = 0;
    for (; k + 16 <= n; k = pairs16_next(k, n, nt)) { /* quads [0 2 1 3] of each row: in-lane unpacks then run on */
        __m256i r0 = _mm256_permute4x64_epi64(_mm256_loadu_si256((const __m256i *)(s + 2 * k)), 0xD8);
        __m256i r1 = _mm256_permute4x64_epi64(_mm256_loadu_si256((const __m256i *)(s + sb + 2 * k)), 0xD8);
        __m256i lo = _mm256_unpacklo_epi16(r0, r1), hi = _mm256_unpackhi_epi16(r0, r1);
        if (nt) {
            _mm256_stream_si256((__m256i *)(d + 4 * k), lo);
            _mm256_stream_si256((__m256i *)(d + 4 * k + 32), hi);
        } else {
            _mm256_storeu_si256((__m256i *)(d + 4 * k), lo);
            _mm256_storeu_si256((__m256i *)(d + 4 * k + 32), hi);
        }
    }
    if (k < n) weave_uint16_t_2(d + 4 * k, s + 2 * k, n - k, sb);
}

/* weave_uint16_t_2 in 32-byte vectors, stored through the cache */
__attribute__((target("avx2"))) static void weave_u16_2_avx2(char *d, const char *s, Py_ssize_t n,
                                                             Py_ssize_t sb)
{
    weave_u16_2_body(d, s, n, sb, 0);
}

/* weave_u16_2_avx2 with non-temporal stores from d's first line on (the pairs before it, and
 * those past the last 16, through the scalar loop; d off a 4-byte boundary: as it is). For
 * weaves into a span no cache keeps (WEAVE_STREAM_SPAN): stored through the cache, each line is
 * read first (a (2,1) sub-tile's rows into their tile rows, f16[3519,1016]{1,0:T(2,128)(2,1)}
 * to_physical, 7 MiB, one thread: 1.66 -> 1.3x a copy). */
#define WEAVE_STREAM_SPAN (6 << 20)
__attribute__((target("avx2"))) static void weave_u16_2_stream(char *d, const char *s, Py_ssize_t n,
                                                               Py_ssize_t sb)
{
    Py_ssize_t h = (Py_ssize_t)((-(uintptr_t)d) & 63);
    if (h % 4 || h / 4 > n) {
        weave_u16_2_avx2(d, s, n, sb);
        return;
    }
    h /= 4;
    if (h) weave_uint16_t_2(d, s, h, sb);
    weave_u16_2_body(d + 4 * h, s + 2 * h, n - h, sb, 1);
}

/* unweave_uint16_t_2 in 32-byte vectors: 16 pairs per round; nt: non-temporal 16-byte stores
 * (the caller checked that d and db are multiples of 16) */
__attribute__((target("avx2"))) static inline __attribute__((always_inline)) void
unweave_u16_2_body(char *d, const char *s, Py_ssize_t n, Py_ssize_t db, int nt)
{
    const __m256i split = _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15,
                                           0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15);
    Py_ssize_t k = 0;
    for (; k + 16 <= n; k = pairs16_next(k, n, nt)) { /* per lane [evens odds], quads to [evens | odds] */
        __m256i a = _mm256_loadu_si256((const __m256i *)(s + 4 * k));
        __m256i b = _mm256_loadu_si256((const __m256i *)(s + 4 * k + 32));
        a = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(a, split), 0xD8);
        b = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(b, split), 0xD8);
        __m256i lo = _mm256_permute2x128_si256(a, b, 0x20), hi = _mm256_permute2x128_si256(a, b, 0x31);
        char *x = d + 2 * k, *y = d + db + 2 * k;
        if (nt) {
            _mm_stream_si128((__m128i *)x, _mm256_castsi256_si128(lo));
            _mm_stream_si128((__m128i *)(x + 16), _mm256_extracti128_si256(lo, 1));
            _mm_stream_si128((__m128i *)y, _mm256_castsi256_si128(hi));
            _mm_stream_si128((__m128i *)(y + 16), _mm256_extracti128_si256(hi, 1));
        } else {
            _mm256_storeu_si256((__m256i *)x, lo);
            _mm256_storeu_si256((__m256i *)y, hi);
        }
    }
    if (k < n) unweave_uint16_t_2(d + 2 * k, s + 4 * k, n - k, db);
}

__attribute__((target("avx2"))) static void unweave_u16_2_avx2(char *d, const char *s, Py_ssize_t n,
                                                               Py_ssize_t db)
{
    unweave_u16_2_body(d, s, n, db, 0);
}

/* The same streamed: the items before d's first 16-byte boundary through the scalar loop, the
 * rest with non-temporal stores (db a multiple of 16, d on an item boundary: the caller's). */
__attribute__((target("avx2"))) static void unweave_u16_2_stream(char *d, const char *s, Py_ssize_t n,
                                                                 Py_ssize_t db)
{
    Py_ssize_t h = (Py_ssize_t)((-(uintptr_t)d) & 15) / 2;
    if (h > n) h = n;
    if (h) unweave_uint16_t_2(d, s, h, db);
    unweave_u16_2_body(d + 2 * h, s + 4 * h, n - h, db, 1);
}

/* Two rows of 32 bytes as in-order 2-byte pairs: lo = pairs 0..15, hi = pairs 16..31 (quads
 * [0 2 1 3] first, so that the in-lane unpacks run on across the lanes) */
__attribute__((target("avx2"))) static inline void pair_u8(__m256i r0, __m256i r1, __m256i *lo,
                                                           __m256i *hi)
{
    r0 = _mm256_permute4x64_epi64(r0, 0xD8);
    r1 = _mm256_permute4x64_epi64(r1, 0xD8);
    *lo = _mm256_unpacklo_epi8(r0, r1);
    *hi = _mm256_unpackhi_epi8(r0, r1);
}

/* weave_uint8_t_4 in 32-byte vectors (the TPU's (4,1) sub-tile of bytes: pred, s8): 32 items
 * of each row per round, paired bytewise (rows 0,1 and 2,3), then the pairs paired */
__attribute__((target("avx2"))) static void weave_u8_4_avx2(char *d, const char *s, Py_ssize_t n,
                                                            Py_ssize_t sb)
{
    Py_ssize_t k = 0;
    for (; k + 32 <= n; k += 32) {
        __m256i a[2], b[2];
        pair_u8(_mm256_loadu_si256((const __m256i *)(s + k)),
                _mm256_loadu_si256((const __m256i *)(s + sb + k)), &a[0], &a[1]);
        pair_u8(_mm256_loadu_si256((const __m256i *)(s + 2 * sb + k)),
                _mm256_loadu_si256((const __m256i *)(s + 3 * sb + k)), &b[0], &b[1]);
        for (int h = 0; h < 2; h++) { /* pairs 16h..16h+15 of both: quads, in order */
            __m256i x = _mm256_permute4x64_epi64(a[h], 0xD8), y = _mm256_permute4x64_epi64(b[h], 0xD8);
            _mm256_storeu_si256((__m256i *)(d + 4 * k + 64 * h), _mm256_unpacklo_epi16(x, y));
            _mm256_storeu_si256((__m256i *)(d + 4 * k + 64 * h + 32), _mm256_unpackhi_epi16(x, y));
        }
    }
    if (k < n) weave_uint8_t_4(d + 4 * k, s + k, n - k, sb);
}

/* unweave_uint8_t_4 in 32-byte vectors: 32 quads per round. Each vector's quads are sorted in
 * lane into one dword per row, the dwords gathered into one qword per row, and the four
 * vectors' qwords transposed into the rows. */
__attribute__((target("avx2"))) static void unweave_u8_4_avx2(char *d, const char *s, Py_ssize_t n,
                                                              Py_ssize_t db)
{
    const __m256i split = _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15,
                                           0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    const __m256i gather = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    Py_ssize_t k = 0;
    for (; k + 32 <= n; k += 32) {
        __m256i w[4];
        for (int v = 0; v < 4; v++) /* qword j: row j's 8 items of this vector */
            w[v] = _mm256_permutevar8x32_epi32(
                _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(s + 4 * k + 32 * v)), split),
                gather);
        __m256i lo01 = _mm256_unpacklo_epi64(w[0], w[1]), hi01 = _mm256_unpackhi_epi64(w[0], w[1]);
        __m256i lo23 = _mm256_unpacklo_epi64(w[2], w[3]), hi23 = _mm256_unpackhi_epi64(w[2], w[3]);
        _mm256_storeu_si256((__m256i *)(d + k), _mm256_permute2x128_si256(lo01, lo23, 0x20));
        _mm256_storeu_si256((__m256i *)(d + db + k), _mm256_permute2x128_si256(hi01, hi23, 0x20));
        _mm256_storeu_si256((__m256i *)(d + 2 * db + k), _mm256_permute2x128_si256(lo01, lo23, 0x31));
        _mm256_storeu_si256((__m256i *)(d + 3 * db + k), _mm256_permute2x128_si256(hi01, hi23, 0x31));
    }
    if (k < n) unweave_uint8_t_4(d + k, s + 4 * k, n - k, db);
}

/* weave_u8_3 in 32-byte vectors: weave_u8_4_avx2 with a fourth row of zeros */
__attribute__((target("avx2"))) static void weave_u8_3_avx2(char *d, const char *s, Py_ssize_t n,
                                                            Py_ssize_t sb)
{
    const __m256i z = _mm256_setzero_si256();
    Py_ssize_t k = 0;
    for (; k + 32 <= n; k += 32) {
        __m256i a[2], b[2];
        pair_u8(_mm256_loadu_si256((const __m256i *)(s + k)),
                _mm256_loadu_si256((const __m256i *)(s + sb + k)), &a[0], &a[1]);
        pair_u8(_mm256_loadu_si256((const __m256i *)(s + 2 * sb + k)), z, &b[0], &b[1]);
        for (int h = 0; h < 2; h++) {
            __m256i x = _mm256_permute4x64_epi64(a[h], 0xD8), y = _mm256_permute4x64_epi64(b[h], 0xD8);
            _mm256_storeu_si256((__m256i *)(d + 4 * k + 64 * h), _mm256_unpacklo_epi16(x, y));
            _mm256_storeu_si256((__m256i *)(d + 4 * k + 64 * h + 32), _mm256_unpackhi_epi16(x, y));
        }
    }
    if (k < n) weave_u8_3(d + 4 * k, s + k, n - k, sb);
}

/* unweave_u8_3 in 32-byte vectors: unweave_u8_4_avx2 without the fourth row */
__attribute__((target("avx2"))) static void unweave_u8_3_avx2(char *d, const char *s, Py_ssize_t n,
                                                              Py_ssize_t db)
{
    const __m256i split = _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15,
                                           0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    const __m256i gather = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    Py_ssize_t k = 0;
    for (; k + 32 <= n; k += 32) {
        __m256i w[4];
        for (int v = 0; v < 4; v++)
            w[v] = _mm256_permutevar8x32_epi32(
                _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(s + 4 * k + 32 * v)), split),
                gather);
        __m256i lo01 = _mm256_unpacklo_epi64(w[0], w[1]), hi01 = _mm256_unpackhi_epi64(w[0], w[1]);
        __m256i lo23 = _mm256_unpacklo_epi64(w[2], w[3]), hi23 = _mm256_unpackhi_epi64(w[2], w[3]);
        _mm256_storeu_si256((__m256i *)(d + k), _mm256_permute2x128_si256(lo01, lo23, 0x20));
        _mm256_storeu_si256((__m256i *)(d + db + k), _mm256_permute2x128_si256(hi01, hi23, 0x20));
        _mm256_storeu_si256((__m256i *)(d + 2 * db + k), _mm256_permute2x128_si256(lo01, lo23, 0x31));
    }
    if (k < n) unweave_u8_3(d + k, s + 4 * k, n - k, db);
}

/* merge3 in 32-byte vectors: eight groups a round, read, blended and written back whole (each
 * fourth byte rewritten with the value it holds), while the 32 bytes end by dhi (the last
 * byte the task may touch, plus one); the rest group by group */
__attribute__((target("avx2"))) static void merge3_avx2(char *d, const char *s, Py_ssize_t n, const char *dhi)
{
    const __m256i keep = _mm256_set1_epi32((int)0xFF000000u);
    Py_ssize_t k = 0;
    for (; k + 8 <= n && d + 4 * k + 32 <= dhi; k += 8) {
        __m256i old = _mm256_loadu_si256((const __m256i *)(d + 4 * k));
        __m256i new = _mm256_loadu_si256((const __m256i *)(s + 4 * k));
        _mm256_storeu_si256((__m256i *)(d + 4 * k), _mm256_blendv_epi8(new, old, keep));
    }
    if (k < n) merge3(d + 4 * k, s + 4 * k, n - k, dhi);
}
#endif

typedef void (*merge_fn)(char *, const char *, Py_ssize_t, const char *);
static weave_fn weave3 = weave_u8_3, unweave3 = unweave_u8_3; /* the widest this CPU runs */
static merge_fn merge3_best = merge3;

/* The AVX2 weaves where the CPU has them (from choose_tilers). */
static void choose_weaves(void)
{
#if HAVE_STREAM
    weave_table[2][1] = weave_u32_4_sse2;
    weave_table[2][2] = weave_u32_8_sse2;
    unweave_table[2][1] = unweave_u32_4_sse2;
    unweave_table[2][2] = unweave_u32_8_sse2;
#endif
#if HAVE_AVX2_DISPATCH
    if (__builtin_cpu_supports("avx2")) {
        weave_table[1][0] = weave_u16_2_avx2;
        unweave_table[1][0] = unweave_u16_2_avx2;
        weave_table[0][1] = weave_u8_4_avx2;
        unweave_table[0][1] = unweave_u8_4_avx2;
        weave3 = weave_u8_3_avx2;
        unweave3 = unweave_u8_3_avx2;
        merge3_best = merge3_avx2;
    }
#endif
}

static line_fn strided_table[4] = {strided_uint8_t, strided_uint16_t, strided_uint32_t,
                                   strided_uint64_t};
/* Runs of any length; those of up to 16 bytes as fixed-size moves (a ragged sub-tile's short
 * runs: a call of the library's memcpy each measured 3x slower). */
static void run_any(char *d, const char *s, Py_ssize_t n, Py_ssize_t ds, Py_ssize_t ss,
                    Py_ssize_t bytes)
{
#define RUN_ANY(B)                                                                           \
    case B:                                                                                  \
        for (Py_ssize_t i = 0; i < n; i++) memcpy(d + i * ds, s + i * ss, B);                \
        return
    switch (bytes) {
    RUN_ANY(1); RUN_ANY(2); RUN_ANY(3); RUN_ANY(4); RUN_ANY(5); RUN_ANY(6); RUN_ANY(7); RUN_ANY(8);
    RUN_ANY(9); RUN_ANY(10); RUN_ANY(11); RUN_ANY(12); RUN_ANY(13); RUN_ANY(14); RUN_ANY(15); RUN_ANY(16);
    default:
        for (Py_ssize_t i = 0; i < n; i++) memcpy(d + i * ds, s + i * ss, (size_t)bytes);
    }
#undef RUN_ANY
}

#endif
