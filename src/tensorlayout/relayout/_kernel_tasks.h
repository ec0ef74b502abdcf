/* _kernel_tasks.h: the copy kernel's tasks: read from Python and checked (read_task, through the
 * shared bounds of _task.h), and run (copy_task: one item, a box through copy_plan, or nothing).
 * Self-contained (include guard). */
#ifndef TENSORLAYOUT_KERNEL_TASKS_H
#define TENSORLAYOUT_KERNEL_TASKS_H
#include "_task.h"
#include "_kernel_fill.h"
#include "_kernel_bytes_stage.h"
#include "_kernel_bytes_rows.h"
#include "_kernel_pairs_split.h"
#include "_kernel_far.h"
#include "_kernel_chains.h"

/* A tailed task whose steps are each one run contiguous on both sides (a one-pass relayout
 * between equal tilings: 256 bytes of data, then 256 of padding, tile row after tile row):
 * one copy and one fill per step, without copy_tailed's set-up per step (which made
 * bf16[64,64,64,4]{0,3,1,2:T(4,128)(2,1)} to itself 1.9x slower than its fill and copy). */
static int copy_run_tails(const plan_t *p)
{
    if (p->ndim != 2 || p->swap || p->stream || p->ds[1] != p->item || p->ss[1] != p->item) return 0;
    const size_t run = (size_t)(p->shape[1] * p->item), tail = (size_t)p->tail_bytes;
    for (Py_ssize_t i = 0; i < p->shape[0]; i++) {
        char *d = p->dst + i * p->ds[0];
        memcpy(d, p->src + i * p->ss[0], run);
        memset(d + p->tail_at, p->tail_byte, tail);
    }
    return 1;
}

/* A tailed task whose tail follows the steps of a later axis (tail_axis > 0: a tile of 16 rows
 * of 256 bytes of data and 256 of padding each, s32[16,512,64]{2,0,1:T(2,128)}): the axes
 * before it in turn, outermost first, then each step of that axis and its tail. */
static void copy_tail_axes(const plan_t *p)
{
    if (p->tail_axis == 0) {
        if (!copy_run_tails(p)) copy_tailed(p);
        return;
    }
    plan_t q;
    for (Py_ssize_t i = 0; i < p->shape[0]; i++) {
        step_plan(p, &q, i);
        q.tail_bytes = p->tail_bytes;
        q.tail_axis = p->tail_axis - 1;
        copy_tail_axes(&q);
    }
}

/* A box (no tail) by the first path that takes it. */
static void copy_box(const plan_t *p)
{
    if (!chains_transpose(p) && !bytes_staged(p) && !quad_rows(p) && !pairs_split(p)) copy_plan(p);
}

/* One task: a single item (no axes), its box (through a stage of far rows: _kernel_far.h), or
 * nothing (an empty box: ndim -1). */
static void copy_task(const plan_t *p)
{
    if (p->ndim == 0)
        memcpy(p->dst, p->src, (size_t)p->item);
    else if (p->ndim > 0 && p->tail_bytes > 0)
        copy_tail_axes(p);
    else if (p->ndim > 0 && !far_staged(p, copy_box))
        copy_box(p);
}

/* Task i of an array of plans (the pool's item). */
static void run_one(void *plans, Py_ssize_t i)
{
    copy_task((const plan_t *)plans + i);
}

/* A task's tail (at, bytes, byte[, axis]): after each step of its first axis (or of `axis`, the
 * axes before it looping outside), `bytes` bytes of `byte` from `at` past the step's first byte
 * (_kernel_fill.h); checked inside the destination for every step, as the box is. */
static int read_tail(PyObject *tail, plan_t *p, Py_ssize_t doff, Py_ssize_t dlo, Py_ssize_t dhi)
{
    Py_ssize_t at, bytes, off, lo, hi;
    int byte, axis = 0;
    if (!PyArg_ParseTuple(tail, "nni|i:copy tail", &at, &bytes, &byte, &axis)) return -1;
    if (p->ndim < 1 || at < 0 || bytes < 0 || byte < 0 || byte > 255 || axis < 0 || axis >= p->ndim) {
        PyErr_SetString(PyExc_ValueError, "copy: a tail is (at >= 0, bytes >= 0, a byte[, an axis]) behind "
                                          "an axis of the box");
        return -1;
    }
    if (bytes == 0) return 0;
    if (__builtin_add_overflow(doff, at, &off) || span(axis + 1, p->shape, p->ds, bytes, &lo, &hi) < 0
        || !inside(off, lo, hi, dlo, dhi)) {
        PyErr_SetString(PyExc_IndexError, "copy: a task's tail leaves the destination array");
        return -1;
    }
    p->tail_at = at;
    p->tail_bytes = bytes;
    p->tail_byte = byte;
    p->tail_axis = axis;
    return 0;
}

