/* _kernel_masked.h: a masked copy, one pass: a buffer copied whole onto one of the same layout (a
 * one-pass relayout where every element has the same offset on both sides), the padding slots
 * written with the pad value as the copy goes, whatever the source's padding holds.
 *
 * Before, the whole buffer was copied, then its padding written again (Refill in _onepass.py: views
 * filled, words masked), a second pass over a fifth of the buffer that had left L1 by then (one
 * thread, u8[55641,33]{0,1:T(8,128)(4,1)} to itself: copy 48 us + refill 25-30 us). Here the boxes
 * of padding are cut into units (each a step of a box's outer axes, its inner axes spanning at most
 * a few KiB: a row of words of a tile row), the units taken in the order of their first byte, the
 * copy run up to each unit and the unit then written: from the source through its mask (a dense
 * unit: its words cover its bytes, written once), or over the bytes just copied (a unit with gaps,
 * or one starting inside what is written already: still in L1).
 *
 * A box: its first word's byte offset, shape and byte strides (the outer axes first), its word
 * (1, 2, 4 or 8 bytes), keep and fill: each word of the box becomes (word & keep) | fill.
 * Self-contained (include guard). */
#ifndef TENSORLAYOUT_KERNEL_MASKED_H
#define TENSORLAYOUT_KERNEL_MASKED_H
#include "_task.h"
#include "_kernel_plan.h"

#define MASKED_MAX_BOXES 32
#define MASKED_MAX_OUTER 8 /* outer axes of a box */

typedef struct {
    Py_ssize_t off;        /* byte offset of the box's first word */
    int ndim, outer;       /* axes, of which the first `outer` step over units */
    Py_ssize_t shape[MAX_DIMS], strides[MAX_DIMS];
    int word;
    uint64_t keep, fill;
    uint64_t keep8, fill8; /* ... each repeated over 8 bytes */
    Py_ssize_t extent;     /* a unit's bytes from its first */
    int dense;             /* a unit's words cover its bytes (one inner axis of stride word) */
} mbox_t;

typedef struct {
    Py_ssize_t idx[MASKED_MAX_OUTER]; /* a box's next unit: its outer index */
    Py_ssize_t start;                 /* ... and first byte (-1: none left) */
} mnext_t;

/* The innermost axis of a unit: n words `st` bytes apart, from x (the source or d itself) to d. */
#define MASKED_LOOP(T)                                                                            \
    static void masked_run_##T(char *d, const char *x, Py_ssize_t n, Py_ssize_t st, T keep, T fill) \
    {                                                                                             \
        if (st == (Py_ssize_t)sizeof(T)) {                                                        \
            for (Py_ssize_t k = 0; k < n; k++) {                                                  \
                T v;                                                                              \
                memcpy(&v, x + k * (Py_ssize_t)sizeof(T), sizeof(T));                             \
                v = (T)((v & keep) | fill);                                                       \
                memcpy(d + k * (Py_ssize_t)sizeof(T), &v, sizeof(T));                             \
            }                                                                                     \
            return;                                                                               \
        }                                                                                         \
        for (Py_ssize_t k = 0; k < n; k++) {                                                      \
            T v;                                                                                  \
            memcpy(&v, x + k * st, sizeof(T));                                                    \
            v = (T)((v & keep) | fill);                                                           \
            memcpy(d + k * st, &v, sizeof(T));                                                    \
        }                                                                                         \
    }
MASKED_LOOP(uint8_t)
MASKED_LOOP(uint16_t)
MASKED_LOOP(uint32_t)
MASKED_LOOP(uint64_t)

/* `word` bytes of v repeated over 8 bytes. */
static inline uint64_t masked_repeat(uint64_t v, int word)
{
    uint64_t out = 0;
    for (int b = 0; b < 8; b += word) memcpy((char *)&out + b, &v, (size_t)word);
    return out;
}

#if HAVE_AVX2_DISPATCH
static int masked_avx2 = -1; /* the CPU has AVX2 (asked once) */

/* `bytes` contiguous bytes of words (keep and fill repeated over 8 bytes), 32 at a time: the SSE2
 * loop the compiler makes of masked_run measured 2.4x slower per byte than the copy around it. */
