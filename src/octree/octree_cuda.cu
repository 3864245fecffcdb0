/* The CUDA octree builders' common part and the Morton builder
 * (octree_cuda_internal.h).
 *
 * One device pipeline serves both entry points (gpk_octree_build on host
 * arrays, gpk_cuda_octree_build on device arrays):
 *  1. bounds: one reduction gives the per-axis min and max (floats are
 *     compared as order-preserving integers) and the first particle with a
 *     non-finite coordinate; the host derives the root cube from the bounds
 *     as gpk__octree_root does;
 *  2. Morton codes, bit-identical to gpk__octree_codes (the same double
 *     operations in the same order, written with the _rn intrinsics so that
 *     nothing is fused; the same clamping), with the indices 0..n-1;
 *  3. the builder: Morton sorts the (code, index) pairs with
 *     gpk_cuda_sort_pairs and finds the nodes level by level (one thread
 *     per (splitting node, octant): two binary searches on the sorted codes,
 *     a record slot from an atomic counter, a place in the next level's
 *     list if the child splits; the host reads two counters per level). The
 *     pool schemes run octree_cuda_pool.cu. Either way: compact records
 *     (octree_dnode) in a racy or level order;
 *  4. the finish: the records sorted by (prefix, depth), two stable radix
 *     sorts, are the depth-first preorder with octants 0..7 (a node's prefix
 *     is the path to it, padded with zeros, and a node comes before the
 *     descendants that share its prefix); one kernel writes the
 *     gpk_octree_node array in that order with the boxes of
 *     gpk__octree_node_box (the same double operations) and counts leaves
 *     and depth, a second one sets the child links;
 *  5. the particles gathered into tree order. */
#include "octree_cuda_internal.h"
#include "../core/cuda_internal.h"
#include "gpk/cuda.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

namespace {

const unsigned kThreads = 256;

unsigned grid_for(size_t work)
{
    size_t b = (work + kThreads - 1) / kThreads;
    if (b < 1) b = 1;
    if (b > (1u << 20)) b = 1u << 20; /* the kernels loop (grid-stride) */
    return (unsigned)b;
}

/* ---- 1. bounds ------------------------------------------------------------------ */

/* Floats as unsigned integers in the floats' order (finite values). */
__device__ __forceinline__ unsigned float_key(float f)
{
    const unsigned u = __float_as_uint(f);
    return (u & 0x80000000u) ? ~u : u | 0x80000000u;
}
void host_float_from_key(unsigned k, float *out)
{
    const unsigned u = (k & 0x80000000u) ? k & 0x7fffffffu : ~k;
    memcpy(out, &u, sizeof u);
}

struct Bounds {
    unsigned lo[3], hi[3];
    unsigned long long bad; /* first particle with a non-finite coordinate, or ~0 */
};

__global__ void bounds_kernel(const float *__restrict__ xyz, size_t n, Bounds *out)
{
    unsigned lo[3] = {~0u, ~0u, ~0u}, hi[3] = {0u, 0u, 0u};
    unsigned long long bad = ~0ull;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const float *p = xyz + 3 * i;
#pragma unroll
        for (int a = 0; a < 3; a++) {
            const float v = p[a];
            if (!isfinite(v)) {
                bad = bad < i ? bad : i;
                continue;
            }
            const unsigned k = float_key(v);
            lo[a] = k < lo[a] ? k : lo[a];
            hi[a] = k > hi[a] ? k : hi[a];
        }
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
#pragma unroll
        for (int a = 0; a < 3; a++) {
            lo[a] = min(lo[a], __shfl_down_sync(0xffffffffu, lo[a], off));
            hi[a] = max(hi[a], __shfl_down_sync(0xffffffffu, hi[a], off));
        }
        const unsigned long long b = __shfl_down_sync(0xffffffffu, bad, off);
        bad = b < bad ? b : bad;
    }
    if ((threadIdx.x & 31u) == 0) {
        for (int a = 0; a < 3; a++) {
            atomicMin(&out->lo[a], lo[a]);
            atomicMax(&out->hi[a], hi[a]);
        }
        if (bad != ~0ull) atomicMin(&out->bad, bad);
    }
}

/* ---- 2. Morton codes (bit-identical to octree.c) ------------------------------- */

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

