/* _kernel_tiles.h: the vector transposes (SSE2/AVX2 tiles, blocked and streamed
 * transposes).
 * Part of _kernel.c, which includes it: one translation unit, so the copy paths inline
 * across the parts. Not a standalone header. */

/* ---- vector transposes -------------------------------------------------------------------
 * A tile function moves one V x V tile in registers: dst row a (at d + a*da) receives item a
 * of each source row b (at s + b*sb), b = 0..V-1. `nt`: non-temporal stores (the caller
 * checked that every store is 16-byte aligned; the 1-byte tile ignores it). */
typedef void (*tile_fn)(char *d, const char *s, Py_ssize_t da, Py_ssize_t sb, int nt);

#if HAVE_STREAM
#define LD(p) _mm_loadu_si128((const __m128i *)(p))
static inline void st128(char *p, __m128i v, int nt)
{
    if (nt) _mm_stream_si128((__m128i *)p, v); else _mm_storeu_si128((__m128i *)p, v);
}

static void tile_u8_sse2(char *d, const char *s, Py_ssize_t da, Py_ssize_t sb, int nt)
{ /* 8 x 8 bytes: three rounds of unpacks, 8-byte stores */
    (void)nt;
    __m128i r[8], t[4], u[4], v[4];
    for (int b = 0; b < 8; b++) r[b] = _mm_loadl_epi64((const __m128i *)(s + b * sb));
    for (int k = 0; k < 4; k++) t[k] = _mm_unpacklo_epi8(r[2 * k], r[2 * k + 1]);
    u[0] = _mm_unpacklo_epi16(t[0], t[1]);
    u[1] = _mm_unpackhi_epi16(t[0], t[1]);
    u[2] = _mm_unpacklo_epi16(t[2], t[3]);
    u[3] = _mm_unpackhi_epi16(t[2], t[3]);
    v[0] = _mm_unpacklo_epi32(u[0], u[2]);
    v[1] = _mm_unpackhi_epi32(u[0], u[2]);
    v[2] = _mm_unpacklo_epi32(u[1], u[3]);
    v[3] = _mm_unpackhi_epi32(u[1], u[3]);
    for (int k = 0; k < 4; k++) {
        _mm_storel_epi64((__m128i *)(d + (2 * k) * da), v[k]);
        _mm_storel_epi64((__m128i *)(d + (2 * k + 1) * da), _mm_unpackhi_epi64(v[k], v[k]));
    }
}

/* 16 x 16 bytes: four rounds of unpacks (bytes, pairs, quads, halves), 16-byte rows that can
 * stream; 0.4 instructions a byte against the 8 x 8 tile's 0.6 (1-byte transposes measured
 * compute-bound at 64 MiB) */
