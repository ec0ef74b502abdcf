/* _kernel_bytes.h: the transposes of bytes in (4,1) sub-tile quads, fused.
 *
 * A (4,1) sub-tile of bytes against a transposed tiling (pred[1024,16,128]{0,1,2:T(8,128)(4,1)}:
 * the logical rows run along the buffer's major dim) is a transpose over three axes: groups g
 * of 4 rows b, each group's 4 bytes contiguous in the buffer next to the next group's, and
 * the rows a of the other side. The strips (_kernel_strips.h, transpose_woven) wove the 4
 * rows into 4-byte items in a stage, then transposed those: two passes, and a flush of the
 * stage into destination rows 16 KiB apart. Here one 16 x 16 byte transpose in registers
 * (four rounds of unpacks, two at once in the lanes of an AVX2 register) takes 4 groups of 4
 * rows (16 source rows) and 16 rows a, and writes 16 bytes (the 4 groups' quads) to each:
 *
 *   quads_to    dst[a][g][b] = src[g][b][a]: 16 a of 32 source rows (8 groups, 4 in each
 *               lane) a round, into an L1 stage of 32 rows a by 128 groups, then out 512
 *               bytes a row (whole lines; streamed past the cache where the rows share L1
 *               sets: far_rows_out). Source rows of 16 to 31 bytes went through the woven
 *               strips before (pred[512,1024,16]{0,1,2:T(4,128)(4,1)} to_physical, one thread,
 *               alternating: 3.4-3.8 -> 2.4-2.75x a copy);
 *   quads_from  dst[g][b][a] = src[a][g][b]: the source's rows a (far apart) first copied
 *               into a stage of 64 rows a by 64 groups, 256 bytes at a time, then 8 groups by
 *               16 a a round out of it (each destination row gets 64 bytes a stage: whole
 *               lines where they are aligned, not halves written twice).
 *
 * A ragged sub-tile's last 1 to 3 rows b take the same rounds (quads_part): quads_to loads row
 * nb - 1 again for the missing ones and stores each stage row masked, only the rows' bytes of
 * every quad (AVX-512BW; else the caller's loops); quads_from_part keeps rows b < nb. They
 * went a byte at a time (one or two rows) or through transposes of 3 x na bytes
 * (f8e5m2[369,5,283,9]{0,1,3,2:T(8,128)(4,1)} to_physical, one thread, alternating: 4.0 -> 2.95x
 * a copy, from_physical 3.5 -> 2.7x; pred[3,525,23,106]{1,2,3,0:T(8,128)(4,1)} to 3.85 -> 2.7x).
 *
 * Edges past whole blocks are covered by one more block ending at the edge, overlapping (a
 * copy: it writes the same values again), so at least 8 groups and 16 rows a are needed;
 * else the caller's loops run. AVX2 only (chosen at import; SSE2: the caller's); quads_from's
 * stages of 64 rows a go out through the AVX-512BW round of _kernel_bytes_wide.h where the CPU
 * has it.
 * Self-contained (include guard). */
#ifndef TENSORLAYOUT_KERNEL_BYTES_H
#define TENSORLAYOUT_KERNEL_BYTES_H
#include "_kernel_plan.h"
#include "_kernel_bytes_weave.h"
#include "_kernel_bytes_wide.h"
#include "_kernel_bytes_runs.h"

#define QUAD_GROUPS 128 /* quads_to: groups per stage (512 bytes of each stage row) */
#define QUAD_ROWS 32    /* ... and rows a per stage */
#define FROM_GROUPS 64  /* quads_from: groups per stage (256 bytes of each source row) */
#define FROM_ROWS 64    /* ... and rows a per stage: a whole 64-byte line of each dst row */

static int quads_avx2; /* the CPU has AVX2 (set at import: choose_quads) */

static void choose_quads(void)
{
    choose_byte_weaves();
    choose_quads_wide();
    choose_byte_runs();
#if HAVE_AVX2_DISPATCH
    __builtin_cpu_init();
    quads_avx2 = __builtin_cpu_supports("avx2") != 0;
#endif
}