/* ---- 3. Morton nodes, one level per launch -------------------------------------- */

/* First index in [lo, hi) whose octant (bits shift+2..shift) is >= octant;
 * the octants in the range are non-decreasing. */
__device__ __forceinline__ unsigned octant_lower(const uint64_t *__restrict__ codes, unsigned lo, unsigned hi,
                                                 unsigned shift, unsigned octant)
{
    while (lo < hi) {
        const unsigned mid = lo + (hi - lo) / 2;
        if (((unsigned)(codes[mid] >> shift) & 7u) < octant) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* counters[0]: records so far, counters[1]: entries of next_split.
 * split: the n_split records of the nodes at `depth` that split. */
__global__ void level_kernel(const uint64_t *__restrict__ codes, octree_dnode *nodes,
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
        const bool splits = count > leaf_threshold && depth + 1u < (unsigned)GPK_OCTREE_MAX_DEPTH;
        const unsigned c = atomicAdd(&counters[0], 1u);
        octree_dnode r;
        r.prefix = codes[b] >> shift << shift;
        r.first = b;
        r.count = count;
        r.parent = slot;
        r.depth_leaf = (depth + 1u) | (splits ? 0u : 1u << 8);
        nodes[c] = r;
        if (splits) next_split[atomicAdd(&counters[1], 1u)] = c;
    }
}

/* ---- 4. the finish ----------------------------------------------------------------- */

__global__ void depth_keys_kernel(const octree_dnode *__restrict__ rec, size_t m, unsigned *__restrict__ keys,
                                  unsigned *__restrict__ slots)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < m; i += stride) {
        keys[i] = rec[i].depth_leaf & 0xFFu;
        slots[i] = (unsigned)i;
    }
}

__global__ void prefix_keys_kernel(const octree_dnode *__restrict__ rec, const unsigned *__restrict__ slots,
                                   size_t m, uint64_t *__restrict__ keys)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < m; i += stride)
        keys[i] = rec[slots[i]].prefix;
}

/* stats[0]: leaves, stats[1]: deepest leaf, stats[2]: malformed records */
__global__ void fill_kernel(const octree_dnode *__restrict__ rec, const unsigned *__restrict__ order,
                            size_t m, double lx, double ly, double lz, double side,
                            gpk_octree_node *__restrict__ out, unsigned *__restrict__ rank, unsigned *stats)
{
    const double cell = 0x1p-21;
    const double lo_axis[3] = {lx, ly, lz};
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < m; i += stride) {
        const unsigned slot = order[i];
        const octree_dnode r = rec[slot];
        rank[slot] = (unsigned)i;
        const unsigned depth = r.depth_leaf & 0xFFu, leaf = (r.depth_leaf >> 8) & 1u;
        gpk_octree_node nd;
        const unsigned extent = OCTREE_QCELLS >> depth;
        const unsigned corner[3] = {octree_compact3(r.prefix >> 2), octree_compact3(r.prefix >> 1),
                                    octree_compact3(r.prefix)};
#pragma unroll
        for (int a = 0; a < 3; a++) {
            nd.lo[a] = __double2float_rn(__dadd_rn(lo_axis[a], __dmul_rn(side, (double)corner[a] * cell)));
            nd.hi[a] = __double2float_rn(
                __dadd_rn(lo_axis[a], __dmul_rn(side, (double)(corner[a] + extent) * cell)));
        }
#pragma unroll
        for (int o = 0; o < 8; o++) nd.child[o] = -1;
        nd.first = r.first;
        nd.count = r.count;
        nd.depth = depth;
        nd.leaf = leaf;
        out[i] = nd;
        if (leaf) {
            atomicAdd(&stats[0], 1u);
            atomicMax(&stats[1], depth);
        }
        const bool root = r.parent == UINT32_MAX;
        if (root != (i == 0) || (!root && (r.parent >= m || depth == 0 || depth > GPK_OCTREE_MAX_DEPTH)))
            atomicAdd(&stats[2], 1u);
    }
}

