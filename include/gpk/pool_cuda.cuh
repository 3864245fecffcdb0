/* Device-side task pools for CUDA kernels: the four load-balancing schemes
 * of Cederman & Tsigas 2008, Section 4, for persistent kernels in which ONE
 * THREAD BLOCK runs one task at a time (the paper's design).
 *
 * Header-only C++17 (nvcc), namespace gpk::cuda_pool. Same algorithms as the
 * CPU pools of src/pool/pool_cpu.c:
 *   STATIC    two arrays `in` / `out` and counters; a round ends at a
 *             grid-wide barrier inside block_next (the last block to arrive
 *             swaps the arrays); the run ends when a round pushed nothing.
 *   BLOCKING  one ring queue behind a CAS spin lock.
 *   LOCKFREE  Tsigas & Zhang's array queue: 64-bit slots (lap << 32 |
 *             handle + 1), CAS on slots, lazy head/tail hints, ABA-safe lap
 *             tags; task records live in a payload array indexed by handles
 *             from a tagged Treiber free list.
 *   STEAL     one bounded Chase-Lev / ABP deque per block (Le et al. 2013,
 *             with its seq_cst fences); the owner block pushes and pops at
 *             the bottom, thieves CAS the top; victims round robin or random.
 *
 * Usage (kernel side; every thread of the block calls the collectives):
 *
 *   __global__ void k(gpk::cuda_pool::Pool<T> pool) {
 *       __shared__ gpk::cuda_pool::Worker ws;
 *       __shared__ T task;
 *       pool.block_begin(ws);                    // collective
 *       while (pool.block_next(ws, &task)) {     // collective; thread 0 takes a task
 *           ... all threads work on `task` ...
 *           gpk::cuda_pool::block_release();     // collective: before pushing a task whose
 *                                                // data other threads of the block wrote
 *           if (threadIdx.x == 0) if (!pool.push(ws, child)) { ... pool is failing ... }
 *       }                                        // next block_next ends the task
 *   }
 *
 * Host side:
 *   Config c; c.scheme = ...; c.capacity = ...; c.victim = ...; c.seed = ...;
 *   int grid; max_resident_blocks(k<T>, threads, 0, &grid);   // THE RESIDENCY RULE
 *   c.blocks = grid; c.holders = grid * threads;
 *   cudaMalloc(&mem, bytes_needed<T>(c));
 *   Pool<T> p = make_pool<T>(c, mem);
 *   init(p, initial_tasks, n_initial, stream);      // host or device pointer
 *   k<<<c.blocks, threads, 0, stream>>>(p);
 *   Status s; read_status(p, &s, stream);            // s.error: 0 or an Error
 *
 * THE RESIDENCY RULE. The workers spin: a block that finds no task waits
 * for others to push, and STATIC's round barrier waits for every block.
 * Blocks that are not resident cannot run until a resident one exits, so a
 * persistent kernel launched with more blocks than fit on the device at
 * once can deadlock. Launch with at most max_resident_blocks(kernel,
 * threads, smem) blocks (occupancy x SM count), with nothing else big
 * running on the device, and with gridDim.x == Config::blocks exactly (a
 * different grid is refused: every block_next returns false and the error
 * word says ERR_BAD_GRID).
 *
 * Rules.
 *  - Every block calls block_begin once and then block_next until it
 *    returns false (STATIC's round barrier counts every block; a block
 *    that leaves early would hang the others).
 *  - Tasks are trivially copyable records whose size is a multiple of 4
 *    bytes. They are copied with 32-bit relaxed device-scope atomic loads
 *    and stores (see "memory model" below).
 *  - push_n(ws, tasks, k) pushes k tasks as k push() calls would, but the
 *    static list claims their slots with one atomic and a stealing pool
 *    queues them with one count and one release store (both all or none);
 *    same thread rules as push().
 *  - push() may be called by any thread of a block inside a task, except
 *    for STEAL: the deque's bottom end has one owner, so for STEAL only one
 *    thread of the block may push at a time (e.g. thread 0), and not
 *    concurrently with block_next.
 *  - Bounded: a push that does not fit returns false and sets the error word
 *    to ERR_FULL (first error wins; nothing is overwritten). Every worker
 *    then leaves at its next block_next. fail() lets the user stop the run
 *    with its own code (>= ERR_USER).
 *  - Termination: `pending` counts tasks pushed and not finished. A push adds
 *    1 before the task can be seen; block_next subtracts 1 for the block's
 *    previous task (after a __syncthreads, so every push the task made is
 *    counted already); a block that finds no task leaves when pending is 0.
 *    STATIC ends by rounds (a round that pushed nothing) instead. With
 *    keep_first (STEAL), a task's first push is kept for its block and
 *    takes over the task's count: no add at the push, no subtract at the
 *    task's end.
 *
 * Memory model (PTX / libcu++ scoped atomics, all at device scope):
 *  - Task words are written with relaxed stores and read with relaxed loads
 *    (morally strong, never served stale from L1); the release / acquire
 *    pair that publishes the task (the slot CAS, the deque bottom, the lock,
 *    the round barrier) orders them. A thief may read words its victim is
 *    rewriting; its CAS on top then fails and the copy is discarded, so the
 *    race is benign and, being on atomics, not undefined.
 *  - block_next: thread 0 takes a task with acquire, __syncthreads
 *    broadcasts it, and then EVERY thread runs an acquire fence, so data
 *    the pusher's block released (e.g. particles moved by the parent task)
 *    is visible to every thread, not only to thread 0.
 *  - block_release(): every thread runs a release fence, then
 *    __syncthreads; a push by one thread after it publishes all the
 *    block's writes (release is cumulative over what the barrier ordered).
 *  - pending: fetch_add relaxed at push (it only has to happen before the
 *    task is visible, and the push's release orders it); fetch_sub release
 *    at the end of a task; load acquire by idle blocks.
 *  - Chase-Lev: the owner's take stores bottom then loads top, and a
 *    thief loads top then bottom; each pair needs a seq_cst fence
 *    (store->load ordering), exactly as in Le et al. 2013; the CASes on top
 *    are seq_cst. Both first test for empty with two relaxed loads and
 *    leave without the fence: for the owner that answer is exact (it alone
 *    moves bottom, and top only grows), for a thief a wrong "empty" costs
 *    nothing but a probe. */
