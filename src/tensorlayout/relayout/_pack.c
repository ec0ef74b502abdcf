/* The sub-byte packing kernel of tensorlayout.relayout: E(4) / E(2) / E(1) layouts in one pass.
 *
 * pack(dst, src, tasks, bits, nslots, pad, serial, stream) writes the logical codes of src
 * (one element per byte, its low `bits` bits count) into the packed byte buffer dst, 8/bits
 * slots per byte, the first slot in the low bits; unpack(dst, src, tasks, bits, nslots,
 * signed, stream) reads them back into the logical bytes dst, sign-extended for signed
 * types. A task is (kind, first slot, logical byte offset, shape, slot strides, logical byte
 * strides), the axes in loop order, outermost first. Kinds: 0 data; 1 pad: the code `pad`
 * into every slot (the logical side is ignored); 2 data that owns its column groups: the
 * last axis has slot stride 1 and n slots, the axis before it (the columns) slot stride
 * G >= n, and every column writes its whole group, its n codes then the pad code into its
 * next G - n slots, on every path below (pack refuses a kind-2 task of another shape). The
 * caller knows those slots are padding no other task writes; a plan whose column groups
 * cover the buffer needs no fill first. Before any memory is touched, every task is checked
 * to stay inside both buffers: slots in [0, nslots) (a kind-2 task's groups whole, the last
 * column's included), nslots within the packed buffer, logical bytes inside the logical
 * array (any strides). The GIL is released while moving data.
 *
 * The inner loop is chosen per task:
 *   aligned     the last axis has slot stride 1 and a multiple of 8/bits slots, the first
 *               slot and every other slot stride are multiples too: whole bytes, never read:
 *     columns   ... the axis before it contiguous on the logical side (the TPU's (8,1) and
 *               (32,1) sub-tiles): 16 columns at a time in SSE2 registers, rows shifted and
 *               or-ed into bytes, then interleaved into the buffer's byte order. When the
 *               columns are further apart than their bytes (u1 (32,1) holds 8 rows in 32
 *               slots) the bytes between are not ours and are written one by one, unless
 *               the task is of kind 2: then they get the pad code in the same vector
 *               stores (the tail columns', one by one). Adjacent columns (and owned gaps
 *               of 2 or 4 bytes) go 32 at a time in AVX2 registers first where the CPU has
 *               them (s4[2097152]{0:T(1024)(128)(8,1)E(4)}: 2.1 -> 1.1x a copy). Fewer than
 *               16 columns whose rows of lines continue their logical run are merged with
 *               them into one run of columns at tabled offsets (table_columns_k);
 *     words     ... the last axis 8 slots contiguous on the logical side (one 64-bit word),
 *               the axis before it (the columns) at most WORDS_MAX_P bytes apart (a transposing
 *               layout's (8,1) or (32,1) sub-tile): each column's word packed in a register,
 *               16 columns at a time for every row of lines, so that each row writes (reads)
 *               16 neighbouring columns and the next row continues the logical rows they read
 *               (write), 8 rows at a time where they continue them (one logical line per
 *               column), the buffer's lines fetched ahead (u1[3000,4000]{0,1:T(8,128)(32,1)
 *               E(1)}: rows of lines 12 KiB apart, in one L1 set, byte by byte: 13-16x a
 *               copy, now 2-3x). A kind-2 task's gaps go in the same stores; fewer than 8
 *               rows a word where the rest is the column's gap (kind 2), or unpacking
 *               (u4[900787,5]{0,1:T(8,128)(8,1)E(4)}: slot by slot 105 / 63x a copy, now 30 / 36x);
 *               faster forms first (_pack_bits.h): E(4) adjacent columns in 8 x 8 (AVX2) or 4 x 4
 *               register transposes (s4[5,125,21,157]{1,3,0,2:T(64,128)(8,1)E(4)}: 7.9 / 7.8 ->
 *               3.3 / 3.8x a copy) and a ragged sub-tile's short words (and whole words whose rows of
 *               lines are further apart than a word) 4 columns at a time, and columns whose logical bytes follow each other as one staged run
 *               (u1[1048576,4]{0,1:T(8,128)(32,1)E(1)}: 9.3 / 10.2 -> 2.3 / 2.9x), 4-byte column
 *               words of 1 to 4 codes in SIMD lanes instead (join4_row: u1[16777216,4]{...}
 *               one thread 2.4 -> 0.8x); E(1) words of
 *               16 columns x 8 rows of lines in movemasks and byte transposes (u1[6936,205]{0,1:
 *               T(8,128)(32,1)E(1)}: 4.8 / 6.9 -> 3.0 / 2.9x);
 *     contiguous  ... the last axis contiguous on the logical side: 16 bytes of codes per
 *               SSE2 step (shifts, masks and packs), the rest 8 codes per 64-bit word;
 *     bytes     ... otherwise byte by byte;
 *   partial     columns (as above) of n rows, n not a multiple of 8/bits, whole bytes otherwise:
 *               packed when of kind 2 (the partial byte's other slots are the column's gap, the
 *               pad code), unpacked reading the partial byte whole (a ragged sub-tile: s4[5,5,N]
 *               {2,1,0:T(8,128)(8,1)E(4)} holds 5 of 8 rows; slot by slot it was 30 / 23x a copy);
 *   slots       anything else (ragged edges): slot by slot, read-modify-write of the byte.
 *               Such tasks share bytes with others, so pack accepts them only when called
 *               with serial=True, which the caller does from one thread.
 * Outside the columns path a kind-2 task's gaps are written after each row of its lines
 * (whole bytes, or slot by slot on the slots path).
 * The axis outside the inner one(s) runs inside the line loops (no dispatch per line). With
 * stream, stores bypass the cache: pack's contiguous byte runs, and unpack's logical rows
 * where whole 64-byte lines of long rows can be written one after the other (partial lines
 * measured far slower). A call may share its tasks of whole bytes with the kernel's own threads
 * (workers > 1, _pool.h), which claim them one at a time.
 * Where the CPU has AVX-512 BW/VL/VBMI (and TENSORLAYOUT_NO_AVX512 is not set at import), E(4)
 * short words whose rows of lines are not 8 bytes on go 8 columns x 8 rows a block in byte
 * permutes, and a task that the next continues with a ragged row's last codes takes them as its
 * tail (joined_tail; _pack_wide.h: u4[39,70,71,11]{1,3,2,0:T(8,128)(8,1)E(4)} one thread 3.9 /
 * 3.9 -> 2.6 / 2.3x a copy).
 * The parts, each including the one before: _pack_types.h (sizes, types, helpers),
 * _pack_lines.h (byte and word moves, aligned lines), _pack_columns.h (the columns path),
 * _pack_words.h (slots and words; moves in _pack_bits.h, _pack_joins.h, _pack_short.h and
 * _pack_wide.h), _pack_loops.h (partial columns, outer loops); _isa.h (whether the AVX-512 forms
 * may run) and _pool.h are shared with _kernel.c. This file holds the Python entry points.
 */
