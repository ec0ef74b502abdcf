/* The sub-byte packing kernel of tensorlayout.relayout: E(4) / E(2) / E(1) layouts in one pass.
 *
 * pack(dst, src, tasks, bits, nslots, pad, serial, stream) writes the logical codes of src
 * (one element per byte, its low `bits` bits count) into the packed byte buffer dst, 8/bits
 * slots per byte, the first slot in the low bits; unpack(dst, src, tasks, bits, nslots,
 * signed, stream) reads them back into the logical bytes dst, sign-extended for signed
 * types. A task is (kind, first slot, logical byte offset, shape, slot strides, logical byte
 * strides), the axes in loop order, outermost first. Kinds: 0 data; 1 pad: the code `pad`
 * into every slot (the logical side is ignored); 2 data that owns its column groups: the
 * last axis has slot stride 1 and n slots, the axis before it (the columns) slot stride
 * G >= n, and every column writes its whole group, its n codes then the pad code into its
 * next G - n slots, on every path below (pack refuses a kind-2 task of another shape). The
 * caller knows those slots are padding no other task writes; a plan whose column groups
 * cover the buffer needs no fill first. Before any memory is touched, every task is checked
 * to stay inside both buffers: slots in [0, nslots) (a kind-2 task's groups whole, the last
 * column's included), nslots within the packed buffer, logical bytes inside the logical
 * array (any strides). The GIL is released while moving data.
 *
 * The inner loop is chosen per task:
 *   aligned     the last axis has slot stride 1 and a multiple of 8/bits slots, the first
 *               slot and every other slot stride are multiples too: whole bytes, never read:
 *     columns   ... the axis before it contiguous on the logical side (the TPU's (8,1) and
 *               (32,1) sub-tiles): 16 columns at a time in SSE2 registers, rows shifted and
 *               or-ed into bytes, then interleaved into the buffer's byte order. When the
 *               columns are further apart than their bytes (u1 (32,1) holds 8 rows in 32
 *               slots) the bytes between are not ours and are written one by one, unless
 *               the task is of kind 2: then they get the pad code in the same vector
 *               stores (the tail columns', one by one). Adjacent columns (and owned gaps
 *               of 2 or 4 bytes) go 32 at a time in AVX2 registers first where the CPU has
 *               them (s4[2097152]{0:T(1024)(128)(8,1)E(4)}: 2.1 -> 1.1x a copy). Fewer than
 *               16 columns whose rows of lines continue their logical run are merged with
 *               them into one run of columns at tabled offsets (table_columns_k);
 *     words     ... the last axis 8 slots contiguous on the logical side (one 64-bit word),
 *               the axis before it (the columns) at most WORDS_MAX_P bytes apart (a transposing
 *               layout's (8,1) or (32,1) sub-tile): each column's word packed in a register,
 *               16 columns at a time for every row of lines, so that each row writes (reads)
 *               16 neighbouring columns and the next row continues the logical rows they read
 *               (write), 8 rows at a time where they continue them (one logical line per
 *               column), the buffer's lines fetched ahead (u1[3000,4000]{0,1:T(8,128)(32,1)
 *               E(1)}: rows of lines 12 KiB apart, in one L1 set, byte by byte: 13-16x a
 *               copy, now 2-3x). A kind-2 task's gaps go in the same stores; fewer than 8
 *               rows a word where the rest is the column's gap (kind 2), or unpacking
 *               (u4[900787,5]{0,1:T(8,128)(8,1)E(4)}: slot by slot 105 / 63x a copy, now 30 / 36x);
 *               faster forms first (_pack_bits.h): E(4) adjacent columns in 8 x 8 (AVX2) or 4 x 4
 *               register transposes (s4[5,125,21,157]{1,3,0,2:T(64,128)(8,1)E(4)}: 7.9 / 7.8 ->
 *               3.3 / 3.8x a copy) and a ragged sub-tile's short words 4 columns at a time, and columns whose logical bytes follow each other as one staged run
 *               (u1[1048576,4]{0,1:T(8,128)(32,1)E(1)}: 9.3 / 10.2 -> 2.3 / 2.9x); E(1) words of
 *               16 columns x 8 rows of lines in movemasks and byte transposes (u1[6936,205]{0,1:
 *               T(8,128)(32,1)E(1)}: 4.8 / 6.9 -> 3.0 / 2.9x);
 *     contiguous  ... the last axis contiguous on the logical side: 16 bytes of codes per
 *               SSE2 step (shifts, masks and packs), the rest 8 codes per 64-bit word;
 *     bytes     ... otherwise byte by byte;
 *   partial     columns (as above) of n rows, n not a multiple of 8/bits, whole bytes otherwise:
 *               packed when of kind 2 (the partial byte's other slots are the column's gap, the
 *               pad code), unpacked reading the partial byte whole (a ragged sub-tile: s4[5,5,N]
 *               {2,1,0:T(8,128)(8,1)E(4)} holds 5 of 8 rows; slot by slot it was 30 / 23x a copy);
 *   slots       anything else (ragged edges): slot by slot, read-modify-write of the byte.
 *               Such tasks share bytes with others, so pack accepts them only when called
 *               with serial=True, which the caller does from one thread.
 * Outside the columns path a kind-2 task's gaps are written after each row of its lines
 * (whole bytes, or slot by slot on the slots path).
 * The axis outside the inner one(s) runs inside the line loops (no dispatch per line). With
 * stream, stores bypass the cache: pack's contiguous byte runs, and unpack's logical rows
 * where whole 64-byte lines of long rows can be written one after the other (partial lines
 * measured far slower). A call may share its tasks of whole bytes with the kernel's own threads
 * (workers > 1, _pool.h), which claim them one at a time.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#define HAVE_SSE2 1
#else
#define HAVE_SSE2 0
#endif
#if (defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) || defined(_M_X64)
#define HAVE_SWAR 1 /* the 64-bit word tricks assume little-endian byte order */
#else
#define HAVE_SWAR 0
#endif
#include "_pack_bits.h"
#include "_pool.h"
#include "_task.h"

#if defined(__GNUC__)
#define ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define ALWAYS_INLINE static inline
#endif

#define MAX_DIMS 32
#define LANES 16 /* columns per register */
#define MAX_Q 8  /* bytes per column the register path holds */
#define STAGE_BYTES 4096 /* L1 staging area for runs of contiguous lines */
#define WORDS_COLUMNS 16 /* words: columns per block (see words) */
#define WORDS_AHEAD 8    /* words: rows of lines a line of the buffer is fetched ahead, into L2 only: rows
                          * of lines a multiple of 4 KiB apart share one L1 set, which the group's 8 rows
                          * fill (u1[2000,3001]{0,1:T(8,128)(32,1)E(1)}: 6.5 / 7.1 -> 5.1 / 5.9x a copy);
                          * into L1 where the copy streams (u1[21989,1352]{0,1:...}: 4.3 / 6.6 in L2,
                          * 3.7 / 5.5 in L1) */
#define WORDS_LOG_AHEAD 256 /* words: logical bytes a column's line is fetched ahead */
#define WORDS_LINE_ROWS 8 /* words: rows of lines whose words make a column's logical line */
#define WORDS_MAX_P 64   /* words: bytes per column at most (16 columns within a KiB) */
#define STREAM_MIN_RUN 1024 /* unpack streams rows at least this long (shorter: slower, measured) */

typedef struct {
    int ndim; /* -1: an empty task */
    int kind; /* 0 data, 1 pad, 2 data owning its column gaps */
    Py_ssize_t slot;
    char *log;
    Py_ssize_t shape[MAX_DIMS], ps[MAX_DIMS], ls[MAX_DIMS];
} task_t;

typedef struct {
    uint8_t *bytes; /* the packed buffer */
    int bits, per, sign, stream;
    unsigned mask;
    uint8_t pad;      /* pack: the pad code (pad tasks read it, with logical strides 0) */
    uint8_t pad_byte; /* ... repeated over a byte */
    uint64_t swar_mask[4]; /* after each level of the word trick, finest first */
    const char *log_lo, *log_hi; /* pack: the logical array's bytes, first to past the last (a
                                  * columns tail reads whole vectors inside them) */
    const uint8_t *bytes_hi;     /* past the packed buffer's last byte */
} ctx_t;

typedef enum { L_COLUMNS, L_PARTIAL, L_WORDS, L_CONTIGUOUS, L_BYTES, L_SLOTS } line_t;

/* The innermost outer axis, which runs inside a line function (one call per row of lines). */
typedef struct {
    Py_ssize_t n, ps, ls; /* extent, slot stride, logical byte stride */
} rows_t;

static int aligned(const task_t *t, int per)
{
    int last = t->ndim - 1;
    if (last < 0 || t->ps[last] != 1 || t->shape[last] % per || t->slot % per) return 0;
    for (int k = 0; k < last; k++)
        if (t->ps[k] % per) return 0;
    return 1;
}

/* Columns of n rows, n not a multiple of per, whole bytes otherwise: packed of kind 2 (the
 * partial byte's other slots are the column's gap, padding), or unpacked (the partial byte is
 * read whole, inside the buffer as its first slot is). */
/* Slot stride 1 innermost, the first slot and every other slot stride whole bytes. */
static int grouped(const task_t *t, int per)
{
    int last = t->ndim - 1;
    if (last < 0 || t->ps[last] != 1 || t->slot % per) return 0;
    for (int k = 0; k < last; k++)
        if (t->ps[k] % per) return 0;
    return 1;
}

static int partial(const task_t *t, int per, int unpack)
{
    int last = t->ndim - 1;
    if (!HAVE_SSE2 || last < 1 || t->ps[last] != 1 || t->shape[last] % per == 0 || t->slot % per) return 0;
    for (int k = 0; k < last; k++)
        if (t->ps[k] % per) return 0;
    Py_ssize_t q = (t->shape[last] + per - 1) / per;
    return t->kind == (unpack ? 0 : 2) && t->ls[last - 1] == 1 && t->ps[last - 1] >= q * per && q <= MAX_Q;
}

/* A kind-2 task whose column groups are whole bytes: it writes whole bytes on any path (the
 * slots path included), so it may share a call with other threads' tasks. */
static int owns_whole_bytes(const task_t *t, int per)
{
    int last = t->ndim - 1;
    if (t->kind != 2 || last < 1 || t->ps[last] != 1 || t->slot % per) return 0;
    for (int k = 0; k < last; k++)
        if (t->ps[k] % per) return 0;
    return 1;
}

static line_t choose(const task_t *t, int per, int unpack)
{
    if (partial(t, per, unpack)) return L_PARTIAL;
    int last = t->ndim - 1;
    if (HAVE_SWAR && last >= 1 && t->ls[last] == 1 && t->shape[last] < 8 && t->ps[last - 1] >= 8
        && t->ps[last - 1] <= WORDS_MAX_P * per && t->kind == (unpack ? 0 : 2) && grouped(t, per))
        return L_WORDS; /* fewer than 8 rows: the word's other codes are the column's gap (pad) */
    if (!aligned(t, per)) return L_SLOTS;
    if (HAVE_SWAR && t->ls[last] == 1 && t->shape[last] == 8 && last >= 1 && t->ps[last - 1] >= 8
        && t->ps[last - 1] <= WORDS_MAX_P * per)
        return L_WORDS;

    if (t->ls[last] == 1) return L_CONTIGUOUS;
    if (HAVE_SSE2 && last >= 1 && t->ls[last - 1] == 1 && t->ps[last - 1] > 0
        && t->shape[last] / per <= MAX_Q)
        return L_COLUMNS;
    return L_BYTES;
}

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

