/* _kernel_strips.h: transposes over a third axis g along which one side's rows run on (a
 * column-major tile's 128 rows, 32 bytes each per tile; a permuted rank-3 array): in cache,
 * their rows fetched ahead and narrow ones in groups of g; streamed, in strips of destination
 * lines through an L1 stage, or tile by tile.
 * Self-contained (include guard): it includes the tiles it runs. */
#ifndef TENSORLAYOUT_KERNEL_STRIPS_H
#define TENSORLAYOUT_KERNEL_STRIPS_H
#include "_kernel_tiles.h"
#include "_kernel_words.h"
#include "_kernel_words_stage.h"
#include "_kernel_big.h"
#include "_kernel_words_shifted.h"
#include "_kernel_words_lines.h"


#define TSTAGE_BYTES 32768 /* L1 staging area of the transposes */
#define RUN_LINES 16        /* lines of each source row transpose_grouped reads at once (runs_lines) */

/* Move a staged strip of rows to the destination: 64-byte rows with non-temporal stores
 * when `nt` (the caller checked that every row is one whole cache line), else memcpy. */
static void flush_rows(char *out, Py_ssize_t da, const char *in, Py_ssize_t rows, size_t bytes, int nt)
{
#if HAVE_STREAM
    if (nt) {
        for (Py_ssize_t a = 0; a < rows; a++)
            for (int k = 0; k < 64; k += 16)
                _mm_stream_si128((__m128i *)(out + a * da + k), _mm_load_si128((const __m128i *)(in + a * 64 + k)));
        return;
    }
#endif
    (void)nt;
    for (Py_ssize_t a = 0; a < rows; a++) memcpy(out + a * da, in + a * 64, bytes);
}

/* cg x ra x bw items of a strip in whole V x V tiles streamed straight to d (rows of whole
 * lines): the tiles of a destination line in turn, so its halves' stores combine (measured
 * 9% faster than through the L1 stage for f32 T(8,128) tiles; a source line's tiles are
 * still read at once). */
static void tiles_out(const tiler_t *t, char *d, const char *s, Py_ssize_t cg, Py_ssize_t ra, Py_ssize_t bw,
                      Py_ssize_t dg, Py_ssize_t da, Py_ssize_t sg, Py_ssize_t sb, Py_ssize_t it)
{
    for (Py_ssize_t g = 0; g < cg; g++)
        for (Py_ssize_t at = 0; at < ra; at += t->v)
            for (Py_ssize_t bt = 0; bt < bw; bt += t->v)
                t->tile(d + g * dg + at * da + bt * it, s + g * sg + at * it + bt * sb, da, sb, 1);
}

/* Fill the stage (rows of 64 bytes) with the transposes of cg blocks of ra x bw items, block
 * g's source at in + g*na*it: V x V tiles within each block, the edges by the scalar loop. */
static void stage_tiles(const tiler_t *t, char *stage, const char *in, Py_ssize_t cg, Py_ssize_t na,
                        Py_ssize_t ra, Py_ssize_t bw, Py_ssize_t sb, int lg)
{
    const Py_ssize_t it = ITEM(lg), v = t->v;
    Py_ssize_t eb = t->tile ? bw - bw % v : 0, ea = t->tile ? ra - ra % v : 0;
    for (Py_ssize_t bt = 0; bt < eb; bt += v)
        for (Py_ssize_t g = 0; g < cg; g++)
            for (Py_ssize_t at = 0; at < ea; at += v)
                t->tile(stage + (g * ra + at) * 64 + bt * it, in + (g * na + at) * it + bt * sb, 64, sb, 0);
    for (Py_ssize_t g = 0; g < cg; g++) { /* the edges the tiles leave */
        char *st = stage + g * ra * 64;
        const char *sr = in + g * na * it;
        transpose_table[lg](st + eb * it, sr + eb * sb, ra, bw - eb, 64, sb);
        transpose_table[lg](st + ea * 64, sr + ea * it, ra - ea, eb, 64, sb);
    }
}

/* The source rows of a transpose run on over an axis g (src stride na*it, or ng = 1): the
 * destination's contiguous axis b in strips of one cache line (the first strip up to d's
 * first line boundary), each strip over all of g, so a few source rows are read along. A
 * strip of four source lines' worth of g goes through an L1 stage, filled so that each
 * source line is read whole at once (also when the rows start mid-line), then written out
 * line by line, streamed past the cache where the strip covers whole lines (whole tiles
 * there go straight out: tiles_out). */
