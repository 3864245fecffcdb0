/* The task-pool octree builder on the GPU (Cederman & Tsigas 2008,
 * Section 5): a persistent kernel in which ONE THREAD BLOCK processes one
 * task at a time, on the device pools of gpk/pool_cuda.cuh (any of the four
 * schemes).
 *
 * A task is a node that splits: (code prefix, node record, first, count,
 * depth). The block counts its range's codes by octant (warp-aggregated
 * shared-memory counters), takes record slots for the non-empty octants
 * from one device counter, moves the codes and indices of each octant
 * together into the scratch arrays (octants in order 0..7; inside an octant
 * the order is not stable, which only changes the order of particles inside
 * a leaf) and copies them back, then thread 0 writes the children's records
 * and pushes the children that split (octree_splits).
 *
 * Big tasks first. In the paper every task is one block's, so the root's n
 * particles pass through one block, its 8 children through 8 blocks, and
 * so on: the top levels run at a few blocks' bandwidth (16M uniform
 * particles took longer than the whole Morton build, docs/perf/octree.md).
 * Here the tasks above opts.grid_split particles (default
 * GPK_OCTREE_GRID_SPLIT) are split by the whole grid
 * instead, one level per round of two launches (count by tile, scatter by
 * tile with one atomic per octant and tile, into the other pair of arrays),
 * the host reading the octant counts between rounds; so are the tasks above grid_split / 16
 * while the pool would start with fewer tasks than blocks. The other
 * children are the pool's initial tasks, dealt as the scheme deals them.
 *
 * Records: preallocated. A first attempt uses an estimate; if the tree
 * needs more the kernel stops (error word) and the build restarts from the
 * root with the proven bound, on codes computed again (the stopped run left
 * its particles in both pairs of arrays). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "../core/cuda_internal.h"
#include "gpk/pool_cuda.cuh"
#include "octree_cuda_internal.h"

namespace cp = gpk::cuda_pool;

namespace {

struct OTask {
    unsigned long long prefix;
    unsigned node, first, count, depth;
};

typedef octree_dnode DNode;

struct Build {
    unsigned long long *codes, *codes_tmp;
    unsigned *idx, *idx_tmp;
    DNode *nodes;
    unsigned long long *next_node;
    unsigned long long node_cap;
    unsigned threshold;
};

constexpr unsigned ERR_NODES = cp::ERR_USER + 1; /* node array full (info: nodes wanted) */
/* Stealing pool, work first (cp::Config::keep_first): a task's first child
 * is its block's next task, with no deque operation or fence (docs/perf/octree.md:
 * with random victims it put stealing at or ahead of the static list at
 * every N from 1M to 16M, where without it 4M trailed by 1-3 %). */
constexpr bool kKeepFirstDefault = true;

/* Warp-aggregated octant counts of [begin, end) into cnt[8] (shared).
 * blockDim.x is a multiple of 32 and every warp runs the same number of
 * iterations, so the full-mask warp intrinsics are safe. */
__device__ __forceinline__ void tile_count(const unsigned long long *__restrict__ codes,
                                           unsigned long long begin, unsigned long long end, unsigned shift,
                                           unsigned *cnt)
{
    const unsigned lane = threadIdx.x & 31u;
    for (unsigned long long base = begin; base < end; base += blockDim.x) {
        const unsigned long long i = base + threadIdx.x;
        const bool v = i < end;
        const unsigned oct = v ? (unsigned)(codes[i] >> shift) & 7u : 8u;
        const unsigned peers = __match_any_sync(0xffffffffu, oct);
        if (v && lane == (unsigned)__ffs(peers) - 1u) atomicAdd(&cnt[oct], (unsigned)__popc(peers));
    }
}

/* Moves the codes and indices of [begin, end) to out at at[octant] (shared
 * cursors, advanced by one atomic per warp and octant): octants together,
 * in no particular order inside one. */