/* ---- short columns merged with the axis continuing them (table columns) ------------------
 * Fewer than 16 logically contiguous columns whose rows of lines continue their logical run
 * (rows->ls == nc: a short minor dim moved outermost by the layout, the next dim with it) are
 * one run of rows->n * nc columns, 16 a block, each column's bytes at its own offset (column
 * k % nc, row k / nc), instead of a tail of nc columns per row of lines
 * (u4[65,201,23,5]{0,1,2,3:T(8,128)(8,1)E(4)}: 5 columns a row, 17-19x a copy). */
static int merges(const rows_t *rows, Py_ssize_t nc, Py_ssize_t P, int per, int own, int q)
{
    return nc < LANES && rows->n > 1 && rows->ls == nc && rows->ps % per == 0 && !own && q <= 4 && P >= q;
}

/* The byte offsets of columns p0.. p0+n of the merged run (nc a row, P apart; rows pb apart). */
static inline void table_offsets(Py_ssize_t *off, Py_ssize_t p0, Py_ssize_t n, Py_ssize_t nc, Py_ssize_t P,
                                 Py_ssize_t pb)
{
    Py_ssize_t d = p0 / nc, e = p0 % nc;
    for (Py_ssize_t i = 0; i < n; i++) {
        off[i] = e * P + d * pb;
        if (++e == nc) e = 0, d++;
    }
}

/* n <= 16 contiguous columns from log, column i's q bytes to out + off[i]: packed in registers
 * where every row's 16 bytes lie inside the logical array, else byte by byte. */
ALWAYS_INLINE void pack_table_k(const ctx_t *c, uint8_t *out, const char *log, const Py_ssize_t *off,
                                Py_ssize_t n, Py_ssize_t ls, __m128i m, const int bits, const int q)
{
    const int per = 8 / bits;
    int inside = c->log_lo != NULL;
    for (int r = 0; r < per * q && inside; r++) {
        uintptr_t row = (uintptr_t)(log + r * ls);
        inside = row >= (uintptr_t)c->log_lo && row + LANES <= (uintptr_t)c->log_hi;
    }
    if (!inside) {
        for (Py_ssize_t i = 0; i < n; i++)
            for (int j = 0; j < q; j++) out[off[i] + j] = gather_k(log + j * per * ls + i, ls, bits);
        return;
    }
    __m128i v[MAX_Q] = {0};
    pack_lines(v, log, ls, m, bits, q);
    if (q == 4) {
        _Alignas(16) uint8_t w[4 * LANES];
        __m128i y[4];
        interleave4(y, v);
        for (int i = 0; i < 4; i++) _mm_store_si128((__m128i *)(w + 16 * i), y[i]);
        for (Py_ssize_t i = 0; i < n; i++) memcpy(out + off[i], w + 4 * i, 4);
    } else {
        _Alignas(16) uint8_t tmp[MAX_Q][LANES];
        for (int j = 0; j < q; j++) _mm_store_si128((__m128i *)tmp[j], v[j]);
        for (Py_ssize_t i = 0; i < n; i++)
            for (int j = 0; j < q; j++) out[off[i] + j] = tmp[j][i];
    }
}

/* The other way: column i's q bytes from in + off[i] -> per*q logical rows of n codes. */
ALWAYS_INLINE void unpack_table_k(const uint8_t *in, char *log, const Py_ssize_t *off, Py_ssize_t n, Py_ssize_t ls,
                                  const int bits, const int q, __m128i m, __m128i half)
{
    const int per = 8 / bits;
    __m128i v[MAX_Q];
    if (q == 4) {
        __m128i o[4], y[4];
        int32_t w[LANES];
        for (Py_ssize_t i = 0; i < LANES; i++) {
            w[i] = 0;
            if (i < n) memcpy(&w[i], in + off[i], 4);
        }
        for (int i = 0; i < 4; i++) o[i] = _mm_setr_epi32(w[4 * i], w[4 * i + 1], w[4 * i + 2], w[4 * i + 3]);
        interleave4(y, o);
        interleave4(v, y);
    } else {
        _Alignas(16) uint8_t tmp[MAX_Q][LANES];
        for (Py_ssize_t i = 0; i < LANES; i++)
            for (int j = 0; j < q; j++) tmp[j][i] = i < n ? in[off[i] + j] : 0;
        for (int j = 0; j < q; j++) v[j] = _mm_load_si128((const __m128i *)tmp[j]);
    }
    _Alignas(16) uint8_t row[LANES];
    for (int j = 0; j < q; j++)
        for (int k = 0; k < per; k++) {
            __m128i x = _mm_and_si128(_mm_srl_epi16(v[j], _mm_cvtsi32_si128(k * bits)), m);
            x = _mm_sub_epi8(_mm_xor_si128(x, half), half);
            if (n == LANES) {
                _mm_storeu_si128((__m128i *)(log + (j * per + k) * ls), x);
            } else {
                _mm_store_si128((__m128i *)row, x);
                copy_short(log + (j * per + k) * ls, row, n);
            }
        }
}

/* The merged run, packed or unpacked (the caller checked merges()). */
ALWAYS_INLINE void table_columns_k(const ctx_t *c, uint8_t *bytes, char *log, const rows_t *rows, Py_ssize_t nc,
                                   Py_ssize_t P, Py_ssize_t ls, int unpack, const int bits, const int q)
{
    const Py_ssize_t total = rows->n * nc, pb = rows->ps / (8 / bits);
    const __m128i m = _mm_set1_epi8((char)((1u << bits) - 1));
    const __m128i half = _mm_set1_epi8((char)(c->sign ? 1u << (bits - 1) : 0u));
    Py_ssize_t off[LANES];
    for (Py_ssize_t p0 = 0; p0 < total; p0 += LANES) {
        Py_ssize_t n = total - p0 < LANES ? total - p0 : LANES;
        table_offsets(off, p0, n, nc, P, pb);
        if (unpack) unpack_table_k(bytes, log + p0, off, n, ls, bits, q, m, half);
        else pack_table_k(c, bytes, log + p0, off, n, ls, m, bits, q);
    }
}

/* ---- adjacent columns (P == q) 32 at a time in AVX2 registers, where the CPU has them -------
 * The same packing as pack_block / unpack_block, each 256-bit register two 16-column halves
 * (AVX2 shuffles stay inside 128-bit lanes), the halves put in order by lane permutes on the
 * way out (in). Chosen at import (use_avx2); the SSE2 blocks do the last < 32 columns. */
#if HAVE_SSE2 && defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define HAVE_AVX2_PATH 1
#include <immintrin.h>
#define AVX2 __attribute__((target("avx2")))
#define AVX2_INLINE AVX2 static inline __attribute__((always_inline))
static int use_avx2;

AVX2_INLINE void put32(uint8_t *p, __m256i x, int stream)
{
    if (stream) _mm256_stream_si256((__m256i *)p, x); else _mm256_storeu_si256((__m256i *)p, x);
}

/* 32 columns of per*q logical rows (ls apart) -> their 32*P bytes, column by column: q bytes
 * of codes, then P - q pad bytes (a column owning its gaps). */
AVX2_INLINE void pack32_k(uint8_t *out, const char *log, Py_ssize_t ls, int stream, __m256i pad, const int bits,
                          const int q, const int P)
{
    const int per = 8 / bits;
    const __m256i m = _mm256_set1_epi8((char)((1u << bits) - 1));
    __m256i v[4];
    for (int j = 0; j < q; j++) {
        const char *row = log + j * per * ls;
        __m256i acc = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)row), m);
        for (int k = 1; k < per; k++) {
            __m256i x = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(row + k * ls)), m);
            acc = _mm256_or_si256(acc, _mm256_slli_epi16(x, k * bits));
        }
        v[j] = acc;
    }
    for (int j = q; j < P; j++) v[j] = pad;
    int st = stream && ((uintptr_t)out & 31) == 0;
    if (P == 1) {
        put32(out, v[0], st);
    } else if (P == 2) {
        __m256i lo = _mm256_unpacklo_epi8(v[0], v[1]), hi = _mm256_unpackhi_epi8(v[0], v[1]);
        put32(out, _mm256_permute2x128_si256(lo, hi, 0x20), st);
        put32(out + 32, _mm256_permute2x128_si256(lo, hi, 0x31), st);
    } else {
        __m256i a = _mm256_unpacklo_epi8(v[0], v[1]), b = _mm256_unpackhi_epi8(v[0], v[1]);
        __m256i e = _mm256_unpacklo_epi8(v[2], v[3]), f = _mm256_unpackhi_epi8(v[2], v[3]);
        __m256i y0 = _mm256_unpacklo_epi16(a, e), y1 = _mm256_unpackhi_epi16(a, e);
        __m256i y2 = _mm256_unpacklo_epi16(b, f), y3 = _mm256_unpackhi_epi16(b, f);
        put32(out, _mm256_permute2x128_si256(y0, y1, 0x20), st);
        put32(out + 32, _mm256_permute2x128_si256(y2, y3, 0x20), st);
        put32(out + 64, _mm256_permute2x128_si256(y0, y1, 0x31), st);
        put32(out + 96, _mm256_permute2x128_si256(y2, y3, 0x31), st);
    }
}

/* The 4-way byte interleave of interleave4, in each 128-bit lane. */
AVX2_INLINE void interleave4_256(__m256i *y, const __m256i *x)
{
    __m256i a = _mm256_unpacklo_epi8(x[0], x[1]), b = _mm256_unpackhi_epi8(x[0], x[1]);
    __m256i e = _mm256_unpacklo_epi8(x[2], x[3]), f = _mm256_unpackhi_epi8(x[2], x[3]);
    y[0] = _mm256_unpacklo_epi16(a, e);
    y[1] = _mm256_unpackhi_epi16(a, e);
    y[2] = _mm256_unpacklo_epi16(b, f);
    y[3] = _mm256_unpackhi_epi16(b, f);
}

/* 32 columns' 32*P bytes (the first q of each column's P) -> per*q logical rows of 32 codes
 * (ls apart), sign-extended by half. */
AVX2_INLINE void unpack32_k(char *log, const uint8_t *in, Py_ssize_t ls, __m256i half, const int bits,
                            const int q, const int P)
{
    const int per = 8 / bits;
    const __m256i m = _mm256_set1_epi8((char)((1u << bits) - 1));
    const __m256i *p = (const __m256i *)in;
    __m256i v[4];
    if (P == 1) {
        v[0] = _mm256_loadu_si256(p);
    } else if (P == 2) {
        __m256i o0 = _mm256_loadu_si256(p), o1 = _mm256_loadu_si256(p + 1), ff = _mm256_set1_epi16(0xFF);
        __m256i a = _mm256_permute2x128_si256(o0, o1, 0x20), b = _mm256_permute2x128_si256(o0, o1, 0x31);
        v[0] = _mm256_packus_epi16(_mm256_and_si256(a, ff), _mm256_and_si256(b, ff));
        if (q == 2) v[1] = _mm256_packus_epi16(_mm256_srli_epi16(a, 8), _mm256_srli_epi16(b, 8));
    } else {
        __m256i o[4], a[4], y[4];
        for (int i = 0; i < 4; i++) o[i] = _mm256_loadu_si256(p + i);
        a[0] = _mm256_permute2x128_si256(o[0], o[2], 0x20);
        a[1] = _mm256_permute2x128_si256(o[0], o[2], 0x31);
        a[2] = _mm256_permute2x128_si256(o[1], o[3], 0x20);
        a[3] = _mm256_permute2x128_si256(o[1], o[3], 0x31);
        interleave4_256(y, a);
        interleave4_256(v, y);
    }
    for (int j = 0; j < q; j++)
        for (int k = 0; k < per; k++) {
            __m256i x = _mm256_and_si256(_mm256_srli_epi16(v[j], k * bits), m);
            x = _mm256_sub_epi8(_mm256_xor_si256(x, half), half);
            _mm256_storeu_si256((__m256i *)(log + (j * per + k) * ls), x);
        }
}

