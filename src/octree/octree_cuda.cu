/* The CUDA octree builders' common part and the CUDA Morton builder
 * (octree_cuda_internal.h). Built only with -DGPK_WITH_CUDA_OCTREE=ON.
 *
 * Every scheme: the particles are uploaded, the Morton codes computed on
 * the device bit-identical to gpk__octree_codes (the same double
 * operations in the same order, written with the _rn intrinsics so that
 * nothing is fused; the same clamping), with the indices 0..n-1. At the
 * end the particles are gathered into tree order on the device and
 * downloaded with the permutation.
 *
 * Morton: the (code, index) pairs are sorted with gpk_cuda_sort_pairs,
 * then the nodes are built level by level (depth 0..21) on the device:
 * one thread per (splitting node, octant) finds the child's range by two
 * binary searches on the sorted codes, takes a node slot with an atomic
 * counter and, if the child splits, a place in the next level's list.
 * The host reads two counters per level. The node records (prefix, range,
 * parent, octant) are downloaded and the host numbers them depth-first
 * exactly as the CPU Morton builder does (octree_morton.c), with boxes
 * from gpk__octree_node_init: the same node array as the CPU's.
 *
 * Pool schemes: the codes and indices go to gpk__octree_build_cuda_pool
 * (octree_cuda_pool.cu). */
#include "octree_cuda_internal.h"
#include "../core/cuda_internal.h"
#include "gpk/cuda.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <thread>
#include <vector>

namespace {

const unsigned kThreads = 256;

/* One node found on the device. meta = octant | depth << 3 (root: 0). */
struct NodeRec {
    unsigned long long prefix;
    unsigned first, count;
    unsigned parent; /* slot of the parent; UINT32_MAX for the root */
    unsigned meta;
};

struct DeviceGuard {
    int previous = -1;
    bool changed = false;
    cudaError_t enter(int device)
    {
        cudaError_t e = cudaGetDevice(&previous);
        if (e != cudaSuccess) return e;
        if (previous != device) {
            changed = true;
            return cudaSetDevice(device);
        }
        return cudaSuccess;
    }
    ~DeviceGuard()
    {
        if (changed) (void)cudaSetDevice(previous);
    }
};

unsigned grid_for(size_t work)
{
    size_t b = (work + kThreads - 1) / kThreads;
    if (b < 1) b = 1;
    if (b > (1u << 20)) b = 1u << 20; /* the kernels loop (grid-stride) */
    return (unsigned)b;
}

/* ---- Morton codes (bit-identical to octree.c) ---------------------------- */

/* quantize() of octree.c: t = ((double)x - lo) / side * 2^21, each
 * operation rounded on its own. */
__device__ __forceinline__ unsigned quantize_d(float x, double lo, double side)
{
    const double t = __dmul_rn(__ddiv_rn(__dsub_rn((double)x, lo), side), (double)OCTREE_QCELLS);
    if (!(t > 0.0)) return 0u;
    if (t >= (double)(OCTREE_QCELLS - 1u)) return OCTREE_QCELLS - 1u;
    return (unsigned)t;
}

__global__ void codes_kernel(const float *__restrict__ xyz, size_t n, double lx, double ly, double lz,
                             double side, uint64_t *__restrict__ codes, unsigned *__restrict__ idx)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const float *p = xyz + 3 * i;
        const unsigned long long qx = quantize_d(p[0], lx, side);
        const unsigned long long qy = quantize_d(p[1], ly, side);
        const unsigned long long qz = quantize_d(p[2], lz, side);
        codes[i] = octree_spread3(qx) << 2 | octree_spread3(qy) << 1 | octree_spread3(qz);
        idx[i] = (unsigned)i;
    }
}

__global__ void gather_kernel(const float *__restrict__ xyz, const unsigned *__restrict__ idx, size_t n,
                              float *__restrict__ out)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const float *src = xyz + 3 * (size_t)idx[i];
        float *dst = out + 3 * i;
        dst[0] = src[0];
        dst[1] = src[1];
        dst[2] = src[2];
    }
}

/* ---- Morton nodes, one level per launch -------------------------------------- */

/* First index in [lo, hi) whose octant (bits shift+2..shift) is >= octant;
 * the octants in the range are non-decreasing. */