__device__ __forceinline__ void tile_partition(const unsigned long long *__restrict__ codes,
                                               const unsigned *__restrict__ idx, unsigned long long begin,
                                               unsigned long long end, unsigned shift, unsigned *at,
                                               unsigned long long *__restrict__ codes_out,
                                               unsigned *__restrict__ idx_out)
{
    const unsigned lane = threadIdx.x & 31u;
    for (unsigned long long base = begin; base < end; base += blockDim.x) {
        const unsigned long long i = base + threadIdx.x;
        const bool v = i < end;
        unsigned long long code = 0;
        unsigned id = 0;
        if (v) {
            code = codes[i];
            id = idx[i];
        }
        const unsigned oct = v ? (unsigned)(code >> shift) & 7u : 8u;
        const unsigned peers = __match_any_sync(0xffffffffu, oct);
        const unsigned leader = (unsigned)__ffs(peers) - 1u;
        unsigned pos = 0;
        if (v && lane == leader) pos = atomicAdd(&at[oct], (unsigned)__popc(peers));
        pos = __shfl_sync(0xffffffffu, pos, (int)leader);
        if (v) {
            const unsigned dst = pos + (unsigned)__popc(peers & ((1u << lane) - 1u));
            codes_out[dst] = code;
            idx_out[dst] = id;
        }
    }
}

/* OTask.depth: the depth in bits 0-7; bit 8 set when the task's codes and
 * indices are in the scratch arrays (each task partitions from one pair of
 * arrays into the other, so no level copies its particles back; a leaf's
 * indices are copied home when its parent wrote them to the scratch). */
constexpr unsigned IN_TMP = 1u << 8;

__global__ void __launch_bounds__(1024, 1) split_kernel(cp::Pool<OTask> pool, Build b)
{
    __shared__ cp::Worker ws;
    __shared__ OTask task;
    __shared__ unsigned cnt[8], at[8];
    __shared__ unsigned long long s_base;
    __shared__ int s_ok;
    pool.block_begin(ws);
    while (pool.block_next(ws, &task)) {
        const OTask t = task;
        const unsigned depth = t.depth & 0xFFu;
        const bool in_tmp = (t.depth & IN_TMP) != 0;
        const unsigned long long *__restrict__ src_codes = in_tmp ? b.codes_tmp : b.codes;
        const unsigned *__restrict__ src_idx = in_tmp ? b.idx_tmp : b.idx;
        unsigned long long *__restrict__ dst_codes = in_tmp ? b.codes : b.codes_tmp;
        unsigned *__restrict__ dst_idx = in_tmp ? b.idx : b.idx_tmp;
        const unsigned shift = 3u * (OCTREE_QBITS - 1u - depth);
        const unsigned long long first = t.first, stop = first + t.count;
        if (threadIdx.x < 8) cnt[threadIdx.x] = 0;
        __syncthreads();
        tile_count(src_codes, first, stop, shift, cnt);
        __syncthreads();
        if (threadIdx.x == 0) {
            unsigned long long pos = first;
            unsigned k = 0;
            for (unsigned o = 0; o < 8; o++) {
                at[o] = (unsigned)pos;
                pos += cnt[o];
                k += cnt[o] != 0;
            }
            const unsigned long long base = atomicAdd(b.next_node, (unsigned long long)k);
            s_ok = base + k <= b.node_cap;
            if (!s_ok) pool.fail(ERR_NODES, base + k);
            s_base = base;
        }
        __syncthreads();
        if (!s_ok) continue; /* the run stops: the next block_next returns false */
        /* Partition into the other arrays, octants in order. */
        tile_partition(src_codes, src_idx, first, stop, shift, at, dst_codes, dst_idx);
        const unsigned d = depth + 1;
        if (!in_tmp) {
            /* the leaves' indices go home; their codes are not read again.
             * One pass over the range (not one loop per octant): a task
             * whose children are all leaves waits for one round of loads,
             * not eight. */
            unsigned ends[8], leaves = 0, end = t.first;
#pragma unroll
            for (unsigned o = 0; o < 8; o++) {
                const unsigned c = cnt[o];
                end += c;
                ends[o] = end;
                if (c && !(c > b.threshold && d < GPK_OCTREE_MAX_DEPTH)) leaves |= 1u << o;
            }
            __syncthreads();
            if (leaves)
                for (unsigned i = t.first + threadIdx.x; i < end; i += blockDim.x) {
                    unsigned o = 0;
#pragma unroll
                    for (unsigned k = 0; k < 7; k++) o += i >= ends[k];
                    if (leaves >> o & 1u) b.idx[i] = b.idx_tmp[i];
                }
        }
        /* every thread's moves are published before thread 0 pushes the
         * children, whose blocks will read these ranges */
        cp::block_release();
        if (threadIdx.x == 0) {
            unsigned long long child = s_base;
            unsigned start = t.first;
            OTask subs[8];
            unsigned nsub = 0;
            for (unsigned o = 0; o < 8; o++) {
                const unsigned c = cnt[o];
                if (!c) continue;
                const unsigned long long prefix = t.prefix | (unsigned long long)o << shift;
                const bool splits = c > b.threshold && d < GPK_OCTREE_MAX_DEPTH;
                DNode nd;
                nd.prefix = prefix;
                nd.first = start;
                nd.count = c;
                nd.parent = t.node;
                nd.depth_leaf = d | (splits ? 0u : 1u << 8);
                b.nodes[child] = nd; /* read after the kernel */
                if (splits) {
                    OTask sub;
                    sub.prefix = prefix;
                    sub.node = (unsigned)child;
                    sub.first = start;
                    sub.count = c;
                    sub.depth = d | (in_tmp ? 0u : IN_TMP);
                    subs[nsub++] = sub;
                }
                start += c;
                child++;
            }
            /* all at once (stealing: one release); full: the error word stops the run */
            (void)pool.push_n(ws, subs, nsub);
        }
    }
}