/* The first nc - nc % 32 columns of every row of lines (q bytes each, P apart, the P - q
 * between them owned when P > q); returns the columns done. */
AVX2_INLINE Py_ssize_t columns32_k(const ctx_t *c, uint8_t *out0, char *log0, const rows_t *rows, Py_ssize_t nc,
                                   Py_ssize_t ls, int unpack, const int bits, const int q, const int P)
{
    const Py_ssize_t pb = rows->ps / (8 / bits), done = nc - nc % 32;
    const __m256i half = _mm256_set1_epi8((char)(c->sign ? 1u << (bits - 1) : 0u));
    const __m256i pad = _mm256_set1_epi8((char)c->pad_byte);
    for (Py_ssize_t r = 0; r < rows->n; r++) {
        uint8_t *out = out0 + r * pb;
        char *log = log0 + r * rows->ls;
        if (unpack)
            for (Py_ssize_t col = 0; col < done; col += 32)
                unpack32_k(log + col, out + col * P, ls, half, bits, q, P);
        else
            for (Py_ssize_t col = 0; col < done; col += 32)
                pack32_k(out + col * P, log + col, ls, c->stream, pad, bits, q, P);
    }
    return done;
}

#define COLUMNS32(B, Q, P) (((B) * 8 + (Q)) * 8 + (P))
AVX2 static Py_ssize_t columns32(const ctx_t *c, uint8_t *out, char *log, const rows_t *rows, Py_ssize_t nc,
                                 Py_ssize_t ls, int unpack, int q, int P)
{
    switch (COLUMNS32(c->bits, q, P)) {
#define CASE(B, Q, P) case COLUMNS32(B, Q, P): return columns32_k(c, out, log, rows, nc, ls, unpack, B, Q, P)
    CASE(1, 1, 1); CASE(1, 2, 2); CASE(1, 4, 4); CASE(1, 1, 2); CASE(1, 1, 4); CASE(1, 2, 4);
    CASE(2, 1, 1); CASE(2, 2, 2); CASE(2, 4, 4); CASE(2, 1, 2); CASE(2, 1, 4); CASE(2, 2, 4);
    CASE(4, 1, 1); CASE(4, 2, 2); CASE(4, 4, 4); CASE(4, 1, 2); CASE(4, 1, 4); CASE(4, 2, 4);
#undef CASE
    default: return 0;
    }
}

/* Columns done in AVX2 first: adjacent (P == q), or P of 2 or 4 bytes whose gaps are owned (a
 * kind-2 task; unpacking reads only the codes), one row of lines at a time (column_rows 1),
 * unpacking only where nothing streams (its SSE2 loop streams whole lines). */
static Py_ssize_t avx2_first(const ctx_t *c, uint8_t *out, char *log, const rows_t *rows, Py_ssize_t nc,
                             Py_ssize_t P, Py_ssize_t ls, int unpack, int q, int own, Py_ssize_t rb)
{
    int fits = P == q || ((own || unpack) && (P == 2 || P == 4) && q < P);
    if (!use_avx2 || !fits || rb != 1 || nc < 32 || (unpack && c->stream)) return 0;
    return columns32(c, out, log, rows, nc, ls, unpack, q, (int)P);
}
#else
static Py_ssize_t avx2_first(const ctx_t *c, uint8_t *out, char *log, const rows_t *rows, Py_ssize_t nc,
                             Py_ssize_t P, Py_ssize_t ls, int unpack, int q, int own, Py_ssize_t rb)
{
    (void)c, (void)out, (void)log, (void)rows, (void)nc, (void)P, (void)ls, (void)unpack, (void)q, (void)own, (void)rb;
    return 0;
}
#endif

/* Columns a line or more apart (P >= 64) whose rows of lines lie side by side (at most 16 bytes
 * apart) go COLUMN_ROWS rows at a time for each block of 16 columns, so that each column's line
 * is written (read) in a row rather than once per row of lines, in turn with every other
 * column's (s4[4303,41,469]{0,1,2:T(8,128)(8,1)E(4)}: columns 102 KiB apart; 128 rows, eight
 * lines a column, measured 4.4 / 3.1x a copy to / from, 16 rows 5.6 / 4.1x, 256 rows 6.6 / 4.5x;
 * s4[300,41,469]{0,1,2:...} 5.5 / 5.1x against 8.5 / 7.7x). */
#define COLUMN_ROWS 128
static Py_ssize_t column_rows(const rows_t *rows, Py_ssize_t P, int per)
{
    return P >= 64 && rows->n > 1 && rows->ps % per == 0 && rows->ps / per <= 16 ? COLUMN_ROWS : 1;
}

/* Far columns whose rows of lines lie side by side (rows q bytes apart, q <= STAGED_Q): a block
 * of 16 columns' rows of lines (un)packed through an L1 stage laid out column by column, each
 * column's run of the buffer written (read) in one go, not 16 columns in turn (columns 8 KiB
 * apart share their cache sets: u4[1000,16,300]{0,1,2:T(8,128)(8,1)E(4)}, 17x a copy). */
#define STAGED_Q 4
ALWAYS_INLINE void pack_far_staged(const ctx_t *c, uint8_t *out, const char *log, Py_ssize_t P, Py_ssize_t ls,
                                   Py_ssize_t rls, Py_ssize_t nr, __m128i m, const int bits, const int q)
{
    _Alignas(64) uint8_t stage[LANES * COLUMN_ROWS * STAGED_Q];
    const Py_ssize_t S = COLUMN_ROWS * q; /* stage bytes a column */
    ctx_t cached = *c;
    cached.stream = 0;
    for (Py_ssize_t r = 0; r < nr; r++) pack_block(&cached, stage + r * q, log + r * rls, S, ls, 0, m, bits, q);
    for (int i = 0; i < LANES; i++) memcpy(out + i * P, stage + i * S, (size_t)(nr * q));
}


/* The columns loop for constant bits and q (unrolled by the compiler). */
ALWAYS_INLINE void pack_columns_k(const ctx_t *c, const task_t *t, uint8_t *out0, const char *log0,
                                  const rows_t *rows, const int bits, const int q)
{
    const int per = 8 / bits, last = t->ndim - 1;
    Py_ssize_t nc = t->shape[last - 1], P = t->ps[last - 1] / per, ls = t->ls[last];
    __m128i m = _mm_set1_epi8((char)((1u << bits) - 1));
    /* the gaps between columns are ours: P bytes per column (the checked span includes the
     * last column's gaps) */
    int own = t->kind == 2 && P > q;
    const Py_ssize_t rb = column_rows(rows, P, per), pb = rows->ps / per;
    if (merges(rows, nc, P, per, own, q)) {
        table_columns_k(c, out0, (char *)log0, rows, nc, P, ls, 0, bits, q);
        return;
    }
    const Py_ssize_t first = avx2_first(c, out0, (char *)log0, rows, nc, P, ls, 0, q, own, rb);
    for (Py_ssize_t r0 = 0; r0 < rows->n; r0 += rb) {
        Py_ssize_t r1 = rows->n - r0 < rb ? rows->n : r0 + rb, col = first;
        for (; rb > 1 && pb == q && q <= STAGED_Q && !own && col + LANES <= nc; col += LANES)
            pack_far_staged(c, out0 + r0 * pb + col * P, log0 + r0 * rows->ls + col, P, ls, rows->ls, r1 - r0, m,
                            bits, q);
        for (; col + LANES <= nc; col += LANES)
            for (Py_ssize_t r = r0; r < r1; r++)
                pack_block(c, out0 + r * pb + col * P, log0 + r * rows->ls + col, P, ls, own, m, bits, q);
        for (Py_ssize_t r = r0; col < nc && r < r1; r++) /* the tail as a block where it may */
            if (!pack_tail(c, out0 + r * pb + col * P, log0 + r * rows->ls + col, P, ls, own, m, bits, q, nc - col))
                for (Py_ssize_t k = col; k < nc; k++) {
                    uint8_t *out = out0 + r * pb;
                    const char *log = log0 + r * rows->ls;
                    for (int j = 0; j < q; j++) out[k * P + j] = gather_k(log + j * per * ls + k, ls, bits);
                    if (own) memset(out + k * P + q, c->pad_byte, (size_t)(P - q));
                }
    }
}

/* One block of 16 columns: per*q rows of 16 codes. */
ALWAYS_INLINE void unpack_block(const uint8_t *in, char *log, Py_ssize_t P, Py_ssize_t ls, const int bits,
                                const int q, __m128i m, __m128i half, int wide)
{
    const int per = 8 / bits;
    __m128i v[MAX_Q] = {0}; /* (q of them are set) */
    load_columns(in, v, P, q, wide);
    for (int j = 0; j < q; j++)
        for (int k = 0; k < per; k++) {
            __m128i x = _mm_and_si128(_mm_srl_epi16(v[j], _mm_cvtsi32_si128(k * bits)), m);
            x = _mm_sub_epi8(_mm_xor_si128(x, half), half); /* sign-extends (no-op when 0) */
            _mm_storeu_si128((__m128i *)(log + (j * per + k) * ls), x);
        }
}

ALWAYS_INLINE void unpack_far_staged(char *log, const uint8_t *in, Py_ssize_t P, Py_ssize_t ls, Py_ssize_t rls,
                                     Py_ssize_t nr, __m128i m, __m128i half, const int bits, const int q)
{
    _Alignas(64) uint8_t stage[LANES * COLUMN_ROWS * STAGED_Q];
    const Py_ssize_t S = COLUMN_ROWS * q;
    for (int i = 0; i < LANES; i++) memcpy(stage + i * S, in + i * P, (size_t)(nr * q));
    for (Py_ssize_t r = 0; r < nr; r++) unpack_block(stage + r * q, log + r * rls, S, ls, bits, q, m, half, 0);
}

