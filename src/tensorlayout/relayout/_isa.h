/* _isa.h: the one reader of the environment's say over the kernels' wider forms, shared by
 * _kernel.c and _pack.c. Each module chooses its AVX-512 forms at import where the CPU has them
 * (__builtin_cpu_supports) and avx512_allowed() holds: TENSORLAYOUT_NO_AVX512 unset or empty.
 * Set, the AVX2 / SSE2 forms run (the tests run them so, in a child process).
 * Self-contained (include guard). */
#ifndef TENSORLAYOUT_ISA_H
#define TENSORLAYOUT_ISA_H
#include <Python.h> /* first, as in every part (it brings stdlib.h: getenv) */

/* Whether the environment variable `name` is set and not empty ("TENSORLAYOUT_PACK_SSE2"). */
static inline int env_flag(const char *name)
{
    const char *v = getenv(name);
    return v != NULL && v[0] != '\0';
}

/* Whether the AVX-512 forms may run (the CPU's support is each caller's own check). */
static inline int avx512_allowed(void)
{
    return !env_flag("TENSORLAYOUT_NO_AVX512");
}

#endif