/* ---- big tasks: split by the whole grid ------------------------------------------ */

constexpr unsigned kWideTile = 1u << 12; /* particles per block and launch */
constexpr unsigned kWideThreads = 256;

struct WideTile {
    unsigned task, begin, end;
};

/* tile_counts[tile * 8 + o]: the tile's octant counts; counts[task * 8 + o]:
 * its task's, summed over the task's tiles. */
__global__ void __launch_bounds__(kWideThreads)
    wide_count(const unsigned long long *__restrict__ codes, const WideTile *__restrict__ tiles,
               unsigned shift, unsigned *__restrict__ tile_counts, unsigned *__restrict__ counts)
{
    __shared__ unsigned cnt[8];
    const WideTile w = tiles[blockIdx.x];
    if (threadIdx.x < 8) cnt[threadIdx.x] = 0;
    __syncthreads();
    tile_count(codes, w.begin, w.end, shift, cnt);
    __syncthreads();
    if (threadIdx.x < 8) {
        tile_counts[blockIdx.x * 8 + threadIdx.x] = cnt[threadIdx.x];
        if (cnt[threadIdx.x]) atomicAdd(&counts[w.task * 8 + threadIdx.x], cnt[threadIdx.x]);
    }
}

/* firsts[task]: the task's first particle; tile_counts, counts: from
 * wide_count; cursor[task * 8 + o]: particles of octant o placed so far. */
__global__ void __launch_bounds__(kWideThreads)
    wide_scatter(const unsigned long long *__restrict__ codes, const unsigned *__restrict__ idx,
                 const WideTile *__restrict__ tiles, unsigned shift, const unsigned *__restrict__ firsts,
                 const unsigned *__restrict__ tile_counts, const unsigned *__restrict__ counts,
                 unsigned *__restrict__ cursor, unsigned long long *__restrict__ codes_out,
                 unsigned *__restrict__ idx_out)
{
    __shared__ unsigned at[8];
    const WideTile w = tiles[blockIdx.x];
    if (threadIdx.x < 8) {
        const unsigned o = threadIdx.x, c = tile_counts[blockIdx.x * 8 + o];
        unsigned start = firsts[w.task];
        for (unsigned k = 0; k < o; k++) start += counts[w.task * 8 + k];
        at[o] = c ? start + atomicAdd(&cursor[w.task * 8 + o], c) : 0u;
    }
    __syncthreads();
    tile_partition(codes, idx, w.begin, w.end, shift, at, codes_out, idx_out);
}

/* The indices of leaves the big tasks left in the scratch arrays go home
 * (their codes are not read again). */
__global__ void __launch_bounds__(kWideThreads)
    leaves_home(const WideTile *__restrict__ tiles, const unsigned *__restrict__ idx_tmp,
                unsigned *__restrict__ idx)
{
    const WideTile w = tiles[blockIdx.x];
    for (unsigned i = w.begin + threadIdx.x; i < w.end; i += blockDim.x) idx[i] = idx_tmp[i];
}

/* Device memory of one build (temporaries of the context's pool), freed
 * stream-ordered at scope exit. */