/* The task p (its shape, strides and item read) at doff in dv's buffer and soff in sv's: checked
 * to stay inside both arrays ([dlo, dhi) and [slo, shi)), its pointers and bounds set. */
static int place_task(plan_t *p, const Py_buffer *dv, const Py_buffer *sv, Py_ssize_t doff, Py_ssize_t soff,
                      Py_ssize_t dlo, Py_ssize_t dhi, Py_ssize_t slo, Py_ssize_t shi)
{
    Py_ssize_t dl, dh, lo, hi; /* the bytes the task may touch in each array (prefetches stay inside) */
    if (span(p->ndim, p->shape, p->ds, p->item, &dl, &dh) < 0 || !inside(doff, dl, dh, dlo, dhi)) {
        PyErr_SetString(PyExc_IndexError, "copy: a task leaves the destination array");
        return -1;
    }
    if (span(p->ndim, p->shape, p->ss, p->item, &lo, &hi) < 0 || !inside(soff, lo, hi, slo, shi)) {
        PyErr_SetString(PyExc_IndexError, "copy: a task leaves the source array");
        return -1;
    }
    p->dst = (char *)dv->buf + doff;
    p->src = (const char *)sv->buf + soff;
    p->slo = p->src + lo;
    p->shi = p->src + hi;
    p->dlo = p->dst + dl;
    p->dhi = p->dst + dh;
    p->dst_bytes = dhi - dlo; /* (the array's, not the task's) */
    return 0;
}

/* One task: (dst byte offset, src byte offset, shape, dst strides, src strides[, swap[, item[, tail]]]),
 * checked to stay inside both arrays ([dlo, dhi) and [slo, shi): their array_span), whatever
 * its numbers (_task.h). */
static int read_task(PyObject *task, plan_t *p, const Py_buffer *dv, const Py_buffer *sv,
                     Py_ssize_t dlo, Py_ssize_t dhi, Py_ssize_t slo, Py_ssize_t shi)
{
    PyObject *shape, *ds, *ss;
    PyObject *tail = Py_None;
    Py_ssize_t doff, soff, wide = 0;
    int swap = 0;
    if (!PyArg_ParseTuple(task, "nnO!O!O!|pnO", &doff, &soff, &PyTuple_Type, &shape, &PyTuple_Type, &ds,
                          &PyTuple_Type, &ss, &swap, &wide, &tail))
        return -1;
    if (swap && dv->itemsize != 1 && dv->itemsize != 2) {
        PyErr_SetString(PyExc_ValueError, "copy: swapped units are of 1- or 2-byte items");
        return -1;
    }
    if (wide && (swap || log2_small(wide) < 0 || wide % dv->itemsize)) {
        PyErr_SetString(PyExc_ValueError, "copy: a task's item size is 1, 2, 4 or 8 bytes, a multiple of "
                                          "the arrays' (and not with swapped units)");
        return -1;
    }
    p->gaps_ours = 0; /* (the caller says when the gaps are its padding) */
    p->tail_bytes = 0;
    p->tail_axis = 0;
    Py_ssize_t n = PyTuple_GET_SIZE(shape);
    if (n > MAX_DIMS || PyTuple_GET_SIZE(ds) != n || PyTuple_GET_SIZE(ss) != n) {
        PyErr_SetString(PyExc_ValueError, "copy: a task's shape and strides differ in length");
        return -1;
    }
    p->ndim = (int)n;
    p->swap = swap;
    p->item = swap ? 4 * dv->itemsize : dv->itemsize;
    p->unit = dv->itemsize;
    if (read_ints(shape, p->shape, n) || read_ints(ds, p->ds, n) || read_ints(ss, p->ss, n))
        return -1;
    if (wide > p->item) /* at any alignment: the typed loops move items through memcpy, the vector
                         * loops load and store unaligned, streamed stores check their addresses */
        p->item = wide;
    if (n == 0 && swap) { /* one unit, as a 1-axis box */
        p->ndim = 1;
        p->shape[0] = 1;
        p->ds[0] = p->ss[0] = p->item;
    }
    for (Py_ssize_t k = 0; k < n; k++)
        if (p->shape[k] <= 0) {
            p->ndim = -1; /* nothing to copy */
            return 0;
        }
    if (place_task(p, dv, sv, doff, soff, dlo, dhi, slo, shi) < 0) return -1;
    return tail != Py_None ? read_tail(tail, p, doff, dlo, dhi) : 0;
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

#endif
