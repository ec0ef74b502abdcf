/* _pack_bits.h: register and bit-field moves behind two faster forms of _pack.c's words path
 * (words() tries them first; the glue that picks them is there).
 *
 *   nibble blocks  E(4) words of adjacent columns (8 codes a 4-byte column word, a transposing
 *                  layout's (8,1) sub-tile) whose rows of lines continue the columns' logical
 *                  rows (8 bytes on): 4 columns x 4 rows of lines at a time, each column's 32
 *                  logical bytes packed to 16 in a register, then a 4 x 4 transpose of 32-bit
 *                  words puts each row of lines' 4 words side by side (one 16-byte store);
 *                  unpacking the same backwards (nib_rows; 8 x 8 in AVX2 registers where
 *                  the CPU has them). A ragged sub-tile's words of n < 8 codes 4 columns at a
 *                  time, the other codes the pad code, and so whole words whose rows of lines
 *                  do not continue the columns' rows (nib_pack_short4, nib_unpack_short4).
 *   bit blocks     E(1) words of 8 codes (one byte a column, the columns 1, 2 or 4 bytes apart):
 *                  16 columns x 8 rows of lines, each column's 64 logical bytes gathered by
 *                  movemasks, a 16 x 8 byte transpose, each row's 16 bytes stored with their
 *                  gaps' pad bytes (bit_pack_16x8, bit_unpack_16x8; the gathers and spreads
 *                  in AVX2 where the CPU has them).
 *   joined columns columns whose logical bytes follow each other (a short logical minor dim,
 *                  u1[N,4]{0,1:T(8,128)(32,1)E(1)}): the caller (un)packs the columns' run
 *                  of codes through a stage as one contiguous run; here each column's n*bits
 *                  bits move between the stage (a bit stream) and the column's P <= 8 bytes,
 *                  a column owning its gap writing the pad pattern in the same store
 *                  (join_scatter, join_gather); 4-byte column words of 1 to 4 codes of E(1)
 *                  or E(4) go in SIMD lanes instead (join4_row, in _pack_joins.h).
 *
 * Self-contained: include it anywhere after nothing or anything (include guard). */
#ifndef TENSORLAYOUT_PACK_BITS_H
#define TENSORLAYOUT_PACK_BITS_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define JOIN_STAGE 2048 /* joined columns: packed bytes staged at a time (plus 8 of slack) */

/* ---- joined columns: bit fields <-> a bit stream (portable C) ---------------------------- */

/* join_scatter for a constant store width (1, 2, 4 or 8 bytes; 0: any, `width`). */
static inline __attribute__((always_inline)) void join_scatter_w(uint8_t *out, const uint8_t *stage, size_t m,
                                                                 size_t nb, size_t P, uint64_t field, uint64_t fill,
                                                                 const size_t w, size_t width)
{
    for (size_t i = 0, at = 0; i < m; i++, at += nb) {
        uint64_t x;
        memcpy(&x, stage + at / 8, 8);
        x = ((x >> (at % 8)) & field) | fill;
        memcpy(out + i * P, &x, w ? w : width);
    }
}

/* Column i of m: nb = n*bits bits from bit i*nb of the stage (8 readable bytes past its last
 * field) -> out + i*P: P bytes (P <= 8) of the field and then the pad pattern `pads` when
 * own, else the field's nb / 8 whole bytes only. */
static inline void join_scatter(uint8_t *out, const uint8_t *stage, Py_ssize_t m, int nb, Py_ssize_t P, int own,
                                uint64_t pads)
{
    const uint64_t field = nb >= 64 ? ~0ULL : (1ULL << nb) - 1, fill = own ? pads << nb : 0;
    const size_t width = own ? (size_t)P : (size_t)(nb / 8), um = (size_t)m, unb = (size_t)nb, uP = (size_t)P;
    switch (width) { /* (fixed-size moves for the usual widths) */
    case 1: join_scatter_w(out, stage, um, unb, uP, field, fill, 1, width); break;
    case 2: join_scatter_w(out, stage, um, unb, uP, field, fill, 2, width); break;
    case 4: join_scatter_w(out, stage, um, unb, uP, field, fill, 4, width); break;
    case 8: join_scatter_w(out, stage, um, unb, uP, field, fill, 8, width); break;
    default: join_scatter_w(out, stage, um, unb, uP, field, fill, 0, width);
    }
}

