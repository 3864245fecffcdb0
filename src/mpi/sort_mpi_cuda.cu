/* Device halves of the distributed sort: split-key counts on a sorted
 * shard and the stable merge of the received runs (merge path: each block
 * finds its tile's share of the two runs, stages it in shared memory, and
 * each thread merges ITEMS outputs of it). */
#include "sort_mpi_internal.h"

#include <cuda_runtime.h>

namespace {

constexpr int THREADS = 256;
constexpr int ITEMS = 8;
constexpr int TILE = THREADS * ITEMS;

template <int TYPE> __device__ __forceinline__ uint64_t mapped(uint32_t x)
{
    return gpk__map_u32((gpk_type)TYPE, x);
}
template <int TYPE> __device__ __forceinline__ uint64_t mapped(uint64_t x)
{
    return gpk__map_u64((gpk_type)TYPE, x);
}

template <typename K, int TYPE>
__global__ void count_kernel(const K *keys, size_t n, const uint64_t *q, size_t nq, int or_equal,
                             uint64_t *out)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= nq) return;
    uint64_t v = q[i];
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint64_t m = mapped<TYPE>(keys[mid]);
        if (m < v || (or_equal && m == v)) lo = mid + 1;
        else hi = mid;
    }
    out[i] = lo;
}

/* how many of the first k outputs of the stable merge of a and b come from a */
template <typename K, int TYPE>
__device__ size_t corank(const K *a, size_t na, const K *b, size_t nb, size_t k)
{
    size_t lo = k > nb ? k - nb : 0, hi = k < na ? k : na;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (mapped<TYPE>(a[mid]) <= mapped<TYPE>(b[k - mid - 1])) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

template <typename V> struct Values {
    const V *a, *b;
    V *out;
};

/* bounds[i] = corank of output position min(i TILE, n), for i <= tiles: all
 * tiles' searches at once (one thread each), so that their dependent loads
 * (30 for 2^30 keys, over NVLink for a peer's run) overlap. */
template <typename K, int TYPE>
__global__ void partition_kernel(const K *a, size_t na, const K *b, size_t nb, size_t tiles, size_t *bounds)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i > tiles) return;
    size_t n = na + nb, k = i * (size_t)TILE < n ? i * (size_t)TILE : n;
    bounds[i] = corank<K, TYPE>(a, na, b, nb, k);
}

template <typename K, typename V, int TYPE>
__global__ void __launch_bounds__(THREADS)
    merge_kernel(const K *a, size_t na, const K *b, size_t nb, K *out, Values<V> vals, const size_t *bounds)
{
    __shared__ K tile[TILE];
    __shared__ K merged[TILE];
    __shared__ unsigned short from[TILE]; /* where each output came from in tile (values) */
    size_t n = na + nb;
    size_t k0 = blockIdx.x * (size_t)TILE, k1 = k0 + TILE < n ? k0 + TILE : n;
    size_t a0 = bounds[blockIdx.x], a1 = bounds[blockIdx.x + 1], b0 = k0 - a0;
    int la = (int)(a1 - a0), lb = (int)(k1 - k0) - la;
    for (int t = threadIdx.x; t < la + lb; t += THREADS) tile[t] = t < la ? a[a0 + t] : b[b0 + (t - la)];
    __syncthreads();
    const K *sa = tile, *sb = tile + la;
    int k = threadIdx.x * ITEMS;
    if (k < la + lb) {
        int lo = k > lb ? k - lb : 0, hi = k < la ? k : la;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (mapped<TYPE>(sa[mid]) <= mapped<TYPE>(sb[k - mid - 1])) lo = mid + 1;
            else hi = mid;
        }
        int i = lo, j = k - lo;
        int end = k + ITEMS < la + lb ? k + ITEMS : la + lb;
        for (int o = k; o < end; o++) {
            bool from_b = i >= la || (j < lb && mapped<TYPE>(sb[j]) < mapped<TYPE>(sa[i]));
            int src = from_b ? la + j++ : i++;
            merged[o] = tile[src];
            from[o] = (unsigned short)src;
        }
    }
    __syncthreads();
    /* coalesced stores; values gathered from the tile's ranges of a and b */
    for (int t = threadIdx.x; t < la + lb; t += THREADS) {
        out[k0 + t] = merged[t];
        if (sizeof(V) > 1) {
            int src = from[t];
            vals.out[k0 + t] = src < la ? vals.a[a0 + src] : vals.b[b0 + (src - la)];
        }
    }
}