#ifndef GPK_POOL_CUDA_CUH
#define GPK_POOL_CUDA_CUH

#include <cuda/atomic>
#include <cuda_runtime.h>

#include <stddef.h>
#include <stdint.h>
#include <type_traits>

namespace gpk {
namespace cuda_pool {

enum Scheme : unsigned { STATIC = 0, BLOCKING = 1, LOCKFREE = 2, STEAL = 3 };
enum Victim : unsigned { ROUND_ROBIN = 0, RANDOM = 1 };

/* The error word: 0 or the first failure. */
enum Error : unsigned {
    ERR_NONE = 0,
    ERR_FULL = 1,     /* a push did not fit (info: the capacity) */
    ERR_BAD_GRID = 2, /* gridDim.x != Config::blocks, or a 2D/3D grid (info: gridDim.x) */
    ERR_USER = 16     /* fail(code >= ERR_USER): the user's own codes */
};

struct Config {
    Scheme scheme = BLOCKING;
    unsigned capacity = 1024; /* STATIC each array, BLOCKING / LOCKFREE the queue, STEAL each deque;
                                 1 .. 2^30 */
    unsigned blocks = 1;      /* the grid of the persistent kernel (gridDim.x, exactly) */
    unsigned holders = 1;     /* LOCKFREE: threads that may push or pop at once (blocks x threads) */
    Victim victim = RANDOM;   /* round robin: the paper's; random: faster on a full grid (docs/pool.md) */
    unsigned long long seed = 1;
    /* STEAL, work first: a task's first push goes to a slot of its block's
     * own, not to the deque, and is the block's next task (no deque
     * operation, fence or count for it); thieves see only the others. */
    bool keep_first = false;
};

/* Counters and stats, each hot word on its own 128-byte line. */
struct Header {
    alignas(128) unsigned error;
    unsigned long long info;
    alignas(128) long long pending;
    alignas(128) unsigned lock; /* BLOCKING */
    unsigned long long head, count;
    alignas(128) unsigned long long in_head; /* STATIC */
    alignas(128) unsigned long long out_tail;
    alignas(128) unsigned long long in_count;
    unsigned round, done;
    alignas(128) unsigned bar_count;
    alignas(128) unsigned bar_gen;
    alignas(128) unsigned long long head_hint; /* LOCKFREE */
    alignas(128) unsigned long long tail_hint;
    alignas(128) unsigned long long free_top;
    alignas(128) unsigned long long tasks, pushed, steals, steal_attempts, rounds;
};

/* STEAL: one per deque. */
struct DequeEnds {
    alignas(128) long long top;
    alignas(128) long long bottom;
};

/* What a block keeps between calls: put it in __shared__ memory. */
struct Worker {
    unsigned long long tasks, pushed, steals, steal_attempts;
    unsigned long long rng;
    unsigned last_victim;
    int has_task; /* a task taken by the last block_next is still running */
    int got;      /* block_next's broadcast */
    int has_kept; /* keep_first: the block's own slot holds its next task */
};

struct Status {
    unsigned error;
    unsigned long long info;
    long long pending;
    unsigned long long tasks, pushed, steals, steal_attempts, rounds;
};

/* Byte offsets of the parts of one pool allocation. */
struct Layout {
    size_t header, data, slots, free_next, ends, kept, total;
    unsigned long long data_tasks, handles;
};

__host__ __device__ inline size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

__host__ __device__ inline Layout layout(const Config &c, size_t task_size)
{
    Layout l = {};
    const unsigned long long cap = c.capacity;
    l.header = 0;
    l.data = round_up(sizeof(Header), 256);
    l.handles = 0;
    switch (c.scheme) {
    case STATIC: l.data_tasks = 2 * cap; break;
    case BLOCKING: l.data_tasks = cap; break;
    case LOCKFREE:
        l.handles = cap + (c.holders ? c.holders : 1);
        l.data_tasks = l.handles;
        break;
    default: l.data_tasks = cap * c.blocks; break;
    }
    size_t at = round_up(l.data + (size_t)l.data_tasks * task_size, 256);
    l.slots = at;
    if (c.scheme == LOCKFREE) at = round_up(at + (size_t)cap * 8, 256);
    l.free_next = at;
    if (c.scheme == LOCKFREE) at = round_up(at + (size_t)l.handles * 4, 256);
    l.ends = at;
    if (c.scheme == STEAL) at = round_up(at + (size_t)c.blocks * sizeof(DequeEnds), 256);
    l.kept = at;
    if (c.scheme == STEAL && c.keep_first) at = round_up(at + (size_t)c.blocks * task_size, 256);
    l.total = at;
    return l;
}

namespace detail {
template <class T> using ref = cuda::atomic_ref<T, cuda::thread_scope_device>;
constexpr auto relaxed = cuda::memory_order_relaxed;
constexpr auto acquire = cuda::memory_order_acquire;
constexpr auto release = cuda::memory_order_release;
constexpr auto acq_rel = cuda::memory_order_acq_rel;
constexpr auto seq_cst = cuda::memory_order_seq_cst;

template <class T> __device__ inline void store_task(T *dst, const T &src)
{
    const unsigned *s = reinterpret_cast<const unsigned *>(&src);
    unsigned *d = reinterpret_cast<unsigned *>(dst);
#pragma unroll
    for (unsigned i = 0; i < sizeof(T) / 4; i++) ref<unsigned>(d[i]).store(s[i], relaxed);
}

template <class T> __device__ inline void load_task(T *dst, T *src)
{
    unsigned *s = reinterpret_cast<unsigned *>(src);
    unsigned *d = reinterpret_cast<unsigned *>(dst);
#pragma unroll
    for (unsigned i = 0; i < sizeof(T) / 4; i++) d[i] = ref<unsigned>(s[i]).load(relaxed);
}

/* Exponential back-off for a block that found nothing to do: 64 ns up to
 * 32 << max_shift ns, so that spinning blocks leave the memory system to
 * those with work. */
__device__ inline void backoff(unsigned &idle, unsigned max_shift = 8)
{
    if (idle < max_shift) idle++;
    __nanosleep(32u << idle);
}

/* Lap of slot word s relative to the lap of position p (see pool_cpu.c). */
__device__ inline int lap_diff(unsigned long long s, unsigned long long p, unsigned long long cap)
{
    return (int)((unsigned)(s >> 32) - (unsigned)(p / cap));
}

} // namespace detail

/* Collective: every thread publishes its global writes (release fence at
 * device scope), then the block meets. Call before a push of a task whose
 * data other threads of the block wrote. */
__device__ inline void block_release()
{
    cuda::atomic_thread_fence(cuda::memory_order_release, cuda::thread_scope_device);
    __syncthreads();
}

template <class Task> struct Pool {
    static_assert(std::is_trivially_copyable<Task>::value, "tasks must be trivially copyable");
    static_assert(sizeof(Task) % 4 == 0 && alignof(Task) >= 4,
                  "task size must be a multiple of 4 bytes, 4-aligned");

    Config cfg;
    Header *hdr;
    Task *data;
    unsigned long long *slots;  /* LOCKFREE */
    unsigned *free_next;        /* LOCKFREE: next free handle + 1, 0: none */
    DequeEnds *ends;            /* STEAL */
    Task *kept;                 /* STEAL with keep_first: one slot per block */
    unsigned long long handles; /* LOCKFREE */

    /* ---- errors ---- */
    __device__ void fail(unsigned code, unsigned long long info) const
    {
        unsigned expected = 0;
        /* first failure wins; info is written after the claim, read by the host after the kernel */
        if (detail::ref<unsigned>(hdr->error)
                .compare_exchange_strong(expected, code, detail::acq_rel, detail::relaxed))
            detail::ref<unsigned long long>(hdr->info).store(info, detail::relaxed);
    }
    __device__ bool failed() const { return detail::ref<unsigned>(hdr->error).load(detail::acquire) != 0; }

    /* ---- push: any thread (STEAL: one thread of the block at a time) ---- */
    __device__ bool push(Worker &ws, const Task &t) const
    {
        using namespace detail;
        if (cfg.scheme == STATIC) return static_push(ws, &t, 1);
        if (cfg.scheme == STEAL && cfg.keep_first && ws.has_task && !ws.has_kept) {
            /* the block's next task: it inherits its parent's count (the
             * parent's end does not subtract), and block_next's barrier
             * makes it visible to the block's lead thread */
            store_task(kept + block_id(), t);
            ws.has_kept = 1;
            atomicAdd(&ws.pushed, 1ull);
            return true;
        }
        /* counted before it can be seen: pending never reaches 0 while a task is queued */
        ref<long long>(hdr->pending).fetch_add(1, relaxed);
        bool ok;
        if (cfg.scheme == BLOCKING) ok = blocking_push(t);
        else if (cfg.scheme == LOCKFREE) ok = lockfree_push(t);
        else ok = deque_push(block_id(), t);
        if (!ok) {
            ref<long long>(hdr->pending).fetch_sub(1, relaxed);
            fail(ERR_FULL, cfg.capacity);
            return false;
        }
        atomicAdd(&ws.pushed, 1ull);
        return true;
    }

    /* push() of tasks[0 .. k) in order, under push()'s thread rules. STATIC
     * claims the k slots with one fetch-and-add. For STEAL the tasks after
     * a kept one go to the deque together: one count, one look at its ends
     * and one release store, where k push() calls make k of each. All or
     * none: when they do not fit, none is queued and the error word says
     * ERR_FULL (the run stops as after a failed push). */
    __device__ bool push_n(Worker &ws, const Task *tasks, unsigned k) const
    {
        using namespace detail;
#ifdef GPK_POOL_PUSH_N_AS_PUSHES /* the A/B control of bench/results/archive.tar.xz:scripts/gpu-pool-ab.sh */
        constexpr bool one_by_one = true;
#else
        constexpr bool one_by_one = false;
#endif
        if (cfg.scheme == STATIC && !one_by_one && k > 0) return static_push(ws, tasks, k);
        if (cfg.scheme != STEAL || one_by_one) {
            for (unsigned i = 0; i < k; i++)
                if (!push(ws, tasks[i])) return false;
            return true;
        }
        unsigned i = 0;
        if (k > 0 && cfg.keep_first && ws.has_task && !ws.has_kept) {
            if (!push(ws, tasks[0])) return false; /* kept for this block */
            i = 1;
        }
        const unsigned m = k - i;
        if (m == 0) return true;
        ref<long long>(hdr->pending).fetch_add((long long)m, relaxed);
        if (!deque_push_n(block_id(), tasks + i, m)) {
            ref<long long>(hdr->pending).fetch_sub((long long)m, relaxed);
            fail(ERR_FULL, cfg.capacity);
            return false;
        }
        atomicAdd(&ws.pushed, (unsigned long long)m);
        return true;
    }

    /* STATIC: one slot claim for k >= 1 tasks, all or none */
    __device__ bool static_push(Worker &ws, const Task *tasks, unsigned k) const
    {
        using namespace detail;
        const unsigned long long at = ref<unsigned long long>(hdr->out_tail).fetch_add(k, relaxed);
        if (at + k > cfg.capacity) {
            fail(ERR_FULL, cfg.capacity);
            return false;
        }
        /* published by the round barrier (release / acquire) */
        for (unsigned i = 0; i < k; i++) store_task(out_array() + at + i, tasks[i]);
        atomicAdd(&ws.pushed, (unsigned long long)k);
        return true;
    }

    /* ---- the block API ---- */

    /* Collective, once at the start of the kernel. */
    __device__ void block_begin(Worker &ws) const
    {
        if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
            ws.tasks = ws.pushed = ws.steals = ws.steal_attempts = 0;
            unsigned long long z = cfg.seed + 0x9E3779B97F4A7C15ull * (block_id() + 1ull);
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
            z ^= z >> 31;
            ws.rng = z ? z : 0x2545F4914F6CDD1Dull;
            ws.last_victim = block_id();
            ws.has_task = 0;
            ws.got = 0;
            ws.has_kept = 0;
            if (gridDim.x != cfg.blocks || gridDim.y != 1 || gridDim.z != 1) fail(ERR_BAD_GRID, gridDim.x);
        }
        __syncthreads();
    }

