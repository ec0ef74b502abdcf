/* The relayout copy kernel: one strided N-d copy, outer loops in the order given.
 *
 * copy(dst, src, tasks, stream) copies strided boxes of the array src into the array dst
 * (both exported through the buffer protocol); each task gives byte offsets, a shape and
 * both sides' byte strides, and is checked to lie inside both arrays. The caller puts the
 * axes in loop order, outermost first, and makes sure the arrays do not overlap. The
 * innermost one or two axes pick a specialised loop:
 *
 *   run          last axis contiguous on both sides: one memcpy per run (fixed-size
 *                copies for 4..64-byte runs, which the compiler turns into vector moves);
 *   interleave   last axis of M = 2, 4 or 8 items contiguous in dst, the axis before it
 *                contiguous in src and M items apart in dst: dst[k*M + b] = src_b[k]
 *                (the (2,1)/(4,1)/(8,1) sub-tiles of XLA TPU layouts), vectorised;
 *   deinterleave the same with src and dst swapped;
 *   transpose    last axis contiguous in dst, the axis before it contiguous in src (a
 *                transposing layout: a column-major tile, a permuted rank-3 array), and
 *                the axis before those when either side's rows run on over it: vector
 *                tiles (SSE2; AVX2 where the CPU has it, chosen at import) in blocks of
 *                one cache line per row; large copies whose source rows run on go in
 *                strips of destination lines through an L1 stage, streamed out;
 *   strided      anything else: a typed loop over the last axis.
 *
 * A task may declare its items swapped units: 2 x 2 blocks of the arrays' 1- or 2-byte
 * items, moved whole and written as [a, c, b, d] (a (2,1) sub-tile read as its transpose's;
 * relayout between the two in one pass). Their transposes run the same tiles with the
 * middle items exchanged in registers.
 *
 * Large (streamed) copies whose destination rows run on over an outer axis in pieces
 * shorter than a line (reading a transposing tile or a zN fractal into logical rows) are
 * gathered: those loops fill an L1 stage a few pieces per row at a time, the source read
 * ahead, and whole destination lines go out past the cache (see "gathering" below).
 * Large copies of 16- to 48-byte runs into contiguous blocks from source rows that run on
 * (zN into its buffer) read a few runs of each row at once into L1 blocks streamed out
 * whole (see "staged short runs").
 *
 * The GIL is released while copying, so callers may split a copy among threads.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#define HAVE_STREAM 1
#else
#define HAVE_STREAM 0
#endif
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define HAVE_AVX2_DISPATCH 1 /* AVX2 tiles compiled with a target attribute, used if the CPU has it */
#else
#define HAVE_AVX2_DISPATCH 0
#endif

#define MAX_DIMS 32
#define STAGE_BYTES 4096 /* L1 staging area of the streaming weave loops */

/* Copy `bytes` to d with non-temporal stores when d is 16-byte aligned (large copies: the
 * destination bypasses the cache instead of being read first, as memcpy does for big
 * blocks); a plain memcpy otherwise. */
static void stream_out(char *d, const char *s, size_t bytes)
{
#if HAVE_STREAM
    if (((uintptr_t)d & 15) == 0) {
        size_t i = 0;
        for (; i + 16 <= bytes; i += 16)
            _mm_stream_si128((__m128i *)(d + i), _mm_loadu_si128((const __m128i *)(s + i)));
        if (i < bytes) memcpy(d + i, s + i, bytes - i);
        return;
    }
#endif
    memcpy(d, s, bytes);
}

typedef struct {
    char *dst;
    const char *src;
    int ndim;
    int stream;           /* use non-temporal stores where the destination is contiguous */
    int swap;             /* items are 2 x 2 blocks of the arrays' items, moved as [a, c, b, d] */
    const char *slo, *shi; /* the source bytes the task may touch (prefetches stay inside) */
    Py_ssize_t item;
    Py_ssize_t shape[MAX_DIMS];
    Py_ssize_t ds[MAX_DIMS];
    Py_ssize_t ss[MAX_DIMS];
} plan_t;

/* ---- innermost loops ---------------------------------------------------------------- */

#define RUN_FIXED(BYTES)                                                                     \
    static void run_##BYTES(char *d, const char *s, Py_ssize_t n, Py_ssize_t ds, Py_ssize_t ss) \
    {                                                                                        \
        for (Py_ssize_t i = 0; i < n; i++) memcpy(d + i * ds, s + i * ss, BYTES);            \
    }
RUN_FIXED(4)
RUN_FIXED(8)
RUN_FIXED(16)
RUN_FIXED(32)
RUN_FIXED(64)

#define STRIDED(T)                                                                           \
    static void strided_##T(char *d, const char *s, Py_ssize_t n, Py_ssize_t ds, Py_ssize_t ss) \
    {                                                                                        \
        for (Py_ssize_t i = 0; i < n; i++) *(T *)(d + i * ds) = *(const T *)(s + i * ss);    \
    }
STRIDED(uint8_t)
STRIDED(uint16_t)
STRIDED(uint32_t)
STRIDED(uint64_t)

/* dst[k*M + b] = *(src + b*sb + k): M rows of n items each, woven into one stream. */
#define WEAVE(T, M)                                                                          \
    static void weave_##T##_##M(char *d, const char *s, Py_ssize_t n, Py_ssize_t sb)         \
    {                                                                                        \
        T *restrict out = (T *)d;                                                            \
        const T *rows[M];                                                                    \
        for (int b = 0; b < M; b++) rows[b] = (const T *)(s + b * sb);                       \
        for (Py_ssize_t k = 0; k < n; k++)                                                   \
            for (int b = 0; b < M; b++) out[k * M + b] = rows[b][k];                         \
    }
/* *(dst + b*db + k) = src[k*M + b]: one stream split into M rows. */
#define UNWEAVE(T, M)                                                                        \
    static void unweave_##T##_##M(char *d, const char *s, Py_ssize_t n, Py_ssize_t db)       \
    {                                                                                        \
        const T *restrict in = (const T *)s;                                                 \
        T *rows[M];                                                                          \
        for (int b = 0; b < M; b++) rows[b] = (T *)(d + b * db);                             \
        for (Py_ssize_t k = 0; k < n; k++)                                                   \
            for (int b = 0; b < M; b++) rows[b][k] = in[k * M + b];                          \
    }
#define WEAVES(T) WEAVE(T, 2) WEAVE(T, 4) WEAVE(T, 8) UNWEAVE(T, 2) UNWEAVE(T, 4) UNWEAVE(T, 8)
WEAVES(uint8_t)
WEAVES(uint16_t)
WEAVES(uint32_t)
WEAVES(uint64_t)

/* dst[i*da + j] = src[i + j*sb] over na x nb items (item units for the contiguous sides,
 * bytes for the strides da and sb), in TB x TB blocks: the scalar loop, for the edges the
 * vector tiles below leave and for machines without SSE2. Inside a block the inner loop runs
 * along the side whose other stride is the smaller, so the far-apart rows (a different page
 * each) are visited once per block rather than once per item. */
