/* _pool.h: the copy kernels' own threads (each kernel module includes this file and has a
 * pool of its own). A copy shared among W threads is a list of items (pieces of boxes, each
 * writing its own bytes of the destination) that the calling thread and up to W - 1 pool
 * threads claim one at a time until none is left: a thread that wakes late (40-60 us on this
 * 2-core VM) takes what the others have not, and the calling thread never waits for one that
 * has claimed nothing. Through Python's thread pool (about 60 us a call, static shares)
 * bf16[1000,3000]{1,0:T(8,128)(2,1)} (6 MiB) measured 1.51 -> 1.46x a copy on 2 threads;
 * claiming here, in a harness, 1.8 -> 1.0.
 * Included by _kernel.c and _pack.c after Python.h: one translation unit each. Not a
 * standalone header. */

#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#define POOL_FENCE() _mm_sfence()
#else
#define POOL_FENCE() ((void)0)
#endif
#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#include <stdatomic.h>
#define HAVE_POOL 1
#else
#define HAVE_POOL 0
#endif

#define POOL_MAX 7 /* pool threads, at most (the calling thread is one more) */

/* One item of a shared copy: run(ctx, i). */
typedef void (*pool_item_fn)(void *ctx, Py_ssize_t i);

#if HAVE_POOL
typedef struct {
    pool_item_fn run;
    void *ctx;
    Py_ssize_t count;
    atomic_size_t next; /* the next item to claim */
    int fence;          /* fence (streamed stores) before leaving */
} job_t;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake, idle;
    job_t *job;          /* the copy in progress, or NULL */
    unsigned long gen;   /* copies posted so far: a thread joins each at most once */
    int started, wanted, joined, busy;
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, 0, 0, 0, 0, 0};

/* Claim and run the job's items until none is left. */
static void claim_all(job_t *job)
{
    for (;;) {
        size_t i = atomic_fetch_add_explicit(&job->next, 1, memory_order_relaxed);
        if (i >= (size_t)job->count) break;
        job->run(job->ctx, (Py_ssize_t)i);
    }
    if (job->fence) POOL_FENCE();
}

static void *pool_thread(void *arg)
{
    (void)arg;
    unsigned long seen = 0;
    pthread_mutex_lock(&pool.lock);
    for (;;) {
        while (pool.job == NULL || pool.gen == seen || pool.joined >= pool.wanted)
            pthread_cond_wait(&pool.wake, &pool.lock);
        seen = pool.gen;
        job_t *job = pool.job; /* valid until busy drops back: the caller waits for that */
        pool.joined++;
        pool.busy++;
        pthread_mutex_unlock(&pool.lock);
        claim_all(job);
        pthread_mutex_lock(&pool.lock);
        if (--pool.busy == 0) pthread_cond_signal(&pool.idle);
    }
    return NULL;
}

/* In a forked child the pool's threads are gone: start afresh. */
static void pool_after_fork(void)
{
    pthread_mutex_init(&pool.lock, NULL);
    pthread_cond_init(&pool.wake, NULL);
    pthread_cond_init(&pool.idle, NULL);
    pool.job = NULL;
    pool.started = pool.wanted = pool.joined = pool.busy = 0;
}

/* Start pool threads up to n (under the lock); the number running. */
static int pool_grow(int n)
{
    static int forked_handler = 0;
    if (!forked_handler) {
        pthread_atfork(NULL, NULL, pool_after_fork);
        forked_handler = 1;
    }
    while (pool.started < n && pool.started < POOL_MAX) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, 1 << 20); /* the stages are at most 64 KiB */
        int failed = pthread_create(&t, &attr, pool_thread, NULL);
        pthread_attr_destroy(&attr);
        if (failed) break;
        pool.started++;
    }
    return pool.started;
}

/* Run items 0..count-1 on the calling thread and up to workers - 1 pool threads (one copy at
 * a time: a second caller while one runs takes its items alone); `fence`: each thread fences
 * its streamed stores when done. */
static void pool_run(pool_item_fn run, void *ctx, Py_ssize_t count, int workers, int fence)
{
    job_t job = {run, ctx, count, 0, fence};
    int helpers = 0;
    if (workers > 1 && count > 1 && pthread_mutex_trylock(&pool.lock) == 0) {
        if (pool.job == NULL) {
            helpers = pool_grow(workers - 1 < POOL_MAX ? workers - 1 : POOL_MAX);
            if (helpers > count - 1) helpers = (int)(count - 1);
            if (helpers > 0) {
                pool.job = &job;
                pool.gen++;
                pool.wanted = helpers;
                pool.joined = 0;
                pthread_cond_broadcast(&pool.wake);
            }
        }
        pthread_mutex_unlock(&pool.lock);
    }
    claim_all(&job);
    if (helpers > 0) {
        pthread_mutex_lock(&pool.lock);
        pool.job = NULL; /* late threads find nothing to join */
        while (pool.busy > 0) pthread_cond_wait(&pool.idle, &pool.lock);
        pthread_mutex_unlock(&pool.lock);
    }
}

/* The pool threads running (started once, kept). */
static int pool_size(void)
{
    pthread_mutex_lock(&pool.lock);
    int n = pool.started;
    pthread_mutex_unlock(&pool.lock);
    return n;
}
#else
static int pool_size(void) { return 0; }

static void pool_run(pool_item_fn run, void *ctx, Py_ssize_t count, int workers, int fence)
{
    (void)workers;
    for (Py_ssize_t i = 0; i < count; i++) run(ctx, i);
    if (fence) POOL_FENCE();
}
#endif