template <typename K, int TYPE>
gpk_status count_typed(gpk_ctx *ctx, const void *d_keys, size_t n, const uint64_t *queries, size_t nq,
                       int or_equal, uint64_t *counts, void *d_work)
{
    const char *what = "distributed sort: split counts on the device";
    uint64_t *dq = (uint64_t *)d_work;
    cudaError_t e = cudaMemcpy(dq, queries, nq * sizeof(uint64_t), cudaMemcpyHostToDevice);
    if (e == cudaSuccess) {
        count_kernel<K, TYPE>
            <<<(unsigned)((nq + 255) / 256), 256>>>((const K *)d_keys, n, dq, nq, or_equal, dq + nq);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaMemcpy(counts, dq + nq, nq * sizeof(uint64_t), cudaMemcpyDeviceToHost);
    return e == cudaSuccess ? GPK_OK : gpk__mpi_cuda_fail(ctx, e, what);
}

struct NoValue {
    char unused;
};

/* One stable merge of a (earlier) and b into out: the partition, then the tiles. */
template <typename K, typename V, int TYPE>
cudaError_t launch_merge(const K *a, size_t na, const K *b, size_t nb, K *out, Values<V> vals,
                         size_t *d_bounds)
{
    size_t n = na + nb, tiles = (n + TILE - 1) / TILE;
    if (n == 0) return cudaSuccess;
    partition_kernel<K, TYPE><<<(unsigned)((tiles + 1 + 255) / 256), 256>>>(a, na, b, nb, tiles, d_bounds);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return e;
    merge_kernel<K, V, TYPE><<<(unsigned)tiles, THREADS>>>(a, na, b, nb, out, vals, d_bounds);
    return cudaGetLastError();
}

template <typename K, typename V, int TYPE>
gpk_status merge_typed(gpk_ctx *ctx, void *d_keys, void *d_values, size_t *off, int runs, void *d_keys_out,
                       void *d_values_out, size_t *d_bounds)
{
    size_t n = off[runs];
    char *src_k = (char *)d_keys, *src_v = (char *)d_values, *dst_k = (char *)d_keys_out,
         *dst_v = (char *)d_values_out;
    const size_t vw = sizeof(V) > 1 ? sizeof(V) : 0;
    cudaError_t e = cudaSuccess;
    while (runs > 1 && e == cudaSuccess) {
        for (int i = 0; i < runs && e == cudaSuccess; i += 2) {
            size_t a0 = off[i], a1 = off[i + 1], b1 = i + 1 < runs ? off[i + 2] : a1;
            size_t len = b1 - a0;
            Values<V> vals = {vw ? (const V *)(src_v + a0 * vw) : nullptr,
                              vw ? (const V *)(src_v + a1 * vw) : nullptr,
                              vw ? (V *)(dst_v + a0 * vw) : nullptr};
            if (len)
                e = launch_merge<K, V, TYPE>((const K *)(src_k + a0 * sizeof(K)), a1 - a0,
                                             (const K *)(src_k + a1 * sizeof(K)), b1 - a1,
                                             (K *)(dst_k + a0 * sizeof(K)), vals, d_bounds);
        }
        runs = gpk__merge_round_end(off, runs, n, &src_k, &src_v, &dst_k, &dst_v);
    }
    if (e == cudaSuccess && src_k != (char *)d_keys_out && n) {
        e = cudaMemcpyAsync(d_keys_out, src_k, n * sizeof(K), cudaMemcpyDeviceToDevice, 0);
        if (e == cudaSuccess && vw)
            e = cudaMemcpyAsync(d_values_out, src_v, n * vw, cudaMemcpyDeviceToDevice, 0);
    }
    if (e == cudaSuccess) e = cudaStreamSynchronize(0);
    return e == cudaSuccess ? GPK_OK : gpk__mpi_cuda_fail(ctx, e, "distributed sort: merge on the device");
}

/* The runs at run_k[i] (run_len[i] keys, values at run_v[i]) anywhere on
 * the device or mapped from a peer: round 1 merges them pairwise from
 * there, later rounds ping-pong between scratch and out so that the last
 * one writes out. */
template <typename K, typename V, int TYPE>
gpk_status merge_ptr_typed(gpk_ctx *ctx, const void *const *run_k, const void *const *run_v,
                           const size_t *run_len, int runs, void *scratch_k, void *scratch_v, void *out_k,
                           void *out_v, size_t *d_bounds)
{
    const size_t vw = sizeof(V) > 1 ? sizeof(V) : 0;
    size_t n = 0;
    int rounds = 0;
    for (int i = 0; i < runs; i++) n += run_len[i];
    for (int r = runs; r > 1; r = (r + 1) / 2) rounds++;
    cudaError_t e = cudaSuccess;
    if (runs == 1 && n) {
        e = cudaMemcpyAsync(out_k, run_k[0], n * sizeof(K), cudaMemcpyDeviceToDevice, 0);
        if (e == cudaSuccess && vw) e = cudaMemcpyAsync(out_v, run_v[0], n * vw, cudaMemcpyDeviceToDevice, 0);
    }
    /* round 1, from the runs where they are */
    char *dst_k = (char *)(rounds % 2 ? out_k : scratch_k), *dst_v = (char *)(rounds % 2 ? out_v : scratch_v);
    size_t *off = (size_t *)malloc(sizeof(size_t) * ((size_t)runs + 2));
    if (!off) return gpk__mpi_fail(ctx, GPK_ENOMEM, "distributed sort: merge: out of host memory");
    int next = 0;
    size_t at = 0;
    for (int i = 0; i < runs && rounds && e == cudaSuccess; i += 2) {
        size_t na = run_len[i], nb = i + 1 < runs ? run_len[i + 1] : 0;
        const K *a = (const K *)run_k[i], *b = i + 1 < runs ? (const K *)run_k[i + 1] : a;
        Values<V> vals = {vw ? (const V *)run_v[i] : nullptr,
                          vw && i + 1 < runs ? (const V *)run_v[i + 1] : nullptr,
                          vw ? (V *)(dst_v + at * vw) : nullptr};
        e = launch_merge<K, V, TYPE>(a, na, b, nb, (K *)(dst_k + at * sizeof(K)), vals, d_bounds);
        off[next++] = at;
        at += na + nb;
    }
    off[next] = n;
    gpk_status s = GPK_OK;
    if (e != cudaSuccess) s = gpk__mpi_cuda_fail(ctx, e, "distributed sort: merge on the device");
    else if (rounds > 1) {
        /* the rest in place of merge_typed's rounds: from dst to the other buffer */
        void *src_k = dst_k, *src_v = dst_v;
        void *other_k = dst_k == (char *)out_k ? scratch_k : out_k,
             *other_v = dst_v == (char *)out_v ? scratch_v : out_v;
        s = merge_typed<K, V, TYPE>(ctx, src_k, src_v, off, next, other_k, other_v, d_bounds);
    }
    free(off);
    e = cudaStreamSynchronize(0); /* after a failure too: nothing may still run on the buffers */
    if (s == GPK_OK && e != cudaSuccess)
        s = gpk__mpi_cuda_fail(ctx, e, "distributed sort: merge on the device");
    return s;
}

template <typename K, int TYPE>
gpk_status merge_ptr_width(gpk_ctx *ctx, const void *const *rk, const void *const *rv, size_t vw,
                           const size_t *len, int runs, void *sk, void *sv, void *ok, void *ov, size_t *b)
{
    if (vw == 4) return merge_ptr_typed<K, uint32_t, TYPE>(ctx, rk, rv, len, runs, sk, sv, ok, ov, b);
    if (vw == 8) return merge_ptr_typed<K, uint64_t, TYPE>(ctx, rk, rv, len, runs, sk, sv, ok, ov, b);
    return merge_ptr_typed<K, NoValue, TYPE>(ctx, rk, rv, len, runs, sk, sv, ok, ov, b);
}

template <typename K, int TYPE>
gpk_status merge_width(gpk_ctx *ctx, void *k, void *v, size_t vw, size_t *off, int runs, void *ko, void *vo,
                       size_t *b)
{
    if (vw == 4) return merge_typed<K, uint32_t, TYPE>(ctx, k, v, off, runs, ko, vo, b);
    if (vw == 8) return merge_typed<K, uint64_t, TYPE>(ctx, k, v, off, runs, ko, vo, b);
    return merge_typed<K, NoValue, TYPE>(ctx, k, v, off, runs, ko, vo, b);
}

} // namespace

