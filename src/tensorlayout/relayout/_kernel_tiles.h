/* _kernel_tiles.h: the blocked transpose of two axes over the register tiles of _kernel_regs.h
 * (the transposes over a third axis are in _kernel_strips.h).
 * Self-contained (include guard): it includes the loops it falls back to. */
#ifndef TENSORLAYOUT_KERNEL_TILES_H
#define TENSORLAYOUT_KERNEL_TILES_H
#include "_kernel_loops.h"
#include "_kernel_ahead.h"
#include "_kernel_bytes.h"
#include "_kernel_regs.h"


/* The first block's length along an axis whose tiles start at p: up to p's next cache line
 * boundary if p starts a vector (the tiles then stay within lines), else (p off a vector
 * boundary, or off an item boundary) a whole line. */
static Py_ssize_t first_block(const char *p, Py_ssize_t line, Py_ssize_t v, Py_ssize_t it)
{
    uintptr_t at = (uintptr_t)p;
    return line > v && at % (uintptr_t)(v * it) == 0 && at % 64 != 0 ? (Py_ssize_t)(64 - at % 64) / it
                                                                       : line;
}

/* Rows a multiple of 4 KiB apart share an L1 set (and 64 of them overflow its 12 ways). Rows
 * 2 KiB apart taken as such measured no faster, run against run with separate builds
 * (to_physical of s8[39,497,192]{1,2,0:T(4,128)(4,1)} 1.78-2.04 -> 2.01-2.10x a copy; its
 * from_physical, source rows only, 1.86-2.11 -> 1.59-1.64, but f32[1024,1024]{0,1:T(8,128)}'s
 * 4.05-4.59 -> 5.15-5.68). */
static inline int same_set_rows(Py_ssize_t stride)
{
    return stride % 4096 == 0;
}

#define OUT_STAGE_ROW 256 /* bytes per row of tile_rect_staged's stage: four lines */
#define STAGED_STREAM_SPAN (4 << 20) /* ... whose rows go out past the cache where they span this */

/* The end of the block from x along [x0, x1): the first block `first` items, the others `step`. */
static inline Py_ssize_t block_end(Py_ssize_t x, Py_ssize_t x0, Py_ssize_t x1, Py_ssize_t first, Py_ssize_t step)
{
    Py_ssize_t e = x + (x == x0 ? first : step);
    return e < x1 ? e : x1;
}

/* tile_rect where the destination rows share L1 sets (same_set_rows(da)): a block of one
 * source line per row at a time (`line` destination rows) goes through an L1 stage of
 * OUT_STAGE_ROW bytes a row, then out row by row, so that the destination rows' lines are
 * each written whole at once and the source lines used whole. Writing those rows straight
 * from the tiles measured slower, whatever the block: from_physical of
 * f32[64,32,128]{0,2,1:T(8,128)} (rows 16 KiB apart) 1.23x a copy in blocks of 8 rows
 * (16: 2.1x) -> 0.90x staged (harness, the loop alone); 512 x 2048 items, rows 8 KiB apart,
 * 3.5 -> 2.4. Where the rows span STAGED_STREAM_SPAN or more (beyond L2, and the destination
 * line each row's piece enters would be read first), their whole lines are streamed out
 * (stream_lines): f32[8,32,128,64]{2,0,1,3:T(8,128)} to_physical, 64 rows 128 KiB apart, one
 * thread, kernel alone, alternating in one process, over a copy: 2.9-3.1 -> 2.7-3.0. */