/* join_gather for a constant column width q (1, 2 or 4 bytes). */
static inline __attribute__((always_inline)) void join_gather_q(uint8_t *stage, const uint8_t *in, size_t m,
                                                                unsigned nb, size_t P, const size_t q)
{
    const uint64_t field = (1ULL << nb) - 1; /* (nb <= 32) */
    uint64_t acc = 0;
    unsigned used = 0;
    for (size_t i = 0; i < m; i++) {
        uint32_t v = 0;
        memcpy(&v, in + i * P, q);
        uint64_t f = v & field;
        acc |= f << used;
        used += nb;
        if (used >= 64) {
            memcpy(stage, &acc, 8);
            stage += 8;
            used -= 64;
            acc = used ? f >> (nb - used) : 0;
        }
    }
    memcpy(stage, &acc, 8);
    memset(stage + 8, 0, 8);
}

/* The other way: the first q = ceil(nb / 8) bytes of column i (in + i*P) -> bits i*nb.. of
 * the stage, which gets every byte up to the last field's written (8 more zeroed). */
static inline void join_gather(uint8_t *stage, const uint8_t *in, Py_ssize_t m, int nb, Py_ssize_t P)
{
    const size_t q = (size_t)(nb + 7) / 8, um = (size_t)m, uP = (size_t)P;
    if (q == 1) join_gather_q(stage, in, um, (unsigned)nb, uP, 1);
    else if (q == 2) join_gather_q(stage, in, um, (unsigned)nb, uP, 2);
    else if (q == 4) join_gather_q(stage, in, um, (unsigned)nb, uP, 4);
    else join_gather_q(stage, in, um, (unsigned)nb, uP, 3);
}

#if defined(__SSE2__) || defined(_M_X64)
#include "_sse2.h"

/* ---- nibble blocks (SSE2) -------------------------------------------------------------- */

/* 32 logical codes of E(4) -> their 16 packed bytes, the first code lowest. */
static inline __m128i nib_pack32(const char *p)
{
    const __m128i lo = _mm_set1_epi16(0x000F), hi = _mm_set1_epi16(0x00F0);
    __m128i a = _mm_loadu_si128((const __m128i *)p), b = _mm_loadu_si128((const __m128i *)(p + 16));
    a = _mm_or_si128(_mm_and_si128(a, lo), _mm_and_si128(_mm_srli_epi16(a, 4), hi));
    b = _mm_or_si128(_mm_and_si128(b, lo), _mm_and_si128(_mm_srli_epi16(b, 4), hi));
    return _mm_packus_epi16(a, b);
}

/* 16 packed bytes -> their 32 codes in y[0], y[1], sign-extended from bit 3 when half is 8s. */
static inline void nib_unpack32(__m128i x, __m128i *y, __m128i half)
{
    const __m128i m = _mm_set1_epi8(0x0F);
    __m128i k0 = _mm_and_si128(x, m), k1 = _mm_and_si128(_mm_srli_epi16(x, 4), m);
    y[0] = _mm_sub_epi8(_mm_xor_si128(_mm_unpacklo_epi8(k0, k1), half), half);
    y[1] = _mm_sub_epi8(_mm_xor_si128(_mm_unpackhi_epi8(k0, k1), half), half);
}

/* 4 columns (logical rows L apart) x k <= 4 rows of lines (pb bytes apart in the buffer); with
 * k < 4 a column's 32 logical bytes are read only inside [lo, hi) (else 0: nothing done). */
static inline int nib_pack_4xk(uint8_t *out, const char *log, Py_ssize_t L, Py_ssize_t pb, int k,
                               const char *lo, const char *hi)
{
    __m128i v[4];
    const char *first = L < 0 ? log + 3 * L : log, *end = (L < 0 ? log : log + 3 * L) + 32;
    if (k < 4 && (first < lo || end > hi)) return 0;
    for (int i = 0; i < 4; i++) v[i] = nib_pack32(log + i * L);
    transpose4_u32(v);
    for (int j = 0; j < k; j++) _mm_storeu_si128((__m128i *)(out + j * pb), v[j]);
    return 1;
}

