/* _kernel_words_shifted.h: streamed strips (see strips_src_run) into destination rows that are
 * not a whole number of cache lines apart: from_physical of s64[1276,3673]{0,1:T(1,128)}, whose
 * logical rows are 29384 bytes apart, each 8 bytes further off a line than the one before.
 * strips_src_run's strips cover the same items of every row, so there each row's piece
 * straddles two of its lines and goes through the cache (each line read before it is written,
 * and written in two visits): 3.2-3.8x a copy (the kernel alone, one thread, 1152 x 3673 8-byte
 * items, 1557 x 2993 4-byte ones). Here each row keeps the last two strips in its stage row
 * (two lines) and writes the one whole line of its own that ends in the newer strip, streamed
 * past the cache, so every line of every row is written once, whole (the row's first and last
 * partial lines stored): 1.6-1.8x. The strips go along all the rows of a pass (SHIFT_CHUNK),
 * reading their source rows along as strips_src_run does (the rows in passes of 256, each
 * read 2 KiB at a time, measured 1.9-2.0x). In cache the same strips take 4-byte items from
 * 4 MiB of destination on (shifted_in_cache in _kernel_strips.h).
 * Self-contained (include guard): it includes the tiles it runs. */
#ifndef TENSORLAYOUT_KERNEL_WORDS_SHIFTED_H
#define TENSORLAYOUT_KERNEL_WORDS_SHIFTED_H
#include "_kernel_tiles.h"

#define SHIFT_PITCH 128 /* stage bytes per row: the last two strips */

/* The transposes of ra x bw items (source rows sb apart, its row a at in + a*it) into the upper
 * halves of stage rows (SHIFT_PITCH apart): V x V tiles, the edges by the scalar loop. */
static void shift_fill(const tiler_t *t, char *stage, const char *in, Py_ssize_t ra, Py_ssize_t bw,
                       Py_ssize_t sb, int lg)
{
    const Py_ssize_t it = ITEM(lg), v = t->v;
    const Py_ssize_t eb = t->tile ? bw - bw % v : 0, ea = t->tile ? ra - ra % v : 0;
    char *up = stage + 64;
    for (Py_ssize_t bt = 0; bt < eb; bt += v)
        for (Py_ssize_t at = 0; at < ea; at += v)
            t->tile(up + at * SHIFT_PITCH + bt * it, in + at * it + bt * sb, SHIFT_PITCH, sb, 0);
    transpose_table[lg](up + eb * it, in + eb * sb, ra, bw - eb, SHIFT_PITCH, sb);
    transpose_table[lg](up + ea * SHIFT_PITCH, in + ea * it, ra - ea, eb, SHIFT_PITCH, sb);
}

/* One row's part after the strip [b0, b1) is in its stage row `st` (the strip before it in the
 * lower half): its whole line ending in the strip streamed (`full`: the strip is w items), and
 * at the row's end (`last`) the items after it stored. m: the row's items before its first
 * line boundary (mod w). */
static inline void shift_row(char *row, const char *st, Py_ssize_t b0, Py_ssize_t b1, Py_ssize_t m,
                             Py_ssize_t w, Py_ssize_t it, int full, int last)
{
    Py_ssize_t from = b0 - m; /* the row's first item not yet written */
    if (from < 0) from = 0;
    if (full) {
        Py_ssize_t ls = b0 - m, to = b1 - m;
        const char *x = st + 64 + (ls - b0) * it;
        if (ls >= 0) {
#if HAVE_STREAM
            for (int k = 0; k < 64; k += 16)
                _mm_stream_si128((__m128i *)(row + ls * it + k), _mm_loadu_si128((const __m128i *)(x + k)));
#else
            memcpy(row + ls * it, x, 64);
#endif
        } else
            memcpy(row, st + 64, (size_t)(to * it)); /* the row's first partial line */
        from = to;
    }
    if (last && from < b1) memcpy(row + from * it, st + 64 + (from - b0) * it, (size_t)((b1 - from) * it));
}

