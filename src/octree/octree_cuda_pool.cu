/* The task-pool octree builder on the GPU (Cederman & Tsigas 2008,
 * Section 5): a persistent kernel in which ONE THREAD BLOCK processes one
 * task at a time, on the device pools of gpk/pool_cuda.cuh (any of the four
 * schemes).
 *
 * STATUS: written and compiled, NOT YET RUN ON A GPU.
 *
 * A task is a node that splits: (code prefix, node index, first, count,
 * depth). The block counts its range's codes by octant (warp-aggregated
 * shared-memory counters), takes node indices for the non-empty octants
 * from one device counter, moves the codes and indices of each octant
 * together into the scratch arrays (octants in order 0..7; inside an octant
 * the order is not stable, which only changes the order of particles inside
 * a leaf) and copies them back, then thread 0 writes the children's node
 * records and pushes the children that split (octree_splits). The root task
 * is seeded by the host. The root holds all n particles and is still handled
 * by one block looping over its range: slow at the top of the tree, which
 * is the paper's design (parallelism comes from many tasks at once).
 *
 * Node records on the device are compact (prefix, first, count, parent,
 * depth, leaf); the host computes boxes with gpk__octree_node_init (so they
 * are bit-identical to the CPU builders'), rebuilds the child links from
 * the parents, and renumbers the nodes in depth-first preorder (octants
 * 0..7), so node numbering is deterministic although the device hands out
 * indices in a racy order.
 *
 * Node array: preallocated. A first attempt uses an estimate; if the tree
 * needs more nodes the kernel stops (error word) and the build restarts
 * from the root with the proven bound of octree_pool.c. Restarting is
 * valid: a task partitions its range completely or not at all (the check
 * comes before the partition), so the codes and indices are always a
 * permutation that keeps every code with its index. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/cuda_internal.h"
#include "gpk/pool_cuda.cuh"
#include "octree_cuda_internal.h"

namespace cp = gpk::cuda_pool;

namespace {

struct OTask {
    unsigned long long prefix;
    unsigned node, first, count, depth;
};

/* A node as the device writes it (24 bytes). */
struct DNode {
    unsigned long long prefix;
    unsigned first, count;
    unsigned parent;     /* UINT32_MAX for the root */
    unsigned depth_leaf; /* depth | leaf << 8 */
};

struct Build {
    unsigned long long *codes, *codes_tmp;
    unsigned *idx, *idx_tmp;
    DNode *nodes;
    unsigned long long *next_node;
    unsigned long long node_cap;
    unsigned threshold;
};

constexpr unsigned ERR_NODES = cp::ERR_USER + 1; /* node array full (info: nodes wanted) */