#if HAVE_AVX2_DISPATCH
TRANSPOSE_U8X16_LANES(transpose_u8x16_lanes, "avx2", __m256i, _mm256) /* (_kernel_bytes_wide.h) */

/* The start of the block from x of `step` along [0, n) (n >= step), moved back to end at n. */
static inline Py_ssize_t block_at(Py_ssize_t x, Py_ssize_t step, Py_ssize_t n)
{
    return x + step <= n ? x : n - step;
}

/* The stage's block from x along [0, n) (n >= least): at most `most` long; where fewer than
 * `least` remain, the last `least` (overlapping the block before). Its start; *len its length. */
static inline Py_ssize_t block_from(Py_ssize_t x, Py_ssize_t most, Py_ssize_t least, Py_ssize_t n, Py_ssize_t *len)
{
    const Py_ssize_t left = n - x < most ? n - x : most;
    *len = left < least ? least : left;
    return left < least ? n - least : x;
}

/* bytes from s to d: whole 32-byte vectors, the last one ending at the end (overlapping the one
 * before: the same values again), or memcpy below 32 bytes; streamed where asked (stream_out
 * checks the alignment). (memcpy of a 424-byte stage row, 106 groups: rep movsq, 12% of
 * pred[100,490,83]{1,0,2:T(8,128)(4,1)} from_physical.) */
__attribute__((target("avx2"))) static inline void row_out(char *d, const char *s, Py_ssize_t bytes, int stream)
{
    if (stream) {
        stream_out(d, s, (size_t)bytes);
    } else if (bytes >= 32) {
        Py_ssize_t k = 0;
        for (; k + 32 < bytes; k += 32)
            _mm256_storeu_si256((__m256i *)(d + k), _mm256_loadu_si256((const __m256i *)(s + k)));
        _mm256_storeu_si256((__m256i *)(d + bytes - 32), _mm256_loadu_si256((const __m256i *)(s + bytes - 32)));
    } else {
        memcpy(d, s, (size_t)bytes);
    }
}

/* 16 source rows of 16 bytes into r, two groups of rows a lane: lane 0 from lo + i*sg + b*sb,
 * lane 1 from hi + i*sg + b*sb (r[4i + b], i, b < 4); rows b >= nb (a partial quad's) read
 * row nb - 1 again. */
__attribute__((target("avx2"))) static inline void load_lanes(__m256i *r, const char *lo, const char *hi,
                                                              Py_ssize_t sg, Py_ssize_t sb, int nb)
{
    for (int i = 0; i < 4; i++)
        for (int b = 0; b < 4; b++) {
            const Py_ssize_t o = i * sg + (b < nb ? b : nb - 1) * sb;
            r[4 * i + b] = _mm256_loadu2_m128i((const __m128i *)(hi + o), (const __m128i *)(lo + o));
        }
}

/* dst[a][g][b] = src[g][b][a], b < nb: dst rows a (da apart) of ng quads, source rows (g, b) at
 * g*sg + b*sb of na bytes; ng >= 8, na >= 16; nb < 4 (a partial quad: quads_part_out, AVX-512BW)
 * leaves the quads' other bytes as they are. A round takes 16 rows a of 8 groups: groups
 * q..q+3 in the lanes' low halves, q+4..q+7 in their high ones, so that each row a's 32 bytes
 * go to the stage in one store (before: 4 groups by 32 rows a, each row's 16 bytes stored
 * from either lane). Where the time goes (pred[1024,16,128]{0,1,2:T(8,128)(4,1)}
 * to_physical's task, raw, one thread, ~3x a copy): not the transpose (left out: no change),
 * the rows out of the stage ~1.2x a copy (dense destination rows the same; rep movsb
 * slower), the reads ~1.8x (source lines read ahead, or a stage of 64 rows a by 32 or 64
 * groups: no change). */
