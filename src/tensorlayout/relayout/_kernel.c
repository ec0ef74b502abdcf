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
 * A task may carry a tail: bytes of one value written behind each step of its first axis (or
 * of a later axis) as it goes (the padding between a to_physical copy's steps; _kernel_fill.h,
 * _kernel_tasks.h).
 *
 * The GIL is released while copying. A call may share its tasks with the kernel's own threads
 * (workers > 1), which claim them one at a time (_pool.h).
 *
 * The parts, each a header that includes what it uses (so any order of inclusion works):
 *   _task.h           task bounds shared with _pack.c (span, read_ints, inside; overflow-safe)
 *   _kernel_plan.h    plan_t, platform support, streamed runs
 *   _kernel_loops.h   innermost loops            _kernel_regs.h    register tiles (SSE2/AVX2)
 *   _kernel_tiles.h   blocked transposes of two axes over the register tiles
 *   _kernel_bytes.h   (4,1) sub-tile quads of bytes transposed in one pass (_kernel_bytes_wide.h:
 *                     their AVX-512BW rounds; _kernel_bytes_weave.h: 8 rows of bytes woven in
 *                     registers; _kernel_bytes_spread.h: one row into or out of groups;
 *                     _kernel_bytes_runs.h: short runs into or out of groups, a partial quad's
 *                     rows stored masked (AVX-512); _kernel_bytes_stage.h: boxes a few bytes
 *                     wide on both sides via an L1 stage)
 *   _kernel_ahead.h   a blocked transpose's far source rows fetched ahead
 *   _kernel_strips.h  transposes over a third axis (_kernel_words_shifted.h: streamed strips into
 *                     destination rows off their cache lines; _kernel_words_lines.h: whole tiles
 *                     out a line of each destination row at a time; _kernel_words_stage.h: narrow
 *                     ones through an L1 stage)
 *   _kernel_words.h   transposes of 8-byte items in blocks of whole lines (AVX2)
 *   _kernel_big.h     streamed transposes in big blocks (runs of many lines on both sides)
 *   _kernel_nest.h    the inner-loop choice above (the weave rule among it) and the outer loops
 *   _kernel_gather.h  gathering and staged runs; copy_plan
 *   _kernel_bytes_rows.h  (4,1) quads of bytes between short logical rows and tile rows, 8 x 8 in
 *                     registers; copy_task's first choice after bytes_staged
 *   _kernel_pairs_split.h  2-byte transposes of (2,1) pairs split across rows far apart (and,
 *                     _kernel_pairs_short.h, of pairs in short runs of such rows); copy_task's
 *                     next choice (_kernel_words_pairs.h: between rows of pairs and of their
 *                     units; _kernel_pairs_wide.h: those in 8 x 8 AVX2 tiles)
 *   _kernel_far.h     tasks sweeping far rows a few bytes at a time, through an L2 stage
 *   _kernel_fill.h    tasks that fill the padding behind their steps
 *   _kernel_tasks.h   tasks read, checked and run
 *   _kernel_small.h   remembered small calls and the engine's settings
 *   _pool.h           the kernel's threads (shared with _pack.c, as _isa.h: whether the
 *                     AVX-512 forms may run)
 * This file holds the Python entry points. The kernel is one translation unit, so the copy
 * paths inline across the parts.
 */
#include "_kernel_small.h"
#include "_pool.h"
#include "_kernel_masked.h"