__attribute__((target("avx2"))) static Py_ssize_t masked_bytes_avx2(char *d, const char *x, Py_ssize_t bytes,
                                                                      uint64_t keep, uint64_t fill)
{
    const __m256i k = _mm256_set1_epi64x((long long)keep), f = _mm256_set1_epi64x((long long)fill);
    Py_ssize_t i = 0;
    for (; i + 64 <= bytes; i += 64) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(x + i));
        __m256i b = _mm256_loadu_si256((const __m256i *)(x + i + 32));
        _mm256_storeu_si256((__m256i *)(d + i), _mm256_or_si256(_mm256_and_si256(a, k), f));
        _mm256_storeu_si256((__m256i *)(d + i + 32), _mm256_or_si256(_mm256_and_si256(b, k), f));
    }
    return i;
}
#endif

/* A run of n words of one value (keep 0) `st` bytes apart: contiguous ones as a pattern (fill8:
 * the value repeated over 8 bytes, made once per box: made per unit, byte by byte, it stalled
 * every unit on its stores: 130 ns a unit of 32 bytes). */
static void masked_fill(char *d, Py_ssize_t n, Py_ssize_t st, int word, uint64_t fill, uint64_t fill8)
{
    if (st != word || (word > 1 && n < 8)) {
        for (Py_ssize_t k = 0; k < n; k++) memcpy(d + k * st, &fill, (size_t)word); /* (little end) */
        return;
    }
    if (word == 1) {
        memset(d, (int)(fill & 0xFF), (size_t)n);
        return;
    }
    size_t bytes = (size_t)(n * word), i = 0;
    if (bytes <= 64) { /* (a few words: 8 bytes at a time, no call) */
        for (; i + 8 <= bytes; i += 8) memcpy(d + i, &fill8, 8);
        for (; i < bytes; i += (size_t)word) memcpy(d + i, &fill8, (size_t)word);
        return;
    }
    uint64_t pattern[8];
    for (int k = 0; k < 8; k++) pattern[k] = fill8;
    for (; i + sizeof pattern <= bytes; i += sizeof pattern) memcpy(d + i, pattern, sizeof pattern);
    memcpy(d + i, pattern, bytes - i);
}

/* The unit's inner axes from `axis` on, from x to d. */
static void masked_unit(const mbox_t *b, int axis, char *d, const char *x)
{
    Py_ssize_t n = b->shape[axis], st = b->strides[axis];
    if (axis + 1 < b->ndim) {
        for (Py_ssize_t k = 0; k < n; k++) masked_unit(b, axis + 1, d + k * st, x + k * st);
        return;
    }
    if (b->keep == 0) {
        masked_fill(d, n, st, b->word, b->fill, b->fill8);
        return;
    }
    if (st == b->word) { /* contiguous: as bytes, the masks repeated */
#if HAVE_AVX2_DISPATCH
        if (masked_avx2 < 0) masked_avx2 = __builtin_cpu_supports("avx2") != 0;
        if (masked_avx2) {
            Py_ssize_t done = masked_bytes_avx2(d, x, n * st, b->keep8, b->fill8) / st;
            d += done * st;
            x += done * st;
            n -= done;
        }
#endif
    }
    switch (b->word) {
    case 1: masked_run_uint8_t(d, x, n, st, (uint8_t)b->keep, (uint8_t)b->fill); break;
    case 2: masked_run_uint16_t(d, x, n, st, (uint16_t)b->keep, (uint16_t)b->fill); break;
    case 4: masked_run_uint32_t(d, x, n, st, (uint32_t)b->keep, (uint32_t)b->fill); break;
    default: masked_run_uint64_t(d, x, n, st, b->keep, b->fill); break;
    }
}

/* Step box b's next unit n on (start -1 after the last). */
static void masked_next(const mbox_t *b, mnext_t *n)
{
    int k = b->outer - 1;
    for (; k >= 0; k--) {
        if (++n->idx[k] < b->shape[k]) break;
        n->idx[k] = 0;
    }
    if (k < 0) {
        n->start = -1;
        return;
    }
    Py_ssize_t at = b->off;
    for (int j = 0; j < b->outer; j++) at += n->idx[j] * b->strides[j];
    n->start = at;
}

/* A copy through the cache in vector moves of 64 bytes, not glibc's memcpy: that moves 2 KiB or
 * more by `rep movsb` (and GCC inlines a fixed 1 KiB as `rep movsq`), which crawls where source
 * and destination share their offsets in a page, as a buffer copied onto the same layout does
 * (f16[3519,1016]{1,0:T(2,128)(2,1)} to itself, 4 KiB between its units: 400-740 us against
 * 200-245 us for the copy of it whole). */
