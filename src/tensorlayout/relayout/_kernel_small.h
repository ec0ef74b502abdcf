/* _kernel_small.h: the remembered small calls (to_physical_small / from_physical_small) and
 * the engine's settings they obey.
 * Self-contained (include guard): it includes the tasks it reads and runs. */
#ifndef TENSORLAYOUT_KERNEL_SMALL_H
#define TENSORLAYOUT_KERNEL_SMALL_H
#include "_kernel_tasks.h"
#include "_kernel_masked.h"

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
 * Python path, which plans, remembers and raises the errors. The engine's switches and what a
 * call needs of Python (numpy's ndarray type, the allocator) come in one settings struct,
 * set by configure() whenever _copy.py changes one: C reads no module's globals. */

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
    Py_ssize_t nmasked;                /* > 0: a masked copy of src whole into dst (no tasks, no fills) */
    mbox_t *masked;                    /* ... its boxes (_kernel_masked.h) */
} small_call_t;

/* The engine's settings (_copy.Settings), as configure() last set them. */
typedef struct {
    int use_kernel;                     /* small calls run at all (USE_KERNEL, and this kernel in use) */
    long long thread_min, stream_min;   /* ... for copies of fewer bytes than both */
    long long one_thread_small;         /* ... or, on one thread, fewer than this and stream_min */
    PyObject *allocate;                 /* allocate(shape, dtype, target): a new result */
    PyObject *ndarray;                  /* numpy's ndarray type: the only arrays small calls take */
} settings_t;

static settings_t settings; /* all off until configured */
static PyObject *s_dtype, *s_small_calls; /* attribute names of arrays and targets */

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
    PyMem_Free(c->masked);
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

/* The masked copy of a small call: src (C-contiguous, as long as dst) copied whole into dst, the
 * boxes (as masked_copy takes them) written as it goes; no tasks, no fills. */
static int read_masked(small_call_t *c, PyObject *boxes, const Py_buffer *dv, const Py_buffer *sv)
{
    c->nmasked = PyList_GET_SIZE(boxes);
    if (c->count || c->nfill || !c->nmasked || c->nmasked > MASKED_MAX_BOXES || dv->len != sv->len
        || !is_c_contiguous(dv) || !is_c_contiguous(sv)) {
        PyErr_SetString(PyExc_ValueError, "small_call: a masked copy has boxes, no tasks nor fills, and "
                                          "C-contiguous arrays of one length");
        return -1;
    }
    c->masked = PyMem_Calloc((size_t)c->nmasked, sizeof(mbox_t));
    if (c->masked == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < c->nmasked; i++)
        if (masked_read_box(PyList_GET_ITEM(boxes, i), &c->masked[i], dv->len) < 0) return -1;
    c->dmin = c->smin = 0;
    c->dmax = c->smax = dv->len;
    return 0;
}

/* A small call of `count` tasks, zeroed (NULL: out of memory, the error set). */
static small_call_t *small_call_new(Py_ssize_t count)
{
    size_t n = (size_t)(count ? count : 1);
    small_call_t *c = PyMem_Calloc(1, sizeof(small_call_t));
    if (c == NULL || (c->plans = PyMem_Calloc(n, sizeof(plan_t))) == NULL
        || (c->doff = PyMem_Calloc(n, sizeof(Py_ssize_t))) == NULL
        || (c->soff = PyMem_Calloc(n, sizeof(Py_ssize_t))) == NULL) {
        small_call_delete(c);
        PyErr_NoMemory();
        return NULL;
    }
    return c;
}

/* The small call keeps (strong references) what a later call is matched against: the dtype,
 * the thread cap, to_physical's pad value, and the shape of a new dst (None: out only). */
static void small_call_keep(small_call_t *c, PyObject *dtype, PyObject *threads, PyObject *pad,
                            PyObject *alloc_shape)
{
    Py_INCREF(dtype);
    c->dtype = dtype;
    Py_INCREF(threads);
    c->threads = threads;
    if (c->to_physical) {
        Py_INCREF(pad);
        c->pad = pad;
    }
    if (alloc_shape != Py_None) {
        Py_INCREF(alloc_shape);
        c->alloc_shape = alloc_shape;
    }
}

/* The small call's tasks read from the list `tasks` over the arrays of its first call (dv,
 * sv), checked as kernel_copy checks them; kept as offsets from each array's first byte, with
 * the bytes they touch ([dmin, dmax), [smin, smax)), since a later call's arrays move. */