__attribute__((target("avx2"), always_inline)) static inline void quads_to(char *d, const char *s, Py_ssize_t ng,
                                                                           Py_ssize_t na, Py_ssize_t da, Py_ssize_t sg,
                                                                           Py_ssize_t sb, int stream, int nb)
{
    _Alignas(64) char stage[QUAD_ROWS * QUAD_GROUPS * 4];
    const Py_ssize_t pitch = QUAD_GROUPS * 4;
    for (Py_ssize_t gx = 0, gc; gx < ng; gx += QUAD_GROUPS) {
        const Py_ssize_t g0 = block_from(gx, QUAD_GROUPS, 8, ng, &gc);
        for (Py_ssize_t ax = 0, ac; ax < na; ax += QUAD_ROWS) {
            const Py_ssize_t a0 = block_from(ax, QUAD_ROWS, 16, na, &ac);
            for (Py_ssize_t qx = 0; qx < gc; qx += 8) {
                const Py_ssize_t q = block_at(qx, 8, gc);
                const char *src = s + (g0 + q) * sg + a0;
                for (Py_ssize_t ay = 0; ay < ac; ay += 16) {
                    const Py_ssize_t a = block_at(ay, 16, ac);
                    __m256i r[16];
                    load_lanes(r, src + a, src + 4 * sg + a, sg, sb, nb);
                    transpose_u8x16_lanes(r); /* r[k]: row a + k's groups q..q+7 */
                    char *o = stage + a * pitch + q * 4;
                    for (int k = 0; k < 16; k++) _mm256_storeu_si256((__m256i *)(o + k * pitch), r[k]);
                }
            }
            if (nb < 4)
                quads_part_out(d + a0 * da + g0 * 4, da, stage, pitch, ac, gc * 4, nb);
            else
                for (Py_ssize_t a = 0; a < ac; a++)
                    row_out(d + (a0 + a) * da + g0 * 4, stage + a * pitch, gc * 4, stream);
        }
    }
    if (stream) _mm_sfence();
}

/* dst[g][b][a] = src[a][g][b], b < rows (1 to 4): source rows a (sa apart) of ng quads (read
 * whole), dst rows (g, b) at g*dg + b*db of na bytes; ng >= 8, na >= 16. The stage's shape, against 32 rows a by 128
 * groups, alternating (one thread, after a copy): pred[1024,16,128]{0,1,2:T(8,128)(4,1)}
 * from_physical 2.5-2.8x -> 2.45-2.6x a copy, pred[100,490,83]{1,0,2:T(8,128)(4,1)} 2.4-2.9x ->
 * 2.3-2.6x; 128 rows a by 32 groups 2.7-2.8x and 2.3-3.4x. */
__attribute__((target("avx2"), always_inline)) static inline void quads_from(char *d, const char *s, Py_ssize_t ng,
                                                                             Py_ssize_t na, Py_ssize_t dg,
                                                                             Py_ssize_t db, Py_ssize_t sa, int rows)
{
    _Alignas(64) char stage[FROM_ROWS * FROM_GROUPS * 4];
    const Py_ssize_t pitch = FROM_GROUPS * 4;
    for (Py_ssize_t gx = 0, gc; gx < ng; gx += FROM_GROUPS) {
        const Py_ssize_t g0 = block_from(gx, FROM_GROUPS, 8, ng, &gc);
        for (Py_ssize_t ax = 0, ac; ax < na; ax += FROM_ROWS) {
            const Py_ssize_t a0 = block_from(ax, FROM_ROWS, 16, na, &ac);
            for (Py_ssize_t a = 0; a < ac; a++) row_out(stage + a * pitch, s + (a0 + a) * sa + g0 * 4, gc * 4, 0);
            if (quads_wide && ac == WIDE_ROWS) { /* 64 rows a of 4 groups a round (_kernel_bytes_wide.h) */
                quads_from_wide(d + g0 * dg + a0, stage, pitch, gc, dg, db, rows);
                continue;
            }
            for (Py_ssize_t qx = 0; qx < gc; qx += 8) {
                const Py_ssize_t q = block_at(qx, 8, gc);
                for (Py_ssize_t ay = 0; ay < ac; ay += 16) {
                    const Py_ssize_t a = block_at(ay, 16, ac);
                    __m256i r[16];
                    for (int k = 0; k < 16; k++)
                        r[k] = _mm256_loadu_si256((const __m256i *)(stage + (a + k) * pitch + q * 4));
                    transpose_u8x16_lanes(r); /* r[4i + b]: lane 0 group q + i, lane 1 group q + 4 + i */
                    for (int i = 0; i < 4; i++)
                        for (int b = 0; b < rows; b++) {
                            char *o = d + (g0 + q + i) * dg + b * db + a0 + a;
                            _mm_storeu_si128((__m128i *)o, _mm256_castsi256_si128(r[4 * i + b]));
                            _mm_storeu_si128((__m128i *)(o + 4 * dg), _mm256_extracti128_si256(r[4 * i + b], 1));
                        }
                }
            }
        }
    }
}
#endif

