/* _kernel_gather.h: gathering destination lines (copies whose destination rows run on in
 * short pieces: large ones, and transposes in cache whose rows share L1 sets) and staged
 * short runs (large copies); copy_plan, which runs one plan, chooses between them and the
 * plain loop nest.
 * Self-contained (include guard): it includes the loop nest and the shared task bounds. */
#ifndef TENSORLAYOUT_KERNEL_GATHER_H
#define TENSORLAYOUT_KERNEL_GATHER_H
#include "_task.h"
#include "_kernel_nest.h"
#include "_kernel_words_pairs.h"


/* ---- gathering destination lines ---------------------------------------------------------
 * A copy whose destination rows run on over an outer axis g in pieces of P bytes (a
 * transposing tile's 8 items, a zN fractal's 16, a sub-tile's 128 columns) writes each
 * destination line in several visits, and its rows (far apart, often a power of two apart)
 * evict each other from the caches in between. Gathered, the axes inside g run for k
 * consecutive g at a time into an L1 stage of R rows (one per destination row) and the
 * rows go out as whole lines (past the cache when the copy is large: streamed; in cache, its
 * rows sharing L1 sets, stored); the bytes of a row's last, unfinished line
 * stay in the stage for the next k. The axes inside g must write, per row, exactly the P
 * bytes from g's offset (the piece axes, dense) at offsets that are multiples of 64 apart
 * (the row axes), so that all rows share one line alignment. */

#define GATHER_ROWS 128      /* rows a stage holds, at most; more are cut in blocks of ... */
#define GATHER_BLOCK 64      /* ... this many (measured: zN's 256 rows best in 64, f32 tiles' 128 whole) */
#define GSTAGE_ROW 256       /* stage bytes per row, at most (more measured slower) */
#define GSTAGE_BYTES 131072  /* stage bytes in all, at most (allocated per call) */
#define PREFETCH_SPAN 16384  /* the source block of a g is prefetched if it spans this at most */
#define PREFETCH_AHEAD 2     /* ... this many g ahead */

typedef struct {
    int g;                        /* the gathered axis */
    Py_ssize_t slo, shi;          /* the source bytes one g of the axes after it spans */
    Py_ssize_t piece;             /* P */
    int nrow;                     /* row axes, in loop order */
    int row[MAX_DIMS];
    Py_ssize_t rows;              /* R */
    Py_ssize_t k, pitch;          /* g per stage, stage bytes per row */
} gather_t;

/* Whether the axes after g write dense P-byte pieces of 64-byte-aligned rows; fills *gt. */
static int gather_axes(const plan_t *p, int g, gather_t *gt)
{
    Py_ssize_t P = p->ds[g], want = p->item, rows = 1;
    int piece[MAX_DIMS], np = 0;
    gt->nrow = 0;
    for (int j = g + 1; j < p->ndim; j++) {
        if (p->shape[j] == 1) continue; /* no offsets */
        if (p->ds[j] <= 0) return 0;
        if (p->ds[j] < P) piece[np++] = j;
        else if (p->ds[j] % 64) return 0;
        else {
            gt->row[gt->nrow++] = j;
            rows *= p->shape[j];
        }
    }
    while (np > 0) { /* the piece axes, smallest stride first, tile [0, P) */
        int hit = -1;
        for (int i = 0; i < np; i++)
            if (p->ds[piece[i]] == want) hit = i;
        if (hit < 0) return 0;
        want *= p->shape[piece[hit]];
        piece[hit] = piece[--np];
    }
    if (want != P || rows < 1) return 0;
    Py_ssize_t it = p->item;
    if (span(p->ndim - g - 1, p->shape + g + 1, p->ss + g + 1, it, &gt->slo, &gt->shi) < 0) return 0;
    gt->g = g;
    gt->piece = P;
    gt->rows = rows;
    Py_ssize_t per_row = (GSTAGE_BYTES / rows < GSTAGE_ROW ? GSTAGE_BYTES / rows : GSTAGE_ROW)
                         & ~(Py_ssize_t)63; /* stage bytes per row */
    if (per_row < 128 || P > per_row - 64) return 0;
    gt->k = (per_row - 64) / P; /* room for up to 63 carried bytes */
    if (gt->k > p->shape[g]) gt->k = p->shape[g];
    gt->pitch = (gt->k * P + 126) & ~(Py_ssize_t)63;
    return 1;
}

