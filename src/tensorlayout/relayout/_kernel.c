/* The relayout copy kernel: one strided N-d copy, outer loops in the order given.
 *
 * copy(dst, src, tasks, stream, workers) copies strided boxes of the array src into the array dst
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
 * A task may declare wider items: runs of 2, 4 or 8 bytes contiguous on both sides moved as
 * one item (a (2,1) sub-tile's pair against a transposed tiling: then a transpose of 4-byte
 * items), at any alignment (the pairs of a bf16 array of odd rows start 2 bytes off a 4-byte
 * boundary): items are only ever moved through memcpy or unaligned vector loads and stores.
 *
 * A task may declare its items swapped units: 2 x 2 blocks of the arrays' 1- or 2-byte
 * items, moved whole and written as [a, c, b, d] (a (2,1) sub-tile read as its transpose's;
 * relayout between the two in one pass). Their transposes run the same tiles with the
 * middle items exchanged in registers.
 *
 * Large (streamed) copies whose destination rows run on over an outer axis in pieces
 * shorter than a line (reading a transposing tile or a zN fractal into logical rows) are
 * gathered: those loops fill an L1 stage a few pieces per row at a time, the source read
 * ahead, and whole destination lines go out past the cache (see "gathering" below); so are
 * transposes held in cache whose destination rows share L1 sets (stored, not streamed).
 * Large copies of 16- to 48-byte runs into contiguous blocks from source rows that run on
 * (zN into its buffer) read a few runs of each row at once into L1 blocks streamed out
 * whole (see "staged short runs").
 *
 * The GIL is released while copying. A call may share its tasks with the kernel's own threads
 * (workers > 1), which claim them one at a time (_pool.h).
 *
 * One translation unit in parts: _kernel_loops.h (innermost loops), _kernel_tiles.h
 * (vector transposes), _kernel_strips.h (transposes over a third axis), _kernel_gather.h
 * (gathering and staged runs), _pool.h (the kernel's threads, shared with _pack.c) and _kernel_small.h
 * (remembered small calls) are included here; this file holds the plan, the outer loops and
 * the Python entry points.
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
    char *dlo, *dhi;      /* ... and the destination bytes */
    Py_ssize_t item;
    Py_ssize_t shape[MAX_DIMS];
    Py_ssize_t ds[MAX_DIMS];
    Py_ssize_t ss[MAX_DIMS];
} plan_t;

#include "_kernel_loops.h"
#include "_kernel_tiles.h"
#include "_kernel_strips.h"

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
                transpose_streamed(p, d, s, ng, na, nb, dg, da, sg, sb, in->lg);
            else
                transpose_rows_ahead(p, d, s, ng, na, nb, dg, da, sg, sb, in->lg);
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
static void run_inner(const plan_t *p, inner_t in)
{
    if (in.kind == K_RUN && p->ndim >= 2) in.inner = 2; /* a run loop covers the axis before it */
    copy_nest(p, &in, p->ndim - in.inner, p->dst, p->src, p->shape);
}

static void run_plan(const plan_t *p)
{
    run_inner(p, choose_inner(p));
}

static int span(int ndim, const Py_ssize_t *shape, const Py_ssize_t *strides, Py_ssize_t item,
                Py_ssize_t *lo, Py_ssize_t *hi);
#include "_kernel_gather.h"
#include "_pool.h"

/* One task: a single item (no axes), its box, or nothing (an empty box: ndim -1). */
static void copy_task(const plan_t *p)
{
    if (p->ndim == 0)
        memcpy(p->dst, p->src, (size_t)p->item);
    else if (p->ndim > 0)
        copy_plan(p);
}

/* Task i of an array of plans (the pool's item). */
static void run_one(void *plans, Py_ssize_t i)
{
    copy_task((const plan_t *)plans + i);
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
    Py_ssize_t doff, soff, wide = 0;
    int swap = 0;
    if (!PyArg_ParseTuple(task, "nnO!O!O!|pn", &doff, &soff, &PyTuple_Type, &shape, &PyTuple_Type, &ds,
                          &PyTuple_Type, &ss, &swap, &wide))
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
    if (wide > p->item) /* at any alignment: the typed loops move items through memcpy, the vector
                         * loops load and store unaligned, streamed stores check their addresses */
        p->item = wide;
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
    Py_ssize_t dl, dh; /* the bytes the task may touch in each array (prefetches stay inside) */
    if (span(p->ndim, p->shape, p->ds, p->item, &dl, &dh) < 0 || doff + dl < dlo || doff + dh > dhi) {
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
    p->dlo = p->dst + dl;
    p->dhi = p->dst + dh;
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
    int stream = 0, workers = 1;
    if (!PyArg_ParseTuple(args, "OOO!|pi:copy", &dst_obj, &src_obj, &PyList_Type, &tasks, &stream, &workers))
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
    pool_run(run_one, plans, count, workers, stream && HAVE_STREAM);
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    PyMem_Free(plans);
    PyBuffer_Release(&dv);
    PyBuffer_Release(&sv);
    return result;
}

/* the remembered small calls (_kernel_small.h, included at the end) */
static PyObject *kernel_small_call(PyObject *self, PyObject *args);
static PyObject *kernel_to_physical_small(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
static PyObject *kernel_from_physical_small(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
static PyObject *kernel_setup_small(PyObject *self, PyObject *args);

static PyMethodDef methods[] = {
    {"copy", kernel_copy, METH_VARARGS,
     "copy(dst, src, tasks, stream=False, workers=1): for each task (dst_offset, src_offset, shape, "
     "dst_strides, src_strides[, swap[, item]]), in bytes from each array's first element, copy "
     "that strided box of src into dst, outer axes in the order given; every box is checked to "
     "lie inside both arrays. swap: the box's items are 2 x 2 blocks [a, b, c, d] of the arrays' "
     "1- or 2-byte items, written as [a, c, b, d]. item: the box's items are runs of this many "
     "bytes (2, 4 or 8; 0: the arrays' item size). stream: non-temporal stores where dst is "
     "contiguous. workers: the calling thread and up to workers - 1 of the kernel's threads claim "
     "the tasks one at a time (they must write disjoint bytes)."},
    POOL_INFO_METHOD,
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
#include "_kernel_small.h"