struct Res {
    gpk_ctx *ctx;
    cudaStream_t stream;
    void *pool_mem = nullptr, *wide = nullptr;
    DNode *d_nodes = nullptr;
    unsigned long long *d_next = nullptr;
    Res(gpk_ctx *c, cudaStream_t s) : ctx(c), stream(s) {}
    void drop(void *p) const { (void)gpk__cuda_temp_free(ctx, p, stream); }
    ~Res()
    {
        /* the host ends of copies still in flight (declared before) outlive this */
        (void)cudaStreamSynchronize(stream);
        /* errors while freeing are ignored: the build's status is already decided */
        drop(pool_mem);
        drop(wide);
        drop(d_nodes);
        drop(d_next);
        (void)cudaGetLastError();
    }
};

/* The big tasks, level by level (see the file comment). Appends the records
 * it creates to recs (recs[0], the root, is there already) and the tasks
 * for the pool to pool_tasks; *wide_tasks counts the tasks it ran.
 * frontier_min (<= wide_min): below wide_min, a task is still the grid's
 * while the pool would start with fewer tasks than blocks (the blocks
 * without one would only spin), down to frontier_min particles. Its device
 * buffers (r.wide) are allocated once and kept for a restart. */
gpk_status split_wide(gpk_ctx *ctx, cudaStream_t stream, Res &r, const Build &b, size_t n, unsigned wide_min,
                      unsigned frontier_min, unsigned blocks, std::vector<DNode> &recs,
                      std::vector<OTask> &pool_tasks, unsigned long long *wide_tasks)
{
    std::vector<OTask> cand;
    std::vector<OTask> level(1, OTask{0ull, 0u, 0u, (unsigned)n, 0u}), next;
    std::vector<WideTile> tiles, home; /* home: leaves whose indices are in the scratch array */
    std::vector<unsigned> firsts, counts;
    const size_t max_tasks = n / ((size_t)frontier_min + 1) + 1, max_tiles = n / kWideTile + max_tasks + 1;
    /* one allocation: tiles, their counts (8 per tile), firsts, counts and
     * cursors (8 per task each) */
    if (!r.wide)
        GPK_CHECK(gpk__cuda_temp_alloc(ctx, &r.wide,
                                       max_tiles * (sizeof(WideTile) + 8 * sizeof(unsigned)) +
                                           max_tasks * 17 * sizeof(unsigned),
                                       stream, "octree (cuda pool): big tasks' arrays"));
    cudaError_t e = cudaSuccess;
    WideTile *d_tiles = (WideTile *)r.wide;
    unsigned *d_tile_counts = (unsigned *)(d_tiles + max_tiles), *d_firsts = d_tile_counts + 8 * max_tiles,
             *d_counts = d_firsts + max_tasks, *d_cursor = d_counts + 8 * max_tasks;
    /* Ping-pong: a level's tasks are all in one pair of arrays (the root in
     * codes / idx) and their children go to the other, with no copy back;
     * the pool's tasks say where theirs are (IN_TMP). */
    bool src_tmp = false;
    while (!level.empty()) {
        const unsigned long long *src_codes = src_tmp ? b.codes_tmp : b.codes;
        const unsigned *src_idx = src_tmp ? b.idx_tmp : b.idx;
        unsigned long long *dst_codes = src_tmp ? b.codes : b.codes_tmp;
        unsigned *dst_idx = src_tmp ? b.idx : b.idx_tmp;
        const unsigned depth = level[0].depth, shift = 3u * (OCTREE_QBITS - 1u - depth);
        tiles.clear();
        firsts.clear();
        for (unsigned k = 0; k < level.size(); k++) {
            firsts.push_back(level[k].first);
            for (unsigned a = 0; a < level[k].count; a += kWideTile)
                tiles.push_back(WideTile{
                    k, level[k].first + a,
                    level[k].first + (level[k].count - a < kWideTile ? level[k].count : a + kWideTile)});
        }
        const size_t nt = level.size();
        if (nt > max_tasks || tiles.size() > max_tiles)
            return gpk__fail(ctx, GPK_EDEVICE, "octree (cuda pool): internal error (%zu big tasks)", nt);
        e = cudaMemcpyAsync(d_tiles, tiles.data(), tiles.size() * sizeof(WideTile), cudaMemcpyHostToDevice,
                            stream);
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(d_firsts, firsts.data(), nt * sizeof(unsigned), cudaMemcpyHostToDevice,
                                stream);
        if (e == cudaSuccess) e = cudaMemsetAsync(d_counts, 0, 16 * max_tasks * sizeof(unsigned), stream);
        if (e == cudaSuccess) {
            const unsigned grid = (unsigned)tiles.size();
            wide_count<<<grid, kWideThreads, 0, stream>>>(src_codes, d_tiles, shift, d_tile_counts, d_counts);
            wide_scatter<<<grid, kWideThreads, 0, stream>>>(src_codes, src_idx, d_tiles, shift, d_firsts,
                                                            d_tile_counts, d_counts, d_cursor, dst_codes,
                                                            dst_idx);
            e = cudaGetLastError();
        }
        counts.resize(8 * nt);
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(counts.data(), d_counts, 8 * nt * sizeof(unsigned), cudaMemcpyDeviceToHost,
                                stream);
        if (e == cudaSuccess) e = cudaStreamSynchronize(stream); /* the host vectors are read and reused */
        if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "octree (cuda pool): splitting big tasks");
        next.clear();
        cand.clear();
        const unsigned d = depth + 1;
        for (size_t k = 0; k < nt; k++) {
            const OTask &t = level[k];
            unsigned start = t.first;
            unsigned long long total = 0;
            for (unsigned o = 0; o < 8; o++) total += counts[8 * k + o];
            if (total != t.count)
                return gpk__fail(ctx, GPK_EDEVICE,
                                 "octree (cuda pool): internal error (a big task counted %llu of %u)", total,
                                 t.count);
            for (unsigned o = 0; o < 8; o++) {
                const unsigned c = counts[8 * k + o];
                if (!c) continue;
                const unsigned long long prefix = t.prefix | (unsigned long long)o << shift;
                const bool splits = c > b.threshold && d < GPK_OCTREE_MAX_DEPTH;
                const unsigned node = (unsigned)recs.size();
                recs.push_back(DNode{prefix, start, c, t.node, d | (splits ? 0u : 1u << 8)});
                if (splits) (c > wide_min ? next : cand).push_back(OTask{prefix, node, start, c, d});
                else if (!src_tmp) /* written to the scratch arrays */
                    for (unsigned a = 0; a < c; a += kWideTile)
                        home.push_back(
                            WideTile{0u, start + a, start + (c - a < kWideTile ? c : a + kWideTile)});
                start += c;
            }
        }
        const bool few = pool_tasks.size() + next.size() + cand.size() < blocks;
        for (const OTask &t : cand) {
            if (few && t.count > frontier_min) {
                next.push_back(t);
            } else {
                pool_tasks.push_back(t);
                if (!src_tmp) pool_tasks.back().depth |= IN_TMP;
            }
        }
        *wide_tasks += nt;
        level.swap(next);
        src_tmp = !src_tmp;
    }
    for (size_t at = 0; at < home.size(); at += max_tiles) {
        const size_t m = home.size() - at < max_tiles ? home.size() - at : max_tiles;
        e = cudaMemcpyAsync(d_tiles, home.data() + at, m * sizeof(WideTile), cudaMemcpyHostToDevice, stream);
        if (e == cudaSuccess) {
            leaves_home<<<(unsigned)m, kWideThreads, 0, stream>>>(d_tiles, b.idx_tmp, b.idx);
            e = cudaGetLastError();
        }
        if (e == cudaSuccess) e = cudaStreamSynchronize(stream); /* home is reused and freed */
        if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "octree (cuda pool): leaves of big tasks");
    }
    return GPK_OK;
}