/* n < 64 bytes in fixed-size moves (a call to memcpy per piece of a row measured slow). */
static inline void small_copy(char *d, const char *s, Py_ssize_t n)
{
    Py_ssize_t i = 0;
    if (n & 32) memcpy(d + i, s + i, 32), i += 32;
    if (n & 16) memcpy(d + i, s + i, 16), i += 16;
    if (n & 8) memcpy(d + i, s + i, 8), i += 8;
    if (n & 4) memcpy(d + i, s + i, 4), i += 4;
    if (n & 2) memcpy(d + i, s + i, 2), i += 2;
    if (n & 1) d[i] = s[i];
}

/* Stage bytes [from, to) to out (where byte `from` goes; stage byte 0 maps to the start of a
 * destination line): with `nt`, whole lines streamed, partial ones (a row's first and last)
 * stored; else (a copy in cache) all stored. */
static void flush_span(char *out, const char *in, Py_ssize_t from, Py_ssize_t to, int nt)
{
    if (!nt) {
        memcpy(out, in + from, (size_t)(to - from));
        return;
    }
    Py_ssize_t a = from;
    if (a % 64) {
        Py_ssize_t h = ((a + 63) & ~(Py_ssize_t)63) < to ? ((a + 63) & ~(Py_ssize_t)63) : to;
        small_copy(out, in + a, h - a);
        a = h;
    }
#if HAVE_STREAM
    for (; a + 64 <= to; a += 64)
        for (int i = 0; i < 64; i += 16)
            _mm_stream_si128((__m128i *)(out + (a - from) + i), _mm_load_si128((const __m128i *)(in + a + i)));
    if (a < to) small_copy(out + (a - from), in + a, to - a); /* less than a line */
#else
    if (a < to) memcpy(out + (a - from), in + a, (size_t)(to - a));
#endif
}

/* Whether the axes inside g over the stage (q) are a narrow transpose of 4-byte items into
 * rows of 1 or 2 items per g, which transpose_narrow takes in 8 x 8 tiles over several g (one
 * g at a time, they went through the scalar loop). Streamed, one thread, ratio to a copy, one
 * g at a time -> all at once: from_physical of f16[524288,64]{0,1:T(4,128)(2,1)} 3.7 -> 3.0,
 * f16[262144,32] 4.9 -> 4.3, s8[3000,5000]{0,1:T(8,128)(4,1)} alike; rows of 4 items measured
 * ~5% slower at once (bf16[4096,8192]{0,1:T(8,128)(2,1)}): not those. */
static int narrow_stage(const plan_t *q)
{
    int last = q->ndim - 1;
    if (q->item != 4 || rows_tile_u32 == NULL || last != 2 || q->ds[last] != 4 || q->ss[last - 1] != 4) return 0;
    Py_ssize_t na = q->shape[1], nb = q->shape[2];
    return q->ds[0] == nb * 4 && (nb == 1 || nb == 2) && na >= 8;
}

/* Run the axes inside g for g0..g0+kk into the stage at `at` (q: those axes over the stage).
 * In cache, or a narrow transpose (narrow_stage), the kk g go in one run (a narrow transpose
 * groups them); streamed, one g at a time with the source read ahead. */
