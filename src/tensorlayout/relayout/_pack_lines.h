/* _pack_lines.h: the packing kernel's byte and word moves (codes <-> bytes, 8 codes <-> a word) and its
 * aligned lines: q whole bytes per position, in SSE2 registers (interleaves, gathers of
 * columns and their owned gaps). Self-contained (include guard). */
#ifndef TENSORLAYOUT_PACK_LINES_H
#define TENSORLAYOUT_PACK_LINES_H
#include "_pack_types.h"

/* ---- codes <-> bytes, one byte at a time ----------------------------------------------- */

static inline uint8_t gather_byte(const ctx_t *c, const char *log, Py_ssize_t ls)
{
    unsigned v = 0;
    for (int k = 0; k < c->per; k++) v |= ((unsigned)(uint8_t)log[k * ls] & c->mask) << (k * c->bits);
    return (uint8_t)v;
}

static inline uint8_t code(const ctx_t *c, unsigned v)
{
    v &= c->mask;
    if (c->sign && (v >> (c->bits - 1))) v |= ~c->mask;
    return (uint8_t)v;
}

static inline void scatter_byte(const ctx_t *c, char *log, Py_ssize_t ls, unsigned byte)
{
    for (int k = 0; k < c->per; k++) log[k * ls] = (char)code(c, byte >> (k * c->bits));
}

/* ---- 8 codes <-> one 64-bit word (little-endian) ------------------------------------ */

static void swar_masks(ctx_t *c)
{
    c->swar_mask[0] = 0x0101010101010101ULL * c->mask;
    for (int level = 0; level < 3; level++) {
        int group = 16 << level, keep = (2 * c->bits) << level;
        uint64_t m = 0, one = keep >= 64 ? ~0ULL : (1ULL << keep) - 1;
        for (int at = 0; at < 64; at += group) m |= one << at;
        c->swar_mask[level + 1] = m;
    }
}

/* 8 codes (one per byte) -> their 8*bits bits, first code lowest. */
static inline uint64_t swar_pack(const ctx_t *c, uint64_t x)
{
    x &= c->swar_mask[0];
    for (int level = 0; level < 3; level++)
        x = (x | (x >> ((8 - c->bits) << level))) & c->swar_mask[level + 1];
    return x;
}

static inline uint64_t swar_unpack(const ctx_t *c, uint64_t x)
{
    for (int level = 2; level >= 0; level--)
        x = (x | (x << ((8 - c->bits) << level))) & c->swar_mask[level];
    if (c->sign) {
        uint64_t high = 0x0101010101010101ULL << (c->bits - 1);
        x |= (x & high) * (uint64_t)(((0xFFu << c->bits) & 0xFFu) >> (c->bits - 1));
    }
    return x;
}

/* ---- the aligned lines: q whole bytes per position ------------------------------------- */

#if HAVE_SSE2

/* The 4-way byte interleave: bytes c of x[0..3] -> bytes 4c..4c+3 of y[0..3] (y in memory
 * order). As a map of byte positions (j, c) -> (c, j) it rotates a 6-bit index by 4 bits, so
 * applying it three times is the identity and twice undoes it. */
static inline void interleave4(__m128i *y, const __m128i *x)
{
    __m128i a = _mm_unpacklo_epi8(x[0], x[1]), b = _mm_unpackhi_epi8(x[0], x[1]);
    __m128i e = _mm_unpacklo_epi8(x[2], x[3]), f = _mm_unpackhi_epi8(x[2], x[3]);
    y[0] = _mm_unpacklo_epi16(a, e);
    y[1] = _mm_unpackhi_epi16(a, e);
    y[2] = _mm_unpacklo_epi16(b, f);
    y[3] = _mm_unpackhi_epi16(b, f);
}

static inline void put(uint8_t *p, __m128i x, int stream)
{
    if (stream)
        _mm_stream_si128((__m128i *)p, x);
    else
        _mm_storeu_si128((__m128i *)p, x);
}

static inline __m128i load(const char *p) { return _mm_loadu_si128((const __m128i *)p); }

