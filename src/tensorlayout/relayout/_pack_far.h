/* _pack_far.h: AVX-512 (F, BW, VL, VBMI) forms of _pack.c's far E(4) columns: a transposing
 * layout's (8,1) sub-tiles whose 8 codes (rows ls logical bytes apart) make one 4-byte column
 * word, the words of a row of lines adjacent in the buffer (the tile's columns), and the logically
 * contiguous axis a column P >= 64 bytes apart (s4[139,353,137]{1,0,2:T(8,128)(8,1)E(4)}: the
 * minor dim 137 is the major physical one, each of its columns a plane 27 KiB on). A block of
 * 16 rows of lines x m <= 16 columns: each row of lines' 8 logical rows of the m columns read in
 * 8 masked 16-byte loads, paired into bytes (two codes each) by one ternary op, the 4 pair bytes
 * of a column put into its word by one vpermb, and the 16 x 16 words transposed in registers, so
 * that each column stores its 16 rows of lines' words (64 bytes) in one store; unpacking the same
 * backwards, the codes written in masked stores (only the block's bytes are touched on either
 * side: a block of fewer rows or columns needs no tail loop).
 *
 * Chosen at run time where the AVX-512 short words are (use_wide, _pack_wide.h: the CPU has them
 * and TENSORLAYOUT_NO_AVX512 was not set at import); else the SSE2 staged columns run.
 * Self-contained (include guard). */
#ifndef TENSORLAYOUT_PACK_FAR_H
#define TENSORLAYOUT_PACK_FAR_H
#include "_pack_wide.h"

#if HAVE_WIDE
#define FAR_ROWS16 16 /* rows of lines a block */
#define FAR_CHUNK 32 /* rows of lines a pass over the columns (16 and 64 measured slower: s4[256,1024,64]
                      * {1,0,2:T(8,128)(8,1)E(4)} to 1.71 / 1.36 / 1.31, u4[9,633,571]{1,0,2:...} from 6.0 / 5.3 / 10.2) */

/* The 16 x 16 transpose of dwords: dword i of v[r] -> dword r of v[i] (in-lane interleaves, then
 * a 4 x 4 transpose of 128-bit lanes). */
WIDE_TARGET static inline void far_transpose16(__m512i *v)
{
    __m512i t[16], u[16];
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_epi32(v[2 * i], v[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_epi32(v[2 * i], v[2 * i + 1]);
    }
    for (int g = 0; g < 4; g++) { /* u[4g + c], lane L: rows 4g.. 4g+3 of dword 4L + c */
        u[4 * g] = _mm512_unpacklo_epi64(t[4 * g], t[4 * g + 2]);
        u[4 * g + 1] = _mm512_unpackhi_epi64(t[4 * g], t[4 * g + 2]);
        u[4 * g + 2] = _mm512_unpacklo_epi64(t[4 * g + 1], t[4 * g + 3]);
        u[4 * g + 3] = _mm512_unpackhi_epi64(t[4 * g + 1], t[4 * g + 3]);
    }
    for (int c = 0; c < 4; c++) {
        __m512i a0 = _mm512_shuffle_i32x4(u[c], u[4 + c], 0x44), a1 = _mm512_shuffle_i32x4(u[c], u[4 + c], 0xEE);
        __m512i b0 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0x44);
        __m512i b1 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0xEE);
        v[c] = _mm512_shuffle_i32x4(a0, b0, 0x88);
        v[4 + c] = _mm512_shuffle_i32x4(a0, b0, 0xDD);
        v[8 + c] = _mm512_shuffle_i32x4(a1, b1, 0x88);
        v[12 + c] = _mm512_shuffle_i32x4(a1, b1, 0xDD);
    }
}

/* vpermb indices: byte 4i + t of a column word <- byte i of 128-bit lane t (pair bytes t), and
 * (inverse) byte i of lane t <- byte 4i + t. */
WIDE_TARGET static inline __m512i far_words_index(int inverse)
{
    _Alignas(64) uint8_t idx[64];
    for (int i = 0; i < 16; i++)
        for (int t = 0; t < 4; t++) {
            if (inverse) idx[16 * t + i] = (uint8_t)(4 * i + t);
            else idx[4 * i + t] = (uint8_t)(16 * t + i);
        }
    return _mm512_load_si512(idx);
}