static void strips_src_run(char *d, const char *s, Py_ssize_t ng, Py_ssize_t na, Py_ssize_t nb,
                           Py_ssize_t dg, Py_ssize_t da, Py_ssize_t sb, int lg)
{
    const Py_ssize_t it = ITEM(lg), w = 64 / it;
    const tiler_t *t = &tilers[lg];
    const Py_ssize_t v = t->v;
    _Alignas(64) char stage[TSTAGE_BYTES];
    int nt_ok = ((uintptr_t)d & 15) == 0 && da % 64 == 0 && (ng == 1 || dg % 64 == 0);
    Py_ssize_t head = (Py_ssize_t)((64 - ((uintptr_t)d & 63)) & 63) / it;
    Py_ssize_t gp = na * it >= 256 ? 1 : (256 + na * it - 1) / (na * it); /* g per 4 source lines */
    if (gp > ng) gp = ng;
    Py_ssize_t ac = TSTAGE_BYTES / 64 / gp;                              /* a per stage */
    if (ac > na) ac = na;
    if (ac > v) ac -= ac % v;
    for (Py_ssize_t b0 = 0, b1; b0 < nb; b0 = b1) {
        b1 = b0 == 0 && head ? head : b0 + w;
        if (b1 > nb) b1 = nb;
        Py_ssize_t bw = b1 - b0;
        int nt = nt_ok && bw == w;
        for (Py_ssize_t g0 = 0; g0 < ng; g0 += gp) {
            Py_ssize_t cg = ng - g0 < gp ? ng - g0 : gp;
            for (Py_ssize_t a0 = 0; a0 < na; a0 += ac) {
                Py_ssize_t ra = na - a0 < ac ? na - a0 : ac;
                const char *in = s + (g0 * na + a0) * it + b0 * sb;
                Py_ssize_t eb = t->tile ? bw - bw % v : 0, ea = t->tile ? ra - ra % v : 0;
                if (nt && eb == bw && ea == ra && lg > 0) { /* whole tiles: streamed straight out (the
                                                               * 1-byte tile cannot stream: staged, 2.6 -> 2.0x a copy) */
                    if (!words_lines_out(d + g0 * dg + a0 * da + b0 * it, in, cg, ra, bw, dg, da, na * it, sb,
                                         lg)) /* (4- and 8-byte items: _kernel_words_lines.h) */
                        tiles_out(t, d + g0 * dg + a0 * da + b0 * it, in, cg, ra, bw, dg, da, na * it, sb, it);
                    continue;
                }
                if (nt && ra == na && words_lines_across(d + g0 * dg + b0 * it, in, cg, na, bw, dg, da, sb, lg))
                    continue; /* (narrow blocks, tiles across g: _kernel_words_lines.h) */
                if (ra == na) /* whole blocks: the stage's rows run on over g as the source's do,
                               * so they are one block, the tiles crossing g (a (2,1) sub-tile's
                               * 4-byte pairs: 4 rows a block, too few for one tile) */
                    stage_tiles(t, stage, in, 1, cg * na, cg * na, bw, sb, lg);
                else
                    stage_tiles(t, stage, in, cg, na, ra, bw, sb, lg);
                for (Py_ssize_t g = 0; g < cg; g++)
                    flush_rows(d + (g0 + g) * dg + a0 * da + b0 * it, da, stage + g * ra * 64, ra,
                               (size_t)(bw * it), nt);
            }
        }
    }
}

/* Whether `rows` rows `stride` apart spread over enough L1 sets (64 sets of 64 bytes) to hold a
 * line of each in 8 ways (all of this machine's 32 KiB 8-way L1d; the rule was set on a 48 KiB
 * 12-way one, where it left 4 ways free): rows a multiple of 2 KiB apart share two sets, and
 * their lines fetched ahead only evicted the lines in use (bf16[1024,3072]{0,1:T(8,128)(2,1)} 2.8/3.9 -> 3.7/5.0x a copy). */
static int rows_spread(Py_ssize_t rows, Py_ssize_t stride)
{
    Py_ssize_t a = (stride < 0 ? -stride : stride) % 4096, b = 4096;
    while (a) { Py_ssize_t t = b % a; b = a; a = t; } /* b = gcd(stride, 4096) */
    return (4096 / (b > 64 ? b : 64)) * 8 >= rows; /* distinct sets x 8 ways of the 12 */
}

/* Whether a piece of `len` bytes at `off` along a row enters a line the pieces before it did
 * not (relative to the row's start; the first piece always). */
static inline int enters_line(Py_ssize_t off, Py_ssize_t len)
{
    return off == 0 || (off - 1) / 64 != (off + len - 1) / 64;
}

/* The lines of `rows` rows `stride` apart from `at`, fetched (to be written if `write`) where
 * they lie in [lo, hi), if the rows spread over the sets. */
static inline void fetch_rows(const char *at, Py_ssize_t rows, Py_ssize_t stride, int write,
                              const char *lo, const char *hi)
{
#if HAVE_STREAM
    if (!rows_spread(rows, stride)) return;
    for (Py_ssize_t r = 0; r < rows; r++) {
        const char *x = at + r * stride;
        if (x < lo || x >= hi) continue;
        if (write) __builtin_prefetch(x, 1, 3); else _mm_prefetch(x, _MM_HINT_T0);
    }
#else
    (void)at, (void)rows, (void)stride, (void)write, (void)lo, (void)hi;
#endif
}