/* Codes of 16*per contiguous logical bytes -> 16 bytes; returns the logical bytes used. */
static Py_ssize_t pack_run_sse2(const ctx_t *c, uint8_t *out, const char *log, Py_ssize_t n)
{
    Py_ssize_t i = 0, step = 16 * c->per;
    int st = c->stream && ((uintptr_t)out & 15) == 0;
    __m128i m = _mm_set1_epi8((char)c->mask);
    for (; i + step <= n; i += step, out += 16) {
        if (c->bits == 4) {
            __m128i lo = _mm_set1_epi16(0x000F), hi = _mm_set1_epi16(0x00F0), y[2];
            for (int h = 0; h < 2; h++) {
                __m128i x = load(log + i + 16 * h);
                y[h] = _mm_or_si128(_mm_and_si128(x, lo), _mm_and_si128(_mm_srli_epi16(x, 4), hi));
            }
            put(out, _mm_packus_epi16(y[0], y[1]), st);
        } else if (c->bits == 2) {
            __m128i y[4];
            for (int h = 0; h < 4; h++) {
                __m128i x = _mm_and_si128(load(log + i + 16 * h), m);
                x = _mm_and_si128(_mm_or_si128(x, _mm_srli_epi32(x, 6)), _mm_set1_epi32(0x000F000F));
                y[h] = _mm_and_si128(_mm_or_si128(x, _mm_srli_epi32(x, 12)), _mm_set1_epi32(0xFF));
            }
            put(out, _mm_packus_epi16(_mm_packs_epi32(y[0], y[1]), _mm_packs_epi32(y[2], y[3])), st);
        } else {
            __m128i y[8];
            for (int h = 0; h < 8; h++) {
                int bits16 = _mm_movemask_epi8(_mm_slli_epi16(load(log + i + 16 * h), 7));
                y[h] = _mm_cvtsi32_si128(bits16);
            }
            /* 8 x 16 bits -> 16 bytes in order */
            __m128i a = _mm_unpacklo_epi16(y[0], y[1]), b = _mm_unpacklo_epi16(y[2], y[3]);
            __m128i e = _mm_unpacklo_epi16(y[4], y[5]), f = _mm_unpacklo_epi16(y[6], y[7]);
            put(out, _mm_unpacklo_epi64(_mm_unpacklo_epi32(a, b), _mm_unpacklo_epi32(e, f)), st);
        }
    }
    return i;
}

/* 16 bytes -> codes of 16*per contiguous logical bytes; returns the logical bytes written. */
static Py_ssize_t unpack_run_sse2(const ctx_t *c, char *log, const uint8_t *in, Py_ssize_t n)
{
    Py_ssize_t i = 0, step = 16 * c->per;
    /* streamed only in whole lines (a partial line's write-combining buffer is flushed in
     * pieces, far slower than a cached store) */
    int st = c->stream && ((uintptr_t)log & 63) == 0 && n % 64 == 0 && n >= STREAM_MIN_RUN;
    __m128i m = _mm_set1_epi8((char)c->mask);
    __m128i half = _mm_set1_epi8((char)(c->sign ? 1u << (c->bits - 1) : 0u));
    for (; i + step <= n; i += step, in += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)in), y[8];
        int parts = c->per;
        if (c->bits == 1) {
            const __m128i sel = _mm_setr_epi8(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
            for (int h = 0; h < 8; h++) {
                __m128i v = _mm_cvtsi32_si128(in[2 * h] | (in[2 * h + 1] << 8));
                v = _mm_unpacklo_epi8(v, v);
                v = _mm_unpacklo_epi16(v, v);
                v = _mm_unpacklo_epi32(v, v); /* byte b0 eight times, then b1 eight times */
                y[h] = _mm_and_si128(_mm_cmpeq_epi8(_mm_and_si128(v, sel), sel), m);
            }
        } else {
            __m128i k[4];
            for (int j = 0; j < parts; j++)
                k[j] = _mm_and_si128(_mm_srl_epi16(x, _mm_cvtsi32_si128(j * c->bits)), m);
            if (c->bits == 4) {
                y[0] = _mm_unpacklo_epi8(k[0], k[1]);
                y[1] = _mm_unpackhi_epi8(k[0], k[1]);
            } else {
                interleave4(y, k);
            }
        }
        for (int h = 0; h < parts; h++)
            put((uint8_t *)log + i + 16 * h, _mm_sub_epi8(_mm_xor_si128(y[h], half), half), st);
    }
    return i;
}
#endif

