/* _kernel_far.h: tasks whose loops sweep far rows of one side many times, a few bytes of each row
 * a sweep, run in blocks through a compact L2 stage of those rows.
 *
 * s8[21034,151,11]{0,2,1:T(4,128)(4,1)} to_physical: the task is 151 transposes (one per step of
 * dim 1, 11 bytes apart in the array) of 2 x 21034 4-byte quads whose 21034 source rows are 1661
 * bytes apart; each transpose reads 8 bytes of every row, so each source line was fetched once per
 * step of dim 1 that touches it (~6 times) and the copy ran at ~16x a copy. Here the source rows'
 * bytes the task reads (8 of every 11 in a row of 1661) are copied R rows at a time into a stage
 * of rows a little more than their 1208 bytes apart, packed (each source line fetched once, read in
 * order), and the task's own loops (copy_box: the paths after this one) then run over the stage,
 * where its source rows now run on over dim 1 (one transpose of 302 items by R). Symmetric for a
 * far destination (from_physical: the 21034 logical rows written 8 bytes a step): the loops write
 * the stage, whose rows then go out (whole and streamed where the call streams, else run by run).
 *
 * The far axis F is the side's largest stride of FAR_MIN_ROWS items or more, one of the last two
 * (the inner loop's: further out measured no faster, pred[512,4096,8,2]{0,2,3,1:T(4,128)(4,1)}
 * to_physical 3.3 -> 3.9x a copy, its unweaves of 4 groups costing more than their loads); the
 * axes inside a row (smaller strides) form the
 * stage row, packed (the runs the first of them make, by stride, moved over at most two others),
 * the one of the largest stride cut in chunks where a row would not leave room for FAR_ROWS rows
 * (at least FAR_MIN_ROWS) in FAR_STAGE bytes; the axes of larger strides than F loop outside. Taken
 * where the inner loop reads (writes) at most FAR_PIECE bytes of a row per step and an outer axis
 * inside the rows loops outside F (so the rows are swept again), from FAR_MIN_SPAN bytes of that
 * side on (out of the caches).
 * Self-contained (include guard). */
#ifndef TENSORLAYOUT_KERNEL_FAR_H
#define TENSORLAYOUT_KERNEL_FAR_H
#include "_kernel_gather.h"
#include "_kernel_bytes_stage.h"
#include "_kernel_bytes_rows.h"
#include "_kernel_pairs_split.h"

#define FAR_STAGE (512 << 10) /* bytes of a stage (in L2, beside the other side's lines) */
#define FAR_ROWS 256           /* rows of a block wanted (a stage row is cut in chunks to fit them) */
#define FAR_MIN_ROWS 16        /* ... at least */
#define FAR_BLOCK_ROWS 64      /* ... and at least this many where F is cut in blocks (fewer measured
                                * slower: pred[256,16,8,128,8]{0,4,2,3,1:T(8,128)(4,1)} from_physical,
                                * blocks of 21 rows, 2.6 -> 5.2x a copy) */
#define FAR_MIN_STRIDE 512     /* bytes between F's rows at least */
#define FAR_PIECE 64           /* bytes of a row the inner loop touches per step, at most */
#define FAR_MIN_SPAN (4 << 20) /* bytes of the side's span at least */

typedef struct {
    int side;          /* 1: the source is staged; 0: the destination */
    int f;             /* the far axis */
    int c;             /* the axis cut in chunks (-1: none) */
    Py_ssize_t chunk;  /* ... of this many items */
    Py_ssize_t rows;   /* F's rows per block */
    Py_ssize_t gap;    /* bytes between the stage's rows */
    int inside[MAX_DIMS];   /* 1: the axis lies in the stage's rows */
    Py_ssize_t packed[MAX_DIMS]; /* ... its stride in the stage's packed rows */
    Py_ssize_t run;    /* bytes of a row's runs (contiguous on both sides) ... */
    int pieces, piece_axes[2]; /* ... and the axes over them (none: the row is one run) */
} far_t;

/* The bytes a row spans on strides st (the cut axis at `chunk` items). */
static Py_ssize_t far_width(const plan_t *p, const far_t *x, const Py_ssize_t *st, Py_ssize_t chunk)
{
    Py_ssize_t w = p->item;
    for (int k = 0; k < p->ndim; k++)
        if (x->inside[k]) w += ((k == x->c ? chunk : p->shape[k]) - 1) * st[k];
    return w;
}

/* The packed rows (x->packed, x->run, the piece axes) of the inside axes on strides st: by stride,
 * each packed as far as the items before it; the first ones, at their own strides, make the run.
 * 0 if more than two axes step over the run. */
