/* _pool.h: the copy kernels' own threads (each kernel module includes this file and has a
 * pool of its own). A copy shared among W threads is a list of items (pieces of boxes, each
 * writing its own bytes of the destination) that the calling thread and up to W - 1 pool
 * threads claim one at a time until none is left. A pool thread joins a copy only while it is
 * posted: one that wakes after the caller has claimed the last item finds nothing to join, and
 * the caller waits only for the threads that joined its copy (each finishing the item it
 * holds). Waking a sleeping thread here (a 2-core VM) takes it 20-60 us to start; the caller's
 * part of the wake measured ~9 us (so threads done with a copy spin for the next a while:
 * POOL_SPIN_NS). The same 6 MiB ragged copy, bf16[1000,3000]{1,0:T(8,128)
 * (2,1)}, went 1.51 -> 1.46x a copy when two threads split it through Python's thread pool
 * (static halves, ~60 us a call), 1.35 -> 1.14 claimed here.
 * Included by _kernel.c and _pack.c, each a module of its own with a pool of its own.
 * Self-contained (include guard). */
#ifndef TENSORLAYOUT_POOL_H
#define TENSORLAYOUT_POOL_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#define POOL_FENCE() _mm_sfence()
#define POOL_PAUSE() _mm_pause()
#else
#define POOL_FENCE() ((void)0)
#define POOL_PAUSE() ((void)0)
#endif
#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#define HAVE_POOL 1
#else
#define HAVE_POOL 0
#endif

#define POOL_MAX 7 /* pool threads, at most (the calling thread is one more: _threads.MOST_THREADS) */
/* A pool thread done with a copy spins this long for the next before it sleeps (and a caller
 * this long for its threads' last pieces), as OpenMP runtimes do: a copy posted while it spins
 * starts on it at once, not 20-60 us later, and the caller's post makes no system call. With
 * copies shared from 3 MiB on (_copy.THREAD_MIN_BYTES), the population's 59 rows of 3-5.5 MiB
 * (seeds 0-2, default threads, two quiet runs) took a median 0.74x their unshared time with
 * spinning, 0.93x without; shared from 2 MiB, rows of 2-3 MiB stayed at 1.02x with
 * spinning and went 1.42x slower without. The cost: up to this much CPU on each pool thread
 * after a shared copy. */
#define POOL_SPIN_NS 200000LL

/* One item of a shared copy: run(ctx, i). */
typedef void (*pool_item_fn)(void *ctx, Py_ssize_t i);

#if HAVE_POOL
typedef struct {
    pool_item_fn run;
    void *ctx;
    Py_ssize_t count;
    atomic_size_t next; /* the next item to claim */
    int fence;          /* fence (streamed stores) before leaving */
    atomic_int busy;    /* pool threads inside it (changed under the lock; read by a spinning caller) */
} job_t;

/* Copies posted so far (pool.gen, readable without the lock: what a spinning thread watches). */
static atomic_ulong pool_posted;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake, idle;
    job_t *job;          /* the copy posted, or NULL */
    unsigned long gen;   /* copies posted so far: a thread joins each at most once */
    int started, failed; /* threads running; pthread_create failed (no more tries) */
    int wanted, joined;  /* of the copy posted */
    int last_joined;     /* threads that joined the last copy (for tests) */
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, 0, 0, 0, 0, 0, 0};

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

/* Nanoseconds since `t0` on the monotonic clock. */
static long long pool_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)(t.tv_sec - t0->tv_sec) * 1000000000LL + (t.tv_nsec - t0->tv_nsec);
}

/* Spin (no sleep) while a copy posted is still the one `seen` (a pool thread waiting for the
 * next), for up to `ns`: a thread that spins starts within a fraction of a microsecond of the
 * post, one asleep on a condition 20-60 us later. */
static void pool_spin_for_post(unsigned long seen, long long ns)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (unsigned k = 1; atomic_load_explicit(&pool_posted, memory_order_acquire) == seen; k++) {
        POOL_PAUSE();
        if ((k & 63) == 0 && pool_since(&t0) > ns) return;
    }
}

/* Spin while pool threads are still inside `job` (its caller waiting for their last pieces),
 * for up to `ns`. */
static void pool_spin_while_busy(const job_t *job, long long ns)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (unsigned k = 1; atomic_load_explicit(&job->busy, memory_order_acquire) > 0; k++) {
        POOL_PAUSE();
        if ((k & 63) == 0 && pool_since(&t0) > ns) return;
    }
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
        job_t *job = pool.job; /* valid until its busy count drops back: its caller waits for that */
        pool.joined++;
        atomic_fetch_add_explicit(&job->busy, 1, memory_order_relaxed);
        pthread_mutex_unlock(&pool.lock);
        claim_all(job);
        pthread_mutex_lock(&pool.lock);
        if (atomic_fetch_sub_explicit(&job->busy, 1, memory_order_release) == 1)
            pthread_cond_broadcast(&pool.idle); /* callers wait on their own job (not touched again) */
        pthread_mutex_unlock(&pool.lock);
        pool_spin_for_post(seen, POOL_SPIN_NS); /* the next copy soon: join it awake */
        pthread_mutex_lock(&pool.lock);
    }
    return NULL;
}