/* One row of lines: the m columns' 8 codes (logical rows ls apart from p) -> their 16 words. */
WIDE_TARGET static inline __m512i far_pack_row(const char *p, Py_ssize_t ls, __mmask16 cols, __m512i idx)
{
    const __m512i low = _mm512_set1_epi8(0x0F);
#define FAR_LOAD(j) (cols == 0xFFFF ? _mm_loadu_si128((const __m128i *)(p + (j) * ls)) \
                                    : _mm_maskz_loadu_epi8(cols, p + (j) * ls))
    __m512i a = _mm512_castsi128_si512(FAR_LOAD(0)), b = _mm512_castsi128_si512(FAR_LOAD(1));
    a = _mm512_inserti32x4(a, FAR_LOAD(2), 1);
    b = _mm512_inserti32x4(b, FAR_LOAD(3), 1);
    a = _mm512_inserti32x4(a, FAR_LOAD(4), 2);
    b = _mm512_inserti32x4(b, FAR_LOAD(5), 2);
    a = _mm512_inserti32x4(a, FAR_LOAD(6), 3);
    b = _mm512_inserti32x4(b, FAR_LOAD(7), 3);
#undef FAR_LOAD
    __m512i x = _mm512_ternarylogic_epi32(a, _mm512_slli_epi16(b, 4), low, 0xE4); /* low ? a : b << 4 */
    return _mm512_permutexvar_epi8(idx, x);
}

/* Pack a block: k <= 16 rows of lines (logical rows rls apart, words adjacent from out) x m <= 16
 * columns (logically adjacent, P bytes apart in the buffer). */
WIDE_TARGET static void far_pack16(uint8_t *out, const char *log, Py_ssize_t P, Py_ssize_t ls, Py_ssize_t rls, int k,
                                   int m, __m512i idx)
{
    const __mmask16 cols = (__mmask16)((1u << m) - 1), rows = (__mmask16)((1u << k) - 1);
    __m512i v[16];
    for (int r = 0; r < 16; r++) v[r] = r < k ? far_pack_row(log + r * rls, ls, cols, idx) : _mm512_setzero_si512();
    far_transpose16(v);
    for (int i = 0; i < m; i++) {
        if (k == 16) _mm512_storeu_si512(out + i * P, v[i]);
        else _mm512_mask_storeu_epi32(out + i * P, rows, v[i]);
    }
}

/* One row of lines' 16 words -> the m columns' 8 codes (logical rows ls apart from p),
 * sign-extended from bit 3 where half is 8s. */
WIDE_TARGET static inline void far_unpack_row(char *p, Py_ssize_t ls, __mmask16 cols, __m512i w, __m512i inv,
                                              __m512i half)
{
    const __m512i low = _mm512_set1_epi8(0x0F);
    __m512i x = _mm512_permutexvar_epi8(inv, w); /* lane t: pair bytes t of the 16 columns */
    __m512i e = _mm512_sub_epi8(_mm512_xor_si512(_mm512_and_si512(x, low), half), half);
    __m512i o = _mm512_sub_epi8(_mm512_xor_si512(_mm512_and_si512(_mm512_srli_epi16(x, 4), low), half), half);
#define FAR_STORE(j, x) (cols == 0xFFFF ? _mm_storeu_si128((__m128i *)(p + (j) * ls), x) \
                                       : _mm_mask_storeu_epi8(p + (j) * ls, cols, x))
    FAR_STORE(0, _mm512_castsi512_si128(e));
    FAR_STORE(1, _mm512_castsi512_si128(o));
    FAR_STORE(2, _mm512_extracti32x4_epi32(e, 1));
    FAR_STORE(3, _mm512_extracti32x4_epi32(o, 1));
    FAR_STORE(4, _mm512_extracti32x4_epi32(e, 2));
    FAR_STORE(5, _mm512_extracti32x4_epi32(o, 2));
    FAR_STORE(6, _mm512_extracti32x4_epi32(e, 3));
    FAR_STORE(7, _mm512_extracti32x4_epi32(o, 3));
#undef FAR_STORE
}

/* Unpack a block (far_pack16 the other way). */
WIDE_TARGET static void far_unpack16(char *log, const uint8_t *in, Py_ssize_t P, Py_ssize_t ls, Py_ssize_t rls, int k,
                                     int m, int sign, __m512i inv)
{
    const __mmask16 cols = (__mmask16)((1u << m) - 1), rows = (__mmask16)((1u << k) - 1);
    const __m512i half = _mm512_set1_epi8(sign ? 8 : 0);
    __m512i v[16];
    for (int i = 0; i < 16; i++)
        v[i] = i >= m ? _mm512_setzero_si512()
               : k == 16 ? _mm512_loadu_si512(in + i * P) : _mm512_maskz_loadu_epi32(rows, in + i * P);
    far_transpose16(v);
    for (int r = 0; r < k; r++) far_unpack_row(log + r * rls, ls, cols, v[r], inv, half);
}

