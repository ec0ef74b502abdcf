/* _kernel_words.h: plain transposes of 8-byte items in cache in blocks of whole lines, their
 * 4 x 4 tiles inlined (AVX2, chosen at import): a block is 8 source rows' line of 8 items each
 * (64 bytes) into 8 destination rows' line, so every line of either side is moved once and
 * whole, with no call per tile (the 4 x 4 tiles through a function pointer, in blocks of one
 * line per row, took f64[256,2048]{0,1:T(1,128)} to 2-3x a copy); and transpose_grouped_dst's
 * (destination rows that run on a line per g: a column-major T(8,128) tile read into logical
 * rows) in the same blocks. The kernel alone, one thread, alternating builds, time of the
 * blocks / the tiles' (median of 16-30 rounds): f64[256,2048]{0,1:T(1,128)} from_physical
 * 0.58-0.67, to_physical 0.95; s64[3833,66]{0,1:T(1,128)} 0.72-0.79 both ways;
 * f64[37,686,3,13]{1,2,3,0:T(2,128)} to_physical 0.77-0.80; transpose_grouped_dst's
 * f64[1000,1000]{0,1:T(8,128)} and f64[500,300] from_physical 0.78-0.87. Not taken (measured
 * slower): 4-byte items in 16 x 16 blocks (plain f32 transposes 1.07-1.3), transpose_grouped's
 * source rows (f64[1000,1000] to_physical 1.23), and streamed copies (unchanged there).
 * Self-contained (include guard): it includes the tiles it falls back to. */
#ifndef TENSORLAYOUT_KERNEL_WORDS_H
#define TENSORLAYOUT_KERNEL_WORDS_H
#include "_kernel_tiles.h"

#if HAVE_AVX2_DISPATCH
/* One 8 x 8 block of 8-byte items: d[a*da + b*8] = s[a*8 + b*sb], a, b < 8. */
__attribute__((target("avx2"))) static inline __attribute__((always_inline)) void
words_block_u64(char *d, const char *s, Py_ssize_t da, Py_ssize_t sb)
{
    for (int h = 0; h < 2; h++)     /* the source line's halves: destination rows 4h.. */
        for (int q = 0; q < 2; q++) { /* source rows 4q.. */
            const char *x = s + h * 32 + 4 * q * sb;
            __m256d r0 = _mm256_loadu_pd((const double *)x), r1 = _mm256_loadu_pd((const double *)(x + sb));
            __m256d r2 = _mm256_loadu_pd((const double *)(x + 2 * sb));
            __m256d r3 = _mm256_loadu_pd((const double *)(x + 3 * sb));
            __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
            __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
            char *y = d + 4 * h * da + q * 32;
            _mm256_storeu_pd((double *)y, _mm256_permute2f128_pd(t0, t2, 0x20));
            _mm256_storeu_pd((double *)(y + da), _mm256_permute2f128_pd(t1, t3, 0x20));
            _mm256_storeu_pd((double *)(y + 2 * da), _mm256_permute2f128_pd(t0, t2, 0x31));
            _mm256_storeu_pd((double *)(y + 3 * da), _mm256_permute2f128_pd(t1, t3, 0x31));
        }
}

#define WORDS_CHUNK 64 /* items of each source row read at once where its rows share sets (8 lines) */

/* Whether words_rect_u64 reads the source rows WORDS_CHUNK items at a time: source rows a
 * multiple of 2 KiB apart (sharing two L1 sets, and few of L2's), 4 times the destination's
 * or more. A line of each of them per column of blocks had each line leave the caches
 * before the next column read the line after it; WORDS_CHUNK items of each row read along
 * (8 lines, which the prefetchers follow), into WORDS_CHUNK destination rows a line at a time,
 * measured (the kernel call alone, one thread, base and this build alternating in one process,
 * medians of 31-61 rounds over a copy's, 11 runs): f64[256,2048]{0,1:T(1,128)} to_physical
 * (rows 16 KiB apart) 1.7-2.5 (median 1.95) -> 1.5-2.5 (1.72), s64[3833,66]{0,1:T(1,128)}
 * from_physical (30 KiB) 1.5-1.7 -> 1.2-1.4, f64[32768,32]{0,1:T(1,128)} from_physical 2.0-2.1
 * -> 1.9. Not where the destination's rows are the further apart (f64[256,2048] from_physical
 * 1.5 -> 2.2 so) or nearly as far (f64[1301,957]{0,1:T(1,128)} from_physical, 11264 / 7656
 * bytes, 1.7-1.9 -> 1.8-2.0), nor rows off that multiple (f64[851,1185] to_physical, 9480
 * bytes, 1.47 -> 1.56; f64[22973,29] from_physical 1.6 -> 1.9-2.0), nor transposes of less
 * than WORDS_CHUNK_MIN bytes, which L2 holds whole (s64[1024,4,64]{0,1,2:T(1,128)}
 * from_physical, 512 KiB a transpose, 2.2-2.4 -> 3.7-3.8 so), nor into destination rows of
 * less than WORDS_CHUNK_ROW bytes (f64[22973,29]{0,1:T(1,128)} from_physical, source rows
 * 90 x 2 KiB apart, destination rows 232 bytes: 1.4-1.6 -> 2.0-2.2 chunked). */