ALWAYS_INLINE void unpack_columns_k(const ctx_t *c, const task_t *t, char *log0, const uint8_t *in0,
                                    const rows_t *rows, const int bits, const int q)
{
    const int per = 8 / bits, last = t->ndim - 1;
    Py_ssize_t nc = t->shape[last - 1], P = t->ps[last - 1] / per, ls = t->ls[last];
    __m128i m = _mm_set1_epi8((char)((1u << bits) - 1));
    __m128i half = _mm_set1_epi8((char)(c->sign ? 1u << (bits - 1) : 0u));
    const Py_ssize_t rb = column_rows(rows, P, per), pb = rows->ps / per;
    if (merges(rows, nc, P, per, 0, q)) {
        table_columns_k(c, (uint8_t *)in0, log0, rows, nc, P, ls, 1, bits, q);
        return;
    }
    for (Py_ssize_t r0 = 0; rb > 1 && r0 < rows->n; r0 += rb) { /* far columns (column_rows) */
        Py_ssize_t r1 = rows->n - r0 < rb ? rows->n : r0 + rb, col = 0;
        for (; pb == q && q <= STAGED_Q && col + LANES <= nc; col += LANES)
            unpack_far_staged(log0 + r0 * rows->ls + col, in0 + r0 * pb + col * P, P, ls, rows->ls, r1 - r0, m, half,
                              bits, q);
        for (; col + LANES <= nc; col += LANES)
            for (Py_ssize_t r = r0; r < r1; r++)
                unpack_block(in0 + r * pb + col * P, log0 + r * rows->ls + col, P, ls, bits, q, m, half,
                             col + LANES < nc);
        for (Py_ssize_t r = r0; col < nc && r < r1; r++)
            unpack_tail(in0 + r * pb + col * P, log0 + r * rows->ls + col, P, ls, bits, q, m, half, nc - col);
    }
    const Py_ssize_t first = avx2_first(c, (uint8_t *)in0, log0, rows, nc, P, ls, 1, q, 0, rb);
    for (Py_ssize_t r = 0; rb == 1 && r < rows->n; r++) {
        char *log = log0 + r * rows->ls;
        const uint8_t *in = in0 + r * (rows->ps / per);
        Py_ssize_t col = first;
        /* streaming: 4 blocks at a time, each row's 64-byte line stored one piece after the
         * other, so the write-combining buffers fill whole lines; only where every row's line
         * starts at the same column (after a head of plain blocks) */
        Py_ssize_t head = (Py_ssize_t)((64 - ((uintptr_t)log & 63)) & 63);
        int stream = c->stream && ls % 64 == 0 && head % LANES == 0 && nc >= STREAM_MIN_RUN;
        for (; stream && col < head && col + LANES <= nc; col += LANES)
            unpack_block(in + col * P, log + col, P, ls, bits, q, m, half, col + LANES < nc);
        for (; stream && col + 4 * LANES <= nc; col += 4 * LANES) {
            __m128i v[4][MAX_Q]; /* q of each are set (no zeroing: a memset per step measured slow) */
            for (int b = 0; b < 4; b++)
                load_columns(in + (col + b * LANES) * P, v[b], P, q, col + (b + 1) * LANES < nc);
            for (int j = 0; j < q; j++)
                for (int k = 0; k < per; k++) {
                    uint8_t *to = (uint8_t *)(log + (j * per + k) * ls + col);
                    int st = ((uintptr_t)to & 15) == 0;
                    for (int b = 0; b < 4; b++) {
                        __m128i x = _mm_and_si128(_mm_srl_epi16(v[b][j], _mm_cvtsi32_si128(k * bits)), m);
                        put(to + b * LANES, _mm_sub_epi8(_mm_xor_si128(x, half), half), st);
                    }
                }
        }
        for (; col + LANES <= nc; col += LANES)
            unpack_block(in + col * P, log + col, P, ls, bits, q, m, half, col + LANES < nc);
        if (col < nc) unpack_tail(in + col * P, log + col, P, ls, bits, q, m, half, nc - col);
    }
}

/* Dispatch to a copy specialised for bits (1, 2, 4) and q (1, 2, 4 bytes per column). */
#define SPECIALISE(CALL, C, T, ...)                                                          \
    do {                                                                                     \
        int q_ = (int)((T)->shape[(T)->ndim - 1] / (C)->per);                                \
        switch ((C)->bits * 8 + q_) {                                                        \
        case 9: CALL(C, T, __VA_ARGS__, 1, 1); break;                                        \
        case 10: CALL(C, T, __VA_ARGS__, 1, 2); break;                                       \
        case 12: CALL(C, T, __VA_ARGS__, 1, 4); break;                                       \
        case 17: CALL(C, T, __VA_ARGS__, 2, 1); break;                                       \
        case 18: CALL(C, T, __VA_ARGS__, 2, 2); break;                                       \
        case 20: CALL(C, T, __VA_ARGS__, 2, 4); break;                                       \
        case 33: CALL(C, T, __VA_ARGS__, 4, 1); break;                                       \
        case 34: CALL(C, T, __VA_ARGS__, 4, 2); break;                                       \
        case 36: CALL(C, T, __VA_ARGS__, 4, 4); break;                                       \
        default: CALL(C, T, __VA_ARGS__, (C)->bits, q_);                                     \
        }                                                                                    \
    } while (0)

static void pack_columns(const ctx_t *c, const task_t *t, uint8_t *out, const char *log, const rows_t *rows)
{
    SPECIALISE(pack_columns_k, c, t, out, log, rows);
}

static void unpack_columns(const ctx_t *c, const task_t *t, char *log, const uint8_t *in,
                           const rows_t *rows)
{
    SPECIALISE(unpack_columns_k, c, t, log, in, rows);
}
#endif

/* ---- slot by slot (read-modify-write) --------------------------------------------------- */

static void pack_slots(const ctx_t *c, Py_ssize_t slot, const char *log, Py_ssize_t n, Py_ssize_t ps,
                       Py_ssize_t ls)
{
    if (ps == 1 && ls == 0 && n > 2 * c->per) { /* one code into a run of slots (padding): the
                                                  * partial bytes at its ends slot by slot, whole
                                                  * bytes between set at once */
        Py_ssize_t head = (c->per - slot % c->per) % c->per, whole = (n - head) / c->per;
        uint8_t byte = 0;
        for (int j = 0; j < c->per; j++) byte |= (uint8_t)(((unsigned)(uint8_t)*log & c->mask) << (j * c->bits));
        pack_slots(c, slot, log, head, 1, 0);
        memset(c->bytes + (slot + head) / c->per, byte, (size_t)whole);
        pack_slots(c, slot + head + whole * c->per, log, n - head - whole * c->per, 1, 0);
        return;
    }
    const int lp = c->bits == 4 ? 1 : c->bits == 2 ? 2 : 3; /* log2(per): no division per slot */
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t s = slot + i * ps;
        unsigned sh = (unsigned)(s & (c->per - 1)) * (unsigned)c->bits;
        uint8_t *b = c->bytes + (s >> lp);
        unsigned v = (unsigned)(uint8_t)log[i * ls] & c->mask;
        *b = (uint8_t)((*b & ~(c->mask << sh)) | (v << sh));
    }
}

static void unpack_slots(const ctx_t *c, Py_ssize_t slot, char *log, Py_ssize_t n, Py_ssize_t ps,
                         Py_ssize_t ls)
{
    const int lp = c->bits == 4 ? 1 : c->bits == 2 ? 2 : 3;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t s = slot + i * ps;
        log[i * ls] = (char)code(c, (unsigned)c->bytes[s >> lp] >> ((s & (c->per - 1)) * c->bits));
    }
}

/* ---- words: 8 contiguous codes per column ------------------------------------------------ */
#if !HAVE_SSE2
static inline void copy_short(char *dst, const uint8_t *src, Py_ssize_t n) { memcpy(dst, src, (size_t)n); }
#endif

#if HAVE_SWAR
/* 8 codes (one per byte, little-endian) -> their 8*bits bits, for constant bits. */
ALWAYS_INLINE uint64_t word_pack(const ctx_t *c, uint64_t x, const int bits)
{
    if (bits == 1) /* bit 0 of byte k to bit 56 + k (no two products meet: no carries) */
        return ((x & 0x0101010101010101ULL) * 0x0102040810204080ULL) >> 56;
    if (bits == 4) {
        x &= 0x0F0F0F0F0F0F0F0FULL;
        x = (x | (x >> 4)) & 0x00FF00FF00FF00FFULL;
        x = (x | (x >> 8)) & 0x0000FFFF0000FFFFULL;
        return (x | (x >> 16)) & 0xFFFFFFFFULL;
    }
    return swar_pack(c, x);
}

/* A column's q = bits packed bytes y and, when it owns its gaps, the pad bytes up to P. */
ALWAYS_INLINE void word_store(uint8_t *out, uint64_t y, Py_ssize_t P, const int bits, int own, uint64_t pads)
{
    if (!own) {
        memcpy(out, &y, (size_t)bits);
    } else if (P == 4 && bits < 4) { /* u1 (32,1): the byte and 3 pad bytes in one store */
        uint32_t w = (uint32_t)(y | (pads << (8 * bits)));
        memcpy(out, &w, 4);
    } else if (P == 8) {
        uint64_t w = y | (pads << (8 * bits));
        memcpy(out, &w, 8);
    } else {
        memcpy(out, &y, (size_t)bits);
        if (P > bits) memset(out + bits, (int)(pads & 0xFF), (size_t)(P - bits));
    }
}

/* Columns c0.. c0+m of rows r0.. r0+k of lines: each column's words packed; with k == 8 and
 * rows continuing the columns' logical runs (line: 8 bytes on) a column's 64 logical bytes
 * are read in a row, one line. */
ALWAYS_INLINE void pack_words_rows(const ctx_t *c, uint8_t *out, const char *log, Py_ssize_t m, Py_ssize_t k,
                                   Py_ssize_t P, Py_ssize_t L, Py_ssize_t pb, Py_ssize_t rl, const int bits,
                                   int own, uint64_t pads, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < m; i++) {
        const char *ahead = log + i * L + WORDS_LOG_AHEAD; /* (prefetched inside the array only) */
        if (k == WORDS_LINE_ROWS && ahead >= c->log_lo && ahead < c->log_hi) __builtin_prefetch(ahead, 0, 3);
        for (Py_ssize_t r = 0; r < k; r++) {
            uint64_t x = pads; /* (fewer than 8 rows: the rest the pad code) */
            const char *at = log + i * L + r * rl;
            if (n == 8) {
                memcpy(&x, at, 8);
            } else if (at + 8 <= c->log_hi) { /* a whole word read inside the array, the rest masked */
                const uint64_t low = (1ULL << (8 * n)) - 1;
                memcpy(&x, at, 8);
                x = (x & low) | (pads & ~low);
            } else {
                copy_short((char *)&x, (const uint8_t *)at, n);
            }
            word_store(out + r * pb + i * P, word_pack(c, x, bits), P, bits, own, pads);
        }
    }
}

ALWAYS_INLINE void pack_words_k(const ctx_t *c, const task_t *t, uint8_t *out0, const char *log0,
                                const rows_t *rows, const int bits)
{
    const int per = 8 / bits, last = t->ndim - 1;
    const Py_ssize_t nc = t->shape[last - 1], P = t->ps[last - 1] / per, L = t->ls[last - 1];
    const Py_ssize_t pb = rows->ps / per, rl = rows->ls;
    const Py_ssize_t R = rl == 8 ? WORDS_LINE_ROWS : 1; /* rows a column's logical line holds */
    const Py_ssize_t n = t->shape[last]; /* rows a word (8, or fewer of kind 2) */
    const int own = t->kind == 2 && P > bits;
    const uint64_t pads = 0x0101010101010101ULL * c->pad_byte;
    for (Py_ssize_t c0 = 0; c0 < nc; c0 += WORDS_COLUMNS) {
        const Py_ssize_t m = nc - c0 < WORDS_COLUMNS ? nc - c0 : WORDS_COLUMNS;
        for (Py_ssize_t r = 0; r < rows->n; r += R) {
            const Py_ssize_t k = rows->n - r < R ? rows->n - r : R;
            uint8_t *out = out0 + r * pb + c0 * P;
            for (Py_ssize_t a = 0; a < k && r + WORDS_AHEAD + a < rows->n; a++)
                if (c->stream) __builtin_prefetch(out + (WORDS_AHEAD + a) * pb, 1, 3);
                else __builtin_prefetch(out + (WORDS_AHEAD + a) * pb, 1, 1);
            if (k == R && n == 8) /* (constant rows: the common case compiled on its own) */
                pack_words_rows(c, out, log0 + r * rl + c0 * L, m, R, P, L, pb, rl, bits, own, pads, 8);
            else
                pack_words_rows(c, out, log0 + r * rl + c0 * L, m, k, P, L, pb, rl, bits, own, pads, n);
        }
    }
}

