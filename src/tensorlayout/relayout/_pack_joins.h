/* _pack_joins.h: joined word columns in SIMD lanes, the faster form of _pack_words.h's
 * joined_row for 4-byte column words of 1, 2, 3, 4 or 8 codes of E(1)/E(4) whose logical bytes
 * follow each other (u1[N,4]{0,1:T(8,128)(32,1)E(1)}). The register moves it builds on (the bit
 * blocks' bit_store_row, the AVX2 switch) are in _pack_bits.h. Self-contained (include guard). */
#ifndef TENSORLAYOUT_PACK_JOINS_H
#define TENSORLAYOUT_PACK_JOINS_H
#include "_pack_bits.h"

#if HAVE_NIB_ROWS
/* ---- joined word columns (SSE2): n = 1, 2 or 4 codes of E(1) or E(4) a 4-byte column (3: below) --
 * Each column's n logical bytes become the low n*bits bits of its 32-bit word (the rest the
 * pad pattern `fill`), in lanes of 8n bits shifted and masked in place, then widened to 32
 * (u1[N,4]{0,1:T(8,128)(32,1)E(1)}: a bit field a column through a stage, 2.4x a copy). */

#define JOIN4_STREAM(p, x, st)                                                                   \
    do {                                                                                         \
        if (st) _mm_stream_si128((__m128i *)(p), (x)); else _mm_storeu_si128((__m128i *)(p), (x)); \
    } while (0)

/* 16 logical bytes (16 / n columns) -> their 64 / n bytes of column words. */
static inline __attribute__((always_inline)) void join4_pack16(uint8_t *out, const char *log, const int bits,
                                                                const int n, __m128i fill, int st)
{
    const __m128i z = _mm_setzero_si128();
    __m128i y = _mm_and_si128(_mm_loadu_si128((const __m128i *)log), _mm_set1_epi8((char)((1 << bits) - 1)));
    if (n == 4) { /* codes at 0, 8, 16, 24 -> 0, bits, 2 bits, 3 bits */
        y = _mm_and_si128(_mm_or_si128(y, _mm_srli_epi32(y, 8 - bits)), _mm_set1_epi32(bits == 1 ? 0x30003 : 0xFF00FF));
        y = _mm_and_si128(_mm_or_si128(y, _mm_srli_epi32(y, 16 - 2 * bits)), _mm_set1_epi32(bits == 1 ? 0xF : 0xFFFF));
        JOIN4_STREAM(out, _mm_or_si128(y, fill), st);
    } else if (n == 2) {
        y = _mm_and_si128(_mm_or_si128(y, _mm_srli_epi16(y, 8 - bits)), _mm_set1_epi16(bits == 1 ? 3 : 0xFF));
        JOIN4_STREAM(out, _mm_or_si128(_mm_unpacklo_epi16(y, z), fill), st);
        JOIN4_STREAM(out + 16, _mm_or_si128(_mm_unpackhi_epi16(y, z), fill), st);
    } else {
        __m128i lo = _mm_unpacklo_epi8(y, z), hi = _mm_unpackhi_epi8(y, z);
        JOIN4_STREAM(out, _mm_or_si128(_mm_unpacklo_epi16(lo, z), fill), st);
        JOIN4_STREAM(out + 16, _mm_or_si128(_mm_unpackhi_epi16(lo, z), fill), st);
        JOIN4_STREAM(out + 32, _mm_or_si128(_mm_unpacklo_epi16(hi, z), fill), st);
        JOIN4_STREAM(out + 48, _mm_or_si128(_mm_unpackhi_epi16(hi, z), fill), st);
    }
}

/* 4 column words -> their codes, one a byte in each 8n-bit lane's low n bytes. */
static inline __attribute__((always_inline)) __m128i join4_codes(const uint8_t *in, const int bits, const int n)
{
    __m128i w = _mm_loadu_si128((const __m128i *)in);
    if (n == 4) {
        w = _mm_and_si128(w, _mm_set1_epi32(bits == 1 ? 0xF : 0xFFFF));
        w = _mm_and_si128(_mm_or_si128(w, _mm_slli_epi32(w, 16 - 2 * bits)), _mm_set1_epi32(bits == 1 ? 0x30003 : 0xFF00FF));
    } else if (n == 2) {
        w = _mm_and_si128(w, _mm_set1_epi32(bits == 1 ? 3 : 0xFF));
    } else {
        return _mm_and_si128(w, _mm_set1_epi32((1 << bits) - 1));
    }
    return _mm_and_si128(_mm_or_si128(w, _mm_slli_epi32(w, 8 - bits)), _mm_set1_epi8((char)((1 << bits) - 1)));
}