__device__ __forceinline__ unsigned octant_lower(const uint64_t *__restrict__ codes, unsigned lo,
                                                 unsigned hi, unsigned shift, unsigned octant)
{
    while (lo < hi) {
        const unsigned mid = lo + (hi - lo) / 2;
        if (((unsigned)(codes[mid] >> shift) & 7u) < octant) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* counters[0]: nodes so far (slots), counters[1]: entries of next_split.
 * split: the n_split slots of the nodes at `depth` that split. */
__global__ void level_kernel(const uint64_t *__restrict__ codes, NodeRec *nodes,
                             const unsigned *__restrict__ split, unsigned n_split, unsigned depth,
                             unsigned leaf_threshold, unsigned *counters, unsigned *__restrict__ next_split)
{
    const size_t work = (size_t)n_split * 8u;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    const unsigned shift = 3u * (OCTREE_QBITS - 1u - depth);
    for (size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x; t < work; t += stride) {
        const unsigned slot = split[t >> 3];
        const unsigned o = (unsigned)(t & 7u);
        const unsigned first = nodes[slot].first;
        const unsigned stop = first + nodes[slot].count;
        const unsigned b = octant_lower(codes, first, stop, shift, o);
        const unsigned e = o == 7u ? stop : octant_lower(codes, b, stop, shift, o + 1u);
        if (e <= b) continue;
        const unsigned count = e - b;
        const unsigned c = atomicAdd(&counters[0], 1u);
        NodeRec r;
        r.prefix = codes[b] >> shift << shift;
        r.first = b;
        r.count = count;
        r.parent = slot;
        r.meta = o | (depth + 1u) << 3;
        nodes[c] = r;
        if (count > leaf_threshold && depth + 1u < (unsigned)GPK_OCTREE_MAX_DEPTH) {
            const unsigned k = atomicAdd(&counters[1], 1u);
            next_split[k] = c;
        }
    }
}

/* ---- host side --------------------------------------------------------------- */

struct Buffers {
    float *xyz = nullptr, *xyz_out = nullptr;
    uint64_t *codes = nullptr, *codes_tmp = nullptr;
    unsigned *idx = nullptr, *idx_tmp = nullptr;
    void *sort_temp = nullptr;
    NodeRec *nodes = nullptr;
    unsigned *split_a = nullptr, *split_b = nullptr, *counters = nullptr;
};

void free_buffers(Buffers &b, cudaStream_t stream)
{
    (void)cudaStreamSynchronize(stream); /* nothing may still use them */
    void *all[] = {b.xyz, b.xyz_out, b.codes, b.codes_tmp, b.idx, b.idx_tmp,
                   b.sort_temp, b.nodes, b.split_a, b.split_b, b.counters};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i]) (void)cudaFree(all[i]);
    (void)cudaGetLastError();
    b = Buffers();
}

gpk_status dmalloc(gpk_ctx *ctx, void **p, size_t bytes, const char *what)
{
    cudaError_t e = cudaMalloc(p, bytes ? bytes : 1);
    if (e != cudaSuccess) {
        *p = nullptr;
        return gpk__cuda_fail(ctx, e, what);
    }
    return GPK_OK;
}

gpk_status check_launch(gpk_ctx *ctx, const char *what)
{
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, what);
    return GPK_OK;
}

/* Makes the node array hold at least `need` records (keeps the first `used`). */
gpk_status grow_nodes(gpk_ctx *ctx, Buffers &b, size_t *cap, size_t used, size_t need, cudaStream_t stream)
{
    if (need <= *cap) return GPK_OK;
    if (need > (size_t)INT32_MAX)
        return gpk__fail(ctx, GPK_ENOMEM, "octree cuda morton: more than 2^31 - 1 nodes do not fit int32 links");
    size_t c = *cap * 2;
    if (c < need) c = need;
    if (c > (size_t)INT32_MAX) c = (size_t)INT32_MAX;
    NodeRec *p = nullptr;
    gpk_status s = dmalloc(ctx, (void **)&p, c * sizeof(NodeRec), "octree cuda morton: cudaMalloc (nodes)");
    if (s != GPK_OK) return s;
    cudaError_t e = cudaSuccess;
    if (used) e = cudaMemcpyAsync(p, b.nodes, used * sizeof(NodeRec), cudaMemcpyDeviceToDevice, stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) {
        (void)cudaFree(p);
        return gpk__cuda_fail(ctx, e, "octree cuda morton: growing the node array");
    }
    (void)cudaFree(b.nodes);
    b.nodes = p;
    *cap = c;
    return GPK_OK;
}