/* Groups of G consecutive g of a narrow transpose of 4-byte items as 8 x 8 tiles, where one
 * side's rows take 8/G items per g and run on over g: the pairs (quads) of a bf16 (2,1) (s8
 * (4,1)) sub-tile in a column-major tiling are 4 (2) items a row per tile, whose 4 x 4 (no)
 * tiles measured 3.2/8x a copy against 1.8/1.9 for f32's 8 x 8. `src`: the source's rows
 * (na = 8/G items per g), else the destination's (nb = 8/G). The rows' next lines are fetched
 * ahead as in transpose_rows_ahead, and the edges past whole tiles done g by g; returns the g
 * done (the last ng % G are left to the caller). The destination's rows get two tiles per x, a
 * line of each row (of 32-byte pieces) at once, and are not gathered (narrow_dst_rows; the
 * source's measured slower so: pred[4096,512]{0,1:T(8,128)(4,1)} to 2.0 -> 3.7x a copy).
 * One thread, from_physical, ratio to a copy, gathered -> two tiles per x in place:
 * f32[1024,512]{0,1:T(4,128)} 5.0 -> 3.0, bf16[1024,1024]{0,1:T(8,128)(2,1)} 5.2 -> 2.5.
 * Where the rows that run on over g are a multiple of a line apart and share L1 sets, all ng go
 * through the L1 stage of _kernel_words_stage.h instead (one thread, fastest of 11 rounds over
 * a copy's: f32[1024,512]{0,1:T(4,128)} to 2.9 -> 1.9, from 2.5 -> 2.2; bf16[1024,3072]
 * {0,1:T(8,128)(2,1)} to 3.6 -> 2.3, from 4.4 -> 2.2). */
/* Whether transpose_rows_ahead takes its ng transposes through transpose_narrow's destination
 * rows (nb = 1, 2 or 4 items a row per g, run on over g; not the source's). */
static int narrow_dst(Py_ssize_t ng, Py_ssize_t na, Py_ssize_t nb, Py_ssize_t dg, Py_ssize_t sg, int lg)
{
    int src_rows = ng > 1 && sg == na * 4 && sg <= 64, dst_rows = ng > 1 && dg == nb * 4 && dg <= 64;
    if (lg != 2 || rows_tile_u32 == NULL) return 0;
    return !(src_rows && (na == 1 || na == 2 || na == 4) && nb >= 8) && dst_rows
           && (nb == 1 || nb == 2 || nb == 4) && na >= 8;
}

/* transpose_narrow's loop over the destination's rows (nb items a row per g, G = 8/nb g a tile):
 * 2G g at a time, two tiles per x, so that each row's line (of 32-byte pieces) is written at
 * once; n of the na rows (whole tiles). Returns the g done. */
static Py_ssize_t narrow_dst_tiles(const plan_t *p, char *d, const char *s, Py_ssize_t ng, Py_ssize_t n,
                                   Py_ssize_t nb, Py_ssize_t dg, Py_ssize_t da, Py_ssize_t sg, Py_ssize_t sb)
{
    const Py_ssize_t G = 8 / nb;
    char *drow[8];
    const char *srow[8];
    Py_ssize_t g0 = 0;
    for (; g0 + 2 * G <= ng; g0 += 2 * G) {
        if (enters_line(g0 * dg, 2 * G * dg)) /* the rows' next lines, ahead */
            fetch_rows(d + g0 * dg + 64, n, da, 1, p->dlo, p->dhi);
        for (Py_ssize_t x = 0; x < n; x += 8)
            for (Py_ssize_t h = g0; h < g0 + 2 * G; h += G) {
                for (int k = 0; k < 8; k++) {
                    srow[k] = s + (h + k / nb) * sg + (k % nb) * sb + x * 4;
                    drow[k] = d + h * dg + (x + k) * da;
                }
                rows_tile_u32(drow, srow);
            }
    }
    return g0;
}

static Py_ssize_t transpose_narrow(const plan_t *p, char *d, const char *s, Py_ssize_t ng, Py_ssize_t na,
                                   Py_ssize_t nb, Py_ssize_t dg, Py_ssize_t da, Py_ssize_t sg, Py_ssize_t sb,
                                   int src)
{
    const Py_ssize_t it = 4, w = src ? na : nb, G = 8 / w, n = (src ? nb : na) / 8 * 8;
    char *drow[8];
    const char *srow[8];
    Py_ssize_t g0 = 0;
    if (!src && narrow_stageable(d, dg, da) && !rows_spread(na, da)) { /* _kernel_words_stage.h */
        narrow_dst_staged(d, s, ng, na, nb, dg, da, sg, sb);
        return ng;
    } else if (!src)
        g0 = narrow_dst_tiles(p, d, s, ng, n, nb, dg, da, sg, sb);
    else if (narrow_stageable(s, sg, sb) && !rows_spread(nb, sb)) { /* _kernel_words_stage.h */
        narrow_src_staged(d, s, ng, na, nb, dg, da, sg, sb);
        return ng;
    } else
        for (; g0 + G <= ng; g0 += G) {
            if (enters_line(g0 * sg, G * sg)) /* the rows' next lines, ahead */
                fetch_rows(s + g0 * sg + 64, nb, sb, 0, p->slo, p->shi);
            for (Py_ssize_t x = 0; x < n; x += 8) { /* x: along the other side's contiguous axis */
                for (int k = 0; k < 8; k++) {
                    srow[k] = s + g0 * sg + (x + k) * sb;
                    drow[k] = d + (g0 + k / w) * dg + (k % w) * da + x * it;
                }
                rows_tile_u32(drow, srow);
            }
        }
    if (n < (src ? nb : na)) /* the edges past whole tiles, g by g */
        for (Py_ssize_t g = 0; g < g0; g++) {
            if (src)
                transpose_tiled(d + g * dg + n * it, s + g * sg + n * sb, na, nb - n, da, sb, 2, 0);
            else
                transpose_tiled(d + g * dg + n * da, s + g * sg + n * it, na - n, nb, da, sb, 2, 0);
        }
    return g0;
}