/* q = bits packed bytes -> 8 codes, one per byte (sign-extended if signed). */
ALWAYS_INLINE uint64_t word_unpack(const ctx_t *c, uint64_t x, const int bits)
{
    if (bits == 1 && !c->sign) { /* byte k keeps bit k of the byte, then 0 or 1 */
        uint64_t y = ((x & 0xFF) * 0x0101010101010101ULL) & 0x8040201008040201ULL;
        return ((y + 0x7F7F7F7F7F7F7F7FULL) >> 7) & 0x0101010101010101ULL;
    }
    if (bits == 4) {
        x = (x | (x << 16)) & 0x0000FFFF0000FFFFULL;
        x = (x | (x << 8)) & 0x00FF00FF00FF00FFULL;
        x = (x | (x << 4)) & 0x0F0F0F0F0F0F0F0FULL;
        if (c->sign) x |= (x & 0x0808080808080808ULL) * 0x1E; /* bit 3 into bits 4-7 */
        return x;
    }
    return swar_unpack(c, x);
}

/* The low n < 8 bytes of y to `to`, in at most three fixed-size moves. */
static inline void put_low(char *to, uint64_t y, Py_ssize_t n)
{
    if (n & 4) {
        memcpy(to, &y, 4);
        to += 4;
        y >>= 32;
    }
    if (n & 2) {
        memcpy(to, &y, 2);
        to += 2;
        y >>= 16;
    }
    if (n & 1) *to = (char)(y & 0xFF);
}

/* unpack_words_rows: the same, the other way; a column's logical line written in a row, in
 * 16-byte stores that bypass the cache when streaming a line-aligned line. */
ALWAYS_INLINE void unpack_words_rows(const ctx_t *c, char *log, const uint8_t *in, Py_ssize_t m, Py_ssize_t k,
                                     Py_ssize_t P, Py_ssize_t L, Py_ssize_t pb, Py_ssize_t rl, const int bits,
                                     Py_ssize_t n)
{
    if (n < 8) { /* fewer rows: the bytes holding them read, n codes written */
        const size_t qn = (size_t)((n * bits + 7) / 8);
        for (Py_ssize_t i = 0; i < m; i++)
            for (Py_ssize_t r = 0; r < k; r++) {
                const uint8_t *from = in + r * pb + i * P;
                uint64_t x = from[0], y; /* built in a register (pieces stored then read whole stall) */
                for (size_t b = 1; b < qn; b++) x |= (uint64_t)from[b] << (8 * b);
                y = word_unpack(c, x, bits);
                put_low(log + i * L + r * rl, y, n);
            }
        return;
    }
    for (Py_ssize_t i = 0; i < m; i++) {
#if HAVE_SSE2
        if (k == WORDS_LINE_ROWS && rl == 8) {
            uint64_t y[WORDS_LINE_ROWS];
            for (Py_ssize_t r = 0; r < WORDS_LINE_ROWS; r++) {
                uint64_t x = 0;
                memcpy(&x, in + r * pb + i * P, (size_t)bits);
                y[r] = word_unpack(c, x, bits);
            }
            uint8_t *to = (uint8_t *)log + i * L;
            int st = c->stream && ((uintptr_t)to & 63) == 0;
            for (int h = 0; h < WORDS_LINE_ROWS / 2; h++)
                put(to + 16 * h, _mm_set_epi64x((long long)y[2 * h + 1], (long long)y[2 * h]), st);
            continue;
        }
#endif
        for (Py_ssize_t r = 0; r < k; r++) {
            uint64_t x = 0, y;
            memcpy(&x, in + r * pb + i * P, (size_t)bits);
            y = word_unpack(c, x, bits);
            memcpy(log + i * L + r * rl, &y, 8);
        }
    }
}

ALWAYS_INLINE void unpack_words_k(const ctx_t *c, const task_t *t, char *log0, const uint8_t *in0,
                                  const rows_t *rows, const int bits)
{
    const int per = 8 / bits, last = t->ndim - 1;
    const Py_ssize_t nc = t->shape[last - 1], P = t->ps[last - 1] / per, L = t->ls[last - 1];
    const Py_ssize_t pb = rows->ps / per, rl = rows->ls;
    const Py_ssize_t R = rl == 8 ? WORDS_LINE_ROWS : 1;
    for (Py_ssize_t c0 = 0; c0 < nc; c0 += WORDS_COLUMNS) {
        const Py_ssize_t m = nc - c0 < WORDS_COLUMNS ? nc - c0 : WORDS_COLUMNS;
        for (Py_ssize_t r = 0; r < rows->n; r += R) {
            const Py_ssize_t k = rows->n - r < R ? rows->n - r : R;
            const uint8_t *in = in0 + r * pb + c0 * P;
            for (Py_ssize_t a = 0; a < k && r + WORDS_AHEAD + a < rows->n; a++)
                if (c->stream) __builtin_prefetch(in + (WORDS_AHEAD + a) * pb, 0, 3);
                else __builtin_prefetch(in + (WORDS_AHEAD + a) * pb, 0, 1);
            unpack_words_rows(c, log0 + r * rl + c0 * L, in, m, k, P, L, pb, rl, bits, t->shape[last]);
        }
    }
}

/* ---- the words path's faster forms (moves in _pack_bits.h) -------------------------------- */

#ifdef HAVE_AVX2_PATH
#define WORDS_AVX2 use_avx2
#else
#define WORDS_AVX2 0
#endif

/* Nibble blocks: E(4), 8 codes a word, adjacent columns, rows of lines 8 bytes on. */
static int nibble_blocks(const ctx_t *c, const task_t *t, const rows_t *rows)
{
    int last = t->ndim - 1;
    return HAVE_NIB_ROWS && c->bits == 4 && last >= 1 && t->shape[last] == 8 && t->ls[last] == 1
           && t->ps[last - 1] == 8 && (rows->ls == 8 || rows->n == 1) && t->shape[last - 1] >= 4;
}

/* The task's rows of lines: 16 columns x 8 rows a block (each column's logical line read in a
 * row); the last nc % 4 columns (and a short block the array ends in) word by word. */
static void nibble_words(const ctx_t *c, const task_t *t, int unpack, uint8_t *bytes, char *log, const rows_t *rows)
{
#if HAVE_NIB_ROWS
    const int last = t->ndim - 1;
    const Py_ssize_t nc = t->shape[last - 1], L = t->ls[last - 1], pb = rows->ps / 2;
    const Py_ssize_t n4 = nc & ~(Py_ssize_t)3;
    const uint64_t pads = 0x0101010101010101ULL * c->pad_byte;
    for (Py_ssize_t c0 = 0; c0 < nc; c0 += WORDS_COLUMNS) {
        const Py_ssize_t all = nc - c0 < WORDS_COLUMNS ? nc - c0 : WORDS_COLUMNS;
        const Py_ssize_t m = n4 - c0 < all ? n4 - c0 : all;
        for (Py_ssize_t r = 0; r < rows->n; r += 8) {
            const Py_ssize_t k = rows->n - r < 8 ? rows->n - r : 8;
            uint8_t *out = bytes + r * pb + c0 * 4;
            char *lg = log + c0 * L + r * 8;
            rows_ahead(unpack, c->stream, out, pb, rows->n - r, k, WORDS_AHEAD);
            Py_ssize_t done = nib_rows(unpack, out, lg, m, k, L, pb, c->sign, c->log_lo, c->log_hi,
                                       WORDS_LOG_AHEAD, WORDS_AVX2) ? m : 0;
            for (Py_ssize_t j = 0; j < k && done < all; j++) { /* the rest: the words path's loops */
                if (unpack)
                    unpack_words_rows(c, lg + done * L + j * 8, out + j * pb + done * 4, all - done, 1, 4, L, pb, 8,
                                      4, 8);
                else
                    pack_words_rows(c, out + j * pb + done * 4, lg + done * L + j * 8, all - done, 1, 4, L, pb, 8,
                                    4, 0, pads, 8);
            }
        }
    }
#else
    (void)c, (void)t, (void)unpack, (void)bytes, (void)log, (void)rows;
#endif
}

/* Short nibble words: E(4), n < 8 codes a word (a ragged sub-tile's rows), adjacent columns
 * (packing: owning their groups), any rows of lines. */
static int short_nibbles(const ctx_t *c, const task_t *t, int unpack)
{
    int last = t->ndim - 1;
    return HAVE_NIB_ROWS && c->bits == 4 && last >= 1 && t->shape[last] < 8 && t->ls[last] == 1
           && t->ps[last - 1] == 8 && t->shape[last - 1] >= 4 && (unpack || t->kind == 2);
}

/* Each row of lines 4 columns at a time; the last nc % 4 columns (and any whose 8-byte read
 * would leave the logical array) word by word. */
static void short_words(const ctx_t *c, const task_t *t, int unpack, uint8_t *bytes, char *log, const rows_t *rows)
{
#if HAVE_NIB_ROWS
    const int last = t->ndim - 1, n = (int)t->shape[last];
    const Py_ssize_t nc = t->shape[last - 1], L = t->ls[last - 1], pb = rows->ps / 2;
    const uint64_t pads = 0x0101010101010101ULL * c->pad_byte;
    for (Py_ssize_t r = 0; r < rows->n; r++) {
        uint8_t *out = bytes + r * pb;
        char *lg = log + r * rows->ls;
        Py_ssize_t i = 0;
        for (; i + 4 <= nc; i += 4) {
            if (unpack && out + i * 4 + 16 > c->bytes_hi) break; /* (the last word past the buffer) */
            if (unpack) nib_unpack_short4(lg + i * L, out + i * 4, L, n, c->sign);
            else if (!nib_pack_short4(out + i * 4, lg + i * L, L, n, c->pad_byte, c->log_lo, c->log_hi)) break;
        }
        if (i == nc) continue;
        if (unpack) unpack_words_rows(c, lg + i * L, out + i * 4, nc - i, 1, 4, L, pb, rows->ls, 4, n);
        else pack_words_rows(c, out + i * 4, lg + i * L, nc - i, 1, 4, L, pb, rows->ls, 4, 0, pads, n);
    }
#else
    (void)c, (void)t, (void)unpack, (void)bytes, (void)log, (void)rows;
#endif
}

/* Bit blocks: E(1), 8 codes a word, columns 1, 2 or 4 bytes apart (packing: owning their gaps, or
 * adjacent), rows of lines 8 bytes on. */
static int bit_blocks(const ctx_t *c, const task_t *t, int unpack, const rows_t *rows)
{
    int last = t->ndim - 1;
    if (!HAVE_NIB_ROWS || c->bits != 1 || last < 1 || t->shape[last] != 8 || t->ls[last] != 1 || rows->ls != 8
        || rows->n < 8 || t->shape[last - 1] < 16)
        return 0;
    Py_ssize_t P = t->ps[last - 1] / 8;
    return (P == 1 || P == 2 || P == 4) && (unpack || P == 1 || t->kind == 2);
}