/* The device half of the Morton builder: sorted codes in b.codes_tmp, the
 * records of all nodes downloaded into *recs (*n_recs of them). */
gpk_status morton_device(const octree_job *job, Buffers &b, cudaStream_t stream, NodeRec **recs, size_t *n_recs)
{
    gpk_ctx *ctx = job->ctx;
    const size_t n = job->n;
    const unsigned t = job->leaf_threshold;
    cudaError_t e;

    /* sort (code, index) pairs: codes -> codes_tmp, idx -> idx_tmp */
    gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
    o.key_bits = 3u * OCTREE_QBITS;
    size_t temp_bytes = 0;
    gpk_status s = gpk_cuda_sort_pairs(ctx, nullptr, &temp_bytes, GPK_U64, b.codes, b.codes_tmp, 4, b.idx,
                                       b.idx_tmp, n, &o, GPK_CUDA_DETECT_BITS, stream);
    if (s == GPK_OK) s = dmalloc(ctx, &b.sort_temp, temp_bytes, "octree cuda morton: cudaMalloc (sort temp)");
    if (s == GPK_OK)
        s = gpk_cuda_sort_pairs(ctx, b.sort_temp, &temp_bytes, GPK_U64, b.codes, b.codes_tmp, 4, b.idx,
                                b.idx_tmp, n, &o, GPK_CUDA_DETECT_BITS, stream);
    if (s != GPK_OK) {
        char msg[GPK_ERRLEN];
        memcpy(msg, ctx->err, sizeof msg);
        msg[GPK_ERRLEN - 1] = '\0';
        return gpk__fail(ctx, s, "octree cuda morton: sorting the Morton codes: %s", msg);
    }

    /* level lists: at most n / 2 nodes of one level split (each holds >= 2 particles) */
    const size_t split_cap = n / 2 + 1;
    s = dmalloc(ctx, (void **)&b.split_a, split_cap * sizeof(unsigned), "octree cuda morton: cudaMalloc (levels)");
    if (s == GPK_OK)
        s = dmalloc(ctx, (void **)&b.split_b, split_cap * sizeof(unsigned), "octree cuda morton: cudaMalloc (levels)");
    if (s == GPK_OK)
        s = dmalloc(ctx, (void **)&b.counters, 2 * sizeof(unsigned), "octree cuda morton: cudaMalloc (counters)");
    if (s != GPK_OK) return s;
    size_t cap = 0;
    s = grow_nodes(ctx, b, &cap, 0, 2 * (n / t) + 1024 < n ? 2 * (n / t) + 1024 : n + 1, stream);
    if (s != GPK_OK) return s;

    NodeRec root;
    root.prefix = 0;
    root.first = 0;
    root.count = (unsigned)n;
    root.parent = UINT32_MAX;
    root.meta = 0;
    unsigned host_counters[2] = {1u, 0u};
    const unsigned zero = 0u;
    e = cudaMemcpyAsync(b.nodes, &root, sizeof root, cudaMemcpyHostToDevice, stream);
    if (e == cudaSuccess) e = cudaMemcpyAsync(b.split_a, &zero, sizeof zero, cudaMemcpyHostToDevice, stream);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(b.counters, host_counters, sizeof host_counters, cudaMemcpyHostToDevice, stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream); /* the sources are on the stack */
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "octree cuda morton: setting up the root");

    size_t used = 1;
    size_t n_split = octree_splits((uint32_t)n, 0, t) ? 1 : 0;
    unsigned *cur = b.split_a, *next = b.split_b;
    for (unsigned depth = 0; n_split > 0 && depth < GPK_OCTREE_MAX_DEPTH; depth++) {
        /* the children of one level partition at most n particles */
        const size_t most = 8 * n_split < n ? 8 * n_split : n;
        s = grow_nodes(ctx, b, &cap, used, used + most, stream);
        if (s != GPK_OK) return s;
        e = cudaMemsetAsync(b.counters + 1, 0, sizeof(unsigned), stream);
        if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "octree cuda morton: cudaMemsetAsync");
        level_kernel<<<grid_for(8 * n_split), kThreads, 0, stream>>>(b.codes_tmp, b.nodes, cur, (unsigned)n_split,
                                                                     depth, t, b.counters, next);
        s = check_launch(ctx, "octree cuda morton: level kernel launch");
        if (s != GPK_OK) return s;
        e = cudaMemcpyAsync(host_counters, b.counters, sizeof host_counters, cudaMemcpyDeviceToHost, stream);
        if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
        if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "octree cuda morton: level kernel");
        if (host_counters[0] < used || host_counters[0] > used + most || host_counters[1] > split_cap)
            return gpk__fail(ctx, GPK_EDEVICE, "octree cuda morton: internal error at depth %u (%u nodes, %u to split)",
                             depth, host_counters[0], host_counters[1]);
        used = host_counters[0];
        n_split = host_counters[1];
        unsigned *tmp = cur;
        cur = next;
        next = tmp;
    }

    NodeRec *h = (NodeRec *)malloc(used * sizeof(NodeRec));
    if (!h) return gpk__fail(ctx, GPK_ENOMEM, "octree cuda morton: out of memory for %zu nodes", used);
    e = cudaMemcpyAsync(h, b.nodes, used * sizeof(NodeRec), cudaMemcpyDeviceToHost, stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) {
        free(h);
        return gpk__cuda_fail(ctx, e, "octree cuda morton: downloading the nodes");
    }
    *recs = h;
    *n_recs = used;
    return GPK_OK;
}

