/* _kernel_pairs_wide.h: the (2,1) pair transposes of _kernel_words_pairs.h in 8 x 8 tiles of
 * 4-byte units (AVX2), for runs of a multiple of 8 items: bf16[1024,16,128]{0,1,2:T(4,128)(2,1)}
 * from_physical reads 128-item runs of dim 2 (K) of each tile row's pairs (J: dim 1's low bit,
 * A: dim 0) out of unit rows 32 KiB apart. Unit row k's 8 units [j0 j1] of a..a+7 are loaded
 * as one 32-byte row, 8 of them (k..k+7) transposed as 4-byte items, and each result (row a's
 * units of k..k+7) split into its j0 and j1 halves, 16 bytes each, in place in the row's two
 * runs; to the units the same backwards. The 4 x 4 SSE2 tiles moved 16 bytes a unit row a
 * tile and 8 a run.
 * Self-contained (include guard). */
#ifndef TENSORLAYOUT_KERNEL_PAIRS_WIDE_H
#define TENSORLAYOUT_KERNEL_PAIRS_WIDE_H
#include "_kernel_regs.h"

static int wide_avx2 = -1; /* the CPU runs AVX2 (-1: not asked yet) */

/* Whether the 8 x 8 tiles run here (asked once; every thread gets the same answer). */
static inline int wide_ok(void)
{
#if HAVE_AVX2_DISPATCH
    if (wide_avx2 < 0) wide_avx2 = __builtin_cpu_supports("avx2") != 0;
    return wide_avx2;
#else
    return 0;
#endif
}

#if HAVE_AVX2_DISPATCH
/* Unit rows k..k+7 (u + k*uk, 8 units each) to rows a..a+7 (r + a*ra: j0's 8 items, j1's at
 * r + a*ra + half). */
__attribute__((target("avx2"))) static inline void wide_tile_from(char *r, Py_ssize_t ra, Py_ssize_t half,
                                                                  const char *u, Py_ssize_t uk)
{
    const __m256i split = _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15, 0, 1, 4, 5, 8,
                                           9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15);
    __m256 v[8], o[8];
    for (int k = 0; k < 8; k++) v[k] = _mm256_loadu_ps((const float *)(u + k * uk));
    transpose_u32x8(v, o);
    for (int a = 0; a < 8; a++) { /* [j0 k0..3 j1 k0..3 | j0 k4..7 j1 k4..7] -> [j0 k0..7 | j1 k0..7] */
        __m256i x = _mm256_shuffle_epi8(_mm256_castps_si256(o[a]), split);
        x = _mm256_permute4x64_epi64(x, _MM_SHUFFLE(3, 1, 2, 0));
        _mm_storeu_si128((__m128i *)(r + a * ra), _mm256_castsi256_si128(x));
        _mm_storeu_si128((__m128i *)(r + a * ra + half), _mm256_extracti128_si256(x, 1));
    }
}

/* The same backwards: rows a..a+7 to unit rows k..k+7. */
__attribute__((target("avx2"))) static inline void wide_tile_to(char *u, Py_ssize_t uk, const char *r,
                                                                Py_ssize_t ra, Py_ssize_t half)
{
    __m256 v[8], o[8];
    for (int a = 0; a < 8; a++) {
        __m128i j0 = _mm_loadu_si128((const __m128i *)(r + a * ra));
        __m128i j1 = _mm_loadu_si128((const __m128i *)(r + a * ra + half));
        __m256i w = _mm256_set_m128i(_mm_unpackhi_epi16(j0, j1), _mm_unpacklo_epi16(j0, j1));
        v[a] = _mm256_castsi256_ps(w);
    }
    transpose_u32x8(v, o);
    for (int k = 0; k < 8; k++) _mm256_storeu_ps((float *)(u + k * uk), o[k]);
}

/* Rows [0, ea) (ea a multiple of 8) x all nk (a multiple of 8) items: to the units (to) from rows
 * ra apart at s into unit rows uk apart at d, or back. K outside, so that 8 unit rows are read
 * (written) on along A at a time; from the units, where nk is a multiple of WIDE_FROM_K, that
 * many k at a time, so that each tile row's runs get a line (32 items) at once: rows often a
 * multiple of 4 KiB apart share L1 sets, and got 16 bytes a visit, each line left L1 between
 * visits (bf16[1024,16,128]{0,1,2:T(4,128)(2,1)} from_physical, rows 4 KiB apart, unit rows 32
 * KiB: one thread, alternating builds, 2.73 -> 2.05x a copy; 16 k at a time for 16-item runs
 * measured no faster, and to the units the same order slower, 2.05 -> 2.5: the unit rows, 32 KiB
 * apart, then got 32 bytes a visit). */
#define WIDE_FROM_K 32
__attribute__((target("avx2"))) static void wide_rows(char *d, const char *s, Py_ssize_t ea, Py_ssize_t nk,
                                                     Py_ssize_t ra, Py_ssize_t uk, int to)
{
    const Py_ssize_t half = 2 * nk;
    if (!to && nk % WIDE_FROM_K == 0) {
        for (Py_ssize_t q0 = 0; q0 < nk; q0 += WIDE_FROM_K)
            for (Py_ssize_t a = 0; a < ea; a += 8)
                for (Py_ssize_t q = q0; q < q0 + WIDE_FROM_K; q += 8)
                    wide_tile_from(d + a * ra + q * 2, ra, half, s + q * uk + a * 4, uk);
        return;
    }
    for (Py_ssize_t q = 0; q < nk; q += 8)
        for (Py_ssize_t a = 0; a < ea; a += 8) {
            if (to) wide_tile_to(d + q * uk + a * 4, uk, s + a * ra + q * 2, ra, half);
            else wide_tile_from(d + a * ra + q * 2, ra, half, s + q * uk + a * 4, uk);
        }
}

#endif

#endif