static void tile_rect_staged(const tiler_t *t, char *d, const char *s, Py_ssize_t a0, Py_ssize_t a1,
                             Py_ssize_t b0, Py_ssize_t b1, Py_ssize_t da, Py_ssize_t sb, Py_ssize_t it)
{
    const Py_ssize_t v = t->v, line = 64 / it > v ? 64 / it : v, cw = OUT_STAGE_ROW / it;
    _Alignas(64) char stage[64 * OUT_STAGE_ROW]; /* line <= 64 rows */
    Py_ssize_t fa = first_block(s + a0 * it, line, v, it), fb = first_block(d + b0 * it, cw, v, it);
    const int ahead = far_source_rows(sb), far = (a1 - a0) * (da < 0 ? -da : da) >= STAGED_STREAM_SPAN;
    for (Py_ssize_t a = a0, ae; a < a1; a = ae) {
        ae = block_end(a, a0, a1, fa, line);
        for (Py_ssize_t b = b0, be; b < b1; b = be) {
            be = block_end(b, b0, b1, fb, cw);
            if (ahead && ae < a1) fetch_next_block(s, ae, b, be, sb, it, a1);
            for (Py_ssize_t j = b; j < be; j += v)
                for (Py_ssize_t i = a; i < ae; i += v)
                    t->tile(stage + (i - a) * OUT_STAGE_ROW + (j - b) * it, s + i * it + j * sb,
                            OUT_STAGE_ROW, sb, 0);
            for (Py_ssize_t i = a; i < ae; i++)
                if (far)
                    stream_lines(d + i * da + b * it, stage + (i - a) * OUT_STAGE_ROW, (size_t)((be - b) * it));
                else
                    memcpy(d + i * da + b * it, stage + (i - a) * OUT_STAGE_ROW, (size_t)((be - b) * it));
        }
    }
}

/* The tiles of one block, [a, ae) x [b, be): down a source line's rows first where the source
 * rows share L1 sets (each line then used whole at once), else along the destination's. */
static inline void tile_block(const tiler_t *t, char *d, const char *s, Py_ssize_t a, Py_ssize_t ae, Py_ssize_t b,
                              Py_ssize_t be, Py_ssize_t da, Py_ssize_t sb, Py_ssize_t it, int nt)
{
    const Py_ssize_t v = t->v;
    if (same_set_rows(sb)) {
        for (Py_ssize_t j = b; j < be; j += v)
            for (Py_ssize_t i = a; i < ae; i += v)
                t->tile(d + i * da + j * it, s + i * it + j * sb, da, sb, nt);
    } else {
        for (Py_ssize_t i = a; i < ae; i += v)
            for (Py_ssize_t j = b; j < be; j += v)
                t->tile(d + i * da + j * it, s + i * it + j * sb, da, sb, nt);
    }
}

/* Tiles over items [a0, a1) x [b0, b1) (multiples of V apart), grouped in blocks of one
 * cache line per row on both sides (so each source line is used whole while in L1, and each
 * destination line is written whole by consecutive tiles: streamed stores then combine).
 * Where the rows of a side share L1 sets (same_set_rows; harness figures, the loop alone,
 * ratio to a copy of the larger side, f32):
 * - destination rows, at least a line of each: through a stage (tile_rect_staged);
 *   narrower, the blocks take V of them, fewer lines in flight than the set's ways (from 64 x
 *   4096 items, rows 16 KiB apart: 2.2 in blocks of 16 rows, 1.2 of 8);
 * - source rows: the tiles of a block go down a source line's rows first (~8%), and where
 *   the destination's rows are short (at most 512 bytes of b) the blocks go down the
 *   destination's lines first, strips of one line over all of a, whose 16 source rows are
 *   then read as streams (to 4096 x 64 items, rows 16 KiB apart: 0.88 -> 0.76; 128 items
 *   1.87 -> 1.53; but 512 items, whose strips each visit every line of a 4 MiB destination,
 *   1.89 -> 5.8). */