__global__ void link_kernel(const octree_dnode *__restrict__ rec, const unsigned *__restrict__ order,
                            const unsigned *__restrict__ rank, size_t m, gpk_octree_node *__restrict__ out,
                            unsigned *stats)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + 1 + threadIdx.x; i < m; i += stride) {
        const octree_dnode r = rec[order[i]];
        const unsigned depth = r.depth_leaf & 0xFFu;
        if (r.parent >= m || depth == 0) continue; /* counted by fill_kernel */
        const unsigned parent = rank[r.parent];
        const unsigned o = (unsigned)(r.prefix >> (3u * (OCTREE_QBITS - depth))) & 7u;
        /* a parent's links are written by its children only, one per octant */
        if (atomicCAS((unsigned *)&out[parent].child[o], 0xFFFFFFFFu, (unsigned)i) != 0xFFFFFFFFu ||
            out[parent].leaf || out[parent].depth + 1u != depth)
            atomicAdd(&stats[2], 1u);
    }
}

/* ---- the pipeline ---------------------------------------------------------------- */

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

/* Device memory freed at scope exit. get: a temporary
 * (gpk__cuda_temp_alloc, freed stream-ordered); get_out: cudaMalloc, for
 * an array that may be handed to the caller (keep). */
struct Scratch {
    gpk_ctx *ctx;
    cudaStream_t stream;
    bool out_temp; /* get_out gives temporaries too (the caller frees them with gpk__cuda_temp_free) */
    void *p[40] = {};
    bool plain[40] = {};
    int count = 0;
    Scratch(gpk_ctx *c, cudaStream_t s, bool outputs_temporary)
        : ctx(c), stream(s), out_temp(outputs_temporary)
    {}
    template <class T> gpk_status get(T **out, size_t count_of, const char *what)
    {
        void *q = nullptr;
        GPK_CHECK(gpk__cuda_temp_alloc(ctx, &q, count_of * sizeof(T), stream, what));
        gpk_status s = adopt(q, false);
        if (s != GPK_OK) {
            (void)gpk__cuda_temp_free(ctx, q, stream);
            return s;
        }
        *out = (T *)q;
        return GPK_OK;
    }
    template <class T> gpk_status get_out(T **out, size_t count_of, const char *what)
    {
        if (out_temp) return get(out, count_of, what);
        void *q = nullptr;
        GPK_CHECK(dmalloc(ctx, &q, count_of * sizeof(T), what));
        gpk_status s = adopt(q, true);
        if (s != GPK_OK) {
            (void)cudaFree(q);
            return s;
        }
        *out = (T *)q;
        return GPK_OK;
    }
    /* takes an allocation made elsewhere (plain: by cudaMalloc, else by
     * gpk__cuda_temp_alloc on this stream); when there is no room the
     * caller keeps it (and frees it) */
    gpk_status adopt(void *q, bool is_plain)
    {
        if (count == (int)(sizeof p / sizeof p[0]))
            return gpk__fail(ctx, GPK_EDEVICE, "octree cuda: internal error (too many scratch arrays)");
        plain[count] = is_plain;
        p[count++] = q;
        return GPK_OK;
    }
    /* hands an allocation over to the caller (a get_out one) */
    void keep(const void *q)
    {
        for (int i = 0; i < count; i++)
            if (p[i] == q) p[i] = nullptr;
    }
    ~Scratch()
    {
        bool synced = false;
        for (int i = 0; i < count; i++) {
            if (!p[i]) continue;
            if (!plain[i]) {
                (void)gpk__cuda_temp_free(ctx, p[i], stream);
                continue;
            }
            /* cudaFree does not wait for this stream when it is not the legacy default one */
            if (!synced) (void)cudaStreamSynchronize(stream);
            synced = true;
            (void)cudaFree(p[i]);
        }
        (void)cudaGetLastError();
    }
};

gpk_status sort_pairs(gpk_ctx *ctx, Scratch &sc, gpk_type type, const void *k_in, void *k_out,
                      const unsigned *v_in, unsigned *v_out, size_t m, unsigned key_bits, cudaStream_t stream,
                      const char *what)
{
    gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
    o.key_bits = key_bits;
    size_t temp_bytes = 0;
    void *temp = nullptr;
    gpk_status s =
        gpk_cuda_sort_pairs(ctx, nullptr, &temp_bytes, type, k_in, k_out, 4, v_in, v_out, m, &o, 0, stream);
    if (s == GPK_OK) s = sc.get((unsigned char **)&temp, temp_bytes, what);
    if (s == GPK_OK)
        s = gpk_cuda_sort_pairs(ctx, temp, &temp_bytes, type, k_in, k_out, 4, v_in, v_out, m, &o, 0, stream);
    if (s != GPK_OK) {
        char msg[GPK_ERRLEN];
        memcpy(msg, ctx->err, sizeof msg);
        msg[GPK_ERRLEN - 1] = '\0';
        return gpk__fail(ctx, s, "%s: %s", what, msg);
    }
    return GPK_OK;
}