/* Groups of G consecutive g whose pieces make up a line of the source rows that run on over
 * g (pieces sg = na*it), where those rows share L1 sets (their lines fetched ahead would only
 * evict each other: see rows_spread): the G transposes go a tile row at a time, so that each
 * source line is read whole at once instead of in G visits between which it leaves L1
 * (to_physical of f32[256,1024]{0,1:T(8,128)}, rows 4 KiB apart: 4.4 -> 2.5-3.0x a copy). The
 * same for the destination's rows measured no faster (9.8x for f32[1024,1024]'s
 * from_physical; its rows 2 KiB apart or more are gathered instead: copy_plan). Returns the
 * g done (whole groups; the caller does the rest). */
static Py_ssize_t transpose_grouped(const tiler_t *t, char *d, const char *s, Py_ssize_t ng, Py_ssize_t na,
                                    Py_ssize_t nb, Py_ssize_t dg, Py_ssize_t da, Py_ssize_t sg, Py_ssize_t sb,
                                    int lg)
{
    const Py_ssize_t it = ITEM(lg), v = t->v, G = sg < 64 ? 64 / sg : RUN_LINES, eb = nb - nb % v;
    Py_ssize_t g0 = 0; /* (na is a whole number of tiles: groups_lines) */
    for (; g0 + G <= ng; g0 += G) {
        for (Py_ssize_t b = 0; b < eb; b += v) /* a tile row of source rows: the G pieces of each */
            for (Py_ssize_t g = g0; g < g0 + G; g++)
                for (Py_ssize_t a = 0; a < na; a += v)
                    t->tile(d + g * dg + a * da + b * it, s + g * sg + a * it + b * sb, da, sb, 0);
        if (eb < nb) /* the source rows past whole tiles */
            for (Py_ssize_t g = g0; g < g0 + G; g++)
                transpose_table[lg](d + g * dg + eb * it, s + g * sg + eb * sb, na, nb - eb, da, sb);
    }
    return g0;
}

/* Whether transpose_grouped takes the transposes: source rows that run on in pieces of a
 * whole number of tiles (V*it and sg both divide 64, so sg >= V*it makes na = sg/it a
 * multiple of V), G of them to a line, and share L1 sets. */
static int groups_lines(const tiler_t *t, Py_ssize_t sg, Py_ssize_t nb, Py_ssize_t sb, Py_ssize_t it)
{
    return t->tile != NULL && sg < 64 && 64 % sg == 0 && 64 % (t->v * it) == 0 && sg >= t->v * it
           && nb >= t->v && !rows_spread(nb, sb);
}

/* Whether transpose_grouped_dst takes transposes whose destination rows run on over g in
 * pieces of a whole number of tiles shorter than a line (dg = nb*it < 64: a column-major f32
 * T(8,128) or s64 T(4,128) tile read into logical rows, 32 bytes a row per tile): PIECE_GROUP g
 * at a time (or all ng), a tile column of destination rows at once, so that each row gets
 * its pieces of the group in a row, written whole, instead of half a line per g, read first
 * and left to be finished by the next g. One thread, from_physical, ratio to a copy, medians
 * of 11 rounds alternating with g by g: f32[23395,91]{0,1:T(8,128)} 2.9 -> 2.5,
 * f32[3000,700] 2.9 -> 1.8, f32[1500,1500] 2.8-3.1 -> 1.8-1.9, s32[5000,300] 3.3 -> 2.5,
 * s64[47463,29]{0,1:T(4,128)} 3.0 -> 2.2, s64[10000,100] 3.5 -> 2.6, f32[256,8192] 5.2 -> 4.0
 * (all ng at once measured the same as groups of 32 there). */
#define PIECE_GROUP 32
static int pieces_lines(const tiler_t *t, Py_ssize_t dg, Py_ssize_t na, Py_ssize_t nb, Py_ssize_t it)
{
    return t->tile != NULL && dg < 64 && 64 % dg == 0 && dg % (t->v * it) == 0 && nb >= t->v && na >= t->v;
}

/* transpose_grouped's twin for destination rows that run on a line per g (dg = nb*it = 64):
 * RUN_LINES g at a time (shorter pieces: PIECE_GROUP), a tile column of destination rows at
 * once, so that each destination row gets RUN_LINES lines in a row (f64[1000,1000]{0,1:T(8,128)}
 * from_physical: 2.6 -> 1.9x a copy). Returns the g done (whole groups; the caller does the
 * rest). */
