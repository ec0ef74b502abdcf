/* _kernel_bytes_spread.h: one row of bytes into (out of) groups of M = 2 or 4 bytes, the
 * other M - 1 bytes of each group not the row's: a ragged (4,1) sub-tile's last row (37 rows
 * of a (8,128)(4,1) tiling: 36 + 1), or a (2,1) pair's. The strided loop moved them a byte at a
 * time: pred[37,3,31,5,893]{4,0,3,1,2:T(8,128)(4,1)}'s two one-row tasks, 2.7% of its bytes,
 * took 0.36x (to_physical) and 0.53x (from_physical) a copy of the whole array, one thread.
 *
 *   gather   d[k] = s[k*M]: 32 groups a round, each group's other bytes masked off, the
 *            dwords (words) packed to bytes (their lanes put back in order), one store;
 *            while the round's groups lie whole in the task's source bytes (plan_t.shi),
 *            then one round ending where they still do, the rest byte by byte;
 *   scatter  d[k*M] = s[k]: the groups read, their first bytes replaced, written back whole
 *            (every other byte rewritten with the value it holds): only where the task's
 *            gaps are its own (plan_t.gaps_ours: one thread, the padding written first), and
 *            while the vectors end by plan_t.dhi; else, and past them, byte by byte.
 *
 *   spread_bytes   runs one strided row of 1-byte items this way where it applies (1), else 0;
 *                  a row of wider items of bytes, dense on one side and in groups on the other
 *                  (a 2-row sub-tile's pairs of bytes, u8[33,300,2]{1,2,0:T(4,128)(4,1)}), through
 *                  group_runs (_kernel_bytes_runs.h).
 *
 * AVX2 only (chosen at import with the quads: quads_avx2). Self-contained (include guard). */
#ifndef TENSORLAYOUT_KERNEL_BYTES_SPREAD_H
#define TENSORLAYOUT_KERNEL_BYTES_SPREAD_H
#include "_kernel_bytes.h"

#if HAVE_AVX2_DISPATCH
/* 32 groups of M bytes from g (128 or 64 bytes) to their first bytes, in order. */
__attribute__((target("avx2"))) static inline __m256i firsts32(const char *g, int M)
{
    if (M == 4) {
        const __m256i low = _mm256_set1_epi32(0xFF);
        __m256i v[4];
        for (int i = 0; i < 4; i++) v[i] = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(g + 32 * i)), low);
        const __m256i w = _mm256_packus_epi16(_mm256_packus_epi32(v[0], v[1]), _mm256_packus_epi32(v[2], v[3]));
        /* per lane: dwords of v0, v1, v2, v3 (lane 0 their first 4 groups, lane 1 the next 4) */
        return _mm256_permutevar8x32_epi32(w, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    }
    const __m256i low = _mm256_set1_epi16(0xFF);
    const __m256i a = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)g), low);
    const __m256i b = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(g + 32)), low);
    return _mm256_permute4x64_epi64(_mm256_packus_epi16(a, b), 0xD8);
}

/* d[k] = s[k*M], k < n, the groups read whole only inside [s, shi). */
__attribute__((target("avx2"))) static void gather_firsts(char *d, const char *s, Py_ssize_t n, int M,
                                                          const char *shi)
{
    const Py_ssize_t fit = (shi - s) / M; /* groups lying whole in the source bytes */
    const Py_ssize_t whole = fit < n ? fit : n;
    Py_ssize_t k = 0;
    for (; k + 32 <= whole; k += 32) _mm256_storeu_si256((__m256i *)(d + k), firsts32(s + k * M, M));
    if (k < n && whole >= 32) { /* one more round ending at the last whole group */
        k = whole - 32;
        _mm256_storeu_si256((__m256i *)(d + k), firsts32(s + k * M, M));
        k = whole;
    }
    for (; k < n; k++) d[k] = s[k * M];
}

/* d[k*M] = s[k], k < n: 32 bytes of groups a round read, merged, written back while they end
 * by dhi; the rest byte by byte. */
__attribute__((target("avx2"))) static void scatter_firsts(char *d, const char *s, Py_ssize_t n, int M,
                                                           const char *dhi)
{
    const __m256i keep = M == 4 ? _mm256_set1_epi32((int)0xFFFFFF00u) : _mm256_set1_epi16((short)0xFF00);
    const Py_ssize_t per = 32 / M; /* groups a vector */
    Py_ssize_t k = 0;
    for (; k + per <= n && d + k * M + 32 <= dhi; k += per) {
        const __m256i x = M == 4 ? _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(s + k)))
                                 : _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(s + k)));
        char *o = d + k * M;
        const __m256i old = _mm256_loadu_si256((const __m256i *)o);
        _mm256_storeu_si256((__m256i *)o, _mm256_blendv_epi8(x, old, keep));
    }
    for (; k < n; k++) d[k * M] = s[k];
}
#endif

static int spread_bytes(const plan_t *p, char *d, const char *s, Py_ssize_t n, Py_ssize_t ds, Py_ssize_t ss)
{
#if HAVE_AVX2_DISPATCH
    if (p->item > 1) return group_runs(p, d, s, n, ds, ss, p->item); /* (items of 2 bytes of a 2-row sub-tile) */
    if (!quads_avx2 || p->item != 1 || p->swap || n < 32) return 0;
    if (ds == 1 && (ss == 2 || ss == 4)) {
        gather_firsts(d, s, n, (int)ss, p->shi);
        return 1;
    }
    if (ss == 1 && (ds == 2 || ds == 4) && p->gaps_ours) {
        scatter_firsts(d, s, n, (int)ds, p->dhi);
        return 1;
    }
#else
    (void)p, (void)d, (void)s, (void)n, (void)ds, (void)ss;
#endif
    return 0;
}

#endif