/* The Morton builder's device half: the (code, index) pairs sorted into
 * codes_out / idx_out, the records in *d_rec (a Scratch allocation). */
gpk_status morton_records(const octree_cuda_job *job, Scratch &sc, uint64_t *codes, unsigned *idx,
                          uint64_t *codes_out, unsigned *idx_out, octree_dnode **d_rec, size_t *n_rec)
{
    gpk_ctx *ctx = job->ctx;
    cudaStream_t stream = job->stream;
    const size_t n = job->n;
    const unsigned t = job->leaf_threshold;
    GPK_CHECK(sort_pairs(ctx, sc, GPK_U64, codes, codes_out, idx, idx_out, n, 3u * OCTREE_QBITS, stream,
                         "octree cuda morton: sorting the Morton codes"));

    size_t cap = octree_node_bound(n, t);
    const size_t guess = 3 * (n / ((size_t)t + 1)) + 1024;
    if (guess < cap) cap = guess; /* grown below when a level needs more */
    const size_t split_cap = n / ((size_t)t + 1) + 1;
    octree_dnode *nodes = nullptr;
    unsigned *cur = nullptr, *next = nullptr, *counters = nullptr;
    GPK_CHECK(gpk__cuda_temp_alloc(ctx, (void **)&nodes, cap * sizeof *nodes, stream,
                                   "octree cuda morton: node array"));
    /* nodes is a temporary until the scratch adopts it */
    auto drop = [&](void *q) { (void)gpk__cuda_temp_free(ctx, q, stream); };
    gpk_status s = sc.get(&cur, split_cap, "octree cuda morton: cudaMalloc (levels)");
    if (s == GPK_OK) s = sc.get(&next, split_cap, "octree cuda morton: cudaMalloc (levels)");
    if (s == GPK_OK) s = sc.get(&counters, 2, "octree cuda morton: cudaMalloc (counters)");
    if (s != GPK_OK) {
        drop(nodes);
        return s;
    }

    const bool root_splits = octree_splits((uint32_t)n, 0, t);
    const octree_dnode root = {0ull, 0u, (uint32_t)n, UINT32_MAX, root_splits ? 0u : 1u << 8};
    unsigned host_counters[2] = {1u, 0u};
    const unsigned zero = 0u;
    cudaError_t e = cudaMemcpyAsync(nodes, &root, sizeof root, cudaMemcpyHostToDevice, stream);
    if (e == cudaSuccess) e = cudaMemcpyAsync(cur, &zero, sizeof zero, cudaMemcpyHostToDevice, stream);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(counters, host_counters, sizeof host_counters, cudaMemcpyHostToDevice, stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream); /* the sources are on the stack */
    if (e != cudaSuccess) {
        drop(nodes);
        return gpk__cuda_fail(ctx, e, "octree cuda morton: setting up the root");
    }
    size_t used = 1, n_split = root_splits ? 1 : 0;
    for (unsigned depth = 0; n_split > 0 && depth < GPK_OCTREE_MAX_DEPTH; depth++) {
        const size_t most = 8 * n_split < n ? 8 * n_split : n; /* one level's children */
        if (used + most > cap) {
            size_t c = 2 * cap > used + most ? 2 * cap : used + most;
            octree_dnode *bigger = nullptr;
            s = gpk__cuda_temp_alloc(ctx, (void **)&bigger, c * sizeof *bigger, stream,
                                     "octree cuda morton: node array");
            if (s == GPK_OK) {
                e = cudaMemcpyAsync(bigger, nodes, used * sizeof *nodes, cudaMemcpyDeviceToDevice, stream);
                if (e != cudaSuccess)
                    s = gpk__cuda_fail(ctx, e, "octree cuda morton: growing the node array");
            }
            if (s != GPK_OK) {
                drop(bigger);
                drop(nodes);
                return s;
            }
            drop(nodes); /* stream-ordered: after the copy */
            nodes = bigger;
            cap = c;
        }
        e = cudaMemsetAsync(counters + 1, 0, sizeof(unsigned), stream);
        if (e == cudaSuccess) {
            level_kernel<<<grid_for(8 * n_split), kThreads, 0, stream>>>(
                codes_out, nodes, cur, (unsigned)n_split, depth, t, counters, next);
            e = cudaGetLastError();
        }
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(host_counters, counters, sizeof host_counters, cudaMemcpyDeviceToHost,
                                stream);
        if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
        if (e != cudaSuccess) {
            drop(nodes);
            return gpk__cuda_fail(ctx, e, "octree cuda morton: level kernel");
        }
        if (host_counters[0] < used || host_counters[0] > used + most || host_counters[1] > split_cap) {
            drop(nodes);
            return gpk__fail(ctx, GPK_EDEVICE,
                             "octree cuda morton: internal error at depth %u (%u nodes, %u to split)", depth,
                             host_counters[0], host_counters[1]);
        }
        used = host_counters[0];
        n_split = host_counters[1];
        unsigned *tmp = cur;
        cur = next;
        next = tmp;
    }
    s = sc.adopt(nodes, false); /* freed with the scratch */
    if (s != GPK_OK) {
        drop(nodes);
        return s;
    }
    *d_rec = nodes;
    *n_rec = used;
    return GPK_OK;
}