static PyObject *kernel_copy(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *dst_obj, *src_obj, *tasks;
    int stream = 0, workers = 1, padded = 0;
    if (!PyArg_ParseTuple(args, "OOO!|pip:copy", &dst_obj, &src_obj, &PyList_Type, &tasks, &stream, &workers,
                          &padded))
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
    if (dv.itemsize != sv.itemsize || dv.itemsize < 1) {
        PyErr_SetString(PyExc_ValueError, "copy: the arrays differ in item size");
        goto done;
    }
    if (array_span(&dv, &dlo, &dhi) < 0 || array_span(&sv, &slo, &shi) < 0) {
        PyErr_SetString(PyExc_ValueError, "copy: array too large");
        goto done;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        if (read_task(PyList_GET_ITEM(tasks, i), &plans[i], &dv, &sv, dlo, dhi, slo, shi) < 0)
            goto done;
        plans[i].stream = stream && HAVE_STREAM;
        plans[i].gaps_ours = workers <= 1 && padded;
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

/* masked_copy(dst, src, boxes): the bytes of src (C-contiguous, as long as dst) into dst, each
 * box's words written as (word & keep) | fill as the copy goes (_kernel_masked.h). */
static PyObject *kernel_masked_copy(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *dst_obj, *src_obj, *boxes;
    if (!PyArg_ParseTuple(args, "OOO!:masked_copy", &dst_obj, &src_obj, &PyList_Type, &boxes))
        return NULL;
    Py_ssize_t count = PyList_GET_SIZE(boxes);
    if (count > MASKED_MAX_BOXES) {
        PyErr_SetString(PyExc_ValueError, "masked_copy: too many boxes");
        return NULL;
    }
    Py_buffer dv, sv;
    if (PyObject_GetBuffer(dst_obj, &dv, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) return NULL;
    if (PyObject_GetBuffer(src_obj, &sv, PyBUF_C_CONTIGUOUS) < 0) {
        PyBuffer_Release(&dv);
        return NULL;
    }
    PyObject *result = NULL;
    mbox_t *mb = PyMem_Malloc(sizeof(mbox_t) * (size_t)(count ? count : 1));
    if (mb == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (dv.len != sv.len) {
        PyErr_SetString(PyExc_ValueError, "masked_copy: the arrays differ in length");
        goto done;
    }
    for (Py_ssize_t i = 0; i < count; i++)
        if (masked_read_box(PyList_GET_ITEM(boxes, i), &mb[i], dv.len) < 0) goto done;
    Py_BEGIN_ALLOW_THREADS
    masked_copy((char *)dv.buf, (const char *)sv.buf, dv.len, mb, (int)count);
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    PyMem_Free(mb);
    PyBuffer_Release(&dv);
    PyBuffer_Release(&sv);
    return result;
}

/* weave_axes(shape, dst_strides, src_strides, item): the first pair (k, b) of axes, k before b in
 * the order k = 0, 1, ..., b = 0, 1, ... (b != k), that the weave rule (_kernel_nest.h) makes a
 * weave or an unweave, as (k, b); None if no pair does. _kernel_path.py puts the pair innermost. */
static PyObject *kernel_weave_axes(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *shape_t, *ds_t, *ss_t;
    Py_ssize_t item, shape[MAX_DIMS], ds[MAX_DIMS], ss[MAX_DIMS];
    if (!PyArg_ParseTuple(args, "O!O!O!n:weave_axes", &PyTuple_Type, &shape_t, &PyTuple_Type, &ds_t,
                          &PyTuple_Type, &ss_t, &item))
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(shape_t);
    if (n > MAX_DIMS || PyTuple_GET_SIZE(ds_t) != n || PyTuple_GET_SIZE(ss_t) != n) {
        PyErr_SetString(PyExc_ValueError, "weave_axes: shape and strides differ in length");
        return NULL;
    }
    if (read_ints(shape_t, shape, n) || read_ints(ds_t, ds, n) || read_ints(ss_t, ss, n)) return NULL;
    for (Py_ssize_t k = 0; k < n; k++)
        for (Py_ssize_t b = 0; b < n; b++)
            if (b != k && weave_rule(item, shape[b], ds[k], ss[k], ds[b], ss[b]) != 0)
                return Py_BuildValue("(nn)", k, b);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"copy", kernel_copy, METH_VARARGS,
     "copy(dst, src, tasks, stream=False, workers=1, padded=False): for each task (dst_offset, src_offset, shape, "
     "dst_strides, src_strides[, swap[, item[, tail]]]), in bytes from each array's first element, copy "
     "that strided box of src into dst, outer axes in the order given; every box is checked to "
     "lie inside both arrays. swap: the box's items are 2 x 2 blocks [a, b, c, d] of the arrays' "
     "1- or 2-byte items, written as [a, c, b, d]. item: the box's items are runs of this many "
     "bytes (2, 4 or 8; 0: the arrays' item size). tail: None or (at, bytes, byte[, axis]): after each "
     "step of the first axis (or of axis, the axes before it looping outside), write that byte to the "
     "bytes from at past the step's first byte. stream: non-temporal stores where dst is "
     "contiguous. workers: the calling thread and up to workers - 1 of the kernel's threads claim "
     "the tasks one at a time (they must write disjoint bytes). padded: dst is a physical buffer "
     "whose padding is already written (then, on one thread, a ragged sub-tile's rows may be woven "
     "in whole groups, its padding rewritten as it is)."},
    {"masked_copy", kernel_masked_copy, METH_VARARGS,
     "masked_copy(dst, src, boxes): copy the bytes of src into dst (both C-contiguous, of one "
     "length), each box (offset, shape, strides, outer, word, keep, fill) of words of 1, 2, 4 or 8 bytes "
     "written as (word & keep) | fill as the copy goes; outer: the box's first axes that step over "
     "its units."},
    POOL_INFO_METHOD,
    {"small_call", kernel_small_call, METH_VARARGS,
     "small_call(dst, src, tasks, to_physical, dtype, threads, pad, fill, nbytes, align, "
     "out_given, alloc_shape): a "
     "remembered small call (see the section 'remembered small calls')."},
    {"to_physical_small", (PyCFunction)(void (*)(void))kernel_to_physical_small, METH_FASTCALL,
     "to_physical_small(target, array, out, pad, threads): the buffer, or None (take the Python path)."},
    {"from_physical_small", (PyCFunction)(void (*)(void))kernel_from_physical_small, METH_FASTCALL,
     "from_physical_small(target, buffer, out, threads): the array, or None (take the Python path)."},
    {"configure", kernel_configure, METH_VARARGS,
     "configure(use_kernel, thread_min_bytes, stream_min_bytes, one_thread_small_bytes, allocate, ndarray): the engine's "
     "settings the small calls obey (_copy.Settings)."},
    {"settings", kernel_settings, METH_NOARGS,
     "settings(): (use_kernel, thread_min_bytes, stream_min_bytes, one_thread_small_bytes, allocate, ndarray) "
     "as last configured."},
    {"weave_axes", kernel_weave_axes, METH_VARARGS,
     "weave_axes(shape, dst_strides, src_strides, item): the axes (k, b) the weave rule pairs, or None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_kernel",
                                    "The relayout copy kernel (see _copy.py).", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__kernel(void)
{
    choose_tilers();
    words_choose();
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddIntConstant(m, "QUADS_AVX512", quads_wide) < 0) Py_CLEAR(m); /* (tests) */
    if (m != NULL && PyModule_AddIntConstant(m, "BYTE_RUNS_VBMI", byte_runs_vbmi) < 0) Py_CLEAR(m); /* (tests) */
    return m;
}