static int read_small_tasks(small_call_t *c, PyObject *tasks, const Py_buffer *dv, const Py_buffer *sv)
{
    Py_ssize_t dlo, dhi, slo, shi;
    if (array_span(dv, &dlo, &dhi) < 0 || array_span(sv, &slo, &shi) < 0) {
        PyErr_SetString(PyExc_ValueError, "small_call: array too large");
        return -1;
    }
    for (Py_ssize_t i = 0; i < c->count; i++) {
        plan_t *p = &c->plans[i];
        Py_ssize_t lo, hi;
        if (read_task(PyList_GET_ITEM(tasks, i), p, dv, sv, dlo, dhi, slo, shi) < 0) return -1;
        if (p->ndim < 0) continue;
        c->doff[i] = p->dst - (char *)dv->buf;
        c->soff[i] = p->src - (const char *)sv->buf;
        p->dst = NULL;
        p->src = NULL;
        p->slo = p->shi = NULL; /* set per call, from that call's arrays (run_small) */
        p->dlo = p->dhi = NULL;
        p->stream = 0;
        p->gaps_ours = c->to_physical; /* run_small fills the padding, then runs the tasks in turn */
        span(p->ndim, p->shape, p->ds, p->item, &lo, &hi); /* read_task checked it */
        if (c->doff[i] + lo < c->dmin) c->dmin = c->doff[i] + lo;
        if (c->doff[i] + hi > c->dmax) c->dmax = c->doff[i] + hi;
        span(p->ndim, p->shape, p->ss, p->item, &lo, &hi);
        if (c->soff[i] + lo < c->smin) c->smin = c->soff[i] + lo;
        if (c->soff[i] + hi > c->smax) c->smax = c->soff[i] + hi;
    }
    return 0;
}

/* small_call(dst, src, tasks, to_physical, dtype, threads, pad, fill, nbytes, align, out_given,
 * alloc_shape[, masked]): the small call of the copy `tasks` from src into dst (the arrays of a
 * first call), as kernel_copy checks and runs them; fill: None, or (one item of bytes, boxes of
 * dst it is written to first, as tasks from a source of zero strides); alloc_shape: None, or the
 * shape of a new dst when out is None; masked: None, or the boxes of a masked copy of src whole
 * (then no tasks and no fill; read_masked). */
static PyObject *kernel_small_call(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *dst_obj, *src_obj, *tasks, *dtype, *threads, *pad, *fill, *alloc_shape, *masked = Py_None;
    int to_physical, out_given;
    Py_ssize_t nbytes, align;
    if (!PyArg_ParseTuple(args, "OOO!pOOOOnnpO|O:small_call", &dst_obj, &src_obj, &PyList_Type, &tasks,
                          &to_physical, &dtype, &threads, &pad, &fill, &nbytes, &align, &out_given,
                          &alloc_shape, &masked))
        return NULL;
    Py_buffer dv, sv;
    if (get_buffers(dst_obj, src_obj, &dv, &sv) < 0) return NULL;
    PyObject *capsule = NULL;
    Py_ssize_t count = PyList_GET_SIZE(tasks), dlo, dhi, slo, shi;
    small_call_t *c = small_call_new(count);
    if (c == NULL) goto fail;
    c->to_physical = to_physical;
    c->out_given = out_given;
    c->item = dv.itemsize;
    c->align = align;
    c->nbytes = nbytes;
    c->count = count;
    small_call_keep(c, dtype, threads, pad, alloc_shape);
    if (dv.itemsize != sv.itemsize || dv.ndim > MAX_DIMS || sv.ndim > MAX_DIMS) {
        PyErr_SetString(PyExc_ValueError, "small_call: the arrays differ in item size");
        goto fail;
    }
    copy_dims(&sv, &c->src_ndim, c->src_shape, c->src_strides);
    copy_dims(&dv, &c->dst_ndim, c->dst_shape, c->dst_strides);
    c->dst_len = dv.len;
    if (array_span(&dv, &dlo, &dhi) < 0 || array_span(&sv, &slo, &shi) < 0) {
        PyErr_SetString(PyExc_ValueError, "small_call: array too large");
        goto fail;
    }
    c->dmin = c->smin = PY_SSIZE_T_MAX;
    c->dmax = c->smax = PY_SSIZE_T_MIN;
    if (fill != Py_None && read_fills(c, fill, &dv, dlo, dhi) < 0) goto fail;
    if (masked != Py_None && (!PyList_Check(masked) || read_masked(c, masked, &dv, &sv) < 0)) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "small_call: masked must be a list or None");
        goto fail;
    }
    if (read_small_tasks(c, tasks, &dv, &sv) < 0) goto fail;
    capsule = PyCapsule_New(c, "small_call", small_call_free);
    if (capsule == NULL) goto fail;
    c = NULL;
fail:
    small_call_delete(c);
    PyBuffer_Release(&dv);
    PyBuffer_Release(&sv);
    return capsule;
}

/* The engine's settings allow the small call c (as Prepared.run asks: _copy._small): fewer
 * bytes than both thresholds, or than one_thread_small on one thread (threads= 0 or 1). */