    /* Collective. Ends the block's previous task (if any) and takes the
     * next one into *shared_task (in __shared__ memory). false: the run is
     * over (no task left, or an error); the block should leave. */
    __device__ bool block_next(Worker &ws, Task *shared_task) const
    {
        using namespace detail;
        const bool lead = threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0;
        /* the previous task's writes and pushes are done by every thread */
        cuda::atomic_thread_fence(cuda::memory_order_release, cuda::thread_scope_device);
        __syncthreads();
        if (lead) {
            if (ws.has_task) {
                ws.has_task = 0;
                /* release: the task's work (and its pushes' pending increments)
                 * before the count drops. STATIC does not count pending: its
                 * rounds end the run. A kept task took the count over. */
                if (cfg.scheme != STATIC && !ws.has_kept) ref<long long>(hdr->pending).fetch_sub(1, release);
            }
            bool got;
            if (ws.has_kept) {
                ws.has_kept = 0;
                load_task(shared_task, kept + block_id());
                got = !failed();
                if (!got) ref<long long>(hdr->pending).fetch_sub(1, release);
            } else {
                switch (cfg.scheme) {
                case STATIC: got = static_next(shared_task); break;
                case BLOCKING:
                case LOCKFREE: got = queue_next(shared_task); break;
                default: got = steal_next(ws, shared_task); break;
                }
            }
            if (got) {
                ws.tasks++;
                ws.has_task = 1;
            } else {
                /* the block leaves: its statistics go to the header */
                atomicAdd(&hdr->tasks, ws.tasks);
                atomicAdd(&hdr->pushed, ws.pushed);
                atomicAdd(&hdr->steals, ws.steals);
                atomicAdd(&hdr->steal_attempts, ws.steal_attempts);
            }
            ws.got = got;
        }
        __syncthreads();
        const bool got = ws.got != 0;
        /* every thread: see what the task's pusher released, not only thread 0 */
        cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device);
        return got;
    }