extern "C" gpk_status gpk__mpi_cuda_count(gpk_ctx *ctx, int type, const void *d_keys, size_t n,
                                          const uint64_t *queries, size_t nq, int or_equal, uint64_t *counts,
                                          void *d_work)
{
    if (nq == 0) return GPK_OK;
#define KEY_CASE(T, N, B, U, C, K) \
    case T: return count_typed<U, T>(ctx, d_keys, n, queries, nq, or_equal, counts, d_work);
    switch (type) {
        GPK_KEY_TYPES(KEY_CASE)
    }
#undef KEY_CASE
    return gpk__mpi_fail(ctx, GPK_EINVAL, "unknown key type %d", type);
}

extern "C" gpk_status gpk__mpi_cuda_merge(gpk_ctx *ctx, int type, void *d_keys, void *d_values,
                                          size_t value_width, size_t *off, int runs, void *d_keys_out,
                                          void *d_values_out, size_t *d_bounds)
{
#define KEY_CASE(T, N, B, U, C, K)                                                                        \
    case T:                                                                                               \
        return merge_width<U, T>(ctx, d_keys, d_values, value_width, off, runs, d_keys_out, d_values_out, \
                                 d_bounds);
    switch (type) {
        GPK_KEY_TYPES(KEY_CASE)
    }
#undef KEY_CASE
    return gpk__mpi_fail(ctx, GPK_EINVAL, "unknown key type %d", type);
}

