/* _kernel_words_stage.h: narrow transposes of 4-byte items whose source rows run on over g in
 * pieces of 1, 2 or 4 items (a column-major tiling's 128 source rows, 16 bytes each per tile),
 * read a whole line of each row at a time into a contiguous L1 stage, then transposed from it
 * in 8 x 8 tiles. Read in place, where those rows share L1 sets (2 KiB apart or a multiple:
 * 128 rows in two sets of 8 ways), each line was visited twice, 32 bytes at a time, and left
 * L1 between the visits, so each tile waited on loads from L2 or beyond.
 * Self-contained (include guard): it includes the tiles it runs. */
#ifndef TENSORLAYOUT_KERNEL_WORDS_STAGE_H
#define TENSORLAYOUT_KERNEL_WORDS_STAGE_H
#include "_kernel_tiles.h"

#define NARROW_STAGE_ROWS 128 /* source rows per stage: one line each, 8 KiB */

/* Whether narrow_src_staged can take the source rows: a multiple of a line apart (every row
 * then enters a line at the same g) and starting on a piece boundary (no piece straddles a
 * line), with 8 x 8 tiles to run (AVX2). */
static inline int narrow_stageable(const char *p, Py_ssize_t piece, Py_ssize_t stride)
{
    return rows_tile_u32 != NULL && stride % 64 == 0 && piece > 0 && 64 % piece == 0
           && (uintptr_t)p % (uintptr_t)piece == 0;
}

#if HAVE_AVX2_DISPATCH
/* Copy `rows` source rows `sb` apart (`bytes` each, at most 64, from `in`) to the stage's
 * 64-byte rows, fetching each row's line `ahead` bytes on into L2 (0: none; a line per row
 * per stage, 128 rows 2 KiB apart: neither the prefetchers nor L1's two sets follow them). */
__attribute__((target("avx2"))) static void stage_lines(char *stage, const char *in, Py_ssize_t rows,
                                                        Py_ssize_t sb, size_t bytes, Py_ssize_t ahead)
{
    if (bytes == 64)
        for (Py_ssize_t x = 0; x < rows; x++) {
            const char *q = in + x * sb;
            if (ahead) _mm_prefetch(q + ahead, _MM_HINT_T1);
            _mm256_store_si256((__m256i *)(stage + x * 64), _mm256_loadu_si256((const __m256i *)q));
            _mm256_store_si256((__m256i *)(stage + x * 64 + 32), _mm256_loadu_si256((const __m256i *)(q + 32)));
        }
    else
        for (Py_ssize_t x = 0; x < rows; x++) {
            if (ahead) _mm_prefetch(in + x * sb + ahead, _MM_HINT_T1);
            memcpy(stage + x * 64, in + x * sb, bytes);
        }
}

/* The 8 x 8 tiles of G = 8/na g from the stage (their pieces at stage + x*64 + off) over rows
 * [0, n8) of it: destination row k of a tile at d + doff[k] + x*4. */
__attribute__((target("avx2"))) static void stage_tiles_u32(char *d, const char *stage, Py_ssize_t off,
                                                            Py_ssize_t n8, const Py_ssize_t *doff)
{
    for (Py_ssize_t x = 0; x < n8; x += 8) {
        __m256 r[8], o[8];
        for (int k = 0; k < 8; k++) r[k] = _mm256_loadu_ps((const float *)(stage + (x + k) * 64 + off));
        transpose_u32x8(r, o);
        for (int k = 0; k < 8; k++) _mm256_storeu_ps((float *)(d + doff[k] + x * 4), o[k]);
    }
}

/* The g in [g0, g1) of one stage (rows x0.. of the source, nx of them, piece g at
 * stage + x*64 + (g-g0)*sg): G = 8/na g a tile over whole groups of 8 rows, the rest (the g
 * past whole groups, the rows past whole 8s) through transpose_tiled from the stage. */