__global__ void __launch_bounds__(1024, 1) split_kernel(cp::Pool<OTask> pool, Build b)
{
    __shared__ cp::Worker ws;
    __shared__ OTask task;
    __shared__ unsigned cnt[8], at[8];
    __shared__ unsigned long long s_base;
    __shared__ int s_ok;
    pool.block_begin(ws);
    const unsigned lane = threadIdx.x & 31u;
    while (pool.block_next(ws, &task)) {
        const OTask t = task;
        const unsigned shift = 3u * (OCTREE_QBITS - 1u - t.depth);
        const unsigned long long first = t.first, stop = first + t.count;
        if (threadIdx.x < 8) cnt[threadIdx.x] = 0;
        __syncthreads();
        /* Count. blockDim.x is a multiple of 32 and every warp runs the same
         * number of iterations, so the full-mask warp intrinsics are safe. */
        for (unsigned long long base = first; base < stop; base += blockDim.x) {
            const unsigned long long i = base + threadIdx.x;
            const bool v = i < stop;
            const unsigned oct = v ? (unsigned)(b.codes[i] >> shift) & 7u : 8u;
            const unsigned peers = __match_any_sync(0xffffffffu, oct);
            if (v && lane == (unsigned)__ffs(peers) - 1u) atomicAdd(&cnt[oct], (unsigned)__popc(peers));
        }
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
        /* Partition into the scratch arrays, octants in order. */
        for (unsigned long long base = first; base < stop; base += blockDim.x) {
            const unsigned long long i = base + threadIdx.x;
            const bool v = i < stop;
            unsigned long long code = 0;
            unsigned id = 0;
            if (v) {
                code = b.codes[i];
                id = b.idx[i];
            }
            const unsigned oct = v ? (unsigned)(code >> shift) & 7u : 8u;
            const unsigned peers = __match_any_sync(0xffffffffu, oct);
            const unsigned leader = (unsigned)__ffs(peers) - 1u;
            unsigned pos = 0;
            if (v && lane == leader) pos = atomicAdd(&at[oct], (unsigned)__popc(peers));
            pos = __shfl_sync(0xffffffffu, pos, (int)leader);
            if (v) {
                const unsigned dst = pos + (unsigned)__popc(peers & ((1u << lane) - 1u));
                b.codes_tmp[dst] = code;
                b.idx_tmp[dst] = id;
            }
        }
        __syncthreads(); /* the block's scratch writes, visible to the block */
        for (unsigned long long i = first + threadIdx.x; i < stop; i += blockDim.x) {
            b.codes[i] = b.codes_tmp[i];
            b.idx[i] = b.idx_tmp[i];
        }
        /* every thread's moves are published before thread 0 pushes the
         * children, whose blocks will read these ranges */
        cp::block_release();
        if (threadIdx.x == 0) {
            unsigned long long child = s_base;
            unsigned start = t.first;
            const unsigned d = t.depth + 1;
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
                b.nodes[child] = nd; /* read by the host only, after the kernel */
                if (splits) {
                    OTask sub;
                    sub.prefix = prefix;
                    sub.node = (unsigned)child;
                    sub.first = start;
                    sub.count = c;
                    sub.depth = d;
                    if (!pool.push(ws, sub)) break; /* full: the error word stops the run */
                }
                start += c;
                child++;
            }
        }
    }
}

/* Inner nodes have more than t particles and the nodes of one depth are
 * disjoint: at most n / (t + 1) inner nodes per depth 0..20; leaves are
 * non-empty and disjoint: at most n (octree_pool.c's bound). */
size_t node_bound(size_t n, unsigned t)
{
    const size_t inner = (size_t)GPK_OCTREE_MAX_DEPTH * (n / ((size_t)t + 1));
    const size_t leaves = n < 7 * inner + 1 ? n : 7 * inner + 1;
    return inner + leaves + 1;
}

struct Res {
    void *pool_mem = nullptr;
    DNode *d_nodes = nullptr;
    unsigned long long *d_next = nullptr;
    DNode *h_raw = nullptr;
    int32_t *kids = nullptr;
    uint32_t *order = nullptr, *stack = nullptr;
    gpk_octree_node *nodes = nullptr;
    uint32_t *perm = nullptr;
    ~Res()
    {
        /* errors while freeing are ignored: the build's status is already decided */
        if (pool_mem) cudaFree(pool_mem);
        if (d_nodes) cudaFree(d_nodes);
        if (d_next) cudaFree(d_next);
        free(h_raw);
        free(kids);
        free(order);
        free(stack);
        free(nodes);
        free(perm);
    }
};

} // namespace

