/* _kernel_ahead.h: fetching a blocked transpose's next source lines ahead, where its source rows
 * are too far apart for the prefetchers to follow (each row a stream visited a line at a time).
 * Self-contained (include guard); _kernel_tiles.h uses it. */
#ifndef TENSORLAYOUT_KERNEL_AHEAD_H
#define TENSORLAYOUT_KERNEL_AHEAD_H
#include "_kernel_plan.h"

/* Whether the source rows of a transpose are far enough apart that the prefetchers do not follow
 * them (one stream a row, each visited a line at a time): then each block fetches its rows' next
 * lines, which the next block along a reads (f64[256,2048]{0,1:T(1,128)} to_physical, rows
 * 16 KiB apart, one thread: 2.7 -> 2.0x a copy). */
static inline int far_source_rows(Py_ssize_t sb)
{
    return sb >= 2048 || sb <= -2048;
}

/* The next block's lines of source rows [b, be) (at item a of each, a inside the transpose, whose
 * rows end at a1): for 4-byte items FETCH_AHEAD_BYTES further on where the rows reach that far,
 * the next block's own lines being fetched too late there (u32[118,26884]{0,1:T(2,128)}
 * to_physical, 118 rows 105 KiB apart, one thread, the kernel alone, alternating in one process,
 * over a copy: 4.4-4.8 -> 3.8-3.9; f32[2,5,94,925]{2,3,0,1:T(1,128)} to 2.5-2.9 -> 1.9-2.1;
 * f32[4,81,3071]{1,0,2:T(1,128)} to 2.7 -> 2.3; unclamped, the rows that end sooner lost up
 * to a third). */
#define FETCH_AHEAD_BYTES 512
static inline void fetch_next_block(const char *s, Py_ssize_t a, Py_ssize_t b, Py_ssize_t be, Py_ssize_t sb,
                                    Py_ssize_t it, Py_ssize_t a1)
{
#if HAVE_STREAM
    if (it == 4 && a + FETCH_AHEAD_BYTES / 4 < a1) a += FETCH_AHEAD_BYTES / 4;
    for (Py_ssize_t j = b; j < be; j++) _mm_prefetch(s + a * it + j * sb, _MM_HINT_T0);
#else
    (void)s, (void)a, (void)b, (void)be, (void)sb, (void)it, (void)a1;
#endif
}

#endif