extern "C" gpk_status gpk__mpi_cuda_merge_runs(gpk_ctx *ctx, int type, const void *const *run_k,
                                               const void *const *run_v, size_t value_width,
                                               const size_t *run_len, int runs, void *scratch_k,
                                               void *scratch_v, void *out_k, void *out_v, size_t *d_bounds)
{
#define KEY_CASE(T, N, B, U, C, K)                                                                        \
    case T:                                                                                               \
        return merge_ptr_width<U, T>(ctx, run_k, run_v, value_width, run_len, runs, scratch_k, scratch_v, \
                                     out_k, out_v, d_bounds);
    switch (type) {
        GPK_KEY_TYPES(KEY_CASE)
    }
#undef KEY_CASE
    return gpk__mpi_fail(ctx, GPK_EINVAL, "unknown key type %d", type);
}

extern "C" size_t gpk__mpi_cuda_work_bytes(size_t n, size_t nq)
{
    size_t bounds = (n / TILE + 2) * sizeof(size_t), queries = 2 * nq * sizeof(uint64_t);
    return bounds > queries ? bounds : queries;
}

extern "C" gpk_status gpk__mpi_cuda_fail(gpk_ctx *ctx, cudaError_t e, const char *what)
{
    return gpk__mpi_fail(ctx, e == cudaErrorMemoryAllocation ? GPK_ENOMEM : GPK_EDEVICE, "%s: %s", what,
                         cudaGetErrorString(e));
}