extern "C" gpk_status gpk__octree_build_cuda_pool(const octree_job *job, uint64_t *d_codes, uint32_t *d_idx,
                                                  uint64_t *d_codes_tmp, uint32_t *d_idx_tmp, gpk_octree *tree)
{
    gpk_ctx *ctx = job->ctx;
    gpk_cuda_state *st = (gpk_cuda_state *)ctx->cuda;
    cudaStream_t stream = st->stream;
    const size_t n = job->n;
    const unsigned t = job->leaf_threshold;
    const char *name = gpk_octree_scheme_name(job->scheme);
    const gpk_octree_opts *o = job->opts;
    Res r;
    cudaError_t e;

    if ((int)job->scheme < GPK_OCTREE_STATIC || (int)job->scheme > GPK_OCTREE_STEAL)
        return gpk__fail(ctx, GPK_EINVAL, "octree (cuda pool): scheme %d is not a pool scheme", (int)job->scheme);
    if (n > (size_t)UINT32_MAX)
        return gpk__fail(ctx, GPK_EINVAL, "octree %s (cuda): %zu particles, at most %u", name, n, UINT32_MAX);
    const unsigned threads = o->threads ? o->threads : 64u;
    if (threads % 32u != 0 || threads > 1024u)
        return gpk__fail(ctx, GPK_EINVAL,
                         "octree %s (cuda): %u threads per block; use a multiple of 32 up to 1024 (0: 64)", name,
                         threads);

    r.perm = (uint32_t *)malloc(n * sizeof *r.perm);
    if (!r.perm) return gpk__fail(ctx, GPK_ENOMEM, "octree %s (cuda): out of memory for %zu indices", name, n);

    if (!octree_splits((uint32_t)n, 0, t)) {
        /* one leaf: no task runs */
        r.nodes = (gpk_octree_node *)malloc(sizeof *r.nodes);
        if (!r.nodes) return gpk__fail(ctx, GPK_ENOMEM, "octree %s (cuda): out of memory", name);
        gpk__octree_node_init(r.nodes, &job->root, 0, 0, 0, (uint32_t)n, 1);
        e = cudaMemcpyAsync(r.perm, d_idx, n * sizeof *r.perm, cudaMemcpyDeviceToHost, stream);
        if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
        if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "octree (cuda pool): index read-back");
        tree->nodes = r.nodes;
        tree->n_nodes = 1;
        tree->perm = r.perm;
        tree->tasks = 0;
        r.nodes = nullptr;
        r.perm = nullptr;
        return GPK_OK;
    }

    /* The grid: every block resident at once (the pools spin). */
    int resident = 0;
    e = cp::max_resident_blocks(split_kernel, (int)threads, 0, &resident);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "octree (cuda pool): occupancy query");
    if (resident <= 0)
        return gpk__fail(ctx, GPK_EINVAL, "octree %s (cuda): no block of %u threads fits on the device", name,
                         threads);
    const unsigned blocks = o->blocks ? o->blocks : (unsigned)resident;
    if (blocks > (unsigned)resident)
        return gpk__fail(ctx, GPK_EINVAL,
                         "octree %s (cuda): %u blocks requested, but only %d blocks of %u threads are resident at "
                         "once; the persistent kernel spins on its pool, so every block must be resident (0: %d)",
                         name, blocks, resident, threads, resident);

    /* The pool. Default capacities: queues and the static list hold disjoint
     * inner nodes, at most n / (t + 1); a deque holds at most 7 unexplored
     * siblings per level of its owner's depth-first descent (21 levels)
     * plus one task's 8 children: 256. A given capacity is used as is. */
    cp::Config c;
    c.scheme = (cp::Scheme)job->scheme;
    c.blocks = blocks;
    c.holders = blocks * threads;
    c.victim = o->pool.victim == GPK_POOL_VICTIM_RANDOM ? cp::RANDOM : cp::ROUND_ROBIN;
    c.seed = o->pool.seed;
    size_t cap = o->pool.capacity;
    if (cap == 0) {
        if (c.scheme == cp::STEAL) {
            cap = 256;
        } else {
            cap = n / ((size_t)t + 1) + 1;
            if (cap < 64) cap = 64;
            if (cap > ((size_t)1 << 30)) cap = (size_t)1 << 30;
        }
    }
    if (cap > ((size_t)1 << 30))
        return gpk__fail(ctx, GPK_EINVAL, "octree %s (cuda): pool capacity %zu above 2^30", name, cap);
    if ((unsigned long long)c.holders + cap > 0xFFFFFFFEull)
        return gpk__fail(ctx, GPK_EINVAL, "octree %s (cuda): pool capacity %zu too large for %u threads", name, cap,
                         c.holders);
    c.capacity = (unsigned)cap;
    e = cudaMalloc(&r.pool_mem, cp::bytes_needed<OTask>(c));
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "octree (cuda pool): pool allocation");
    const cp::Pool<OTask> pool = cp::make_pool<OTask>(c, r.pool_mem);
    e = cudaMalloc(&r.d_next, sizeof *r.d_next);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "octree (cuda pool): counter allocation");

    /* Nodes: an estimate first, then the bound. */
    size_t bound = node_bound(n, t);
    if (bound > (size_t)INT32_MAX) bound = (size_t)INT32_MAX;
    size_t node_cap = 16 * (n / ((size_t)t + 1) + 1) + 1024;
    if (node_cap > bound) node_cap = bound;

    cp::Status status;
    for (int attempt = 0;; attempt++) {
        if (r.d_nodes) {
            e = cudaFree(r.d_nodes);
            r.d_nodes = nullptr;
            if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "octree (cuda pool): node array free");
        }
        e = cudaMalloc(&r.d_nodes, node_cap * sizeof(DNode));
        if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "octree (cuda pool): node array allocation");
        const DNode root = {0ull, 0u, (unsigned)n, UINT32_MAX, 0u};
        const unsigned long long one = 1;
        const OTask first_task = {0ull, 0u, 0u, (unsigned)n, 0u};
        e = cudaMemcpyAsync(r.d_nodes, &root, sizeof root, cudaMemcpyHostToDevice, stream);
        if (e == cudaSuccess) e = cudaMemcpyAsync(r.d_next, &one, sizeof one, cudaMemcpyHostToDevice, stream);
        if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "octree (cuda pool): root upload");
        e = cp::init(pool, &first_task, 1, stream);
        if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "octree (cuda pool): pool init");
        Build b;
        b.codes = (unsigned long long *)d_codes;
        b.codes_tmp = (unsigned long long *)d_codes_tmp;
        b.idx = d_idx;
        b.idx_tmp = d_idx_tmp;
        b.nodes = r.d_nodes;
        b.next_node = r.d_next;
        b.node_cap = node_cap;
        b.threshold = t;
        split_kernel<<<blocks, threads, 0, stream>>>(pool, b);
        e = cudaGetLastError();
        if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "octree (cuda pool): kernel launch");
        e = cp::read_status(pool, &status, stream); /* synchronizes: kernel faults show here */
        if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "octree (cuda pool): kernel");
        if (status.error == ERR_NODES && node_cap < bound && attempt == 0) {
            node_cap = bound; /* restart from the root with the proven bound */
            continue;
        }
        break;
    }
    if (status.error == cp::ERR_FULL)
        return gpk__fail(ctx, GPK_EFULL,
                         "octree %s (cuda): pool full: %s holds %u tasks (opts.pool.capacity); give a larger "
                         "capacity or 0 for the default",
                         name, c.scheme == cp::STEAL ? "a block's work-stealing deque" : "the pool", c.capacity);
    if (status.error == ERR_NODES) {
        if (node_cap >= (size_t)INT32_MAX)
            return gpk__fail(ctx, GPK_ENOMEM, "octree %s (cuda): more nodes (%llu) than int32 child links can name",
                             name, status.info);
        return gpk__fail(ctx, GPK_EINVAL, "octree %s (cuda): node count %llu above its proven bound %zu, an internal error",
                         name, status.info, node_cap);
    }
    if (status.error != cp::ERR_NONE)
        return gpk__fail(ctx, GPK_EINVAL, "octree %s (cuda): device pool error %u (%s), info %llu, an internal error",
                         name, status.error, cp::error_string(status.error), status.info);

    /* Download the nodes and the permutation. */
    unsigned long long n_nodes = 0;
    e = cudaMemcpyAsync(&n_nodes, r.d_next, sizeof n_nodes, cudaMemcpyDeviceToHost, stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "octree (cuda pool): node count read-back");
    if (n_nodes == 0 || n_nodes > node_cap)
        return gpk__fail(ctx, GPK_EINVAL, "octree %s (cuda): %llu nodes in an array of %zu, an internal error", name,
                         n_nodes, node_cap);
    r.h_raw = (DNode *)malloc(n_nodes * sizeof *r.h_raw);
    r.kids = (int32_t *)malloc(n_nodes * 8 * sizeof *r.kids);
    r.order = (uint32_t *)malloc(n_nodes * sizeof *r.order);
    r.stack = (uint32_t *)malloc(n_nodes * sizeof *r.stack);
    r.nodes = (gpk_octree_node *)malloc(n_nodes * sizeof *r.nodes);
    if (!r.h_raw || !r.kids || !r.order || !r.stack || !r.nodes)
        return gpk__fail(ctx, GPK_ENOMEM, "octree %s (cuda): out of memory for %llu nodes", name, n_nodes);
    e = cudaMemcpyAsync(r.h_raw, r.d_nodes, n_nodes * sizeof(DNode), cudaMemcpyDeviceToHost, stream);
    if (e == cudaSuccess) e = cudaMemcpyAsync(r.perm, d_idx, n * sizeof *r.perm, cudaMemcpyDeviceToHost, stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "octree (cuda pool): node read-back");

    /* Child links from the parents (raw numbering). */
    for (size_t i = 0; i < n_nodes * 8; i++) r.kids[i] = -1;
    for (unsigned long long i = 1; i < n_nodes; i++) {
        const DNode &d = r.h_raw[i];
        const unsigned depth = d.depth_leaf & 0xFFu;
        if (d.parent >= n_nodes || depth == 0 || depth > GPK_OCTREE_MAX_DEPTH)
            return gpk__fail(ctx, GPK_EINVAL, "octree %s (cuda): node %llu is malformed, an internal error", name, i);
        const unsigned oct = octree_octant(d.prefix, depth - 1);
        r.kids[(size_t)d.parent * 8 + oct] = (int32_t)i;
    }
    /* Depth-first preorder, octants 0..7: a deterministic numbering. */
    size_t top = 0, next = 0;
    r.stack[top++] = 0;
    while (top > 0) {
        const uint32_t v = r.stack[--top];
        if (next >= n_nodes)
            return gpk__fail(ctx, GPK_EINVAL, "octree %s (cuda): node links form no tree, an internal error", name);
        r.order[v] = (uint32_t)next++;
        for (int oc = 7; oc >= 0; oc--) {
            const int32_t k = r.kids[(size_t)v * 8 + oc];
            if (k >= 0) {
                if (top >= n_nodes)
                    return gpk__fail(ctx, GPK_EINVAL, "octree %s (cuda): node links form no tree, an internal error",
                                     name);
                r.stack[top++] = (uint32_t)k;
            }
        }
    }
    if (next != n_nodes)
        return gpk__fail(ctx, GPK_EINVAL, "octree %s (cuda): %zu of %llu nodes reachable, an internal error", name,
                         next, n_nodes);
    for (unsigned long long i = 0; i < n_nodes; i++) {
        const DNode &d = r.h_raw[i];
        gpk_octree_node *out = &r.nodes[r.order[i]];
        gpk__octree_node_init(out, &job->root, d.prefix, d.depth_leaf & 0xFFu, d.first, d.count,
                              (d.depth_leaf >> 8) & 1u);
        for (int oc = 0; oc < 8; oc++) {
            const int32_t k = r.kids[(size_t)i * 8 + oc];
            out->child[oc] = k >= 0 ? (int32_t)r.order[k] : -1;
        }
    }

    tree->nodes = r.nodes;
    tree->n_nodes = (size_t)n_nodes;
    tree->perm = r.perm;
    tree->tasks = status.tasks;
    r.nodes = nullptr;
    r.perm = nullptr;
    return GPK_OK;
}
