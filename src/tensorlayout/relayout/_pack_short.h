/* _pack_short.h: the packing kernel's short contiguous lines: rows of lines of a few whole 64-bit
 * logical words each (n codes, n a multiple of 8, at most SHORT_MAX_Q packed bytes: a u1 (32,1)
 * sub-tile's 32 rows, an E(4) line of 16) whose rows do not continue them, one row a loop step
 * with the word moves inlined for the constant width, the axis outside the rows in the same call,
 * instead of a call per line (u1[4096,8192]{0,1:T(64,128)(32,1)E(1)}, its lines read on
 * (_lines_on in _pack_path.py): 17 / 19 -> 2.4 / 6x a copy). Self-contained (include guard). */
#ifndef TENSORLAYOUT_PACK_SHORT_H
#define TENSORLAYOUT_PACK_SHORT_H
#include "_pack_words.h"

#define SHORT_AHEAD 16 /* short lines: rows a line is fetched ahead */
#define SHORT_MAX_Q 8 /* short lines: packed bytes a line at most (one 64-bit register) */

/* The task's lines are short contiguous lines of whole words, more than one a row of lines, the
 * rows not continuing them. */
static int short_lines(const ctx_t *c, const task_t *t, line_t kind, const rows_t *rows)
{
    const Py_ssize_t n = t->ndim > 0 ? t->shape[t->ndim - 1] : 0;
    return HAVE_SWAR && kind == L_CONTIGUOUS && rows->n > 1 && n % 8 == 0 && n / c->per <= SHORT_MAX_Q
           && rows->ls != n; /* (rows continuing the lines' logical run go through a stage) */
}

#if HAVE_SWAR
/* q (1 to 8) bytes of y to `to` in fixed-size moves. */
ALWAYS_INLINE void put_q(uint8_t *to, uint64_t y, Py_ssize_t q)
{
    switch (q) {
    case 8: memcpy(to, &y, 8); return;
    case 4: memcpy(to, &y, 4); return;
    case 2: memcpy(to, &y, 2); return;
    case 1: *to = (uint8_t)y; return;
    default: memcpy(to, &y, (size_t)q);
    }
}

ALWAYS_INLINE uint64_t get_q(const uint8_t *from, Py_ssize_t q)
{
    uint64_t x = 0;
    switch (q) {
    case 8: memcpy(&x, from, 8); break;
    case 4: memcpy(&x, from, 4); break;
    case 2: memcpy(&x, from, 2); break;
    case 1: x = *from; break;
    default: memcpy(&x, from, (size_t)q);
    }
    return x;
}

/* Each row's line: its n / 8 logical words packed into one register, stored in one move (read
 * in one, unpacked word by word); of a kind-2 task the pad bytes of the column's gap after it
 * (gap bytes). The rows of every block of blk in turn. */
ALWAYS_INLINE void short_rows_k(const ctx_t *c, int unpack, uint8_t *bytes0, char *log0, Py_ssize_t n,
                                Py_ssize_t gap, const rows_t *rows, const rows_t *blk, const int bits)
{
    const Py_ssize_t words = n / 8, q = words * bits, pb = rows->ps / (8 / bits), ls = rows->ls;
    for (Py_ssize_t k = 0; k < blk->n; k++) {
        uint8_t *bytes = bytes0 + k * (blk->ps / (8 / bits));
        char *log = log0 + k * blk->ls;
        for (Py_ssize_t r = 0; r < rows->n; r++) {
            uint8_t *b = bytes + r * pb;
            char *lg = log + r * ls;
            const int ahead = r + SHORT_AHEAD < rows->n; /* (the line a later row reads, writes) */
            if (unpack) {
                if (ahead) __builtin_prefetch(lg + SHORT_AHEAD * ls, 1, 3);
                const uint64_t x = get_q(b, q);
                for (Py_ssize_t w = 0; w < words; w++) {
                    const uint64_t y = word_unpack(c, (x >> (8 * bits * w)) & ((1ULL << (8 * bits)) - 1), bits);
                    memcpy(lg + 8 * w, &y, 8);
                }
                continue;
            }
            if (ahead) __builtin_prefetch(lg + SHORT_AHEAD * ls, 0, 3);
            uint64_t y = 0;
            for (Py_ssize_t w = 0; w < words; w++) {
                uint64_t x;
                memcpy(&x, lg + 8 * w, 8);
                y |= word_pack(c, x, bits) << (8 * bits * w);
            }
            put_q(b, y, q);
            if (gap) memset(b + q, c->pad_byte, (size_t)gap);
        }
    }
}
#endif

/* The rows of short lines (short_lines) from slot and log on, for each block of blk (n = 1: one);
 * a kind-2 task's gaps with them (rows is its column axis). */
static void short_rows(const ctx_t *c, const task_t *t, int unpack, Py_ssize_t slot, char *log, const rows_t *rows,
                       const rows_t *blk)
{
#if HAVE_SWAR
    uint8_t *bytes = c->bytes + slot / c->per;
    const int last = t->ndim - 1;
    const Py_ssize_t n = t->shape[last];
    const Py_ssize_t gap = t->kind == 2 && !unpack ? (t->ps[last - 1] - n) / c->per : 0;
    switch (c->bits) {
    case 1: short_rows_k(c, unpack, bytes, log, n, gap, rows, blk, 1); break;
    case 2: short_rows_k(c, unpack, bytes, log, n, gap, rows, blk, 2); break;
    default: short_rows_k(c, unpack, bytes, log, n, gap, rows, blk, 4);
    }
#else
    (void)c, (void)t, (void)unpack, (void)slot, (void)log, (void)rows, (void)blk;
#endif
}

#endif /* TENSORLAYOUT_PACK_SHORT_H */