/* The grid of a pool scheme: threads per block and blocks, every block
 * resident at once (the pools spin). Checks the job first. */
gpk_status pool_grid(const octree_cuda_job *job, const char *name, unsigned *threads_out,
                     unsigned *blocks_out)
{
    gpk_ctx *ctx = job->ctx;
    const gpk_octree_opts *o = job->opts;
    if ((int)job->scheme < GPK_OCTREE_STATIC || (int)job->scheme > GPK_OCTREE_STEAL)
        return gpk__fail(ctx, GPK_EINVAL, "octree (cuda pool): scheme %d is not a pool scheme",
                         (int)job->scheme);
    if (job->n > (size_t)UINT32_MAX)
        return gpk__fail(ctx, GPK_EINVAL, "octree %s (cuda): %zu particles, at most %u", name, job->n,
                         UINT32_MAX);
    const unsigned threads = o->threads ? o->threads : 64u;
    if (threads % 32u != 0 || threads > 1024u)
        return gpk__fail(ctx, GPK_EINVAL,
                         "octree %s (cuda): %u threads per block; use a multiple of 32 up to 1024 (0: 64)",
                         name, threads);
    int resident = 0;
    const cudaError_t e = cp::max_resident_blocks(split_kernel, (int)threads, 0, &resident);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "octree (cuda pool): occupancy query");
    if (resident <= 0)
        return gpk__fail(ctx, GPK_EINVAL, "octree %s (cuda): no block of %u threads fits on the device", name,
                         threads);
    const unsigned blocks = o->blocks ? o->blocks : (unsigned)resident;
    if (blocks > (unsigned)resident)
        return gpk__fail(
            ctx, GPK_EINVAL,
            "octree %s (cuda): %u blocks requested, but only %d blocks of %u threads are resident at "
            "once; the persistent kernel spins on its pool, so every block must be resident (0: %d)",
            name, blocks, resident, threads, resident);
    *threads_out = threads;
    *blocks_out = blocks;
    return GPK_OK;
}