static void masked_move(char *d, const char *s, Py_ssize_t bytes)
{
    Py_ssize_t i = 0;
#if HAVE_STREAM
    for (; i + 64 <= bytes; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(s + i)), b = _mm_loadu_si128((const __m128i *)(s + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(s + i + 32)), e = _mm_loadu_si128((const __m128i *)(s + i + 48));
        _mm_storeu_si128((__m128i *)(d + i), a);
        _mm_storeu_si128((__m128i *)(d + i + 16), b);
        _mm_storeu_si128((__m128i *)(d + i + 32), c);
        _mm_storeu_si128((__m128i *)(d + i + 48), e);
    }
#endif
    if (i < bytes) memcpy(d + i, s + i, (size_t)(bytes - i));
}


/* Copy the `nbytes` of s into d, each box's words written as (word & keep) | fill: the units in
 * the order of their first bytes (a box's units rise; the boxes merged), the copy run up to each. */
static void masked_copy(char *d, const char *s, Py_ssize_t nbytes, const mbox_t *boxes, int count)
{
    mnext_t next[MASKED_MAX_BOXES];
    for (int k = 0; k < count; k++) {
        memset(&next[k], 0, sizeof next[k]);
        next[k].start = boxes[k].off;
    }
    Py_ssize_t done = 0; /* every byte below is final, every unit so far written below it */
    for (;;) {
        int i = -1;
        for (int k = 0; k < count; k++)
            if (next[k].start >= 0 && (i < 0 || next[k].start < next[i].start)) i = k;
        if (i < 0) break;
        const mbox_t *b = &boxes[i];
        Py_ssize_t start = next[i].start, end = start + b->extent;
        if (start >= done && b->dense) { /* its words cover it: written once, from the source */
            if (start > done) masked_move(d + done, s + done, start - done);
            masked_unit(b, b->outer, d + start, s + start);
        } else { /* copied first (what is not yet), then its words over the copy */
            if (end > done) masked_move(d + done, s + done, end - done);
            masked_unit(b, b->outer, d + start, d + start);
        }
        if (end > done) done = end;
        masked_next(b, &next[i]);
    }
    if (nbytes > done) masked_move(d + done, s + done, nbytes - done);
}

/* One box (offset, shape, strides, outer, word, keep, fill), checked inside [0, nbytes). */
static int masked_read_box(PyObject *box, mbox_t *b, Py_ssize_t nbytes)
{
    PyObject *shape, *strides;
    unsigned long long keep, fill;
    if (!PyArg_ParseTuple(box, "nO!O!iiKK:masked_copy box", &b->off, &PyTuple_Type, &shape, &PyTuple_Type,
                          &strides, &b->outer, &b->word, &keep, &fill))
        return -1;
    Py_ssize_t n = PyTuple_GET_SIZE(shape);
    if (n < 1 || n > MAX_DIMS || PyTuple_GET_SIZE(strides) != n || b->outer < 0 || b->outer >= n
        || b->outer > MASKED_MAX_OUTER
        || (b->word != 1 && b->word != 2 && b->word != 4 && b->word != 8)) {
        PyErr_SetString(PyExc_ValueError, "masked_copy: a box is (offset, shape, strides, outer < ndim, "
                                          "word 1/2/4/8, keep, fill)");
        return -1;
    }
    b->ndim = (int)n;
    if (read_ints(shape, b->shape, n) || read_ints(strides, b->strides, n)) return -1;
    Py_ssize_t lo, hi, ilo, ihi;
    for (int k = 0; k < b->ndim; k++)
        if (b->shape[k] <= 0 || b->strides[k] < 0 || (k < b->outer && b->strides[k] == 0)) {
            PyErr_SetString(PyExc_ValueError, "masked_copy: a box's extents are positive, strides not "
                                              "negative (outer ones positive)");
            return -1;
        }
    if (span(b->ndim, b->shape, b->strides, b->word, &lo, &hi) < 0 || !inside(b->off, lo, hi, 0, nbytes)
        || span(b->ndim - b->outer, b->shape + b->outer, b->strides + b->outer, b->word, &ilo, &ihi) < 0) {
        PyErr_SetString(PyExc_IndexError, "masked_copy: a box leaves the arrays");
        return -1;
    }
    b->keep = keep;
    b->fill = fill;
    b->keep8 = masked_repeat(keep, b->word);
    b->fill8 = masked_repeat(fill, b->word);
    b->extent = ihi;
    b->dense = b->ndim - b->outer == 1 && b->strides[b->ndim - 1] == b->word;
    return 0;
}

#endif
