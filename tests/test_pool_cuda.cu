/* Exactly-once test of the device-side task pools (gpk/pool_cuda.cuh), at
 * full occupancy, for every scheme and both victim policies.
 *
 * The task tree: a task owns the id range [lo, hi); it consumes id lo and
 * splits [lo + 1, hi) into 2..4 parts of uneven, hash-chosen sizes, one
 * child task per non-empty part. The initial tasks split [0, N), so every
 * id 0..N-1 is consumed by exactly one task. Every consumed task sets its
 * id's bit with atomicOr (an already set bit is a duplicate), adds to a
 * count, and adds / xors a hash of the whole task record (lo, hi, depth,
 * parent hash), compared with the host's enumeration of the same tree.
 *
 * Then small capacities must fail with ERR_FULL (and the kernel must still
 * end), and a grid that differs from Config::blocks must give ERR_BAD_GRID.
 *
 * Exit 77 (skipped) without a CUDA device, unless GPK_REQUIRE_CUDA=1.
 * GPK_TEST_SMALL=1: a quick run (e.g. under compute-sanitizer). */
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "gpk/pool_cuda.cuh"
#include "testutil.h"

namespace cp = gpk::cuda_pool;

struct TTask {
    unsigned lo, hi, depth, parent;
};

struct Record {
    unsigned long long count, sum, xr, dups, bad;
};

