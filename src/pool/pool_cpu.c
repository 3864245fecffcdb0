/* Task pools on CPU threads: the four schemes of Cederman & Tsigas 2008,
 * Section 4, with POSIX threads and C11 atomics.
 *
 * Workers are pthreads, not OpenMP threads: ThreadSanitizer must see every
 * synchronization, and libgomp's is invisible to it. Every shared word is
 * an atomic with an explicit order, or is guarded by a lock or a barrier.
 *
 * Termination (BLOCKING, LOCKFREE, STEAL): `pending` counts tasks pushed
 * and not yet finished. A push adds 1 before the task becomes visible; a
 * worker subtracts 1 (release) only after the task has run, so the tasks it
 * pushed are counted already and the count cannot touch 0 while work
 * remains. A worker that finds no task reads the count (acquire) and leaves
 * at 0. STATIC needs no count: its rounds end at a barrier.
 *
 * Failure: the first failure (a work function's status, or GPK_EFULL on a
 * push) claims `failed`, writes its message and sets `stop`; every worker
 * leaves at its next check. Workers never touch the context: the calling
 * thread copies the message there after joining them. */
#define _POSIX_C_SOURCE 200809L /* pthread barriers, clock_gettime */
#include "pool_internal.h"

#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ThreadSanitizer does not model standalone fences (GCC warns and ignores
 * them). Under TSan the Chase-Lev fences are replaced by making the two
 * accesses around each fence seq_cst, which orders them the same way and
 * which TSan does understand. */
#if defined(__SANITIZE_THREAD__)
#define POOL_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define POOL_TSAN 1
#endif
#endif
#ifndef POOL_TSAN
#define POOL_TSAN 0
#endif

#define CACHE_LINE 64
#define IDLE_SPINS 4 /* empty polls before a worker yields its core */

typedef struct pool_run pool_run;

struct gpk_pool_worker {
    alignas(CACHE_LINE) pool_run *run; /* a cache line per worker: counters are hot */
    unsigned id;
    unsigned last_victim; /* STEAL, round robin: the paper's "next after the last" */
    uint64_t rng;         /* STEAL, random victims: xorshift64 state, never 0 */
    uint64_t tasks, pushed, steals, steal_attempts;
    pthread_t thread;
};

/* STATIC: `in` is read-only during a round, `out` only appended to. */
typedef struct static_list {
    unsigned char *arrays[2];
    unsigned char *in, *out; /* swapped by the barrier's serial thread */
    size_t in_count;
    uint64_t rounds;
    int done;
    pthread_barrier_t barrier;
    alignas(CACHE_LINE) atomic_size_t in_head;  /* next task of `in` to take */
    alignas(CACHE_LINE) atomic_size_t out_tail; /* next free place in `out` */
} static_list;

/* BLOCKING: a ring of tasks; head and count are guarded by the lock. */
typedef struct blocking_queue {
    alignas(CACHE_LINE) atomic_int lock;
    size_t head, count;
    unsigned char *data;
} blocking_queue;

/* LOCKFREE (Tsigas & Zhang 2001). Logical positions p = 0, 1, 2, ... map to
 * slot p % capacity in lap p / capacity. A slot is one 64-bit word:
 * (lap << 32) | (handle + 1), or (lap << 32) | 0 for "empty, ready for a
 * task of this lap". Tsigas and Zhang tell a fresh empty slot from a stale
 * one with two null values, NULL0 and NULL1, alternating per lap: the lap's
 * low bit is exactly that; the full 32-bit lap makes the slot ABA-safe
 * (a slot can only be CASed by an operation of the right lap). Taking the
 * task of position p writes "empty for lap + 1", i.e. frees the slot for
 * position p + capacity.
 *
 * Tasks live in `payload`, indexed by handle; handles come from a
 * Treiber free list whose top word carries a tag against ABA. There are
 * capacity + workers handles: a queue of at most `capacity` tasks plus at
 * most one handle in a worker's hands. The head and tail words are hints,
 * advanced lazily (every other operation), as the paper does: operations
 * scan forward from them to the real head or tail. */