static int far_pack(const plan_t *p, far_t *x, const Py_ssize_t *st)
{
    int done[MAX_DIMS] = {0}, in_run = 1;
    Py_ssize_t at = p->item;
    x->run = p->item, x->pieces = 0;
    for (;;) {
        int next = -1;
        for (int k = 0; k < p->ndim; k++)
            if (x->inside[k] && !done[k] && (next < 0 || st[k] < st[next])) next = k;
        if (next < 0) return 1;
        done[next] = 1;
        x->packed[next] = at;
        in_run = in_run && st[next] == at;
        if (in_run) x->run = at * p->shape[next];
        else if (x->pieces == 2) return 0;
        else x->piece_axes[x->pieces++] = next;
        at *= p->shape[next]; /* (the cut axis, of the largest stride, is last: its chunk need not count) */
    }
}

/* The bytes between the stage's rows for rows of w bytes: whole lines, an odd number of them
 * (the rows then fall in different L1 sets). */
static Py_ssize_t far_gap(Py_ssize_t w)
{
    Py_ssize_t g = (w + 63) / 64;
    return 64 * (g % 2 ? g : g + 1);
}

/* Whether the inner loop is a transpose whose rows run on over the axis before it on either side
 * (transposing's three axes): its strips already read (write) the rows' bytes of all its steps
 * at once, staged measured slower (s32[1325,5173]{0,1:T(2,128)} to_physical 2.2 -> 3.0x a copy,
 * pred[1024,16384]{0,1:T(8,128)(4,1)} from_physical 2.3 -> 2.9). */
static int far_runs_on(const plan_t *p)
{
    const int n = p->ndim;
    if (p->ds[n - 1] != p->item || p->ss[n - 2] != p->item) return 0;
    return p->ds[n - 3] == p->shape[n - 1] * p->item || p->ss[n - 3] == p->shape[n - 2] * p->item
           || quads_part(p); /* (a partial (4,1) quad's rows: _kernel_bytes.h) */
}

/* The far axis of the side (1: source) and the axes inside its rows; 0 if not taken (see above). */
static int far_axes(const plan_t *p, int side, far_t *x)
{
    const Py_ssize_t *st = side ? p->ss : p->ds;
    const Py_ssize_t span = side ? p->shi - p->slo : p->dhi - p->dlo;
    int f = -1, n = p->ndim, again = 0;
    if (span < FAR_MIN_SPAN || n < 3) return 0;
    for (int k = 0; k < n; k++) {
        if (p->shape[k] > 1 && st[k] < 0) return 0;
        if (p->shape[k] >= FAR_MIN_ROWS && (f < 0 || st[k] > st[f])) f = k;
    }
    if (f < n - 2 || st[f] < FAR_MIN_STRIDE) return 0; /* (F outside the inner loop: measured no faster) */
    Py_ssize_t piece = p->item;
    for (int k = 0; k < n; k++) {
        x->inside[k] = k != f && p->shape[k] > 1 && st[k] < st[f];
        if (x->inside[k] && (k >= n - 2 || k > f)) piece += (p->shape[k] - 1) * st[k];
        if (x->inside[k] && k < f && k < n - 2) again = 1;
    }
    x->side = side, x->f = f, x->c = -1, x->chunk = 0;
    return piece <= FAR_PIECE && !far_runs_on(p) && again && far_width(p, x, st, 0) <= st[f] && far_pack(p, x, st);
}

/* Whether the side (1: source) of the plan is one to stage (see above); fills *x if so. */
static int far_side(const plan_t *p, int side, far_t *x)
{
    if (!far_axes(p, side, x)) return 0;
    const int f = x->f;
    Py_ssize_t w = far_width(p, x, x->packed, 0);
    Py_ssize_t rows = p->shape[f] < FAR_ROWS ? p->shape[f] : FAR_ROWS;
    if (far_gap(w) * rows > FAR_STAGE) { /* a row in chunks of its largest-stride axis */
        for (int k = 0; k < p->ndim; k++)
            if (x->inside[k] && (x->c < 0 || x->packed[k] > x->packed[x->c])) x->c = k;
        Py_ssize_t rest = w - (p->shape[x->c] - 1) * x->packed[x->c];
        for (x->chunk = 0; x->chunk < 2 && rows >= FAR_MIN_ROWS; rows /= 2) {
            Py_ssize_t room = FAR_STAGE / rows - 128 - rest;
            x->chunk = room < 0 ? 0 : room / x->packed[x->c] + 1;
        }
        if (x->chunk < 2) return 0;
        w = far_width(p, x, x->packed, x->chunk);
    }
    x->gap = far_gap(w);
    rows = FAR_STAGE / x->gap;
    x->rows = rows >= p->shape[f] ? p->shape[f] : rows >= 32 ? rows - rows % 16 : rows;
    return x->rows == p->shape[f] || x->rows >= FAR_BLOCK_ROWS;
}

/* One row between the side's bytes at a (strides st) and its packed row in the stage at b, the
 * cut axis at cc items: whole (streamed where the call streams into the destination), or its
 * runs over the piece axes; in: into the stage. */