/* Steps 1-5 on d_xyz (device, n >= 1) into *out (zeroed by the caller;
 * device arrays, freed with gpk_cuda_octree_free, or when
 * outputs_temporary temporaries of the context's pool, freed with
 * gpk__cuda_temp_free on job->stream; ms is not set). host_xyz,
 * if not NULL, is the same data on the host (for the error message).
 * Synchronous. */
gpk_status device_build(const octree_cuda_job *job, const float *d_xyz, const float *host_xyz,
                        gpk_cuda_octree *out, bool outputs_temporary)
{
    gpk_ctx *ctx = job->ctx;
    cudaStream_t stream = job->stream;
    const size_t n = job->n;
    Scratch sc(ctx, stream, outputs_temporary);
    cudaError_t e;

    /* 1. bounds */
    Bounds *d_bounds = nullptr;
    GPK_CHECK(sc.get(&d_bounds, 1, "octree cuda: cudaMalloc (bounds)"));
    Bounds hb;
    for (int a = 0; a < 3; a++) hb.lo[a] = ~0u, hb.hi[a] = 0u;
    hb.bad = ~0ull;
    e = cudaMemcpyAsync(d_bounds, &hb, sizeof hb, cudaMemcpyHostToDevice, stream);
    if (e == cudaSuccess) {
        bounds_kernel<<<grid_for(n) < 1024u ? grid_for(n) : 1024u, kThreads, 0, stream>>>(d_xyz, n, d_bounds);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaMemcpyAsync(&hb, d_bounds, sizeof hb, cudaMemcpyDeviceToHost, stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "octree cuda: bounds");
    if (hb.bad < n) {
        float p[3];
        if (host_xyz) memcpy(p, host_xyz + 3 * hb.bad, sizeof p);
        else if ((e = cudaMemcpy(p, d_xyz + 3 * hb.bad, sizeof p, cudaMemcpyDeviceToHost)) != cudaSuccess)
            return gpk__cuda_fail(ctx, e, "octree cuda: reading a particle");
        return gpk__fail(ctx, GPK_EINVAL, "octree: particle %llu has a non-finite coordinate (%g, %g, %g)",
                         hb.bad, (double)p[0], (double)p[1], (double)p[2]);
    }
    float blo[3], bhi[3];
    for (int a = 0; a < 3; a++) {
        host_float_from_key(hb.lo[a], &blo[a]);
        host_float_from_key(hb.hi[a], &bhi[a]);
    }
    octree_root root;
    gpk__octree_root_from_bounds(blo, bhi, &root);

    /* 2. codes */
    uint64_t *codes = nullptr, *codes_tmp = nullptr;
    unsigned *idx = nullptr, *idx_tmp = nullptr;
    GPK_CHECK(sc.get(&codes, n, "octree cuda: cudaMalloc (codes)"));
    GPK_CHECK(sc.get(&codes_tmp, n, "octree cuda: cudaMalloc (codes)"));
    /* the permutation handed out: idx for the pools, idx_tmp for Morton */
    const bool morton = job->scheme == GPK_OCTREE_MORTON;
    GPK_CHECK(morton ? sc.get(&idx, n, "octree cuda: indices") : sc.get_out(&idx, n, "octree cuda: indices"));
    GPK_CHECK(morton ? sc.get_out(&idx_tmp, n, "octree cuda: indices")
                     : sc.get(&idx_tmp, n, "octree cuda: indices"));
    octree_cuda_job cj = *job;
    cj.d_xyz = d_xyz;
    cj.root = root;
    job = &cj;
    GPK_CHECK(gpk__octree_cuda_codes(job, codes, idx));

    /* 3. records */
    octree_dnode *rec = nullptr;
    size_t m = 0;
    unsigned *order_idx; /* input index per tree position */
    if (job->scheme == GPK_OCTREE_MORTON) {
        GPK_CHECK(morton_records(job, sc, codes, idx, codes_tmp, idx_tmp, &rec, &m));
        order_idx = idx_tmp;
        out->tasks = m;
    } else {
        GPK_CHECK(
            gpk__octree_cuda_pool(job, codes, idx, codes_tmp, idx_tmp, &rec, &m, &out->tasks, &out->pool_ms));
        const gpk_status s = sc.adopt(rec, false);
        if (s != GPK_OK) {
            (void)gpk__cuda_temp_free(ctx, rec, stream);
            return s;
        }
        order_idx = idx;
    }
    if (m < 1 || m > (size_t)INT32_MAX)
        return gpk__fail(ctx, m ? GPK_ENOMEM : GPK_EDEVICE,
                         "octree cuda: %zu nodes (1 to 2^31 - 1 can be linked)", m);

    /* 4. finish: preorder = records sorted by (prefix, depth), stably */
    unsigned *keys32 = nullptr, *slots_a = nullptr, *slots_b = nullptr, *rank = nullptr, *stats = nullptr;
    uint64_t *keys64_a = nullptr, *keys64_b = nullptr;
    gpk_octree_node *nodes = nullptr;
    GPK_CHECK(sc.get(&keys32, m, "octree cuda: cudaMalloc (finish)"));
    GPK_CHECK(sc.get(&slots_a, m, "octree cuda: cudaMalloc (finish)"));
    GPK_CHECK(sc.get(&slots_b, m, "octree cuda: cudaMalloc (finish)"));
    GPK_CHECK(sc.get(&rank, m, "octree cuda: cudaMalloc (finish)"));
    GPK_CHECK(sc.get(&stats, 3, "octree cuda: cudaMalloc (finish)"));
    GPK_CHECK(sc.get(&keys64_a, m, "octree cuda: cudaMalloc (finish)"));
    GPK_CHECK(sc.get(&keys64_b, m, "octree cuda: cudaMalloc (finish)"));
    GPK_CHECK(sc.get_out(&nodes, m, "octree cuda: cudaMalloc (nodes)"));
    depth_keys_kernel<<<grid_for(m), kThreads, 0, stream>>>(rec, m, keys32, slots_a);
    GPK_CHECK(check_launch(ctx, "octree cuda: finish kernel launch"));
    const unsigned *order = slots_a;
    if (m > 1) {
        GPK_CHECK(sort_pairs(ctx, sc, GPK_U32, keys32, keys32, slots_a, slots_b, m, 5, stream,
                             "octree cuda: ordering the nodes by depth"));
        prefix_keys_kernel<<<grid_for(m), kThreads, 0, stream>>>(rec, slots_b, m, keys64_a);
        GPK_CHECK(check_launch(ctx, "octree cuda: finish kernel launch"));
        GPK_CHECK(sort_pairs(ctx, sc, GPK_U64, keys64_a, keys64_b, slots_b, slots_a, m, 3u * OCTREE_QBITS,
                             stream, "octree cuda: ordering the nodes by prefix"));
    }
    e = cudaMemsetAsync(stats, 0, 3 * sizeof *stats, stream);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "octree cuda: cudaMemsetAsync");
    fill_kernel<<<grid_for(m), kThreads, 0, stream>>>(rec, order, m, root.lo[0], root.lo[1], root.lo[2],
                                                      root.side, nodes, rank, stats);
    GPK_CHECK(check_launch(ctx, "octree cuda: finish kernel launch"));
    link_kernel<<<grid_for(m), kThreads, 0, stream>>>(rec, order, rank, m, nodes, stats);
    GPK_CHECK(check_launch(ctx, "octree cuda: finish kernel launch"));

    /* 5. the particles in tree order */
    float *xyz_out = nullptr;
    GPK_CHECK(sc.get_out(&xyz_out, 3 * n, "octree cuda: cudaMalloc (particles)"));
    gather_kernel<<<grid_for(n), kThreads, 0, stream>>>(d_xyz, order_idx, n, xyz_out);
    GPK_CHECK(check_launch(ctx, "octree cuda: gather kernel launch"));

    unsigned hs[3];
    e = cudaMemcpyAsync(hs, stats, sizeof hs, cudaMemcpyDeviceToHost, stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "octree cuda: finish");
    if (hs[2] != 0)
        return gpk__fail(ctx, GPK_EDEVICE, "octree cuda: internal error (%u malformed node records)", hs[2]);
    sc.keep(nodes);
    sc.keep(xyz_out);
    sc.keep(order_idx);
    out->n = n;
    out->nodes = nodes;
    out->n_nodes = m;
    out->xyz = xyz_out;
    out->perm = order_idx;
    out->leaves = hs[0];
    out->depth = hs[1];
    return GPK_OK;
}

} // namespace