#if HAVE_NIB_ROWS
/* One block of bit_words, in AVX2 where the CPU has it; `arg` the pad byte packing, else sign. */
static void bit_block(int unpack, uint8_t *out, char *lg, Py_ssize_t L, Py_ssize_t pb, int P, uint8_t arg)
{
#if HAVE_NIB_AVX2
    if (WORDS_AVX2) {
        if (unpack) bit_unpack_16x8_avx2(lg, out, L, pb, P, arg);
        else bit_pack_16x8_avx2(out, lg, L, pb, P, arg);
        return;
    }
#endif
    if (unpack) bit_unpack_16x8(lg, out, L, pb, P, arg);
    else bit_pack_16x8(out, lg, L, pb, P, arg);
}
#endif

/* The task's rows of lines, 16 columns x 8 rows a block; the last nc % 16 columns and rows % 8
 * rows of lines (and a block whose last word ends the buffer, unpacking) word by word. */
static void bit_words(const ctx_t *c, const task_t *t, int unpack, uint8_t *bytes, char *log, const rows_t *rows)
{
#if HAVE_NIB_ROWS
    const int last = t->ndim - 1, P = (int)(t->ps[last - 1] / 8);
    const Py_ssize_t nc = t->shape[last - 1], L = t->ls[last - 1], pb = rows->ps / 8;
    const uint64_t pads = 0x0101010101010101ULL * c->pad_byte;
    for (Py_ssize_t c0 = 0; c0 < nc; c0 += WORDS_COLUMNS) {
        const Py_ssize_t all = nc - c0 < WORDS_COLUMNS ? nc - c0 : WORDS_COLUMNS;
        for (Py_ssize_t r = 0; r < rows->n; r += 8) {
            const Py_ssize_t k = rows->n - r < 8 ? rows->n - r : 8;
            uint8_t *out = bytes + r * pb + c0 * P;
            char *lg = log + c0 * L + r * 8;
            rows_ahead(unpack, c->stream, out, pb, rows->n - r, k, WORDS_AHEAD);
            if (all == 16 && k == 8 && !unpack) {
                bit_block(0, out, lg, L, pb, P, c->pad_byte);
            } else if (all == 16 && k == 8 && out + (pb > 0 ? 7 * pb : 0) + 16 * P <= c->bytes_hi) {
                bit_block(1, out, lg, L, pb, P, (uint8_t)c->sign);
            } else if (unpack) {
                unpack_words_rows(c, lg, out, all, k, P, L, pb, 8, 1, 8);
            } else {
                pack_words_rows(c, out, lg, all, k, P, L, pb, 8, 1, t->kind == 2 && P > 1, pads, 8);
            }
        }
    }
#else
    (void)c, (void)t, (void)unpack, (void)bytes, (void)log, (void)rows;
#endif
}

/* Joined columns: n <= 8 codes a column, the columns' logical bytes one after the other, at most
 * 8 bytes a column; packing, a column owning its gap or writing whole bytes. */
static int joined(const ctx_t *c, const task_t *t, int unpack)
{
    const int last = t->ndim - 1;
    if (last < 1 || t->ls[last] != 1 || t->ls[last - 1] != t->shape[last] || t->shape[last] > 8) return 0;
    const Py_ssize_t P = t->ps[last - 1] / c->per, nb = t->shape[last] * c->bits;
    return P <= 8 && (unpack || (t->kind == 2 ? P * 8 >= nb : nb % 8 == 0 && P * 8 >= nb));
}

/* One row of lines of joined columns, JOIN_STAGE packed bytes at a time: the run of codes
 * (un)packed in the stage whole bytes at a time (the last few codes one by one), the columns'
 * bit fields moved to (from) their bytes. */
static void joined_row(const ctx_t *c, const task_t *t, int unpack, uint8_t *bytes, char *log)
{
    _Alignas(64) uint8_t stage[JOIN_STAGE + 16];
    const int last = t->ndim - 1, n = (int)t->shape[last], nb = n * c->bits;
    const Py_ssize_t nc = t->shape[last - 1], P = t->ps[last - 1] / c->per, chunk = JOIN_STAGE * 8 / nb;
    const uint64_t pads = 0x0101010101010101ULL * c->pad_byte;
    ctx_t cached = *c;
    cached.stream = 0; /* the stage stays in L1 */
    for (Py_ssize_t j0 = 0; j0 < nc; j0 += chunk) {
        const Py_ssize_t m = nc - j0 < chunk ? nc - j0 : chunk, codes = m * n, whole = codes / c->per;
        const Py_ssize_t tail = codes - whole * c->per;
        char *lg = log + j0 * n;
        if (unpack) {
            join_gather(stage, bytes + j0 * P, m, nb, P);
            unpack_contiguous(c, lg, stage, whole);
            for (Py_ssize_t k = 0; k < tail; k++)
                lg[whole * c->per + k] = (char)code(c, (unsigned)stage[whole] >> (k * c->bits));
            continue;
        }
        pack_contiguous(&cached, stage, lg, whole);
        stage[whole] = tail ? gather_byte(&(ctx_t){.per = (int)tail, .bits = c->bits, .mask = c->mask},
                                          lg + whole * c->per, 1) : 0;
        memset(stage + whole + 1, 0, 8);
        join_scatter(bytes + j0 * P, stage, m, nb, P, t->kind == 2, pads);
    }
}

static void joined_words(const ctx_t *c, const task_t *t, int unpack, uint8_t *bytes, char *log, const rows_t *rows)
{
    for (Py_ssize_t r = 0; r < rows->n; r++)
        joined_row(c, t, unpack, bytes + r * (rows->ps / c->per), log + r * rows->ls);
}

/* words() first: 1 when a faster form took the task's rows of lines. */
static int bits_words(const ctx_t *c, const task_t *t, int unpack, uint8_t *bytes, char *log, const rows_t *rows)
{
    if (joined(c, t, unpack)) {
        joined_words(c, t, unpack, bytes, log, rows);
        return 1;
    }
    if (bit_blocks(c, t, unpack, rows)) {
        bit_words(c, t, unpack, bytes, log, rows);
        return 1;
    }
    if (short_nibbles(c, t, unpack)) {
        short_words(c, t, unpack, bytes, log, rows);
        return 1;
    }
    if (nibble_blocks(c, t, rows)) {
        nibble_words(c, t, unpack, bytes, log, rows);
        return 1;
    }
    return 0;
}

static void words(const ctx_t *c, const task_t *t, int unpack, uint8_t *bytes, char *log, const rows_t *rows)
{
    if (bits_words(c, t, unpack, bytes, log, rows)) return; /* (_pack_bits.h) */
    switch (c->bits * 2 + unpack) {
    case 2: pack_words_k(c, t, bytes, log, rows, 1); break;
    case 3: unpack_words_k(c, t, log, bytes, rows, 1); break;
    case 4: pack_words_k(c, t, bytes, log, rows, 2); break;
    case 5: unpack_words_k(c, t, log, bytes, rows, 2); break;
    case 8: pack_words_k(c, t, bytes, log, rows, 4); break;
    default: unpack_words_k(c, t, log, bytes, rows, 4);
    }
}
#endif

/* ---- partial columns (see partial()): n rows, the last byte's other slots the pad code ---- */

/* 16 columns' n rows (ls apart) -> q registers, rows past n the pad code. */
static void pack_lines_n(__m128i *v, const char *log, Py_ssize_t ls, Py_ssize_t n, int bits, int q, uint8_t pad)
{
    const int per = 8 / bits;
    const __m128i m = _mm_set1_epi8((char)((1u << bits) - 1)), pv = _mm_set1_epi8((char)pad);
    for (int j = 0; j < q; j++) {
        __m128i acc = _mm_setzero_si128();
        for (int k = 0; k < per; k++) {
            Py_ssize_t row = j * per + k;
            __m128i x = row < n ? _mm_and_si128(_mm_loadu_si128((const __m128i *)(log + row * ls)), m) : pv;
            acc = _mm_or_si128(acc, _mm_sll_epi16(x, _mm_cvtsi32_si128(k * bits)));
        }
        v[j] = acc;
    }
}

static void partial_pack(const ctx_t *c, const task_t *t, uint8_t *out0, const char *log0, const rows_t *rows)
{
    const int per = c->per, last = t->ndim - 1;
    const Py_ssize_t n = t->shape[last], q = (n + per - 1) / per, nc = t->shape[last - 1];
    const Py_ssize_t P = t->ps[last - 1] / per, ls = t->ls[last], pb = rows->ps / per;
    const int own = t->kind == 2;
    for (Py_ssize_t r = 0; r < rows->n; r++) {
        uint8_t *out = out0 + r * pb;
        const char *log = log0 + r * rows->ls;
        Py_ssize_t col = 0;
        for (; col + LANES <= nc; col += LANES) {
            _Alignas(16) uint8_t tmp[MAX_Q][LANES];
            __m128i v[MAX_Q];
            pack_lines_n(v, log + col, ls, n, c->bits, (int)q, c->pad);
            if (own && q <= 4 && (P == 2 || P == 4 || P == 8 || P == 16)) { /* in vector stores */
                store_owned(out + col * P, v, P, (int)q, c->pad_byte, 0);
                continue;
            }
            for (Py_ssize_t j = 0; j < q; j++) _mm_store_si128((__m128i *)tmp[j], v[j]);
            for (Py_ssize_t i = 0; i < LANES; i++) {
                uint8_t *o = out + (col + i) * P;
                for (Py_ssize_t j = 0; j < q; j++) o[j] = tmp[j][i];
                if (own) memset(o + q, c->pad_byte, (size_t)(P - q));
            }
        }
        for (; col < nc; col++) { /* the tail column by column */
            uint8_t *o = out + col * P;
            for (Py_ssize_t j = 0; j < q; j++) {
                unsigned v = 0;
                for (int k = 0; k < per; k++) {
                    Py_ssize_t row = j * per + k;
                    unsigned x = row < n ? (unsigned)(uint8_t)log[row * ls + col] & c->mask : c->pad;
                    v |= x << (k * c->bits);
                }
                o[j] = (uint8_t)v;
            }
            if (own) memset(o + q, c->pad_byte, (size_t)(P - q));
        }
    }
}

static void partial_unpack(const ctx_t *c, const task_t *t, char *log0, const uint8_t *in0, const rows_t *rows)
{
    const int per = c->per, last = t->ndim - 1;
    const Py_ssize_t n = t->shape[last], q = (n + per - 1) / per, nc = t->shape[last - 1];
    const Py_ssize_t P = t->ps[last - 1] / per, ls = t->ls[last], pb = rows->ps / per;
    const __m128i m = _mm_set1_epi8((char)c->mask);
    const __m128i half = _mm_set1_epi8((char)(c->sign ? 1u << (c->bits - 1) : 0u));
    for (Py_ssize_t r = 0; r < rows->n; r++) {
        const uint8_t *in = in0 + r * pb;
        char *log = log0 + r * rows->ls;
        Py_ssize_t col = 0;
        for (; col + LANES <= nc; col += LANES) {
            _Alignas(16) uint8_t tmp[MAX_Q][LANES];
            for (Py_ssize_t i = 0; i < LANES; i++)
                for (Py_ssize_t j = 0; j < q; j++) tmp[j][i] = in[(col + i) * P + j];
            for (Py_ssize_t row = 0; row < n; row++) {
                __m128i v = _mm_load_si128((const __m128i *)tmp[row / per]);
                __m128i x = _mm_and_si128(_mm_srl_epi16(v, _mm_cvtsi32_si128((int)(row % per) * c->bits)), m);
                _mm_storeu_si128((__m128i *)(log + row * ls + col), _mm_sub_epi8(_mm_xor_si128(x, half), half));
            }
        }
        for (; col < nc; col++)
            for (Py_ssize_t row = 0; row < n; row++)
                log[row * ls + col] = (char)code(c, (unsigned)in[col * P + row / per] >> ((row % per) * c->bits));
    }
}