static void tile_u8x16_sse2(char *d, const char *s, Py_ssize_t da, Py_ssize_t sb, int nt)
{
    __m128i r[16], t[16], q[16];
    for (int b = 0; b < 16; b++) r[b] = LD(s + b * sb);
    for (int i = 0; i < 8; i++) { /* t[2i]: items 0..7 of rows 2i, 2i+1 paired; t[2i+1]: 8..15 */
        t[2 * i] = _mm_unpacklo_epi8(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm_unpackhi_epi8(r[2 * i], r[2 * i + 1]);
    }
    for (int g = 0; g < 4; g++) /* q[4g + m]: items 4m..4m+3 of rows 4g..4g+3, a dword each */
        for (int h = 0; h < 2; h++) {
            q[4 * g + 2 * h] = _mm_unpacklo_epi16(t[4 * g + h], t[4 * g + 2 + h]);
            q[4 * g + 2 * h + 1] = _mm_unpackhi_epi16(t[4 * g + h], t[4 * g + 2 + h]);
        }
    for (int m = 0; m < 4; m++) { /* rows 0..7 and 8..15 of items 4m..4m+3, a qword each */
        __m128i lo = _mm_unpacklo_epi32(q[m], q[4 + m]), hi = _mm_unpacklo_epi32(q[8 + m], q[12 + m]);
        st128(d + (4 * m) * da, _mm_unpacklo_epi64(lo, hi), nt);
        st128(d + (4 * m + 1) * da, _mm_unpackhi_epi64(lo, hi), nt);
        lo = _mm_unpackhi_epi32(q[m], q[4 + m]);
        hi = _mm_unpackhi_epi32(q[8 + m], q[12 + m]);
        st128(d + (4 * m + 2) * da, _mm_unpacklo_epi64(lo, hi), nt);
        st128(d + (4 * m + 3) * da, _mm_unpackhi_epi64(lo, hi), nt);
    }
}

static void tile_u16_sse2(char *d, const char *s, Py_ssize_t da, Py_ssize_t sb, int nt)
{ /* 8 x 8 two-byte items */
    __m128i r[8], t[8], u[8];
    for (int b = 0; b < 8; b++) r[b] = LD(s + b * sb);
    for (int k = 0; k < 4; k++) {
        t[2 * k] = _mm_unpacklo_epi16(r[2 * k], r[2 * k + 1]);
        t[2 * k + 1] = _mm_unpackhi_epi16(r[2 * k], r[2 * k + 1]);
    }
    for (int h = 0; h < 2; h++) { /* rows 0-3, then 4-7 */
        __m128i *tt = t + 4 * h, *uu = u + 4 * h;
        uu[0] = _mm_unpacklo_epi32(tt[0], tt[2]);
        uu[1] = _mm_unpackhi_epi32(tt[0], tt[2]);
        uu[2] = _mm_unpacklo_epi32(tt[1], tt[3]);
        uu[3] = _mm_unpackhi_epi32(tt[1], tt[3]);
    }
    for (int k = 0; k < 4; k++) {
        st128(d + (2 * k) * da, _mm_unpacklo_epi64(u[k], u[k + 4]), nt);
        st128(d + (2 * k + 1) * da, _mm_unpackhi_epi64(u[k], u[k + 4]), nt);
    }
}

/* [a, b, c, d] -> [a, c, b, d] in every unit of a register (units of 4 or 8 bytes) */
static inline __m128i fix128(__m128i v, int swap)
{
    if (swap == 4) {
        __m128i keep = _mm_and_si128(v, _mm_set1_epi32((int)0xFF0000FFu));
        __m128i up = _mm_slli_epi32(_mm_and_si128(v, _mm_set1_epi32(0x0000FF00)), 8);
        return _mm_or_si128(keep, _mm_or_si128(up, _mm_srli_epi32(_mm_and_si128(v, _mm_set1_epi32(0x00FF0000)), 8)));
    }
    if (swap == 8) return _mm_shufflehi_epi16(_mm_shufflelo_epi16(v, 0xD8), 0xD8);
    return v;
}

static inline __attribute__((always_inline)) void tile_u32_body(char *d, const char *s, Py_ssize_t da,
                                                                 Py_ssize_t sb, int nt, int swap)
{ /* 4 x 4 four-byte items */
    __m128i r0 = LD(s), r1 = LD(s + sb), r2 = LD(s + 2 * sb), r3 = LD(s + 3 * sb);
    __m128i t0 = _mm_unpacklo_epi32(r0, r1), t1 = _mm_unpacklo_epi32(r2, r3);
    __m128i t2 = _mm_unpackhi_epi32(r0, r1), t3 = _mm_unpackhi_epi32(r2, r3);
    st128(d, fix128(_mm_unpacklo_epi64(t0, t1), swap), nt);
    st128(d + da, fix128(_mm_unpackhi_epi64(t0, t1), swap), nt);
    st128(d + 2 * da, fix128(_mm_unpacklo_epi64(t2, t3), swap), nt);
    st128(d + 3 * da, fix128(_mm_unpackhi_epi64(t2, t3), swap), nt);
}

static void tile_u32_sse2(char *d, const char *s, Py_ssize_t da, Py_ssize_t sb, int nt)
{
    tile_u32_body(d, s, da, sb, nt, 0);
}

static void tile_u32_swap_sse2(char *d, const char *s, Py_ssize_t da, Py_ssize_t sb, int nt)
{
    tile_u32_body(d, s, da, sb, nt, 4);
}

static inline __attribute__((always_inline)) void tile_u64_body(char *d, const char *s, Py_ssize_t da,
                                                                 Py_ssize_t sb, int nt, int swap)
{ /* 2 x 2 eight-byte items */
    __m128i r0 = LD(s), r1 = LD(s + sb);
    st128(d, fix128(_mm_unpacklo_epi64(r0, r1), swap), nt);
    st128(d + da, fix128(_mm_unpackhi_epi64(r0, r1), swap), nt);
}

static void tile_u64_sse2(char *d, const char *s, Py_ssize_t da, Py_ssize_t sb, int nt)
{
    tile_u64_body(d, s, da, sb, nt, 0);
}

static void tile_u64_swap_sse2(char *d, const char *s, Py_ssize_t da, Py_ssize_t sb, int nt)
{
    tile_u64_body(d, s, da, sb, nt, 8);
}
#endif

#if HAVE_AVX2_DISPATCH
__attribute__((target("avx2"))) static inline void st256(char *p, __m256i v, int nt)
{ /* streamed as two 16-byte halves: a row of a tile need only be 16-byte aligned */
    if (nt) {
        _mm_stream_si128((__m128i *)p, _mm256_castsi256_si128(v));
        _mm_stream_si128((__m128i *)(p + 16), _mm256_extracti128_si256(v, 1));
    } else {
        _mm256_storeu_si256((__m256i *)p, v);
    }
}

__attribute__((target("avx2"))) static inline __m256i fix256(__m256i v, int swap)
{ /* fix128 on both halves */
    if (swap == 4) {
        __m256i keep = _mm256_and_si256(v, _mm256_set1_epi32((int)0xFF0000FFu));
        __m256i up = _mm256_slli_epi32(_mm256_and_si256(v, _mm256_set1_epi32(0x0000FF00)), 8);
        return _mm256_or_si256(keep, _mm256_or_si256(up, _mm256_srli_epi32(
            _mm256_and_si256(v, _mm256_set1_epi32(0x00FF0000)), 8)));
    }
    if (swap == 8) return _mm256_shufflehi_epi16(_mm256_shufflelo_epi16(v, 0xD8), 0xD8);
    return v;
}

/* 8 x 8 four-byte items in registers: unpack, shuffle, then swap 128-bit halves; o[a] is row
 * a of the transpose of the rows r[b]. */
__attribute__((target("avx2"))) static inline __attribute__((always_inline)) void
transpose_u32x8(const __m256 *r, __m256 *o)
{
    __m256 t[8], u[8];
    for (int k = 0; k < 4; k++) {
        t[2 * k] = _mm256_unpacklo_ps(r[2 * k], r[2 * k + 1]);
        t[2 * k + 1] = _mm256_unpackhi_ps(r[2 * k], r[2 * k + 1]);
    }
    for (int h = 0; h < 2; h++) {
        __m256 *tt = t + 4 * h, *uu = u + 4 * h;
        uu[0] = _mm256_shuffle_ps(tt[0], tt[2], 0x44);
        uu[1] = _mm256_shuffle_ps(tt[0], tt[2], 0xEE);
        uu[2] = _mm256_shuffle_ps(tt[1], tt[3], 0x44);
        uu[3] = _mm256_shuffle_ps(tt[1], tt[3], 0xEE);
    }
    for (int k = 0; k < 4; k++) {
        o[k] = _mm256_permute2f128_ps(u[k], u[k + 4], 0x20);
        o[k + 4] = _mm256_permute2f128_ps(u[k], u[k + 4], 0x31);
    }
}

__attribute__((target("avx2"))) static inline __attribute__((always_inline)) void
tile_u32_avx2_body(char *d, const char *s, Py_ssize_t da, Py_ssize_t sb, int nt, int swap)
{ /* 8 x 8 four-byte items */
    __m256 r[8], o[8];
    for (int b = 0; b < 8; b++) r[b] = _mm256_loadu_ps((const float *)(s + b * sb));
    transpose_u32x8(r, o);
    for (int a = 0; a < 8; a++) st256(d + a * da, fix256(_mm256_castps_si256(o[a]), swap), nt);
}

/* The 8 x 8 four-byte tile with its rows anywhere: source row b read at srow[b], destination
 * row a written at drow[a] (the pieces of G consecutive g of a narrow transpose, whose rows
 * are 8/G items each: transpose_narrow in _kernel.c). */
__attribute__((target("avx2"))) static void tile_u32_avx2_rows(char *const *drow, const char *const *srow)
{
    __m256 r[8], o[8];
    for (int b = 0; b < 8; b++) r[b] = _mm256_loadu_ps((const float *)srow[b]);
    transpose_u32x8(r, o);
    for (int a = 0; a < 8; a++) _mm256_storeu_ps((float *)drow[a], o[a]);
}

__attribute__((target("avx2"))) static inline __attribute__((always_inline)) void
tile_u64_avx2_body(char *d, const char *s, Py_ssize_t da, Py_ssize_t sb, int nt, int swap)
{ /* 4 x 4 eight-byte items */
    __m256d r0 = _mm256_loadu_pd((const double *)s), r1 = _mm256_loadu_pd((const double *)(s + sb));
    __m256d r2 = _mm256_loadu_pd((const double *)(s + 2 * sb));
    __m256d r3 = _mm256_loadu_pd((const double *)(s + 3 * sb));
    __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
    __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
    __m256d o[4] = {_mm256_permute2f128_pd(t0, t2, 0x20), _mm256_permute2f128_pd(t1, t3, 0x20),
                    _mm256_permute2f128_pd(t0, t2, 0x31), _mm256_permute2f128_pd(t1, t3, 0x31)};
    for (int k = 0; k < 4; k++) st256(d + k * da, fix256(_mm256_castpd_si256(o[k]), swap), nt);
}

#define AVX2_TILE(NAME, BODY, SWAP)                                                           \
    __attribute__((target("avx2"))) static void NAME(char *d, const char *s, Py_ssize_t da,  \
                                                     Py_ssize_t sb, int nt)                  \
    {                                                                                        \
        BODY(d, s, da, sb, nt, SWAP);                                                        \
    }
AVX2_TILE(tile_u32_avx2, tile_u32_avx2_body, 0)
AVX2_TILE(tile_u32_swap_avx2, tile_u32_avx2_body, 4)
AVX2_TILE(tile_u64_avx2, tile_u64_avx2_body, 0)
AVX2_TILE(tile_u64_swap_avx2, tile_u64_avx2_body, 8)
#endif

typedef struct {
    tile_fn tile;    /* NULL: the scalar loop only */
    int v;           /* tile side in items */
} tiler_t;

/* per item size (1, 2, 4, 8 bytes); widened at import (16 x 16 bytes; AVX2 where the CPU has it) */
#if HAVE_STREAM
#define SSE2_TILERS                                                                          \
    {                                                                                        \
        {tile_u8_sse2, 8}, {tile_u16_sse2, 8}, {tile_u32_sse2, 4}, {tile_u64_sse2, 2},      \
        {NULL, 1}, {NULL, 1}, {tile_u32_swap_sse2, 4}, {tile_u64_swap_sse2, 2},              \
    }
#else
#define SSE2_TILERS {{NULL, 1}, {NULL, 1}, {NULL, 1}, {NULL, 1}, {NULL, 1}, {NULL, 1}, {NULL, 1}, {NULL, 1}}
#endif
static tiler_t tilers[8] = SSE2_TILERS;
typedef void (*rows_tile_fn)(char *const *drow, const char *const *srow);
/* the 8 x 8 four-byte tile over rows anywhere (AVX2), or NULL */
static rows_tile_fn rows_tile_u32;
/* the narrower tiles, for a transpose too short on a side for the wide ones (a (2,1) sub-tile's
 * 4-byte pairs, 4 to a tile row, against a transposed tiling: 4 x 4 tiles, not the scalar loop) */
static const tiler_t narrow_tilers[8] = SSE2_TILERS;

/* The first block's length along an axis whose tiles start at p: up to p's next cache line
 * boundary if p starts a vector (the tiles then stay within lines), else a whole line. */
static Py_ssize_t first_block(const char *p, Py_ssize_t line, Py_ssize_t v, Py_ssize_t it)
{
    uintptr_t at = (uintptr_t)p;
    return line > v && at % (uintptr_t)(v * it) == 0 && at % 64 != 0 ? (Py_ssize_t)(64 - at % 64) / it
                                                                       : line;
}

/* Tiles over items [a0, a1) x [b0, b1) (multiples of V apart), grouped in blocks of one
 * cache line per row on both sides (so each source line is used whole while in L1, and each
 * destination line is written whole by consecutive tiles: streamed stores then combine). */
static void tile_rect(const tiler_t *t, char *d, const char *s, Py_ssize_t a0, Py_ssize_t a1,
                      Py_ssize_t b0, Py_ssize_t b1, Py_ssize_t da, Py_ssize_t sb, Py_ssize_t it, int nt)
{
    const Py_ssize_t v = t->v, line = 64 / it > v ? 64 / it : v;
    /* destination rows a multiple of 4 KiB apart share an L1 set: a block writes V of them,
     * fewer lines in flight than the set's ways (from_physical of f32[64,32,128]{0,2,1:T(8,128)}
     * measured ~15% faster; the same for source rows measured slower: there the tiles of a
     * block go down a source line's rows first, so each line is used whole at once, ~8%) */
    const Py_ssize_t la = da % 4096 ? line : v, lb = line;
    Py_ssize_t fa = first_block(s + a0 * it, la, v, it), fb = first_block(d + b0 * it, lb, v, it);
    for (Py_ssize_t a = a0, ae; a < a1; a = ae) {
        ae = a + (a == a0 ? fa : la);
        if (ae > a1) ae = a1;
        for (Py_ssize_t b = b0, be; b < b1; b = be) {
            be = b + (b == b0 ? fb : lb);
            if (be > b1) be = b1;
            if (sb % 4096) {
                for (Py_ssize_t i = a; i < ae; i += v)
                    for (Py_ssize_t j = b; j < be; j += v)
                        t->tile(d + i * da + j * it, s + i * it + j * sb, da, sb, nt);
            } else {
                for (Py_ssize_t j = b; j < be; j += v)
                    for (Py_ssize_t i = a; i < ae; i += v)
                        t->tile(d + i * da + j * it, s + i * it + j * sb, da, sb, nt);
            }
        }
    }
}

/* Where the tiles of an axis of n items start (the side contiguous along it at p): at the
 * first item whose tile row does not straddle a vector boundary (loads and stores split
 * over two cache lines measured ~35% slower), on axes of at least 16 tiles (else 0). Items
 * before it are covered by one more tile at 0, overlapping (a copy: it writes the same
 * values), which costs at most 1/16 more. */
static Py_ssize_t tile_origin(const char *p, Py_ssize_t n, Py_ssize_t v, Py_ssize_t it)
{
    Py_ssize_t h = (Py_ssize_t)((-(uintptr_t)p) & (uintptr_t)(v * it - 1)) / it;
    return h != 0 && n >= 16 * v ? h : 0;
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
    if (eb < nb) transpose_table[lg](d + eb * it, s + eb * sb, ea, nb - eb, da, sb);
    if (ea < na) transpose_table[lg](d + ea * da, s + ea * it, na - ea, nb, da, sb);
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
    if (eb < nb) transpose_table[lg](d + eb * it, s + eb * sb, ea, nb - eb, da, sb);
    if (ea < na) transpose_table[lg](d + ea * da, s + ea * it, na - ea, nb, da, sb);
}

#define TSTAGE_BYTES 32768 /* L1 staging area of the transposes */

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
                    tiles_out(t, d + g0 * dg + a0 * da + b0 * it, in, cg, ra, bw, dg, da, na * it, sb, it);
                    continue;
                }
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
 * line of each: rows a multiple of 2 KiB apart share two sets, and their lines fetched ahead
 * only evicted the lines in use (bf16[1024,3072]{0,1:T(8,128)(2,1)} 2.8/3.9 -> 3.7/5.0x a copy). */