static void fill_stage(const plan_t *p, const gather_t *gt, plan_t *q, char *at, const char *s, Py_ssize_t g0,
                       Py_ssize_t kk)
{
    const int g = gt->g;
    if (!p->stream || narrow_stage(q)) {
        q->shape[0] = kk;
        q->dst = at;
        q->src = s + g0 * p->ss[g];
        run_plan(q);
        return;
    }
    q->shape[0] = 1;
    for (Py_ssize_t h = g0; h < g0 + kk; h++) {
#if HAVE_STREAM
        if (gt->shi - gt->slo <= PREFETCH_SPAN && h + PREFETCH_AHEAD < p->shape[g])
            for (Py_ssize_t x = gt->slo; x < gt->shi; x += 64)
                _mm_prefetch(s + (h + PREFETCH_AHEAD) * p->ss[g] + x, _MM_HINT_T0);
#endif
        q->dst = at + (h - g0) * gt->piece;
        q->src = s + h * p->ss[g];
        run_plan(q);
    }
}

/* One block of the axes from g on (destination d, source s), gathered. */
static void gather_block(const plan_t *p, const gather_t *gt, char *d, const char *s, char *stage)
{
    const int g = gt->g;
    const Py_ssize_t P = gt->piece, ng = p->shape[g], lead = (Py_ssize_t)((uintptr_t)d & 63);
    plan_t q = *p;
    q.ndim = p->ndim - g;
    q.stream = 0;
    q.dlo = q.dhi = NULL; /* its destination is the stage: no destination prefetches */
    q.dst_bytes = 0; /* (never streamed) */
    for (int j = 0; j < q.ndim; j++) {
        q.shape[j] = p->shape[g + j];
        q.ds[j] = p->ds[g + j];
        q.ss[j] = p->ss[g + j];
    }
    Py_ssize_t sst = gt->pitch;
    for (int r = gt->nrow - 1; r >= 0; r--) {
        q.ds[gt->row[r] - g] = sst;
        sst *= p->shape[gt->row[r]];
    }
    Py_ssize_t off = lead, skip = lead, done = -lead; /* done: d offset of stage byte 0 */
    for (Py_ssize_t g0 = 0; g0 < ng; g0 += gt->k) {
        Py_ssize_t kk = ng - g0 < gt->k ? ng - g0 : gt->k;
        fill_stage(p, gt, &q, stage + off, s, g0, kk);
        Py_ssize_t end = off + kk * P, last = g0 + kk >= ng, full = last ? end : end & ~(Py_ssize_t)63;
        Py_ssize_t idx[MAX_DIMS], roff = 0;
        memset(idx, 0, sizeof idx[0] * (size_t)gt->nrow);
        for (Py_ssize_t r = 0; r < gt->rows; r++) {
            char *row = stage + r * gt->pitch;
            if (full > skip) flush_span(d + roff + done + skip, row, skip, full, p->stream);
            if (!last && end > full) small_copy(row, row + full, end - full); /* full >= 64: apart */
            for (int a = gt->nrow - 1; a >= 0; a--) { /* next row: innermost row axis fastest */
                int ax = gt->row[a];
                if (++idx[a] < p->shape[ax]) {
                    roff += p->ds[ax];
                    break;
                }
                roff -= (p->shape[ax] - 1) * p->ds[ax];
                idx[a] = 0;
            }
        }
        if (full > skip) skip = 0;
        else skip -= full; /* nothing written yet (full is 0) */
        done += full;
        off = end - full;
    }
}

/* The plan with its axes from gt->g on gathered, the axes before it looped over. */
static void gather_plan(const plan_t *p, const gather_t *gt)
{
    char *raw = PyMem_RawMalloc((size_t)(gt->rows * gt->pitch + 64));
    if (raw == NULL) {
        run_plan(p);
        return;
    }
    char *stage = raw + ((64 - ((uintptr_t)raw & 63)) & 63);
    Py_ssize_t idx[MAX_DIMS];
    memset(idx, 0, sizeof idx[0] * (size_t)gt->g);
    char *d = p->dst;
    const char *s = p->src;
    for (;;) {
        gather_block(p, gt, d, s, stage);
        if (!next_index(idx, gt->g, p->shape, p->ds, p->ss, &d, &s)) break;
    }
    PyMem_RawFree(raw);
}

