/* _kernel_bytes_wide.h: AVX-512BW rounds of the transposes out of (4,1) quads of bytes
 * (from_physical), where the CPU has AVX-512BW: whole 64-byte lines stored where the AVX2
 * rounds stored 16 or 32 bytes at a time.
 *
 *   quads_from_wide  pred[1024,16,128]{0,1,2:T(8,128)(4,1)} from_physical: the buffer's rows a
 *                    (16 KiB apart) are copied into an L1 stage of 64 rows a by up to 64
 *                    groups of 4 bytes (quads_from, _kernel_bytes.h), then transposed out to the
 *                    array's rows (g, b). The AVX2 round takes 16 rows a of 8 groups and writes
 *                    each destination row 16 bytes at a time (a line in four stores, two of
 *                    them extracted from the upper lane). Here a round takes all 64 stage rows
 *                    of 4 groups: lane L of register k holds stage row 16L + k (a load and three
 *                    masked broadcast loads, no shuffle), so that the same 16 x 16 byte
 *                    transpose in each lane leaves register 4i + b holding row (q + i, b)'s
 *                    bytes a0 .. a0 + 63 in order: one store each.
 *   qrows_from_wide  s8[2547,705]{0,1:T(8,128)(4,1)} from_physical (qrows_box,
 *                    _kernel_bytes_rows.h): 16 quad rows by 4 logical rows a round, a 4 x 4
 *                    transpose of dwords in each lane, one 64-byte store per row a (the 8 x 8
 *                    AVX2 transposes stored 32).
 *
 * Zen 4 runs the 512-bit unpacks at half the rate of the 256-bit ones (measured: 0.84 against
 * 0.41 ns; vpermb, vpermt2b, vpermt2d alike), so the shuffles cost about as much as before; the
 * stores are fewer and whole lines. Harness of the tasks' loops, one thread, back to back as
 * the benchmark times them: quads_from 2.28 -> 1.74x a copy, qrows from 1.74 -> 1.51x. (The
 * to_physical sides the same way measured no gain: quads_to, whose time goes to L1 set
 * conflicts of destination rows 16 KiB apart; qrows to 2.0-2.3x either way.)
 *
 * Chosen at import (choose_quads_wide): the CPU has AVX-512BW and TENSORLAYOUT_NO_AVX512 is
 * unset or empty (the tests run the AVX2 rounds that way too). Self-contained (include guard). */
#ifndef TENSORLAYOUT_KERNEL_BYTES_WIDE_H
#define TENSORLAYOUT_KERNEL_BYTES_WIDE_H
#include "_kernel_plan.h"
#include "_isa.h"

#define WIDE_ROWS 64 /* stage rows a a round of quads_from_wide: four lanes of 16 */

static int quads_wide; /* the AVX-512BW round runs (set at import: choose_quads_wide) */

static void choose_quads_wide(void)
{
#if HAVE_AVX2_DISPATCH
    __builtin_cpu_init();
    quads_wide = __builtin_cpu_supports("avx512bw") && avx512_allowed();
#endif
}

#if HAVE_AVX2_DISPATCH
/* NAME(r): in each 128-bit lane of the V registers r[0..15] (target T, intrinsics P##_...), 16
 * rows of 16 bytes to columns, r[a] <- byte a of every r[b] (the network of tile_u8x16_sse2:
 * bytes, pairs, quads, halves). Two lanes: transpose_u8x16_lanes (_kernel_bytes.h); four:
 * transpose_u8x16_lanes4 below. */
#define TRANSPOSE_U8X16_LANES(NAME, T, V, P)                                                       \
    __attribute__((target(T))) static inline void NAME(V *r)                                      \
    {                                                                                              \
        V t[16], q[16];                                                                            \
        for (int i = 0; i < 8; i++) {                                                              \
            t[2 * i] = P##_unpacklo_epi8(r[2 * i], r[2 * i + 1]);                                  \
            t[2 * i + 1] = P##_unpackhi_epi8(r[2 * i], r[2 * i + 1]);                              \
        }                                                                                          \
        for (int g = 0; g < 4; g++)                                                                \
            for (int h = 0; h < 2; h++) {                                                          \
                q[4 * g + 2 * h] = P##_unpacklo_epi16(t[4 * g + h], t[4 * g + 2 + h]);             \
                q[4 * g + 2 * h + 1] = P##_unpackhi_epi16(t[4 * g + h], t[4 * g + 2 + h]);         \
            }                                                                                      \
        for (int m = 0; m < 4; m++) {                                                              \
            V lo = P##_unpacklo_epi32(q[m], q[4 + m]), hi = P##_unpacklo_epi32(q[8 + m], q[12 + m]); \
            r[4 * m] = P##_unpacklo_epi64(lo, hi);                                                 \
            r[4 * m + 1] = P##_unpackhi_epi64(lo, hi);                                             \
            lo = P##_unpackhi_epi32(q[m], q[4 + m]);                                               \
            hi = P##_unpackhi_epi32(q[8 + m], q[12 + m]);                                          \
            r[4 * m + 2] = P##_unpacklo_epi64(lo, hi);                                             \
            r[4 * m + 3] = P##_unpackhi_epi64(lo, hi);                                             \
        }                                                                                          \
    }
TRANSPOSE_U8X16_LANES(transpose_u8x16_lanes4, "avx512f,avx512bw", __m512i, _mm512)