/* Fills out[index[slot]] for the slots [lo, hi): box, range, leaf flag,
 * child links. Returns 0, or 1 if a node's children disagree with its leaf
 * flag. */
int fill_nodes(const octree_job *job, const NodeRec *recs, const int32_t *kids, const size_t *index, size_t lo,
               size_t hi, gpk_octree_node *out)
{
    int bad = 0;
    for (size_t slot = lo; slot < hi; slot++) {
        const NodeRec &r = recs[slot];
        const unsigned d = r.meta >> 3;
        const int splits = octree_splits(r.count, d, job->leaf_threshold);
        gpk_octree_node *nd = &out[index[slot]];
        gpk__octree_node_init(nd, &job->root, r.prefix, d, r.first, r.count, !splits);
        int has = 0;
        for (unsigned o = 0; o < 8; o++) {
            const int32_t cs = kids[slot * 8 + o];
            if (cs >= 0) {
                nd->child[o] = (int32_t)index[cs];
                has = 1;
            }
        }
        if (has != splits) bad = 1;
    }
    return bad;
}

/* Numbers the device's nodes depth-first as octree_morton.c's build_nodes
 * does (children of a node consecutive, in octant order; the splitting
 * children visited octant 0 first), then fills tree->nodes (on the
 * context's threads). */