    /* ---- internals ---- */
    __device__ static unsigned block_id() { return blockIdx.x; }
    __device__ Task *in_array() const
    {
        return data + (size_t)(detail::ref<unsigned>(hdr->round).load(detail::relaxed) & 1u) * cfg.capacity;
    }
    __device__ Task *out_array() const
    {
        return data +
            (size_t)((detail::ref<unsigned>(hdr->round).load(detail::relaxed) + 1u) & 1u) * cfg.capacity;
    }

    /* STATIC: lead thread only. hdr->round, in_count and done change only
     * inside the barrier (by its last block) and are read after it. */
    __device__ bool static_next(Task *out) const
    {
        using namespace detail;
        for (;;) {
            if (failed()) return false;
            const unsigned long long n = ref<unsigned long long>(hdr->in_count).load(relaxed);
            const unsigned long long i = ref<unsigned long long>(hdr->in_head).fetch_add(1, relaxed);
            if (i < n) {
                load_task(out, in_array() + i);
                return true;
            }
            /* The round is over for this block: grid barrier. Every task of
             * the round was taken before any block got here (i >= n), and
             * a block arrives only after it finished its task and pushes. */
            const unsigned gen = ref<unsigned>(hdr->bar_gen).load(acquire);
            /* acq_rel: the arrivals form a release sequence, so the last
             * block sees every block's pushes (out_tail and task words) */
            if (ref<unsigned>(hdr->bar_count).fetch_add(1, acq_rel) == cfg.blocks - 1) {
                const unsigned long long produced = ref<unsigned long long>(hdr->out_tail).load(relaxed);
                ref<unsigned long long>(hdr->rounds).fetch_add(1, relaxed);
                if (produced == 0 || failed()) {
                    ref<unsigned>(hdr->done).store(1, relaxed);
                } else {
                    /* (produced > capacity only after a failed push, which set the error word) */
                    ref<unsigned long long>(hdr->in_count)
                        .store(produced < cfg.capacity ? produced : cfg.capacity, relaxed);
                    ref<unsigned long long>(hdr->in_head).store(0, relaxed);
                    ref<unsigned long long>(hdr->out_tail).store(0, relaxed);
                    ref<unsigned>(hdr->round).fetch_add(1, relaxed);
                }
                ref<unsigned>(hdr->bar_count).store(0, relaxed);
                ref<unsigned>(hdr->bar_gen).store(gen + 1, release); /* opens the barrier */
            } else {
                unsigned idle = 0;
                while (ref<unsigned>(hdr->bar_gen).load(acquire) == gen) {
                    if (failed()) return false;
                    backoff(idle);
                }
            }
            if (ref<unsigned>(hdr->done).load(relaxed)) return false;
        }
    }