/* The other way: 64 / n bytes of column words -> their 16 logical bytes, sign-extended by half. */
static inline __attribute__((always_inline)) void join4_unpack16(char *log, const uint8_t *in, const int bits,
                                                                  const int n, __m128i half)
{
    __m128i y;
    if (n == 4) {
        y = join4_codes(in, bits, 4);
    } else if (n == 2) {
        y = _mm_packs_epi32(join4_codes(in, bits, 2), join4_codes(in + 16, bits, 2));
    } else {
        __m128i a = _mm_packs_epi32(join4_codes(in, bits, 1), join4_codes(in + 16, bits, 1));
        __m128i b = _mm_packs_epi32(join4_codes(in + 32, bits, 1), join4_codes(in + 48, bits, 1));
        y = _mm_packus_epi16(a, b);
    }
    _mm_storeu_si128((__m128i *)log, _mm_sub_epi8(_mm_xor_si128(y, half), half));
}

/* Columns 0.. of one row of joined word columns, 16 / n at a time while their words lie before
 * `hi` (unpacking: the buffer's end); returns the columns done (the caller does the rest). */
static inline __attribute__((always_inline)) Py_ssize_t join4_row_k(int unpack, uint8_t *bytes, char *log,
                                                                     Py_ssize_t nc, const int bits, const int n,
                                                                     uint8_t pad_byte, int sign, int stream,
                                                                     const uint8_t *hi)
{
    const Py_ssize_t step = 16 / n;
    const __m128i fill = _mm_set1_epi32((int)(uint32_t)(0x01010101u * pad_byte << (n * bits)));
    const __m128i half = _mm_set1_epi8((char)(sign ? 1 << (bits - 1) : 0));
    const int st = stream && ((uintptr_t)bytes & 15) == 0;
    Py_ssize_t col = 0;
    if (unpack)
        for (; col + step <= nc && bytes + 4 * (col + step) <= hi; col += step)
            join4_unpack16(log + col * n, bytes + 4 * col, bits, n, half);
    else
        for (; col + step <= nc; col += step) join4_pack16(bytes + 4 * col, log + col * n, bits, n, fill, st);
    return col;
}

#if HAVE_NIB_AVX2
/* n = 3: each 4 columns' 12 logical bytes spread to 32-bit lanes by a byte shuffle (SSSE3, with
 * the AVX2 forms), then as n = 4 with a zero fourth code; the other way the lanes' first 3
 * codes gathered back. Packing reads 16 logical bytes a step, so only while they lie inside the
 * row's own; returns the columns done. */
