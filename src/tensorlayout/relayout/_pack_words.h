/* _pack_words.h: the packing kernel's slot-by-slot path and its words path (8 contiguous codes a
 * column word) with the faster forms whose moves are in _pack_bits.h. Self-contained
 * (include guard). */
#ifndef TENSORLAYOUT_PACK_WORDS_H
#define TENSORLAYOUT_PACK_WORDS_H
#include "_pack_columns.h"
#include "_pack_wide.h"

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
 * (packing: owning their groups), any rows of lines; or whole words (8 codes) whose rows of
 * lines do not continue the columns' logical rows (not nibble blocks: a sub-tile's rows a
 * ragged minor dim's first 8, u4[39,70,71,11]{1,3,2,0:T(8,128)(8,1)E(4)}: word by word 7x a
 * copy). */
static int short_nibbles(const ctx_t *c, const task_t *t, int unpack, const rows_t *rows)
{
    int last = t->ndim - 1;
    if (!HAVE_NIB_ROWS || c->bits != 4 || last < 1 || t->ls[last] != 1 || t->ps[last - 1] != 8
        || t->shape[last - 1] < 4)
        return 0;
    if (t->shape[last] == 8) return !nibble_blocks(c, t, rows);
    return t->shape[last] < 8 && (unpack || t->kind == 2);
}

#if HAVE_SSE2
/* 16 registers of 16 bytes transposed (byte i of register r to byte r of register i): four
 * rounds of interleaving register k with k + 8, each rotating the 8 bits of (register, byte). */
static inline void transpose16x16(__m128i *x)
{
    for (int round = 0; round < 4; round++) {
        __m128i y[16];
        for (int i = 0; i < 8; i++) {
            y[2 * i] = _mm_unpacklo_epi8(x[i], x[i + 8]);
            y[2 * i + 1] = _mm_unpackhi_epi8(x[i], x[i + 8]);
        }
        for (int i = 0; i < 16; i++) x[i] = y[i];
    }
}

/* Unit rows packed (a ragged sub-tile's one row: one code a column word, the other 7 slots the
 * pad code, a kind-2 task of 4-byte groups) whose rows of lines continue each column's logical
 * run (rows->ls 1): 16 columns x 16 rows read as 16 vectors down the columns, transposed in
 * registers, each row's 16 words written in 4 stores (u4[9,633,571]{1,0,2:T(8,128)(8,1)E(4)}:
 * the one-row remainder, 8 byte reads a word before). Returns the rows done (a multiple of 16);
 * the caller does the rest, and every row's last nc % 16 columns. */
static Py_ssize_t unit_rows16(const ctx_t *c, uint8_t *bytes, const char *log, Py_ssize_t nc, Py_ssize_t L,
                              Py_ssize_t pb, Py_ssize_t nr)
{
    const __m128i low = _mm_set1_epi8(0x0F), hi = _mm_set1_epi8((char)(c->pad << 4));
    const __m128i pads = _mm_set1_epi8((char)c->pad_byte);
    Py_ssize_t r0 = 0;
    for (; r0 + 16 <= nr; r0 += 16)
        for (Py_ssize_t c0 = 0; c0 + 16 <= nc; c0 += 16) {
            __m128i x[16];
            for (int i = 0; i < 16; i++) x[i] = _mm_loadu_si128((const __m128i *)(log + (c0 + i) * L + r0));
            transpose16x16(x);
            for (int r = 0; r < 16; r++) {
                __m128i codes = _mm_or_si128(_mm_and_si128(x[r], low), hi);
                __m128i lo16 = _mm_unpacklo_epi8(codes, pads), hi16 = _mm_unpackhi_epi8(codes, pads);
                uint8_t *out = bytes + (r0 + r) * pb + c0 * 4;
                _mm_storeu_si128((__m128i *)out, _mm_unpacklo_epi16(lo16, pads));
                _mm_storeu_si128((__m128i *)(out + 16), _mm_unpackhi_epi16(lo16, pads));
                _mm_storeu_si128((__m128i *)(out + 32), _mm_unpacklo_epi16(hi16, pads));
                _mm_storeu_si128((__m128i *)(out + 48), _mm_unpackhi_epi16(hi16, pads));
            }
        }
    return r0;
}

/* The other way (kind 0): 16 rows' 16 column words, the first code of each, transposed into
 * 16 logical bytes a column, sign-extended when c->sign (u4[9,633,571]{1,0,2:...} unpacked: the
 * one-row remainder slot by slot cost twice the other eight rows). */
static Py_ssize_t unit_rows16_unpack(const ctx_t *c, char *log, const uint8_t *bytes, Py_ssize_t nc, Py_ssize_t L,
                                     Py_ssize_t pb, Py_ssize_t nr)
{
    const __m128i first = _mm_set1_epi32(0x0F), half = _mm_set1_epi8((char)(c->sign ? 8 : 0));
    Py_ssize_t r0 = 0;
    for (; r0 + 16 <= nr; r0 += 16)
        for (Py_ssize_t c0 = 0; c0 + 16 <= nc; c0 += 16) {
            __m128i x[16];
            for (int r = 0; r < 16; r++) {
                const __m128i *in = (const __m128i *)(bytes + (r0 + r) * pb + c0 * 4);
                __m128i w[4];
                for (int k = 0; k < 4; k++) w[k] = _mm_and_si128(_mm_loadu_si128(in + k), first);
                __m128i v = _mm_packus_epi16(_mm_packs_epi32(w[0], w[1]), _mm_packs_epi32(w[2], w[3]));
                x[r] = _mm_sub_epi8(_mm_xor_si128(v, half), half);
            }
            transpose16x16(x);
            for (int i = 0; i < 16; i++) _mm_storeu_si128((__m128i *)(log + (c0 + i) * L + r0), x[i]);
        }
    return r0;
}
#endif