    __device__ bool queue_next(Task *out) const
    {
        using namespace detail;
        unsigned idle = 0;
        for (;;) {
            if (failed()) return false;
            if (cfg.scheme == BLOCKING ? blocking_pop(out) : lockfree_pop(out)) return true;
            if (ref<long long>(hdr->pending).load(acquire) <= 0) return false;
            backoff(idle);
        }
    }

    __device__ bool steal_next(Worker &ws, Task *out) const
    {
        using namespace detail;
        unsigned idle = 0, misses = 0;
        const unsigned me = block_id(), nb = cfg.blocks;
#ifdef GPK_POOL_CHECK_EVERY_PROBE /* the A/B control of bench/results/archive.tar.xz:scripts/gpu-pool-ab.sh */
        constexpr unsigned kProbes = 1;
#else
        constexpr unsigned kProbes = 8;
#endif
        /* a failed run (full, bad grid, fail()) starts no more tasks */
        if (failed()) return false;
        for (;;) {
            if (deque_take(me, out)) return true;
            if (nb > 1) {
                ws.steal_attempts++;
                if (deque_steal(next_victim(ws), out) == 1) {
                    ws.steals++;
                    return true;
                }
            }
            /* The error word and the count are one line each, read by every
             * idle block: read them once per kProbes victims, not at every
             * probe, so that they do not crowd the L2 slice where the
             * workers' count updates go. */
            if (++misses % kProbes == 0) {
                if (failed()) return false;
                if (ref<long long>(hdr->pending).load(acquire) <= 0) return false;
            }
            /* Back off after a few empty victims: with thousands of blocks
             * and few tasks (the top of a tree) the thieves' probes and
             * fences would otherwise crowd the workers' memory traffic. */
            if (misses >= 8) {
                misses = 0;
                backoff(idle, 7); /* 64 ns, doubling up to 4 us */
            }
        }
    }

    __device__ unsigned next_victim(Worker &ws) const
    {
        const unsigned n = cfg.blocks, me = block_id();
        if (cfg.victim == RANDOM) {
            unsigned long long x = ws.rng;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ws.rng = x;
            unsigned v = (unsigned)(x % (n - 1));
            return v >= me ? v + 1 : v;
        }
        unsigned v = (ws.last_victim + 1) % n;
        if (v == me) v = (v + 1) % n;
        ws.last_victim = v;
        return v;
    }

    /* BLOCKING: test-and-test-and-set lock; head and count only under it. */
    __device__ void lock() const
    {
        using namespace detail;
        unsigned idle = 0;
        for (;;) {
            unsigned expected = 0;
            if (ref<unsigned>(hdr->lock).load(relaxed) == 0 &&
                ref<unsigned>(hdr->lock).compare_exchange_strong(expected, 1, acquire, relaxed))
                return;
            backoff(idle, 5); /* at most 1 us: the holder leaves within a few hundred ns */
        }
    }
    __device__ void unlock() const { detail::ref<unsigned>(hdr->lock).store(0, detail::release); }

    __device__ bool blocking_push(const Task &t) const
    {
        using namespace detail;
        lock();
        const unsigned long long head = ref<unsigned long long>(hdr->head).load(relaxed);
        const unsigned long long count = ref<unsigned long long>(hdr->count).load(relaxed);
        bool ok = count < cfg.capacity;
        if (ok) {
            store_task(data + (head + count) % cfg.capacity, t);
            ref<unsigned long long>(hdr->count).store(count + 1, relaxed);
        }
        unlock();
        return ok;
    }

    __device__ bool blocking_pop(Task *out) const
    {
        using namespace detail;
        /* a look without the lock first: an empty queue costs no lock traffic */
        if (ref<unsigned long long>(hdr->count).load(relaxed) == 0) return false;
        lock();
        const unsigned long long head = ref<unsigned long long>(hdr->head).load(relaxed);
        const unsigned long long count = ref<unsigned long long>(hdr->count).load(relaxed);
        bool ok = count > 0;
        if (ok) {
            load_task(out, data + head);
            ref<unsigned long long>(hdr->head).store((head + 1) % cfg.capacity, relaxed);
            ref<unsigned long long>(hdr->count).store(count - 1, relaxed);
        }
        unlock();
        return ok;
    }