gpk_status gpk__octree_cuda_codes(const octree_cuda_job *job, uint64_t *codes, uint32_t *idx)
{
    const octree_root &r = job->root;
    codes_kernel<<<grid_for(job->n), kThreads, 0, job->stream>>>(job->d_xyz, job->n, r.lo[0], r.lo[1],
                                                                 r.lo[2], r.side, codes, idx);
    return check_launch(job->ctx, "octree cuda: codes kernel launch");
}

namespace {

octree_cuda_job cuda_job(gpk_ctx *ctx, cudaStream_t stream, size_t n, unsigned leaf_threshold,
                         gpk_octree_scheme scheme, const gpk_octree_opts *opts)
{
    /* the fields in their order; the particles and the root are set later */
    return octree_cuda_job{ctx, stream, n, leaf_threshold, scheme, opts, nullptr, {}};
}

gpk_status enter_cuda(gpk_ctx *ctx, DeviceGuard &guard)
{
    if (ctx->backend != GPK_BACKEND_CUDA || !ctx->cuda)
        return gpk__fail(ctx, GPK_EINVAL, "octree cuda: ctx is not a CUDA context");
    cudaError_t e = guard.enter(ctx->device);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "octree cuda: cudaSetDevice");
    return GPK_OK;
}

} // namespace