#define TB 16
#define TRANSPOSE(T)                                                                         \
    static void transpose_##T(char *d, const char *s, Py_ssize_t na, Py_ssize_t nb,          \
                              Py_ssize_t da, Py_ssize_t sb)                                  \
    {                                                                                        \
        const Py_ssize_t it = (Py_ssize_t)sizeof(T);                                         \
        for (Py_ssize_t i0 = 0; i0 < na; i0 += TB) {                                         \
            Py_ssize_t i1 = i0 + TB < na ? i0 + TB : na;                                     \
            for (Py_ssize_t j0 = 0; j0 < nb; j0 += TB) {                                     \
                Py_ssize_t j1 = j0 + TB < nb ? j0 + TB : nb;                                 \
                if (sb <= da) {                                                              \
                    for (Py_ssize_t i = i0; i < i1; i++) {                                   \
                        T *restrict out = (T *)(d + i * da);                                 \
                        const char *in = s + i * it;                                         \
                        for (Py_ssize_t j = j0; j < j1; j++) out[j] = *(const T *)(in + j * sb); \
                    }                                                                        \
                } else {                                                                     \
                    for (Py_ssize_t j = j0; j < j1; j++) {                                   \
                        const T *restrict in = (const T *)(s + j * sb);                      \
                        char *out = d + j * it;                                              \
                        for (Py_ssize_t i = i0; i < i1; i++) *(T *)(out + i * da) = in[i];   \
                    }                                                                        \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
    }
TRANSPOSE(uint8_t)
TRANSPOSE(uint16_t)
TRANSPOSE(uint32_t)
TRANSPOSE(uint64_t)

typedef void (*transpose_fn)(char *, const char *, Py_ssize_t, Py_ssize_t, Py_ssize_t, Py_ssize_t);
/* ---- swapped units ----------------------------------------------------------------------
 * A unit is a 2 x 2 block [a, b, c, d] of 1- or 2-byte items (4 or 8 bytes), moved as
 * [a, c, b, d]: the (2,1) sub-tiles of one tiling read as those of its transpose. The unit
 * variants of the loops are indexed by lg + SWAPPED (lg: log2 of the unit's bytes); their
 * scalar loops load and store through memcpy (units are only item-aligned). */
#define SWAPPED 4
#define ITEM(lg) ((Py_ssize_t)1 << ((lg) & 3))

static inline uint32_t swap_u32(uint32_t x)
{
    return (x & 0xFF0000FFu) | ((x & 0x0000FF00u) << 8) | ((x & 0x00FF0000u) >> 8);
}

static inline uint64_t swap_u64(uint64_t x)
{
    return (x & 0xFFFF00000000FFFFull) | ((x & 0x00000000FFFF0000ull) << 16)
           | ((x & 0x0000FFFF00000000ull) >> 16);
}

#define SWAP_LOOPS(T, FIX)                                                                   \
    static void strided_swap_##T(char *d, const char *s, Py_ssize_t n, Py_ssize_t ds, Py_ssize_t ss) \
    {                                                                                        \
        for (Py_ssize_t i = 0; i < n; i++) {                                                 \
            T v;                                                                             \
            memcpy(&v, s + i * ss, sizeof v);                                                \
            v = FIX(v);                                                                      \
            memcpy(d + i * ds, &v, sizeof v);                                                \
        }                                                                                    \
    }                                                                                        \
    static void transpose_swap_##T(char *d, const char *s, Py_ssize_t na, Py_ssize_t nb,     \
                                   Py_ssize_t da, Py_ssize_t sb)                             \
    {                                                                                        \
        for (Py_ssize_t i0 = 0; i0 < na; i0 += TB) {                                         \
            Py_ssize_t i1 = i0 + TB < na ? i0 + TB : na;                                     \
            for (Py_ssize_t j0 = 0; j0 < nb; j0 += TB) {                                     \
                Py_ssize_t j1 = j0 + TB < nb ? j0 + TB : nb;                                 \
                for (Py_ssize_t i = i0; i < i1; i++)                                         \
                    strided_swap_##T(d + i * da + j0 * (Py_ssize_t)sizeof(T),                \
                                     s + i * (Py_ssize_t)sizeof(T) + j0 * sb, j1 - j0,        \
                                     (Py_ssize_t)sizeof(T), sb);                             \
            }                                                                                \
        }                                                                                    \
    }
SWAP_LOOPS(uint32_t, swap_u32)
SWAP_LOOPS(uint64_t, swap_u64)

static transpose_fn transpose_table[8] = {transpose_uint8_t, transpose_uint16_t, transpose_uint32_t,
                                          transpose_uint64_t, NULL, NULL, transpose_swap_uint32_t,
                                          transpose_swap_uint64_t};

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

__attribute__((target("avx2"))) static inline __attribute__((always_inline)) void
tile_u32_avx2_body(char *d, const char *s, Py_ssize_t da, Py_ssize_t sb, int nt, int swap)
{ /* 8 x 8 four-byte items: unpack, shuffle, then swap 128-bit halves */
    __m256 r[8], t[8], u[8];
    for (int b = 0; b < 8; b++) r[b] = _mm256_loadu_ps((const float *)(s + b * sb));
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
        __m256 lo = _mm256_permute2f128_ps(u[k], u[k + 4], 0x20);
        __m256 hi = _mm256_permute2f128_ps(u[k], u[k + 4], 0x31);
        st256(d + k * da, fix256(_mm256_castps_si256(lo), swap), nt);
        st256(d + (k + 4) * da, fix256(_mm256_castps_si256(hi), swap), nt);
    }
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

/* per item size (1, 2, 4, 8 bytes); upgraded at import where the CPU has AVX2 */
static tiler_t tilers[8] = {
#if HAVE_STREAM
    {tile_u8_sse2, 8}, {tile_u16_sse2, 8}, {tile_u32_sse2, 4}, {tile_u64_sse2, 2},
    {NULL, 1}, {NULL, 1}, {tile_u32_swap_sse2, 4}, {tile_u64_swap_sse2, 2},
#else
    {NULL, 1}, {NULL, 1}, {NULL, 1}, {NULL, 1}, {NULL, 1}, {NULL, 1}, {NULL, 1}, {NULL, 1},
#endif
};

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
                if (nt && eb == bw && ea == ra) { /* whole tiles: streamed straight out */
                    tiles_out(t, d + g0 * dg + a0 * da + b0 * it, in, cg, ra, bw, dg, da, na * it, sb, it);
                    continue;
                }
                for (Py_ssize_t bt = 0; bt < eb; bt += v)
                    for (Py_ssize_t g = 0; g < cg; g++)
                        for (Py_ssize_t at = 0; at < ea; at += v)
                            t->tile(stage + (g * ra + at) * 64 + bt * it, in + (g * na + at) * it + bt * sb,
                                    64, sb, 0);
                for (Py_ssize_t g = 0; g < cg; g++) { /* the edges the tiles leave */
                    char *st = stage + g * ra * 64;
                    const char *sr = in + g * na * it;
                    transpose_table[lg](st + eb * it, sr + eb * sb, ra, bw - eb, 64, sb);
                    transpose_table[lg](st + ea * 64, sr + ea * it, ra - ea, eb, 64, sb);
                }
                for (Py_ssize_t g = 0; g < cg; g++)
                    flush_rows(d + (g0 + g) * dg + a0 * da + b0 * it, da, stage + g * ra * 64, ra,
                               (size_t)(bw * it), nt);
            }
        }
    }
}

/* dst[g*dg + a*da + b*it] = src[g*sg + a*it + b*sb] for g < ng, a < na, b < nb, streamed:
 * where the source rows run on over g (sg = na*it, or ng = 1) in strips along the
 * destination's lines; else tile by tile (staging the other case, destination rows that
 * run on over g, through L1 in windows measured no faster here). */
static void transpose_streamed(char *d, const char *s, Py_ssize_t ng, Py_ssize_t na, Py_ssize_t nb,
                               Py_ssize_t dg, Py_ssize_t da, Py_ssize_t sg, Py_ssize_t sb, int lg)
{
    const Py_ssize_t it = ITEM(lg);
    if (ng == 1 || sg == na * it) {
        strips_src_run(d, s, ng, na, nb, dg, da, sb, lg);
    } else {
        for (Py_ssize_t g = 0; g < ng; g++)
            transpose_tiled(d + g * dg, s + g * sg, na, nb, da, sb, lg, 0);
    }
}

static void choose_weaves(void);

/* Pick the widest tiles (and weaves) this CPU runs (called once at import). */
static void choose_tilers(void)
{
#if HAVE_AVX2_DISPATCH
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) {
        tilers[2] = (tiler_t){tile_u32_avx2, 8};
        tilers[3] = (tiler_t){tile_u64_avx2, 4};
        tilers[2 + SWAPPED] = (tiler_t){tile_u32_swap_avx2, 8};
        tilers[3 + SWAPPED] = (tiler_t){tile_u64_swap_avx2, 4};
    }
#endif
    choose_weaves();
}

typedef void (*line_fn)(char *, const char *, Py_ssize_t, Py_ssize_t, Py_ssize_t);
typedef void (*weave_fn)(char *, const char *, Py_ssize_t, Py_ssize_t);

static int log2_small(Py_ssize_t x)
{
    switch (x) {
    case 1: return 0;
    case 2: return 1;
    case 4: return 2;
    case 8: return 3;
    default: return -1;
    }
}

static weave_fn weave_table[4][3] = {
    {weave_uint8_t_2, weave_uint8_t_4, weave_uint8_t_8},
    {weave_uint16_t_2, weave_uint16_t_4, weave_uint16_t_8},
    {weave_uint32_t_2, weave_uint32_t_4, weave_uint32_t_8},
    {weave_uint64_t_2, weave_uint64_t_4, weave_uint64_t_8},
};
static weave_fn unweave_table[4][3] = {
    {unweave_uint8_t_2, unweave_uint8_t_4, unweave_uint8_t_8},
    {unweave_uint16_t_2, unweave_uint16_t_4, unweave_uint16_t_8},
    {unweave_uint32_t_2, unweave_uint32_t_4, unweave_uint32_t_8},
    {unweave_uint64_t_2, unweave_uint64_t_4, unweave_uint64_t_8},
};
#if HAVE_AVX2_DISPATCH
/* weave_uint16_t_2 in 32-byte vectors: 16 items of each row per round (the compiler's SSE2
 * loop for 2-byte pairs measured compute-bound, below the copy's speed in L3) */
__attribute__((target("avx2"))) static void weave_u16_2_avx2(char *d, const char *s, Py_ssize_t n,
                                                             Py_ssize_t sb)
{
    Py_ssize_t k = 0;
    for (; k + 16 <= n; k += 16) { /* quads [0 2 1 3] of each row: in-lane unpacks then run on */
        __m256i r0 = _mm256_permute4x64_epi64(_mm256_loadu_si256((const __m256i *)(s + 2 * k)), 0xD8);
        __m256i r1 = _mm256_permute4x64_epi64(_mm256_loadu_si256((const __m256i *)(s + sb + 2 * k)), 0xD8);
        _mm256_storeu_si256((__m256i *)(d + 4 * k), _mm256_unpacklo_epi16(r0, r1));
        _mm256_storeu_si256((__m256i *)(d + 4 * k + 32), _mm256_unpackhi_epi16(r0, r1));
    }
    if (k < n) weave_uint16_t_2(d + 4 * k, s + 2 * k, n - k, sb);
}

/* unweave_uint16_t_2 in 32-byte vectors: 16 pairs per round */
__attribute__((target("avx2"))) static void unweave_u16_2_avx2(char *d, const char *s, Py_ssize_t n,
                                                               Py_ssize_t db)
{
    const __m256i split = _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15,
                                           0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15);
    Py_ssize_t k = 0;
    for (; k + 16 <= n; k += 16) { /* per lane [evens odds], quads to [evens | odds] */
        __m256i a = _mm256_loadu_si256((const __m256i *)(s + 4 * k));
        __m256i b = _mm256_loadu_si256((const __m256i *)(s + 4 * k + 32));
        a = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(a, split), 0xD8);
        b = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(b, split), 0xD8);
        _mm256_storeu_si256((__m256i *)(d + 2 * k), _mm256_permute2x128_si256(a, b, 0x20));
        _mm256_storeu_si256((__m256i *)(d + db + 2 * k), _mm256_permute2x128_si256(a, b, 0x31));
    }
    if (k < n) unweave_uint16_t_2(d + 2 * k, s + 4 * k, n - k, db);
}

/* Two rows of 32 bytes as in-order 2-byte pairs: lo = pairs 0..15, hi = pairs 16..31 (quads
 * [0 2 1 3] first, so that the in-lane unpacks run on across the lanes) */
__attribute__((target("avx2"))) static inline void pair_u8(__m256i r0, __m256i r1, __m256i *lo,
                                                           __m256i *hi)
{
    r0 = _mm256_permute4x64_epi64(r0, 0xD8);
    r1 = _mm256_permute4x64_epi64(r1, 0xD8);
    *lo = _mm256_unpacklo_epi8(r0, r1);
    *hi = _mm256_unpackhi_epi8(r0, r1);
}