static void far_row(const plan_t *p, const far_t *x, char *a, char *b, Py_ssize_t cc, int in)
{
    const Py_ssize_t *st = x->side ? p->ss : p->ds;
    if (x->pieces == 0) {
        Py_ssize_t w = far_width(p, x, x->packed, cc);
        if (in)
            memcpy(b, a, (size_t)w);
        else if (p->stream)
            stream_out(a, b, (size_t)w);
        else
            memcpy(a, b, (size_t)w);
        return;
    }
    int k = x->piece_axes[0], o = x->pieces > 1 ? x->piece_axes[1] : -1;
    Py_ssize_t nk = k == x->c ? cc : p->shape[k], no = o < 0 ? 1 : o == x->c ? cc : p->shape[o];
    for (Py_ssize_t i = 0; i < no; i++) {
        char *ai = a + (o < 0 ? 0 : i * st[o]), *bi = b + (o < 0 ? 0 : i * x->packed[o]);
        if (in)
            run_any(bi, ai, nk, x->packed[k], st[k], x->run);
        else
            run_any(ai, bi, nk, st[k], x->packed[k], x->run);
    }
}

typedef void (*far_box_fn)(const plan_t *); /* the paths after this one (copy_box: _kernel_tasks.h) */

/* One block: the plan without its outside axes, F's rows f0.. (rr of them) and the chunk c0..
 * (cc items) of the cut axis, the staged side over the stage's packed rows; d, s: the block's
 * first bytes. */
static void far_block(const plan_t *p, const far_t *x, far_box_fn box, char *d, const char *s, char *stage,
                      Py_ssize_t rr, Py_ssize_t cc)
{
    plan_t q = *p;
    int m = 0;
    for (int k = 0; k < p->ndim; k++) {
        if (k != x->f && !x->inside[k] && p->shape[k] > 1) continue; /* (an outside axis) */
        q.shape[m] = k == x->f ? rr : k == x->c ? cc : p->shape[k];
        q.ds[m] = p->ds[k];
        q.ss[m] = p->ss[k];
        if (k == x->f || x->inside[k]) (x->side ? q.ss : q.ds)[m] = k == x->f ? x->gap : x->packed[k];
        m++;
    }
    q.ndim = m;
    const Py_ssize_t end = (rr - 1) * x->gap + far_width(p, x, x->packed, cc);
    if (x->side) { /* the rows into the stage, then the loops from it */
        for (Py_ssize_t r = 0; r < rr; r++) far_row(p, x, (char *)s + r * p->ss[x->f], stage + r * x->gap, cc, 1);
        q.src = stage, q.dst = d, q.slo = stage, q.shi = stage + end;
        box(&q);
        return;
    }
    q.dst = stage, q.src = s, q.dlo = stage, q.dhi = stage + end; /* the loops into the stage, then out */
    q.stream = 0, q.gaps_ours = 0, q.dst_bytes = 0;
    box(&q);
    for (Py_ssize_t r = 0; r < rr; r++) far_row(p, x, d + r * p->ds[x->f], stage + r * x->gap, cc, 0);
}

/* The plan in blocks through a stage (far_side holds): the outside axes in their order, then the
 * chunks of the cut axis, then F's blocks of rows. Returns 0 (nothing done) if the stage could not
 * be allocated. */
static int far_run(const plan_t *p, const far_t *x, far_box_fn box)
{
    char *stage = PyMem_RawMalloc(FAR_STAGE + 64);
    if (stage == NULL) return 0;
    char *al = stage + ((-(uintptr_t)stage) & 63);
    int out[MAX_DIMS], no = 0;
    Py_ssize_t idx[MAX_DIMS] = {0};
    for (int k = 0; k < p->ndim; k++)
        if (k != x->f && !x->inside[k] && p->shape[k] > 1) out[no++] = k;
    char *d = p->dst;
    const char *s = p->src;
    const int c = x->c, f = x->f;
    const Py_ssize_t nc = c >= 0 ? p->shape[c] : 1, step = c >= 0 ? x->chunk : 1;
    do {
        for (Py_ssize_t c0 = 0; c0 < nc; c0 += step) {
            Py_ssize_t cc = nc - c0 < step ? nc - c0 : step, dc = c >= 0 ? c0 * p->ds[c] : 0;
            Py_ssize_t sc = c >= 0 ? c0 * p->ss[c] : 0;
            for (Py_ssize_t f0 = 0; f0 < p->shape[f]; f0 += x->rows) {
                Py_ssize_t rr = p->shape[f] - f0 < x->rows ? p->shape[f] - f0 : x->rows;
                far_block(p, x, box, d + dc + f0 * p->ds[f], s + sc + f0 * p->ss[f], al, rr, cc);
            }
        }
    } while (next_outer(p, out, no, idx, &d, &s));
#if HAVE_STREAM
    _mm_sfence();
#endif
    PyMem_RawFree(stage);
    return 1;
}

/* Whether the task went through a stage of far rows (see above): the source's, else the
 * destination's; box runs each block. */
static int far_staged(const plan_t *p, far_box_fn box)
{
    far_t x;
    if (p->ndim < 3 || p->tail_bytes > 0) return 0;
    return (far_side(p, 1, &x) || far_side(p, 0, &x)) && far_run(p, &x, box);
}

#endif