static void pack_contiguous(const ctx_t *c, uint8_t *out, const char *log, Py_ssize_t q)
{
    Py_ssize_t n = q * c->per, i = 0;
#if HAVE_SSE2
    i = pack_run_sse2(c, out, log, n);
#endif
#if HAVE_SWAR
    for (; i + 8 <= n; i += 8) {
        uint64_t x;
        memcpy(&x, log + i, 8);
        x = swar_pack(c, x);
        memcpy(out + i / c->per, &x, (size_t)c->bits);
    }
#endif
    for (; i < n; i += c->per) out[i / c->per] = gather_byte(c, log + i, 1);
}

static void unpack_contiguous(const ctx_t *c, char *log, const uint8_t *in, Py_ssize_t q)
{
    Py_ssize_t n = q * c->per, i = 0;
#if HAVE_SSE2
    i = unpack_run_sse2(c, log, in, n);
#endif
#if HAVE_SWAR
    for (; i + 8 <= n; i += 8) {
        uint64_t x = 0;
        memcpy(&x, in + i / c->per, (size_t)c->bits);
        x = swar_unpack(c, x);
        memcpy(log + i, &x, 8);
    }
#endif
    for (; i < n; i += c->per) scatter_byte(c, log + i, 1, in[i / c->per]);
}

static void pack_bytes(const ctx_t *c, const task_t *t, uint8_t *out, const char *log)
{
    int last = t->ndim - 1;
    Py_ssize_t q = t->shape[last] / c->per, ls = t->ls[last];
    if (t->kind == 1) {
        memset(out, c->pad_byte, (size_t)q);
        return;
    }
    for (Py_ssize_t j = 0; j < q; j++) out[j] = gather_byte(c, log + j * c->per * ls, ls);
}

static void unpack_bytes(const ctx_t *c, const task_t *t, char *log, const uint8_t *in)
{
    int last = t->ndim - 1;
    Py_ssize_t q = t->shape[last] / c->per, ls = t->ls[last];
    for (Py_ssize_t j = 0; j < q; j++) scatter_byte(c, log + j * c->per * ls, ls, in[j]);
}

#if HAVE_SSE2

/* gather_byte and scatter_byte for constant bits (unrolled), the columns' tails. */
ALWAYS_INLINE uint8_t gather_k(const char *log, Py_ssize_t ls, const int bits)
{
    const unsigned mask = (1u << bits) - 1;
    unsigned v = 0;
    for (int k = 0; k < 8 / bits; k++) v |= ((unsigned)(uint8_t)log[k * ls] & mask) << (k * bits);
    return (uint8_t)v;
}

ALWAYS_INLINE void scatter_k(char *log, Py_ssize_t ls, unsigned byte, const int bits, unsigned half)
{
    const unsigned mask = (1u << bits) - 1;
    for (int k = 0; k < 8 / bits; k++) log[k * ls] = (char)((((byte >> (k * bits)) & mask) ^ half) - half);
}

/* The 32-bit lane k of x (SSE2 has no extract of 32-bit lanes). */
ALWAYS_INLINE uint32_t lane32(__m128i x, const int k)
{
    switch (k) {
    case 0: return (uint32_t)_mm_cvtsi128_si32(x);
    case 1: return (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(x, 4));
    case 2: return (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(x, 8));
    default: return (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(x, 12));
    }
}

/* Byte j of column i of the registers goes to out[i*P + j]: interleaved in registers when
 * the columns' bytes are adjacent (P == q), else each column's q = 2 or 4 bytes interleaved
 * the same way and stored as one word (the gaps between are not ours), other q byte by byte. */