/* weave_uint8_t_4 in 32-byte vectors (the TPU's (4,1) sub-tile of bytes: pred, s8): 32 items
 * of each row per round, paired bytewise (rows 0,1 and 2,3), then the pairs paired */
__attribute__((target("avx2"))) static void weave_u8_4_avx2(char *d, const char *s, Py_ssize_t n,
                                                            Py_ssize_t sb)
{
    Py_ssize_t k = 0;
    for (; k + 32 <= n; k += 32) {
        __m256i a[2], b[2];
        pair_u8(_mm256_loadu_si256((const __m256i *)(s + k)),
                _mm256_loadu_si256((const __m256i *)(s + sb + k)), &a[0], &a[1]);
        pair_u8(_mm256_loadu_si256((const __m256i *)(s + 2 * sb + k)),
                _mm256_loadu_si256((const __m256i *)(s + 3 * sb + k)), &b[0], &b[1]);
        for (int h = 0; h < 2; h++) { /* pairs 16h..16h+15 of both: quads, in order */
            __m256i x = _mm256_permute4x64_epi64(a[h], 0xD8), y = _mm256_permute4x64_epi64(b[h], 0xD8);
            _mm256_storeu_si256((__m256i *)(d + 4 * k + 64 * h), _mm256_unpacklo_epi16(x, y));
            _mm256_storeu_si256((__m256i *)(d + 4 * k + 64 * h + 32), _mm256_unpackhi_epi16(x, y));
        }
    }
    if (k < n) weave_uint8_t_4(d + 4 * k, s + k, n - k, sb);
}

/* unweave_uint8_t_4 in 32-byte vectors: 32 quads per round. Each vector's quads are sorted in
 * lane into one dword per row, the dwords gathered into one qword per row, and the four
 * vectors' qwords transposed into the rows. */
__attribute__((target("avx2"))) static void unweave_u8_4_avx2(char *d, const char *s, Py_ssize_t n,
                                                              Py_ssize_t db)
{
    const __m256i split = _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15,
                                           0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    const __m256i gather = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    Py_ssize_t k = 0;
    for (; k + 32 <= n; k += 32) {
        __m256i w[4];
        for (int v = 0; v < 4; v++) /* qword j: row j's 8 items of this vector */
            w[v] = _mm256_permutevar8x32_epi32(
                _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(s + 4 * k + 32 * v)), split),
                gather);
        __m256i lo01 = _mm256_unpacklo_epi64(w[0], w[1]), hi01 = _mm256_unpackhi_epi64(w[0], w[1]);
        __m256i lo23 = _mm256_unpacklo_epi64(w[2], w[3]), hi23 = _mm256_unpackhi_epi64(w[2], w[3]);
        _mm256_storeu_si256((__m256i *)(d + k), _mm256_permute2x128_si256(lo01, lo23, 0x20));
        _mm256_storeu_si256((__m256i *)(d + db + k), _mm256_permute2x128_si256(hi01, hi23, 0x20));
        _mm256_storeu_si256((__m256i *)(d + 2 * db + k), _mm256_permute2x128_si256(lo01, lo23, 0x31));
        _mm256_storeu_si256((__m256i *)(d + 3 * db + k), _mm256_permute2x128_si256(hi01, hi23, 0x31));
    }
    if (k < n) unweave_uint8_t_4(d + k, s + 4 * k, n - k, db);
}
#endif

/* The AVX2 weaves where the CPU has them (from choose_tilers). */
static void choose_weaves(void)
{
#if HAVE_AVX2_DISPATCH
    if (__builtin_cpu_supports("avx2")) {
        weave_table[1][0] = weave_u16_2_avx2;
        unweave_table[1][0] = unweave_u16_2_avx2;
        weave_table[0][1] = weave_u8_4_avx2;
        unweave_table[0][1] = unweave_u8_4_avx2;
    }
#endif
}

static line_fn strided_table[4] = {strided_uint8_t, strided_uint16_t, strided_uint32_t,
                                   strided_uint64_t};
static void run_any(char *d, const char *s, Py_ssize_t n, Py_ssize_t ds, Py_ssize_t ss,
                    Py_ssize_t bytes)
{
    for (Py_ssize_t i = 0; i < n; i++) memcpy(d + i * ds, s + i * ss, (size_t)bytes);
}

/* ---- the outer loops ---------------------------------------------------------------- */

typedef enum { K_RUN, K_WEAVE, K_UNWEAVE, K_TRANSPOSE, K_STRIDED } kind_t;

typedef struct {
    kind_t kind;
    int inner;            /* axes handled by the inner loop: 1 or 2 */
    Py_ssize_t bytes;     /* K_RUN: bytes per run */
    line_fn line;         /* K_RUN (fixed size) or K_STRIDED */
    weave_fn weave;       /* K_WEAVE / K_UNWEAVE */
    int lg;               /* K_TRANSPOSE: log2 of the item size */
} inner_t;

/* Whether the innermost axes are a transpose (see K_TRANSPOSE); sets *in if so. */
static int transposing(const plan_t *p, inner_t *in, int lg)
{
    int last = p->ndim - 1;
    Py_ssize_t item = p->item, n = p->shape[last];
    if (last < 1 || p->ds[last] != item || p->ss[last - 1] != item) return 0;
    in->kind = K_TRANSPOSE;
    in->inner = 2;
    if (last >= 2 && p->shape[last - 2] > 1
        && (p->ds[last - 2] == n * item || p->ss[last - 2] == p->shape[last - 1] * item))
        in->inner = 3; /* the destination's or the source's rows run on over the axis before */
    in->lg = lg;
    return 1;
}

/* Swapped units: a transpose, else unit by unit. */
static inner_t choose_swapped(const plan_t *p)
{
    inner_t in = {K_STRIDED, 1, 0, NULL, NULL, 0};
    in.line = p->item == 4 ? strided_swap_uint32_t : strided_swap_uint64_t;
    transposing(p, &in, log2_small(p->item) + SWAPPED);
    return in;
}

static inner_t choose_inner(const plan_t *p)
{
    if (p->swap) return choose_swapped(p);
    inner_t in = {K_STRIDED, 1, 0, NULL, NULL, 0};
    int last = p->ndim - 1;
    Py_ssize_t item = p->item;
    int lg = log2_small(item);
    Py_ssize_t n = p->shape[last];
    if (p->ds[last] == item && p->ss[last] == item) {
        in.kind = K_RUN;
        in.bytes = n * item;
        switch (in.bytes) {
        case 4: in.line = run_4; break;
        case 8: in.line = run_8; break;
        case 16: in.line = run_16; break;
        case 32: in.line = run_32; break;
        case 64: in.line = run_64; break;
        default: in.line = NULL;
        }
        return in;
    }
    int m = log2_small(n);
    if (lg >= 0 && m >= 1 && last >= 1) {
        int prev = last - 1;
        if (p->ds[last] == item && p->ss[prev] == item && p->ds[prev] == n * item) {
            in.kind = K_WEAVE;
            in.inner = 2;
            in.weave = weave_table[lg][m - 1];
            return in;
        }
        if (p->ss[last] == item && p->ds[prev] == item && p->ss[prev] == n * item) {
            in.kind = K_UNWEAVE;
            in.inner = 2;
            in.weave = unweave_table[lg][m - 1];
            return in;
        }
    }
    if (lg >= 0 && transposing(p, &in, lg)) return in;
    if (lg >= 0) {
        in.line = strided_table[lg];
    }
    return in;
}

/* The weave loop through an L1 staging area, streamed out in pieces of STAGE_BYTES. */
static void weave_streamed(const plan_t *p, const inner_t *in, char *d, const char *s, Py_ssize_t n)
{
    int last = p->ndim - 1;
    Py_ssize_t m = p->shape[last], item = p->item;
    Py_ssize_t chunk = STAGE_BYTES / (m * item);
    _Alignas(64) char stage[STAGE_BYTES];
    for (Py_ssize_t k = 0; k < n; k += chunk) {
        Py_ssize_t c = n - k < chunk ? n - k : chunk;
        in->weave(stage, s + k * item, c, p->ss[last]);
        stream_out(d + k * m * item, stage, (size_t)(c * m * item));
    }
}

/* The loop nest over `shape`: outer axes in order, the inner loop last. */
/* The next index of the first n axes (the last fastest), d and s moved along; 0 past the end. */
static inline int next_index(Py_ssize_t *idx, int n, const Py_ssize_t *shape, const Py_ssize_t *ds,
                             const Py_ssize_t *ss, char **d, const char **s)
{
    for (int k = n - 1; k >= 0; k--) {
        if (++idx[k] < shape[k]) {
            *d += ds[k];
            *s += ss[k];
            return 1;
        }
        *d -= (shape[k] - 1) * ds[k];
        *s -= (shape[k] - 1) * ss[k];
        idx[k] = 0;
    }
    return 0;
}

/* The source of the inner loop READ_AHEAD bytes ahead along the innermost outer axis (the
 * hardware prefetchers, measured, leave the loads of an unweave waiting on memory): `rows`
 * contiguous pieces of `bytes`, `stride` apart (one piece, for an unweave). */
#define READ_AHEAD 4096

typedef struct {
    Py_ssize_t ahead, rows, bytes, stride; /* ahead 0: none */
} readahead_t;

static readahead_t readahead(const plan_t *p, const inner_t *in, int outer, const Py_ssize_t *shape)
{
    readahead_t ra = {0, 0, 0, 0};
    int last = p->ndim - 1;
    Py_ssize_t step = outer > 0 ? p->ss[outer - 1] : 0;
    if (step <= 0 || last < 1) return ra;
    if (in->kind == K_UNWEAVE) { /* one piece: n*M items */
        ra.rows = 1;
        ra.bytes = shape[last - 1] * shape[last] * p->item;
    } else { /* (short runs read ahead measured slower: zN to its buffer) */
        return ra;
    }
    ra.ahead = step * (step < READ_AHEAD ? READ_AHEAD / step : 1);
    return ra;
}