static inline void nib_unpack_4xk(char *log, const uint8_t *in, Py_ssize_t L, Py_ssize_t pb, __m128i half, int k)
{
    __m128i v[4], y[2];
    for (int j = 0; j < 4; j++) v[j] = j < k ? _mm_loadu_si128((const __m128i *)(in + j * pb)) : _mm_setzero_si128();
    transpose4_u32(v);
    for (int i = 0; i < 4; i++) {
        char *to = log + i * L;
        nib_unpack32(v[i], y, half);
        if (k >= 2) _mm_storeu_si128((__m128i *)to, y[0]);
        else _mm_storel_epi64((__m128i *)to, y[0]);
        if (k == 4) _mm_storeu_si128((__m128i *)(to + 16), y[1]);
        else if (k == 3) _mm_storel_epi64((__m128i *)(to + 16), y[1]);
    }
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define PB_AVX2 __attribute__((target("avx2")))
#define HAVE_NIB_AVX2 1

/* 64 logical codes of E(4) -> their 32 packed bytes (the lanes' packs put back in order). */
PB_AVX2 static inline __m256i nib_pack64(const char *p)
{
    const __m256i lo = _mm256_set1_epi16(0x000F), hi = _mm256_set1_epi16(0x00F0);
    __m256i a = _mm256_loadu_si256((const __m256i *)p), b = _mm256_loadu_si256((const __m256i *)(p + 32));
    a = _mm256_or_si256(_mm256_and_si256(a, lo), _mm256_and_si256(_mm256_srli_epi16(a, 4), hi));
    b = _mm256_or_si256(_mm256_and_si256(b, lo), _mm256_and_si256(_mm256_srli_epi16(b, 4), hi));
    return _mm256_permute4x64_epi64(_mm256_packus_epi16(a, b), 0xD8);
}

/* The 8 x 8 transpose of 32-bit words: word j of v[i] -> word i of v[j]. */
PB_AVX2 static inline void transpose8(__m256i *v)
{
    __m256i t[8], u[8];
    for (int i = 0; i < 4; i++) {
        t[2 * i] = _mm256_unpacklo_epi32(v[2 * i], v[2 * i + 1]);     /* words 0, 1 | 4, 5 */
        t[2 * i + 1] = _mm256_unpackhi_epi32(v[2 * i], v[2 * i + 1]); /* words 2, 3 | 6, 7 */
    }
    for (int h = 0; h < 2; h++) { /* columns 4h.. 4h+3 */
        u[4 * h] = _mm256_unpacklo_epi64(t[4 * h], t[4 * h + 2]);     /* word 0 | 4 */
        u[4 * h + 1] = _mm256_unpackhi_epi64(t[4 * h], t[4 * h + 2]); /* word 1 | 5 */
        u[4 * h + 2] = _mm256_unpacklo_epi64(t[4 * h + 1], t[4 * h + 3]);
        u[4 * h + 3] = _mm256_unpackhi_epi64(t[4 * h + 1], t[4 * h + 3]);
    }
    for (int j = 0; j < 4; j++) {
        v[j] = _mm256_permute2x128_si256(u[j], u[4 + j], 0x20);
        v[j + 4] = _mm256_permute2x128_si256(u[j], u[4 + j], 0x31);
    }
}

/* 8 columns (logical rows L apart) x 8 rows of lines (pb apart), packed and transposed. */
PB_AVX2 static void nib_pack_8x8(uint8_t *out, const char *log, Py_ssize_t L, Py_ssize_t pb)
{
    __m256i v[8];
    for (int i = 0; i < 8; i++) v[i] = nib_pack64(log + i * L);
    transpose8(v);
    for (int j = 0; j < 8; j++) _mm256_storeu_si256((__m256i *)(out + j * pb), v[j]);
}

PB_AVX2 static void nib_unpack_8x8(char *log, const uint8_t *in, Py_ssize_t L, Py_ssize_t pb, int sign)
{
    const __m256i m = _mm256_set1_epi8(0x0F), half = _mm256_set1_epi8(sign ? 8 : 0);
    __m256i v[8];
    for (int j = 0; j < 8; j++) v[j] = _mm256_loadu_si256((const __m256i *)(in + j * pb));
    transpose8(v);
    for (int i = 0; i < 8; i++) {
        __m256i k0 = _mm256_and_si256(v[i], m), k1 = _mm256_and_si256(_mm256_srli_epi16(v[i], 4), m);
        __m256i y0 = _mm256_unpacklo_epi8(k0, k1), y1 = _mm256_unpackhi_epi8(k0, k1); /* 0-15|32-47, 16-31|48-63 */
        __m256i a = _mm256_permute2x128_si256(y0, y1, 0x20), b = _mm256_permute2x128_si256(y0, y1, 0x31);
        _mm256_storeu_si256((__m256i *)(log + i * L), _mm256_sub_epi8(_mm256_xor_si256(a, half), half));
        _mm256_storeu_si256((__m256i *)(log + i * L + 32), _mm256_sub_epi8(_mm256_xor_si256(b, half), half));
    }
}
#else
#define HAVE_NIB_AVX2 0
#endif

/* Short nibble words: 4 adjacent columns of n <= 8 codes (logical rows L apart), packed with
 * the pad code `padb` (both nibbles) in each word's other 8 - n codes; 0 when a column's 8-byte
 * read would leave [lo, hi) (the caller goes word by word). */
static inline int nib_pack_short4(uint8_t *out, const char *log, Py_ssize_t L, int n, uint8_t padb, const char *lo,
                                  const char *hi)
{
    const char *first = L < 0 ? log + 3 * L : log, *end = (L < 0 ? log : log + 3 * L) + 8;
    if (first < lo || end > hi) return 0;
    const uint64_t low = n >= 8 ? ~0ULL : (1ULL << (8 * n)) - 1, pads = (0x0101010101010101ULL * padb) & ~low;
    uint64_t x[4];
    for (int i = 0; i < 4; i++) {
        memcpy(&x[i], log + i * L, 8);
        x[i] = (x[i] & low) | pads;
    }
    const __m128i lo16 = _mm_set1_epi16(0x000F), hi16 = _mm_set1_epi16(0x00F0);
    __m128i a = _mm_set_epi64x((long long)x[1], (long long)x[0]), b = _mm_set_epi64x((long long)x[3], (long long)x[2]);
    a = _mm_or_si128(_mm_and_si128(a, lo16), _mm_and_si128(_mm_srli_epi16(a, 4), hi16));
    b = _mm_or_si128(_mm_and_si128(b, lo16), _mm_and_si128(_mm_srli_epi16(b, 4), hi16));
    _mm_storeu_si128((__m128i *)out, _mm_packus_epi16(a, b));
    return 1;
}

/* The other way: 4 adjacent words -> each column's n <= 8 codes (logical rows L apart). */
static inline void nib_unpack_short4(char *log, const uint8_t *in, Py_ssize_t L, int n, int sign)
{
    __m128i y[2];
    uint64_t w[4];
    nib_unpack32(_mm_loadu_si128((const __m128i *)in), y, _mm_set1_epi8(sign ? 8 : 0));
    memcpy(w, y, 32);
    for (int i = 0; i < 4; i++) {
        char *to = log + i * L;
        uint64_t v = w[i];
        if (n >= 8) {
            memcpy(to, &v, 8);
            continue;
        }
        if (n & 4) {
            memcpy(to, &v, 4);
            to += 4;
            v >>= 32;
        }
        if (n & 2) {
            memcpy(to, &v, 2);
            to += 2;
            v >>= 16;
        }
        if (n & 1) *to = (char)(v & 0xFF);
    }
}

/* Rows of lines 0.. k (k <= 8, pb bytes apart) of columns 0.. m (m a multiple of 4; logical
 * rows L apart, a row of lines 8 bytes on), 8 x 8 in AVX2 registers when avx2 (the caller
 * checked the CPU), else 4 x 4; `ahead`: logical bytes a
 * column's line is fetched ahead when packing whole blocks. 0 when a short block would read
 * outside [lo, hi) (the caller goes word by word). */
static inline int nib_rows(int unpack, uint8_t *out, char *lg, Py_ssize_t m, Py_ssize_t k, Py_ssize_t L,
                           Py_ssize_t pb, int sign, const char *lo, const char *hi, Py_ssize_t ahead, int avx2)
{
    const __m128i half = _mm_set1_epi8(sign ? 8 : 0);
    Py_ssize_t i = 0;
#if HAVE_NIB_AVX2
    for (; avx2 && k == 8 && i + 8 <= m; i += 8) { /* 8 x 8 in AVX2 registers where the CPU has them */
        if (!unpack)
            for (int j = 0; j < 8; j++) __builtin_prefetch(lg + (i + j) * L + ahead, 0, 3);
        if (unpack) nib_unpack_8x8(lg + i * L, out + i * 4, L, pb, sign);
        else nib_pack_8x8(out + i * 4, lg + i * L, L, pb);
    }
#else
    (void)avx2;
#endif
    for (; i < m; i += 4)
        for (Py_ssize_t h = 0; h < k; h += 4) {
            int kh = k - h < 4 ? (int)(k - h) : 4;
            if (h == 0 && k == 8 && !unpack) /* the columns' next lines */
                for (int j = 0; j < 4; j++) __builtin_prefetch(lg + (i + j) * L + ahead, 0, 3);
            if (unpack) nib_unpack_4xk(lg + i * L + 8 * h, out + h * pb + i * 4, L, pb, half, kh);
            else if (!nib_pack_4xk(out + h * pb + i * 4, lg + i * L + 8 * h, L, pb, kh, lo, hi)) return 0;
        }
    return 1;
}

/* ---- bit blocks: E(1) words of 8 rows of lines x 16 columns (SSE2) ------------------------ */

/* 64 logical codes (a column's 8 rows of lines, 8 bytes each) -> 8 packed bytes, row r's in
 * byte r: each 16 bytes' low bits gathered by a movemask. */
static inline uint64_t bit_pack64(const char *p)
{
    uint64_t w = 0;
    for (int h = 0; h < 4; h++) {
        __m128i x = _mm_slli_epi16(_mm_loadu_si128((const __m128i *)(p + 16 * h)), 7);
        w |= (uint64_t)(uint16_t)_mm_movemask_epi8(x) << (16 * h);
    }
    return w;
}

/* 16 columns' 8 bytes (c[j] holds columns 2j, 2j+1) -> 8 rows of 16 bytes (byte i of row r
 * = byte r of column i): bytes, then 16-bit, then 32-bit interleaves. */
static inline void bit_rows_of(__m128i *row, const __m128i *c)
{
    __m128i y[8], z[8];
    for (int j = 0; j < 8; j++) y[j] = _mm_unpacklo_epi8(c[j], _mm_srli_si128(c[j], 8));
    for (int k = 0; k < 4; k++) {
        z[k] = _mm_unpacklo_epi16(y[2 * k], y[2 * k + 1]);     /* rows 0-3, columns 4k.. 4k+3 */
        z[k + 4] = _mm_unpackhi_epi16(y[2 * k], y[2 * k + 1]); /* rows 4-7 */
    }
    for (int h = 0; h < 2; h++) { /* rows 4h.. 4h+3 */
        __m128i a = _mm_unpacklo_epi32(z[4 * h], z[4 * h + 1]), b = _mm_unpackhi_epi32(z[4 * h], z[4 * h + 1]);
        __m128i e = _mm_unpacklo_epi32(z[4 * h + 2], z[4 * h + 3]), f = _mm_unpackhi_epi32(z[4 * h + 2], z[4 * h + 3]);
        row[4 * h] = _mm_unpacklo_epi64(a, e);
        row[4 * h + 1] = _mm_unpackhi_epi64(a, e);
        row[4 * h + 2] = _mm_unpacklo_epi64(b, f);
        row[4 * h + 3] = _mm_unpackhi_epi64(b, f);
    }
}

/* The other way: 8 rows of 16 bytes -> c[j] = columns 2j, 2j+1 (8 bytes each, row r's byte r). */
static inline void bit_columns_of(__m128i *c, const __m128i *row)
{
    __m128i a[8], b[8];
    for (int p = 0; p < 4; p++) { /* 16-bit: rows 2p, 2p+1 of a column */
        a[2 * p] = _mm_unpacklo_epi8(row[2 * p], row[2 * p + 1]);     /* columns 0-7 */
        a[2 * p + 1] = _mm_unpackhi_epi8(row[2 * p], row[2 * p + 1]); /* columns 8-15 */
    }
    for (int h = 0; h < 2; h++) { /* 32-bit: rows 0-3 (b[0..3]) and 4-7 (b[4..7]) of columns 8h.. */
        b[2 * h] = _mm_unpacklo_epi16(a[h], a[2 + h]);
        b[2 * h + 1] = _mm_unpackhi_epi16(a[h], a[2 + h]);
        b[4 + 2 * h] = _mm_unpacklo_epi16(a[4 + h], a[6 + h]);
        b[4 + 2 * h + 1] = _mm_unpackhi_epi16(a[4 + h], a[6 + h]);
    }
    for (int g = 0; g < 4; g++) { /* columns 4g.. 4g+3 */
        c[2 * g] = _mm_unpacklo_epi32(b[g], b[4 + g]);
        c[2 * g + 1] = _mm_unpackhi_epi32(b[g], b[4 + g]);
    }
}

/* 16 bytes (one per column) -> the columns' P-byte words (P 1, 2 or 4), each byte then P - 1
 * pad bytes, to out. */
static inline void bit_store_row(uint8_t *out, __m128i r, int P, __m128i pad)
{
    if (P == 1) {
        _mm_storeu_si128((__m128i *)out, r);
        return;
    }
    __m128i lo = _mm_unpacklo_epi8(r, pad), hi = _mm_unpackhi_epi8(r, pad);
    if (P == 2) {
        _mm_storeu_si128((__m128i *)out, lo);
        _mm_storeu_si128((__m128i *)(out + 16), hi);
        return;
    }
    _mm_storeu_si128((__m128i *)out, _mm_unpacklo_epi16(lo, pad));
    _mm_storeu_si128((__m128i *)(out + 16), _mm_unpackhi_epi16(lo, pad));
    _mm_storeu_si128((__m128i *)(out + 32), _mm_unpacklo_epi16(hi, pad));
    _mm_storeu_si128((__m128i *)(out + 48), _mm_unpackhi_epi16(hi, pad));
}

/* The first byte of each of 16 P-byte words from in (16 * P bytes read) -> 16 bytes. */
static inline __m128i bit_load_row(const uint8_t *in, int P)
{
    const __m128i *v = (const __m128i *)in;
    if (P == 1) return _mm_loadu_si128(v);
    if (P == 2) {
        const __m128i m = _mm_set1_epi16(0xFF);
        return _mm_packus_epi16(_mm_and_si128(_mm_loadu_si128(v), m), _mm_and_si128(_mm_loadu_si128(v + 1), m));
    }
    const __m128i m = _mm_set1_epi32(0xFF);
    __m128i a = _mm_packs_epi32(_mm_and_si128(_mm_loadu_si128(v), m), _mm_and_si128(_mm_loadu_si128(v + 1), m));
    __m128i b = _mm_packs_epi32(_mm_and_si128(_mm_loadu_si128(v + 2), m), _mm_and_si128(_mm_loadu_si128(v + 3), m));
    return _mm_packus_epi16(a, b);
}

/* 8 packed bytes (x's low 8) -> 64 codes 0 or 1 (0 or -1 when sign) at to, a byte's bit k in
 * code 8r + k. */
static inline void bit_unpack64(char *to, __m128i x, int sign)
{
    const __m128i sel = _mm_setr_epi8(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
    const __m128i one = _mm_set1_epi8(sign ? -1 : 1);
    __m128i v = _mm_unpacklo_epi8(x, x), w[2], pair[4]; /* b0 b0 b1 b1 ... */
    w[0] = _mm_unpacklo_epi16(v, v); /* b0 x4, b1 x4, b2 x4, b3 x4 */
    w[1] = _mm_unpackhi_epi16(v, v);
    for (int h = 0; h < 2; h++) { /* byte 2k eight times, then byte 2k+1 */
        pair[2 * h] = _mm_unpacklo_epi32(w[h], w[h]);
        pair[2 * h + 1] = _mm_unpackhi_epi32(w[h], w[h]);
    }
    for (int h = 0; h < 4; h++)
        _mm_storeu_si128((__m128i *)(to + 16 * h), _mm_and_si128(_mm_cmpeq_epi8(_mm_and_si128(pair[h], sel), sel), one));
}

/* 16 columns (logical lines L apart, 64 codes each) x 8 rows of lines (pb bytes apart, the
 * columns P bytes apart): packed, each column's word its byte then the pad byte `padb`. */
static inline void bit_pack_16x8(uint8_t *out, const char *lg, Py_ssize_t L, Py_ssize_t pb, int P, uint8_t padb)
{
    __m128i c[8], row[8];
    const __m128i pad = _mm_set1_epi8((char)padb);
    for (int j = 0; j < 8; j++)
        c[j] = _mm_set_epi64x((long long)bit_pack64(lg + (2 * j + 1) * L), (long long)bit_pack64(lg + 2 * j * L));
    bit_rows_of(row, c);
    for (int r = 0; r < 8; r++) bit_store_row(out + r * pb, row[r], P, pad);
}

static inline void bit_unpack_16x8(char *lg, const uint8_t *in, Py_ssize_t L, Py_ssize_t pb, int P, int sign)
{
    __m128i c[8], row[8];
    for (int r = 0; r < 8; r++) row[r] = bit_load_row(in + r * pb, P);
    bit_columns_of(c, row);
    for (int j = 0; j < 8; j++) {
        bit_unpack64(lg + 2 * j * L, c[j], sign);
        bit_unpack64(lg + (2 * j + 1) * L, _mm_srli_si128(c[j], 8), sign);
    }
}

#if HAVE_NIB_AVX2
/* bit_pack64 in two AVX2 movemasks. */
PB_AVX2 static inline uint64_t bit_pack64_avx2(const char *p)
{
    __m256i a = _mm256_slli_epi16(_mm256_loadu_si256((const __m256i *)p), 7);
    __m256i b = _mm256_slli_epi16(_mm256_loadu_si256((const __m256i *)(p + 32)), 7);
    return (uint64_t)(uint32_t)_mm256_movemask_epi8(a) | (uint64_t)(uint32_t)_mm256_movemask_epi8(b) << 32;
}

/* bit_unpack64 with each byte spread over 8 lanes by a byte shuffle, 32 codes a store. */
PB_AVX2 static inline void bit_unpack64_avx2(char *to, uint64_t x, int sign)
{
    const __m256i sel = _mm256_set1_epi64x((long long)0x8040201008040201ULL);
    const __m256i spread = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2,
                                            3, 3, 3, 3, 3, 3, 3, 3);
    const __m256i one = _mm256_set1_epi8(sign ? -1 : 1);
    __m256i lo = _mm256_set1_epi32((int)(uint32_t)x), hi = _mm256_set1_epi32((int)(uint32_t)(x >> 32));
    lo = _mm256_shuffle_epi8(lo, spread); /* byte k of x eight times, k = 0..3 */
    hi = _mm256_shuffle_epi8(hi, spread);
    lo = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(lo, sel), sel), one);
    hi = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(hi, sel), sel), one);
    _mm256_storeu_si256((__m256i *)to, lo);
    _mm256_storeu_si256((__m256i *)(to + 32), hi);
}