typedef struct lockfree_queue {
    alignas(CACHE_LINE) _Atomic uint64_t head_hint;
    alignas(CACHE_LINE) _Atomic uint64_t tail_hint;
    alignas(CACHE_LINE) _Atomic uint64_t free_top; /* (tag << 32) | (handle + 1), 0: none */
    _Atomic uint64_t *slots;
    _Atomic uint32_t *free_next; /* per handle: the next free handle + 1, 0: none */
    unsigned char *payload;
    uint32_t handles;
} lockfree_queue;

/* STEAL: one bounded Chase-Lev (ABP) deque per worker. Task words are
 * atomics: a thief may read a slot that its owner is rewriting (the
 * thief's CAS on top then fails and the copy is discarded), and in C11 that
 * read must not be a data race. Relaxed loads and stores cost nothing more
 * than plain ones on x86 and ARM. */
typedef struct steal_deque {
    alignas(CACHE_LINE) _Atomic int64_t top;
    alignas(CACHE_LINE) _Atomic int64_t bottom;
    _Atomic uint64_t *words; /* capacity x task_words */
} steal_deque;

struct pool_run {
    gpk_pool_config cfg;
    size_t task_words; /* STEAL: 8-byte words per task */
    alignas(CACHE_LINE) atomic_int stop;
    atomic_int gate; /* 0: wait, 1: go, -1: abort (a thread could not start) */
    atomic_int failed;
    gpk_status fail_status; /* written once by the failure that claims `failed` */
    char fail_msg[GPK_ERRLEN];
    alignas(CACHE_LINE) _Atomic int64_t pending;
    static_list st;
    blocking_queue bq;
    lockfree_queue lf;
    steal_deque *deques;
    gpk_pool_worker *workers;
};