#define WORDS_CHUNK_MIN (1 << 20)
#define WORDS_CHUNK_ROW 512
static inline int words_chunked(Py_ssize_t na, Py_ssize_t nb, Py_ssize_t da, Py_ssize_t sb)
{
    return sb % 2048 == 0 && sb >= 4 * da && da >= WORDS_CHUNK_ROW && na * nb * 8 >= WORDS_CHUNK_MIN;
}

/* The whole 8 x 8 blocks of an na x nb transpose of 8-byte items: [0, na/8*8) x [0, nb/8*8), a
 * column of blocks at a time (down the source's rows), or, where words_chunked holds,
 * WORDS_CHUNK columns at a time along each 8 source rows. */
__attribute__((target("avx2"))) static void words_rect_u64(char *d, const char *s, Py_ssize_t na, Py_ssize_t nb,
                                                           Py_ssize_t da, Py_ssize_t sb)
{
    const Py_ssize_t ea = na & ~(Py_ssize_t)7, eb = nb & ~(Py_ssize_t)7;
    if (!words_chunked(na, nb, da, sb)) {
        for (Py_ssize_t a = 0; a < ea; a += 8) /* (each block's next lines fetched ahead measured
                                                 * slower) */
            for (Py_ssize_t b = 0; b < eb; b += 8)
                words_block_u64(d + a * da + b * 8, s + a * 8 + b * sb, da, sb);
        return;
    }
    for (Py_ssize_t a0 = 0; a0 < ea; a0 += WORDS_CHUNK) {
        const Py_ssize_t a1 = a0 + WORDS_CHUNK < ea ? a0 + WORDS_CHUNK : ea;
        for (Py_ssize_t b = 0; b < eb; b += 8)
            for (Py_ssize_t a = a0; a < a1; a += 8)
                words_block_u64(d + a * da + b * 8, s + a * 8 + b * sb, da, sb);
    }
}

/* transpose_grouped_dst's twin (destination rows that run on a line per g: nb*8 = dg = 64):
 * a block column of 8 destination rows at a time, the G lines of each (na8 of the na items). */
__attribute__((target("avx2"))) static void words_grouped_dst_u64(char *d, const char *s, Py_ssize_t G,
                                                                  Py_ssize_t na8, Py_ssize_t nb, Py_ssize_t dg,
                                                                  Py_ssize_t da, Py_ssize_t sg, Py_ssize_t sb)
{
    for (Py_ssize_t a = 0; a < na8; a += 8)
        for (Py_ssize_t g = 0; g < G; g++)
            for (Py_ssize_t b = 0; b < nb; b += 8)
                words_block_u64(d + g * dg + a * da + b * 8, s + g * sg + a * 8 + b * sb, da, sb);
}
#endif

static int words_avx2 = 0; /* the CPU runs AVX2 (words_choose, at import) */

static void words_choose(void)
{
#if HAVE_AVX2_DISPATCH
    __builtin_cpu_init();
    words_avx2 = __builtin_cpu_supports("avx2") != 0;
#endif
}

/* Whether words_transpose takes an na x nb transpose of 2^lg-byte items (rows da and sb apart). */
static int words_take(const plan_t *p, Py_ssize_t na, Py_ssize_t nb, int lg)
{
    return words_avx2 && !p->stream && lg == 3 && na >= 8 && nb >= 8;
}

/* An na x nb transpose of 8-byte items (words_take holds): the whole blocks in words_rect_u64, the
 * edges past them through transpose_tiled. */
static void words_transpose(char *d, const char *s, Py_ssize_t na, Py_ssize_t nb, Py_ssize_t da, Py_ssize_t sb)
{
#if HAVE_AVX2_DISPATCH
    const Py_ssize_t ea = na & ~(Py_ssize_t)7, eb = nb & ~(Py_ssize_t)7;
    words_rect_u64(d, s, na, nb, da, sb);
    if (eb < nb) transpose_tiled(d + eb * 8, s + eb * sb, ea, nb - eb, da, sb, 3, 0);
    if (ea < na) transpose_tiled(d + ea * da, s + ea * 8, na - ea, nb, da, sb, 3, 0);
#else
    transpose_tiled(d, s, na, nb, da, sb, 3, 0);
#endif
}

/* words_grouped_dst_u64, or, without AVX2, the same g by g through transpose_tiled (never taken:
 * words_avx2 is 0 there). The same blocks for source rows that run on a line per g
 * (transpose_grouped's) measured 0.8-1.2x its tiles: not those. */
static void words_grouped_dst(char *d, const char *s, Py_ssize_t G, Py_ssize_t na, Py_ssize_t nb, Py_ssize_t dg,
                              Py_ssize_t da, Py_ssize_t sg, Py_ssize_t sb)
{
#if HAVE_AVX2_DISPATCH
    words_grouped_dst_u64(d, s, G, na, nb, dg, da, sg, sb);
#else
    for (Py_ssize_t g = 0; g < G; g++) transpose_tiled(d + g * dg, s + g * sg, na, nb, da, sb, 3, 0);
#endif
}

#endif
