/* _task.h: reading and bounding the tasks of relayout's C kernels, shared by _kernel.c (strided
 * copies) and _pack.c (sub-byte packing). A task names a strided box by an offset, a shape and
 * strides (Python ints); before a kernel touches memory it checks that the box lies inside
 * the arrays it reads and writes. Every sum and product here is checked against overflow:
 * offsets, shapes and strides come from Python and may be anything a Py_ssize_t holds.
 *
 *   read_ints   the items of a tuple as Py_ssize_t (the caller checked its length);
 *   span        [lo, hi): the units a strided box touches, relative to its first unit
 *               (hi - lo <= PY_SSIZE_T_MAX / 4, else -1);
 *   array_span  the same for a whole exported array (empty: lo == hi);
 *   inside      off + [lo, hi) lies inside [blo, bhi), computed without overflow.
 *
 * Self-contained: include it anywhere after nothing or anything (include guard). */
#ifndef TENSORLAYOUT_TASK_H
#define TENSORLAYOUT_TASK_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define TASK_SPAN_LIMIT (PY_SSIZE_T_MAX / 4) /* a box spans at most this many units */

/* The n items of the tuple seq into out; -1 with an error set if one is not an int that fits. */
static inline int read_ints(PyObject *seq, Py_ssize_t *out, Py_ssize_t n)
{
    for (Py_ssize_t k = 0; k < n; k++) {
        out[k] = PyLong_AsSsize_t(PyTuple_GET_ITEM(seq, k));
        if (out[k] == -1 && PyErr_Occurred()) return -1;
    }
    return 0;
}

/* [lo, hi): the units a box of `shape` and `strides` (in units) touches relative to its first
 * one, each element `unit` units wide (an item's bytes, or 1 slot); 0, or -1 if the extent
 * passes TASK_SPAN_LIMIT. Axes of extent 1 or less add nothing (the caller skips empty boxes). */
static inline int span(int ndim, const Py_ssize_t *shape, const Py_ssize_t *strides, Py_ssize_t unit,
                       Py_ssize_t *lo, Py_ssize_t *hi)
{
    *lo = 0;
    *hi = unit;
    if (unit < 0 || unit > TASK_SPAN_LIMIT) return -1;
    for (int k = 0; k < ndim; k++) {
        Py_ssize_t n = shape[k] - 1, st = strides[k];
        if (n <= 0 || st == 0) continue;
        if (st == PY_SSIZE_T_MIN) return -1;
        if (st < 0) st = -st;
        if (st > TASK_SPAN_LIMIT / n || n * st > TASK_SPAN_LIMIT - (*hi - *lo)) return -1;
        if (strides[k] < 0) *lo -= n * st; else *hi += n * st;
    }
    return 0;
}

/* The bytes an exported array spans from its first element (empty: [0, 0)); -1 if too large. */
static inline int array_span(const Py_buffer *v, Py_ssize_t *lo, Py_ssize_t *hi)
{
    for (int k = 0; k < v->ndim; k++)
        if (v->shape[k] == 0) {
            *lo = *hi = 0;
            return 0;
        }
    return span(v->ndim, v->shape, v->strides, v->itemsize, lo, hi);
}

/* off + [lo, hi) lies inside [blo, bhi) (lo <= 0 < hi, blo <= 0 <= bhi, as span gives them),
 * computed without overflow for any off. */
static inline int inside(Py_ssize_t off, Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t blo, Py_ssize_t bhi)
{
    return off >= blo && off <= bhi && hi <= bhi - off && -lo <= off - blo;
}

#endif