#include "_pack_loops.h"

/* ---- Python entry points: tasks read and checked ----------------------------------------- */

/* The slots a task writes, as span() (-1 on overflow), a kind-2 task's column groups whole;
 * -2 (a ValueError set) for a kind-2 task without slot stride 1 innermost and columns at
 * least its extent apart. */
static int written_span(const task_t *t, Py_ssize_t *lo, Py_ssize_t *hi)
{
    int last = t->ndim - 1;
    if (t->kind != 2) return span(t->ndim, t->shape, t->ps, 1, lo, hi);
    if (last < 1 || t->ps[last] != 1 || t->ps[last - 1] < t->shape[last]) {
        PyErr_SetString(PyExc_ValueError, "pack: a kind-2 task needs slot stride 1 innermost and "
                                          "columns at least its extent apart");
        return -2;
    }
    Py_ssize_t shape[MAX_DIMS];
    memcpy(shape, t->shape, sizeof(Py_ssize_t) * (size_t)t->ndim);
    shape[last] = t->ps[last - 1]; /* up to the next column's group */
    return span(t->ndim, shape, t->ps, 1, lo, hi);
}

typedef struct {
    Py_ssize_t nslots, llo, lhi;
    char *log;      /* the logical array's first element, NULL if none */
    uint8_t *pad;   /* where pad tasks read */
    int allow_pad;
} bounds_t;