static inline void read_ahead(const plan_t *p, const readahead_t *ra, const char *s)
{
#if HAVE_STREAM
    for (Py_ssize_t r = 0; r < ra->rows; r++) {
        const char *a = s + ra->ahead + r * ra->stride;
        for (Py_ssize_t x = 0; x < ra->bytes; x += 64)
            if (a + x >= p->slo && a + x < p->shi) _mm_prefetch(a + x, _MM_HINT_T0);
    }
#else
    (void)p, (void)ra, (void)s;
#endif
}

static void copy_nest(const plan_t *p, const inner_t *in, int outer, char *d, const char *s,
                      const Py_ssize_t *shape)
{
    int last = p->ndim - 1;
    Py_ssize_t idx[MAX_DIMS]; /* the outer ones zeroed: a whole-array memset per call measured slow */
    memset(idx, 0, sizeof idx[0] * (size_t)(outer > 0 ? outer : 0));
    readahead_t ra = readahead(p, in, outer, shape);
    for (;;) {
        if (ra.ahead) read_ahead(p, &ra, s);
        switch (in->kind) {
        case K_RUN:
            if (last == 0 && p->stream)
                stream_out(d, s, (size_t)in->bytes);
            else if (last == 0)
                memcpy(d, s, (size_t)in->bytes);
            else if (p->stream && (p->ds[last - 1] == in->bytes || in->bytes >= 64))
                for (Py_ssize_t i = 0; i < shape[last - 1]; i++)
                    stream_out(d + i * p->ds[last - 1], s + i * p->ss[last - 1], (size_t)in->bytes);
            else if (in->line != NULL)
                in->line(d, s, shape[last - 1], p->ds[last - 1], p->ss[last - 1]);
            else
                run_any(d, s, shape[last - 1], p->ds[last - 1], p->ss[last - 1], in->bytes);
            break;
        case K_WEAVE:
            if (p->stream)
                weave_streamed(p, in, d, s, shape[last - 1]);
            else
                in->weave(d, s, shape[last - 1], p->ss[last]);
            break;
        case K_TRANSPOSE:
        {
            int three = in->inner == 3;
            Py_ssize_t ng = three ? shape[last - 2] : 1, sg = three ? p->ss[last - 2] : 0;
            Py_ssize_t dg = three ? p->ds[last - 2] : 0;
            Py_ssize_t na = shape[last - 1], nb = shape[last], da = p->ds[last - 1], sb = p->ss[last];
            if (p->stream)
                transpose_streamed(d, s, ng, na, nb, dg, da, sg, sb, in->lg);
            else
                for (Py_ssize_t g = 0; g < ng; g++)
                    transpose_tiled(d + g * dg, s + g * sg, na, nb, da, sb, in->lg, 0);
        }
            break;
        case K_UNWEAVE: /* M short row pieces: streaming them measured slower */
            in->weave(d, s, shape[last - 1], p->ds[last]);
            break;
        case K_STRIDED:
            if (in->line != NULL) {
                in->line(d, s, shape[last], p->ds[last], p->ss[last]);
            } else {
                for (Py_ssize_t i = 0; i < shape[last]; i++)
                    memcpy(d + i * p->ds[last], s + i * p->ss[last], (size_t)p->item);
            }
            break;
        }
        if (!next_index(idx, outer, shape, p->ds, p->ss, &d, &s)) return;
    }
}

/* The plan's loop nest as it stands (no gathering). */
static void run_plan(const plan_t *p)
{
    inner_t in = choose_inner(p);
    if (in.kind == K_RUN && p->ndim >= 2) in.inner = 2; /* a run loop covers the axis before it */
    copy_nest(p, &in, p->ndim - in.inner, p->dst, p->src, p->shape);
}

static int span(int ndim, const Py_ssize_t *shape, const Py_ssize_t *strides, Py_ssize_t item,
                Py_ssize_t *lo, Py_ssize_t *hi);

/* ---- gathering destination lines ---------------------------------------------------------
 * A large copy whose destination rows run on over an outer axis g in pieces of P bytes (a
 * transposing tile's 8 items, a zN fractal's 16, a sub-tile's 128 columns) writes each
 * destination line in several visits, and its rows (far apart, often a power of two apart)
 * evict each other from the caches in between. Gathered, the axes inside g run for k
 * consecutive g at a time into an L1 stage of R rows (one per destination row) and the
 * rows go out as whole lines past the cache; the bytes of a row's last, unfinished line
 * stay in the stage for the next k. The axes inside g must write, per row, exactly the P
 * bytes from g's offset (the piece axes, dense) at offsets that are multiples of 64 apart
 * (the row axes), so that all rows share one line alignment. */

#define GATHER_ROWS 128      /* rows a stage holds, at most; more are cut in blocks of ... */
#define GATHER_BLOCK 64      /* ... this many (measured: zN's 256 rows best in 64, f32 tiles' 128 whole) */
#define GSTAGE_ROW 256       /* stage bytes per row, at most (more measured slower) */
#define GSTAGE_BYTES 131072  /* stage bytes in all, at most (allocated per call) */
#define PREFETCH_SPAN 16384  /* the source block of a g is prefetched if it spans this at most */
#define PREFETCH_AHEAD 2     /* ... this many g ahead */

typedef struct {
    int g;                        /* the gathered axis */
    Py_ssize_t slo, shi;          /* the source bytes one g of the axes after it spans */
    Py_ssize_t piece;             /* P */
    int nrow;                     /* row axes, in loop order */
    int row[MAX_DIMS];
    Py_ssize_t rows;              /* R */
    Py_ssize_t k, pitch;          /* g per stage, stage bytes per row */
} gather_t;

/* Whether the axes after g write dense P-byte pieces of 64-byte-aligned rows; fills *gt. */
static int gather_axes(const plan_t *p, int g, gather_t *gt)
{
    Py_ssize_t P = p->ds[g], want = p->item, rows = 1;
    int piece[MAX_DIMS], np = 0;
    gt->nrow = 0;
    for (int j = g + 1; j < p->ndim; j++) {
        if (p->shape[j] == 1) continue; /* no offsets */
        if (p->ds[j] <= 0) return 0;
        if (p->ds[j] < P) piece[np++] = j;
        else if (p->ds[j] % 64) return 0;
        else {
            gt->row[gt->nrow++] = j;
            rows *= p->shape[j];
        }
    }
    while (np > 0) { /* the piece axes, smallest stride first, tile [0, P) */
        int hit = -1;
        for (int i = 0; i < np; i++)
            if (p->ds[piece[i]] == want) hit = i;
        if (hit < 0) return 0;
        want *= p->shape[piece[hit]];
        piece[hit] = piece[--np];
    }
    if (want != P || rows < 1) return 0;
    Py_ssize_t it = p->item;
    if (span(p->ndim - g - 1, p->shape + g + 1, p->ss + g + 1, it, &gt->slo, &gt->shi) < 0) return 0;
    gt->g = g;
    gt->piece = P;
    gt->rows = rows;
    Py_ssize_t per_row = (GSTAGE_BYTES / rows < GSTAGE_ROW ? GSTAGE_BYTES / rows : GSTAGE_ROW)
                         & ~(Py_ssize_t)63; /* stage bytes per row */
    if (per_row < 128 || P > per_row - 64) return 0;
    gt->k = (per_row - 64) / P; /* room for up to 63 carried bytes */
    if (gt->k > p->shape[g]) gt->k = p->shape[g];
    gt->pitch = (gt->k * P + 126) & ~(Py_ssize_t)63;
    return 1;
}

/* n < 64 bytes in fixed-size moves (a call to memcpy per piece of a row measured slow). */
static inline void small_copy(char *d, const char *s, Py_ssize_t n)
{
    Py_ssize_t i = 0;
    if (n & 32) memcpy(d + i, s + i, 32), i += 32;
    if (n & 16) memcpy(d + i, s + i, 16), i += 16;
    if (n & 8) memcpy(d + i, s + i, 8), i += 8;
    if (n & 4) memcpy(d + i, s + i, 4), i += 4;
    if (n & 2) memcpy(d + i, s + i, 2), i += 2;
    if (n & 1) d[i] = s[i];
}

/* Stage bytes [from, to) to out (where byte `from` goes; stage byte 0 maps to the start of a
 * destination line): whole lines streamed, partial ones (a row's first and last) stored. */
static void flush_span(char *out, const char *in, Py_ssize_t from, Py_ssize_t to)
{
    Py_ssize_t a = from;
    if (a % 64) {
        Py_ssize_t h = ((a + 63) & ~(Py_ssize_t)63) < to ? ((a + 63) & ~(Py_ssize_t)63) : to;
        small_copy(out, in + a, h - a);
        a = h;
    }
#if HAVE_STREAM
    for (; a + 64 <= to; a += 64)
        for (int i = 0; i < 64; i += 16)
            _mm_stream_si128((__m128i *)(out + (a - from) + i), _mm_load_si128((const __m128i *)(in + a + i)));
    if (a < to) small_copy(out + (a - from), in + a, to - a); /* less than a line */
#else
    if (a < to) memcpy(out + (a - from), in + a, (size_t)(to - a));
#endif
}