#if HAVE_AVX2_DISPATCH
/* quads_from for rows b < rows (1 to 3) of each group (a ragged (4,1) sub-tile's last rows: the
 * groups' other bytes read, not kept), the last group byte by byte where its fourth byte in the
 * last source row lies past the task's source bytes. Three rows went through transpose_woven3
 * (4-byte tiles of 19 groups, then unweave3): pred[3,525,23,106]{1,2,3,0:T(8,128)(4,1)}
 * from_physical's 3-row task, 13% of the bytes, took 1.9-2.2x a copy of the whole array (raw,
 * one thread); one or two through the strided loop, a byte at a time (f8e5m2[369,5,283,9]
 * {0,1,3,2:T(8,128)(4,1)}'s one-row tasks). */
__attribute__((target("avx2"))) static void quads_from_part(const plan_t *p, char *d, const char *s, Py_ssize_t ng,
                                                            Py_ssize_t na, Py_ssize_t dg, Py_ssize_t db, Py_ssize_t sa,
                                                            int rows)
{
    const Py_ssize_t whole = s + (ng - 1) * 4 + (na - 1) * sa + 4 > p->shi ? ng - 1 : ng;
    quads_from(d, s, whole, na, dg, db, sa, rows);
    for (Py_ssize_t g = whole; g < ng; g++)
        for (Py_ssize_t b = 0; b < rows; b++)
            for (Py_ssize_t a = 0; a < na; a++) d[g * dg + b * db + a] = s[a * sa + g * 4 + b];
}
#endif

#if HAVE_AVX2_DISPATCH
/* quads_to and quads_from for whole quads: their own copies with rows b = 4 known (the rounds'
 * row loops unrolled; with the count a variable, as the partial quads pass it, the whole ones
 * measured slower: pred[131,157,105]{1,0,2:T(8,128)(4,1)} from_physical 0.17 -> 0.21 ms). */
__attribute__((target("avx2"))) static void quads_to4(char *d, const char *s, Py_ssize_t ng, Py_ssize_t na,
                                                      Py_ssize_t da, Py_ssize_t sg, Py_ssize_t sb, int stream)
{
    quads_to(d, s, ng, na, da, sg, sb, stream, 4);
}

__attribute__((target("avx2"))) static void quads_from4(char *d, const char *s, Py_ssize_t ng, Py_ssize_t na,
                                                        Py_ssize_t dg, Py_ssize_t db, Py_ssize_t sa)
{
    quads_from(d, s, ng, na, dg, db, sa, 4);
}

/* quads_to for a partial quad's nb < 4 rows (stored masked, never streamed). */
__attribute__((target("avx2"))) static void quads_to_part(char *d, const char *s, Py_ssize_t ng, Py_ssize_t na,
                                                          Py_ssize_t da, Py_ssize_t sg, Py_ssize_t sb, int nb)
{
    quads_to(d, s, ng, na, da, sg, sb, 0, nb);
}
#endif

/* Whether p's innermost axes are the rows of a partial (4,1) quad of bytes against rows a, that
 * quads_from_part (1 to 3 source rows b, the axis before them 4 bytes apart in the source) or
 * quads_to (1 to 3 destination rows b, the groups 4 bytes apart in dst; AVX-512BW) takes: then
 * the axis of the groups is the transpose's third (not looped over, nb x na bytes a call). */