static void tile_rect(const tiler_t *t, char *d, const char *s, Py_ssize_t a0, Py_ssize_t a1,
                      Py_ssize_t b0, Py_ssize_t b1, Py_ssize_t da, Py_ssize_t sb, Py_ssize_t it, int nt)
{
    const Py_ssize_t v = t->v, line = 64 / it > v ? 64 / it : v;
    if (!nt && same_set_rows(da) && (b1 - b0) * it >= 64) {
        tile_rect_staged(t, d, s, a0, a1, b0, b1, da, sb, it);
        return;
    }
    const Py_ssize_t la = same_set_rows(da) ? v : line;
    Py_ssize_t fa = first_block(s + a0 * it, la, v, it), fb = first_block(d + b0 * it, line, v, it);
    if (same_set_rows(sb) && (b1 - b0) * it <= 512) { /* strips down the destination's lines */
        for (Py_ssize_t b = b0, be; b < b1; b = be) {
            be = block_end(b, b0, b1, fb, line);
            for (Py_ssize_t a = a0, ae; a < a1; a = ae) {
                ae = block_end(a, a0, a1, fa, la);
                tile_block(t, d, s, a, ae, b, be, da, sb, it, nt);
            }
        }
        return;
    }
    const int ahead = !nt && far_source_rows(sb);
    for (Py_ssize_t a = a0, ae; a < a1; a = ae) {
        ae = block_end(a, a0, a1, fa, la);
        for (Py_ssize_t b = b0, be; b < b1; b = be) {
            be = block_end(b, b0, b1, fb, line);
            if (ahead && ae < a1) fetch_next_block(s, ae, b, be, sb, it, a1);
            tile_block(t, d, s, a, ae, b, be, da, sb, it, nt);
        }
    }
}

/* Where the tiles of an axis of n items start (the side contiguous along it at p): at the
 * first item whose tile row does not straddle a vector boundary (loads and stores split
 * over two cache lines measured ~35% slower), on axes of at least 16 tiles (else 0; also
 * when p is not on an item boundary, as the wider items of odd rows are not: no item is
 * then on a vector boundary). Items before it are covered by one more tile at 0,
 * overlapping (a copy: it writes the same values), which costs at most 1/16 more. */
static Py_ssize_t tile_origin(const char *p, Py_ssize_t n, Py_ssize_t v, Py_ssize_t it)
{
    if ((uintptr_t)p % (uintptr_t)it) return 0;
    Py_ssize_t h = (Py_ssize_t)((-(uintptr_t)p) & (uintptr_t)(v * it - 1)) / it;
    return h != 0 && n >= 16 * v ? h : 0;
}

static void transpose_tiled(char *d, const char *s, Py_ssize_t na, Py_ssize_t nb, Py_ssize_t da,
                            Py_ssize_t sb, int lg, int nt);

/* The edges of a transpose past its whole tiles ([0, ea) x [0, eb) done): the rows past ea over
 * all of nb, the columns past eb over [0, ea); each through the narrower tiles where it is at
 * least one of them wide (or, of 4-byte items, three: transpose_u32_three), else the scalar
 * loop (pred[19,64,308,23]{2,0,1,3:T(8,128)(4,1)}: 23 rows of 4-byte items, 7 past the 8 x 8
 * tiles, whose scalar loop took a fifth of to_physical's time). */
static void transpose_edges(char *d, const char *s, Py_ssize_t na, Py_ssize_t nb, Py_ssize_t ea, Py_ssize_t eb,
                            Py_ssize_t da, Py_ssize_t sb, int lg)
{
    const Py_ssize_t it = ITEM(lg), v = narrow_tilers[lg].v;
    const int tiles = narrow_tilers[lg].tile != NULL;
    if (eb < nb) {
        if (tiles && ea >= v && (nb - eb >= v || (lg == 2 && nb - eb == 3)))
            transpose_tiled(d + eb * it, s + eb * sb, ea, nb - eb, da, sb, lg, 0);
        else
            transpose_table[lg](d + eb * it, s + eb * sb, ea, nb - eb, da, sb);
    }
    if (ea < na) {
        if (tiles && nb >= v && (na - ea >= v || (lg == 2 && na - ea == 3)))
            transpose_tiled(d + ea * da, s + ea * it, na - ea, nb, da, sb, lg, 0);
        else
            transpose_table[lg](d + ea * da, s + ea * it, na - ea, nb, da, sb);
    }
}

/* transpose_tiled over at least 4 x 4 tiles: tiles aligned to the vectors of both
 * sides (tile_origin), the edges past the last whole tile through the scalar loop. */