static Py_ssize_t transpose_grouped_dst(const tiler_t *t, char *d, const char *s, Py_ssize_t ng, Py_ssize_t na,
                                        Py_ssize_t nb, Py_ssize_t dg, Py_ssize_t da, Py_ssize_t sg, Py_ssize_t sb,
                                        int lg)
{
    const Py_ssize_t it = ITEM(lg), v = t->v, G = dg < 64 ? (ng < PIECE_GROUP ? ng : PIECE_GROUP) : RUN_LINES;
    const Py_ssize_t ea = na - na % v;
    Py_ssize_t g0 = 0; /* (nb is a whole number of tiles: runs_lines, pieces_lines) */
    const int words = words_avx2 && lg == 3 && nb % 8 == 0; /* whole lines in blocks: _kernel_words.h */
    for (; words && g0 + G <= ng; g0 += G) {
        const Py_ssize_t e8 = na - na % 8;
        words_grouped_dst(d + g0 * dg, s + g0 * sg, G, e8, nb, dg, da, sg, sb);
        if (e8 < na)
            for (Py_ssize_t g = g0; g < g0 + G; g++)
                transpose_table[lg](d + g * dg + e8 * da, s + g * sg + e8 * it, na - e8, nb, da, sb);
    }
    for (; g0 + G <= ng; g0 += G) {
        for (Py_ssize_t a = 0; a < ea; a += v) /* a tile column of destination rows: G lines of each */
            for (Py_ssize_t g = g0; g < g0 + G; g++)
                for (Py_ssize_t b = 0; b < nb; b += v)
                    t->tile(d + g * dg + a * da + b * it, s + g * sg + a * it + b * sb, da, sb, 0);
        if (ea < na) /* the destination rows past whole tiles */
            for (Py_ssize_t g = g0; g < g0 + G; g++)
                transpose_table[lg](d + g * dg + ea * da, s + g * sg + ea * it, na - ea, nb, da, sb);
    }
    return g0;
}

/* Whether transpose_grouped takes transposes whose source rows run on a line per g: RUN_LINES
 * lines of each row at once, which the prefetchers follow (a line of 128 rows per g, fetched
 * ahead, left f64[1000,1000]{0,1:T(8,128)} waiting on its loads at 3x a copy). */
static int runs_lines(const tiler_t *t, Py_ssize_t sg, Py_ssize_t nb, Py_ssize_t it)
{
    return t->tile != NULL && sg == 64 && 64 % (t->v * it) == 0 && nb >= t->v;
}

/* Whether a transpose in cache (not streamed) still goes in strips with streamed stores
 * (strips_src_run): items of 2 bytes or more whose source rows run on over g (a column-major
 * tile's 128 rows, 32 bytes each per tile: to_physical of {0,1:T(8,128)} and the like; a
 * permuted rank-3 array's), into whole destination lines (rows and g a multiple of 64 bytes
 * apart, d on 16 bytes), from STRIPS_NT_MIN_BYTES of destination on. Their tiles g by g had each
 * destination line read before it was written (the stores allocate it); in strips each line
 * is written whole past the cache, the source rows read along. One thread, ratio to a copy,
 * medians of 11 rounds alternating with the tiles: f32[23395,91]{0,1:T(8,128)} to_physical
 * 3.8-4.8 -> 2.0-3.1, f32[1500,1500] 3.7-4.6 -> 1.7-2.2, s64[47463,29]{0,1:T(4,128)} 3.3-4.1 ->
 * 1.4-1.9, bf16[3000,1000]{0,1:T(8,128)(2,1)} 3.8-5.8 -> 1.8-3.1, f32[2000,600]{0,1:T(2,128)}
 * 5.2-5.3 -> 2.7-3.3, f32[128,128,8,16]{0,1,3,2:T(4,128)} 4.0/5.4 -> 2.6/3.5 (to/from); at 1-2
 * MiB of destination no faster (f32[1024,512]{0,1:T(4,128)}, u32[2157,219]{0,1:T(8,128)}). */
#define STRIPS_NT_MIN_BYTES (4 << 20)
static int strips_in_cache(const plan_t *p, const char *d, Py_ssize_t ng, Py_ssize_t na, Py_ssize_t dg,
                           Py_ssize_t da, Py_ssize_t sg, int lg)
{
    const Py_ssize_t it = ITEM(lg);
    return HAVE_STREAM && !p->stream && it >= 2 && ng > 1 && sg == na * it && da % 64 == 0 && dg % 64 == 0
           && ((uintptr_t)d & 15) == 0 && p->dhi - p->dlo >= STRIPS_NT_MIN_BYTES;
}