static int read_task(PyObject *obj, task_t *t, const bounds_t *b)
{
    PyObject *shape, *ps, *ls;
    Py_ssize_t loff;
    if (!PyTuple_Check(obj)) {
        PyErr_SetString(PyExc_TypeError, "pack: a task must be a tuple");
        return -1;
    }
    if (!PyArg_ParseTuple(obj, "innO!O!O!", &t->kind, &t->slot, &loff, &PyTuple_Type, &shape,
                          &PyTuple_Type, &ps, &PyTuple_Type, &ls))
        return -1;
    Py_ssize_t n = PyTuple_GET_SIZE(shape), lo, hi;
    if (n > MAX_DIMS || PyTuple_GET_SIZE(ps) != n || PyTuple_GET_SIZE(ls) != n) {
        PyErr_SetString(PyExc_ValueError, "pack: a task's shape and strides differ in length");
        return -1;
    }
    t->ndim = (int)n;
    t->tail = 0;
    t->tail_ps = 0;
    if (read_ints(shape, t->shape, n) || read_ints(ps, t->ps, n) || read_ints(ls, t->ls, n)) return -1;
    for (int k = 0; k < t->ndim; k++)
        if (t->shape[k] <= 0) {
            t->ndim = -1; /* nothing to move */
            return 0;
        }
    if (t->kind < 0 || t->kind > 2) {
        PyErr_SetString(PyExc_ValueError, "pack: a task's kind must be 0, 1 or 2");
        return -1;
    }
    if (t->kind != 0 && !b->allow_pad) {
        PyErr_SetString(PyExc_ValueError, "unpack: tasks of kinds 1 (pad) and 2 are for pack");
        return -1;
    }
    int written = written_span(t, &lo, &hi);
    if (written == -2) return -1;
    if (written < 0 || !inside(t->slot, lo, hi, 0, b->nslots)) {
        PyErr_SetString(PyExc_IndexError, "pack: a task leaves the packed buffer");
        return -1;
    }
    if (t->kind == 1) {
        memset(t->ls, 0, sizeof t->ls);
        t->log = (char *)b->pad;
        return 0;
    }
    if (b->log == NULL || span(t->ndim, t->shape, t->ls, 1, &lo, &hi) < 0
        || !inside(loff, lo, hi, b->llo, b->lhi)) {
        PyErr_SetString(PyExc_IndexError, "pack: a task leaves the logical array");
        return -1;
    }
    t->log = b->log + loff;
    return 0;
}

/* The packed buffer (contiguous bytes) and the logical array (1-byte items, any strides). */
static int get_buffers(PyObject *packed, PyObject *logical, int packed_writes, Py_buffer *pv,
                       Py_buffer *lv, bounds_t *b, int bits, Py_ssize_t nslots)
{
    int lflags = PyBUF_STRIDES | (packed_writes ? 0 : PyBUF_WRITABLE);
    if (PyObject_GetBuffer(packed, pv, PyBUF_SIMPLE | (packed_writes ? PyBUF_WRITABLE : 0)) < 0)
        return -1;
    lv->obj = NULL;
    if (logical != Py_None && PyObject_GetBuffer(logical, lv, lflags) < 0) goto fail;
    if (bits != 1 && bits != 2 && bits != 4) {
        PyErr_SetString(PyExc_ValueError, "pack: bits must be 1, 2 or 4");
        goto fail;
    }
    if (nslots < 0 || pv->len > PY_SSIZE_T_MAX / 8 || nslots > pv->len * (8 / bits)) {
        PyErr_SetString(PyExc_IndexError, "pack: the packed buffer is smaller than nslots");
        goto fail;
    }
    b->nslots = nslots;
    b->log = NULL;
    if (lv->obj != NULL) {
        if (lv->itemsize != 1) {
            PyErr_SetString(PyExc_ValueError, "pack: logical items must be single bytes");
            goto fail;
        }
        if (array_span(lv, &b->llo, &b->lhi) < 0) { /* an empty array: nothing inside */
            PyErr_SetString(PyExc_ValueError, "pack: logical array too large");
            goto fail;
        }
        b->log = (char *)lv->buf;
    }
    return 0;
fail:
    if (lv->obj != NULL) PyBuffer_Release(lv);
    PyBuffer_Release(pv);
    return -1;
}