static void run_fail(pool_run *run, gpk_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void run_fail(pool_run *run, gpk_status s, const char *fmt, ...)
{
    int expected = 0;
    if (atomic_compare_exchange_strong_explicit(&run->failed, &expected, 1, memory_order_acq_rel,
                                                memory_order_relaxed)) {
        run->fail_status = s;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(run->fail_msg, sizeof run->fail_msg, fmt, ap);
        va_end(ap);
    }
    atomic_store_explicit(&run->stop, 1, memory_order_release);
}

static int run_stopped(pool_run *run) { return atomic_load_explicit(&run->stop, memory_order_acquire); }

/* An idle worker retries a few times, then gives its core away: with more
 * workers than cores a spinning worker would starve the one with work. */
static void idle_wait(unsigned *idle)
{
    if (++*idle > IDLE_SPINS) sched_yield();
}

/* Runs one task; 0 when the run must stop. */
static int run_task(gpk_pool_worker *w, const void *task)
{
    pool_run *run = w->run;
    gpk_status s = run->cfg.work(w, task, run->cfg.user);
    w->tasks++;
    if (s != GPK_OK) {
        /* after a failed push the push's own message stays (first failure wins) */
        run_fail(run, s, "pool (%s): a work function returned \"%s\" (status %d) on worker %u",
                 gpk_pool_scheme_name(run->cfg.scheme), gpk_status_string(s), (int)s, w->id);
        return 0;
    }
    return 1;
}

/* ---- STATIC ------------------------------------------------------------------ */

static gpk_status static_push(gpk_pool_worker *w, const void *task)
{
    pool_run *run = w->run;
    static_list *sl = &run->st;
    size_t at = atomic_fetch_add_explicit(&sl->out_tail, 1, memory_order_relaxed);
    if (at >= run->cfg.capacity) {
        run_fail(run, GPK_EFULL,
                 "pool full: the static task list's out-array holds %zu tasks (opts.capacity) and a "
                 "round produced more",
                 run->cfg.capacity);
        return GPK_EFULL;
    }
    /* the barrier at the end of the round publishes the write */
    memcpy(sl->out + at * run->cfg.task_size, task, run->cfg.task_size);
    return GPK_OK;
}

static void static_worker(gpk_pool_worker *w)
{
    pool_run *run = w->run;
    static_list *sl = &run->st;
    const size_t ts = run->cfg.task_size;
    alignas(max_align_t) unsigned char task[GPK_POOL_MAX_TASK];
    for (;;) {
        /* in and in_count were set before the last barrier: plain reads */
        const unsigned char *in = sl->in;
        size_t n = sl->in_count;
        while (!run_stopped(run)) {
            size_t i = atomic_fetch_add_explicit(&sl->in_head, 1, memory_order_relaxed);
            if (i >= n) break;
            memcpy(task, in + i * ts, ts);
            if (!run_task(w, task)) break;
        }
        /* End of the round: one thread swaps the arrays while the others
         * wait at the second barrier. */
        if (pthread_barrier_wait(&sl->barrier) == PTHREAD_BARRIER_SERIAL_THREAD) {
            size_t produced = atomic_load_explicit(&sl->out_tail, memory_order_relaxed);
            sl->rounds++;
            if (run_stopped(run) || produced == 0) {
                sl->done = 1;
            } else {
                unsigned char *t = sl->in;
                sl->in = sl->out;
                sl->out = t;
                sl->in_count = produced;
                atomic_store_explicit(&sl->in_head, 0, memory_order_relaxed);
                atomic_store_explicit(&sl->out_tail, 0, memory_order_relaxed);
            }
        }
        pthread_barrier_wait(&sl->barrier);
        if (sl->done) return;
    }
}

/* ---- BLOCKING ------------------------------------------------------------------ */

/* Test-and-test-and-set: spin on a plain load (no cache-line traffic) and
 * CAS only when the lock looks free; yield after a while, since the holder
 * may be descheduled when there are more workers than cores. */
static void spin_lock(atomic_int *lock)
{
    unsigned tries = 0;
    for (;;) {
        int expected = 0;
        if (atomic_load_explicit(lock, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_weak_explicit(lock, &expected, 1, memory_order_acquire,
                                                  memory_order_relaxed))
            return;
        if (++tries > 16) sched_yield();
    }
}

static void spin_unlock(atomic_int *lock) { atomic_store_explicit(lock, 0, memory_order_release); }

static gpk_status blocking_push(pool_run *run, const void *task)
{
    blocking_queue *q = &run->bq;
    const size_t cap = run->cfg.capacity, ts = run->cfg.task_size;
    spin_lock(&q->lock);
    if (q->count == cap) {
        spin_unlock(&q->lock);
        return GPK_EFULL;
    }
    memcpy(q->data + ((q->head + q->count) % cap) * ts, task, ts);
    q->count++;
    spin_unlock(&q->lock);
    return GPK_OK;
}

static int blocking_pop(pool_run *run, void *task)
{
    blocking_queue *q = &run->bq;
    const size_t cap = run->cfg.capacity, ts = run->cfg.task_size;
    int got = 0;
    spin_lock(&q->lock);
    if (q->count > 0) {
        memcpy(task, q->data + q->head * ts, ts);
        q->head = (q->head + 1) % cap;
        q->count--;
        got = 1;
    }
    spin_unlock(&q->lock);
    return got;
}

/* ---- LOCKFREE ------------------------------------------------------------------ */

static int handle_alloc(lockfree_queue *q, uint32_t *handle)
{
    uint64_t top = atomic_load_explicit(&q->free_top, memory_order_acquire);
    for (;;) {
        uint32_t h1 = (uint32_t)top;
        if (h1 == 0) return 0;
        uint32_t next = atomic_load_explicit(&q->free_next[h1 - 1], memory_order_relaxed);
        uint64_t want = (((top >> 32) + 1) << 32) | next;
        /* acquire: the handle's last reader finished copying its payload
         * before it released the handle */
        if (atomic_compare_exchange_weak_explicit(&q->free_top, &top, want, memory_order_acquire,
                                                  memory_order_acquire)) {
            *handle = h1 - 1;
            return 1;
        }
    }
}

static void handle_free(lockfree_queue *q, uint32_t handle)
{
    uint64_t top = atomic_load_explicit(&q->free_top, memory_order_relaxed);
    uint64_t want;
    do {
        atomic_store_explicit(&q->free_next[handle], (uint32_t)top, memory_order_relaxed);
        want = (((top >> 32) + 1) << 32) | (handle + 1);
    } while (!atomic_compare_exchange_weak_explicit(&q->free_top, &top, want, memory_order_release,
                                                    memory_order_relaxed));
}

/* Lazy head/tail update: one CAS from the value the operation started
 * from. Failing is fine (someone moved it further); the hint only grows. */
static void advance_hint(_Atomic uint64_t *hint, uint64_t seen, uint64_t to)
{
    atomic_compare_exchange_strong_explicit(hint, &seen, to, memory_order_release, memory_order_relaxed);
}

/* Lap of slot word s relative to the lap of position p: 0 same lap,
 * > 0 later (the slot has moved on), < 0 earlier. */
static int32_t lap_diff(uint64_t s, uint64_t p, uint64_t cap)
{
    return (int32_t)((uint32_t)(s >> 32) - (uint32_t)(p / cap));
}

/* What a push or a pop sees at position p: the slot, the word it holds
 * (read with acquire) and that word's lap relative to p's. Their CAS
 * takes a copy of the word as the expected value: after a failed one they
 * read the slot again, so the word a failure writes back is not needed
 * (and r need not live in memory). */
typedef struct {
    _Atomic uint64_t *slot;
    uint64_t s;
    int32_t d;
} ring_look;

static ring_look ring_read(lockfree_queue *q, uint64_t p, uint64_t cap)
{
    ring_look r;
    r.slot = &q->slots[p % cap];
    r.s = atomic_load_explicit(r.slot, memory_order_acquire);
    r.d = lap_diff(r.s, p, cap);
    return r;
}

static gpk_status lockfree_push(pool_run *run, const void *task)
{
    lockfree_queue *q = &run->lf;
    const uint64_t cap = run->cfg.capacity;
    uint32_t h;
    if (!handle_alloc(q, &h)) return GPK_EFULL; /* cannot happen with capacity + workers handles */
    memcpy(q->payload + (size_t)h * run->cfg.task_size, task, run->cfg.task_size);
    for (;;) {
        const uint64_t start = atomic_load_explicit(&q->tail_hint, memory_order_acquire);
        uint64_t p = start;
        for (;;) {
            ring_look r = ring_read(q, p, cap);
            if (r.d == 0 && (uint32_t)r.s == 0) {
                uint64_t want = ((uint64_t)(uint32_t)(p / cap) << 32) | ((uint64_t)h + 1);
                /* release: the payload is written before the task is visible */
                if (atomic_compare_exchange_strong_explicit(r.slot, &(uint64_t){r.s}, want,
                                                            memory_order_release, memory_order_relaxed)) {
                    if (p & 1) advance_hint(&q->tail_hint, start, p + 1);
                    return GPK_OK;
                }
                continue; /* another push took the slot: look at it again */
            }
            if (r.d >= 0) { /* filled in this lap, or already taken: not the tail yet */
                p++;
                continue;
            }
            if (r.d == -1 && (uint32_t)r.s != 0) {
                /* The task of position p - capacity is still there. Tasks
                 * are taken in position order and every position up to p is
                 * filled, so the queue holds `capacity` tasks: full. */
                handle_free(q, h);
                return GPK_EFULL;
            }
            break; /* a stale view: start again from the hint */
        }
    }
}

static int lockfree_pop(pool_run *run, void *task)
{
    lockfree_queue *q = &run->lf;
    const uint64_t cap = run->cfg.capacity;
    for (;;) {
        const uint64_t start = atomic_load_explicit(&q->head_hint, memory_order_acquire);
        uint64_t p = start;
        for (;;) {
            ring_look r = ring_read(q, p, cap);
            if (r.d == 0) {
                if ((uint32_t)r.s == 0) return 0; /* position p not filled yet: empty */
                uint64_t freed = (uint64_t)((uint32_t)(p / cap) + 1u) << 32;
                /* acquire: see the payload written before the push's CAS */
                if (atomic_compare_exchange_strong_explicit(r.slot, &(uint64_t){r.s}, freed,
                                                            memory_order_acq_rel, memory_order_relaxed)) {
                    uint32_t h = (uint32_t)r.s - 1;
                    memcpy(task, q->payload + (size_t)h * run->cfg.task_size, run->cfg.task_size);
                    handle_free(q, h);
                    if (p & 1) advance_hint(&q->head_hint, start, p + 1);
                    return 1;
                }
                continue;
            }
            if (r.d > 0) { /* taken already: move on towards the head */
                p++;
                continue;
            }
            break; /* stale view: start again */
        }
    }
}

/* ---- STEAL -------------------------------------------------------------------- */

static void words_store(_Atomic uint64_t *dst, const void *src, size_t bytes)
{
    const unsigned char *s = src;
    for (size_t i = 0; i < bytes; i += 8) {
        uint64_t v = 0;
        memcpy(&v, s + i, bytes - i < 8 ? bytes - i : 8);
        atomic_store_explicit(&dst[i / 8], v, memory_order_relaxed);
    }
}

static void words_load(void *dst, _Atomic uint64_t *src, size_t bytes)
{
    unsigned char *d = dst;
    for (size_t i = 0; i < bytes; i += 8) {
        uint64_t v = atomic_load_explicit(&src[i / 8], memory_order_relaxed);
        memcpy(d + i, &v, bytes - i < 8 ? bytes - i : 8);
    }
}

/* Owner only. Lê et al. 2013, push. */
static gpk_status deque_push(pool_run *run, steal_deque *dq, const void *task)
{
    const int64_t cap = (int64_t)run->cfg.capacity;
    int64_t b = atomic_load_explicit(&dq->bottom, memory_order_relaxed);
    int64_t t = atomic_load_explicit(&dq->top, memory_order_acquire);
    if (b - t >= cap) return GPK_EFULL;
    words_store(dq->words + (size_t)(b % cap) * run->task_words, task, run->cfg.task_size);
    /* release (the paper: a release fence, then a relaxed store): a thief
     * that reads the new bottom with acquire sees the task's words */
    atomic_store_explicit(&dq->bottom, b + 1, memory_order_release);
    return GPK_OK;
}

/* Owner only. Lê et al. 2013, take: 1 with a task, 0 when empty. */
static int deque_take(pool_run *run, steal_deque *dq, void *task)
{
    const int64_t cap = (int64_t)run->cfg.capacity;
    int64_t b = atomic_load_explicit(&dq->bottom, memory_order_relaxed) - 1;
    /* The store of bottom must be ordered before the load of top (store ->
     * load: only a seq_cst fence does that), else owner and thief could
     * both take the last task. */
#if POOL_TSAN
    atomic_store_explicit(&dq->bottom, b, memory_order_seq_cst);
    int64_t t = atomic_load_explicit(&dq->top, memory_order_seq_cst);
#else
    atomic_store_explicit(&dq->bottom, b, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
    int64_t t = atomic_load_explicit(&dq->top, memory_order_relaxed);
#endif
    if (t > b) { /* empty: restore */
        atomic_store_explicit(&dq->bottom, b + 1, memory_order_release);
        return 0;
    }
    words_load(task, dq->words + (size_t)(b % cap) * run->task_words, run->cfg.task_size);
    if (t < b) return 1; /* more than one task: no race with thieves */
    /* the last task: race the thieves for it with a CAS on top */
    int won = atomic_compare_exchange_strong_explicit(&dq->top, &t, t + 1, memory_order_seq_cst,
                                                      memory_order_relaxed);
    atomic_store_explicit(&dq->bottom, b + 1, memory_order_release);
    return won;
}

/* Any thread. Lê et al. 2013, steal: 1 stolen, 0 empty, -1 lost a race. */
static int deque_steal(pool_run *run, steal_deque *dq, void *task)
{
    const int64_t cap = (int64_t)run->cfg.capacity;
#if POOL_TSAN
    int64_t t = atomic_load_explicit(&dq->top, memory_order_seq_cst);
    int64_t b = atomic_load_explicit(&dq->bottom, memory_order_seq_cst);
#else
    int64_t t = atomic_load_explicit(&dq->top, memory_order_acquire);
    /* top must be read before bottom (see take) */
    atomic_thread_fence(memory_order_seq_cst);
    int64_t b = atomic_load_explicit(&dq->bottom, memory_order_acquire);
#endif
    if (t >= b) return 0;
    words_load(task, dq->words + (size_t)(t % cap) * run->task_words, run->cfg.task_size);
    if (!atomic_compare_exchange_strong_explicit(&dq->top, &t, t + 1, memory_order_seq_cst,
                                                 memory_order_relaxed))
        return -1; /* the copy may be torn or taken by another: discard it */
    return 1;
}

static unsigned next_victim(gpk_pool_worker *w)
{
    const unsigned n = w->run->cfg.workers;
    if (w->run->cfg.victim == GPK_POOL_VICTIM_RANDOM) {
        uint64_t x = w->rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        w->rng = x;
        unsigned v = (unsigned)(x % (n - 1));
        return v >= w->id ? v + 1 : v;
    }
    unsigned v = (w->last_victim + 1) % n;
    if (v == w->id) v = (v + 1) % n;
    w->last_victim = v;
    return v;
}

/* ---- push (every scheme) ------------------------------------------------------ */

gpk_status gpk_pool_push(gpk_pool_worker *w, const void *task)
{
    if (!w) return GPK_EINVAL;
    pool_run *run = w->run;
    if (!task) {
        run_fail(run, GPK_EINVAL, "gpk_pool_push: task is NULL (worker %u)", w->id);
        return GPK_EINVAL;
    }
    gpk_status s;
    switch (run->cfg.scheme) {
    case GPK_POOL_STATIC:
        s = static_push(w, task);
        if (s == GPK_OK) w->pushed++;
        return s;
    case GPK_POOL_BLOCKING:
    case GPK_POOL_LOCKFREE:
    case GPK_POOL_STEAL: break;
    default: return GPK_EINVAL;
    }
    /* counted before it can be seen, so that `pending` never reaches 0
     * while a task is queued (see the top of the file) */
    atomic_fetch_add_explicit(&run->pending, 1, memory_order_relaxed);
    if (run->cfg.scheme == GPK_POOL_BLOCKING) s = blocking_push(run, task);
    else if (run->cfg.scheme == GPK_POOL_LOCKFREE) s = lockfree_push(run, task);
    else s = deque_push(run, &run->deques[w->id], task);
    if (s != GPK_OK) {
        atomic_fetch_sub_explicit(&run->pending, 1, memory_order_relaxed);
        if (run->cfg.scheme == GPK_POOL_STEAL)
            run_fail(run, s, "pool full: worker %u's work-stealing deque holds %zu tasks (opts.capacity)",
                     w->id, run->cfg.capacity);
        else
            run_fail(run, s, "pool full: the %s queue holds %zu tasks (opts.capacity)",
                     run->cfg.scheme == GPK_POOL_BLOCKING ? "blocking" : "lock-free", run->cfg.capacity);
        return s;
    }
    w->pushed++;
    return GPK_OK;
}

unsigned gpk_pool_worker_id(const gpk_pool_worker *w) { return w ? w->id : 0u; }

/* ---- workers ------------------------------------------------------------------ */

/* A queue or stealing worker's step after it looked for a task: with one
 * (got), runs it and then counts it finished (release); with none, reads
 * the count (acquire) to see whether any task is left (see the top of the
 * file). 0 when the worker leaves. */
static int worker_step(gpk_pool_worker *w, int got, const void *task)
{
    pool_run *run = w->run;
    if (got) {
        int ok = run_task(w, task);
        atomic_fetch_sub_explicit(&run->pending, 1, memory_order_release);
        return ok;
    }
    return atomic_load_explicit(&run->pending, memory_order_acquire) > 0;
}

static void queue_worker(gpk_pool_worker *w)
{
    pool_run *run = w->run;
    const int lockfree = run->cfg.scheme == GPK_POOL_LOCKFREE;
    alignas(max_align_t) unsigned char task[GPK_POOL_MAX_TASK];
    unsigned idle = 0;
    while (!run_stopped(run)) {
        int got = lockfree ? lockfree_pop(run, task) : blocking_pop(run, task);
        if (!worker_step(w, got, task)) return;
        if (got) idle = 0;
        else idle_wait(&idle);
    }
}

static void steal_worker(gpk_pool_worker *w)
{
    pool_run *run = w->run;
    steal_deque *own = &run->deques[w->id];
    const unsigned n = run->cfg.workers;
    alignas(max_align_t) unsigned char task[GPK_POOL_MAX_TASK];
    unsigned idle = 0;
    while (!run_stopped(run)) {
        int got = deque_take(run, own, task);
        if (!got && n > 1) {
            w->steal_attempts++;
            if (deque_steal(run, &run->deques[next_victim(w)], task) == 1) {
                w->steals++;
                got = 1;
            }
        }
        if (!worker_step(w, got, task)) return;
        /* yield only after a full tour of the victims found nothing */
        if (got) idle = 0;
        else if (++idle >= n + IDLE_SPINS) sched_yield();
    }
}

static void *worker_main(void *arg)
{
    gpk_pool_worker *w = arg;
    pool_run *run = w->run;
    int gate;
    while ((gate = atomic_load_explicit(&run->gate, memory_order_acquire)) == 0) sched_yield();
    if (gate < 0) return NULL;
    switch (run->cfg.scheme) {
    case GPK_POOL_STATIC: static_worker(w); break;
    case GPK_POOL_BLOCKING:
    case GPK_POOL_LOCKFREE: queue_worker(w); break;
    case GPK_POOL_STEAL: steal_worker(w); break;
    }
    return NULL;
}

/* ---- setup and teardown ---------------------------------------------------------- */

static void *alloc_array(size_t count, size_t size)
{
    if (size != 0 && count > SIZE_MAX / size) return NULL;
    size_t bytes = count * size;
    return malloc(bytes > 0 ? bytes : 1);
}

static void *alloc_aligned(size_t bytes)
{
    size_t rounded = (bytes + CACHE_LINE - 1) / CACHE_LINE * CACHE_LINE;
    void *p = aligned_alloc(CACHE_LINE, rounded);
    if (p) memset(p, 0, rounded);
    return p;
}

static void run_free(pool_run *run)
{
    free(run->st.arrays[0]);
    free(run->st.arrays[1]);
    free(run->bq.data);
    free((void *)run->lf.slots);
    free((void *)run->lf.free_next);
    free(run->lf.payload);
    if (run->deques) {
        for (unsigned i = 0; i < run->cfg.workers; i++) free((void *)run->deques[i].words);
        free(run->deques);
    }
    free(run->workers);
    free(run);
}

/* Allocates the scheme's structures and puts the initial tasks in. */
static gpk_status run_setup(gpk_ctx *ctx, pool_run *run)
{
    const gpk_pool_config *c = &run->cfg;
    const size_t cap = c->capacity, ts = c->task_size, n = c->n_initial;
    const char *name = gpk_pool_scheme_name(c->scheme);
    atomic_store_explicit(&run->pending, (int64_t)n, memory_order_relaxed);
    switch (c->scheme) {
    case GPK_POOL_STATIC:
        run->st.arrays[0] = alloc_array(cap, ts);
        run->st.arrays[1] = alloc_array(cap, ts);
        if (!run->st.arrays[0] || !run->st.arrays[1]) break;
        memcpy(run->st.arrays[0], c->initial_tasks, n * ts);
        run->st.in = run->st.arrays[0];
        run->st.out = run->st.arrays[1];
        run->st.in_count = n;
        return GPK_OK;
    case GPK_POOL_BLOCKING:
        run->bq.data = alloc_array(cap, ts);
        if (!run->bq.data) break;
        memcpy(run->bq.data, c->initial_tasks, n * ts);
        run->bq.count = n;
        return GPK_OK;
    case GPK_POOL_LOCKFREE: {
        lockfree_queue *q = &run->lf;
        q->handles = (uint32_t)(cap + c->workers);
        q->slots = alloc_array(cap, sizeof *q->slots);
        q->free_next = alloc_array(q->handles, sizeof *q->free_next);
        q->payload = alloc_array(q->handles, ts);
        if (!q->slots || !q->free_next || !q->payload) break;
        /* positions 0 .. n-1 hold the initial tasks under handles 0 .. n-1;
         * every other slot is empty for lap 0 */
        for (size_t i = 0; i < cap; i++) atomic_init(&q->slots[i], i < n ? (uint64_t)i + 1 : 0);
        memcpy(q->payload, c->initial_tasks, n * ts);
        for (uint32_t h = (uint32_t)n; h < q->handles; h++)
            atomic_init(&q->free_next[h], h + 1 < q->handles ? h + 2 : 0);
        for (uint32_t h = 0; h < (uint32_t)n; h++) atomic_init(&q->free_next[h], 0);
        atomic_init(&q->free_top, n < q->handles ? (uint64_t)n + 1 : 0);
        atomic_init(&q->head_hint, 0);
        atomic_init(&q->tail_hint, n);
        return GPK_OK;
    }
    case GPK_POOL_STEAL: {
        run->task_words = (ts + 7) / 8;
        run->deques = alloc_aligned((size_t)c->workers * sizeof *run->deques);
        if (!run->deques) break;
        for (unsigned i = 0; i < c->workers; i++) {
            run->deques[i].words = alloc_array(cap, run->task_words * sizeof(uint64_t));
            if (!run->deques[i].words) goto nomem;
            atomic_init(&run->deques[i].top, 0);
            atomic_init(&run->deques[i].bottom, 0);
        }
        /* initial tasks dealt round robin, so every worker starts with some */
        for (size_t i = 0; i < n; i++) {
            steal_deque *dq = &run->deques[i % c->workers];
            int64_t b = atomic_load_explicit(&dq->bottom, memory_order_relaxed);
            words_store(dq->words + (size_t)b * run->task_words,
                        (const unsigned char *)c->initial_tasks + i * ts, ts);
            atomic_store_explicit(&dq->bottom, b + 1, memory_order_relaxed);
        }
        return GPK_OK;
    }
    }
nomem:
    return gpk__fail(ctx, GPK_ENOMEM,
                     "gpk_pool_run: out of memory for the %s pool (capacity %zu, task_size %zu, %u workers)",
                     name, cap, ts, c->workers);
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

gpk_status gpk__pool_run_cpu(gpk_ctx *ctx, const gpk_pool_config *cfg, gpk_pool_stats *stats)
{
    pool_run *run = alloc_aligned(sizeof *run);
    if (!run) return gpk__fail(ctx, GPK_ENOMEM, "gpk_pool_run: out of memory");
    run->cfg = *cfg;
    const unsigned nw = cfg->workers;
    run->workers = alloc_aligned((size_t)nw * sizeof *run->workers);
    if (!run->workers) {
        run_free(run);
        return gpk__fail(ctx, GPK_ENOMEM, "gpk_pool_run: out of memory for %u workers", nw);
    }
    gpk_status st = run_setup(ctx, run);
    if (st != GPK_OK) {
        run_free(run);
        return st;
    }
    int barrier_ready = 0;
    if (cfg->scheme == GPK_POOL_STATIC) {
        if (pthread_barrier_init(&run->st.barrier, NULL, nw) != 0) {
            run_free(run);
            return gpk__fail(ctx, GPK_ENOMEM, "gpk_pool_run: could not create a barrier for %u workers", nw);
        }
        barrier_ready = 1;
    }
    for (unsigned i = 0; i < nw; i++) {
        gpk_pool_worker *w = &run->workers[i];
        w->run = run;
        w->id = i;
        w->last_victim = i;
        /* splitmix-style scramble, so neighbouring workers get unrelated streams */
        uint64_t z = cfg->seed + 0x9E3779B97F4A7C15ull * (i + 1);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        w->rng = z ? z : 0x2545F4914F6CDD1Dull;
    }
    double t0 = now_ms();
    unsigned started = 0;
    for (; started < nw; started++)
        if (pthread_create(&run->workers[started].thread, NULL, worker_main, &run->workers[started]) != 0)
            break;
    /* Workers wait at the gate, so a failed start can still call them off
     * before any has reached a barrier sized for all of them. */
    atomic_store_explicit(&run->gate, started == nw ? 1 : -1, memory_order_release);
    for (unsigned i = 0; i < started; i++) pthread_join(run->workers[i].thread, NULL);
    double ms = now_ms() - t0;
    if (barrier_ready) pthread_barrier_destroy(&run->st.barrier);

    if (started < nw) {
        run_free(run);
        return gpk__fail(ctx, GPK_ENOMEM, "gpk_pool_run: could only start %u of %u worker threads", started,
                         nw);
    }
    if (stats) {
        memset(stats, 0, sizeof *stats);
        for (unsigned i = 0; i < nw; i++) {
            stats->tasks += run->workers[i].tasks;
            stats->pushed += run->workers[i].pushed;
            stats->steals += run->workers[i].steals;
            stats->steal_attempts += run->workers[i].steal_attempts;
        }
        stats->rounds = cfg->scheme == GPK_POOL_STATIC ? run->st.rounds : 0;
        stats->workers = nw;
        stats->ms = ms;
    }
    st = GPK_OK;
    if (atomic_load_explicit(&run->failed, memory_order_acquire))
        st = gpk__fail(ctx, run->fail_status, "%s", run->fail_msg);
    run_free(run);
    return st;
}