static __attribute__((noinline)) void /* inlined, it measured 30% slower on the small ones */
transpose_aligned(const tiler_t *t, char *d, const char *s, Py_ssize_t na, Py_ssize_t nb, Py_ssize_t da,
                  Py_ssize_t sb, int lg)
{
    const Py_ssize_t it = ITEM(lg), v = t->v;
    Py_ssize_t ha = tile_origin(s, na, v, it), hb = tile_origin(d, nb, v, it);
    Py_ssize_t ea = na - (na - ha) % v, eb = nb - (nb - hb) % v;
    tile_rect(t, d, s, ha, ea, hb, eb, da, sb, it, 0);
    if (ha) tile_rect(t, d, s, 0, v, hb, eb, da, sb, it, 0);
    if (hb) tile_rect(t, d, s, ha, ea, 0, v, da, sb, it, 0);
    if (ha && hb) t->tile(d, s, da, sb, 0);
    transpose_edges(d, s, na, nb, ea, eb, da, sb, lg);
}

/* Three rows of four-byte items against a longer side (a ragged (2,1) sub-tile's last three
 * pairs of rows: bf16[1246,89,15]{0,2,1:T(8,128)(2,1)}), below the 4 x 4 tiles, which the
 * scalar loop took: 4 x 4 tiles in registers with exactly the three rows' bytes loaded and
 * stored (a row of 12 bytes as 8 + 4), the fourth row a zero vector; the last b (a) past a
 * multiple of 4 through the scalar loop. na == 3: dst rows of 4 b at a time; nb == 3: the
 * source's. Returns 0 (nothing done) for any other shape. */
static int transpose_u32_three(char *d, const char *s, Py_ssize_t na, Py_ssize_t nb, Py_ssize_t da,
                               Py_ssize_t sb)
{
#if HAVE_STREAM
    const __m128i z = _mm_setzero_si128();
    if (na == 3 && nb >= 4) {
        Py_ssize_t eb = nb - nb % 4;
        for (Py_ssize_t b = 0; b < eb; b += 4) {
            __m128i r[4];
            for (int j = 0; j < 4; j++) {
                const char *q = s + (b + j) * sb;
                int32_t w;
                memcpy(&w, q + 8, 4);
                r[j] = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)q), _mm_cvtsi32_si128(w));
            }
            __m128i t0 = _mm_unpacklo_epi32(r[0], r[1]), t1 = _mm_unpacklo_epi32(r[2], r[3]);
            __m128i t2 = _mm_unpackhi_epi32(r[0], r[1]), t3 = _mm_unpackhi_epi32(r[2], r[3]);
            char *o = d + b * 4;
            _mm_storeu_si128((__m128i *)o, _mm_unpacklo_epi64(t0, t1));
            _mm_storeu_si128((__m128i *)(o + da), _mm_unpackhi_epi64(t0, t1));
            _mm_storeu_si128((__m128i *)(o + 2 * da), _mm_unpacklo_epi64(t2, t3));
        }
        if (eb < nb) transpose_table[2](d + eb * 4, s + eb * sb, na, nb - eb, da, sb);
        return 1;
    }
    if (nb == 3 && na >= 4) {
        Py_ssize_t ea = na - na % 4;
        for (Py_ssize_t a = 0; a < ea; a += 4) {
            __m128i r0 = LD(s + a * 4), r1 = LD(s + sb + a * 4), r2 = LD(s + 2 * sb + a * 4);
            __m128i t0 = _mm_unpacklo_epi32(r0, r1), t1 = _mm_unpacklo_epi32(r2, z);
            __m128i t2 = _mm_unpackhi_epi32(r0, r1), t3 = _mm_unpackhi_epi32(r2, z);
            __m128i y[4] = {_mm_unpacklo_epi64(t0, t1), _mm_unpackhi_epi64(t0, t1),
                            _mm_unpacklo_epi64(t2, t3), _mm_unpackhi_epi64(t2, t3)};
            for (int j = 0; j < 4; j++) {
                char *o = d + (a + j) * da;
                int32_t w = _mm_cvtsi128_si32(_mm_srli_si128(y[j], 8));
                _mm_storel_epi64((__m128i *)o, y[j]);
                memcpy(o + 8, &w, 4);
            }
        }
        if (ea < na) transpose_table[2](d + ea * da, s + ea * 4, na - ea, nb, da, sb);
        return 1;
    }