/* Each row of lines 4 columns at a time; the last nc % 4 columns (and any whose 8-byte read
 * would leave the logical array) word by word. */
#define WORDS_ROW_AHEAD 16 /* short_words: rows of lines the buffer's lines are fetched ahead */
static void short_words(const ctx_t *c, const task_t *t, int unpack, uint8_t *bytes, char *log, const rows_t *rows)
{
#if HAVE_NIB_ROWS
    const int last = t->ndim - 1, n = (int)t->shape[last];
    const Py_ssize_t nc = t->shape[last - 1], L = t->ls[last - 1], pb = rows->ps / 2;
    const uint64_t pads = 0x0101010101010101ULL * c->pad_byte;
    Py_ssize_t done = 0; /* rows whose first nc - nc % 16 columns unit_rows16 packed */
#if HAVE_WIDE
    /* (fewer rows of lines than WIDE_MIN_ROWS stay here: s4[56049,95]{0,1:T(8,128)(8,1)E(4)}'s ragged
     * task, one row of 7 codes, to_physical 1.5 -> 1.95x a copy through the 8 x k blocks, one thread) */
    if (use_wide && rows->n >= WIDE_MIN_ROWS && !(n == 1 && rows->ls == 1 && nc >= 16)
        && wide_fits(rows->ls, n, unpack)) {
        wide_short(unpack, bytes, log, nc, L, rows->n, rows->ls, pb, n, unpack ? (uint8_t)c->sign : c->pad, 0, 0);
        return;
    }
#endif
#if HAVE_SSE2
    if (n == 1 && rows->ls == 1 && t->ps[last - 1] == 8 && nc >= 16)
        done = unpack ? unit_rows16_unpack(c, log, bytes, nc, L, pb, rows->n)
                      : unit_rows16(c, bytes, log, nc, L, pb, rows->n);
#endif
    for (Py_ssize_t r = 0; r < rows->n; r++) {
        uint8_t *out = bytes + r * pb;
        char *lg = log + r * rows->ls;
        Py_ssize_t i = r < done ? nc - nc % 16 : 0;
        if (r + WORDS_ROW_AHEAD < rows->n) /* the row of lines WORDS_ROW_AHEAD rows on, every line of it */
            for (Py_ssize_t j = 0; j < nc * 4; j += 64) {
                if (unpack) __builtin_prefetch(out + WORDS_ROW_AHEAD * pb + j, 0, 3);
                else __builtin_prefetch(out + WORDS_ROW_AHEAD * pb + j, 1, 3);
            }
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

/* One row of lines of joined columns: 4-byte column words of 1, 2 or 4 codes in SIMD lanes
 * (join4_row), the rest JOIN_STAGE packed bytes at a time: the run of codes (un)packed in the
 * stage whole bytes at a time (the last few codes one by one), the columns' bit fields moved to
 * (from) their bytes. */
static void joined_row(const ctx_t *c, const task_t *t, int unpack, uint8_t *bytes, char *log)
{
    _Alignas(64) uint8_t stage[JOIN_STAGE + 16];
    const int last = t->ndim - 1, n = (int)t->shape[last], nb = n * c->bits;
    const Py_ssize_t nc = t->shape[last - 1], P = t->ps[last - 1] / c->per, chunk = JOIN_STAGE * 8 / nb;
    const uint64_t pads = 0x0101010101010101ULL * c->pad_byte;
    ctx_t cached = *c;
    cached.stream = 0; /* the stage stays in L1 */
    Py_ssize_t first = 0; /* 4-byte column words of 1, 2 or 4 codes in SIMD lanes first */
#if HAVE_NIB_ROWS
    if (P == 4 && (unpack || t->kind == 2))
        first = join4_row(unpack, bytes, log, nc, c->bits, n, c->pad_byte, c->sign, c->stream, c->bytes_hi,
                          WORDS_AVX2);
#endif
    for (Py_ssize_t j0 = first; j0 < nc; j0 += chunk) {
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
    if (short_nibbles(c, t, unpack, rows)) {
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
#if HAVE_WIDE
    if (t->tail) { /* (joined_tail: rows->ls is the rows' R) */
        const int last = t->ndim - 1;
        wide_short(unpack, bytes, log, t->shape[last - 1], t->ls[last - 1], rows->n, rows->ls, rows->ps / 2, 8,
                   unpack ? (uint8_t)c->sign : c->pad, t->tail, t->tail_ps / 2);
        return;
    }
#endif
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


#endif /* TENSORLAYOUT_PACK_WORDS_H */
