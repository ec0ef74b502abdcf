/* _pack_wide.h: AVX-512 (BW, VL, VBMI) forms of _pack.c's E(4) short words: words of n <= 8
 * codes (8 adjacent columns, 4 bytes a column word) whose rows of lines lie R logical bytes apart
 * with R not 8 (the rows do not continue a column's logical run: u4[39,70,71,11]{1,3,2,0:T(8,128)
 * (8,1)E(4)}, a ragged minor dim of 11 codes, rows 11 bytes apart, its first 8 codes one task and
 * its last 3 another). A block of 8 columns x k <= 8 rows of lines: each column's k words lie in
 * its 7R + n <= 128 logical bytes, read in two masked loads (only the words' bytes: no byte
 * outside them is touched) and gathered by one vpermt2b into its 8 words of 8 codes (the codes
 * past n the pad code), packed to 8 dwords, and the 8 x 8 dwords transposed so that each row of
 * lines stores its 8 columns' words in one 32-byte store; unpacking the same backwards, the codes
 * spread by vpermb and written in masked stores (again only the words' bytes). A task that the
 * next continues with each row's last m < 8 codes (the ragged dim's second sub-tile row, 3 codes
 * at logical byte 8) takes them as a second word part from the same loads (joined_tail).
 *
 * Chosen at run time (wide_ready(): the CPU has AVX-512 BW/VL/VBMI and the environment variable
 * TENSORLAYOUT_NO_AVX512 was not set at import); the functions carry their own target attribute.
 * Self-contained (include guard). */
#ifndef TENSORLAYOUT_PACK_WIDE_H
#define TENSORLAYOUT_PACK_WIDE_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include "_isa.h"
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define HAVE_WIDE 1
#define WIDE_TARGET __attribute__((target("avx2,avx512f,avx512bw,avx512vl,avx512vbmi")))

static int use_wide; /* set once at import (wide_init) */

/* Whether the AVX-512 forms run: the CPU has them and neither TENSORLAYOUT_NO_AVX512 nor
 * TENSORLAYOUT_PACK_SSE2 (the SSE2 forms only) is set. */
static int wide_init(void)
{
    __builtin_cpu_init();
    use_wide = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
               && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vbmi")
               && avx512_allowed() && !env_flag("TENSORLAYOUT_PACK_SSE2");
    return use_wide;
}

#define WIDE_AHEAD 2 /* blocks of rows a column's logical bytes are fetched ahead */
#define WIDE_MIN_ROWS 4 /* short_words takes rows of lines this many or more (see short_words) */

/* The tables of one block shape: k rows of lines R logical bytes apart, each row of a column
 * n codes into its word and (tail > 0) the next `tail` codes into a second word elsewhere. */
typedef struct {
    uint8_t gather[2][64]; /* word part h's lane 8j + i (row j, code i) <- logical byte (of 128) */
    uint8_t spread[128];   /* unpacking: logical byte p <- lane of parts 0 | 1 (64 + lane) */
    uint64_t lanes[2];     /* the lanes of each part that hold codes */
    uint64_t src[2];       /* the logical bytes of the k rows' codes, bytes 0-63 and 64-127 */
} wide_tab_t;

/* The block's tables (the caller checked wide_fits(R, n + tail, ...), 1 <= k <= 8). */
static void wide_table(wide_tab_t *w, Py_ssize_t R, int n, int tail, int k)
{
    memset(w, 0, sizeof *w);
    for (int j = 0; j < k; j++)
        for (int i = 0; i < n + tail; i++) {
            const Py_ssize_t p = j * R + i;
            const int h = i >= n, lane = 8 * j + (h ? i - n : i);
            w->gather[h][lane] = (uint8_t)p;
            w->spread[p] = (uint8_t)(64 * h + lane);
            w->lanes[h] |= 1ULL << lane;
            w->src[p >> 6] |= 1ULL << (p & 63);
        }
}

/* Whether rows R logical bytes apart of n codes (a word's and its tail's) fit a block: 8 rows
 * in two 64-byte loads, not overlapping when unpacking. */
static inline int wide_fits(Py_ssize_t R, int n, int unpack)
{
    return R >= (unpack ? n : 0) && R != 8 && 7 * R + n <= 128 && n >= 1 && n <= 16;
}

/* The 8 x 8 transpose of dwords: dword j of v[i] -> dword i of v[j] (AVX2 registers). */
WIDE_TARGET static inline void wide_transpose8(__m256i *v)
{
    __m256i t[8], u[8];
    for (int i = 0; i < 4; i++) {
        t[2 * i] = _mm256_unpacklo_epi32(v[2 * i], v[2 * i + 1]);
        t[2 * i + 1] = _mm256_unpackhi_epi32(v[2 * i], v[2 * i + 1]);
    }
    for (int h = 0; h < 2; h++) {
        u[4 * h] = _mm256_unpacklo_epi64(t[4 * h], t[4 * h + 2]);
        u[4 * h + 1] = _mm256_unpackhi_epi64(t[4 * h], t[4 * h + 2]);
        u[4 * h + 2] = _mm256_unpacklo_epi64(t[4 * h + 1], t[4 * h + 3]);
        u[4 * h + 3] = _mm256_unpackhi_epi64(t[4 * h + 1], t[4 * h + 3]);
    }
    for (int j = 0; j < 4; j++) {
        v[j] = _mm256_permute2x128_si256(u[j], u[4 + j], 0x20);
        v[j + 4] = _mm256_permute2x128_si256(u[j], u[4 + j], 0x31);
    }
}