/* ---- the outer loops ------------------------------------------------------------------ */

/* One line per row: the inner axes (one, or two for columns) from slot and log on. */
static void line(const ctx_t *c, const task_t *t, line_t kind, int unpack, Py_ssize_t slot, char *log)
{
    int last = t->ndim - 1;
    uint8_t *bytes = c->bytes + slot / c->per;
    switch (kind) {
#if HAVE_SSE2
    case L_COLUMNS: /* not reached: a columns task runs its rows itself (see lines) */
#else
    case L_COLUMNS: /* not chosen without SSE2 */
#endif
    case L_WORDS: /* not reached (see lines) */
    case L_PARTIAL:
    case L_BYTES:
        if (unpack) unpack_bytes(c, t, log, bytes); else pack_bytes(c, t, bytes, log);
        break;
    case L_CONTIGUOUS:
        if (unpack) unpack_contiguous(c, log, bytes, t->shape[last] / c->per);
        else pack_contiguous(c, bytes, log, t->shape[last] / c->per);
        break;
    case L_SLOTS: {
        Py_ssize_t n = last < 0 ? 1 : t->shape[last], ps = last < 0 ? 0 : t->ps[last];
        Py_ssize_t ls = last < 0 ? 0 : t->ls[last];
        if (unpack) unpack_slots(c, slot, log, n, ps, ls); else pack_slots(c, slot, log, n, ps, ls);
        break;
    }
    }
}

/* The lines of one row of the innermost outer axis. */
/* k pieces of q bytes: piece r from src + r*ss to dst + r*ds (fixed-size moves for small q). */
static void pieces(uint8_t *dst, Py_ssize_t ds, const uint8_t *src, Py_ssize_t ss, Py_ssize_t k, Py_ssize_t q)
{
#define PIECES(N)                                                                            \
    for (Py_ssize_t r = 0; r < k; r++) memcpy(dst + r * ds, src + r * ss, N);                \
    return
    switch (q) {
    case 1: PIECES(1);
    case 2: PIECES(2);
    case 4: PIECES(4);
    case 8: PIECES(8);
    case 16: PIECES(16);
    default: PIECES((size_t)q);
    }
#undef PIECES
}

/* Contiguous lines whose rows continue one logical run (the caller puts such an axis there:
 * a transposing layout's sub-tile columns, or a tile row's tiles): the run goes through an
 * L1 stage in long vector steps, each row's q bytes copied to or from its place. */
static void staged_rows(const ctx_t *c, const task_t *t, int unpack, Py_ssize_t slot, char *log,
                        const rows_t *rows)
{
    _Alignas(64) uint8_t stage[STAGE_BYTES];
    ctx_t cached = *c;
    cached.stream = 0; /* the stage stays in L1 */
    Py_ssize_t n = t->shape[t->ndim - 1], q = n / c->per, chunk = STAGE_BYTES / q, pb = rows->ps / c->per;
    uint8_t *bytes = c->bytes + slot / c->per;
    for (Py_ssize_t r0 = 0; r0 < rows->n; r0 += chunk) {
        Py_ssize_t k = rows->n - r0 < chunk ? rows->n - r0 : chunk;
        if (unpack) {
            pieces(stage, q, bytes + r0 * pb, pb, k, q);
            unpack_contiguous(c, log + r0 * n, stage, k * q);
        } else {
            pack_contiguous(&cached, stage, log + r0 * n, k * q);
            pieces(bytes + r0 * pb, pb, stage, q, k, q);
        }
    }
}

/* The rest of a kind-2 task's column groups, whose lines (one per column: rows is its
 * column axis) were just written: the pad code into the G - n slots after each column's n. */
static void own_gaps(const ctx_t *c, const task_t *t, line_t kind, Py_ssize_t slot, const rows_t *rows)
{
    Py_ssize_t n = t->shape[t->ndim - 1], rest = t->ps[t->ndim - 2] - n;
    for (Py_ssize_t r = 0; r < rows->n; r++) {
        Py_ssize_t s = slot + r * rows->ps + n;
        if (kind == L_SLOTS)
            pack_slots(c, s, (const char *)&c->pad, rest, 1, 0);
        else /* aligned: whole bytes */
            memset(c->bytes + s / c->per, c->pad_byte, (size_t)(rest / c->per));
    }
}

/* staged_rows for R neighbouring rows of lines at once (the axis outside the rows, blk, with
 * slot stride n: their pieces lie side by side in the buffer): R rows of codes (un)packed in
 * the stage, and the buffer's bytes of each piece written (read) for all R in a row, so that
 * each line of the buffer is visited once instead of once per row (s4[4000,6000]{0,1:T(8,128)
 * (8,1)E(4)}: pieces a tile apart, 16 KiB, all in the same L1 sets: 13.5/7.9x a copy). */
#define BLOCK_ROWS 32   /* rows at once when packing (two lines of 4-byte pieces, measured best) */
#define UNBLOCK_ROWS 16 /* ... and unpacking (32 measured slower: 3.7 -> 4.6x a copy) */
#define BLOCK_AHEAD 16  /* pieces a line is fetched ahead */
static int blocks_rows(const ctx_t *c, const task_t *t, line_t kind, const rows_t *rows, const rows_t *blk)
{
    Py_ssize_t n = t->shape[t->ndim - 1], q = n / c->per;
    return kind == L_CONTIGUOUS && t->kind == 0 && rows->n > 1 && rows->ls == n && blk->n > 1
           && blk->ps == n && q * BLOCK_ROWS <= STAGE_BYTES;
}

static void copy_piece(uint8_t *d, const uint8_t *s, Py_ssize_t q)
{
    switch (q) {
    case 1: *d = *s; return;
    case 2: memcpy(d, s, 2); return;
    case 4: memcpy(d, s, 4); return;
    case 8: memcpy(d, s, 8); return;
    case 16: memcpy(d, s, 16); return;
    default: memcpy(d, s, (size_t)q);
    }
}

static void staged_blocks(const ctx_t *c, const task_t *t, int unpack, Py_ssize_t slot, char *log,
                          const rows_t *rows, const rows_t *blk)
{
    _Alignas(64) uint8_t stage[STAGE_BYTES];
    ctx_t cached = *c;
    cached.stream = 0; /* the stage stays in L1 */
    const Py_ssize_t n = t->shape[t->ndim - 1], q = n / c->per, pb = rows->ps / c->per;
    const Py_ssize_t R = unpack ? UNBLOCK_ROWS : BLOCK_ROWS;
    const Py_ssize_t chunk = STAGE_BYTES / (R * q), row = chunk * q; /* pieces, bytes a stage row */
    for (Py_ssize_t b0 = 0; b0 < blk->n; b0 += R) {
        Py_ssize_t rb = blk->n - b0 < R ? blk->n - b0 : R;
        uint8_t *bytes = c->bytes + (slot + b0 * blk->ps) / c->per;
        char *lg = log + b0 * blk->ls;
        for (Py_ssize_t r0 = 0; r0 < rows->n; r0 += chunk) {
            Py_ssize_t k = rows->n - r0 < chunk ? rows->n - r0 : chunk;
            if (unpack) {
                for (Py_ssize_t j = 0; j < k; j++) {
                    if (j + BLOCK_AHEAD < k)
                        __builtin_prefetch(bytes + (r0 + j + BLOCK_AHEAD) * pb, 0, 3);
                    for (Py_ssize_t r = 0; r < rb; r++) copy_piece(stage + r * row + j * q, bytes + (r0 + j) * pb + r * q, q);
                }
                for (Py_ssize_t r = 0; r < rb; r++) unpack_contiguous(c, lg + r * blk->ls + r0 * n, stage + r * row, k * q);
            } else {
                for (Py_ssize_t r = 0; r < rb; r++) pack_contiguous(&cached, stage + r * row, lg + r * blk->ls + r0 * n, k * q);
                for (Py_ssize_t j = 0; j < k; j++) {
                    if (j + BLOCK_AHEAD < k) /* the lines far apart: fetched ahead to be written */
                        __builtin_prefetch(bytes + (r0 + j + BLOCK_AHEAD) * pb, 1, 3);
                    for (Py_ssize_t r = 0; r < rb; r++) copy_piece(bytes + (r0 + j) * pb + r * q, stage + r * row + j * q, q);
                }
            }
        }
    }
}

static void lines(const ctx_t *c, const task_t *t, line_t kind, int unpack, Py_ssize_t slot, char *log,
                  const rows_t *rows)
{
#if HAVE_SSE2
    if (kind == L_COLUMNS) { /* (a kind-2 task's gaps in the same stores) */
        uint8_t *bytes = c->bytes + slot / c->per;
        if (unpack) unpack_columns(c, t, log, bytes, rows); else pack_columns(c, t, bytes, log, rows);
        return;
    }
#endif
#if HAVE_SSE2
    if (kind == L_PARTIAL) { /* (a kind-2 task's gaps in the same loop) */
        uint8_t *bytes = c->bytes + slot / c->per;
        if (unpack) partial_unpack(c, t, log, bytes, rows); else partial_pack(c, t, bytes, log, rows);
        return;
    }
#endif
#if HAVE_SWAR
    if (kind == L_WORDS) { /* (the same) */
        words(c, t, unpack, c->bytes + slot / c->per, log, rows);
        return;
    }
#endif
    if (kind == L_CONTIGUOUS && rows->n > 1 && rows->ls == t->shape[t->ndim - 1]
        && t->shape[t->ndim - 1] / c->per <= STAGE_BYTES)
        staged_rows(c, t, unpack, slot, log, rows);
    else
        for (Py_ssize_t r = 0; r < rows->n; r++)
            line(c, t, kind, unpack, slot + r * rows->ps, log + r * rows->ls);
    if (t->kind == 2 && !unpack) own_gaps(c, t, kind, slot, rows);
}

static void run_task(const ctx_t *c, const task_t *t, int unpack)
{
    line_t kind = choose(t, c->per, unpack);
    int inner = kind == L_COLUMNS || kind == L_WORDS || kind == L_PARTIAL ? 2 : (t->ndim > 0 ? 1 : 0);
    int outer = t->ndim - inner;
    rows_t rows = {1, 0, 0};
    if (outer > 0) { /* the innermost outer axis runs inside lines() */
        outer--;
        rows.n = t->shape[outer];
        rows.ps = t->ps[outer];
        rows.ls = t->ls[outer];
    }
    rows_t blk = {1, 0, 0};
    if (outer > 0) {
        blk = (rows_t){t->shape[outer - 1], t->ps[outer - 1], t->ls[outer - 1]};
        if (blocks_rows(c, t, kind, &rows, &blk)) outer--; /* blk runs inside staged_blocks */
        else blk.n = 1;
    }
    Py_ssize_t idx[MAX_DIMS] = {0}, slot = t->slot;
    char *log = t->log;
    for (;;) {
        if (blk.n > 1) staged_blocks(c, t, unpack, slot, log, &rows, &blk);
        else lines(c, t, kind, unpack, slot, log, &rows);
        int k = outer - 1;
        for (; k >= 0; k--) {
            if (++idx[k] < t->shape[k]) {
                slot += t->ps[k];
                log += t->ls[k];
                break;
            }
            slot -= (t->shape[k] - 1) * t->ps[k];
            log -= (t->shape[k] - 1) * t->ls[k];
            idx[k] = 0;
        }
        if (k < 0) return;
    }
}