static void narrow_from_stage(char *d, const char *stage, Py_ssize_t g0, Py_ssize_t g1, Py_ssize_t x0,
                              Py_ssize_t nx, Py_ssize_t na, Py_ssize_t dg, Py_ssize_t da, Py_ssize_t sg)
{
    const Py_ssize_t G = 8 / na, n8 = nx - nx % 8;
    Py_ssize_t h = g0, doff[8];
    for (; h + G <= g1; h += G) {
        for (int k = 0; k < 8; k++) doff[k] = (h + k / na) * dg + (k % na) * da + x0 * 4;
        stage_tiles_u32(d, stage, (h - g0) * sg, n8, doff);
    }
    for (Py_ssize_t g = h; g < g1; g++)
        transpose_tiled(d + g * dg + x0 * 4, stage + (g - g0) * sg, na, nx, da, 64, 2, 0);
    if (n8 < nx)
        for (Py_ssize_t g = g0; g < h; g++)
            transpose_tiled(d + g * dg + (x0 + n8) * 4, stage + n8 * 64 + (g - g0) * sg, na, nx - n8, da, 64, 2, 0);
}

/* The stage's 64-byte rows out to `rows` destination rows `da` apart (`bytes` each, at most
 * 64, to `out`), fetching each row's line `ahead` bytes on to be written (0: none). */
__attribute__((target("avx2"))) static void unstage_lines(char *out, const char *stage, Py_ssize_t rows,
                                                          Py_ssize_t da, size_t bytes, Py_ssize_t ahead)
{
    if (bytes == 64)
        for (Py_ssize_t x = 0; x < rows; x++) {
            char *q = out + x * da;
            if (ahead) __builtin_prefetch(q + ahead, 1, 2);
            _mm256_storeu_si256((__m256i *)q, _mm256_load_si256((const __m256i *)(stage + x * 64)));
            _mm256_storeu_si256((__m256i *)(q + 32), _mm256_load_si256((const __m256i *)(stage + x * 64 + 32)));
        }
    else
        for (Py_ssize_t x = 0; x < rows; x++) {
            if (ahead) __builtin_prefetch(out + x * da + ahead, 1, 2);
            memcpy(out + x * da, stage + x * 64, bytes);
        }
}

/* The 8 x 8 tiles of G = 8/nb g into the stage (their pieces at stage + x*64 + off) over rows
 * [0, n8) of it: source row k of a tile at s + soff[k] + x*4. */
__attribute__((target("avx2"))) static void tiles_to_stage_u32(char *stage, const char *s, Py_ssize_t off,
                                                               Py_ssize_t n8, const Py_ssize_t *soff)
{
    for (Py_ssize_t x = 0; x < n8; x += 8) {
        __m256 r[8], o[8];
        for (int k = 0; k < 8; k++) r[k] = _mm256_loadu_ps((const float *)(s + soff[k] + x * 4));
        transpose_u32x8(r, o);
        for (int k = 0; k < 8; k++) _mm256_storeu_ps((float *)(stage + (x + k) * 64 + off), o[k]);
    }
}

/* narrow_from_stage's twin: the g in [g0, g1) of destination rows x0.. (nx of them) into the
 * stage, piece g of row x at stage + x*64 + (g-g0)*dg. */
static void narrow_to_stage(char *stage, const char *s, Py_ssize_t g0, Py_ssize_t g1, Py_ssize_t x0,
                            Py_ssize_t nx, Py_ssize_t nb, Py_ssize_t dg, Py_ssize_t sg, Py_ssize_t sb)
{
    const Py_ssize_t G = 8 / nb, n8 = nx - nx % 8;
    Py_ssize_t h = g0, soff[8];
    for (; h + G <= g1; h += G) {
        for (int k = 0; k < 8; k++) soff[k] = (h + k / nb) * sg + (k % nb) * sb + x0 * 4;
        tiles_to_stage_u32(stage, s, (h - g0) * dg, n8, soff);
    }
    for (Py_ssize_t g = h; g < g1; g++)
        transpose_tiled(stage + (g - g0) * dg, s + g * sg + x0 * 4, nx, nb, 64, sb, 2, 0);
    if (n8 < nx)
        for (Py_ssize_t g = g0; g < h; g++)
            transpose_tiled(stage + n8 * 64 + (g - g0) * dg, s + g * sg + (x0 + n8) * 4, nx - n8, nb, 64, sb, 2, 0);
}
#endif