ALWAYS_INLINE void store_columns(uint8_t *out, const __m128i *v, Py_ssize_t P, const int q, int stream)
{
    int st = stream && ((uintptr_t)out & 15) == 0;
    if (P == q && q == 1) {
        put(out, v[0], st);
    } else if (P == q && q == 2) {
        put(out, _mm_unpacklo_epi8(v[0], v[1]), st);
        put(out + 16, _mm_unpackhi_epi8(v[0], v[1]), st);
    } else if (P == q && q == 4) {
        __m128i y[4];
        interleave4(y, v);
        for (int i = 0; i < 4; i++) put(out + 16 * i, y[i], st);
    } else if (q == 4) {
        __m128i y[4];
        interleave4(y, v); /* y[i]: columns 4i..4i+3, 4 bytes each */
        for (int i = 0; i < 4; i++)
            for (int k = 0; k < 4; k++) {
                uint32_t w = lane32(y[i], k);
                memcpy(out + (4 * i + k) * P, &w, 4);
            }
    } else if (q == 2) {
        __m128i y[2] = {_mm_unpacklo_epi8(v[0], v[1]), _mm_unpackhi_epi8(v[0], v[1])};
        for (int i = 0; i < 2; i++)
            for (int k = 0; k < 8; k++) {
                uint16_t w = (uint16_t)_mm_extract_epi16(y[i], k);
                memcpy(out + (8 * i + k) * P, &w, 2);
            }
    } else {
        _Alignas(16) uint8_t tmp[MAX_Q][LANES];
        for (int j = 0; j < q; j++) _mm_store_si128((__m128i *)tmp[j], v[j]);
        for (int i = 0; i < LANES; i++)
            for (int j = 0; j < q; j++) out[i * P + j] = tmp[j][i];
    }
}

/* The same for a task owning the gaps: bytes q..P-1 of each column get the pad byte (all
 * 16*P bytes from out are written). */
ALWAYS_INLINE void store_owned(uint8_t *out, __m128i *v, Py_ssize_t P, const int q, uint8_t pad,
                               int stream)
{
    __m128i pv = _mm_set1_epi8((char)pad);
    if (P == 2 && q == 1) {
        v[1] = pv;
        store_columns(out, v, 2, 2, stream);
    } else if (P == 4 && q < 4) {
        for (int j = q; j < 4; j++) v[j] = pv;
        store_columns(out, v, 4, 4, stream);
    } else if ((P == 8 || P == 16) && q <= 4) {
        /* 4 bytes per column as for P == 4, then each column's 4 bytes widened by pad ones */
        int st = stream && ((uintptr_t)out & 15) == 0;
        __m128i y[4];
        for (int j = q; j < 4; j++) v[j] = pv;
        interleave4(y, v); /* y[i]: columns 4i..4i+3 */
        for (int i = 0; i < 4; i++) {
            __m128i lo = _mm_unpacklo_epi32(y[i], pv), hi = _mm_unpackhi_epi32(y[i], pv);
            uint8_t *o = out + 4 * i * P;
            if (P == 8) {
                put(o, lo, st);
                put(o + 16, hi, st);
            } else {
                put(o, _mm_unpacklo_epi64(lo, pv), st);
                put(o + 16, _mm_unpackhi_epi64(lo, pv), st);
                put(o + 32, _mm_unpacklo_epi64(hi, pv), st);
                put(o + 48, _mm_unpackhi_epi64(hi, pv), st);
            }
        }
    } else {
        store_columns(out, v, P, q, stream);
        for (int i = 0; i < LANES; i++) memset(out + i * P + q, pad, (size_t)(P - q));
    }
}

/* v[j] = byte j of columns 0..15, read from in[i*P + j]. `wide`: the 16*P bytes from in may
 * be read (they are ours when P == q, or lie before the next column's bytes). */