/* The gathered copy, its outermost row axis cut in blocks above g when the rows are more
 * than GATHER_ROWS (a stage of fewer, longer rows that stays in L1 measured faster). */
static void gather_rows(const plan_t *p, const gather_t *gt)
{
    if (gt->rows <= GATHER_ROWS || gt->nrow < 1 || p->ndim >= MAX_DIMS) {
        gather_plan(p, gt);
        return;
    }
    int j = gt->row[0];
    Py_ssize_t e = p->shape[j], other = gt->rows / e, keep = GATHER_BLOCK / other;
    if (keep < 1 || keep >= e) {
        gather_plan(p, gt);
        return;
    }
    Py_ssize_t blocks = e / keep, rest = e - blocks * keep;
    plan_t q = *p; /* axes: ..., blocks (new, before g), g, ..., keep rows at j + 1, ... */
    for (int k = p->ndim; k > gt->g; k--) {
        q.shape[k] = p->shape[k - 1];
        q.ds[k] = p->ds[k - 1];
        q.ss[k] = p->ss[k - 1];
    }
    q.ndim = p->ndim + 1;
    q.shape[gt->g] = blocks;
    q.ds[gt->g] = keep * p->ds[j];
    q.ss[gt->g] = keep * p->ss[j];
    q.shape[j + 1] = keep;
    gather_t qt;
    if (gather_axes(&q, gt->g + 1, &qt)) gather_plan(&q, &qt); else run_plan(&q);
    if (rest) {
        plan_t r = *p;
        r.shape[j] = rest;
        r.dst += blocks * keep * p->ds[j];
        r.src += blocks * keep * p->ss[j];
        if (gather_axes(&r, gt->g, &qt)) gather_plan(&r, &qt); else run_plan(&r);
    }
}

/* ---- staged short runs -------------------------------------------------------------------
 * A large copy of short runs (16 to 48 bytes) whose destination is a contiguous block of R
 * runs per step of the axis j before them, the source's R rows running on over j (zN to its
 * buffer: a fractal's 16 rows of 32 bytes, the next fractal 32 bytes on in each row). Run as
 * it stands, it reads 32 bytes of each of 16 rows in turn, which measured 1.4x slower than
 * reading 64 to 256 (and writing each step's block whole); staged, G consecutive j go at a
 * time: each source row read G runs on into G blocks in L1, the blocks streamed out whole
 * (interleaving the G blocks' stores instead measured slower). */

#define RUNS_READ 128      /* bytes of a source row read per visit */
#define RUNS_STAGE 4096    /* L1 stage bytes */

/* Whether p's last three axes are such j, rows and run axes (the arrays' items plain). */
static int staged_runs(const plan_t *p)
{
    int last = p->ndim - 1;
    if (last < 2 || p->swap || p->ds[last] != p->item || p->ss[last] != p->item) return 0;
    Py_ssize_t bytes = p->shape[last] * p->item;
    return bytes >= 16 && bytes < 64 && bytes % 16 == 0 && p->shape[last - 1] > 1
           && p->ds[last - 1] == bytes && p->shape[last - 1] * bytes * 2 <= RUNS_STAGE
           && p->shape[last - 2] > 1 && p->ss[last - 2] == bytes;
}