static int engine_allows(const small_call_t *c)
{
    const Py_ssize_t nbytes = c->nbytes;
    if (!settings.use_kernel || nbytes >= settings.stream_min) return 0;
    if (nbytes < settings.thread_min) return 1;
    if (nbytes >= settings.one_thread_small || !PyLong_CheckExact(c->threads)) return 0;
    int over = 0; /* (a cap past a long: many threads, and no exception left set) */
    const long cap = PyLong_AsLongAndOverflow(c->threads, &over);
    return over == 0 && (cap == 0 || cap == 1);
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
    if (array_span(dv, &dlo, &dhi) < 0 || array_span(sv, &slo, &shi) < 0)
        return 0;
    const char *d = dv->buf, *s = sv->buf;
    if (d + dlo < s + shi && s + slo < d + dhi) return 0; /* they overlap */
    return is_aligned(dv, c->align) && is_aligned(sv, c->align) && c->dmin >= dlo && c->dmax <= dhi
           && c->smin >= slo && c->smax <= shi;
}

static void fill_items(char *d, Py_ssize_t n, const unsigned char *one, Py_ssize_t item)
{
    int bytewise = 1; /* one repeated byte (a pad of 0, say): memset, glibc's widest stores */
    for (Py_ssize_t b = 1; b < item && bytewise; b++) bytewise = one[b] == one[0];
    if (bytewise) {
        memset(d, one[0], (size_t)(n * item));
        return;
    }
    switch (item) {
    case 2: { uint16_t v; memcpy(&v, one, 2); for (Py_ssize_t i = 0; i < n; i++) ((uint16_t *)d)[i] = v; return; }
    case 4: { uint32_t v; memcpy(&v, one, 4); for (Py_ssize_t i = 0; i < n; i++) ((uint32_t *)d)[i] = v; return; }
    case 8: { uint64_t v; memcpy(&v, one, 8); for (Py_ssize_t i = 0; i < n; i++) ((uint64_t *)d)[i] = v; return; }
    default: for (Py_ssize_t i = 0; i < n; i++) memcpy(d + i * item, one, (size_t)item);
    }
}

/* bytes (at most 16) of the repeated pad item at d, in fixed-size moves. */
static inline void small_fill(char *d, const unsigned char *pattern, Py_ssize_t bytes)
{
    switch (bytes) {
    case 1: *d = (char)pattern[0]; return;
    case 2: memcpy(d, pattern, 2); return;
    case 4: memcpy(d, pattern, 4); return;
    case 8: memcpy(d, pattern, 8); return;
    case 16: memcpy(d, pattern, 16); return;
    default: memcpy(d, pattern, (size_t)bytes);
    }
}

/* Write the item `one` to every slot of the box p at d: rows of the last axis, the axis before
 * it in a tight loop, rows of 16 bytes or less in fixed-size moves (the missing rows of a
 * ragged (4,1) sub-tile are 2 bytes every 4: a memset each measured 5x a copy of the whole
 * pred[5,50,3838]{2,1,0:T(4,128)(4,1)}). */
static void fill_box(char *d, const plan_t *p, const unsigned char *one)
{
    int last = p->ndim - 1;
    if (last < 0) {
        memcpy(d, one, (size_t)p->item);
        return;
    }
    const Py_ssize_t n = p->shape[last], item = p->item, bytes = n * item;
    const int contiguous = p->ds[last] == item, small = contiguous && bytes <= 16;
    unsigned char pattern[16];
    for (Py_ssize_t b = 0; small && b < bytes; b++) pattern[b] = one[b % item];
    const int outer = last - 1; /* the outer axes; the axis before the last runs inside */
    const Py_ssize_t m = last >= 1 ? p->shape[last - 1] : 1, dm = last >= 1 ? p->ds[last - 1] : 0;
    Py_ssize_t idx[MAX_DIMS] = {0};
    for (;;) {
        char *base = d;
        for (int k = 0; k < outer; k++) base += idx[k] * p->ds[k];
        for (Py_ssize_t i = 0; i < m; i++) {
            char *row = base + i * dm;
            if (small)
                small_fill(row, pattern, bytes);
            else if (contiguous)
                fill_items(row, n, one, item);
            else
                for (Py_ssize_t j = 0; j < n; j++) memcpy(row + j * p->ds[last], one, (size_t)item);
        }
        int k = outer - 1;
        for (; k >= 0 && ++idx[k] == p->shape[k]; k--) idx[k] = 0;
        if (k < 0) return;
    }
}

