/* _kernel_words_lines.h: the whole tiles of strips_src_run's strips (_kernel_strips.h) for 4-
 * and 8-byte items, whose source rows run on over g (f32[23395,91]{0,1:T(8,128)} to_physical:
 * 128 logical rows of 364 bytes a tile column, 32 bytes of each per tile; f32[128,128,8,16]
 * {0,1,3,2:T(4,128)}: rows 64 KiB apart, 512 bytes each per g), streamed out in pairs side by
 * side along b, so that each destination row gets its whole line at once (two 32-byte streamed
 * stores in turn) instead of a half line from one tile and the other half a tile later, with
 * 8 (f64: 4) lines half written in between. The kernel's tasks alone, one thread, CPU time,
 * in-process alternation with the tiles, medians over a copy's (11-21 rounds):
 * f32[23395,91]{0,1:T(8,128)} to 2.24 -> 2.10, s64[16384,128]{0,1:T(4,128)} to 2.07 -> 1.71,
 * f64[1024,128,16,4]{1,0,3,2:T(2,128)} to 1.99 -> 1.46, f32[128,128,8,16]{0,1,3,2:T(4,128)} to
 * 1.90 -> 1.78. Not taken (measured slower on all but the first of those): the source of the
 * strip's next step fetched into L1 meanwhile (s64[6835,180]{0,1:T(8,128)} to 1.49 -> 1.91).
 * Strips whose blocks are narrower than a tile go the same way in tiles across g.
 * Self-contained (include guard): it includes the register tiles it runs. */
#ifndef TENSORLAYOUT_KERNEL_WORDS_LINES_H
#define TENSORLAYOUT_KERNEL_WORDS_LINES_H
#include "_kernel_words.h"

#if HAVE_AVX2_DISPATCH
/* Two 8 x 8 tiles of 4-byte items along b into 8 destination rows anywhere (drow[a], each on 32
 * bytes): drow[a][b*4] = s[a*4 + b*sb] for a < 8, b < 16, each row's 64 bytes streamed at once. */
__attribute__((target("avx2"))) static void line_tiles_u32_rows(char *const *drow, const char *s, Py_ssize_t sb)
{
    __m256 r[8], lo[8], hi[8];
    for (int b = 0; b < 8; b++) r[b] = _mm256_loadu_ps((const float *)(s + b * sb));
    transpose_u32x8(r, lo);
    for (int b = 0; b < 8; b++) r[b] = _mm256_loadu_ps((const float *)(s + (b + 8) * sb));
    transpose_u32x8(r, hi);
    for (int k = 0; k < 8; k++) {
        _mm256_stream_ps((float *)drow[k], lo[k]);
        _mm256_stream_ps((float *)(drow[k] + 32), hi[k]);
    }
}

/* line_tiles_u32_rows into the rows d + a*da (d and da on 32 bytes). */
__attribute__((target("avx2"))) static void line_tiles_u32(char *d, const char *s, Py_ssize_t da, Py_ssize_t sb)
{
    char *drow[8];
    for (int a = 0; a < 8; a++) drow[a] = d + a * da;
    line_tiles_u32_rows(drow, s, sb);
}

/* Two 4 x 4 tiles of 8-byte items along b: d[a*da + b*8] = s[a*8 + b*sb] for a < 4, b < 8,
 * each destination row's 64 bytes streamed at once (d and da on 32 bytes). */
__attribute__((target("avx2"))) static void line_tiles_u64(char *d, const char *s, Py_ssize_t da, Py_ssize_t sb)
{
    __m256d o[2][4];
    for (int h = 0; h < 2; h++) transpose_u64x4(s + 4 * h * sb, sb, o[h]);
    for (int a = 0; a < 4; a++) {
        _mm256_stream_pd((double *)(d + a * da), o[0][a]);
        _mm256_stream_pd((double *)(d + a * da + 32), o[1][a]);
    }
}
#endif

/* A strip's whole tiles streamed out (tiles_out's work: cg blocks of ra x bw items, block g
 * from s + g*sg to d + g*dg) as line_tiles pairs, where the strip is one line of b (bw*it = 64)
 * and d, da, dg lie on 32 bytes; returns 0 (nothing done) otherwise. */
static int words_lines_out(char *d, const char *s, Py_ssize_t cg, Py_ssize_t ra, Py_ssize_t bw, Py_ssize_t dg,
                           Py_ssize_t da, Py_ssize_t sg, Py_ssize_t sb, int lg)
{
#if HAVE_AVX2_DISPATCH
    const Py_ssize_t v = lg == 2 ? 8 : 4;
    if (!words_avx2 || (lg != 2 && lg != 3) || bw * ITEM(lg) != 64 || ra % v
        || (((uintptr_t)d | (uintptr_t)da | (uintptr_t)dg) & 31))
        return 0;
    for (Py_ssize_t g = 0; g < cg; g++)
        for (Py_ssize_t a = 0; a < ra; a += v) {
            char *o = d + g * dg + a * da;
            const char *in = s + g * sg + a * ITEM(lg);
            if (lg == 2)
                line_tiles_u32(o, in, da, sb);
            else
                line_tiles_u64(o, in, da, sb);
        }
    return 1;
#else
    (void)d, (void)s, (void)cg, (void)ra, (void)bw, (void)dg, (void)da, (void)sg, (void)sb, (void)lg;
    return 0;
#endif
}

/* words_lines_out for a strip whose blocks are narrower than a tile (na = 1, 2 or 4 items of 4
 * bytes a g: a T(4,128) tile's rows read into another tiling's, f32[512,512,16]{1,0,2:T(1,128)}
 * -> {0,1,2:T(4,128)}): tiles across 8/na consecutive g, their 8 destination rows na per g;
 * the cg*na rows whole tiles (else 0, nothing done). Through the L1 stage (strips_src_run's)
 * that row measured 1.84-2.02x a copy, here 1.69-1.88 (whole call, one thread, CPU time,
 * in-process alternation, medians of 5-7 runs); f32[2000,600]{0,1:T(2,128)} and
 * s32[1325,5173]{0,1:T(2,128)} to_physical alike either way. */
static int words_lines_across(char *d, const char *s, Py_ssize_t cg, Py_ssize_t na, Py_ssize_t bw, Py_ssize_t dg,
                              Py_ssize_t da, Py_ssize_t sb, int lg)
{
#if HAVE_AVX2_DISPATCH
    if (!words_avx2 || lg != 2 || bw != 16 || (na != 1 && na != 2 && na != 4) || (cg * na) % 8
        || (((uintptr_t)d | (uintptr_t)da | (uintptr_t)dg) & 31))
        return 0;
    char *drow[8];
    for (Py_ssize_t k0 = 0; k0 < cg * na; k0 += 8) {
        for (int k = 0; k < 8; k++) drow[k] = d + (k0 + k) / na * dg + (k0 + k) % na * da;
        line_tiles_u32_rows(drow, s + k0 * 4, sb);
    }
    return 1;
#else
    (void)d, (void)s, (void)cg, (void)na, (void)bw, (void)dg, (void)da, (void)sb, (void)lg;
    return 0;
#endif
}

#endif