/* The node array (node_cap records) with recs uploaded, and the node
 * counter at recs.size() (*used_up, the copy's host end, must outlive r). */
gpk_status upload_records(gpk_ctx *ctx, cudaStream_t stream, Res &r, const std::vector<DNode> &recs,
                          size_t node_cap, unsigned long long *used_up)
{
    r.drop(r.d_nodes);
    r.d_nodes = nullptr;
    GPK_CHECK(gpk__cuda_temp_alloc(ctx, (void **)&r.d_nodes, node_cap * sizeof(DNode), stream,
                                   "octree (cuda pool): node array"));
    *used_up = recs.size();
    cudaError_t e =
        cudaMemcpyAsync(r.d_nodes, recs.data(), recs.size() * sizeof(DNode), cudaMemcpyHostToDevice, stream);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(r.d_next, used_up, sizeof *used_up, cudaMemcpyHostToDevice, stream);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "octree (cuda pool): records upload");
    return GPK_OK;
}

/* The pool's configuration for n_initial first tasks. Default
 * capacities: queues and the static list hold disjoint inner nodes, at
 * most n / (t + 1); a deque holds its share of the initial tasks plus at
 * most 7 unexplored siblings per level of its owner's depth-first
 * descent (21 levels) and one task's 8 children: 256 more. A given
 * capacity is used as is. */
gpk_status pool_config(const octree_cuda_job *job, const char *name, unsigned blocks, unsigned threads,
                       size_t n_initial, cp::Config *out)
{
    gpk_ctx *ctx = job->ctx;
    const gpk_octree_opts *o = job->opts;
    cp::Config c;
    c.scheme = (cp::Scheme)job->scheme;
    c.blocks = blocks;
    c.holders = blocks * threads;
    c.victim = o->pool.victim == GPK_POOL_VICTIM_RANDOM ? cp::RANDOM : cp::ROUND_ROBIN;
    c.seed = o->pool.seed;
    c.keep_first = kKeepFirstDefault; /* stealing only */
    size_t cap = o->pool.capacity;
    if (cap == 0) {
        if (c.scheme == cp::STEAL) {
            cap = 256 + (n_initial + blocks - 1) / blocks;
        } else {
            cap = job->n / ((size_t)job->leaf_threshold + 1) + 1;
            if (cap < 64) cap = 64;
        }
        if (cap > ((size_t)1 << 30)) cap = (size_t)1 << 30;
    }
    if (cap > ((size_t)1 << 30))
        return gpk__fail(ctx, GPK_EINVAL, "octree %s (cuda): pool capacity %zu above 2^30", name, cap);
    if ((unsigned long long)c.holders + cap > 0xFFFFFFFEull)
        return gpk__fail(ctx, GPK_EINVAL, "octree %s (cuda): pool capacity %zu too large for %u threads",
                         name, cap, c.holders);
    c.capacity = (unsigned)cap;
    if (cp::check_config(c, n_initial) != cudaSuccess)
        return gpk__fail(
            ctx, GPK_EFULL,
            "octree %s (cuda): pool full: %s holds %u tasks (opts.pool.capacity), fewer than the "
            "%zu first tasks need; give a larger capacity or 0 for the default",
            name, c.scheme == cp::STEAL ? "a block's work-stealing deque" : "the pool", c.capacity,
            n_initial);
    *out = c;
    return GPK_OK;
}