extern "C" gpk_status gpk__octree_build_cuda(const octree_job *job, gpk_octree *tree)
{
    gpk_ctx *ctx = job->ctx;
    const size_t n = job->n;
    DeviceGuard guard;
    GPK_CHECK(enter_cuda(ctx, guard));
    cudaStream_t stream = ((gpk_cuda_state *)ctx->cuda)->stream;
    const octree_cuda_job dj = cuda_job(ctx, stream, n, job->leaf_threshold, job->scheme, job->opts);

    float *d_xyz = nullptr;
    GPK_CHECK(
        gpk__cuda_temp_alloc(ctx, (void **)&d_xyz, 3 * n * sizeof(float), stream, "octree cuda: particles"));
    cudaEvent_t ev[2] = {nullptr, nullptr};
    gpk_status s = gpk__cuda_copy_to_device(ctx, d_xyz, job->xyz, 3 * n * sizeof(float), stream);
    cudaError_t e = cudaSuccess;
    for (int i = 0; i < 2 && s == GPK_OK && e == cudaSuccess; i++) e = cudaEventCreate(&ev[i]);
    if (e == cudaSuccess) e = cudaEventRecord(ev[0], stream);
    if (s == GPK_OK && e != cudaSuccess) s = gpk__cuda_fail(ctx, e, "octree cuda: timing events");
    gpk_cuda_octree dt;
    memset(&dt, 0, sizeof dt);
    /* the device arrays are copied out and freed here: temporaries too */
    if (s == GPK_OK) s = device_build(&dj, d_xyz, job->xyz, &dt, true);
    if (s == GPK_OK) {
        e = cudaEventRecord(ev[1], stream);
        float ms = 0.f;
        if (e == cudaSuccess) e = cudaEventSynchronize(ev[1]);
        if (e == cudaSuccess) e = cudaEventElapsedTime(&ms, ev[0], ev[1]);
        if (e != cudaSuccess) s = gpk__cuda_fail(ctx, e, "octree cuda: timing events");
        tree->device_ms = ms;
    }
    if (s == GPK_OK) {
        tree->nodes = (gpk_octree_node *)gpk__host_alloc_large(dt.n_nodes * sizeof *tree->nodes);
        tree->xyz = (float *)gpk__host_alloc_large(3 * n * sizeof *tree->xyz);
        tree->perm = (uint32_t *)gpk__host_alloc_large(n * sizeof *tree->perm);
        if (!tree->nodes || !tree->xyz || !tree->perm)
            s = gpk__fail(ctx, GPK_ENOMEM, "octree cuda: out of host memory for %zu particles, %zu nodes", n,
                          dt.n_nodes);
    }
    if (s == GPK_OK) {
        s = gpk__cuda_copy_to_host(ctx, tree->nodes, dt.nodes, dt.n_nodes * sizeof *tree->nodes, stream);
        if (s == GPK_OK) s = gpk__cuda_copy_to_host(ctx, tree->xyz, dt.xyz, 3 * n * sizeof(float), stream);
        if (s == GPK_OK) s = gpk__cuda_copy_to_host(ctx, tree->perm, dt.perm, n * sizeof(uint32_t), stream);
    }
    if (s == GPK_OK) {
        tree->n_nodes = dt.n_nodes;
        tree->tasks = dt.tasks;
        tree->pool_ms = dt.pool_ms;
        tree->leaves = dt.leaves;
        tree->depth = dt.depth;
    } /* on failure the dispatch frees what the tree holds */
    (void)cudaStreamSynchronize(stream);
    (void)gpk__cuda_temp_free(ctx, dt.nodes, stream);
    (void)gpk__cuda_temp_free(ctx, dt.xyz, stream);
    (void)gpk__cuda_temp_free(ctx, dt.perm, stream);
    (void)gpk__cuda_temp_free(ctx, d_xyz, stream);
    for (int i = 0; i < 2; i++)
        if (ev[i]) (void)cudaEventDestroy(ev[i]);
    (void)cudaGetLastError();
    return s;
}