PB_AVX2 static Py_ssize_t join3_row(int unpack, uint8_t *bytes, char *log, Py_ssize_t nc, int bits,
                                    uint8_t pad_byte, int sign, int stream, const uint8_t *hi)
{
    const __m128i spread = _mm_setr_epi8(0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1);
    const __m128i gather = _mm_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1);
    const __m128i m = _mm_set1_epi8((char)((1 << bits) - 1));
    const __m128i fill = _mm_set1_epi32((int)(uint32_t)(0x01010101u * pad_byte << (3 * bits)));
    const __m128i half = _mm_set1_epi8((char)(sign ? 1 << (bits - 1) : 0));
    const int st = stream && ((uintptr_t)bytes & 15) == 0;
    Py_ssize_t col = 0;
    if (unpack) {
        for (; col + 4 <= nc && bytes + 4 * (col + 4) <= hi; col += 4) {
            __m128i w = _mm_loadu_si128((const __m128i *)(bytes + 4 * col));
            w = _mm_and_si128(w, _mm_set1_epi32(bits == 1 ? 0xF : 0xFFFF));
            w = _mm_and_si128(_mm_or_si128(w, _mm_slli_epi32(w, 16 - 2 * bits)),
                              _mm_set1_epi32(bits == 1 ? 0x30003 : 0xFF00FF));
            w = _mm_and_si128(_mm_or_si128(w, _mm_slli_epi32(w, 8 - bits)), m);
            w = _mm_shuffle_epi8(_mm_sub_epi8(_mm_xor_si128(w, half), half), gather);
            _mm_storel_epi64((__m128i *)(log + 3 * col), w);
            uint32_t tail = (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(w, 8));
            memcpy(log + 3 * col + 8, &tail, 4);
        }
        return col;
    }
    for (; col + 4 <= nc && 3 * col + 16 <= 3 * nc; col += 4) {
        __m128i y = _mm_and_si128(_mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(log + 3 * col)), spread), m);
        y = _mm_and_si128(_mm_or_si128(y, _mm_srli_epi32(y, 8 - bits)), _mm_set1_epi32(bits == 1 ? 0x30003 : 0xFF00FF));
        y = _mm_and_si128(_mm_or_si128(y, _mm_srli_epi32(y, 16 - 2 * bits)), _mm_set1_epi32(bits == 1 ? 0xF : 0xFFFF));
        JOIN4_STREAM(bytes + 4 * col, _mm_or_si128(y, fill), st);
    }
    return col;
}
#endif

/* Joined word columns of 8 E(1) codes (u1[N,8]{0,1:T(8,128)(32,1)E(1)}): 16 columns' 128 logical
 * bytes to their 16 bytes by movemasks, each stored with 3 pad bytes (bit_store_row); the other
 * way each column's byte spread to its 8 codes (reading 16 words while they lie before `hi`).
 * Returns the columns done. */
static inline Py_ssize_t join8_row(int unpack, uint8_t *bytes, char *log, Py_ssize_t nc, uint8_t pad_byte, int sign,
                                   const uint8_t *hi)
{
    const __m128i pad = _mm_set1_epi8((char)pad_byte);
    Py_ssize_t col = 0;
    if (unpack) {
        for (; col + 16 <= nc && bytes + 4 * (col + 16) <= hi; col += 16) {
            __m128i r = bit_load_row(bytes + 4 * col, 4);
            bit_unpack64(log + 8 * col, r, sign);
            bit_unpack64(log + 8 * col + 64, _mm_srli_si128(r, 8), sign);
        }
        return col;
    }
    for (; col + 16 <= nc; col += 16) {
        uint16_t w[8];
        for (int j = 0; j < 8; j++) /* columns 2j and 2j + 1 */
            w[j] = (uint16_t)_mm_movemask_epi8(_mm_slli_epi16(_mm_loadu_si128((const __m128i *)(log + 8 * col + 16 * j)), 7));
        __m128i r;
        memcpy(&r, w, sizeof r);
        bit_store_row(bytes + 4 * col, r, 4, pad);
    }
    return col;
}

/* join4_row_k for the task's bits (1 or 4) and n (1, 2 or 4; 3 where avx2: the CPU has it; 8 of
 * E(1): join8_row). */
static inline Py_ssize_t join4_row(int unpack, uint8_t *bytes, char *log, Py_ssize_t nc, int bits, int n,
                                   uint8_t pad_byte, int sign, int stream, const uint8_t *hi, int avx2)
{
#define JOIN4(B, N) return join4_row_k(unpack, bytes, log, nc, B, N, pad_byte, sign, stream, hi)
    switch (bits * 8 + n) {
    case 9: JOIN4(1, 1);
    case 10: JOIN4(1, 2);
    case 12: JOIN4(1, 4);
    case 33: JOIN4(4, 1);
    case 34: JOIN4(4, 2);
    case 36: JOIN4(4, 4);
#if HAVE_NIB_AVX2
    case 11:
    case 35: return avx2 ? join3_row(unpack, bytes, log, nc, bits, pad_byte, sign, stream, hi) : 0;
#endif
    case 16: return join8_row(unpack, bytes, log, nc, pad_byte, sign, hi);
    default: (void)avx2; return 0;
    }
#undef JOIN4
}

#endif /* HAVE_NIB_ROWS */
#endif /* TENSORLAYOUT_PACK_JOINS_H */
