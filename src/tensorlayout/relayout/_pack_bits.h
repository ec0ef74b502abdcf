/* _pack_bits.h: register and bit-field moves behind two faster forms of _pack.c's words path
 * (words() tries them first; the glue that picks them is there).
 *
 *   nibble blocks  E(4) words of adjacent columns (8 codes a 4-byte column word, a transposing
 *                  layout's (8,1) sub-tile) whose rows of lines continue the columns' logical
 *                  rows (8 bytes on): 4 columns x 4 rows of lines at a time, each column's 32
 *                  logical bytes packed to 16 in a register, then a 4 x 4 transpose of 32-bit
 *                  words puts each row of lines' 4 words side by side (one 16-byte store);
 *                  unpacking the same backwards (nib_rows).
 *   joined columns columns whose logical bytes follow each other (a short logical minor dim,
 *                  u1[N,4]{0,1:T(8,128)(32,1)E(1)}): the caller (un)packs the columns' run
 *                  of codes through a stage as one contiguous run; here each column's n*bits
 *                  bits move between the stage (a bit stream) and the column's P <= 8 bytes,
 *                  a column owning its gap writing the pad pattern in the same store
 *                  (join_scatter, join_gather).
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

/* Column i of m: nb = n*bits bits from bit i*nb of the stage (8 readable bytes past its last
 * field) -> out + i*P: P bytes (P <= 8) of the field and then the pad pattern `pads` when
 * own, else the field's nb / 8 whole bytes only. */
static inline void join_scatter(uint8_t *out, const uint8_t *stage, Py_ssize_t m, int nb, Py_ssize_t P, int own,
                                uint64_t pads)
{
    const uint64_t field = nb >= 64 ? ~0ULL : (1ULL << nb) - 1, fill = own ? pads << nb : 0;
    const size_t width = own ? (size_t)P : (size_t)(nb / 8);
    for (Py_ssize_t i = 0; i < m; i++) {
        uint64_t w;
        Py_ssize_t at = i * nb;
        memcpy(&w, stage + at / 8, 8);
        w = ((w >> (at % 8)) & field) | fill;
        switch (width) { /* (fixed-size moves for the usual widths) */
        case 1: out[i * P] = (uint8_t)w; break;
        case 2: memcpy(out + i * P, &w, 2); break;
        case 4: memcpy(out + i * P, &w, 4); break;
        case 8: memcpy(out + i * P, &w, 8); break;
        default: memcpy(out + i * P, &w, width);
        }
    }
}

/* The other way: the first q = ceil(nb / 8) bytes of column i (out + i*P) -> bits i*nb.. of
 * the stage, which gets every byte up to the last field's written (8 more zeroed). */
static inline void join_gather(uint8_t *stage, const uint8_t *in, Py_ssize_t m, int nb, Py_ssize_t P)
{
    const uint64_t field = (1ULL << nb) - 1; /* (nb <= 32) */
    const int q = (nb + 7) / 8;
    uint64_t acc = 0;
    int used = 0;
    for (Py_ssize_t i = 0; i < m; i++) {
        uint32_t v = 0;
        const uint8_t *from = in + i * P;
        if (q == 1) v = from[0];
        else if (q == 2) memcpy(&v, from, 2);
        else if (q == 4) memcpy(&v, from, 4);
        else memcpy(&v, from, (size_t)q);
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

#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>

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

/* The 4 x 4 transpose of 32-bit words: word j of v[i] -> word i of v[j]. */
static inline void transpose4(__m128i *v)
{
    __m128i t0 = _mm_unpacklo_epi32(v[0], v[1]), t1 = _mm_unpacklo_epi32(v[2], v[3]);
    __m128i t2 = _mm_unpackhi_epi32(v[0], v[1]), t3 = _mm_unpackhi_epi32(v[2], v[3]);
    v[0] = _mm_unpacklo_epi64(t0, t1);
    v[1] = _mm_unpackhi_epi64(t0, t1);
    v[2] = _mm_unpacklo_epi64(t2, t3);
    v[3] = _mm_unpackhi_epi64(t2, t3);
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
    transpose4(v);
    for (int j = 0; j < k; j++) _mm_storeu_si128((__m128i *)(out + j * pb), v[j]);
    return 1;
}

static inline void nib_unpack_4xk(char *log, const uint8_t *in, Py_ssize_t L, Py_ssize_t pb, __m128i half, int k)
{
    __m128i v[4], y[2];
    for (int j = 0; j < 4; j++) v[j] = j < k ? _mm_loadu_si128((const __m128i *)(in + j * pb)) : _mm_setzero_si128();
    transpose4(v);
    for (int i = 0; i < 4; i++) {
        char *to = log + i * L;
        nib_unpack32(v[i], y, half);
        if (k >= 2) _mm_storeu_si128((__m128i *)to, y[0]);
        else _mm_storel_epi64((__m128i *)to, y[0]);
        if (k == 4) _mm_storeu_si128((__m128i *)(to + 16), y[1]);
        else if (k == 3) _mm_storel_epi64((__m128i *)(to + 16), y[1]);
    }
}

/* Rows of lines 0.. k (k <= 8, pb bytes apart) of columns 0.. m (m a multiple of 4; logical
 * rows L apart, a row of lines 8 bytes on), 4 x 4 at a time; `ahead`: logical bytes a
 * column's line is fetched ahead when packing whole blocks. 0 when a short block would read
 * outside [lo, hi) (the caller goes word by word). */
static inline int nib_rows(int unpack, uint8_t *out, char *lg, Py_ssize_t m, Py_ssize_t k, Py_ssize_t L,
                           Py_ssize_t pb, int sign, const char *lo, const char *hi, Py_ssize_t ahead)
{
    const __m128i half = _mm_set1_epi8(sign ? 8 : 0);
    for (Py_ssize_t i = 0; i < m; i += 4)
        for (Py_ssize_t h = 0; h < k; h += 4) {
            int kh = k - h < 4 ? (int)(k - h) : 4;
            if (h == 0 && k == 8 && !unpack) /* the columns' next lines */
                for (int j = 0; j < 4; j++) __builtin_prefetch(lg + (i + j) * L + ahead, 0, 3);
            if (unpack) nib_unpack_4xk(lg + i * L + 8 * h, out + h * pb + i * 4, L, pb, half, kh);
            else if (!nib_pack_4xk(out + h * pb + i * 4, lg + i * L + 8 * h, L, pb, kh, lo, hi)) return 0;
        }
    return 1;
}
#define HAVE_NIB_ROWS 1
#else
#define HAVE_NIB_ROWS 0
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