/* fork: the lock is held across it, so the child's copy is consistent; the child has none of
 * the threads and starts afresh. */
static void pool_before_fork(void) { pthread_mutex_lock(&pool.lock); }
static void pool_after_fork_parent(void) { pthread_mutex_unlock(&pool.lock); }
static void pool_after_fork_child(void)
{
    pthread_mutex_init(&pool.lock, NULL);
    pthread_cond_init(&pool.wake, NULL);
    pthread_cond_init(&pool.idle, NULL);
    pool.job = NULL;
    pool.started = pool.failed = pool.wanted = pool.joined = pool.last_joined = 0;
}

/* Start pool threads up to n, at most POOL_MAX (under the lock); the number running. */
static int pool_grow(int n)
{
    if (pool.started == 0 && !pool.failed && pthread_atfork(pool_before_fork, pool_after_fork_parent,
                                                            pool_after_fork_child) != 0)
        pool.failed = 1; /* no threads where a fork would find the lock in an unknown state */
    while (pool.started < n && pool.started < POOL_MAX && !pool.failed) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, 1 << 20); /* the stages are at most 64 KiB */
        if (pthread_create(&t, &attr, pool_thread, NULL) != 0) pool.failed = 1;
        else pool.started++;
        pthread_attr_destroy(&attr);
    }
    return pool.started;
}

/* Post the job for up to n pool threads if no other copy is posted (under the lock); the
 * threads asked to join. */
static int pool_post(job_t *job, int n)
{
    if (pool.job != NULL) return 0; /* another caller's copy: this one runs alone */
    int running = pool_grow(n);
    if (n > running) n = running;
    if (n > 0) {
        pool.job = job;
        pool.gen++;
        pool.wanted = n;
        pool.joined = 0;
        atomic_store_explicit(&pool_posted, pool.gen, memory_order_release); /* threads spinning */
        for (int k = 0; k < n; k++) pthread_cond_signal(&pool.wake);        /* threads asleep */
    }
    return n;
}

/* Run items 0..count-1 on the calling thread and up to workers - 1 pool threads (one copy
 * posted at a time: a caller that finds another's copy posted runs its items alone); `fence`:
 * each thread fences its streamed stores when done. */
static void pool_run(pool_item_fn run, void *ctx, Py_ssize_t count, int workers, int fence)
{
    job_t job = {run, ctx, count, 0, fence, 0};
    int n = workers - 1 < POOL_MAX ? workers - 1 : POOL_MAX, posted = 0;
    if (n > count - 1) n = (int)(count - 1);
    if (n > 0) {
        pthread_mutex_lock(&pool.lock);
        posted = pool_post(&job, n);
        pthread_mutex_unlock(&pool.lock);
    }
    claim_all(&job);
    if (posted > 0) {
        pthread_mutex_lock(&pool.lock);
        if (pool.job == &job) {
            pool.job = NULL; /* later threads find nothing to join */
            pool.last_joined = pool.joined;
        }
        pthread_mutex_unlock(&pool.lock);
        pool_spin_while_busy(&job, POOL_SPIN_NS); /* the threads finish their last items */
        pthread_mutex_lock(&pool.lock);
        while (atomic_load_explicit(&job.busy, memory_order_acquire) > 0)
            pthread_cond_wait(&pool.idle, &pool.lock);
        pthread_mutex_unlock(&pool.lock);
    }
}

/* (threads running, threads that joined the last shared copy) */
static void pool_info(int *started, int *joined)
{
    pthread_mutex_lock(&pool.lock);
    *started = pool.started;
    *joined = pool.last_joined;
    pthread_mutex_unlock(&pool.lock);
}
#else
static void pool_run(pool_item_fn run, void *ctx, Py_ssize_t count, int workers, int fence)
{
    (void)workers;
    for (Py_ssize_t i = 0; i < count; i++) run(ctx, i);
    if (fence) POOL_FENCE();
}

static void pool_info(int *started, int *joined) { *started = *joined = 0; }
#endif

/* pool_info() for Python: the kernel module's method (POOL_INFO_METHOD in its table). */
static PyObject *pool_info_py(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    int started, joined;
    pool_info(&started, &joined);
    return Py_BuildValue("ii", started, joined);
}

#define POOL_INFO_METHOD                                                                       \
    {"pool_info", pool_info_py, METH_NOARGS,                                                   \
     "pool_info(): (the module's threads running, started by the first shared copy and kept; " \
     "the threads that joined the last shared copy)."}

#endif