    /* LOCKFREE: handles (tagged Treiber stack). */
    __device__ bool handle_alloc(unsigned *handle) const
    {
        using namespace detail;
        ref<unsigned long long> top_ref(hdr->free_top);
        unsigned long long top = top_ref.load(acquire);
        for (;;) {
            const unsigned h1 = (unsigned)top;
            if (h1 == 0) return false;
            const unsigned next = ref<unsigned>(free_next[h1 - 1]).load(relaxed);
            const unsigned long long want = (((top >> 32) + 1) << 32) | next;
            /* acquire: the handle's last reader finished copying before it freed the handle */
            if (top_ref.compare_exchange_weak(top, want, acquire, acquire)) {
                *handle = h1 - 1;
                return true;
            }
        }
    }

    __device__ void handle_free(unsigned handle) const
    {
        using namespace detail;
        ref<unsigned long long> top_ref(hdr->free_top);
        unsigned long long top = top_ref.load(relaxed);
        unsigned long long want;
        do {
            ref<unsigned>(free_next[handle]).store((unsigned)top, relaxed);
            want = (((top >> 32) + 1) << 32) | (handle + 1ull);
            /* release: the payload copy (and free_next) before the handle is reusable */
        } while (!top_ref.compare_exchange_weak(top, want, release, relaxed));
    }

    __device__ static void advance_hint(unsigned long long *hint, unsigned long long seen,
                                        unsigned long long to)
    {
        detail::ref<unsigned long long>(*hint).compare_exchange_strong(seen, to, detail::release,
                                                                       detail::relaxed);
    }

    /* What a push or a pop sees at position p: the slot, the word it holds
     * (read with acquire) and that word's lap relative to p's. */
    struct RingLook {
        detail::ref<unsigned long long> slot;
        unsigned long long s;
        int d;
    };

    __device__ RingLook ring_read(unsigned long long p, unsigned long long cap) const
    {
        using namespace detail;
        ref<unsigned long long> slot(slots[p % cap]);
        const unsigned long long s = slot.load(acquire);
        return {slot, s, lap_diff(s, p, cap)};
    }

    __device__ bool lockfree_push(const Task &t) const
    {
        using namespace detail;
        const unsigned long long cap = cfg.capacity;
        unsigned h;
        if (!handle_alloc(&h)) return false; /* every handle queued or in hands: full */
        store_task(data + h, t);
        for (;;) {
            const unsigned long long start = ref<unsigned long long>(hdr->tail_hint).load(acquire);
            unsigned long long p = start;
            for (;;) {
                RingLook r = ring_read(p, cap);
                if (r.d == 0 && (unsigned)r.s == 0) {
                    const unsigned long long want =
                        ((unsigned long long)(unsigned)(p / cap) << 32) | (h + 1ull);
                    /* release: the payload before the task is visible */
                    if (r.slot.compare_exchange_strong(r.s, want, release, relaxed)) {
                        if (p & 1) advance_hint(&hdr->tail_hint, start, p + 1);
                        return true;
                    }
                    continue; /* another push took the slot: look again */
                }
                if (r.d >= 0) { /* filled in this lap, or already taken: not the tail yet */
                    p++;
                    continue;
                }
                if (r.d == -1 && (unsigned)r.s != 0) {
                    /* position p - capacity still holds its task: the queue is full */
                    handle_free(h);
                    return false;
                }
                break; /* stale view: start again from the hint */
            }
        }
    }

    __device__ bool lockfree_pop(Task *out) const
    {
        using namespace detail;
        const unsigned long long cap = cfg.capacity;
        for (;;) {
            const unsigned long long start = ref<unsigned long long>(hdr->head_hint).load(acquire);
            unsigned long long p = start;
            for (;;) {
                RingLook r = ring_read(p, cap);
                if (r.d == 0) {
                    if ((unsigned)r.s == 0) return false; /* position p not filled yet: empty */
                    const unsigned long long freed = (unsigned long long)((unsigned)(p / cap) + 1u) << 32;
                    /* acquire: the payload written before the push's CAS */
                    if (r.slot.compare_exchange_strong(r.s, freed, acq_rel, relaxed)) {
                        const unsigned h = (unsigned)r.s - 1;
                        load_task(out, data + h);
                        handle_free(h);
                        if (p & 1) advance_hint(&hdr->head_hint, start, p + 1);
                        return true;
                    }
                    continue;
                }
                if (r.d > 0) { /* taken already: move on */
                    p++;
                    continue;
                }
                break;
            }
        }
    }

    /* STEAL: Chase-Lev (Le et al. 2013). */
    __device__ Task *deque_data(unsigned d) const { return data + (size_t)d * cfg.capacity; }

    __device__ bool deque_push(unsigned d, const Task &t) const
    {
        using namespace detail;
        const long long cap = cfg.capacity;
        const long long b = ref<long long>(ends[d].bottom).load(relaxed);
        const long long tp = ref<long long>(ends[d].top).load(acquire);
        if (b - tp >= cap) return false;
        store_task(deque_data(d) + b % cap, t);
        /* release: a thief that reads the new bottom with acquire sees the words */
        ref<long long>(ends[d].bottom).store(b + 1, release);
        return true;
    }

    __device__ bool deque_push_n(unsigned d, const Task *ts, unsigned m) const
    {
        using namespace detail;
        const long long cap = cfg.capacity;
        const long long b = ref<long long>(ends[d].bottom).load(relaxed);
        const long long tp = ref<long long>(ends[d].top).load(acquire);
        if (b + (long long)m - tp > cap) return false;
        for (unsigned j = 0; j < m; j++) store_task(deque_data(d) + (b + j) % cap, ts[j]);
        /* one release for all m: a thief that sees the new bottom sees every word below it */
        ref<long long>(ends[d].bottom).store(b + (long long)m, release);
        return true;
    }

