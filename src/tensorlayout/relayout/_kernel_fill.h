/* _kernel_fill.h: tasks that fill the padding behind their data as they go (a task's `tail`).
 *
 * A to_physical copy into a buffer with padding filled the padding first (the whole buffer,
 * when much of it is padding: one memset), then copied. Where the padding lies between the
 * steps of a task's first axis (a (4,1) sub-tile of 4 logical rows in an 8-row tile: 512 bytes
 * of data, then 512 of padding, tile after tile), the destination was written twice, and
 * the copy's stores went to lines the memset had pushed out of L2. A tailed task writes each
 * step's data, then at once the `tail` bytes behind it with one byte: the destination is
 * written once, in order. Harness, u8[4,262144]{1,0:T(8,128)(4,1)} to_physical, one thread,
 * ratio to a 1 MiB memcpy: memset of the buffer then the weave 2.2-2.4x, the weave with each
 * tile's tail 1.6x; the tails of 8 or 32 tiles after their data 2.0x and 4.2x (the
 * destination then no longer written in order), non-temporal stores 1.8x.
 *
 * Self-contained (include guard): it includes the loop nest and the tasks' copy_plan. */
#ifndef TENSORLAYOUT_KERNEL_FILL_H
#define TENSORLAYOUT_KERNEL_FILL_H
#include "_kernel_gather.h"

/* The plan of step i of p's first axis: p without that axis, from the step's first bytes. */
static inline void step_plan(const plan_t *p, plan_t *q, Py_ssize_t i)
{
    *q = *p;
    q->ndim = p->ndim - 1;
    q->tail_bytes = 0;
    memmove(q->shape, p->shape + 1, sizeof q->shape[0] * (size_t)q->ndim);
    memmove(q->ds, p->ds + 1, sizeof q->ds[0] * (size_t)q->ndim);
    memmove(q->ss, p->ss + 1, sizeof q->ss[0] * (size_t)q->ndim);
    q->dst = p->dst + i * p->ds[0];
    q->src = p->src + i * p->ss[0];
}

/* The tail of step i: tail_bytes of tail_byte from tail_at past the step's first byte. */
static inline void fill_tail(const plan_t *p, Py_ssize_t i)
{
    memset(p->dst + i * p->ds[0] + p->tail_at, p->tail_byte, (size_t)p->tail_bytes);
}

/* Steps of at most this many bytes of data share one choice of inner loop (copy_nest, no
 * gathering: a step's data is in L1 anyway); larger ones each take copy_plan's choices. */
#define TAIL_NEST_BYTES 16384

/* A tailed task (read_task checked its tails inside the destination): the steps of its first
 * axis in turn, each step's data and then its tail. A step that is one weave (the (4,1)
 * sub-tile's groups) calls it directly: ~17 ns a 512-byte step leave no room for copy_nest's
 * set-up per step. */
static void copy_tailed(const plan_t *p)
{
    plan_t q;
    step_plan(p, &q, 0);
    Py_ssize_t bytes = q.item;
    for (int k = 0; k < q.ndim; k++) bytes *= q.shape[k];
    if (q.ndim == 0 || q.stream || bytes > TAIL_NEST_BYTES) { /* (streamed: copy_plan's stores) */
        for (Py_ssize_t i = 0; i < p->shape[0]; i++) {
            step_plan(p, &q, i);
            if (q.ndim == 0)
                memcpy(q.dst, q.src, (size_t)q.item);
            else
                copy_plan(&q);
            fill_tail(p, i);
        }
        return;
    }
    inner_t in = choose_inner(&q);
    if (in.kind == K_RUN && q.ndim >= 2) in.inner = 2; /* (as run_inner) */
    const int outer = q.ndim - in.inner, last = q.ndim - 1;
    const int direct = outer == 0 && in.kind == K_WEAVE;
    for (Py_ssize_t i = 0; i < p->shape[0]; i++) {
        char *d = p->dst + i * p->ds[0];
        const char *s = p->src + i * p->ss[0];
        if (direct)
            in.weave(d, s, q.shape[last - 1], q.ss[last]);
        else
            copy_nest(&q, &in, outer, d, s, q.shape);
        fill_tail(p, i);
    }
}

#endif