/* One block of the axes from g on (destination d, source s), gathered. */
static void gather_block(const plan_t *p, const gather_t *gt, char *d, const char *s, char *stage)
{
    const int g = gt->g;
    const Py_ssize_t P = gt->piece, ng = p->shape[g], lead = (Py_ssize_t)((uintptr_t)d & 63);
    plan_t q = *p;
    q.ndim = p->ndim - g;
    q.stream = 0;
    for (int j = 0; j < q.ndim; j++) {
        q.shape[j] = p->shape[g + j];
        q.ds[j] = p->ds[g + j];
        q.ss[j] = p->ss[g + j];
    }
    Py_ssize_t sst = gt->pitch;
    for (int r = gt->nrow - 1; r >= 0; r--) {
        q.ds[gt->row[r] - g] = sst;
        sst *= p->shape[gt->row[r]];
    }
    Py_ssize_t off = lead, skip = lead, done = -lead; /* done: d offset of stage byte 0 */
    for (Py_ssize_t g0 = 0; g0 < ng; g0 += gt->k) {
        Py_ssize_t kk = ng - g0 < gt->k ? ng - g0 : gt->k;
        q.shape[0] = 1;
        for (Py_ssize_t h = g0; h < g0 + kk; h++) { /* one g at a time, the source read ahead */
#if HAVE_STREAM
            if (gt->shi - gt->slo <= PREFETCH_SPAN && h + PREFETCH_AHEAD < ng)
                for (Py_ssize_t x = gt->slo; x < gt->shi; x += 64)
                    _mm_prefetch(s + (h + PREFETCH_AHEAD) * p->ss[g] + x, _MM_HINT_T0);
#endif
            q.dst = stage + off + (h - g0) * P;
            q.src = s + h * p->ss[g];
            run_plan(&q);
        }
        Py_ssize_t end = off + kk * P, last = g0 + kk >= ng, full = last ? end : end & ~(Py_ssize_t)63;
        Py_ssize_t idx[MAX_DIMS], roff = 0;
        memset(idx, 0, sizeof idx[0] * (size_t)gt->nrow);
        for (Py_ssize_t r = 0; r < gt->rows; r++) {
            char *row = stage + r * gt->pitch;
            if (full > skip) flush_span(d + roff + done + skip, row, skip, full);
            if (!last && end > full) small_copy(row, row + full, end - full); /* full >= 64: apart */
            for (int a = gt->nrow - 1; a >= 0; a--) { /* next row: innermost row axis fastest */
                int ax = gt->row[a];
                if (++idx[a] < p->shape[ax]) {
                    roff += p->ds[ax];
                    break;
                }
                roff -= (p->shape[ax] - 1) * p->ds[ax];
                idx[a] = 0;
            }
        }
        if (full > skip) skip = 0;
        else skip -= full; /* nothing written yet (full is 0) */
        done += full;
        off = end - full;
    }
}

/* The plan with its axes from gt->g on gathered, the axes before it looped over. */
static void gather_plan(const plan_t *p, const gather_t *gt)
{
    char *raw = PyMem_RawMalloc((size_t)(gt->rows * gt->pitch + 64));
    if (raw == NULL) {
        run_plan(p);
        return;
    }
    char *stage = raw + ((64 - ((uintptr_t)raw & 63)) & 63);
    Py_ssize_t idx[MAX_DIMS];
    memset(idx, 0, sizeof idx[0] * (size_t)gt->g);
    char *d = p->dst;
    const char *s = p->src;
    for (;;) {
        gather_block(p, gt, d, s, stage);
        if (!next_index(idx, gt->g, p->shape, p->ds, p->ss, &d, &s)) break;
    }
    PyMem_RawFree(raw);
}

/* A large copy: gathered where its destination rows run on in pieces (see above). */
/* The gathered copy, its outermost row axis cut in blocks above g when the rows are more
 * than GATHER_ROWS (a stage of fewer, longer rows that stays in L1 measured faster). */
static void gather_rows(const plan_t *p, const gather_t *gt)
{
    if (gt->rows <= GATHER_ROWS || gt->nrow < 1 || p->ndim >= MAX_DIMS) {
        gather_plan(p, gt);
        return;
    }
    int j = gt->row[0];
    Py_ssize_t e = p->shape[j], other = gt->rows / e, keep = GATHER_BLOCK / other;
    if (keep < 1 || keep >= e) {
        gather_plan(p, gt);
        return;
    }
    Py_ssize_t blocks = e / keep, rest = e - blocks * keep;
    plan_t q = *p; /* axes: ..., blocks (new, before g), g, ..., keep rows at j + 1, ... */
    for (int k = p->ndim; k > gt->g; k--) {
        q.shape[k] = p->shape[k - 1];
        q.ds[k] = p->ds[k - 1];
        q.ss[k] = p->ss[k - 1];
    }
    q.ndim = p->ndim + 1;
    q.shape[gt->g] = blocks;
    q.ds[gt->g] = keep * p->ds[j];
    q.ss[gt->g] = keep * p->ss[j];
    q.shape[j + 1] = keep;
    gather_t qt;
    if (gather_axes(&q, gt->g + 1, &qt)) gather_plan(&q, &qt); else run_plan(&q);
    if (rest) {
        plan_t r = *p;
        r.shape[j] = rest;
        r.dst += blocks * keep * p->ds[j];
        r.src += blocks * keep * p->ss[j];
        if (gather_axes(&r, gt->g, &qt)) gather_plan(&r, &qt); else run_plan(&r);
    }
}

/* ---- staged short runs -------------------------------------------------------------------
 * A large copy of short runs (16 to 48 bytes) whose destination is a contiguous block of R
 * runs per step of the axis j before them, the source's R rows running on over j (zN to its
 * buffer: a fractal's 16 rows of 32 bytes, the next fractal 32 bytes on in each row). Run as
 * it stands, it reads 32 bytes of each of 16 rows in turn, which measured 1.4x slower than
 * reading 64 to 256 (and writing each step's block whole); staged, G consecutive j go at a
 * time: each source row read G runs on into G blocks in L1, the blocks streamed out whole
 * (interleaving the G blocks' stores instead measured slower). */

#define RUNS_READ 128      /* bytes of a source row read per visit */
#define RUNS_STAGE 4096    /* L1 stage bytes */

/* Whether p's last three axes are such j, rows and run axes (the arrays' items plain). */
static int staged_runs(const plan_t *p)
{
    int last = p->ndim - 1;
    if (last < 2 || p->swap || p->ds[last] != p->item || p->ss[last] != p->item) return 0;
    Py_ssize_t bytes = p->shape[last] * p->item;
    return bytes >= 16 && bytes < 64 && bytes % 16 == 0 && p->shape[last - 1] > 1
           && p->ds[last - 1] == bytes && p->shape[last - 1] * bytes * 2 <= RUNS_STAGE
           && p->shape[last - 2] > 1 && p->ss[last - 2] == bytes;
}

/* nj steps of j (dst dj apart) of R rows (src srow apart) of `bytes`, G steps at a time. */
static void runs_block(char *d, const char *s, Py_ssize_t nj, Py_ssize_t dj, Py_ssize_t rows,
                       Py_ssize_t srow, Py_ssize_t bytes)
{
    _Alignas(64) char area[RUNS_STAGE + 4096];
    const Py_ssize_t B = rows * bytes, G0 = RUNS_READ / bytes < RUNS_STAGE / B ? RUNS_READ / bytes : RUNS_STAGE / B;
    for (Py_ssize_t j0 = 0; j0 < nj; j0 += G0) {
        const Py_ssize_t G = nj - j0 < G0 ? nj - j0 : G0;
        /* the stage half a page off the source (4 KiB aliasing) */
        char *stage = area + (((uintptr_t)(s + j0 * bytes) + 2048 - (uintptr_t)area) & 4032);
        for (Py_ssize_t r = 0; r < rows; r++) {
            const char *row = s + j0 * bytes + r * srow;
            char *st = stage + r * bytes;
            for (Py_ssize_t g = 0; g < G; g++, row += bytes, st += B)
                for (Py_ssize_t x = 0; x < bytes; x += 16) memcpy(st + x, row + x, 16);
        }
        for (Py_ssize_t g = 0; g < G; g++)
            stream_out(d + (j0 + g) * dj, stage + g * B, (size_t)B);
    }
}

/* The plan (staged_runs holds) as staged runs, its outer axes looped over. */
static void runs_plan(const plan_t *p)
{
    const int j = p->ndim - 3, r = p->ndim - 2;
    Py_ssize_t idx[MAX_DIMS];
    memset(idx, 0, sizeof idx[0] * (size_t)j);
    char *d = p->dst;
    const char *s = p->src;
    do runs_block(d, s, p->shape[j], p->ds[j], p->shape[r], p->ss[r], p->shape[r + 1] * p->item);
    while (next_index(idx, j, p->shape, p->ds, p->ss, &d, &s));
}

/* A large copy: gathered where its destination rows run on in pieces (see above). */
static void copy_plan(const plan_t *p)
{
    for (int k = 0; k < p->ndim; k++)
        if (p->shape[k] == 0) return;
    if (p->stream && HAVE_STREAM && staged_runs(p)) {
        runs_plan(p);
        return;
    }
    if (p->stream && HAVE_STREAM) {
        inner_t in = choose_inner(p);
        for (int g = p->ndim - 3; g >= 0; g--) {
            gather_t gt;
            if (p->shape[g] > 1 && gather_axes(p, g, &gt)) {
                if (gt.piece < 64 || in.kind == K_STRIDED) {
                    gather_rows(p, &gt);
                    return;
                }
                break;
            }
        }
    }
    run_plan(p);
}

/* ---- Python entry point ------------------------------------------------------------- */

/* [lo, hi): the bytes a strided view (or one task) touches, relative to its first element;
 * 0 on success, -1 if a product overflows. */
static int span(int ndim, const Py_ssize_t *shape, const Py_ssize_t *strides, Py_ssize_t item,
                Py_ssize_t *lo, Py_ssize_t *hi)
{
    *lo = 0;
    *hi = item;
    for (int k = 0; k < ndim; k++) {
        Py_ssize_t n = shape[k] - 1, st = strides[k] < 0 ? -strides[k] : strides[k];
        if (n < 0) return 0;
        if (n > 0 && st > PY_SSIZE_T_MAX / 4 / n) return -1;
        if (strides[k] < 0) *lo -= n * st; else *hi += n * st;
    }
    return 0;
}

static int read_ints(PyObject *seq, Py_ssize_t *out, Py_ssize_t n)
{
    for (Py_ssize_t k = 0; k < n; k++) {
        out[k] = PyLong_AsSsize_t(PyTuple_GET_ITEM(seq, k));
        if (out[k] == -1 && PyErr_Occurred()) return -1;
    }
    return 0;
}