gpk_status morton_host_nodes(const octree_job *job, const NodeRec *recs, size_t m, gpk_octree *tree)
{
    gpk_ctx *ctx = job->ctx;
    const unsigned t = job->leaf_threshold;
    int32_t *kids = (int32_t *)malloc(m * 8 * sizeof(int32_t)); /* device slot per (slot, octant) */
    gpk_octree_node *out = (gpk_octree_node *)malloc(m * sizeof(gpk_octree_node));
    size_t *index = (size_t *)malloc(m * sizeof(size_t)); /* slot -> final index */
    gpk_status s = GPK_OK;
    int bad = 0;
    if (!kids || !out || !index) {
        s = gpk__fail(ctx, GPK_ENOMEM, "octree cuda morton: out of memory for %zu nodes", m);
        goto done;
    }
    for (size_t i = 0; i < m * 8; i++) kids[i] = -1;
    for (size_t i = 0; i < m; i++) index[i] = SIZE_MAX;
    if (m < 1 || recs[0].parent != UINT32_MAX || recs[0].count != (unsigned)job->n || recs[0].meta != 0) {
        s = gpk__fail(ctx, GPK_EDEVICE, "octree cuda morton: internal error (root record)");
        goto done;
    }
    for (size_t i = 1; i < m; i++) {
        const NodeRec &r = recs[i];
        const unsigned o = r.meta & 7u, d = r.meta >> 3;
        if (r.parent >= m || d != (recs[r.parent].meta >> 3) + 1u || d > GPK_OCTREE_MAX_DEPTH ||
            kids[(size_t)r.parent * 8 + o] != -1) {
            s = gpk__fail(ctx, GPK_EDEVICE, "octree cuda morton: internal error (node record %zu)", i);
            goto done;
        }
        kids[(size_t)r.parent * 8 + o] = (int32_t)i;
    }
    {
        /* pass 1: the numbering, sequential (as the CPU builder's stack) */
        enum { STACK_MAX = 8 * GPK_OCTREE_MAX_DEPTH + 1 };
        size_t stack[STACK_MAX]; /* device slots */
        size_t top = 0, len = 1;
        index[0] = 0;
        if (octree_splits(recs[0].count, 0, t)) stack[top++] = 0;
        while (top > 0) {
            const size_t slot = stack[--top];
            const unsigned d = recs[slot].meta >> 3;
            const size_t pushed_from = top;
            for (unsigned o = 0; o < 8; o++) {
                const int32_t cs = kids[slot * 8 + o];
                if (cs < 0) continue;
                if (len >= m) {
                    s = gpk__fail(ctx, GPK_EDEVICE, "octree cuda morton: internal error (node count)");
                    goto done;
                }
                index[cs] = len++;
                if (octree_splits(recs[cs].count, d + 1, t)) {
                    if (top >= STACK_MAX) {
                        s = gpk__fail(ctx, GPK_EINVAL, "octree cuda morton: internal stack overflow");
                        goto done;
                    }
                    stack[top++] = (size_t)cs;
                }
            }
            for (size_t a = pushed_from, bb = top; a + 1 < bb; a++, bb--) {
                const size_t tmp = stack[a];
                stack[a] = stack[bb - 1];
                stack[bb - 1] = tmp;
            }
        }
        if (len != m) {
            s = gpk__fail(ctx, GPK_EDEVICE, "octree cuda morton: internal error (%zu of %zu nodes reached)", len, m);
            goto done;
        }
    }
    {
        /* pass 2: boxes and links, on up to ctx->threads host threads */
        size_t workers = ctx->threads > 1 ? (size_t)ctx->threads : 1;
        if (workers > 64) workers = 64;
        if (m < 65536) workers = 1;
        std::vector<std::thread> pool;
        int flags[64] = {0};
        const size_t chunk = (m + workers - 1) / workers;
        size_t started = 1; /* worker 0 runs on this thread */
        try {
            pool.reserve(workers);
            for (; started < workers; started++) {
                const size_t lo = started * chunk < m ? started * chunk : m;
                const size_t hi = lo + chunk < m ? lo + chunk : m;
                int *flag = &flags[started];
                pool.emplace_back([=] { *flag = fill_nodes(job, recs, kids, index, lo, hi, out); });
            }
        } catch (...) {
            /* no more threads: this thread fills the rest */
        }
        const size_t rest = started * chunk < m ? started * chunk : m;
        bad = fill_nodes(job, recs, kids, index, 0, chunk < m ? chunk : m, out); /* worker 0's share */
        for (std::thread &th : pool) th.join();
        /* the slots of the workers never started */
        if (rest < m) bad |= fill_nodes(job, recs, kids, index, rest, m, out);
        for (size_t w = 0; w < workers; w++) bad |= flags[w];
    }
    if (bad) {
        s = gpk__fail(ctx, GPK_EDEVICE, "octree cuda morton: internal error (a node's children and leaf flag disagree)");
        goto done;
    }
    tree->nodes = out;
    tree->n_nodes = m;
    tree->tasks = m;
    out = nullptr;
done:
    free(kids);
    free(out);
    free(index);
    return s;
}

} // namespace