static int quads_part(const plan_t *p)
{
    const int last = p->ndim - 1;
    if (!quads_avx2 || p->item != 1 || p->swap) return 0;
    const Py_ssize_t groups = p->shape[last - 2], mid = p->shape[last - 1], in = p->shape[last];
    if (mid <= 3 && p->ss[last - 2] == 4 && p->ss[last] > 0 && groups >= 9 && in >= 16)
        return 1; /* from: (g, b, a), rows a of the source sa > 0 apart */
    return quads_wide && in <= 3 && p->ds[last - 2] == 4 && groups >= 8 && mid >= 16; /* to: (g, a, b) */
}

/* The box of p writes at least QUAD_STREAM_BYTES into destination rows a multiple of 4 KiB apart
 * (sharing L1 sets): quads_to then streams its stage out. Each stage row's 512 bytes went
 * to lines the stores first had to read. Streaming pays once the destination leaves the
 * caches: pred[N,16,128]{0,1,2:T(8,128)(4,1)} to_physical after a copy, as the population
 * benchmark calls it (one thread, stored vs streamed, alternating): N = 1024 (2 MiB) 2.8x vs
 * 4.3-5.8x a copy, 1536 (3 MiB) 2.6x vs 3.6-3.9x, 2048 (4 MiB) 2.9-3.7x vs 3.7-3.9x, 3072
 * (6 MiB) 2.7x vs 2.5-2.7x; the stage streamed from 1 MiB before (raw tasks back to back
 * measured 2.3-2.7x streamed, 2.7-3.1x stored at 2 MiB: a call right after a copy finds the
 * destination in no cache it owns). */
#define QUAD_STREAM_BYTES (1 << 22)
static int far_rows_out(const plan_t *p, Py_ssize_t da)
{
    Py_ssize_t bytes = p->item;
    for (int k = 0; k < p->ndim; k++) {
        if (bytes >= QUAD_STREAM_BYTES || p->shape[k] >= QUAD_STREAM_BYTES) return da % 4096 == 0;
        bytes *= p->shape[k]; /* (both below 2^20: no overflow) */
    }
    return da % 4096 == 0 && bytes >= QUAD_STREAM_BYTES;
}

/* The fused quad transposes where they apply (see above): the three inner axes of a transpose
 * (ng groups, na, nb; strides dg, da, sg, sb as copy_nest names them) of 1-byte items; 1 done,
 * 0 not (the caller's loops run). */
static int transpose_quads(const plan_t *p, char *d, const char *s, Py_ssize_t ng, Py_ssize_t na, Py_ssize_t nb,
                           Py_ssize_t dg, Py_ssize_t da, Py_ssize_t sg, Py_ssize_t sb, int lg)
{
#if HAVE_AVX2_DISPATCH
    if (!quads_avx2 || lg != 0) return 0;
    if (nb == 4 && dg == 4 && ng >= 8 && na >= 16) { /* dst rows a take the quads; source rows (g, b) */
        quads_to4(d, s, ng, na, da, sg, sb, p->stream || far_rows_out(p, da));
        return 1;
    }
    if (nb < 4 && quads_wide && dg == 4 && ng >= 8 && na >= 16) { /* a partial quad's rows into dst rows a */
        quads_to_part(d, s, ng, na, da, sg, sb, (int)nb);
        return 1;
    }
    if (na == 4 && sg == 4 && ng >= 8 && nb >= 16) { /* source rows take the quads; dst rows (g, a) */
        quads_from4(d, s, ng, nb, dg, da, sb);
        return 1;
    }
    if (na <= 3 && sg == 4 && sb > 0 && ng >= 9 && nb >= 16) { /* a ragged sub-tile's last rows out of the quads */
        quads_from_part(p, d, s, ng, nb, dg, da, sb, (int)na);
        return 1;
    }
#else
    (void)p, (void)d, (void)s, (void)ng, (void)na, (void)nb, (void)dg, (void)da, (void)sg, (void)sb, (void)lg;
#endif
    return 0;
}

#endif