ALWAYS_INLINE void load_columns(const uint8_t *in, __m128i *v, Py_ssize_t P, const int q, int wide)
{
    const __m128i *p = (const __m128i *)in;
    if ((P == q || wide) && P == 1) {
        v[0] = _mm_loadu_si128(p);
    } else if ((P == q || wide) && P == 2 && q <= 2) {
        __m128i o0 = _mm_loadu_si128(p), o1 = _mm_loadu_si128(p + 1), ff = _mm_set1_epi16(0xFF);
        v[0] = _mm_packus_epi16(_mm_and_si128(o0, ff), _mm_and_si128(o1, ff));
        if (q == 2) v[1] = _mm_packus_epi16(_mm_srli_epi16(o0, 8), _mm_srli_epi16(o1, 8));
    } else if (P == 4 && q == 4) {
        __m128i o[4], y[4];
        for (int i = 0; i < 4; i++) o[i] = _mm_loadu_si128(p + i);
        interleave4(y, o);
        interleave4(v, y);
    } else if ((P == q || wide) && P == 4 && q <= 4) {
        __m128i o[4], ff = _mm_set1_epi32(0xFF);
        for (int i = 0; i < 4; i++) o[i] = _mm_loadu_si128(p + i);
        for (int j = 0; j < q; j++) {
            __m128i x[4], sh = _mm_cvtsi32_si128(8 * j);
            for (int i = 0; i < 4; i++) x[i] = _mm_and_si128(_mm_srl_epi32(o[i], sh), ff);
            v[j] = _mm_packus_epi16(_mm_packs_epi32(x[0], x[1]), _mm_packs_epi32(x[2], x[3]));
        }
    } else if (q == 4) { /* a word per column, then as P == 4 */
        __m128i o[4], y[4];
        for (int i = 0; i < 4; i++) {
            int32_t w[4];
            for (int k = 0; k < 4; k++) memcpy(&w[k], in + (4 * i + k) * P, 4);
            o[i] = _mm_setr_epi32(w[0], w[1], w[2], w[3]);
        }
        interleave4(y, o);
        interleave4(v, y);
    } else if (q == 2) { /* a word per column, then as P == 2 */
        __m128i o[2], ff = _mm_set1_epi16(0xFF);
        for (int i = 0; i < 2; i++) {
            uint16_t w[8];
            for (int k = 0; k < 8; k++) memcpy(&w[k], in + (8 * i + k) * P, 2);
            o[i] = _mm_setr_epi16((short)w[0], (short)w[1], (short)w[2], (short)w[3], (short)w[4], (short)w[5],
                                  (short)w[6], (short)w[7]);
        }
        v[0] = _mm_packus_epi16(_mm_and_si128(o[0], ff), _mm_and_si128(o[1], ff));
        v[1] = _mm_packus_epi16(_mm_srli_epi16(o[0], 8), _mm_srli_epi16(o[1], 8));
    } else {
        _Alignas(16) uint8_t tmp[MAX_Q][LANES];
        for (int i = 0; i < LANES; i++)
            for (int j = 0; j < q; j++) tmp[j][i] = in[i * P + j];
        for (int j = 0; j < q; j++) v[j] = _mm_load_si128((const __m128i *)tmp[j]);
    }
}

/* 16 columns of per*q logical rows (ls bytes apart) packed into q registers, bits per item. */
ALWAYS_INLINE void pack_lines(__m128i *v, const char *log, Py_ssize_t ls, __m128i m, const int bits, const int q)
{
    const int per = 8 / bits;
    for (int j = 0; j < q; j++) {
        const char *row = log + j * per * ls;
        __m128i acc = _mm_and_si128(_mm_loadu_si128((const __m128i *)row), m);
        for (int k = 1; k < per; k++) {
            __m128i x = _mm_and_si128(_mm_loadu_si128((const __m128i *)(row + k * ls)), m);
            acc = _mm_or_si128(acc, _mm_sll_epi16(x, _mm_cvtsi32_si128(k * bits)));
        }
        v[j] = acc;
    }
}

/* 16 columns of one row of lines: q bytes each, P bytes apart, from per*q logical rows. */
ALWAYS_INLINE void pack_block(const ctx_t *c, uint8_t *out, const char *log, Py_ssize_t P, Py_ssize_t ls,
                              int own, __m128i m, const int bits, const int q)
{
    __m128i v[MAX_Q] = {0}; /* (q of them are set) */
    pack_lines(v, log, ls, m, bits, q);
    if (own)
        store_owned(out, v, P, q, c->pad_byte, c->stream);
    else
        store_columns(out, v, P, q, c->stream);
}