/* A word part's gathered codes (one a byte, the lanes past its codes the pad code) -> its 8
 * packed words (dword j: row j). */
WIDE_TARGET static inline __m256i wide_pack_part(__m512i a, __m512i b, const wide_tab_t *w, int h, uint8_t pad)
{
    const __m512i low = _mm512_set1_epi8(0x0F), mul = _mm512_set1_epi16(0x1001);
    const __m512i pads = _mm512_maskz_mov_epi8(~w->lanes[h], _mm512_set1_epi8((char)pad));
    __m512i x = _mm512_maskz_permutex2var_epi8(w->lanes[h], a, _mm512_loadu_si512(w->gather[h]), b);
    x = _mm512_ternarylogic_epi32(x, low, pads, 0xEA);          /* (x & low) | pads */
    return _mm512_cvtepi16_epi8(_mm512_maddubs_epi16(x, mul)); /* code 2c + 16 * code 2c+1 */
}

/* Pack one block: m <= 8 columns (logical rows L apart) x the table's k rows of lines (pb bytes
 * apart in the buffer, out the first row's first column word; the tail words `to` bytes on
 * from their words when parts is 2); a word's lanes past its codes the pad code. */
WIDE_TARGET static void wide_pack_block(uint8_t *out, const char *lg, Py_ssize_t L, Py_ssize_t pb, int m, int k,
                                        const wide_tab_t *w, uint8_t pad, int parts, Py_ssize_t to,
                                        Py_ssize_t ahead)
{
    __m256i v[2][8];
    for (int i = 0; i < 8; i++) {
        if (i >= m) {
            v[0][i] = v[1][i] = _mm256_setzero_si256();
            continue;
        }
        const char *p = lg + i * L;
        if (ahead) { /* the column's rows WIDE_AHEAD blocks on (a hint: never faults) */
            __builtin_prefetch(p + ahead, 0, 3);
            __builtin_prefetch(p + ahead + 64, 0, 3);
        }
        __m512i a = _mm512_maskz_loadu_epi8(w->src[0], p), b = _mm512_maskz_loadu_epi8(w->src[1], p + 64);
        for (int h = 0; h < parts; h++) v[h][i] = wide_pack_part(a, b, w, h, pad);
    }
    const __mmask8 cols = (__mmask8)((1u << m) - 1);
    for (int h = 0; h < parts; h++) {
        wide_transpose8(v[h]);
        for (int j = 0; j < k; j++) {
            uint8_t *o = out + h * to + j * pb;
            if (m == 8) _mm256_storeu_si256((__m256i *)o, v[h][j]);
            else _mm256_mask_storeu_epi32(o, cols, v[h][j]);
        }
    }
}

/* A column's 8 packed words (dword j: row j) -> their 64 codes, one a byte (lane 8j + i),
 * sign-extended from bit 3 where half is 8s. */
WIDE_TARGET static inline __m512i wide_unpack_part(__m256i v, __m512i half)
{
    const __m512i low = _mm512_set1_epi16(0x0F0F);
    __m512i x = _mm512_cvtepu8_epi16(v); /* byte b -> (b & 15) | (b >> 4) << 8 */
    x = _mm512_ternarylogic_epi32(x, _mm512_slli_epi16(x, 4), low, 0xA8); /* (x | x << 4) & low */
    return _mm512_sub_epi8(_mm512_xor_si512(x, half), half);
}

/* Unpack one block (the other way): the words' codes of each row to their logical bytes,
 * sign-extended when sign; the bytes between the rows' codes untouched. */
WIDE_TARGET static void wide_unpack_block(char *lg, const uint8_t *in, Py_ssize_t L, Py_ssize_t pb, int m, int k,
                                          const wide_tab_t *w, int sign, int parts, Py_ssize_t to)
{
    const __m512i lo_idx = _mm512_loadu_si512(w->spread), hi_idx = _mm512_loadu_si512(w->spread + 64);
    const __m512i half = _mm512_set1_epi8(sign ? 8 : 0);
    const __mmask8 cols = (__mmask8)((1u << m) - 1);
    __m256i v[2][8];
    for (int h = 0; h < 2; h++)
        for (int j = 0; j < 8; j++)
            v[h][j] = h < parts && j < k ? _mm256_maskz_loadu_epi32(cols, in + h * to + j * pb) : _mm256_setzero_si256();
    for (int h = 0; h < parts; h++) wide_transpose8(v[h]);
    for (int i = 0; i < m; i++) {
        __m512i x0 = wide_unpack_part(v[0][i], half);
        __m512i x1 = parts > 1 ? wide_unpack_part(v[1][i], half) : x0;
        char *p = lg + i * L;
        _mm512_mask_storeu_epi8(p, w->src[0], _mm512_permutex2var_epi8(x0, lo_idx, x1));
        if (w->src[1]) _mm512_mask_storeu_epi8(p + 64, w->src[1], _mm512_permutex2var_epi8(x0, hi_idx, x1));
    }
}