/* Whether a transpose in cache (not streamed) of 4-byte items goes in shifted strips
 * (_kernel_words_shifted.h): destination rows off their lines (shifted_takes; g by g where the
 * source rows do not run on over g), from STRIPS_NT_MIN_BYTES of destination on, as
 * strips_in_cache takes rows on them. One thread, from_physical, ratio to a copy, alternating
 * builds: u32[118,26884]{0,1:T(2,128)} 2.8-3.0 -> 2.2-2.4, u32[263,4,1917]{0,1,2:T(1,128)}
 * 2.0-2.3 -> 1.4-1.5, f32[1100,3001]{0,1:T(1,128)} 2.85 -> 2.0. Not 8-byte items, whose blocks
 * in cache (words_transpose) measured faster: f64[1301,957]{0,1:T(1,128)} 1.5-1.8 -> 2.2-3.2. */
static int shifted_in_cache(const plan_t *p, const char *d, Py_ssize_t ng, Py_ssize_t na, Py_ssize_t nb,
                            Py_ssize_t dg, Py_ssize_t da, Py_ssize_t sg, int lg)
{
    int run = ng == 1 || sg == na * ITEM(lg);
    return lg == 2 && !p->stream && p->dhi - p->dlo >= STRIPS_NT_MIN_BYTES
           && (run ? shifted_takes(d, ng, nb, da, dg, lg) : shifted_takes(d, 1, nb, da, 0, lg) && dg % ITEM(lg) == 0);
}

/* ng transposes (na x nb items) in cache (not streamed). Where either side's rows run on over g
 * in pieces of at most a line (the 128 source rows of a column-major f32 T(8,128) tile get 32
 * bytes each per g, f64's 64), the line after every such row's piece is fetched as the piece
 * enters a line: the prefetchers do not follow 128 streams (6 MiB f64 4.9 -> 2.1x a copy).
 * Narrow ones of 4-byte items go G g at a time (transpose_narrow). */
static void transpose_rows_ahead(const plan_t *p, char *d, const char *s, Py_ssize_t ng, Py_ssize_t na,
                                 Py_ssize_t nb, Py_ssize_t dg, Py_ssize_t da, Py_ssize_t sg, Py_ssize_t sb,
                                 int lg)
{
    const Py_ssize_t it = ITEM(lg);
    int src_rows = ng > 1 && sg == na * it && sg <= 64, dst_rows = ng > 1 && dg == nb * it && dg <= 64;
    Py_ssize_t done = 0;
    if (strips_in_cache(p, d, ng, na, dg, da, sg, lg)) {
        strips_src_run(d, s, ng, na, nb, dg, da, sb, lg);
        return;
    }
    if (shifted_in_cache(p, d, ng, na, nb, dg, da, sg, lg)) {
        int ok = 1;
        if (ng == 1 || sg == na * it)
            ok = strips_shifted(d, s, ng, na, nb, dg, da, sb, lg);
        else
            for (Py_ssize_t g = 0; g < ng && ok; g++) ok = strips_shifted(d + g * dg, s + g * sg, 1, na, nb, 0, da, sb, lg);
        if (ok) return; /* (else the stage could not be allocated: as it stands) */
    }
    const tiler_t *t = na < tilers[lg].v && narrow_tilers[lg].tile != NULL ? &narrow_tilers[lg] : &tilers[lg];
    if (lg == 2 && rows_tile_u32 != NULL && src_rows && (na == 1 || na == 2 || na == 4) && nb >= 8)
        done = transpose_narrow(p, d, s, ng, na, nb, dg, da, sg, sb, 1);
    else if (narrow_dst(ng, na, nb, dg, sg, lg))
        done = transpose_narrow(p, d, s, ng, na, nb, dg, da, sg, sb, 0);
    else if (src_rows && (groups_lines(t, sg, nb, sb, it) || runs_lines(t, sg, nb, it)))
        done = transpose_grouped(t, d, s, ng, na, nb, dg, da, sg, sb, lg);
    else if (dst_rows && (runs_lines(t, dg, na, it) || pieces_lines(t, dg, na, nb, it)))
        done = transpose_grouped_dst(t, d, s, ng, na, nb, dg, da, sg, sb, lg);
    for (Py_ssize_t g = done; g < ng; g++) {
        if (src_rows && enters_line(g * sg, sg))
            fetch_rows(s + g * sg + 64, nb, sb, 0, p->slo, p->shi);
        if (dst_rows && enters_line(g * dg, dg))
            fetch_rows(d + g * dg + 64, na, da, 1, p->dlo, p->dhi);
        if (words_take(p, na, nb, lg))
            words_transpose(d + g * dg, s + g * sg, na, nb, da, sb);
        else
            transpose_tiled(d + g * dg, s + g * sg, na, nb, da, sb, lg, 0);
    }
}

/* Transposes over g whose rows run on over g on the side of the short pieces: M = 2, 4 or 8
 * items of 1 or 2 bytes (a (4,1) or (2,1) sub-tile's rows, read from or into a dim the tiling
 * does not touch: pred[19,64,308,23]{2,0,1,3:T(8,128)(4,1)}): item by item they are scalar loops
 * over M-item rows (25-32x a copy). Woven, G g at a time go through an L1 stage of
 * W = M*it-byte items: to the destination's M-item pieces (dg = nb*it), the M source rows woven
 * into W-byte items (g by g where the source rows do not run on over g: sg != na*it, a full
 * reversal of dims, pred[1024,16,128]{0,1,2:T(8,128)(4,1)}, 17x a copy through the scalar
 * loop), then transposed as such; from the source's (sg = na*it), transposed as W-byte items,
 * then unwoven into the M destination rows (g by g where dg != nb*it). G is a whole number of
 * lines of W-byte items where the stage holds one (pred[100,490,83]{1,0,2:T(8,128)(4,1)}: G 49 ->
 * 48, one thread, to_physical 3.2 -> 2.2x a copy, from_physical 3.4 -> 2.5). */