/* One run of the pool from the initial tasks, timed into *pool_ms: its
 * status and the node count (*used, the copy's host end, must outlive
 * r). */
gpk_status run_pool(gpk_ctx *ctx, cudaStream_t stream, Res &r, const Build &b, const cp::Config &c,
                    unsigned threads, const std::vector<OTask> &initial, cp::Status *status,
                    unsigned long long *used, double *pool_ms)
{
    r.drop(r.pool_mem);
    r.pool_mem = nullptr;
    /* the pool, then room for the initial tasks: init deals them from device memory */
    const size_t pool_bytes = (cp::bytes_needed<OTask>(c) + 255) & ~(size_t)255;
    GPK_CHECK(gpk__cuda_temp_alloc(ctx, &r.pool_mem, pool_bytes + initial.size() * sizeof(OTask), stream,
                                   "octree (cuda pool): pool allocation"));
    const cp::Pool<OTask> pool = cp::make_pool<OTask>(c, r.pool_mem);
    OTask *d_initial = (OTask *)((unsigned char *)r.pool_mem + pool_bytes);
    cudaError_t e = cudaMemcpyAsync(d_initial, initial.data(), initial.size() * sizeof(OTask),
                                    cudaMemcpyHostToDevice, stream);
    if (e == cudaSuccess) e = cp::init(pool, d_initial, initial.size(), stream);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "octree (cuda pool): pool init");
    gpk_cuda_state *st = (gpk_cuda_state *)ctx->cuda;
    e = cudaEventRecord(st->ev_start, stream);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "octree (cuda pool): timing event");
    split_kernel<<<c.blocks, threads, 0, stream>>>(pool, b);
    e = cudaGetLastError();
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "octree (cuda pool): kernel launch");
    e = cudaEventRecord(st->ev_stop, stream);
    /* the node count rides on read_status's wait */
    if (e == cudaSuccess) e = cudaMemcpyAsync(used, r.d_next, sizeof *used, cudaMemcpyDeviceToHost, stream);
    if (e == cudaSuccess)
        e = cp::read_status(pool, status, stream); /* synchronizes: kernel faults show here */
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "octree (cuda pool): kernel");
    float kernel_ms = 0.f;
    e = cudaEventElapsedTime(&kernel_ms, st->ev_start, st->ev_stop);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "octree (cuda pool): timing event");
    *pool_ms += kernel_ms;
    return GPK_OK;
}

/* The build's status from the pool's (GPK_OK: no error). */
gpk_status pool_status(const octree_cuda_job *job, const char *name, const cp::Status &status,
                       size_t node_cap, unsigned pool_cap)
{
    gpk_ctx *ctx = job->ctx;
    if (status.error == cp::ERR_FULL)
        return gpk__fail(ctx, GPK_EFULL,
                         "octree %s (cuda): pool full: %s holds %u tasks (opts.pool.capacity); give a larger "
                         "capacity or 0 for the default",
                         name, job->scheme == GPK_OCTREE_STEAL ? "a block's work-stealing deque" : "the pool",
                         pool_cap);
    if (status.error == ERR_NODES) {
        if (node_cap >= (size_t)INT32_MAX)
            return gpk__fail(ctx, GPK_ENOMEM,
                             "octree %s (cuda): more nodes (%llu) than int32 child links can name", name,
                             status.info);
        return gpk__fail(ctx, GPK_EINVAL,
                         "octree %s (cuda): node count %llu above its proven bound %zu, an internal error",
                         name, status.info, node_cap);
    }
    if (status.error != cp::ERR_NONE)
        return gpk__fail(ctx, GPK_EINVAL,
                         "octree %s (cuda): device pool error %u (%s), info %llu, an internal error", name,
                         status.error, cp::error_string(status.error), status.info);
    return GPK_OK;
}

} // namespace