/* The last n < 16 columns of one row of lines as a block, when every row's 16 bytes from
 * there lie inside the logical array (lanes past the n columns are read, never stored):
 * the rows packed in registers, each column's q bytes (and gaps, when owned) stored. 0 when
 * a row's vector would leave the array (then the caller goes byte by byte). */
ALWAYS_INLINE int pack_tail(const ctx_t *c, uint8_t *out, const char *log, Py_ssize_t P, Py_ssize_t ls,
                            int own, __m128i m, const int bits, const int q, Py_ssize_t n)
{
    const int per = 8 / bits;
    if (c->log_lo == NULL) return 0;
    for (int r = 0; r < per * q; r++) {
        uintptr_t row = (uintptr_t)(log + r * ls);
        if (row < (uintptr_t)c->log_lo || row + LANES > (uintptr_t)c->log_hi) return 0;
    }
    _Alignas(16) uint8_t tmp[MAX_Q][LANES];
    __m128i v[MAX_Q] = {0}; /* (q of them are set) */
    pack_lines(v, log, ls, m, bits, q);
    for (int j = 0; j < q; j++) _mm_store_si128((__m128i *)tmp[j], v[j]);
    for (Py_ssize_t i = 0; i < n; i++) {
        for (int j = 0; j < q; j++) out[i * P + j] = tmp[j][i];
        if (own) memset(out + i * P + q, c->pad_byte, (size_t)(P - q));
    }
    return 1;
}

/* n < 16 bytes from src to dst in fixed-size moves (no call of the library's memcpy). */
ALWAYS_INLINE void copy_short(char *dst, const uint8_t *src, Py_ssize_t n)
{
    if (n & 8) {
        memcpy(dst, src, 8);
        dst += 8, src += 8;
    }
    if (n & 4) {
        memcpy(dst, src, 4);
        dst += 4, src += 4;
    }
    if (n & 2) {
        memcpy(dst, src, 2);
        dst += 2, src += 2;
    }
    if (n & 1) *dst = (char)*src;
}

/* unpack_block for the last n < 16 columns of one row of lines: the columns' bytes read one
 * by one, unpacked in registers, and each logical row's first n bytes stored. */
ALWAYS_INLINE void unpack_tail(const uint8_t *in, char *log, Py_ssize_t P, Py_ssize_t ls, const int bits,
                               const int q, __m128i m, __m128i half, Py_ssize_t n)
{
    const int per = 8 / bits;
    _Alignas(16) uint8_t row[LANES];
    __m128i v[MAX_Q];
    if (q == 4) { /* a word per column, built in registers (a vector load of bytes just stored
                   * stalls), then as load_columns */
        __m128i o[4], y[4];
        int32_t w[LANES];
        for (Py_ssize_t i = 0; i < LANES; i++) {
            w[i] = 0;
            if (i < n) memcpy(&w[i], in + i * P, 4);
        }
        for (int i = 0; i < 4; i++) o[i] = _mm_setr_epi32(w[4 * i], w[4 * i + 1], w[4 * i + 2], w[4 * i + 3]);
        interleave4(y, o);
        interleave4(v, y);
    } else {
        _Alignas(16) uint8_t tmp[MAX_Q][LANES];
        for (Py_ssize_t i = 0; i < LANES; i++)
            for (int j = 0; j < q; j++) tmp[j][i] = i < n ? in[i * P + j] : 0;
        for (int j = 0; j < q; j++) v[j] = _mm_load_si128((const __m128i *)tmp[j]);
    }
    for (int j = 0; j < q; j++) {
        for (int k = 0; k < per; k++) {
            __m128i x = _mm_and_si128(_mm_srl_epi16(v[j], _mm_cvtsi32_si128(k * bits)), m);
            _mm_store_si128((__m128i *)row, _mm_sub_epi8(_mm_xor_si128(x, half), half));
            copy_short(log + (j * per + k) * ls, row, n);
        }
    }
}

#endif /* HAVE_SSE2 */

#endif /* TENSORLAYOUT_PACK_LINES_H */