#define WOVEN_STAGE 16384
static int woven(Py_ssize_t ng, Py_ssize_t na, Py_ssize_t nb, Py_ssize_t dg, Py_ssize_t sg, int lg)
{
    Py_ssize_t it = ITEM(lg);
    int to = nb <= 8;
    if (lg > 1 || ng < 2 || (to ? dg != nb * it : sg != na * it)) return 0;
    Py_ssize_t m = to ? nb : na, other = to ? na : nb;
    return (m == 2 || m == 4 || m == 8) && m * it <= 8 && other >= 2 && na * nb * it <= WOVEN_STAGE;
}

static void transpose_woven(char *d, const char *s, Py_ssize_t ng, Py_ssize_t na, Py_ssize_t nb, Py_ssize_t dg,
                            Py_ssize_t da, Py_ssize_t sg, Py_ssize_t sb, int lg)
{
    _Alignas(64) char stage[WOVEN_STAGE];
    const Py_ssize_t it = ITEM(lg), to = nb <= 8, m = to ? nb : na, w = m * it, lw = log2_small(w);
    const Py_ssize_t most = WOVEN_STAGE / (na * nb * it), G = most >= 64 / w ? most - most % (64 / w) : most;
    const weave_fn weave = weave_table[lg][log2_small(m) - 1], unweave = unweave_table[lg][log2_small(m) - 1];
    for (Py_ssize_t g0 = 0; g0 < ng; g0 += G) {
        Py_ssize_t c = ng - g0 < G ? ng - g0 : G;
        if (to) { /* stage[g][a] (w bytes) = the m source rows' items; then d[a][g] = stage[g][a] */
            if (sg == na * it)
                weave(stage, s + g0 * sg, c * na, sb);
            else
                for (Py_ssize_t g = 0; g < c; g++) weave(stage + g * na * w, s + (g0 + g) * sg, na, sb);
            transpose_tiled(d + g0 * w, stage, na, c, da, na * w, (int)lw, 0);
        } else { /* stage[g][b] (w bytes) = source row b's piece g; then the m destination rows */
            transpose_tiled(stage, s + g0 * w, c, nb, nb * w, sb, (int)lw, 0);
            if (dg == nb * it)
                unweave(d + g0 * dg, stage, c * nb, da);
            else
                for (Py_ssize_t g = 0; g < c; g++) unweave(d + (g0 + g) * dg, stage + g * nb * w, nb, da);
        }
    }
}

/* transpose_woven for a ragged (4,1) sub-tile's last three rows of bytes (pred[19,64,308,23]
 * {2,0,1,3:T(8,128)(4,1)}: 19 rows, 16 + 3), whose pieces are 3 bytes of each 4-byte group
 * (dg or sg 4): item by item they took the scalar byte transpose (1.5x a copy for a fifth of
 * the data). To the groups (nb == 3, dg == 4): the three source rows woven into 4-byte items
 * (the fourth byte 0), transposed as such into a second stage, then merged into the
 * destination three bytes a group: in vectors that rewrite each fourth byte with the value it
 * holds where the task's gaps are its own (plan_t.gaps_ours: one thread, the padding written
 * first), else group by group (one thread, to_physical 4.4 -> 2.3x a copy; 2.6 with the
 * groups merged one by one; two threads' calling thread 3.7 -> 1.7). From them (na == 3, sg == 4): the groups read whole and transposed
 * as 4-byte items (the fourth bytes read, not kept: the last group's only where it lies in
 * the task's source bytes), then unwoven into the three rows. */
#define WOVEN3_STAGE 8192
static int woven3(Py_ssize_t ng, Py_ssize_t na, Py_ssize_t nb, Py_ssize_t dg, Py_ssize_t sg, Py_ssize_t sb,
                  int lg)
{
    if (lg != 0 || ng < 2) return 0;
    if (nb == 3 && dg == 4 && sg == na && na >= 2 && 4 * na <= WOVEN3_STAGE) return 1;
    return na == 3 && sg == 4 && dg == nb && nb >= 2 && 4 * nb <= WOVEN3_STAGE && sb > 0;
}