/* Rows of lines (nr of them, R logical bytes and pb buffer bytes apart) x nc columns (L apart,
 * adjacent 4-byte words) of n codes a word, and with tail > 0 the next `tail` codes of each row
 * into a word `to` bytes on; in blocks of 8 x 8 (the last rows and columns in smaller blocks).
 * The caller checked wide_fits(R, n + tail, unpack) and use_wide. */
WIDE_TARGET static void wide_short(int unpack, uint8_t *bytes, char *log, Py_ssize_t nc, Py_ssize_t L, Py_ssize_t nr,
                                   Py_ssize_t R, Py_ssize_t pb, int n, uint8_t arg, int tail, Py_ssize_t to)
{
    wide_tab_t full, part;
    const int parts = tail > 0 ? 2 : 1;
    wide_table(&full, R, n, tail, 8);
    if (nr % 8) wide_table(&part, R, n, tail, (int)(nr % 8));
    for (Py_ssize_t r = 0; r < nr; r += 8) {
        const int k = nr - r < 8 ? (int)(nr - r) : 8;
        const wide_tab_t *w = k == 8 ? &full : &part;
        for (Py_ssize_t c0 = 0; c0 < nc; c0 += 8) {
            const int m = nc - c0 < 8 ? (int)(nc - c0) : 8;
            uint8_t *out = bytes + r * pb + c0 * 4;
            char *lg = log + r * R + c0 * L;
            if (unpack) wide_unpack_block(lg, out, L, pb, m, k, w, arg, parts, to);
            else wide_pack_block(out, lg, L, pb, m, k, w, arg, parts, to,
                                 r + 8 * WIDE_AHEAD < nr ? 8 * WIDE_AHEAD * R : 0);
        }
    }
}
#else
#define HAVE_WIDE 0
static int wide_init(void) { return 0; }
#endif

/* ---- joined tails: a task and the next continuing its rows (the tasks of _pack_types.h) ---- */
#include "_pack_types.h"

/* Task b continues task a's column words with the next m < 8 codes of each row (a ragged minor
 * dim's second sub-tile row: u4[39,70,71,11]{1,3,2,0:T(8,128)(8,1)E(4)}, 11 codes a row, 8 in one
 * tile and 3 in the next): E(4), adjacent 4-byte column words, a's last axis 8 codes, b's the m
 * after them (logical bytes 8 on), every other axis alike, b a whole number of bytes on from a;
 * packing, b of kind 2 (its words' other codes the pad code). Where the AVX-512 short words take
 * the pair (rows of lines R bytes apart, 8 + m codes a row fitting a block), a takes b's words as
 * its tail and b is emptied (1): each column's codes read (written) once, not in two passes. Both
 * tasks were checked to stay inside the buffers; a with its tail moves exactly their slots. */
static int joined_tail(const ctx_t *c, task_t *a, const task_t *b, int unpack)
{
#if HAVE_WIDE
    const int last = a->ndim - 1;
    if (!use_wide || c->bits != 4 || a->tail || last < 2 || b->ndim != a->ndim || b->kind != (unpack ? 0 : 2)
        || (a->kind != 0 && a->kind != b->kind) || a->shape[last] != 8 || b->shape[last] >= 8
        || a->ps[last - 1] != 8 || a->ls[last] != 1 || b->ls[last] != 1 || a->ps[last] != 1 || b->ps[last] != 1
        || b->log != a->log + 8 || (b->slot - a->slot) % 2 || b->slot == a->slot
        || !wide_fits(a->ls[last - 2], 8 + (int)b->shape[last], unpack) || a->ls[last - 2] < 8 + b->shape[last])
        return 0;
    for (int k = 0; k < last; k++)
        if (a->shape[k] != b->shape[k] || a->ps[k] != b->ps[k] || a->ls[k] != b->ls[k]) return 0;
    a->tail = (int)b->shape[last];
    a->tail_ps = b->slot - a->slot;
    return 1;
#else
    (void)c, (void)a, (void)b, (void)unpack;
    return 0;
#endif
}

/* Each task that the next one continues (joined_tail) takes it; the other is emptied. */
static void join_tails(const ctx_t *c, task_t *ts, Py_ssize_t count, int unpack)
{
    for (Py_ssize_t i = 0; i + 1 < count; i++)
        if (ts[i].ndim >= 0 && ts[i + 1].ndim >= 0 && joined_tail(c, &ts[i], &ts[i + 1], unpack)) ts[++i].ndim = -1;
}


#endif /* TENSORLAYOUT_PACK_WIDE_H */