/* bit_pack_16x8 / bit_unpack_16x8 with the AVX2 gathers and spreads. */
PB_AVX2 static void bit_pack_16x8_avx2(uint8_t *out, const char *lg, Py_ssize_t L, Py_ssize_t pb, int P,
                                       uint8_t padb)
{
    __m128i c[8], row[8];
    const __m128i pad = _mm_set1_epi8((char)padb);
    for (int j = 0; j < 8; j++)
        c[j] = _mm_set_epi64x((long long)bit_pack64_avx2(lg + (2 * j + 1) * L), (long long)bit_pack64_avx2(lg + 2 * j * L));
    bit_rows_of(row, c);
    for (int r = 0; r < 8; r++) bit_store_row(out + r * pb, row[r], P, pad);
}

PB_AVX2 static void bit_unpack_16x8_avx2(char *lg, const uint8_t *in, Py_ssize_t L, Py_ssize_t pb, int P, int sign)
{
    __m128i c[8], row[8];
    uint64_t w[16];
    for (int r = 0; r < 8; r++) row[r] = bit_load_row(in + r * pb, P);
    bit_columns_of(c, row);
    memcpy(w, c, sizeof w);
    for (int i = 0; i < 16; i++) bit_unpack64_avx2(lg + i * L, w[i], sign);
}
#endif

#define HAVE_NIB_ROWS 1
#else
#define HAVE_NIB_ROWS 0
#define HAVE_NIB_AVX2 0
#endif

/* The buffer's lines of the next k rows of lines (pb bytes apart, `left` rows left) fetched
 * `rows` rows ahead: into L1 when streaming, else into L2. */
static inline void rows_ahead(int unpack, int stream, const uint8_t *out, Py_ssize_t pb, Py_ssize_t left,
                              Py_ssize_t k, Py_ssize_t rows)
{
    for (Py_ssize_t a = 0; a < k && rows + a < left; a++) {
        const uint8_t *p = out + (rows + a) * pb;
        if (unpack && stream) __builtin_prefetch(p, 0, 3);
        else if (unpack) __builtin_prefetch(p, 0, 1);
        else if (stream) __builtin_prefetch(p, 1, 3);
        else __builtin_prefetch(p, 1, 1);
    }
}

#endif /* TENSORLAYOUT_PACK_BITS_H */