__host__ __device__ inline unsigned long long mix64(unsigned long long z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

__host__ __device__ inline unsigned long long task_hash(const TTask &t, unsigned long long salt)
{
    unsigned long long h = mix64(salt ^ t.lo);
    h = mix64(h ^ ((unsigned long long)t.hi << 1));
    h = mix64(h ^ ((unsigned long long)t.depth << 7));
    return mix64(h ^ ((unsigned long long)t.parent << 13));
}

/* Child j (0..3) of t; false when that part is empty or absent. */
__host__ __device__ inline bool child_of(const TTask &t, unsigned j, unsigned long long salt, TTask *c)
{
    const unsigned long long h = task_hash(t, salt);
    const unsigned m = t.hi - t.lo - 1;
    if (m == 0) return false;
    const unsigned k = 2 + (unsigned)(h % 3);
    if (j >= k) return false;
    unsigned w[4], total = 0, before = 0;
    for (unsigned i = 0; i < k; i++) {
        w[i] = 1 + (unsigned)((h >> (8 + 8 * i)) & 3u);
        total += w[i];
        if (i < j) before += w[i];
    }
    const unsigned a = t.lo + 1 + (unsigned)((unsigned long long)m * before / total);
    const unsigned b = t.lo + 1 + (unsigned)((unsigned long long)m * (before + w[j]) / total);
    if (a == b) return false;
    c->lo = a;
    c->hi = b;
    c->depth = t.depth + 1;
    c->parent = (unsigned)h;
    return true;
}

__global__ void worker_kernel(cp::Pool<TTask> pool, unsigned n_ids, unsigned long long salt, unsigned *bitmap,
                              Record *rec)
{
    __shared__ cp::Worker ws;
    __shared__ TTask task;
    pool.block_begin(ws);
    const bool steal = pool.cfg.scheme == cp::STEAL;
    while (pool.block_next(ws, &task)) {
        const TTask t = task;
        if (threadIdx.x == 0) {
            if (t.lo >= t.hi || t.hi > n_ids) {
                atomicAdd(&rec->bad, 1ull);
            } else {
                const unsigned bit = 1u << (t.lo & 31);
                if (atomicOr(&bitmap[t.lo >> 5], bit) & bit) atomicAdd(&rec->dups, 1ull);
                const unsigned long long h = task_hash(t, salt);
                atomicAdd(&rec->count, 1ull);
                atomicAdd(&rec->sum, h);
                atomicXor(&rec->xr, h);
            }
        }
        if (t.lo >= t.hi || t.hi > n_ids) continue;
        if (steal) {
            /* one pusher per block on a work-stealing deque: one push per
             * child, or (every other task) all children by one push_n */
            if (threadIdx.x == 0) {
                TTask cs[4];
                unsigned k = 0;
                for (unsigned j = 0; j < 4; j++)
                    if (child_of(t, j, salt, &cs[k])) k++;
                if (t.lo & 1) {
                    (void)pool.push_n(ws, cs, k);
                } else {
                    for (unsigned j = 0; j < k; j++)
                        if (!pool.push(ws, cs[j])) break;
                }
            }
        } else if (threadIdx.x < 4) {
            /* concurrent pushes from four threads */
            TTask c;
            if (child_of(t, threadIdx.x, salt, &c)) pool.push(ws, c);
        }
    }
}

struct HostSum {
    unsigned long long count, sum, xr;
    unsigned max_depth;
};

static HostSum enumerate(const std::vector<TTask> &roots, unsigned long long salt)
{
    HostSum s = {0, 0, 0, 0};
    std::vector<TTask> stack(roots);
    while (!stack.empty()) {
        TTask t = stack.back();
        stack.pop_back();
        const unsigned long long h = task_hash(t, salt);
        s.count++;
        s.sum += h;
        s.xr ^= h;
        if (t.depth > s.max_depth) s.max_depth = t.depth;
        for (unsigned j = 0; j < 4; j++) {
            TTask c;
            if (child_of(t, j, salt, &c)) stack.push_back(c);
        }
    }
    return s;
}

static std::vector<TTask> make_roots(unsigned n_ids, unsigned n_roots)
{
    std::vector<TTask> r;
    for (unsigned i = 0; i < n_roots; i++) {
        const unsigned lo = (unsigned)((unsigned long long)n_ids * i / n_roots);
        const unsigned hi = (unsigned)((unsigned long long)n_ids * (i + 1) / n_roots);
        if (lo < hi) r.push_back(TTask{lo, hi, 0, 0});
    }
    return r;
}

#define CU_CHECK(call)                                                                                  \
    do {                                                                                                \
        cudaError_t e_ = (call);                                                                        \
        if (e_ != cudaSuccess) {                                                                        \
            fprintf(stderr, "FAIL %s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(1);                                                                                    \
        }                                                                                               \
    } while (0)

struct RunResult {
    cp::Status st;
    Record rec;
    std::vector<unsigned> bitmap;
    float ms;
};

/* One run: a pool of Config c over the tree, grid = c.blocks (or `grid` if
 * nonzero); init reads the roots from device memory when roots_on_device. */
static RunResult run_pool(cp::Config c, unsigned n_ids, const std::vector<TTask> &roots,
                          unsigned long long salt, int threads, unsigned grid, bool roots_on_device = false)
{
    RunResult r;
    void *mem = nullptr;
    unsigned *d_bitmap = nullptr;
    Record *d_rec = nullptr;
    const size_t words = n_ids / 32 + 1;
    CU_CHECK(cudaMalloc(&mem, cp::bytes_needed<TTask>(c)));
    CU_CHECK(cudaMalloc(&d_bitmap, words * sizeof(unsigned)));
    CU_CHECK(cudaMalloc(&d_rec, sizeof(Record)));
    CU_CHECK(cudaMemset(d_bitmap, 0, words * sizeof(unsigned)));
    CU_CHECK(cudaMemset(d_rec, 0, sizeof(Record)));
    cp::Pool<TTask> p = cp::make_pool<TTask>(c, mem);
    TTask *d_roots = nullptr;
    if (roots_on_device) {
        CU_CHECK(cudaMalloc(&d_roots, roots.size() * sizeof(TTask)));
        CU_CHECK(cudaMemcpy(d_roots, roots.data(), roots.size() * sizeof(TTask), cudaMemcpyHostToDevice));
    }
    CU_CHECK(cp::init(p, roots_on_device ? d_roots : roots.data(), roots.size(), 0));
    cudaEvent_t e0, e1;
    CU_CHECK(cudaEventCreate(&e0));
    CU_CHECK(cudaEventCreate(&e1));
    CU_CHECK(cudaEventRecord(e0, 0));
    worker_kernel<<<grid ? grid : c.blocks, threads, 0, 0>>>(p, n_ids, salt, d_bitmap, d_rec);
    CU_CHECK(cudaGetLastError());
    CU_CHECK(cudaEventRecord(e1, 0));
    CU_CHECK(cudaEventSynchronize(e1));
    CU_CHECK(cudaEventElapsedTime(&r.ms, e0, e1));
    CU_CHECK(cp::read_status(p, &r.st, 0));
    CU_CHECK(cudaMemcpy(&r.rec, d_rec, sizeof(Record), cudaMemcpyDeviceToHost));
    r.bitmap.resize(words);
    CU_CHECK(cudaMemcpy(r.bitmap.data(), d_bitmap, words * sizeof(unsigned), cudaMemcpyDeviceToHost));
    CU_CHECK(cudaEventDestroy(e0));
    CU_CHECK(cudaEventDestroy(e1));
    CU_CHECK(cudaFree(mem));
    if (d_roots) CU_CHECK(cudaFree(d_roots));
    CU_CHECK(cudaFree(d_bitmap));
    CU_CHECK(cudaFree(d_rec));
    return r;
}

int main(void)
{
    (void)tu_open_backend; /* testutil.h's; this test needs no gpk context */
    const char *req = getenv("GPK_REQUIRE_CUDA");
    const bool required = req && *req == '1';
    int devices = 0;
    cudaError_t e = cudaGetDeviceCount(&devices);
    if (e != cudaSuccess || devices == 0) {
        printf("no CUDA device (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "count 0");
        if (required) {
            printf("but GPK_REQUIRE_CUDA=1: failing\n");
            return 1;
        }
        printf("skipped\n");
        return TU_SKIP;
    }
    cudaDeviceProp prop;
    CU_CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
    const uint64_t seed = tu_seed();
    const unsigned long long salt = mix64(seed);
    const char *small = getenv("GPK_TEST_SMALL");
    const bool quick = small && *small == '1';
    const unsigned n_ids = quick ? 20000u : (1u << 20);
    const int threads = 64;

    int resident = 0;
    CU_CHECK(cp::max_resident_blocks(worker_kernel, threads, 0, &resident));
    TU_CHECK(resident > 0, "no resident blocks");
    if (resident <= 0) return tu_finish("pool_cuda");
    const unsigned blocks = quick && resident > 64 ? 64u : (unsigned)resident;
    printf("grid %u blocks x %d threads (%d resident at most), %u task ids%s\n", blocks, threads, resident,
           n_ids, quick ? " (GPK_TEST_SMALL)" : "");

    const std::vector<TTask> roots = make_roots(n_ids, 5);
    const HostSum want = enumerate(roots, salt);
    TU_CHECK(want.count == n_ids, "host enumeration: %llu tasks, want %u", want.count, n_ids);
    printf("tree: %llu tasks, depth %u\n", want.count, want.max_depth);

    struct Case {
        cp::Scheme scheme;
        cp::Victim victim;
        bool keep_first;
    } cases[] = {{cp::STATIC, cp::ROUND_ROBIN, false},   {cp::BLOCKING, cp::ROUND_ROBIN, false},
                 {cp::LOCKFREE, cp::ROUND_ROBIN, false}, {cp::STEAL, cp::ROUND_ROBIN, false},
                 {cp::STEAL, cp::RANDOM, false},         {cp::STEAL, cp::ROUND_ROBIN, true},
                 {cp::STEAL, cp::RANDOM, true}};

    for (const Case &k : cases) {
        cp::Config c;
        c.scheme = k.scheme;
        c.victim = k.victim;
        c.keep_first = k.keep_first;
        c.blocks = blocks;
        c.holders = blocks * threads;
        c.seed = seed;
        /* STEAL: each deque holds at most (children - 1) per level of a
         * depth-first descent plus the initial tasks; queues: the frontier <= ids */
        c.capacity = k.scheme == cp::STEAL ? 4096u : n_ids;
        const char *name = k.scheme != cp::STEAL ? cp::scheme_name(k.scheme)
            : k.keep_first ? (k.victim == cp::RANDOM ? "steal/random/keep" : "steal/rr/keep")
                           : (k.victim == cp::RANDOM ? "steal/random" : "steal/round-robin");
        /* every other case hands init its roots in device memory */
        const bool on_device = (&k - cases) % 2 == 1;
        RunResult r = run_pool(c, n_ids, roots, salt, threads, 0, on_device);
        unsigned long long set = 0;
        for (size_t i = 0; i < r.bitmap.size(); i++)
            set += (unsigned long long)__builtin_popcount(r.bitmap[i]);
        printf("%-18s %8.2f ms  %10.3g tasks/s  tasks %llu pushed %llu rounds %llu steals %llu/%llu%s\n",
               name, r.ms, r.ms > 0 ? (double)r.st.tasks / r.ms * 1e3 : 0.0, r.st.tasks, r.st.pushed,
               r.st.rounds, r.st.steals, r.st.steal_attempts, on_device ? " (roots from device memory)" : "");
        TU_CHECK(r.st.error == cp::ERR_NONE, "%s: error word %u (%s), info %llu", name, r.st.error,
                 cp::error_string(r.st.error), r.st.info);
        TU_CHECK(r.rec.count == want.count, "%s: %llu tasks consumed, want %llu", name, r.rec.count,
                 want.count);
        TU_CHECK(r.rec.dups == 0, "%s: %llu duplicates", name, r.rec.dups);
        TU_CHECK(r.rec.bad == 0, "%s: %llu malformed tasks", name, r.rec.bad);
        TU_CHECK(set == n_ids, "%s: %llu ids seen, want %u", name, set, n_ids);
        TU_CHECK(r.rec.sum == want.sum, "%s: checksum sum %llx, want %llx", name, r.rec.sum, want.sum);
        TU_CHECK(r.rec.xr == want.xr, "%s: checksum xor %llx, want %llx", name, r.rec.xr, want.xr);
        TU_CHECK(r.st.tasks == want.count, "%s: pool counted %llu tasks, want %llu", name, r.st.tasks,
                 want.count);
        TU_CHECK(r.st.pushed == want.count - roots.size(), "%s: pool counted %llu pushes, want %llu", name,
                 r.st.pushed, want.count - (unsigned long long)roots.size());
        if (k.scheme != cp::STATIC)
            TU_CHECK(r.st.pending == 0, "%s: pending %lld at the end", name, r.st.pending);
        else
            TU_CHECK(r.st.rounds == want.max_depth + 1, "%s: %llu rounds, want depth + 1 = %u", name,
                     r.st.rounds, want.max_depth + 1);
        if (k.scheme == cp::STEAL && blocks > 1) TU_CHECK(r.st.steals > 0, "%s: no steals at all", name);
    }

    /* Small capacities: the error word must say "full", and the kernel end.
     * Few blocks, so that tasks cannot all sit in blocks' hands: a FIFO
     * queue's frontier then outgrows 4 slots, and a deque of 2 overflows at
     * the first task with 3 or 4 children. */
    const unsigned few = blocks < 8 ? blocks : 8u;
    const unsigned small_ids = 20000;
    const std::vector<TTask> one_root = make_roots(small_ids, 1);
    for (int s = 0; s < 5; s++) { /* 4: STEAL with keep_first */
        cp::Config c;
        c.scheme = s == 4 ? cp::STEAL : (cp::Scheme)s;
        c.keep_first = s == 4;
        c.blocks = few;
        c.holders = few * threads;
        c.seed = seed;
        c.capacity = c.scheme == cp::STEAL ? 2u : 4u;
        RunResult r = run_pool(c, small_ids, one_root, salt, threads, 0);
        const char *name = cp::scheme_name(c.scheme);
        printf("%-18s capacity %u: error %u (%s), info %llu, %llu tasks ran\n", name, c.capacity, r.st.error,
               cp::error_string(r.st.error), r.st.info, r.rec.count);
        TU_CHECK(r.st.error == cp::ERR_FULL, "%s capacity %u: error word %u, want ERR_FULL", name, c.capacity,
                 r.st.error);
        TU_CHECK(r.st.info == c.capacity, "%s: info %llu, want the capacity %u", name, r.st.info, c.capacity);
        TU_CHECK(r.rec.dups == 0 && r.rec.bad == 0, "%s (full): %llu duplicates, %llu malformed", name,
                 r.rec.dups, r.rec.bad);
        TU_CHECK(r.rec.count < small_ids, "%s (full): all %llu tasks ran although the pool was full", name,
                 r.rec.count);
    }

    /* A grid that is not Config::blocks is refused (every block leaves at once). */
    {
        cp::Config c;
        c.scheme = cp::STEAL;
        c.blocks = 2;
        c.holders = 2 * threads;
        c.capacity = 64;
        RunResult r = run_pool(c, small_ids, one_root, salt, threads, 3);
        TU_CHECK(r.st.error == cp::ERR_BAD_GRID && r.st.info == 3, "bad grid: error %u info %llu", r.st.error,
                 r.st.info);
        TU_CHECK(r.rec.count == 0, "bad grid: %llu tasks ran", r.rec.count);
    }
    /* Config checks on the host. */
    {
        cp::Config c;
        c.capacity = 0;
        TU_CHECK(cp::check_config(c, 0) == cudaErrorInvalidValue, "capacity 0 accepted");
        c.capacity = 2;
        c.scheme = cp::STATIC;
        TU_CHECK(cp::check_config(c, 3) == cudaErrorInvalidValue, "3 initial tasks in capacity 2 accepted");
        c.scheme = cp::STEAL;
        c.blocks = 2;
        TU_CHECK(cp::check_config(c, 3) == cudaSuccess, "3 initial tasks over 2 deques of 2 refused");
    }
    return tu_finish("pool_cuda");
}
