/* _kernel_plan.h: what every part of the copy kernel (_kernel.c) shares: the platform's
 * vector and streaming support, the size limits, the non-temporal copy of a contiguous run,
 * and plan_t, one task's strided box as the loops run it.
 * Self-contained (include guard); the parts include it through _kernel_loops.h. */
#ifndef TENSORLAYOUT_KERNEL_PLAN_H
#define TENSORLAYOUT_KERNEL_PLAN_H
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

/* Copy `bytes` to d, a run with gaps on both sides: non-temporal stores on its whole 64-byte
 * lines, plain ones on the partial lines at either end. A partial line streamed leaves its
 * write-combining buffer part full, which is flushed as a partial write costing about a
 * line's round trip to memory (stream_out's runs are followed by the rest of their lines):
 * f32[4,81,3071]{1,0,2:T(1,128)} -> {1,0,2:T(8,128)}, 324-byte runs 512 bytes apart, one
 * thread, 4.3x a copy with each run's last 4 bytes streamed, 1.1x with them stored. Only for
 * runs that end inside a line whatever their start: runs of whole lines off the lines of
 * numpy's arrays (which start 16 bytes past one) share their partial lines with the next
 * runs, which stream the rest soon after (s32[1024,8,256]{2,1,0:T(2,128)} from_physical,
 * 512-byte runs, 0.8x a copy streamed whole, 2.0x here). */
static void stream_lines(char *d, const char *s, size_t bytes)
{
#if HAVE_STREAM
    size_t head = (size_t)(-(uintptr_t)d & 63);
    if (bytes >= head + 64) {
        size_t end = head + (bytes - head) / 64 * 64;
        memcpy(d, s, head);
        for (size_t i = head; i < end; i += 16)
            _mm_stream_si128((__m128i *)(d + i), _mm_loadu_si128((const __m128i *)(s + i)));
        memcpy(d + end, s + end, bytes - end);
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
    int gaps_ours;        /* a partial weave may rewrite the other items of its groups with the
                           * values they hold: the call's tasks run in turn on one thread, and
                           * dst is a physical buffer whose gaps are padding, filled before */
    const char *slo, *shi; /* the source bytes the task may touch (prefetches stay inside) */
    char *dlo, *dhi;      /* ... and the destination bytes */
    Py_ssize_t dst_bytes; /* the span of the array the stores go to: the call's destination (0: a
                           * stage). The size rules for streamed stores (RUN_STREAM_SPAN, ...) ask
                           * whether the call's destination outgrows the cache, which a thread's
                           * piece of it does not tell: judged on its pieces, s32[1325,5173]
                           * {0,1:T(2,128)} -> {0,1:T(4,128)} (28 MiB) took 1.17x a copy on two
                           * threads against 0.81x on one; judged on the call, 0.69x. */
    Py_ssize_t item;
    Py_ssize_t unit;      /* the arrays' item size (item may be a task's wider one) */
    Py_ssize_t tail_at, tail_bytes; /* > 0: after each step of axis 0, tail_bytes of tail_byte from */
    int tail_byte;                  /* tail_at past the step's first byte (_kernel_fill.h) */
    int tail_axis;                  /* ... of this axis (> 0: the axes before it loop outside) */
    Py_ssize_t shape[MAX_DIMS];
    Py_ssize_t ds[MAX_DIMS];
    Py_ssize_t ss[MAX_DIMS];
} plan_t;

/* The odometer over a plan's outer axes outer[0..n-1] (the last the fastest; idx their counters,
 * zeros at the first box): steps *d and *s to the next box; 0 after the last (then they are back
 * at the first). A loop: do box(d, s); while (next_outer(p, outer, n, idx, &d, &s)); */
static inline int next_outer(const plan_t *p, const int *outer, int n, Py_ssize_t *idx, char **d,
                             const char **s)
{
    for (int k = n - 1; k >= 0; k--) {
        int ax = outer[k];
        if (++idx[k] < p->shape[ax]) {
            *d += p->ds[ax];
            *s += p->ss[ax];
            return 1;
        }
        *d -= (p->shape[ax] - 1) * p->ds[ax];
        *s -= (p->shape[ax] - 1) * p->ss[ax];
        idx[k] = 0;
    }
    return 0;
}

#endif