static int rows_spread(Py_ssize_t rows, Py_ssize_t stride)
{
    Py_ssize_t a = (stride < 0 ? -stride : stride) % 4096, b = 4096;
    while (a) { Py_ssize_t t = b % a; b = a; a = t; } /* b = gcd(stride, 4096) */
    return (4096 / (b > 64 ? b : 64)) * 8 >= rows; /* distinct sets x 8 ways of the 12 */
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
 * (na = 8/G items per g), else the destination's (nb = 8/G). The last ng % G g and the edges
 * past whole tiles are left to the caller: returns the g done. */
static Py_ssize_t transpose_narrow(const plan_t *p, char *d, const char *s, Py_ssize_t ng, Py_ssize_t na,
                                   Py_ssize_t nb, Py_ssize_t dg, Py_ssize_t da, Py_ssize_t sg, Py_ssize_t sb,
                                   int src)
{
    const Py_ssize_t it = 4, w = src ? na : nb, G = 8 / w, n = (src ? nb : na) / 8 * 8;
    const Py_ssize_t piece = src ? sg : dg; /* the rows' bytes per g */
    char *drow[8];
    const char *srow[8];
    Py_ssize_t g0 = 0;
    for (; g0 + G <= ng; g0 += G) {
        if ((g0 * piece) % 64 == 0) /* the group starts a line: fetch the rows' next */
            fetch_rows(src ? s + g0 * sg + 64 : d + g0 * dg + 64, src ? nb : na, src ? sb : da, !src,
                       src ? p->slo : p->dlo, src ? p->shi : p->dhi);
        for (Py_ssize_t x = 0; x < n; x += 8) { /* x: along the other side's contiguous axis */
            for (int k = 0; k < 8; k++) {
                Py_ssize_t g = g0 + k / w, j = k % w;
                if (src) {
                    srow[k] = s + g0 * sg + (x + k) * sb;
                    drow[k] = d + g * dg + j * da + x * it;
                } else {
                    srow[k] = s + g * sg + j * sb + x * it;
                    drow[k] = d + g0 * dg + (x + k) * da;
                }
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

/* ng transposes (na x nb items) in cache (not streamed). Where either side's rows run on over g
 * in pieces of at most a line (the 128 source rows of a column-major f32 T(8,128) tile get 32
 * bytes each per g, f64's 64), the next line of every such row is fetched as a piece starts a
 * line: the prefetchers do not follow 128 streams (6 MiB f64 4.9 -> 2.1x a copy). Narrow ones
 * of 4-byte items go G g at a time. */
static void transpose_rows_ahead(const plan_t *p, char *d, const char *s, Py_ssize_t ng, Py_ssize_t na,
                                 Py_ssize_t nb, Py_ssize_t dg, Py_ssize_t da, Py_ssize_t sg, Py_ssize_t sb,
                                 int lg)
{
    const Py_ssize_t it = ITEM(lg);
    int src_rows = ng > 1 && sg == na * it && sg <= 64, dst_rows = ng > 1 && dg == nb * it && dg <= 64;
    Py_ssize_t done = 0;
    if (lg == 2 && rows_tile_u32 != NULL && src_rows && (na == 1 || na == 2 || na == 4) && nb >= 8)
        done = transpose_narrow(p, d, s, ng, na, nb, dg, da, sg, sb, 1);
    else if (lg == 2 && rows_tile_u32 != NULL && dst_rows && (nb == 1 || nb == 2 || nb == 4) && na >= 8)
        done = transpose_narrow(p, d, s, ng, na, nb, dg, da, sg, sb, 0);
    for (Py_ssize_t g = done; g < ng; g++) {
        if (src_rows && (g * sg) / 64 != (g * sg - 1) / 64) /* a piece starts a line */
            fetch_rows(s + g * sg + 64, nb, sb, 0, p->slo, p->shi);
        if (dst_rows && (g * dg) / 64 != (g * dg - 1) / 64)
            fetch_rows(d + g * dg + 64, na, da, 1, p->dlo, p->dhi);
        transpose_tiled(d + g * dg, s + g * sg, na, nb, da, sb, lg, 0);
    }
}

/* Whether a streamed transpose's source rows (sb apart) are far enough apart to go tile by
 * tile with streamed stores rather than in strips: 2- and 4-byte items 64 KiB or more apart (the
 * rows of a permuted rank-3 array). Measured (quiet machine, to_physical, ratio to a copy, strips
 * -> tiles): f32[256,64,512]{0,2,1:T(8,128)} 1.60 -> 1.12, f32[512,64,256] 1.17 -> 1.05,
 * bf16[256,64,1024] 1.72 -> 1.50; nearer rows and other item sizes measured slower tile by tile:
 * f32[4096,4096]{0,1} (16 KiB) 1.18 -> 1.40, f32[2048,64,64] (16 KiB) 0.98 -> 1.04,
 * bf16[1024,64,256] (32 KiB) 1.27 -> 1.34, f64[256,64,256] (128 KiB) 1.11 -> 1.41,
 * s8[256,64,2048] (128 KiB) 1.44 -> 2.63. */
#define FAR_ROWS_BYTES 65536
static int far_rows(Py_ssize_t sb, int lg)
{
    return (lg == 1 || lg == 2) && (sb >= FAR_ROWS_BYTES || sb <= -FAR_ROWS_BYTES);
}

/* dst[g*dg + a*da + b*it] = src[g*sg + a*it + b*sb] for g < ng, a < na, b < nb, streamed:
 * where the source rows run on over g (sg = na*it, or ng = 1) in strips along the
 * destination's lines; else tile by tile (staging the other case, destination rows that
 * run on over g, through L1 in windows measured no faster here). */
static void transpose_streamed(const plan_t *p, char *d, const char *s, Py_ssize_t ng, Py_ssize_t na,
                               Py_ssize_t nb, Py_ssize_t dg, Py_ssize_t da, Py_ssize_t sg, Py_ssize_t sb,
                               int lg)
{
    const Py_ssize_t it = ITEM(lg);
    int nt = 0;
    if (far_rows(sb, lg)) /* tile by tile, streamed where every store is 16-byte aligned */
        nt = ((uintptr_t)d & 15) == 0 && da % 16 == 0 && dg % 16 == 0;
    else if (ng == 1 || sg == na * it) {
        strips_src_run(d, s, ng, na, nb, dg, da, sb, lg);
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
    }
#endif
    choose_weaves();
}
