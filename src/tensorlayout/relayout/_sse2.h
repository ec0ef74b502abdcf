/* _sse2.h: the SSE2 register moves both relayout kernels use (_kernel.c's weaves and _pack.c's
 * nibble blocks). Self-contained (include guard); empty where the CPU has no SSE2. */
#ifndef TENSORLAYOUT_SSE2_H
#define TENSORLAYOUT_SSE2_H
#include <Python.h> /* first, as in every part: it sets the feature macros the system headers read */
#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>

/* The 4 x 4 transpose of 32-bit words: word j of r[i] -> word i of r[j]. */
static inline void transpose4_u32(__m128i *r)
{
    __m128i t0 = _mm_unpacklo_epi32(r[0], r[1]), t1 = _mm_unpacklo_epi32(r[2], r[3]);
    __m128i t2 = _mm_unpackhi_epi32(r[0], r[1]), t3 = _mm_unpackhi_epi32(r[2], r[3]);
    r[0] = _mm_unpacklo_epi64(t0, t1);
    r[1] = _mm_unpackhi_epi64(t0, t1);
    r[2] = _mm_unpacklo_epi64(t2, t3);
    r[3] = _mm_unpackhi_epi64(t2, t3);
}

#endif
#endif /* TENSORLAYOUT_SSE2_H */