static task_t *read_tasks(PyObject *tasks, const bounds_t *b, Py_ssize_t *count)
{
    *count = PyList_GET_SIZE(tasks);
    task_t *ts = PyMem_Malloc(sizeof(task_t) * (size_t)(*count ? *count : 1));
    if (ts == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t i = 0; i < *count; i++)
        if (read_task(PyList_GET_ITEM(tasks, i), &ts[i], b) < 0) {
            PyMem_Free(ts);
            return NULL;
        }
    return ts;
}

typedef struct {
    const ctx_t *c;
    const task_t *ts;
    int unpack;
} run_t;

/* Run task i of a call (the pool's item). */
static void run_item(void *arg, Py_ssize_t i)
{
    const run_t *r = arg;
    if (r->ts[i].ndim >= 0) run_task(r->c, &r->ts[i], r->unpack);
}

/* The call's tasks on the calling thread and up to `workers` - 1 of the kernel's threads
 * (tasks of whole bytes only: the caller runs those sharing bytes alone). */
static PyObject *run_all(ctx_t *c, task_t *ts, Py_ssize_t count, int unpack, int workers)
{
    run_t r = {c, ts, unpack};
    join_tails(c, ts, count, unpack);
    Py_BEGIN_ALLOW_THREADS
    pool_run(run_item, &r, count, workers, c->stream);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static void init_ctx(ctx_t *c, uint8_t *bytes, Py_ssize_t nbytes, int bits, int sign, int stream, int pad)
{
    c->bytes = bytes;
    c->bytes_hi = bytes + nbytes;
    c->bits = bits;
    c->per = 8 / bits;
    c->mask = (1u << bits) - 1;
    c->sign = sign;
    c->stream = stream && HAVE_SSE2;
    c->pad = (uint8_t)((unsigned)pad & c->mask);
    c->pad_byte = 0;
    c->log_lo = c->log_hi = NULL;
    for (int k = 0; k < c->per; k++) c->pad_byte |= (uint8_t)(c->pad << (k * bits));
    swar_masks(c);
}

static PyObject *pack_entry(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *dst, *src, *tasks, *result = NULL;
    int bits, pad, serial = 0, stream = 0, workers = 1;
    Py_ssize_t nslots, count;
    if (!PyArg_ParseTuple(args, "OOO!ini|ppi:pack", &dst, &src, &PyList_Type, &tasks, &bits, &nslots,
                          &pad, &serial, &stream, &workers))
        return NULL;
    Py_buffer pv, lv;
    ctx_t c;
    bounds_t b = {0};
    if (get_buffers(dst, src, 1, &pv, &lv, &b, bits, nslots) < 0) return NULL;
    init_ctx(&c, (uint8_t *)pv.buf, pv.len, bits, 0, stream, pad);
    if (b.log != NULL) {
        c.log_lo = b.log + b.llo;
        c.log_hi = b.log + b.lhi;
    }
    b.pad = &c.pad;
    b.allow_pad = 1;
    task_t *ts = read_tasks(tasks, &b, &count);
    if (ts == NULL) goto done;
    for (Py_ssize_t i = 0; i < count && !serial; i++)
        if (ts[i].ndim >= 0 && choose(&ts[i], c.per, 0) == L_SLOTS && !owns_whole_bytes(&ts[i], c.per)) {
            PyErr_SetString(PyExc_ValueError, "pack: a task sharing bytes with others needs serial=True");
            goto done;
        }
    result = run_all(&c, ts, count, 0, serial ? 1 : workers);
done:
    PyMem_Free(ts);
    if (lv.obj != NULL) PyBuffer_Release(&lv);
    PyBuffer_Release(&pv);
    return result;
}

static PyObject *unpack_entry(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *dst, *src, *tasks, *result = NULL;
    int bits, sign, stream = 0, workers = 1;
    Py_ssize_t nslots, count;
    if (!PyArg_ParseTuple(args, "OOO!inp|pi:unpack", &dst, &src, &PyList_Type, &tasks, &bits, &nslots,
                          &sign, &stream, &workers))
        return NULL;
    if (dst == Py_None) {
        PyErr_SetString(PyExc_TypeError, "unpack: dst must be an array");
        return NULL;
    }
    Py_buffer pv, lv;
    ctx_t c;
    bounds_t b = {0};
    if (get_buffers(src, dst, 0, &pv, &lv, &b, bits, nslots) < 0) return NULL;
    init_ctx(&c, (uint8_t *)pv.buf, pv.len, bits, sign, stream, 0);
    c.log_lo = b.log + b.llo; /* (where lines are fetched ahead) */
    c.log_hi = b.log + b.lhi;
    task_t *ts = read_tasks(tasks, &b, &count);
    if (ts != NULL) result = run_all(&c, ts, count, 1, workers);
    PyMem_Free(ts);
    PyBuffer_Release(&lv);
    PyBuffer_Release(&pv);
    return result;
}

static PyMethodDef methods[] = {
    POOL_INFO_METHOD,
    {"pack", pack_entry, METH_VARARGS,
     "pack(dst, src, tasks, bits, nslots, pad, serial=False, stream=False, workers=1): write the "
     "codes of the logical byte array src into the packed byte buffer dst; a task is (kind, first "
     "slot, logical byte offset, shape, slot strides, logical byte strides), checked to lie inside "
     "both. Tasks that share bytes with others (not whole bytes) need serial=True (then one "
     "thread). workers: the calling thread and up to workers - 1 of the kernel's threads claim the "
     "tasks one at a time."},
    {"unpack", unpack_entry, METH_VARARGS,
     "unpack(dst, src, tasks, bits, nslots, signed, stream=False, workers=1): read the codes of the "
     "packed byte buffer src into the logical byte array dst (sign-extended if signed); tasks and "
     "workers as for pack."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_pack",
                                    "The sub-byte packing kernel of relayout (see _pack_path.py).",
                                    -1, methods, NULL, NULL, NULL, NULL};

/* The AVX2 moves are used where the CPU has them, unless the environment variable
 * TENSORLAYOUT_PACK_SSE2 is set (non-empty) at import: then the SSE2 forms run (the tests
 * exercise them that way); the module's AVX2 attribute says which, and its AVX512 attribute
 * whether the AVX-512 forms run (wide_init: off with either variable set). */
PyMODINIT_FUNC PyInit__pack(void)
{
#ifdef HAVE_AVX2_PATH
    use_avx2 = __builtin_cpu_supports("avx2") && !env_flag("TENSORLAYOUT_PACK_SSE2");
#endif
    int wide = wide_init();
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddIntConstant(m, "AVX512", wide) < 0) Py_CLEAR(m);
#ifdef HAVE_AVX2_PATH
    if (m != NULL && PyModule_AddIntConstant(m, "AVX2", use_avx2) < 0) Py_CLEAR(m);
#else
    if (m != NULL && PyModule_AddIntConstant(m, "AVX2", 0) < 0) Py_CLEAR(m);
#endif
    return m;
}