static void transpose_woven3(const plan_t *p, char *d, const char *s, Py_ssize_t ng, Py_ssize_t na, Py_ssize_t nb,
                             Py_ssize_t da, Py_ssize_t sb)
{
    _Alignas(64) char stage[WOVEN3_STAGE], out[WOVEN3_STAGE];
    if (nb == 3) { /* to the groups: stage[g][a] = rows' bytes, out[a][g] = stage[g][a] */
        const Py_ssize_t G = WOVEN3_STAGE / (4 * na);
        const merge_fn merge = p->gaps_ours ? merge3_best : merge3;
        for (Py_ssize_t g0 = 0; g0 < ng; g0 += G) {
            Py_ssize_t c = ng - g0 < G ? ng - g0 : G;
            weave3(stage, s + g0 * na, c * na, sb);
            transpose_tiled(out, stage, na, c, c * 4, na * 4, 2, 0);
            for (Py_ssize_t a = 0; a < na; a++) merge(d + a * da + g0 * 4, out + a * c * 4, c, p->dhi);
        }
        return;
    }
    Py_ssize_t whole = ng; /* from the groups: the last g item by item if its last group's fourth
                            * byte lies past the task's source bytes */
    if (s + (ng - 1) * 4 + (nb - 1) * sb + 4 > p->shi) {
        whole = ng - 1;
        transpose_tiled(d + whole * nb, s + whole * 4, na, nb, da, sb, 0, 0);
    }
    const Py_ssize_t G = WOVEN3_STAGE / (4 * nb);
    for (Py_ssize_t g0 = 0; g0 < whole; g0 += G) {
        Py_ssize_t c = whole - g0 < G ? whole - g0 : G;
        transpose_tiled(stage, s + g0 * 4, c, nb, nb * 4, sb, 2, 0);
        unweave3(d + g0 * nb, stage, c * nb, da);
    }
}

/* Whether a streamed transpose's source rows (sb apart) are far enough apart to go tile by
 * tile with streamed stores rather than in strips: 2- and 4-byte items 64 KiB or more apart (the
 * rows of a permuted rank-3 array). Measured (quiet machine, to_physical, ratio to a copy, strips
 * -> tiles): f32[256,64,512]{0,2,1:T(8,128)} 1.60 -> 1.12, f32[512,64,256] 1.17 -> 1.05,
 * bf16[256,64,1024] 1.72 -> 1.50; nearer rows and other item sizes measured slower tile by tile:
 * f32[4096,4096]{0,1} (16 KiB) 1.18 -> 1.40, f32[2048,64,64] (16 KiB) 0.98 -> 1.04,
 * bf16[1024,64,256] (32 KiB) 1.27 -> 1.34, f64[256,64,256] (128 KiB) 1.11 -> 1.41,
 * s8[256,64,2048] (128 KiB) 1.44 -> 2.63. Not where the destination rows share L1 sets (4 KiB
 * apart or a multiple): pred[16384,4096]{0,1:T(4,128)(4,1)} from_physical (4-byte items, rows
 * 64 KiB / 4 KiB apart), one thread, tile by tile 6.6-7.0x a copy, in strips 1.4-1.5. */
#define FAR_ROWS_BYTES 65536
static int far_rows(Py_ssize_t sb, int lg)
{
    return (lg == 1 || lg == 2) && (sb >= FAR_ROWS_BYTES || sb <= -FAR_ROWS_BYTES);
}

/* dst[g*dg + a*da + b*it] = src[g*sg + a*it + b*sb] for g < ng, a < na, b < nb, streamed:
 * where the source rows run on over g (sg = na*it, or ng = 1) in strips along the
 * destination's lines; source rows far apart tile by tile with streamed stores; else through
 * the cache as transpose_rows_ahead does (staging the other case, destination rows that run
 * on over g, through L1 in windows measured no faster here). */
static void transpose_streamed(const plan_t *p, char *d, const char *s, Py_ssize_t ng, Py_ssize_t na,
                               Py_ssize_t nb, Py_ssize_t dg, Py_ssize_t da, Py_ssize_t sg, Py_ssize_t sb,
                               int lg)
{
    if (big_takes(far_rows(sb, lg) && !same_set_rows(da), ng, na, nb, dg, sg, lg)
        && big_transpose(p, d, s, ng, na, nb, dg, da, sg, sb, lg))
        return; /* in big blocks: _kernel_big.h */
    const Py_ssize_t it = ITEM(lg);
    int nt = 0;
    if (far_rows(sb, lg) && !same_set_rows(da)) /* tile by tile, streamed where every store is 16-byte
                                                 * aligned */
        nt = ((uintptr_t)d & 15) == 0 && da % 16 == 0 && dg % 16 == 0;
    else if (ng == 1 || sg == na * it) {
        if (!(shifted_takes(d, ng, nb, da, dg, lg) && strips_shifted(d, s, ng, na, nb, dg, da, sb, lg)))
            strips_src_run(d, s, ng, na, nb, dg, da, sb, lg); /* (rows off their lines: _kernel_words_shifted.h) */
        return;
    }
    if (!nt) { /* tile by tile through the cache, narrow ones in groups (s8[8003,8001]{0,1:T(8,128)(4,1)}
                * from_physical: a scalar loop over 2-item rows, 4.6x a copy) */
        transpose_rows_ahead(p, d, s, ng, na, nb, dg, da, sg, sb, lg);
        return;
    }
    for (Py_ssize_t g = 0; g < ng; g++)
        transpose_tiled(d + g * dg, s + g * sg, na, nb, da, sb, lg, nt);
}

#endif
