/* _kernel_bytes_weave.h: the weaves of 8 rows of bytes in AVX2 registers (the 8-row tiles of
 * bytes against a transposed tiling, s8[8192,8192]{0,1:T(8,128)}: transpose_woven weaves the
 * 8 rows into 8-byte items, or unweaves them; the scalar loops moved a byte at a time, 30% of
 * that to_physical). 32 groups of 8 bytes a round, in each 128-bit lane 16 of them:
 *
 *   unweave  d[b*db + k] = s[k*8 + b]: each lane's pairs of groups (2j, 2j + 1) shuffled into
 *            8 two-byte words (byte b of both), then an 8 x 8 transpose of those words, whose
 *            row b is byte b of the lane's 16 groups in order;
 *   weave    d[k*8 + b] = s[b*sb + k]: the same backwards (the word transpose is its own
 *            inverse), then each pair's words shuffled back into two groups.
 *
 * Past the whole rounds, where n >= 32, one more round ends at n, overlapping the round before
 * (it writes the same values again); below 32 groups the scalar loops. The weaves of 3 and 4
 * rows of bytes (_kernel_loops.h) get the same last round here (*_over): their scalar loops
 * over the last n % 32 groups were 40% of a ragged tile column's weave, 125 = 3 x 32 + 29
 * groups (pred[37,3,31,5,893]{4,0,3,1,2:T(8,128)(4,1)} to_physical's task of columns 768-892,
 * one thread, raw task 0.73-0.77x a copy of the whole array against 0.43-0.44 for 96 groups).
 * Registered into the weave tables at import where the CPU has AVX2 (choose_byte_weaves).
 * Self-contained (include guard). */
#ifndef TENSORLAYOUT_KERNEL_BYTES_WEAVE_H
#define TENSORLAYOUT_KERNEL_BYTES_WEAVE_H
#include "_kernel_loops.h"

#if HAVE_AVX2_DISPATCH
/* x[j]: 8 words in each lane; x[j] word b <- word j of x[b] (in each lane). */
__attribute__((target("avx2"))) static inline void transpose_words8(__m256i *x)
{
    __m256i t[8], u[8];
    for (int i = 0; i < 4; i++) {
        t[2 * i] = _mm256_unpacklo_epi16(x[2 * i], x[2 * i + 1]);
        t[2 * i + 1] = _mm256_unpackhi_epi16(x[2 * i], x[2 * i + 1]);
    }
    for (int h = 0; h < 2; h++) { /* rows 0-3 (t 0..3), rows 4-7 (t 4..7) */
        u[4 * h] = _mm256_unpacklo_epi32(t[4 * h], t[4 * h + 2]);
        u[4 * h + 1] = _mm256_unpackhi_epi32(t[4 * h], t[4 * h + 2]);
        u[4 * h + 2] = _mm256_unpacklo_epi32(t[4 * h + 1], t[4 * h + 3]);
        u[4 * h + 3] = _mm256_unpackhi_epi32(t[4 * h + 1], t[4 * h + 3]);
    }
    for (int m = 0; m < 4; m++) {
        x[2 * m] = _mm256_unpacklo_epi64(u[m], u[4 + m]);
        x[2 * m + 1] = _mm256_unpackhi_epi64(u[m], u[4 + m]);
    }
}

__attribute__((target("avx2"))) static void unweave_u8_8_avx2(char *d, const char *s, Py_ssize_t n, Py_ssize_t db)
{
    const __m256i pairs = _mm256_setr_epi8(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15, 0, 8, 1, 9, 2, 10,
                                           3, 11, 4, 12, 5, 13, 6, 14, 7, 15);
    Py_ssize_t k = 0;
    for (; k + 32 <= n; k += 32) {
        __m256i x[8];
        for (int j = 0; j < 8; j++) { /* lane 0: groups k + 2j, k + 2j + 1; lane 1: 16 groups on */
            const char *g = s + (k + 2 * j) * 8;
            x[j] = _mm256_shuffle_epi8(_mm256_loadu2_m128i((const __m128i *)(g + 128), (const __m128i *)g), pairs);
        }
        transpose_words8(x);
        for (int b = 0; b < 8; b++) _mm256_storeu_si256((__m256i *)(d + b * db + k), x[b]);
    }
    if (k < n && n >= 32) /* one more round ending at n */
        unweave_u8_8_avx2(d + n - 32, s + (n - 32) * 8, 32, db);
    else if (k < n)
        unweave_uint8_t_8(d + k, s + k * 8, n - k, db);
}

__attribute__((target("avx2"))) static void weave_u8_8_avx2(char *d, const char *s, Py_ssize_t n, Py_ssize_t sb)
{
    const __m256i groups = _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15, 0, 2, 4, 6, 8, 10,
                                            12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
    Py_ssize_t k = 0;
    for (; k + 32 <= n; k += 32) {
        __m256i x[8];
        for (int b = 0; b < 8; b++) x[b] = _mm256_loadu_si256((const __m256i *)(s + b * sb + k));
        transpose_words8(x); /* x[j]: byte b of groups 2j, 2j + 1 as word b (16 groups on in lane 1) */
        for (int j = 0; j < 8; j++) {
            const __m256i y = _mm256_shuffle_epi8(x[j], groups);
            char *g = d + (k + 2 * j) * 8;
            _mm256_storeu2_m128i((__m128i *)(g + 128), (__m128i *)g, y);
        }
    }
    if (k < n && n >= 32) /* one more round ending at n */
        weave_u8_8_avx2(d + (n - 32) * 8, s + n - 32, 32, sb);
    else if (k < n)
        weave_uint8_t_8(d + k * 8, s + k, n - k, sb);
}

/* The weaves of 4 and 3 rows of bytes (_kernel_loops.h) with their last n % 32 groups in one
 * more round ending at n, where n >= 32 (see above). The 3-row unweave reads each group's
 * fourth byte, as its whole rounds do: its callers' groups are followed by more of the task's
 * (unweave_part leaves the last group out) or lie in a stage. */
#define OVER(name, fn, dm, sm)                                                                   \
    __attribute__((target("avx2"), flatten)) static void name(char *d, const char *s, Py_ssize_t n, Py_ssize_t st) \
    {                                                                                            \
        const Py_ssize_t whole = n - n % 32;                                                     \
        if (n < 32 || whole == n) {                                                              \
            fn(d, s, n, st);                                                                     \
            return;                                                                              \
        }                                                                                        \
        fn(d, s, whole, st);                                                                     \
        fn(d + (dm) * (n - 32), s + (sm) * (n - 32), 32, st);                                    \
    }
OVER(weave_u8_4_over, weave_u8_4_avx2, 4, 1)
OVER(unweave_u8_4_over, unweave_u8_4_avx2, 1, 4)
OVER(weave_u8_3_over, weave_u8_3_avx2, 4, 1)
OVER(unweave_u8_3_over, unweave_u8_3_avx2, 1, 4)
#undef OVER
#endif

/* The AVX2 weaves of 8 rows of bytes, and those of 3 and 4 with their last round, into the
 * weave tables where the CPU has them (after choose_weaves). */
static void choose_byte_weaves(void)
{
#if HAVE_AVX2_DISPATCH
    if (__builtin_cpu_supports("avx2")) {
        weave_table[0][2] = weave_u8_8_avx2;
        unweave_table[0][2] = unweave_u8_8_avx2;
        weave_table[0][1] = weave_u8_4_over;
        unweave_table[0][1] = unweave_u8_4_over;
        weave3 = weave_u8_3_over;
        unweave3 = unweave_u8_3_over;
    }
#endif
}

#endif