static void run_small(const small_call_t *c, char *d, const char *s)
{
    if (c->nmasked > 0) {
        masked_copy(d, s, c->dst_len, c->masked, (int)c->nmasked);
        return;
    }
    for (Py_ssize_t i = 0; i < c->nfill; i++)
        if (c->fills[i].ndim >= 0) fill_box(d + c->foff[i], &c->fills[i], c->fill_bytes);
    for (Py_ssize_t i = 0; i < c->count; i++) {
        plan_t p = c->plans[i];
        if (p.ndim < 0) continue;
        p.dst = d + c->doff[i];
        p.src = s + c->soff[i];
        if (p.ndim > 0) { /* the bounds prefetches stay inside, in this call's arrays */
            Py_ssize_t lo, hi;
            span(p.ndim, p.shape, p.ss, p.item, &lo, &hi);
            p.slo = p.src + lo;
            p.shi = p.src + hi;
            span(p.ndim, p.shape, p.ds, p.item, &lo, &hi);
            p.dlo = p.dst + lo;
            p.dhi = p.dst + hi;
        }
        copy_task(&p);
    }
}

/* A new dst for c (the settings' allocate), or NULL (no error set). */
static PyObject *allocated(const small_call_t *c, PyObject *target)
{
    PyObject *alloc = settings.allocate;
    PyObject *dst = alloc == NULL ? NULL : PyObject_CallFunctionObjArgs(alloc, c->alloc_shape, c->dtype, target, NULL);
    PyObject *dtype = dst == NULL ? NULL : PyObject_GetAttr(dst, s_dtype);
    if (dst != NULL && ((PyObject *)Py_TYPE(dst) != settings.ndarray || dtype != c->dtype))
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
    if (settings.ndarray == NULL || (PyObject *)Py_TYPE(src) != settings.ndarray
        || (dst != Py_None && (PyObject *)Py_TYPE(dst) != settings.ndarray)
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
        if (c != NULL && engine_allows(c))
            dst = made = allocated(c, target);
        if (made == NULL) goto done;
    }
    if (PyObject_GetBuffer(dst, &dv, PyBUF_STRIDES | PyBUF_WRITABLE) < 0) goto done;
    if (made == NULL)
        c = find_small(calls, to_physical, sdt, &sv, &dv, pad, threads, &held);
    else if (!out_shaped(c, &dv))
        c = NULL;
    if (c != NULL && arrays_fit(c, &dv, &sv) && engine_allows(c)) {
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

/* configure(use_kernel, thread_min_bytes, stream_min_bytes, one_thread_small_bytes, allocate,
 * ndarray): the engine's settings, all at once (_copy.Settings; thresholds past a long long
 * count as unreachable). */
static PyObject *kernel_configure(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *thread_min, *stream_min, *one_small, *allocate, *ndarray;
    int use;
    if (!PyArg_ParseTuple(args, "pO!O!O!OO!:configure", &use, &PyLong_Type, &thread_min, &PyLong_Type,
                          &stream_min, &PyLong_Type, &one_small, &allocate, &PyType_Type, &ndarray))
        return NULL;
    if (!PyCallable_Check(allocate)) {
        PyErr_SetString(PyExc_TypeError, "configure: allocate must be callable");
        return NULL;
    }
    int over_t = 0, over_s = 0, over_o = 0;
    long long t = PyLong_AsLongLongAndOverflow(thread_min, &over_t);
    long long s = PyLong_AsLongLongAndOverflow(stream_min, &over_s);
    long long o = PyLong_AsLongLongAndOverflow(one_small, &over_o);
    if (PyErr_Occurred()) return NULL;
    if (s_dtype == NULL) {
        s_dtype = PyUnicode_InternFromString("dtype");
        s_small_calls = PyUnicode_InternFromString("_small_calls");
        if (s_dtype == NULL || s_small_calls == NULL) return NULL;
    }
    settings.use_kernel = use;
    settings.thread_min = over_t > 0 ? LLONG_MAX : over_t < 0 ? LLONG_MIN : t;
    settings.stream_min = over_s > 0 ? LLONG_MAX : over_s < 0 ? LLONG_MIN : s;
    settings.one_thread_small = over_o > 0 ? LLONG_MAX : over_o < 0 ? LLONG_MIN : o;
    Py_INCREF(allocate);
    Py_XSETREF(settings.allocate, allocate);
    Py_INCREF(ndarray);
    Py_XSETREF(settings.ndarray, ndarray);
    Py_RETURN_NONE;
}

/* settings(): the settings as configure() last set them (use_kernel, thread_min_bytes,
 * stream_min_bytes, one_thread_small_bytes, allocate, ndarray), None for what was never set. */
static PyObject *kernel_settings(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    return Py_BuildValue("(OLLLOO)", settings.use_kernel ? Py_True : Py_False, settings.thread_min,
                         settings.stream_min, settings.one_thread_small, settings.allocate ? settings.allocate : Py_None,
                         settings.ndarray ? settings.ndarray : Py_None);
}

#endif