/* Whether strips_shifted takes a streamed transpose's strips: destination rows (a, and g
 * where ng > 1) a multiple of the item apart but not of a line (else strips_src_run streams
 * them as they are) and of SHIFT_MIN_ROW bytes at least, d on an item, items of 4 or 8 bytes
 * with their register tiles. Shorter rows have more of their lines partial, stored (232-byte
 * rows, f64[22973,29]{0,1:T(1,128)} from_physical, in cache: 1.7-1.9 -> 2.5-2.9x a copy). */
#define SHIFT_MIN_ROW 1024
static int shifted_takes(const char *d, Py_ssize_t ng, Py_ssize_t nb, Py_ssize_t da, Py_ssize_t dg, int lg)
{
    const Py_ssize_t it = ITEM(lg);
    return HAVE_STREAM && (lg == 2 || lg == 3) && tilers[lg].tile != NULL && ((uintptr_t)d % (uintptr_t)it) == 0
           && nb * it >= SHIFT_MIN_ROW && da > 0 && da % it == 0 && (ng == 1 || (dg > 0 && dg % it == 0))
           && (da % 64 != 0 || (ng > 1 && dg % 64 != 0));
}

#define SHIFT_CHUNK 4096 /* destination rows per pass, at most (their stage rows: 512 KiB, in L2) */
#define SHIFT_SUB 256     /* ... filled and written at a time (32 KiB of stage, in L1) */

/* dst[g*dg + a*da + b*it] = src[(g*na + a)*it + b*sb] (the source rows run on over g), in
 * passes of SHIFT_CHUNK destination rows (numbered across g), each pass in strips of one line
 * of b along all its rows, so that the strip's source rows are read along (see the top;
 * shifted_takes holds). Returns 0 (nothing done) where the stage cannot be allocated. */
static int strips_shifted(char *d, const char *s, Py_ssize_t ng, Py_ssize_t na, Py_ssize_t nb, Py_ssize_t dg,
                          Py_ssize_t da, Py_ssize_t sb, int lg)
{
    const Py_ssize_t it = ITEM(lg), w = 64 / it, rows = ng * na;
    const Py_ssize_t chunk = rows < SHIFT_CHUNK ? rows : SHIFT_CHUNK;
    const tiler_t *t = &tilers[lg];
    void *raw = PyMem_RawMalloc((size_t)(chunk * (SHIFT_PITCH + sizeof(char *))) + 64); /* (the GIL is released) */
    if (raw == NULL) return 0;
    char *stage = (char *)(((uintptr_t)raw + 63) & ~(uintptr_t)63), **row = (char **)(stage + chunk * SHIFT_PITCH);
    for (Py_ssize_t i0 = 0; i0 < rows; i0 += chunk) {
        const Py_ssize_t ra = rows - i0 < chunk ? rows - i0 : chunk;
        for (Py_ssize_t r = 0; r < ra; r++) row[r] = d + (i0 + r) / na * dg + (i0 + r) % na * da;
        for (Py_ssize_t b0 = 0, b1; b0 < nb; b0 = b1) {
            b1 = b0 + w < nb ? b0 + w : nb;
            const int full = b1 - b0 == w, last = b1 == nb;
            for (Py_ssize_t r0 = 0; r0 < ra; r0 += SHIFT_SUB) {
                const Py_ssize_t rs = ra - r0 < SHIFT_SUB ? ra - r0 : SHIFT_SUB;
                char *st = stage + r0 * SHIFT_PITCH;
                if (b0 > 0) /* the strip before to the lower halves */
                    for (Py_ssize_t r = 0; r < rs; r++) memcpy(st + r * SHIFT_PITCH, st + r * SHIFT_PITCH + 64, 64);
                shift_fill(t, st, s + (i0 + r0) * it + b0 * sb, rs, b1 - b0, sb, lg);
                for (Py_ssize_t r = r0; r < r0 + rs; r++)
                    shift_row(row[r], stage + r * SHIFT_PITCH, b0, b1, (Py_ssize_t)((uintptr_t)row[r] & 63) / it, w,
                              it, full, last);
            }
        }
    }
    PyMem_RawFree(raw);
    return 1;
}

#endif