/* Unpack k <= 16 rows of lines x n <= FAR_LINE columns: blocks of 16 columns (far_unpack16) into an
 * L1 stage of a logical line (FAR_LINE bytes) per logical row, the rows then written whole, one
 * store each: logical rows a multiple of 4 KiB apart share their L1 sets, so that a line four
 * blocks write a quarter of each is evicted between the quarters (s4[512,32,4096]{0,1,2:T(8,128)
 * (8,1)E(4)}: 16 rows of 8 logical rows 128 and 4 KiB apart). */
#define FAR_LINE 64
#define FAR_AHEAD 256 /* buffer bytes a column is fetched ahead (4 blocks of rows) */
WIDE_TARGET static void far_unpack_line(char *log, const uint8_t *in, Py_ssize_t P, Py_ssize_t ls, Py_ssize_t rls,
                                        int k, int n, int sign, __m512i inv)
{
    _Alignas(64) char stage[FAR_ROWS16 * 8 * FAR_LINE];
    for (int i = 0; i < n; i++) __builtin_prefetch(in + i * P + FAR_AHEAD, 0, 3); /* (a hint: never faults) */
    for (int b = 0; b < n; b += 16)
        far_unpack16(stage + b, in + b * P, P, FAR_LINE, 8 * FAR_LINE, k, n - b < 16 ? n - b : 16, sign, inv);
    const __mmask64 cols = n == FAR_LINE ? ~0ULL : (1ULL << n) - 1;
    for (int r = 0; r < k; r++)
        for (int j = 0; j < 8; j++) {
            const char *from = stage + (8 * r + j) * FAR_LINE;
            char *to = log + r * rls + j * ls;
            if (n == FAR_LINE) _mm512_storeu_si512(to, _mm512_load_si512(from));
            else _mm512_mask_storeu_epi8(to, cols, _mm512_maskz_loadu_epi8(cols, from));
        }
}

/* nr rows of lines x nc columns (as far_pack16 / far_unpack16), FAR_CHUNK rows of lines a pass
 * over the columns: 16 x 16 a block packing, 16 rows x 64 columns unpacking (far_unpack_line),
 * each block's rows of the pass in turn (a column's run of the buffer written, read, in one go).
 * `sign` is for unpacking. */
WIDE_TARGET static void far_columns(int unpack, uint8_t *bytes, char *log, Py_ssize_t nr, Py_ssize_t nc, Py_ssize_t P,
                                    Py_ssize_t ls, Py_ssize_t rls, int sign)
{
    const __m512i idx = far_words_index(unpack);
    const Py_ssize_t chunk = FAR_CHUNK;
    for (Py_ssize_t r1 = 0; r1 < nr; r1 += chunk) {
        const Py_ssize_t r2 = nr - r1 < chunk ? nr : r1 + chunk;
        for (Py_ssize_t c0 = 0; unpack && c0 < nc; c0 += FAR_LINE) {
            const int n = nc - c0 < FAR_LINE ? (int)(nc - c0) : FAR_LINE;
            for (Py_ssize_t r0 = r1; r0 < r2; r0 += FAR_ROWS16) {
                const int k = r2 - r0 < FAR_ROWS16 ? (int)(r2 - r0) : FAR_ROWS16;
                far_unpack_line(log + c0 + r0 * rls, bytes + c0 * P + r0 * 4, P, ls, rls, k, n, sign, idx);
            }
        }
        for (Py_ssize_t c0 = 0; !unpack && c0 < nc; c0 += 16) {
            const int m = nc - c0 < 16 ? (int)(nc - c0) : 16;
            for (Py_ssize_t r0 = r1; r0 < r2; r0 += FAR_ROWS16) {
                const int k = r2 - r0 < FAR_ROWS16 ? (int)(r2 - r0) : FAR_ROWS16;
                far_pack16(bytes + c0 * P + r0 * 4, log + c0 + r0 * rls, P, ls, rls, k, m, idx);
            }
        }
    }
}
#endif

#endif /* TENSORLAYOUT_PACK_FAR_H */
