/* _kernel_bytes_runs.h: runs of m bytes into (out of) groups of G > m bytes, the groups' other
 * G - m bytes not the task's: a (4,1) sub-tile of bytes over a dim of 2 or 3 rows.
 *
 * s8[171,6216,3]{1,2,0:T(4,128)(4,1)}: each logical triple (dim 2, contiguous in the array) is
 * one quad's first 3 bytes in the buffer, the fourth padding. The run loop moved 3 bytes a call
 * (run_any; one thread, alternating, three runs, medians: to_physical 2.88 -> 1.42x a copy,
 * from_physical 2.82 -> 1.12x). Here a round takes K = 64 / G groups with AVX-512 VBMI: the K
 * runs (K*m dense bytes) in one masked load, put in place by one vpermb, one masked store; the
 * masks leave every byte that is not the task's untouched and never reach past the task's
 * bytes (masked-off lanes neither fault nor write):
 *
 *   runs_vbmi   into: d[k*G + b] = s[k*m + b], b < m (to_physical);
 *               out:  d[k*m + b] = s[k*G + b], b < m (from_physical);
 *   group_runs  runs a run loop's n runs this way where it applies (1), else 0 (and a strided
 *               row of wider items of bytes: spread_bytes, _kernel_bytes_spread.h).
 *
 * quads_part_out, the masked stores of a partial quad's rows (1 to 3 of 4) out of quads_to's
 * stage, is here too (AVX-512BW: chosen with quads_wide, _kernel_bytes_wide.h).
 *
 * Chosen at import (choose_byte_runs): the CPU has AVX-512 BW and VBMI and
 * TENSORLAYOUT_NO_AVX512 is unset or empty; else the caller's run loop.
 * Self-contained (include guard). */
#ifndef TENSORLAYOUT_KERNEL_BYTES_RUNS_H
#define TENSORLAYOUT_KERNEL_BYTES_RUNS_H
#include "_kernel_plan.h"
#include "_isa.h"

#define RUNS_GROUP_MAX 32 /* G at most: two groups a 64-byte round at least */

static int byte_runs_vbmi; /* the VBMI rounds run (set at import: choose_byte_runs) */

static void choose_byte_runs(void)
{
#if HAVE_AVX2_DISPATCH
    __builtin_cpu_init();
    byte_runs_vbmi = __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vbmi") && avx512_allowed();
#endif
}

#if HAVE_AVX2_DISPATCH
/* The vpermb index and byte mask of a round between groups of G bytes (the wide side) and
 * runs of m (the dense side): into (wide side written) byte j <- k*m + b (j = k*G + b);
 * out (dense side written) byte k*m + b <- k*G + b. *mask: the bytes written in a whole round. */
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) static __m512i runs_index(int G, int m, int into,
                                                                                  __mmask64 *mask)
{
    _Alignas(64) uint8_t ix[64];
    const int K = 64 / G;
    __mmask64 w = 0;
    for (int j = 0; j < 64; j++) ix[j] = 0;
    for (int k = 0; k < K; k++)
        for (int b = 0; b < m; b++) {
            const int wide = k * G + b, dense = k * m + b;
            ix[into ? wide : dense] = (uint8_t)(into ? dense : wide);
            w |= (__mmask64)1 << (into ? wide : dense);
        }
    *mask = w;
    return _mm512_load_si512((const void *)ix);
}

/* The first `bytes` bytes (0..64) of a 64-byte round. */
static inline __mmask64 first_bytes(Py_ssize_t bytes)
{
    return bytes >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << bytes) - 1);
}

/* Stage rows (pitch apart) out to n destination rows (da apart) of `bytes` bytes each, only
 * bytes b < nb of every 4 (a partial (4,1) quad's rows: quads_to, _kernel_bytes.h): masked
 * 64-byte stores, the quads' other bytes left as they are. */
__attribute__((target("avx512f,avx512bw"))) static void quads_part_out(char *d, Py_ssize_t da, const char *stage,
                                                                      Py_ssize_t pitch, Py_ssize_t n,
                                                                      Py_ssize_t bytes, int nb)
{
    const __mmask64 rows = nb == 1 ? 0x1111111111111111ull : nb == 2 ? 0x3333333333333333ull : 0x7777777777777777ull;
    for (Py_ssize_t a = 0; a < n; a++)
        for (Py_ssize_t k = 0; k < bytes; k += 64) {
            const __mmask64 m = rows & first_bytes(bytes - k);
            _mm512_mask_storeu_epi8(d + a * da + k, m, _mm512_maskz_loadu_epi8(m, stage + a * pitch + k));
        }
}

/* d[k*ds + b] = s[k*ss + b], b < m, k < n, where one side is the groups (stride G, m < G <= 32)
 * and the other the dense runs (stride m): K = 64 / G runs a round. */
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) static void runs_vbmi(char *d, const char *s, Py_ssize_t n,
                                                                             int m, int G, int into)
{
    __mmask64 whole;
    const __m512i ix = runs_index(G, m, into, &whole);
    const Py_ssize_t K = 64 / G, din = into ? G : m, sin = into ? m : G;
    for (Py_ssize_t k = 0; k < n; k += K) {
        const Py_ssize_t c = n - k < K ? n - k : K; /* runs this round */
        const __mmask64 load = first_bytes((c - 1) * sin + m), store = whole & first_bytes((c - 1) * din + m);
        const __m512i x = _mm512_maskz_loadu_epi8(load, s + k * sin);
        _mm512_mask_storeu_epi8(d + k * din, store, _mm512_permutexvar_epi8(ix, x));
    }
}
#endif

/* A run loop's n runs of `bytes` (ds, ss apart) through runs_vbmi where one side's runs are dense
 * (stride `bytes`) and the other's groups G apart, bytes < G <= RUNS_GROUP_MAX, 1-byte arrays; 1
 * done, 0 not (the caller's loop runs). */
static int group_runs(const plan_t *p, char *d, const char *s, Py_ssize_t n, Py_ssize_t ds, Py_ssize_t ss,
                      Py_ssize_t bytes)
{
#if HAVE_AVX2_DISPATCH
    if (!byte_runs_vbmi || p->unit != 1 || p->swap || n < 2) return 0;
    if (ss == bytes && ds > bytes && ds <= RUNS_GROUP_MAX) {
        runs_vbmi(d, s, n, (int)bytes, (int)ds, 1);
        return 1;
    }
    if (ds == bytes && ss > bytes && ss <= RUNS_GROUP_MAX) {
        runs_vbmi(d, s, n, (int)bytes, (int)ss, 0);
        return 1;
    }
#else
    (void)p, (void)d, (void)s, (void)n, (void)ds, (void)ss, (void)bytes;
#endif
    return 0;
}

#endif