/* ---- Python entry points: tasks read and checked ----------------------------------------- */

/* The slots a task writes, as span() (-1 on overflow), a kind-2 task's column groups whole;
 * -2 (a ValueError set) for a kind-2 task without slot stride 1 innermost and columns at
 * least its extent apart. */
static int written_span(const task_t *t, Py_ssize_t *lo, Py_ssize_t *hi)
{
    int last = t->ndim - 1;
    if (t->kind != 2) return span(t->ndim, t->shape, t->ps, 1, lo, hi);
    if (last < 1 || t->ps[last] != 1 || t->ps[last - 1] < t->shape[last]) {
        PyErr_SetString(PyExc_ValueError, "pack: a kind-2 task needs slot stride 1 innermost and "
                                          "columns at least its extent apart");
        return -2;
    }
    Py_ssize_t shape[MAX_DIMS];
    memcpy(shape, t->shape, sizeof(Py_ssize_t) * (size_t)t->ndim);
    shape[last] = t->ps[last - 1]; /* up to the next column's group */
    return span(t->ndim, shape, t->ps, 1, lo, hi);
}

typedef struct {
    Py_ssize_t nslots, llo, lhi;
    char *log;      /* the logical array's first element, NULL if none */
    uint8_t *pad;   /* where pad tasks read */
    int allow_pad;
} bounds_t;

static int read_task(PyObject *obj, task_t *t, const bounds_t *b)
{
    PyObject *shape, *ps, *ls;
    Py_ssize_t loff;
    if (!PyTuple_Check(obj)) {
        PyErr_SetString(PyExc_TypeError, "pack: a task must be a tuple");
        return -1;
    }
    if (!PyArg_ParseTuple(obj, "innO!O!O!", &t->kind, &t->slot, &loff, &PyTuple_Type, &shape,
                          &PyTuple_Type, &ps, &PyTuple_Type, &ls))
        return -1;
    Py_ssize_t n = PyTuple_GET_SIZE(shape), lo, hi;
    if (n > MAX_DIMS || PyTuple_GET_SIZE(ps) != n || PyTuple_GET_SIZE(ls) != n) {
        PyErr_SetString(PyExc_ValueError, "pack: a task's shape and strides differ in length");
        return -1;
    }
    t->ndim = (int)n;
    if (read_ints(shape, t->shape, n) || read_ints(ps, t->ps, n) || read_ints(ls, t->ls, n)) return -1;
    for (int k = 0; k < t->ndim; k++)
        if (t->shape[k] <= 0) {
            t->ndim = -1; /* nothing to move */
            return 0;
        }
    if (t->kind < 0 || t->kind > 2) {
        PyErr_SetString(PyExc_ValueError, "pack: a task's kind must be 0, 1 or 2");
        return -1;
    }
    if (t->kind != 0 && !b->allow_pad) {
        PyErr_SetString(PyExc_ValueError, "unpack: tasks of kinds 1 (pad) and 2 are for pack");
        return -1;
    }
    int written = written_span(t, &lo, &hi);
    if (written == -2) return -1;
    if (written < 0 || !inside(t->slot, lo, hi, 0, b->nslots)) {
        PyErr_SetString(PyExc_IndexError, "pack: a task leaves the packed buffer");
        return -1;
    }
    if (t->kind == 1) {
        memset(t->ls, 0, sizeof t->ls);
        t->log = (char *)b->pad;
        return 0;
    }
    if (b->log == NULL || span(t->ndim, t->shape, t->ls, 1, &lo, &hi) < 0
        || !inside(loff, lo, hi, b->llo, b->lhi)) {
        PyErr_SetString(PyExc_IndexError, "pack: a task leaves the logical array");
        return -1;
    }
    t->log = b->log + loff;
    return 0;
}

/* The packed buffer (contiguous bytes) and the logical array (1-byte items, any strides). */
static int get_buffers(PyObject *packed, PyObject *logical, int packed_writes, Py_buffer *pv,
                       Py_buffer *lv, bounds_t *b, int bits, Py_ssize_t nslots)
{
    int lflags = PyBUF_STRIDES | (packed_writes ? 0 : PyBUF_WRITABLE);
    if (PyObject_GetBuffer(packed, pv, PyBUF_SIMPLE | (packed_writes ? PyBUF_WRITABLE : 0)) < 0)
        return -1;
    lv->obj = NULL;
    if (logical != Py_None && PyObject_GetBuffer(logical, lv, lflags) < 0) goto fail;
    if (bits != 1 && bits != 2 && bits != 4) {
        PyErr_SetString(PyExc_ValueError, "pack: bits must be 1, 2 or 4");
        goto fail;
    }
    if (nslots < 0 || pv->len > PY_SSIZE_T_MAX / 8 || nslots > pv->len * (8 / bits)) {
        PyErr_SetString(PyExc_IndexError, "pack: the packed buffer is smaller than nslots");
        goto fail;
    }
    b->nslots = nslots;
    b->log = NULL;
    if (lv->obj != NULL) {
        if (lv->itemsize != 1) {
            PyErr_SetString(PyExc_ValueError, "pack: logical items must be single bytes");
            goto fail;
        }
        if (array_span(lv, &b->llo, &b->lhi) < 0) { /* an empty array: nothing inside */
            PyErr_SetString(PyExc_ValueError, "pack: logical array too large");
            goto fail;
        }
        b->log = (char *)lv->buf;
    }
    return 0;
fail:
    if (lv->obj != NULL) PyBuffer_Release(lv);
    PyBuffer_Release(pv);
    return -1;
}

static task_t *read_tasks(PyObject *tasks, const bounds_t *b, Py_ssize_t *count)
{
    *count = PyList_GET_SIZE(tasks);
    task_t *ts = PyMem_Malloc(sizeof(task_t) * (size_t)(*count ? *count : 1));
    if (ts == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t i = 0; i < *count; i++)
        if (read_task(PyList_GET_ITEM(tasks, i), &ts[i], b) < 0) {
            PyMem_Free(ts);
            return NULL;
        }
    return ts;
}

typedef struct {
    const ctx_t *c;
    const task_t *ts;
    int unpack;
} run_t;

/* Run task i of a call (the pool's item). */
static void run_item(void *arg, Py_ssize_t i)
{
    const run_t *r = arg;
    if (r->ts[i].ndim >= 0) run_task(r->c, &r->ts[i], r->unpack);
}

/* The call's tasks on the calling thread and up to `workers` - 1 of the kernel's threads
 * (tasks of whole bytes only: the caller runs those sharing bytes alone). */
static PyObject *run_all(ctx_t *c, task_t *ts, Py_ssize_t count, int unpack, int workers)
{
    run_t r = {c, ts, unpack};
    Py_BEGIN_ALLOW_THREADS
    pool_run(run_item, &r, count, workers, c->stream);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static void init_ctx(ctx_t *c, uint8_t *bytes, Py_ssize_t nbytes, int bits, int sign, int stream, int pad)
{
    c->bytes = bytes;
    c->bytes_hi = bytes + nbytes;
    c->bits = bits;
    c->per = 8 / bits;
    c->mask = (1u << bits) - 1;
    c->sign = sign;
    c->stream = stream && HAVE_SSE2;
    c->pad = (uint8_t)((unsigned)pad & c->mask);
    c->pad_byte = 0;
    c->log_lo = c->log_hi = NULL;
    for (int k = 0; k < c->per; k++) c->pad_byte |= (uint8_t)(c->pad << (k * bits));
    swar_masks(c);
}

static PyObject *pack_entry(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *dst, *src, *tasks, *result = NULL;
    int bits, pad, serial = 0, stream = 0, workers = 1;
    Py_ssize_t nslots, count;
    if (!PyArg_ParseTuple(args, "OOO!ini|ppi:pack", &dst, &src, &PyList_Type, &tasks, &bits, &nslots,
                          &pad, &serial, &stream, &workers))
        return NULL;
    Py_buffer pv, lv;
    ctx_t c;
    bounds_t b = {0};
    if (get_buffers(dst, src, 1, &pv, &lv, &b, bits, nslots) < 0) return NULL;
    init_ctx(&c, (uint8_t *)pv.buf, pv.len, bits, 0, stream, pad);
    if (b.log != NULL) {
        c.log_lo = b.log + b.llo;
        c.log_hi = b.log + b.lhi;
    }
    b.pad = &c.pad;
    b.allow_pad = 1;
    task_t *ts = read_tasks(tasks, &b, &count);
    if (ts == NULL) goto done;
    for (Py_ssize_t i = 0; i < count && !serial; i++)
        if (ts[i].ndim >= 0 && choose(&ts[i], c.per, 0) == L_SLOTS && !owns_whole_bytes(&ts[i], c.per)) {
            PyErr_SetString(PyExc_ValueError, "pack: a task sharing bytes with others needs serial=True");
            goto done;
        }
    result = run_all(&c, ts, count, 0, serial ? 1 : workers);
done:
    PyMem_Free(ts);
    if (lv.obj != NULL) PyBuffer_Release(&lv);
    PyBuffer_Release(&pv);
    return result;
}

static PyObject *unpack_entry(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *dst, *src, *tasks, *result = NULL;
    int bits, sign, stream = 0, workers = 1;
    Py_ssize_t nslots, count;
    if (!PyArg_ParseTuple(args, "OOO!inp|pi:unpack", &dst, &src, &PyList_Type, &tasks, &bits, &nslots,
                          &sign, &stream, &workers))
        return NULL;
    if (dst == Py_None) {
        PyErr_SetString(PyExc_TypeError, "unpack: dst must be an array");
        return NULL;
    }
    Py_buffer pv, lv;
    ctx_t c;
    bounds_t b = {0};
    if (get_buffers(src, dst, 0, &pv, &lv, &b, bits, nslots) < 0) return NULL;
    init_ctx(&c, (uint8_t *)pv.buf, pv.len, bits, sign, stream, 0);
    task_t *ts = read_tasks(tasks, &b, &count);
    if (ts != NULL) result = run_all(&c, ts, count, 1, workers);
    PyMem_Free(ts);
    PyBuffer_Release(&lv);
    PyBuffer_Release(&pv);
    return result;
}

static PyMethodDef methods[] = {
    POOL_INFO_METHOD,
    {"pack", pack_entry, METH_VARARGS,
     "pack(dst, src, tasks, bits, nslots, pad, serial=False, stream=False, workers=1): write the "
     "codes of the logical byte array src into the packed byte buffer dst; a task is (kind, first "
     "slot, logical byte offset, shape, slot strides, logical byte strides), checked to lie inside "
     "both. Tasks that share bytes with others (not whole bytes) need serial=True (then one "
     "thread). workers: the calling thread and up to workers - 1 of the kernel's threads claim the "
     "tasks one at a time."},
    {"unpack", unpack_entry, METH_VARARGS,
     "unpack(dst, src, tasks, bits, nslots, signed, stream=False, workers=1): read the codes of the "
     "packed byte buffer src into the logical byte array dst (sign-extended if signed); tasks and "
     "workers as for pack."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_pack",
                                    "The sub-byte packing kernel of relayout (see _pack_path.py).",
                                    -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__pack(void)
{
#ifdef HAVE_AVX2_PATH
    use_avx2 = __builtin_cpu_supports("avx2");
#endif
    return PyModule_Create(&module);
}