#else
    (void)d, (void)s, (void)na, (void)nb, (void)da, (void)sb;
#endif
    return 0;
}

/* The transpose of transpose_T in vector tiles of V x V items, grouped in blocks of one
 * cache line per row on both sides (so each source line is used whole while in L1, and each
 * destination line is written whole by consecutive tiles: streamed stores then combine);
 * the edges of na, nb that are not a multiple of V go through the scalar loop. Large ones
 * go through transpose_aligned (measured slower on the 128 x 8 transposes of a tiled
 * layout's column-major tiles). */
static void transpose_tiled(char *d, const char *s, Py_ssize_t na, Py_ssize_t nb, Py_ssize_t da,
                            Py_ssize_t sb, int lg, int nt)
{
    if (lg == 2 && !nt && short_u32 != NULL
        && (((na == 3 || na == 4) && nb >= 8) || ((nb == 3 || nb == 4) && na >= 8))) {
        short_u32(d, s, na, nb, da, sb);
        return;
    }
    if (lg == 2 && !nt && (na == 3 || nb == 3) && transpose_u32_three(d, s, na, nb, da, sb)) return;
    const tiler_t *t = &tilers[lg];
    if ((na < t->v || nb < t->v) && narrow_tilers[lg].tile != NULL && na >= narrow_tilers[lg].v
        && nb >= narrow_tilers[lg].v)
        t = &narrow_tilers[lg];
    const Py_ssize_t it = ITEM(lg), v = t->v;
    if (na == v && nb == v && t->tile != NULL) { /* one tile (a 2 x 2 block's units, say) */
        t->tile(d, s, da, sb, nt);
        return;
    }
    Py_ssize_t ea = na - na % v, eb = nb - nb % v;
    if (t->tile == NULL || ea == 0 || eb == 0) {
        transpose_table[lg](d, s, na, nb, da, sb);
        return;
    }
    if (!nt && na >= 4 * v && nb >= 4 * v) {
        transpose_aligned(t, d, s, na, nb, da, sb, lg);
        return;
    }
    Py_ssize_t block = 64 / it > v ? 64 / it : v;
    for (Py_ssize_t a0 = 0; a0 < ea; a0 += block) {
        Py_ssize_t a1 = a0 + block < ea ? a0 + block : ea;
        for (Py_ssize_t b0 = 0; b0 < eb; b0 += block) {
            Py_ssize_t b1 = b0 + block < eb ? b0 + block : eb;
            for (Py_ssize_t a = a0; a < a1; a += v)
                for (Py_ssize_t b = b0; b < b1; b += v)
                    t->tile(d + a * da + b * it, s + a * it + b * sb, da, sb, nt);
        }
    }
    transpose_edges(d, s, na, nb, ea, eb, da, sb, lg);
}

/* Pick the widest tiles (and weaves) this CPU runs (called once at import). */
static void choose_tilers(void)
{
#if HAVE_STREAM
    tilers[0] = (tiler_t){tile_u8x16_sse2, 16}; /* the 8 x 8 tile stays the narrow one */
#endif
#if HAVE_AVX2_DISPATCH
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) {
        tilers[2] = (tiler_t){tile_u32_avx2, 8};
        tilers[3] = (tiler_t){tile_u64_avx2, 4};
        tilers[2 + SWAPPED] = (tiler_t){tile_u32_swap_avx2, 8};
        tilers[3 + SWAPPED] = (tiler_t){tile_u64_swap_avx2, 4};
        rows_tile_u32 = tile_u32_avx2_rows;
        short_u32 = transpose_u32_short_avx2;
    }
#endif
    choose_weaves();
    choose_quads();
#if HAVE_AVX2_DISPATCH
    if (__builtin_cpu_supports("avx2")) {
        weave_table[2][2] = weave_u32_8_avx2;
        unweave_table[2][2] = unweave_u32_8_avx2;
    }
#endif
}

#endif