extern "C" GPK_API gpk_status gpk_cuda_octree_build(gpk_ctx *ctx, const float *d_xyz, size_t n,
                                                    unsigned leaf_threshold, gpk_octree_scheme scheme,
                                                    const gpk_octree_opts *opts, gpk_cuda_octree *tree,
                                                    cudaStream_t stream)
{
    if (!ctx) return GPK_EINVAL;
    gpk__clear_error(ctx);
    GPK_CHECK(gpk__octree_check_args(ctx, d_xyz, "d_xyz", n, leaf_threshold, scheme, tree));
    DeviceGuard guard;
    GPK_CHECK(enter_cuda(ctx, guard));
    const gpk_octree_opts defaults = GPK_OCTREE_OPTS_INIT;
    const double t0 = omp_get_wtime();
    gpk_cuda_octree built;
    memset(&built, 0, sizeof built);
    built.n = n;
    if (n > 0) {
        const octree_cuda_job dj = cuda_job(ctx, stream, n, leaf_threshold, scheme, opts ? opts : &defaults);
        const gpk_status s = device_build(&dj, d_xyz, nullptr, &built, false);
        if (s != GPK_OK) return s;
    }
    built.ms = (omp_get_wtime() - t0) * 1e3;
    *tree = built;
    return GPK_OK;
}

extern "C" GPK_API void gpk_cuda_octree_free(gpk_cuda_octree *tree)
{
    if (!tree) return;
    if (tree->nodes) (void)cudaFree(tree->nodes);
    if (tree->xyz) (void)cudaFree(tree->xyz);
    if (tree->perm) (void)cudaFree(tree->perm);
    (void)cudaGetLastError();
    memset(tree, 0, sizeof *tree);
}