/* nj steps of j (dst dj apart) of R rows (src srow apart) of `bytes`, G steps at a time. */
static void runs_block(char *d, const char *s, Py_ssize_t nj, Py_ssize_t dj, Py_ssize_t rows,
                       Py_ssize_t srow, Py_ssize_t bytes)
{
    _Alignas(64) char area[RUNS_STAGE + 4096];
    const Py_ssize_t B = rows * bytes, G0 = RUNS_READ / bytes < RUNS_STAGE / B ? RUNS_READ / bytes : RUNS_STAGE / B;
    for (Py_ssize_t j0 = 0; j0 < nj; j0 += G0) {
        const Py_ssize_t G = nj - j0 < G0 ? nj - j0 : G0;
        /* the stage half a page off the source (4 KiB aliasing) */
        char *stage = area + (((uintptr_t)(s + j0 * bytes) + 2048 - (uintptr_t)area) & 4032);
        for (Py_ssize_t r = 0; r < rows; r++) {
            const char *row = s + j0 * bytes + r * srow;
            char *st = stage + r * bytes;
            for (Py_ssize_t g = 0; g < G; g++, row += bytes, st += B)
                for (Py_ssize_t x = 0; x < bytes; x += 16) memcpy(st + x, row + x, 16);
        }
        for (Py_ssize_t g = 0; g < G; g++)
            stream_out(d + (j0 + g) * dj, stage + g * B, (size_t)B);
    }
}

/* The plan (staged_runs holds) as staged runs, its outer axes looped over. */
static void runs_plan(const plan_t *p)
{
    const int j = p->ndim - 3, r = p->ndim - 2;
    Py_ssize_t idx[MAX_DIMS];
    memset(idx, 0, sizeof idx[0] * (size_t)j);
    char *d = p->dst;
    const char *s = p->src;
    do runs_block(d, s, p->shape[j], p->ds[j], p->shape[r], p->ss[r], p->shape[r + 1] * p->item);
    while (next_index(idx, j, p->shape, p->ds, p->ss, &d, &s));
}

/* Whether a copy in cache is gathered: a transpose whose destination rows share L1 sets (see
 * rows_spread) and run on in pieces of at most a line, so that each row is visited for a few
 * bytes at a time. Its bytes per visit of a row are the piece's, or a tile row's 32 where
 * transpose_narrow groups the pieces of 4-byte items. Measured from_physical, 1-4 MiB, ratio
 * to a copy, piece by piece -> gathered:
 * - rows 2 KiB apart or a multiple: visits of 32 bytes, f32[1024,1024]{0,1:T(8,128)} ~11 ->
 *   ~3.5, bf16's (2,1) ~9 -> ~3.5; of a whole line, f64[1024,512]{0,1:T(8,128)} ~11 -> ~4
 *   (the lines are written whole either way: it is the visits that cost);
 * - rows 1 KiB apart: visits of 8 bytes, u8[1024,1024]{0,1:T(8,128)} 28 -> 5.3; but of 32
 *   (s8's (4,1) tiles, grouped) 2.4 -> 2.9, so not those. */
static int gathers_in_cache(const plan_t *p, const inner_t *in, const gather_t *gt)
{
    if (in->kind != K_TRANSPOSE || gt->nrow < 1) return 0;
    int last = p->ndim - 1;
    if (in->inner == 3 && narrow_dst(p->shape[last - 2], p->shape[last - 1], p->shape[last], p->ds[last - 2],
                                     p->ss[last - 2], in->lg))
        return 0; /* whole lines of each row already (transpose_narrow) */
    Py_ssize_t stride = p->ds[gt->row[gt->nrow - 1]], visit = gt->piece;
    if (in->lg == 2 && rows_tile_u32 != NULL && visit < 32 && 32 % visit == 0) visit = 32;
    return visit <= 64 && !rows_spread(gt->rows, stride) && (stride % 2048 == 0 || visit < 32);
}

/* Whether a copy not streamed by the caller's size is still streamed: runs of at least
 * RUN_STREAM_BYTES into a call destination (plan_t.dst_bytes) of RUN_STREAM_SPAN or more, whose
 * lines are written whole either way (s32[1024,8,256]{2,1,0:T(2,128)} from_physical, 512-byte runs into
 * 8 MiB, one thread: 2.1 -> 1.4x a copy, which streams at that size; transposes of the same
 * size streamed measured slower: f64[37,686,3,13]{1,2,3,0:T(2,128)} 2.2-2.6 -> 2.9-3.5; and runs
 * into 4 MiB: f16[2106868]{0:T(1024)(128)(2,1)} to itself 1.06 -> 1.49, s32[16,512,64]{2,0,1:T(2,128)}
 * from_physical 0.75 -> 0.80-0.96). */