extern "C" gpk_status gpk__octree_build_cuda(const octree_job *job, gpk_octree *tree)
{
    gpk_ctx *ctx = job->ctx;
    const size_t n = job->n;
    if (ctx->backend != GPK_BACKEND_CUDA || !ctx->cuda)
        return gpk__fail(ctx, GPK_EINVAL, "octree cuda: ctx is not a CUDA context");
    gpk_cuda_state *st = (gpk_cuda_state *)ctx->cuda;
    cudaStream_t stream = st->stream;
    DeviceGuard guard;
    cudaError_t e = guard.enter(ctx->device);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "octree cuda: cudaSetDevice");

    Buffers b;
    NodeRec *recs = nullptr;
    size_t n_recs = 0;
    gpk_status s = GPK_OK;
    GPK_CHECK_GOTO(dmalloc(ctx, (void **)&b.xyz, 3 * n * sizeof(float), "octree cuda: cudaMalloc (particles)"), s, fail);
    GPK_CHECK_GOTO(dmalloc(ctx, (void **)&b.codes, n * sizeof(uint64_t), "octree cuda: cudaMalloc (codes)"),
                   s, fail);
    GPK_CHECK_GOTO(
        dmalloc(ctx, (void **)&b.codes_tmp, n * sizeof(uint64_t), "octree cuda: cudaMalloc (codes)"), s, fail);
    GPK_CHECK_GOTO(dmalloc(ctx, (void **)&b.idx, n * sizeof(unsigned), "octree cuda: cudaMalloc (indices)"), s, fail);
    GPK_CHECK_GOTO(dmalloc(ctx, (void **)&b.idx_tmp, n * sizeof(unsigned), "octree cuda: cudaMalloc (indices)"), s,
                   fail);

    e = cudaMemcpyAsync(b.xyz, job->xyz, 3 * n * sizeof(float), cudaMemcpyHostToDevice, stream);
    if (e != cudaSuccess) {
        s = gpk__cuda_fail(ctx, e, "octree cuda: copy to device");
        goto fail;
    }
    codes_kernel<<<grid_for(n), kThreads, 0, stream>>>(b.xyz, n, job->root.lo[0], job->root.lo[1], job->root.lo[2],
                                                       job->root.side, b.codes, b.idx);
    GPK_CHECK_GOTO(check_launch(ctx, "octree cuda: codes kernel launch"), s, fail);

    {
        const unsigned *d_order; /* input index per tree position */
        if (job->scheme == GPK_OCTREE_MORTON) {
            GPK_CHECK_GOTO(morton_device(job, b, stream, &recs, &n_recs), s, fail);
            d_order = b.idx_tmp;
            GPK_CHECK_GOTO(morton_host_nodes(job, recs, n_recs, tree), s, fail);
            free(recs);
            recs = nullptr;
            tree->perm = (uint32_t *)malloc(n * sizeof(uint32_t));
            if (!tree->perm) {
                s = gpk__fail(ctx, GPK_ENOMEM, "octree cuda: out of memory for %zu particles", n);
                goto fail;
            }
            e = cudaMemcpyAsync(tree->perm, d_order, n * sizeof(uint32_t), cudaMemcpyDeviceToHost, stream);
            if (e != cudaSuccess) {
                s = gpk__cuda_fail(ctx, e, "octree cuda: copy to host (permutation)");
                goto fail;
            }
        } else {
            e = cudaStreamSynchronize(stream); /* codes and indices are ready whatever stream the pool uses */
            if (e != cudaSuccess) {
                s = gpk__cuda_fail(ctx, e, "octree cuda: codes kernel");
                goto fail;
            }
            GPK_CHECK_GOTO(gpk__octree_build_cuda_pool(job, b.codes, b.idx, b.codes_tmp, b.idx_tmp, tree), s, fail);
            d_order = b.idx;
        }
        GPK_CHECK_GOTO(dmalloc(ctx, (void **)&b.xyz_out, 3 * n * sizeof(float), "octree cuda: cudaMalloc (particles)"),
                       s, fail);
        gather_kernel<<<grid_for(n), kThreads, 0, stream>>>(b.xyz, d_order, n, b.xyz_out);
        GPK_CHECK_GOTO(check_launch(ctx, "octree cuda: gather kernel launch"), s, fail);
        tree->xyz = (float *)malloc(3 * n * sizeof(float));
        if (!tree->xyz) {
            s = gpk__fail(ctx, GPK_ENOMEM, "octree cuda: out of memory for %zu particles", n);
            goto fail;
        }
        e = cudaMemcpyAsync(tree->xyz, b.xyz_out, 3 * n * sizeof(float), cudaMemcpyDeviceToHost, stream);
        if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
        if (e != cudaSuccess) {
            s = gpk__cuda_fail(ctx, e, "octree cuda: copy to host (particles)");
            goto fail;
        }
    }
    free_buffers(b, stream);
    return GPK_OK;

fail:
    /* the dispatch frees what the tree holds */
    free(recs);
    free_buffers(b, stream);
    return s;
}