    __device__ bool deque_take(unsigned d, Task *out) const
    {
        using namespace detail;
        const long long cap = cfg.capacity;
#ifndef GPK_POOL_NO_EMPTY_CHECK
        /* Empty without a fence: only the owner moves bottom and top only
         * grows, so a stale top can only look non-empty. An idle block asks
         * its own deque at every probe of a victim; the fence below would
         * cost it each time. */
        const long long b = ref<long long>(ends[d].bottom).load(relaxed) - 1;
        if (ref<long long>(ends[d].top).load(relaxed) > b) return false;
#else
        const long long b = ref<long long>(ends[d].bottom).load(relaxed) - 1;
#endif
        ref<long long>(ends[d].bottom).store(b, relaxed);
        /* store bottom -> load top needs a seq_cst fence, else owner and thief both take the last task */
        cuda::atomic_thread_fence(cuda::memory_order_seq_cst, cuda::thread_scope_device);
        long long t = ref<long long>(ends[d].top).load(relaxed);
        if (t > b) { /* empty: restore */
            ref<long long>(ends[d].bottom).store(b + 1, release);
            return false;
        }
        load_task(out, deque_data(d) + b % cap);
        if (t < b) return true; /* more than one task: no race with thieves */
        const bool won = ref<long long>(ends[d].top).compare_exchange_strong(t, t + 1, seq_cst, relaxed);
        ref<long long>(ends[d].bottom).store(b + 1, release);
        return won;
    }

    /* 1 stolen, 0 empty, -1 lost a race */
    __device__ int deque_steal(unsigned d, Task *out) const
    {
        using namespace detail;
        const long long cap = cfg.capacity;
#ifndef GPK_POOL_NO_EMPTY_CHECK
        /* a victim that looks empty is skipped without the fence: a wrong
         * "empty" only sends the thief on to its next victim */
        if (ref<long long>(ends[d].top).load(relaxed) >= ref<long long>(ends[d].bottom).load(relaxed))
            return 0;
#endif
        long long t = ref<long long>(ends[d].top).load(acquire);
        /* top before bottom (see take) */
        cuda::atomic_thread_fence(cuda::memory_order_seq_cst, cuda::thread_scope_device);
        const long long b = ref<long long>(ends[d].bottom).load(acquire);
        if (t >= b) return 0;
        load_task(out, deque_data(d) + t % cap);
        if (!ref<long long>(ends[d].top).compare_exchange_strong(t, t + 1, seq_cst, relaxed))
            return -1; /* the copy may be torn or taken by another: discard it */
        return 1;
    }
};

namespace detail {
template <class T> __global__ void init_kernel(Pool<T> p, unsigned long long n)
{
    const unsigned long long cap = p.cfg.capacity;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    const unsigned long long tid = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (tid == 0) {
        Header *h = p.hdr;
        h->pending = p.cfg.scheme == STATIC ? 0 : (long long)n;
        switch (p.cfg.scheme) {
        case STATIC: h->in_count = n; break;
        case BLOCKING: h->count = n; break;
        case LOCKFREE:
            h->free_top = n < p.handles ? n + 1 : 0;
            h->head_hint = 0;
            h->tail_hint = n;
            break;
        default: break;
        }
    }
    if (p.cfg.scheme == LOCKFREE) {
        /* positions 0 .. n-1 hold the initial tasks under handles 0 .. n-1 (lap 0);
         * handles n .. handles-1 are free, chained in order */
        for (unsigned long long i = tid; i < cap; i += stride) p.slots[i] = i < n ? i + 1 : 0;
        for (unsigned long long h = tid; h < p.handles; h += stride)
            p.free_next[h] = h < n ? 0u : (h + 1 < p.handles ? (unsigned)(h + 2) : 0u);
    }
    if (p.cfg.scheme == STEAL) {
        /* initial task i went to deque i % blocks, position i / blocks */
        for (unsigned long long d = tid; d < p.cfg.blocks; d += stride) {
            p.ends[d].top = 0;
            p.ends[d].bottom = (long long)(d < n ? (n - d + p.cfg.blocks - 1) / p.cfg.blocks : 0);
        }
    }
}
/* STEAL: initial task i goes to deque i % blocks, position i / blocks. */
template <class T> __global__ void deal_kernel(Pool<T> p, const T *initial, unsigned long long n)
{
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        p.data[(i % p.cfg.blocks) * p.cfg.capacity + i / p.cfg.blocks] = initial[i];
}
} // namespace detail

/* ---- host side ---- */

/* Bytes of device memory a pool of Config c needs (one allocation). */
template <class Task> inline size_t bytes_needed(const Config &c) { return layout(c, sizeof(Task)).total; }

/* A pool handle over mem (bytes_needed bytes, from cudaMalloc: 256-aligned). */
template <class Task> inline Pool<Task> make_pool(const Config &c, void *mem)
{
    const Layout l = layout(c, sizeof(Task));
    unsigned char *base = static_cast<unsigned char *>(mem);
    Pool<Task> p;
    p.cfg = c;
    p.hdr = reinterpret_cast<Header *>(base + l.header);
    p.data = reinterpret_cast<Task *>(base + l.data);
    p.slots = c.scheme == LOCKFREE ? reinterpret_cast<unsigned long long *>(base + l.slots) : nullptr;
    p.free_next = c.scheme == LOCKFREE ? reinterpret_cast<unsigned *>(base + l.free_next) : nullptr;
    p.ends = c.scheme == STEAL ? reinterpret_cast<DequeEnds *>(base + l.ends) : nullptr;
    p.kept = c.scheme == STEAL && c.keep_first ? reinterpret_cast<Task *>(base + l.kept) : nullptr;
    p.handles = l.handles;
    return p;
}