/* Lane L <- the 16 bytes at p + L*st (L < 4): loads only (a load, three masked broadcasts). */
__attribute__((target("avx512f,avx512bw"))) static inline __m512i lanes_at(const char *p, Py_ssize_t st)
{
    __m512i x = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)p));
    x = _mm512_mask_broadcast_i32x4(x, 0x00F0, _mm_loadu_si128((const __m128i *)(p + st)));
    x = _mm512_mask_broadcast_i32x4(x, 0x0F00, _mm_loadu_si128((const __m128i *)(p + 2 * st)));
    return _mm512_mask_broadcast_i32x4(x, 0xF000, _mm_loadu_si128((const __m128i *)(p + 3 * st)));
}

/* dst[q][b][j] = stage[j][q][b] for the stage's WIDE_ROWS rows j (pitch apart) of gc >= 4
 * quads each, b < rows: destination row (q, b) at q*dg + b*db, 64 bytes from d. The last round
 * ends at gc, overlapping the one before (the same values again). */
__attribute__((target("avx512f,avx512bw"), always_inline)) static inline void
quads_from_wide_rows(char *d, const char *stage, Py_ssize_t pitch, Py_ssize_t gc, Py_ssize_t dg, Py_ssize_t db, int rows)
{
    for (Py_ssize_t qx = 0; qx < gc; qx += 4) {
        const Py_ssize_t q = qx + 4 <= gc ? qx : gc - 4;
        __m512i r[16];
        for (int k = 0; k < 16; k++) r[k] = lanes_at(stage + k * pitch + q * 4, 16 * pitch);
        transpose_u8x16_lanes4(r); /* r[4i + b]: row (q + i, b)'s bytes of stage rows 0 .. 63 */
        for (int i = 0; i < 4; i++)
            for (int b = 0; b < rows; b++) _mm512_storeu_si512(d + (q + i) * dg + b * db, r[4 * i + b]);
    }
}

/* quads_from_wide_rows with rows b = 4 known (its own copy: the stores unrolled), or 1 to 3 (a
 * partial quad's). */
__attribute__((target("avx512f,avx512bw"))) static void quads_from_wide(char *d, const char *stage, Py_ssize_t pitch,
                                                                       Py_ssize_t gc, Py_ssize_t dg, Py_ssize_t db,
                                                                       int rows)
{
    if (rows == 4)
        quads_from_wide_rows(d, stage, pitch, gc, dg, db, 4);
    else
        quads_from_wide_rows(d, stage, pitch, gc, dg, db, rows);
}

/* Lane L <- the 16 bytes at p[L] (L < 4): loads only. */
__attribute__((target("avx512f,avx512bw"))) static inline __m512i lanes_of(const char *p0, const char *p1,
                                                                          const char *p2, const char *p3)
{
    __m512i x = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)p0));
    x = _mm512_mask_broadcast_i32x4(x, 0x00F0, _mm_loadu_si128((const __m128i *)p1));
    x = _mm512_mask_broadcast_i32x4(x, 0x0F00, _mm_loadu_si128((const __m128i *)p2));
    return _mm512_mask_broadcast_i32x4(x, 0xF000, _mm_loadu_si128((const __m128i *)p3));
}

/* dst[a][k] = the quad at s + off[k] + 4a, rows a (row apart) of K >= 16 quads, n >= 4 rows a
 * (qrows_box from_physical, _kernel_bytes_rows.h): 16 quad rows by 4 rows a a round, lane M of
 * register i holding quad row k + 4M + i's items a .. a + 3, so that a 4 x 4 transpose of
 * dwords in each lane (two rounds of unpacks) leaves row a + j's quads k .. k + 15 in register
 * j: one whole 64-byte store each, where the AVX2 rounds stored 32 bytes. The last blocks end at
 * K and n, overlapping (the same values again). */
__attribute__((target("avx512f,avx512bw"))) static void qrows_from_wide(char *d, Py_ssize_t row, const char *s,
                                                                       const Py_ssize_t *off, Py_ssize_t K,
                                                                       Py_ssize_t n)
{
    for (Py_ssize_t kx = 0; kx < K; kx += 16) {
        const Py_ssize_t k = kx + 16 <= K ? kx : K - 16;
        const char *p[16];
        for (int i = 0; i < 16; i++) p[i] = s + off[k + i];
        for (Py_ssize_t ax = 0; ax < n; ax += 4) {
            const Py_ssize_t a = ax + 4 <= n ? ax : n - 4;
            __m512i r[4];
            for (int i = 0; i < 4; i++) r[i] = lanes_of(p[i] + a * 4, p[4 + i] + a * 4, p[8 + i] + a * 4, p[12 + i] + a * 4);
            const __m512i t0 = _mm512_unpacklo_epi32(r[0], r[1]), t1 = _mm512_unpackhi_epi32(r[0], r[1]);
            const __m512i t2 = _mm512_unpacklo_epi32(r[2], r[3]), t3 = _mm512_unpackhi_epi32(r[2], r[3]);
            char *o = d + a * row + k * 4;
            _mm512_storeu_si512(o, _mm512_unpacklo_epi64(t0, t2));
            _mm512_storeu_si512(o + row, _mm512_unpackhi_epi64(t0, t2));
            _mm512_storeu_si512(o + 2 * row, _mm512_unpacklo_epi64(t1, t3));
            _mm512_storeu_si512(o + 3 * row, _mm512_unpackhi_epi64(t1, t3));
        }
    }
}

#endif

#endif
