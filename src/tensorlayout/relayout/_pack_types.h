/* _pack_types.h: the packing kernel's common ground (_pack.c): the CPU features it uses, its sizes,
 * the task and call context types and the small helpers every path shares.
 * Self-contained (include guard), as each of _pack.c's parts is. */
#ifndef TENSORLAYOUT_PACK_TYPES_H
#define TENSORLAYOUT_PACK_TYPES_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#define HAVE_SSE2 1
#else
#define HAVE_SSE2 0
#endif
#if (defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) || defined(_M_X64)
#define HAVE_SWAR 1 /* the 64-bit word tricks assume little-endian byte order */
#else
#define HAVE_SWAR 0
#endif
#include "_pack_bits.h"
#include "_pack_joins.h"
#include "_pool.h"
#include "_task.h"

#if defined(__GNUC__)
#define ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define ALWAYS_INLINE static inline
#endif

#define MAX_DIMS 32
#define LANES 16 /* columns per register */
#define MAX_Q 8  /* bytes per column the register path holds */
#define STAGE_BYTES 4096 /* L1 staging area for runs of contiguous lines */
#define WORDS_COLUMNS 16 /* words: columns per block (see words) */
#define WORDS_AHEAD 8    /* words: rows of lines a line of the buffer is fetched ahead, into L2 only: rows
                          * of lines a multiple of 4 KiB apart share one L1 set, which the group's 8 rows
                          * fill (u1[2000,3001]{0,1:T(8,128)(32,1)E(1)}: 6.5 / 7.1 -> 5.1 / 5.9x a copy);
                          * into L1 where the copy streams (u1[21989,1352]{0,1:...}: 4.3 / 6.6 in L2,
                          * 3.7 / 5.5 in L1) */
#define WORDS_LOG_AHEAD 256 /* words: logical bytes a column's line is fetched ahead */
#define WORDS_LINE_ROWS 8 /* words: rows of lines whose words make a column's logical line */
#define WORDS_MAX_P 64   /* words: bytes per column at most (16 columns within a KiB) */
#define STREAM_MIN_RUN 1024 /* unpack streams rows at least this long (shorter: slower, measured) */

typedef struct {
    int ndim; /* -1: an empty task */
    int kind; /* 0 data, 1 pad, 2 data owning its column gaps */
    Py_ssize_t slot;
    char *log;
    Py_ssize_t shape[MAX_DIMS], ps[MAX_DIMS], ls[MAX_DIMS];
    int tail;           /* > 0: each column's row of lines has `tail` more codes (joined_tail) */
    Py_ssize_t tail_ps; /* ... written into a word this many slots on */
} task_t;

typedef struct {
    uint8_t *bytes; /* the packed buffer */
    int bits, per, sign, stream;
    unsigned mask;
    uint8_t pad;      /* pack: the pad code (pad tasks read it, with logical strides 0) */
    uint8_t pad_byte; /* ... repeated over a byte */
    uint64_t swar_mask[4]; /* after each level of the word trick, finest first */
    const char *log_lo, *log_hi; /* pack: the logical array's bytes, first to past the last (a
                                  * columns tail reads whole vectors inside them) */
    const uint8_t *bytes_hi;     /* past the packed buffer's last byte */
} ctx_t;

typedef enum { L_COLUMNS, L_PARTIAL, L_WORDS, L_CONTIGUOUS, L_BYTES, L_SLOTS } line_t;

/* The innermost outer axis, which runs inside a line function (one call per row of lines). */
typedef struct {
    Py_ssize_t n, ps, ls; /* extent, slot stride, logical byte stride */
} rows_t;

static int aligned(const task_t *t, int per)
{
    int last = t->ndim - 1;
    if (last < 0 || t->ps[last] != 1 || t->shape[last] % per || t->slot % per) return 0;
    for (int k = 0; k < last; k++)
        if (t->ps[k] % per) return 0;
    return 1;
}

/* Columns of n rows, n not a multiple of per, whole bytes otherwise: packed of kind 2 (the
 * partial byte's other slots are the column's gap, padding), or unpacked (the partial byte is
 * read whole, inside the buffer as its first slot is). */
/* Slot stride 1 innermost, the first slot and every other slot stride whole bytes. */
static int grouped(const task_t *t, int per)
{
    int last = t->ndim - 1;
    if (last < 0 || t->ps[last] != 1 || t->slot % per) return 0;
    for (int k = 0; k < last; k++)
        if (t->ps[k] % per) return 0;
    return 1;
}

static int partial(const task_t *t, int per, int unpack)
{
    int last = t->ndim - 1;
    if (!HAVE_SSE2 || last < 1 || t->ps[last] != 1 || t->shape[last] % per == 0 || t->slot % per) return 0;
    for (int k = 0; k < last; k++)
        if (t->ps[k] % per) return 0;
    Py_ssize_t q = (t->shape[last] + per - 1) / per;
    return t->kind == (unpack ? 0 : 2) && t->ls[last - 1] == 1 && t->ps[last - 1] >= q * per && q <= MAX_Q;
}

/* A kind-2 task whose column groups are whole bytes: it writes whole bytes on any path (the
 * slots path included), so it may share a call with other threads' tasks. */
static int owns_whole_bytes(const task_t *t, int per)
{
    int last = t->ndim - 1;
    if (t->kind != 2 || last < 1 || t->ps[last] != 1 || t->slot % per) return 0;
    for (int k = 0; k < last; k++)
        if (t->ps[k] % per) return 0;
    return 1;
}

static line_t choose(const task_t *t, int per, int unpack)
{
    if (partial(t, per, unpack)) return L_PARTIAL;
    int last = t->ndim - 1;
    if (HAVE_SWAR && last >= 1 && t->ls[last] == 1 && t->shape[last] < 8 && t->ps[last - 1] >= 8
        && t->ps[last - 1] <= WORDS_MAX_P * per && t->kind == (unpack ? 0 : 2) && grouped(t, per))
        return L_WORDS; /* fewer than 8 rows: the word's other codes are the column's gap (pad) */
    if (!aligned(t, per)) return L_SLOTS;
    if (HAVE_SWAR && t->ls[last] == 1 && t->shape[last] == 8 && last >= 1 && t->ps[last - 1] >= 8
        && t->ps[last - 1] <= WORDS_MAX_P * per)
        return L_WORDS;

    if (t->ls[last] == 1) return L_CONTIGUOUS;
    if (HAVE_SSE2 && last >= 1 && t->ls[last - 1] == 1 && t->ps[last - 1] > 0
        && t->shape[last] / per <= MAX_Q)
        return L_COLUMNS;
    return L_BYTES;
}


#endif /* TENSORLAYOUT_PACK_TYPES_H */