/* Checks a Config for n_initial tasks: cudaErrorInvalidValue when the
 * capacity is 0 or above 2^30, blocks is 0, the initial tasks do not fit
 * (STEAL: dealt round robin, ceil(n / blocks) per deque), or LOCKFREE has
 * no holders. */
inline cudaError_t check_config(const Config &c, unsigned long long n_initial)
{
    if (c.capacity == 0 || c.capacity > (1u << 30) || c.blocks == 0 || c.scheme > STEAL || c.victim > RANDOM)
        return cudaErrorInvalidValue;
    if (c.scheme == LOCKFREE && c.holders == 0) return cudaErrorInvalidValue;
    const unsigned long long per = c.scheme == STEAL ? (n_initial + c.blocks - 1) / c.blocks : n_initial;
    if (per > c.capacity) return cudaErrorInvalidValue;
    return cudaSuccess;
}

/* Resets the pool and puts n_initial tasks in (initial: host or device
 * memory; cudaMemcpyDefault infers which). Asynchronous on stream. */
template <class Task>
inline cudaError_t init(const Pool<Task> &p, const Task *initial, unsigned long long n_initial,
                        cudaStream_t stream)
{
    cudaError_t e = check_config(p.cfg, n_initial);
    if (e != cudaSuccess) return e;
    if (n_initial > 0 && !initial) return cudaErrorInvalidValue;
    const Layout l = layout(p.cfg, sizeof(Task));
    e = cudaMemsetAsync(p.hdr, 0, l.total, stream);
    if (e != cudaSuccess) return e;
    if (n_initial > 0) {
        if (p.cfg.scheme == STEAL) {
            /* one dealing kernel (a copy per deque would cost thousands of
             * tiny copies on a full grid), from the caller's array when it
             * is in device memory, else from one upload of it */
            cudaPointerAttributes where;
            e = cudaPointerGetAttributes(&where, initial);
            if (e != cudaSuccess) return e;
            const Task *src = initial;
            Task *staged = nullptr;
            if (where.type != cudaMemoryTypeDevice && where.type != cudaMemoryTypeManaged) {
                e = cudaMallocAsync((void **)&staged, n_initial * sizeof(Task), stream);
                if (e != cudaSuccess) return e;
                e = cudaMemcpyAsync(staged, initial, n_initial * sizeof(Task), cudaMemcpyDefault, stream);
                src = staged;
            }
            if (e == cudaSuccess) {
                const unsigned long long grid = (n_initial + 255) / 256;
                const unsigned blocks = grid < 1024 ? (unsigned)grid : 1024u;
                detail::deal_kernel<Task><<<blocks, 256, 0, stream>>>(p, src, n_initial);
                e = cudaGetLastError();
            }
            if (staged) {
                const cudaError_t f = cudaFreeAsync(staged, stream);
                if (e == cudaSuccess) e = f;
            }
            if (e != cudaSuccess) return e;
        } else {
            /* STATIC: array 0 (round 0's `in`); BLOCKING: ring 0..n-1; LOCKFREE: handles 0..n-1 */
            e = cudaMemcpyAsync(p.data, initial, n_initial * sizeof(Task), cudaMemcpyDefault, stream);
            if (e != cudaSuccess) return e;
        }
    }
    detail::init_kernel<Task><<<64, 256, 0, stream>>>(p, n_initial);
    return cudaGetLastError();
}

/* The largest grid of `kernel` (block_threads threads, dyn_smem bytes of
 * dynamic shared memory) that is resident all at once on the current
 * device: occupancy per SM x SM count. Persistent pool kernels must never
 * be launched with more blocks (see THE RESIDENCY RULE above). */
template <class Kernel>
inline cudaError_t max_resident_blocks(Kernel kernel, int block_threads, size_t dyn_smem, int *out)
{
    *out = 0;
    int dev = 0, sms = 0, per_sm = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess) return e;
    e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (e != cudaSuccess) return e;
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block_threads, dyn_smem);
    if (e != cudaSuccess) return e;
    *out = per_sm * sms;
    return cudaSuccess;
}

/* Reads the error word and the counters (synchronizes the stream). */
template <class Task> inline cudaError_t read_status(const Pool<Task> &p, Status *s, cudaStream_t stream)
{
    Header h;
    cudaError_t e = cudaMemcpyAsync(&h, p.hdr, sizeof h, cudaMemcpyDeviceToHost, stream);
    if (e != cudaSuccess) return e;
    e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) return e;
    s->error = h.error;
    s->info = h.info;
    s->pending = h.pending;
    s->tasks = h.tasks;
    s->pushed = h.pushed;
    s->steals = h.steals;
    s->steal_attempts = h.steal_attempts;
    s->rounds = h.rounds;
    return cudaSuccess;
}

inline const char *error_string(unsigned e)
{
    switch (e) {
    case ERR_NONE: return "no error";
    case ERR_FULL: return "pool full";
    case ERR_BAD_GRID: return "grid size differs from Config::blocks";
    default: return e >= ERR_USER ? "user failure" : "unknown error";
    }
}

inline const char *scheme_name(Scheme s)
{
    switch (s) {
    case STATIC: return "static";
    case BLOCKING: return "blocking";
    case LOCKFREE: return "lockfree";
    case STEAL: return "steal";
    }
    return "?";
}

} // namespace cuda_pool
} // namespace gpk

#endif