#define RUN_STREAM_BYTES 256
#define RUN_STREAM_SPAN (8 << 20)
static int streams_runs(const plan_t *p)
{
    int last = p->ndim - 1;
    return !p->stream && HAVE_STREAM && last >= 0 && p->ds[last] == p->item && p->ss[last] == p->item
           && p->shape[last] * p->item >= RUN_STREAM_BYTES && p->dst_bytes >= RUN_STREAM_SPAN;
}

/* Whether an unweave of 2-byte pairs into two rows (a (2,1) sub-tile read into logical rows)
 * streams its stores: rows of at least RUN_STREAM_BYTES, 16-byte multiples apart, into a
 * call destination of at least UNWEAVE_STREAM_SPAN (plan_t.dst_bytes). Stored through the cache, the rows of
 * f16[3519,1016]{1,0:T(2,128)(2,1)} (7 MiB) took 1.6x a copy, as long as plain copies of the
 * same runs did (the stores read each line first; glibc's copy does not); streamed 1.3x
 * (the whole call, one thread, alternating builds: 1.95-2.02 -> 1.56-1.73). At 4 MiB streaming
 * measured slower: f16[2097152]{0:T(1024)(128)(2,1)} from_physical 0.84-1.02 -> 0.81-1.23. */
#define UNWEAVE_STREAM_SPAN (6 << 20)
static int unweave_streams(const plan_t *p, const inner_t *in)
{
#if HAVE_AVX2_DISPATCH
    int last = p->ndim - 1;
    return in->kind == K_UNWEAVE && in->weave == unweave_u16_2_avx2 && p->item == 2 && p->ds[last] % 16 == 0
           && ((uintptr_t)p->dst & 1) == 0 && p->shape[last - 1] * 2 >= RUN_STREAM_BYTES
           && p->dst_bytes >= UNWEAVE_STREAM_SPAN;
#else
    (void)p, (void)in;
    return 0;
#endif
}

/* A copy: gathered where its destination rows run on in pieces (see above) and it is large,
 * or in cache where gathers_in_cache holds; staged short runs where staged_runs holds. */
static void copy_plan(const plan_t *p)
{
    for (int k = 0; k < p->ndim; k++)
        if (p->shape[k] == 0) return;
    pairs_t pa;
    if (pairs_axes(p, &pa)) { /* (2,1) pairs against short rows: _kernel_words_pairs.h */
        pairs_plan(p, &pa);
        return;
    }
    if (!HAVE_STREAM) {
        run_plan(p);
        return;
    }
    if (streams_runs(p)) {
        plan_t q = *p;
        q.stream = 1;
        run_plan(&q);
        return;
    }
    if (big_plan(p)) return; /* (rows on both sides numbered across: _kernel_big.h) */
    if (p->stream && staged_runs(p)) {
        runs_plan(p);
        return;
    }
    inner_t in = choose_inner(p);
    for (int g = woven_inner(p, &in) ? -1 : p->ndim - 3; g >= 0; g--) { /* (none below three axes: the small calls' copies) */
        gather_t gt;
        if (p->shape[g] > 1 && gather_axes(p, g, &gt)) {
            int strided = in.kind == K_STRIDED || in.kind == K_WEAVE_PART || in.kind == K_UNWEAVE_PART;
            if (p->stream ? gt.piece < 64 || strided : gathers_in_cache(p, &in, &gt)) {
                gather_rows(p, &gt);
                return;
            }
            break;
        }
    }
#if HAVE_AVX2_DISPATCH
    if (unweave_streams(p, &in)) in.weave = unweave_u16_2_stream;
#endif
    run_inner(p, in);
}

#endif