/* ng transposes of na (1, 2 or 4) x nb 4-byte items whose source rows run on over g
 * (sg = na*4; narrow_src_stageable holds): NARROW_STAGE_ROWS rows at a time, each source
 * line (the first up to the rows' first line boundary) copied whole into the stage, the line
 * two on fetched into L2 meanwhile, then moved out of the stage (narrow_from_stage). Does all
 * ng. */
static void narrow_src_staged(char *d, const char *s, Py_ssize_t ng, Py_ssize_t na, Py_ssize_t nb, Py_ssize_t dg,
                              Py_ssize_t da, Py_ssize_t sg, Py_ssize_t sb)
{
#if HAVE_AVX2_DISPATCH
    _Alignas(64) char stage[NARROW_STAGE_ROWS * 64];
    const Py_ssize_t per_line = 64 / sg, head = (Py_ssize_t)((64 - ((uintptr_t)s & 63)) & 63) / sg;
    for (Py_ssize_t x0 = 0; x0 < nb; x0 += NARROW_STAGE_ROWS) {
        const Py_ssize_t nx = nb - x0 < NARROW_STAGE_ROWS ? nb - x0 : NARROW_STAGE_ROWS;
        for (Py_ssize_t g0 = 0, g1; g0 < ng; g0 = g1) {
            g1 = g0 == 0 && head ? head : g0 + per_line;
            if (g1 > ng) g1 = ng;
            Py_ssize_t ahead = g1 + per_line < ng ? (g1 + per_line - g0) * sg : 0;
            stage_lines(stage, s + g0 * sg + x0 * sb, nx, sb, (size_t)((g1 - g0) * sg), ahead);
            narrow_from_stage(d, stage, g0, g1, x0, nx, na, dg, da, sg);
        }
    }
#else
    for (Py_ssize_t g = 0; g < ng; g++) transpose_tiled(d + g * dg, s + g * sg, na, nb, da, sb, 2, 0);
#endif
}

/* narrow_src_staged's twin for destination rows that run on over g (dg = nb*4, nb 1, 2 or 4;
 * narrow_stageable(d, dg, da) holds): a line of each of NARROW_STAGE_ROWS destination rows
 * transposed into the stage, then written out whole, the line two on fetched meanwhile. Does
 * all ng. */
static void narrow_dst_staged(char *d, const char *s, Py_ssize_t ng, Py_ssize_t na, Py_ssize_t nb, Py_ssize_t dg,
                              Py_ssize_t da, Py_ssize_t sg, Py_ssize_t sb)
{
#if HAVE_AVX2_DISPATCH
    _Alignas(64) char stage[NARROW_STAGE_ROWS * 64];
    const Py_ssize_t per_line = 64 / dg, head = (Py_ssize_t)((64 - ((uintptr_t)d & 63)) & 63) / dg;
    for (Py_ssize_t x0 = 0; x0 < na; x0 += NARROW_STAGE_ROWS) {
        const Py_ssize_t nx = na - x0 < NARROW_STAGE_ROWS ? na - x0 : NARROW_STAGE_ROWS;
        for (Py_ssize_t g0 = 0, g1; g0 < ng; g0 = g1) {
            g1 = g0 == 0 && head ? head : g0 + per_line;
            if (g1 > ng) g1 = ng;
            Py_ssize_t ahead = g1 + per_line < ng ? (g1 + per_line - g0) * dg : 0;
            narrow_to_stage(stage, s, g0, g1, x0, nx, nb, dg, sg, sb);
            unstage_lines(d + g0 * dg + x0 * da, stage, nx, da, (size_t)((g1 - g0) * dg), ahead);
        }
    }
#else
    for (Py_ssize_t g = 0; g < ng; g++) transpose_tiled(d + g * dg, s + g * sg, na, nb, da, sb, 2, 0);
#endif
}

#endif