gpk_status gpk__octree_cuda_pool(const octree_cuda_job *job, uint64_t *d_codes, uint32_t *d_idx,
                                 uint64_t *d_codes_tmp, uint32_t *d_idx_tmp, octree_dnode **d_nodes,
                                 size_t *n_nodes, uint64_t *tasks, double *pool_ms)
{
    gpk_ctx *ctx = job->ctx;
    cudaStream_t stream = job->stream;
    const size_t n = job->n;
    const unsigned t = job->leaf_threshold;
    const char *name = gpk_octree_scheme_name(job->scheme);
    const gpk_octree_opts *o = job->opts;
    /* Host ends of the asynchronous copies: declared before r, whose
     * destructor waits for the stream, so that no path frees them while a
     * copy may still read or write them (the build does not wait after
     * each upload). */
    std::vector<DNode> recs;
    std::vector<OTask> initial;
    unsigned long long used_up = 0, used = 0;
    Res r(ctx, stream);

    unsigned threads = 0, blocks = 0;
    GPK_CHECK(pool_grid(job, name, &threads, &blocks));
    const unsigned wide_min = o->grid_split ? o->grid_split : GPK_OCTREE_GRID_SPLIT;
    /* UINT_MAX: the paper's pure pool, no frontier rule either */
    const unsigned frontier_min = wide_min == UINT32_MAX ? UINT32_MAX
        : wide_min / 16u > 0                             ? wide_min / 16u
                                                         : 1u;
    GPK_CHECK(gpk__cuda_temp_alloc(ctx, (void **)&r.d_next, sizeof *r.d_next, stream,
                                   "octree (cuda pool): counter"));

    /* Records: an estimate first, then the bound. */
    size_t bound = octree_node_bound(n, t);
    if (bound > (size_t)INT32_MAX) bound = (size_t)INT32_MAX;
    size_t node_cap = 3 * (n / ((size_t)t + 1) + 1) + 1024;
    if (node_cap > bound) node_cap = bound;

    Build b;
    b.codes = (unsigned long long *)d_codes;
    b.codes_tmp = (unsigned long long *)d_codes_tmp;
    b.idx = d_idx;
    b.idx_tmp = d_idx_tmp;
    b.next_node = r.d_next;
    b.threshold = t;

    cp::Status status;
    memset(&status, 0, sizeof status);
    unsigned long long wide_tasks = 0;
    unsigned pool_cap = 0;
    bool have_used = false;
    for (int attempt = 0;; attempt++) {
        recs.clear();
        initial.clear();
        have_used = false;
        const bool root_splits = octree_splits((uint32_t)n, 0, t);
        recs.push_back(DNode{0ull, 0u, (unsigned)n, UINT32_MAX, root_splits ? 0u : 1u << 8});
        wide_tasks = 0;
        if (root_splits) {
            if (n > wide_min || (blocks > 1 && n > frontier_min)) {
                gpk_status s = split_wide(ctx, stream, r, b, n, wide_min, frontier_min, blocks, recs, initial,
                                          &wide_tasks);
                if (s != GPK_OK) return s;
            } else {
                initial.push_back(OTask{0ull, 0u, 0u, (unsigned)n, 0u});
            }
        }
        if (recs.size() > node_cap) node_cap = recs.size() + node_cap;
        if (node_cap > bound && bound >= recs.size()) node_cap = bound;
        GPK_CHECK(upload_records(ctx, stream, r, recs, node_cap, &used_up));
        if (initial.empty()) break;

        cp::Config c;
        GPK_CHECK(pool_config(job, name, blocks, threads, initial.size(), &c));
        pool_cap = c.capacity;
        b.nodes = r.d_nodes;
        b.node_cap = node_cap;
        GPK_CHECK(run_pool(ctx, stream, r, b, c, threads, initial, &status, &used, pool_ms));
        have_used = true;
        if (status.error == ERR_NODES && node_cap < bound && attempt == 0) {
            node_cap = bound; /* restart from the root with the proven bound, on fresh codes */
            gpk_status s = gpk__octree_cuda_codes(job, d_codes, d_idx);
            if (s != GPK_OK) return s;
            continue;
        }
        break;
    }
    GPK_CHECK(pool_status(job, name, status, node_cap, pool_cap));

    if (!have_used) { /* no pool run: the records are the big tasks' */
        cudaError_t e = cudaMemcpyAsync(&used, r.d_next, sizeof used, cudaMemcpyDeviceToHost, stream);
        if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
        if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "octree (cuda pool): node count read-back");
    }
    if (used == 0 || used > node_cap)
        return gpk__fail(ctx, GPK_EINVAL,
                         "octree %s (cuda): %llu nodes in an array of %zu, an internal error", name, used,
                         node_cap);
    *d_nodes = r.d_nodes;
    r.d_nodes = nullptr;
    *n_nodes = (size_t)used;
    *tasks = status.tasks + wide_tasks;
    return GPK_OK;
}