/* One task: (dst byte offset, src byte offset, shape, dst strides, src strides), checked to
 * stay inside both arrays. */
static int read_task(PyObject *task, plan_t *p, const Py_buffer *dv, const Py_buffer *sv,
                     Py_ssize_t dlo, Py_ssize_t dhi, Py_ssize_t slo, Py_ssize_t shi)
{
    PyObject *shape, *ds, *ss;
    Py_ssize_t doff, soff;
    int swap = 0;
    if (!PyArg_ParseTuple(task, "nnO!O!O!|p", &doff, &soff, &PyTuple_Type, &shape, &PyTuple_Type, &ds,
                          &PyTuple_Type, &ss, &swap))
        return -1;
    if (swap && dv->itemsize != 1 && dv->itemsize != 2) {
        PyErr_SetString(PyExc_ValueError, "copy: swapped units are of 1- or 2-byte items");
        return -1;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(shape);
    if (n > MAX_DIMS || PyTuple_GET_SIZE(ds) != n || PyTuple_GET_SIZE(ss) != n) {
        PyErr_SetString(PyExc_ValueError, "copy: a task's shape and strides differ in length");
        return -1;
    }
    p->ndim = (int)n;
    p->swap = swap;
    p->item = swap ? 4 * dv->itemsize : dv->itemsize;
    if (read_ints(shape, p->shape, n) || read_ints(ds, p->ds, n) || read_ints(ss, p->ss, n))
        return -1;
    if (n == 0 && swap) { /* one unit, as a 1-axis box */
        p->ndim = 1;
        p->shape[0] = 1;
        p->ds[0] = p->ss[0] = p->item;
    }
    Py_ssize_t lo, hi;
    for (Py_ssize_t k = 0; k < n; k++)
        if (p->shape[k] <= 0) {
            p->ndim = -1; /* nothing to copy */
            return 0;
        }
    if (span(p->ndim, p->shape, p->ds, p->item, &lo, &hi) < 0 || doff + lo < dlo || doff + hi > dhi) {
        PyErr_SetString(PyExc_IndexError, "copy: a task leaves the destination array");
        return -1;
    }
    if (span(p->ndim, p->shape, p->ss, p->item, &lo, &hi) < 0 || soff + lo < slo || soff + hi > shi) {
        PyErr_SetString(PyExc_IndexError, "copy: a task leaves the source array");
        return -1;
    }
    p->dst = (char *)dv->buf + doff;
    p->src = (const char *)sv->buf + soff;
    p->slo = p->src + lo;
    p->shi = p->src + hi;
    return 0;
}

/* The writable destination and the source buffers of a call (both released on failure). */
static int get_buffers(PyObject *dst_obj, PyObject *src_obj, Py_buffer *dv, Py_buffer *sv)
{
    if (PyObject_GetBuffer(dst_obj, dv, PyBUF_STRIDES | PyBUF_WRITABLE) < 0) return -1;
    if (PyObject_GetBuffer(src_obj, sv, PyBUF_STRIDES) < 0) {
        PyBuffer_Release(dv);
        return -1;
    }
    return 0;
}

static PyObject *kernel_copy(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *dst_obj, *src_obj, *tasks;
    int stream = 0;
    if (!PyArg_ParseTuple(args, "OOO!|p:copy", &dst_obj, &src_obj, &PyList_Type, &tasks, &stream))
        return NULL;
    Py_buffer dv, sv;
    if (get_buffers(dst_obj, src_obj, &dv, &sv) < 0) return NULL;
    PyObject *result = NULL;
    Py_ssize_t count = PyList_GET_SIZE(tasks), dlo, dhi, slo, shi;
    plan_t *plans = PyMem_Malloc(sizeof(plan_t) * (size_t)(count ? count : 1));
    if (plans == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (dv.itemsize != sv.itemsize) {
        PyErr_SetString(PyExc_ValueError, "copy: the arrays differ in item size");
        goto done;
    }
    if (span(dv.ndim, dv.shape, dv.strides, dv.itemsize, &dlo, &dhi) < 0
        || span(sv.ndim, sv.shape, sv.strides, sv.itemsize, &slo, &shi) < 0) {
        PyErr_SetString(PyExc_ValueError, "copy: array too large");
        goto done;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        if (read_task(PyList_GET_ITEM(tasks, i), &plans[i], &dv, &sv, dlo, dhi, slo, shi) < 0)
            goto done;
        plans[i].stream = stream && HAVE_STREAM;
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < count; i++) {
        if (plans[i].ndim == 0)
            memcpy(plans[i].dst, plans[i].src, (size_t)plans[i].item);
        else if (plans[i].ndim > 0)
            copy_plan(&plans[i]);
    }
#if HAVE_STREAM
    if (stream) _mm_sfence();
#endif
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    PyMem_Free(plans);
    PyBuffer_Release(&dv);
    PyBuffer_Release(&sv);
    return result;
}

/* the remembered small calls, defined at the end of the file */
static PyObject *kernel_small_call(PyObject *self, PyObject *args);
static PyObject *kernel_to_physical_small(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
static PyObject *kernel_from_physical_small(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
static PyObject *kernel_setup_small(PyObject *self, PyObject *args);

static PyMethodDef methods[] = {
    {"copy", kernel_copy, METH_VARARGS,
     "copy(dst, src, tasks, stream=False): for each task (dst_offset, src_offset, shape, "
     "dst_strides, src_strides[, swap]), in bytes from each array's first element, copy that "
     "strided box of src into dst, outer axes in the order given; every box is checked to lie "
     "inside both arrays. swap: the box's items are 2 x 2 blocks [a, b, c, d] of the arrays' "
     "1- or 2-byte items, written as [a, c, b, d]. stream: non-temporal stores where dst is "
     "contiguous."},
    {"small_call", kernel_small_call, METH_VARARGS,
     "small_call(dst, src, tasks, to_physical, dtype, threads, pad, fill, nbytes, align, "
     "out_given, alloc_shape): a "
     "remembered small call (see the section 'remembered small calls')."},
    {"to_physical_small", (PyCFunction)(void (*)(void))kernel_to_physical_small, METH_FASTCALL,
     "to_physical_small(target, array, out, pad, threads): the buffer, or None (take the Python path)."},
    {"from_physical_small", (PyCFunction)(void (*)(void))kernel_from_physical_small, METH_FASTCALL,
     "from_physical_small(target, buffer, out, threads): the array, or None (take the Python path)."},
    {"setup_small", kernel_setup_small, METH_VARARGS,
     "setup_small(engine_globals, ndarray): what the small calls read on every call."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_kernel",
                                    "The relayout copy kernel (see _copy.py).", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__kernel(void)
{
    choose_tilers();
    return PyModule_Create(&module);
}

/* ==== remembered small calls ==============================================================
 *
 * A relayout call remembered on its target (_call.py) whose copy is one kernel call keeps a
 * `small call` here too: the key it was made for (dtype, the keyed array's shape and strides,
 * thread cap, int pad value), what it needs of `out`, its tasks parsed once, and the boxes of
 * padding it fills first (a zero-stride source of one item, checked as tasks are).
 * to_physical_small / from_physical_small find the one that fits their arguments, run every
 * check the Python path runs on each call (array types, out's dtype, size or shape and
 * strides, contiguity, writeability, no overlap, alignment, every task inside both arrays,
 * the engine's switches), and copy. Anything else returns None: the caller then takes the
 * Python path, which plans, remembers and raises the errors. Setup (_copy.py) hands over the
 * engine module's globals, read on every call, and numpy's ndarray type. */

typedef struct {
    int to_physical;
    PyObject *dtype, *threads, *pad; /* strong references; pad NULL from the buffer */
    PyObject *alloc_shape;           /* without out: allocate(alloc_shape, dtype, target); NULL: out only */
    int out_given;                   /* from_physical: made for a given out (the key holds its strides) */
    Py_ssize_t item, align, nbytes;
    Py_ssize_t dst_len;                /* bytes of dst (to_physical: out may take any shape) */
    int src_ndim, dst_ndim;
    Py_ssize_t src_shape[MAX_DIMS], src_strides[MAX_DIMS], dst_shape[MAX_DIMS], dst_strides[MAX_DIMS];
    unsigned char fill_bytes[32];      /* one item of the pad value, for the fills */
    Py_ssize_t nfill;
    plan_t *fills;                     /* boxes of dst written with fill_bytes first (src unused) */
    Py_ssize_t *foff;                  /* ... from dst's first element */
    Py_ssize_t dmin, dmax, smin, smax; /* bytes the tasks and fills touch, from each array's first element */
    Py_ssize_t count;
    plan_t *plans;                     /* dst and src: NULL; the offsets below */
    Py_ssize_t *doff, *soff;
} small_call_t;

static PyObject *engine_globals, *ndarray_type;
static PyObject *s_dtype, *s_use_kernel, *s_kernel, *s_thread_min, *s_stream_min, *s_allocate, *s_small_calls;

static void small_call_delete(small_call_t *c)
{
    if (c == NULL) return;
    Py_XDECREF(c->dtype);
    Py_XDECREF(c->threads);
    Py_XDECREF(c->pad);
    Py_XDECREF(c->alloc_shape);
    PyMem_Free(c->plans);
    PyMem_Free(c->doff);
    PyMem_Free(c->soff);
    PyMem_Free(c->fills);
    PyMem_Free(c->foff);
    PyMem_Free(c);
}

static void small_call_free(PyObject *capsule)
{
    small_call_delete(PyCapsule_GetPointer(capsule, "small_call"));
}

/* numpy's rule for flags.aligned: the address and every stride of a dim longer than 1 are
 * multiples of the alignment (an empty array is aligned). */
static int is_aligned(const Py_buffer *v, Py_ssize_t align)
{
    uintptr_t bits = (uintptr_t)v->buf;
    for (int k = 0; k < v->ndim; k++) {
        if (v->shape[k] == 0) return 1;
        if (v->shape[k] > 1) bits |= (uintptr_t)v->strides[k];
    }
    return align <= 1 || bits % (uintptr_t)align == 0;
}

/* numpy's rule for flags.c_contiguous. */
static int is_c_contiguous(const Py_buffer *v)
{
    Py_ssize_t want = v->itemsize;
    for (int k = v->ndim - 1; k >= 0; k--) {
        if (v->shape[k] == 0) return 1;
        if (v->shape[k] != 1 && v->strides[k] != want) return 0;
        want *= v->shape[k];
    }
    return 1;
}

static int same_dims(int n, const Py_ssize_t *a, const Py_ssize_t *b)
{
    for (int k = 0; k < n; k++)
        if (a[k] != b[k]) return 0;
    return 1;
}

static void copy_dims(const Py_buffer *v, int *ndim, Py_ssize_t *shape, Py_ssize_t *strides)
{
    *ndim = v->ndim;
    for (int k = 0; k < v->ndim; k++) {
        shape[k] = v->shape[k];
        strides[k] = v->strides[k];
    }
}

/* The fills of a small call: fill = (one item of bytes, [task, ...]), each task a box of dst
 * checked as kernel_copy checks it, from the item (zero source strides). */
static int read_fills(small_call_t *c, PyObject *fill, const Py_buffer *dv, Py_ssize_t dlo, Py_ssize_t dhi)
{
    PyObject *one, *boxes;
    if (!PyArg_ParseTuple(fill, "SO!:small_call fill", &one, &PyList_Type, &boxes)) return -1;
    if (PyBytes_GET_SIZE(one) != dv->itemsize || dv->itemsize > (Py_ssize_t)sizeof c->fill_bytes) {
        PyErr_SetString(PyExc_ValueError, "small_call: fill must be one item of bytes");
        return -1;
    }
    memcpy(c->fill_bytes, PyBytes_AS_STRING(one), (size_t)dv->itemsize);
    Py_buffer item = *dv; /* the source of a fill: one item */
    item.buf = c->fill_bytes;
    c->nfill = PyList_GET_SIZE(boxes);
    c->fills = PyMem_Calloc((size_t)(c->nfill ? c->nfill : 1), sizeof(plan_t));
    c->foff = PyMem_Calloc((size_t)(c->nfill ? c->nfill : 1), sizeof(Py_ssize_t));
    if (c->fills == NULL || c->foff == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < c->nfill; i++) {
        plan_t *p = &c->fills[i];
        Py_ssize_t lo, hi;
        if (read_task(PyList_GET_ITEM(boxes, i), p, dv, &item, dlo, dhi, 0, dv->itemsize) < 0) return -1;
        if (p->ndim < 0) continue;
        c->foff[i] = p->dst - (char *)dv->buf;
        p->dst = NULL;
        p->src = NULL;
        span(p->ndim, p->shape, p->ds, p->item, &lo, &hi); /* read_task checked it */
        if (c->foff[i] + lo < c->dmin) c->dmin = c->foff[i] + lo;
        if (c->foff[i] + hi > c->dmax) c->dmax = c->foff[i] + hi;
    }
    return 0;
}

/* small_call(dst, src, tasks, to_physical, dtype, threads, pad, fill, nbytes, align, out_given,
 * alloc_shape): the small call of the copy `tasks` from src into dst (the arrays of a first
 * call), as kernel_copy checks and runs them; fill: None, or (one item of bytes, boxes of dst
 * it is written to first, as tasks from a source of zero strides); alloc_shape: None, or the
 * shape of a new dst when out is None. */
static PyObject *kernel_small_call(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *dst_obj, *src_obj, *tasks, *dtype, *threads, *pad, *fill, *alloc_shape;
    int to_physical, out_given;
    Py_ssize_t nbytes, align;
    if (!PyArg_ParseTuple(args, "OOO!pOOOOnnpO:small_call", &dst_obj, &src_obj, &PyList_Type, &tasks,
                          &to_physical, &dtype, &threads, &pad, &fill, &nbytes, &align, &out_given,
                          &alloc_shape))
        return NULL;
    Py_buffer dv, sv;
    if (get_buffers(dst_obj, src_obj, &dv, &sv) < 0) return NULL;
    PyObject *capsule = NULL;
    Py_ssize_t count = PyList_GET_SIZE(tasks), dlo, dhi, slo, shi;
    small_call_t *c = PyMem_Calloc(1, sizeof(small_call_t));
    if (c == NULL || (c->plans = PyMem_Calloc((size_t)(count ? count : 1), sizeof(plan_t))) == NULL
        || (c->doff = PyMem_Calloc((size_t)(count ? count : 1), sizeof(Py_ssize_t))) == NULL
        || (c->soff = PyMem_Calloc((size_t)(count ? count : 1), sizeof(Py_ssize_t))) == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    c->to_physical = to_physical;
    c->out_given = out_given;
    if (alloc_shape != Py_None) {
        Py_INCREF(alloc_shape);
        c->alloc_shape = alloc_shape;
    }
    c->item = dv.itemsize;
    c->align = align;
    c->nbytes = nbytes;
    c->count = count;
    Py_INCREF(dtype);
    c->dtype = dtype;
    Py_INCREF(threads);
    c->threads = threads;
    if (to_physical) {
        Py_INCREF(pad);
        c->pad = pad;
    }
    if (dv.itemsize != sv.itemsize || dv.ndim > MAX_DIMS || sv.ndim > MAX_DIMS) {
        PyErr_SetString(PyExc_ValueError, "small_call: the arrays differ in item size");
        goto fail;
    }
    copy_dims(&sv, &c->src_ndim, c->src_shape, c->src_strides);
    copy_dims(&dv, &c->dst_ndim, c->dst_shape, c->dst_strides);
    c->dst_len = dv.len;
    if (span(dv.ndim, dv.shape, dv.strides, dv.itemsize, &dlo, &dhi) < 0
        || span(sv.ndim, sv.shape, sv.strides, sv.itemsize, &slo, &shi) < 0) {
        PyErr_SetString(PyExc_ValueError, "small_call: array too large");
        goto fail;
    }
    c->dmin = c->smin = PY_SSIZE_T_MAX;
    c->dmax = c->smax = PY_SSIZE_T_MIN;
    if (fill != Py_None && read_fills(c, fill, &dv, dlo, dhi) < 0) goto fail;
    for (Py_ssize_t i = 0; i < count; i++) {
        plan_t *p = &c->plans[i];
        Py_ssize_t lo, hi;
        if (read_task(PyList_GET_ITEM(tasks, i), p, &dv, &sv, dlo, dhi, slo, shi) < 0) goto fail;
        if (p->ndim < 0) continue;
        c->doff[i] = p->dst - (char *)dv.buf;
        c->soff[i] = p->src - (const char *)sv.buf;
        p->dst = NULL;
        p->src = NULL;
        p->slo = p->shi = NULL; /* set per call, from that call's source (run_small) */
        p->stream = 0;
        span(p->ndim, p->shape, p->ds, p->item, &lo, &hi); /* read_task checked it */
        if (c->doff[i] + lo < c->dmin) c->dmin = c->doff[i] + lo;
        if (c->doff[i] + hi > c->dmax) c->dmax = c->doff[i] + hi;
        span(p->ndim, p->shape, p->ss, p->item, &lo, &hi);
        if (c->soff[i] + lo < c->smin) c->smin = c->soff[i] + lo;
        if (c->soff[i] + hi > c->smax) c->smax = c->soff[i] + hi;
    }
    capsule = PyCapsule_New(c, "small_call", small_call_free);
    if (capsule == NULL) goto fail;
    c = NULL;
fail:
    small_call_delete(c);
    PyBuffer_Release(&dv);
    PyBuffer_Release(&sv);
    return capsule;
}

/* The engine's switches allow one kernel call of nbytes: USE_KERNEL is true, _kernel is this
 * module, and nbytes is below THREAD_MIN_BYTES and STREAM_MIN_BYTES (as Prepared.run asks). */
static int engine_allows(PyObject *module, Py_ssize_t nbytes)
{
    if (engine_globals == NULL) return 0;
    PyObject *use = PyDict_GetItemWithError(engine_globals, s_use_kernel);
    PyObject *kernel = PyDict_GetItemWithError(engine_globals, s_kernel);
    PyObject *threads = PyDict_GetItemWithError(engine_globals, s_thread_min);
    PyObject *stream = PyDict_GetItemWithError(engine_globals, s_stream_min);
    if (use == NULL || kernel != module || threads == NULL || stream == NULL || !PyLong_CheckExact(threads)
        || !PyLong_CheckExact(stream))
        return 0;
    int on = PyObject_IsTrue(use);
    int overflow = 0;
    long long t = PyLong_AsLongLongAndOverflow(threads, &overflow);
    if (overflow < 0) return 0;
    if (overflow == 0 && t <= nbytes) return 0;
    long long s = PyLong_AsLongLongAndOverflow(stream, &overflow);
    if (overflow < 0) return 0;
    if (overflow == 0 && s <= nbytes) return 0;
    return on > 0;
}

/* The thread cap and pad value are the ones c was made for (plain ints or None only). */
static int same_key_values(const small_call_t *c, PyObject *pad, PyObject *threads)
{
    if (threads != c->threads) {
        if (threads == Py_None || c->threads == Py_None || !PyLong_CheckExact(threads)
            || PyObject_RichCompareBool(threads, c->threads, Py_EQ) != 1)
            return 0;
    }
    if (c->to_physical && pad != c->pad) {
        if (!PyLong_CheckExact(pad) || PyObject_RichCompareBool(pad, c->pad, Py_EQ) != 1) return 0;
    }
    return 1;
}

/* out has the dtype (checked by the caller), size or shape and strides c asks for. */
static int out_shaped(const small_call_t *c, const Py_buffer *dv)
{
    if (dv->itemsize != c->item) return 0;
    if (c->to_physical) /* any shape of as many items, C-contiguous */
        return dv->len == c->dst_len && is_c_contiguous(dv);
    return dv->ndim == c->dst_ndim && same_dims(dv->ndim, c->dst_shape, dv->shape)
           && same_dims(dv->ndim, c->dst_strides, dv->strides);
}

/* The small call in `calls` (a list of them) made for src's key that takes this out (dv NULL:
 * out is None; the call allocates), or NULL; *held: a new reference to its capsule, which
 * keeps it alive while the GIL is released or Python code runs (that may clear the list). */
static const small_call_t *find_small(PyObject *calls, int to_physical, PyObject *dtype, const Py_buffer *sv,
                                      const Py_buffer *dv, PyObject *pad, PyObject *threads, PyObject **held)
{
    Py_CLEAR(*held);
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(calls); i++) {
        PyObject *capsule = PyList_GET_ITEM(calls, i);
        const small_call_t *c = PyCapsule_GetPointer(capsule, "small_call");
        if (c == NULL) return NULL;
        if (c->to_physical == to_physical && c->dtype == dtype && c->item == sv->itemsize
            && c->src_ndim == sv->ndim && same_dims(sv->ndim, c->src_shape, sv->shape)
            && same_dims(sv->ndim, c->src_strides, sv->strides)
            && (dv == NULL ? c->alloc_shape != NULL && !c->out_given
                           : out_shaped(c, dv) && (to_physical || c->out_given))
            && same_key_values(c, pad, threads)) {
            Py_INCREF(capsule);
            *held = capsule;
            return c;
        }
        if (PyErr_Occurred()) return NULL;
    }
    return NULL;
}

/* The arrays of a found call do not overlap, are aligned, and hold every task. */
static int arrays_fit(const small_call_t *c, const Py_buffer *dv, const Py_buffer *sv)
{
    Py_ssize_t dlo, dhi, slo, shi;
    if (span(dv->ndim, dv->shape, dv->strides, dv->itemsize, &dlo, &dhi) < 0
        || span(sv->ndim, sv->shape, sv->strides, sv->itemsize, &slo, &shi) < 0)
        return 0;
    const char *d = dv->buf, *s = sv->buf;
    if (d + dlo < s + shi && s + slo < d + dhi) return 0; /* they overlap */
    return is_aligned(dv, c->align) && is_aligned(sv, c->align) && c->dmin >= dlo && c->dmax <= dhi
           && c->smin >= slo && c->smax <= shi;
}

static void fill_items(char *d, Py_ssize_t n, const unsigned char *one, Py_ssize_t item)
{
    switch (item) {
    case 1: memset(d, one[0], (size_t)n); return;
    case 2: { uint16_t v; memcpy(&v, one, 2); for (Py_ssize_t i = 0; i < n; i++) ((uint16_t *)d)[i] = v; return; }
    case 4: { uint32_t v; memcpy(&v, one, 4); for (Py_ssize_t i = 0; i < n; i++) ((uint32_t *)d)[i] = v; return; }
    case 8: { uint64_t v; memcpy(&v, one, 8); for (Py_ssize_t i = 0; i < n; i++) ((uint64_t *)d)[i] = v; return; }
    default: for (Py_ssize_t i = 0; i < n; i++) memcpy(d + i * item, one, (size_t)item);
    }
}

/* Write the item `one` to every slot of the box p at d. */
static void fill_box(char *d, const plan_t *p, const unsigned char *one)
{
    int last = p->ndim - 1;
    if (last < 0) {
        memcpy(d, one, (size_t)p->item);
        return;
    }
    Py_ssize_t idx[MAX_DIMS] = {0};
    for (;;) {
        char *row = d;
        for (int k = 0; k < last; k++) row += idx[k] * p->ds[k];
        if (p->ds[last] == p->item)
            fill_items(row, p->shape[last], one, p->item);
        else
            for (Py_ssize_t i = 0; i < p->shape[last]; i++) memcpy(row + i * p->ds[last], one, (size_t)p->item);
        int k = last - 1;
        for (; k >= 0 && ++idx[k] == p->shape[k]; k--) idx[k] = 0;
        if (k < 0) return;
    }
}

static void run_small(const small_call_t *c, char *d, const char *s)
{
    for (Py_ssize_t i = 0; i < c->nfill; i++)
        if (c->fills[i].ndim >= 0) fill_box(d + c->foff[i], &c->fills[i], c->fill_bytes);
    for (Py_ssize_t i = 0; i < c->count; i++) {
        plan_t p = c->plans[i];
        if (p.ndim < 0) continue;
        p.dst = d + c->doff[i];
        p.src = s + c->soff[i];
        if (p.ndim == 0) {
            memcpy(p.dst, p.src, (size_t)p.item);
            continue;
        }
        Py_ssize_t lo, hi; /* the bounds prefetches stay inside, in this call's source */
        span(p.ndim, p.shape, p.ss, p.item, &lo, &hi);
        p.slo = p.src + lo;
        p.shi = p.src + hi;
        copy_plan(&p);
    }
}

/* A new dst for c (allocate(...) of the engine module), or NULL (no error set). */
static PyObject *allocated(const small_call_t *c, PyObject *target)
{
    PyObject *alloc = PyDict_GetItemWithError(engine_globals, s_allocate);
    PyObject *dst = alloc == NULL ? NULL : PyObject_CallFunctionObjArgs(alloc, c->alloc_shape, c->dtype, target, NULL);
    PyObject *dtype = dst == NULL ? NULL : PyObject_GetAttr(dst, s_dtype);
    if (dst != NULL && ((PyObject *)Py_TYPE(dst) != ndarray_type || dtype != c->dtype))
        Py_CLEAR(dst);
    Py_XDECREF(dtype);
    PyErr_Clear();
    return dst;
}

/* src into dst (None: a new array) by a small call of target: dst (new reference), or None to
 * take the Python path. */
static PyObject *call_small(PyObject *module, PyObject *target, PyObject *src, PyObject *dst, PyObject *pad,
                            PyObject *threads, int to_physical)
{
    if (ndarray_type == NULL || (PyObject *)Py_TYPE(src) != ndarray_type
        || (dst != Py_None && (PyObject *)Py_TYPE(dst) != ndarray_type)
        || (threads != Py_None && !PyLong_CheckExact(threads)) || (to_physical && !PyLong_CheckExact(pad)))
        Py_RETURN_NONE;
    PyObject *calls = PyObject_GetAttr(target, s_small_calls);
    PyObject *sdt = PyObject_GetAttr(src, s_dtype), *ddt = dst == Py_None ? NULL : PyObject_GetAttr(dst, s_dtype);
    int usable = calls != NULL && PyList_Check(calls) && PyList_GET_SIZE(calls) > 0 && sdt != NULL
                 && (dst == Py_None || sdt == ddt);
    Py_XDECREF(sdt); /* the arrays hold them */
    Py_XDECREF(ddt);
    Py_buffer sv, dv;
    if (!usable || PyObject_GetBuffer(src, &sv, PyBUF_STRIDES) < 0) {
        PyErr_Clear();
        Py_XDECREF(calls);
        Py_RETURN_NONE;
    }
    PyObject *result = Py_None, *made = NULL, *held = NULL;
    const small_call_t *c = NULL;
    if (dst == Py_None) {
        c = find_small(calls, to_physical, sdt, &sv, NULL, pad, threads, &held);
        if (c != NULL && engine_allows(module, c->nbytes))
            dst = made = allocated(c, target);
        if (made == NULL) goto done;
    }
    if (PyObject_GetBuffer(dst, &dv, PyBUF_STRIDES | PyBUF_WRITABLE) < 0) goto done;
    if (made == NULL)
        c = find_small(calls, to_physical, sdt, &sv, &dv, pad, threads, &held);
    else if (!out_shaped(c, &dv))
        c = NULL;
    if (c != NULL && arrays_fit(c, &dv, &sv) && engine_allows(module, c->nbytes)) {
        Py_BEGIN_ALLOW_THREADS
        run_small(c, dv.buf, sv.buf);
        Py_END_ALLOW_THREADS
        result = dst;
    }
    PyBuffer_Release(&dv);
done:
    PyErr_Clear();
    PyBuffer_Release(&sv);
    Py_DECREF(calls);
    Py_XDECREF(held);
    Py_INCREF(result);
    Py_XDECREF(made);
    return result;
}

static PyObject *kernel_to_physical_small(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "to_physical_small(target, array, out, pad, threads)");
        return NULL;
    }
    return call_small(self, args[0], args[1], args[2], args[3], args[4], 1);
}

static PyObject *kernel_from_physical_small(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "from_physical_small(target, buffer, out, threads)");
        return NULL;
    }
    return call_small(self, args[0], args[1], args[2], Py_None, args[3], 0);
}

/* setup_small(engine_globals, ndarray): what the small calls read on every call. */
static PyObject *kernel_setup_small(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *globals, *ndarray;
    if (!PyArg_ParseTuple(args, "O!O!:setup_small", &PyDict_Type, &globals, &PyType_Type, &ndarray))
        return NULL;
    if (s_dtype == NULL) {
        s_dtype = PyUnicode_InternFromString("dtype");
        s_use_kernel = PyUnicode_InternFromString("USE_KERNEL");
        s_kernel = PyUnicode_InternFromString("_kernel");
        s_thread_min = PyUnicode_InternFromString("THREAD_MIN_BYTES");
        s_stream_min = PyUnicode_InternFromString("STREAM_MIN_BYTES");
        s_allocate = PyUnicode_InternFromString("allocate");
        s_small_calls = PyUnicode_InternFromString("_small_calls");
        if (!s_dtype || !s_use_kernel || !s_kernel || !s_thread_min || !s_stream_min || !s_allocate
            || !s_small_calls)
            return NULL;
    }
    Py_INCREF(globals);
    Py_XSETREF(engine_globals, globals);
    Py_INCREF(ndarray);
    Py_XSETREF(ndarray_type, ndarray);
    Py_RETURN_NONE;
}
