/* The CUDA devices of the multi-device sort (multi.c has the plans).
 *
 * Plan lsd: every pass of every device is a Onesweep pass of radix_cuda.cu
 * (gpk__radix_cuda_dist_*) whose stores go to the global positions on the
 * devices that own them: stores through UVA peer pointers (peer access,
 * which the context enabled between every two devices) into the other
 * devices' outputs or spares, which alternate from pass to pass. The host
 * waits for every device after each pass (the next pass writes where this
 * one read) and reads the counts of the next digit back on the way (pinned
 * memory). No pass writes where a pass of the same round reads: pass p
 * reads the shard or the buffer pass p - 1 wrote, and writes the other.
 *
 * Plan merge: local sorts with the device radix sort, co-ranks by binary searches in
 * the sorted shards, and a merge-path merge (Green, McColl & Bader 2012;
 * Odeh et al. 2012) of the pieces that belong to each device, whose first
 * round reads the other devices' pieces straight from their memory (peer
 * loads over NVLink), so the all-to-all exchange is the merge's own reads.
 * Without peer access between two devices, their pieces are copied first
 * (cudaMemcpyPeerAsync, through the host). More than two pieces merge in a
 * tree of pairwise rounds, ping-ponging between the output and a temporary
 * buffer; every round keeps the pieces in shard order, so ties stay in
 * (shard, index) order: stable. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "gpk/cuda.h"
#include "multi_internal.h"
#include "../core/cuda_internal.h"

namespace {

constexpr int kThreads = 256;
constexpr int kItems = 8;
constexpr int kTile = kThreads * kItems; /* output elements a block merges */
constexpr int kProbes = GPK_MULTI_PROBES;

/* The mapped key (core/key_traits.h), widened to 64 bits. */
__device__ __forceinline__ uint64_t map_key(int type, uint32_t x) { return gpk__map_u32((gpk_type)type, x); }
__device__ __forceinline__ uint64_t map_key(int type, uint64_t x) { return gpk__map_u64((gpk_type)type, x); }

/* below[c] / le[c]: keys of the sorted shard < / <= probes[c]. */
template <typename K>
__global__ void rank_probes(const K *keys, size_t n, const uint64_t *probes, int m, int type, uint64_t mask,
                            unsigned long long *below, unsigned long long *le)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= m) return;
    const uint64_t x = probes[c];
    size_t lo = 0, hi = n;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if ((map_key(type, keys[mid]) & mask) < x) lo = mid + 1;
        else hi = mid;
    }
    below[c] = lo;
    if (!le) return;
    hi = n;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if ((map_key(type, keys[mid]) & mask) <= x) lo = mid + 1;
        else hi = mid;
    }
    le[c] = lo;
}

/* How many of a's elements the first d outputs of the stable merge of a
 * and b take (ties: a first), knowing that it lies in [lo, hi]. */
template <typename K>
__device__ size_t merge_path_in(const K *a, size_t na, const K *b, size_t nb, size_t d, size_t lo, size_t hi,
                                int type, uint64_t mask)
{
    if (d > nb && d - nb > lo) lo = d - nb;
    if (d < hi) hi = d;
    if (na < hi) hi = na;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if ((map_key(type, a[mid]) & mask) <= (map_key(type, b[d - 1 - mid]) & mask)) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* splits[q] = the merge path at output q * kTile, q = 0..tiles, in two
 * steps: every kCoarse-th one over the whole range, then the others between
 * their coarse neighbours (the path is monotone), so that most searches
 * take half the steps: each step of the peer's side is a load over the
 * link. */
constexpr size_t kCoarse = 64;

template <typename K>
__global__ void merge_splits_coarse(const K *a, size_t na, const K *b, size_t nb, size_t tiles, int type,
                                    uint64_t mask, size_t *splits)
{
    const size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t coarse = (tiles + kCoarse - 1) / kCoarse;
    if (t > coarse) return;
    const size_t q = t * kCoarse < tiles ? t * kCoarse : tiles;
    const size_t d = q * kTile < na + nb ? q * kTile : na + nb;
    splits[q] = merge_path_in(a, na, b, nb, d, 0, na, type, mask);
}

template <typename K>
__global__ void merge_splits_fine(const K *a, size_t na, const K *b, size_t nb, size_t tiles, int type,
                                  uint64_t mask, size_t *splits)
{
    const size_t q = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (q >= tiles || q % kCoarse == 0) return;
    const size_t q0 = q / kCoarse * kCoarse, q1 = q0 + kCoarse < tiles ? q0 + kCoarse : tiles;
    const size_t d = q * kTile;
    splits[q] = merge_path_in(a, na, b, nb, d, splits[q0], splits[q1], type, mask);
}

/* One tile of the merge: its pieces of a and b are loaded into shared
 * memory with coalesced reads (the peer's over NVLink), merged there, and
 * written out coalesced. V = char: keys only. */
template <typename K, typename V>
__global__ void __launch_bounds__(kThreads)
    merge_tiles(const K *a, size_t na, const K *b, size_t nb, const V *va, const V *vb, K *out, V *vout,
                const size_t *splits, int type, uint64_t mask)
{
    constexpr bool kValues = sizeof(V) > 1;
    __shared__ K sk[kTile];
    __shared__ V sv[kValues ? kTile : 1];
    const size_t d0 = (size_t)blockIdx.x * kTile;
    const size_t d1 = d0 + kTile < na + nb ? d0 + kTile : na + nb;
    const size_t a0 = splits[blockIdx.x], a1 = splits[blockIdx.x + 1];
    const size_t b0 = d0 - a0;
    const int la = (int)(a1 - a0), len = (int)(d1 - d0), lb = len - la;
    /* a fixed trip count, so that every load of a thread is in flight at
     * once (the peer's answer takes microseconds over NVLink) */
#pragma unroll
    for (int q = 0; q < kItems; q++) {
        const int t = q * kThreads + threadIdx.x;
        if (t < len) {
            sk[t] = t < la ? a[a0 + t] : b[b0 + t - la];
            if (kValues) sv[t] = t < la ? va[a0 + t] : vb[b0 + t - la];
        }
    }
    __syncthreads();
    const int diag = threadIdx.x * kItems < len ? threadIdx.x * kItems : len;
    int lo = diag > lb ? diag - lb : 0, hi = diag < la ? diag : la;
    while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if ((map_key(type, sk[mid]) & mask) <= (map_key(type, sk[la + diag - 1 - mid]) & mask)) lo = mid + 1;
        else hi = mid;
    }
    int i = lo, j = diag - lo;
    K rk[kItems];
    V rv[kItems];
#pragma unroll
    for (int q = 0; q < kItems; q++) {
        if (diag + q >= len) break;
        const bool take_a =
            i < la && (j >= lb || (map_key(type, sk[i]) & mask) <= (map_key(type, sk[la + j]) & mask));
        const int src = take_a ? i++ : la + j++;
        rk[q] = sk[src];
        if (kValues) rv[q] = sv[src];
    }
    __syncthreads();
#pragma unroll
    for (int q = 0; q < kItems; q++) {
        if (diag + q >= len) break;
        sk[diag + q] = rk[q];
        if (kValues) sv[diag + q] = rv[q];
    }
    __syncthreads();
#pragma unroll
    for (int q = 0; q < kItems; q++) {
        const int t = q * kThreads + threadIdx.x;
        if (t < len) {
            out[d0 + t] = sk[t];
            if (kValues) vout[d0 + t] = sv[t];
        }
    }
}

/* Whether device j's merge reads shard i where it lies (peer loads, which
 * measured ahead of bulk copies then a local merge: docs/perf/scale.md), or
 * copies it over first (devices that are not peers). */
bool loads_from(const gpk_ctx *ctx, int j, int i) { return i == j || ctx->peer[j][i]; }

/* Temp of shard i: [probes | below | le | splits] then a region that the
 * local sort uses first and the merge after: [output (out_in_temp only) |
 * tree buffer | gathered pieces]. */
struct Layout {
    size_t probes, below, le, splits, region, sort_bytes, merge, tree, gather, total;
    size_t out;  /* out_in_temp: where the output goes */
    size_t dist; /* lsd: the passes' spare and tables */
    /* part (from region, over merge's scratch: a fallback to merge starts
     * after the partition, which leaves the shards as they were): X, W,
     * the partition's temp, the bucket sorts' temps, the straddling
     * bucket's buffer; the digits' probes and starts where the splitters'
     * go */
    size_t px, pxv, pw, pwv, pt, pt_bytes, ps, ps_bytes, pst, pstv;
    unsigned part_shift; /* 0: no part plan */
};

/* Temp of shard i in the lsd plan: [output (out_in_temp only) | the
 * passes' spare and tables]. */
Layout lsd_layout(int k, size_t n_i, size_t m_i, unsigned kw, unsigned vw, int out_in_temp)
{
    Layout L;
    memset(&L, 0, sizeof L);
    L.out = 0;
    L.dist = out_in_temp ? gpk__align_up(m_i * kw, 256) + gpk__align_up(m_i * vw, 256) : 0;
    L.total = L.dist + gpk__radix_cuda_dist_temp(n_i, m_i, kw, vw, k);
    return L;
}

Layout layout(gpk_ctx *ctx, int i, int k, size_t n_i, size_t m_i, unsigned kw, unsigned vw,
              const gpk_radix_opts *o, int out_in_temp, int plan)
{
    if (plan == GPK_MULTI_PLAN_LSD) return lsd_layout(k, n_i, m_i, kw, vw, out_in_temp);
    Layout L;
    memset(&L, 0, sizeof L);
    const size_t most = (size_t)(k > 1 ? k - 1 : 1) * kProbes;
    L.probes = 0;
    L.below = gpk__align_up(most * 8, 256);
    L.le = L.below + gpk__align_up(most * 8, 256);
    L.splits = L.le + gpk__align_up(most * 8, 256);
    L.region = L.splits + gpk__align_up((m_i / kTile + 2) * sizeof(size_t), 256);
    gpk_ctx *part = ctx->part[i];
    void *dummy = (void *)(uintptr_t)256; /* in place: the same pointer twice; not touched by the query */
    L.sort_bytes = 0;
    gpk_status s = vw
        ? gpk_cuda_sort_pairs(part, NULL, &L.sort_bytes, (gpk_type)(kw == 8 ? GPK_U64 : GPK_U32), dummy,
                              dummy, vw, dummy, dummy, n_i, o, 0, 0)
        : gpk_cuda_sort_keys(part, NULL, &L.sort_bytes, (gpk_type)(kw == 8 ? GPK_U64 : GPK_U32), dummy, dummy,
                             n_i, o, 0, 0);
    if (s != GPK_OK) L.sort_bytes = 0; /* the sort itself reports it */
    const size_t copy = gpk__align_up(m_i * kw, 256) + gpk__align_up(m_i * vw, 256);
    L.tree = k > 2 ? copy : 0;
    int gather = 0;
    for (int j = 0; j < k; j++) gather |= !loads_from(ctx, i, j);
    L.gather = gather ? copy : 0;
    L.out = L.region;
    L.merge = L.region + (out_in_temp ? copy : 0);
    const size_t merge_bytes = L.merge - L.region + L.tree + L.gather;
    L.total = L.region + (L.sort_bytes > merge_bytes ? L.sort_bytes : merge_bytes);
    const unsigned bits = o->key_bits ? o->key_bits : 8 * kw;
    if (plan == GPK_MULTI_PLAN_PART && !out_in_temp && bits > GPK_MULTI_PART_BITS) {
        const size_t cap = gpk__multi_part_cap(m_i), work = m_i + cap;
        const gpk_type t = (gpk_type)(kw == 8 ? GPK_U64 : GPK_U32);
        void *a = (void *)(uintptr_t)256,
             *b = (void *)(uintptr_t)512; /* out of place; not touched by the queries */
        L.part_shift = bits - GPK_MULTI_PART_BITS;
        L.pt_bytes = L.ps_bytes = 0;
        if (gpk__radix_cuda_sort_bits(part, NULL, &L.pt_bytes, t, a, b, vw, vw ? a : NULL, vw ? b : NULL, n_i,
                                      L.part_shift, bits, 0, NULL) != GPK_OK ||
            gpk__radix_cuda_sort_bits(part, NULL, &L.ps_bytes, t, a, b, vw, vw ? a : NULL, vw ? b : NULL, cap,
                                      0, L.part_shift, 0, NULL) != GPK_OK) {
            L.part_shift = 0; /* the plan falls back to merge */
            return L;
        }
        L.pt_bytes = gpk__align_up(L.pt_bytes, 256);
        L.ps_bytes = gpk__align_up(L.ps_bytes, 256);
        L.px = L.region;
        L.pxv = L.px + gpk__align_up(n_i * kw, 256);
        L.pw = L.pxv + gpk__align_up(n_i * vw, 256);
        L.pwv = L.pw + gpk__align_up(work * kw, 256);
        L.pt = L.pwv + gpk__align_up(work * vw, 256);
        L.ps = L.pt + L.pt_bytes;
        L.pst = L.ps + GPK_MULTI_PART_STREAMS * L.ps_bytes;
        L.pstv = L.pst + gpk__align_up(cap * kw, 256);
        const size_t end = L.pstv + gpk__align_up(cap * vw, 256);
        if (end > L.total) L.total = end;
    }
    return L;
}

struct Impl {
    int caller_device; /* current when the call began, current again after */
    /* per device: merge start, pieces copied, first searches done, merge end */
    cudaEvent_t ev[GPK_MAX_DEVICES][4];
    bool timed[GPK_MAX_DEVICES];
    Layout L[GPK_MAX_DEVICES];
    unsigned long long *host_counts; /* k * most * 2, for rank() */
    gpk_radix_opts o;
    gpk_radix_dist dist[GPK_MAX_DEVICES]; /* lsd: each device's job */
    uint64_t *pinned;                     /* lsd: d->lsd_counts, _bases, _next */
    /* lsd: per device, events around its histogram (ev[i][0..1]) and the
     * current pass (ev[i][2..3]); the passes' times so far */
    double pass_ms[GPK_MAX_DEVICES][64];
    /* part: per device, copy streams (to itself, to the others), the
     * bucket sorts' streams, an event per digit moved from it, its
     * partition's end; which digits it moved; the next sort stream */
    bool part_ready;
    cudaStream_t copy_local[GPK_MAX_DEVICES], copy_peer[GPK_MAX_DEVICES];
    cudaStream_t sort_st[GPK_MAX_DEVICES][GPK_MULTI_PART_STREAMS];
    cudaEvent_t moved[GPK_MAX_DEVICES][1u << GPK_MULTI_PART_BITS], part_done[GPK_MAX_DEVICES];
    bool moved_flag[GPK_MAX_DEVICES][1u << GPK_MULTI_PART_BITS];
    int next_sort[GPK_MAX_DEVICES];
    uint64_t *part_pinned; /* k x D digit starts */
};

gpk_ctx *part_of(gpk_multi_dev *d, int i) { return d->ctx->part[i]; }
cudaStream_t stream_of(gpk_multi_dev *d, int i) { return ((gpk_cuda_state *)d->ctx->part[i]->cuda)->stream; }

gpk_status fail(gpk_multi_dev *d, int i, cudaError_t e, const char *what)
{
    char buf[160];
    snprintf(buf, sizeof buf, "multi-device sort, device %d (CUDA %d): %s", i, part_of(d, i)->device, what);
    return gpk__cuda_fail(d->ctx, e, buf);
}

gpk_status enter(gpk_multi_dev *d, int i)
{
    cudaError_t e = cudaSetDevice(part_of(d, i)->device);
    return e == cudaSuccess ? GPK_OK : fail(d, i, e, "cudaSetDevice");
}

gpk_status cuda_sort(gpk_multi_dev *d, int i)
{
    Impl *im = (Impl *)d->impl;
    gpk_shard *sh = &d->shards[i];
    if (sh->n < 2) return GPK_OK;
    GPK_CHECK(enter(d, i));
    gpk_ctx *part = part_of(d, i);
    size_t bytes = im->L[i].sort_bytes;
    void *temp = (char *)sh->temp + im->L[i].region;
    gpk_status s = d->value_width
        ? gpk_cuda_sort_pairs(part, temp, &bytes, d->key_type, sh->keys, sh->keys, d->value_width, sh->values,
                              sh->values, sh->n, &im->o, 0, stream_of(d, i))
        : gpk_cuda_sort_keys(part, temp, &bytes, d->key_type, sh->keys, sh->keys, sh->n, &im->o, 0,
                             stream_of(d, i));
    if (s != GPK_OK) return gpk__fail(d->ctx, s, "multi-device sort, device %d: %s", i, gpk_last_error(part));
    return GPK_OK;
}

gpk_status cuda_rank(gpk_multi_dev *d, const uint64_t *probes, size_t m, uint64_t *below, uint64_t *le)
{
    Impl *im = (Impl *)d->impl;
    for (int i = 0; i < d->k; i++) {
        GPK_CHECK(enter(d, i));
        gpk_shard *sh = &d->shards[i];
        char *t = (char *)sh->temp;
        uint64_t *d_probes = (uint64_t *)(t + im->L[i].probes);
        unsigned long long *d_below = (unsigned long long *)(t + im->L[i].below);
        unsigned long long *d_le = le ? (unsigned long long *)(t + im->L[i].le) : NULL;
        cudaStream_t st = stream_of(d, i);
        cudaError_t e = cudaMemcpyAsync(d_probes, probes, m * 8, cudaMemcpyHostToDevice, st);
        if (e != cudaSuccess) return fail(d, i, e, "probes to the device");
        const int blocks = (int)((m + 127) / 128);
        if (d->key_width == 4)
            rank_probes<<<blocks, 128, 0, st>>>((const uint32_t *)sh->keys, sh->n, d_probes, (int)m,
                                                (int)d->key_type, d->mask, d_below, d_le);
        else
            rank_probes<<<blocks, 128, 0, st>>>((const uint64_t *)sh->keys, sh->n, d_probes, (int)m,
                                                (int)d->key_type, d->mask, d_below, d_le);
        e = cudaGetLastError();
        if (e != cudaSuccess) return fail(d, i, e, "rank kernel launch");
        unsigned long long *h = im->host_counts + (size_t)i * m * 2;
        e = cudaMemcpyAsync(h, d_below, m * 8, cudaMemcpyDeviceToHost, st);
        if (e == cudaSuccess && le) e = cudaMemcpyAsync(h + m, d_le, m * 8, cudaMemcpyDeviceToHost, st);
        if (e != cudaSuccess) return fail(d, i, e, "counts to the host");
    }
    for (int i = 0; i < d->k; i++) {
        cudaError_t e = cudaStreamSynchronize(stream_of(d, i));
        if (e != cudaSuccess) return fail(d, i, e, "rank");
        const unsigned long long *h = im->host_counts + (size_t)i * m * 2;
        for (size_t c = 0; c < m; c++) {
            below[(size_t)i * m + c] = h[c];
            if (le) le[(size_t)i * m + c] = h[m + c];
        }
    }
    return GPK_OK;
}

struct Run {
    const void *keys, *vals;
    size_t n;
};

template <typename K, typename V>
cudaError_t launch_merge(const Run &a, const Run &b, void *out, void *vout, size_t *splits, int type,
                         uint64_t mask, cudaStream_t st, cudaEvent_t searched)
{
    const size_t total = a.n + b.n, tiles = (total + kTile - 1) / kTile;
    const size_t coarse = (tiles + kCoarse - 1) / kCoarse;
    merge_splits_coarse<K><<<(unsigned)((coarse + 1 + 255) / 256), 256, 0, st>>>(
        (const K *)a.keys, a.n, (const K *)b.keys, b.n, tiles, type, mask, splits);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return e;
    merge_splits_fine<K><<<(unsigned)((tiles + 255) / 256), 256, 0, st>>>(
        (const K *)a.keys, a.n, (const K *)b.keys, b.n, tiles, type, mask, splits);
    e = cudaGetLastError();
    if (e == cudaSuccess && searched) e = cudaEventRecord(searched, st);
    if (e != cudaSuccess) return e;
    merge_tiles<K, V><<<(unsigned)tiles, kThreads, 0, st>>>((const K *)a.keys, a.n, (const K *)b.keys, b.n,
                                                            (const V *)a.vals, (const V *)b.vals, (K *)out,
                                                            (V *)vout, splits, type, mask);
    return cudaGetLastError();
}

cudaError_t merge2(gpk_multi_dev *d, const Run &a, const Run &b, void *out, void *vout, size_t *splits,
                   cudaStream_t st, cudaEvent_t searched)
{
    const int t = (int)d->key_type;
    const uint64_t mk = d->mask;
    if (d->key_width == 4) {
        if (d->value_width == 0)
            return launch_merge<uint32_t, char>(a, b, out, vout, splits, t, mk, st, searched);
        if (d->value_width == 4)
            return launch_merge<uint32_t, uint32_t>(a, b, out, vout, splits, t, mk, st, searched);
        return launch_merge<uint32_t, uint64_t>(a, b, out, vout, splits, t, mk, st, searched);
    }
    if (d->value_width == 0)
        return launch_merge<uint64_t, char>(a, b, out, vout, splits, t, mk, st, searched);
    if (d->value_width == 4)
        return launch_merge<uint64_t, uint32_t>(a, b, out, vout, splits, t, mk, st, searched);
    return launch_merge<uint64_t, uint64_t>(a, b, out, vout, splits, t, mk, st, searched);
}

gpk_status cuda_merge(gpk_multi_dev *d, int j, const size_t *lo, const size_t *hi)
{
    Impl *im = (Impl *)d->impl;
    const Layout &L = im->L[j];
    gpk_shard *out = &d->shards[j];
    const size_t kw = d->key_width, vw = d->value_width;
    const size_t m = gpk_shard_share(d->total, d->k, j);
    if (m == 0) return GPK_OK;
    GPK_CHECK(enter(d, j));
    cudaStream_t st = stream_of(d, j);
    char *t = (char *)out->temp;
    size_t *splits = (size_t *)(t + L.splits);
    char *tree_k = t + L.merge, *tree_v = tree_k + gpk__align_up(m * kw, 256);
    char *gather_k = t + L.merge + L.tree, *gather_v = gather_k + gpk__align_up(m * kw, 256);
    Run runs[GPK_MAX_DEVICES];
    int r = 0;
    size_t gathered = 0;
    cudaEvent_t *ev = im->ev[j];
    cudaError_t e = cudaEventRecord(ev[0], st);
    if (e != cudaSuccess) return fail(d, j, e, "cudaEventRecord");
    for (int i = 0; i < d->k; i++) {
        const size_t len = hi[i] - lo[i];
        if (len == 0) continue;
        const gpk_shard *src = &d->shards[i];
        Run run = {(const char *)src->keys + lo[i] * kw, vw ? (const char *)src->values + lo[i] * vw : NULL,
                   len};
        if (!loads_from(d->ctx, j, i)) {
            /* no peer loads between these two: copy the piece over first */
            const int dj = part_of(d, j)->device, di = part_of(d, i)->device;
            e = cudaMemcpyPeerAsync(gather_k + gathered * kw, dj, run.keys, di, len * kw, st);
            if (e == cudaSuccess && vw)
                e = cudaMemcpyPeerAsync(gather_v + gathered * vw, dj, run.vals, di, len * vw, st);
            if (e != cudaSuccess) return fail(d, j, e, "cudaMemcpyPeerAsync");
            run.keys = gather_k + gathered * kw;
            run.vals = vw ? gather_v + gathered * vw : NULL;
            gathered += len;
        }
        runs[r++] = run;
    }
    e = cudaEventRecord(ev[1], st);
    if (e != cudaSuccess) return fail(d, j, e, "cudaEventRecord");
    int rounds = 0;
    while ((1 << rounds) < r) rounds++;
    if (rounds == 0) {
        e = cudaMemcpyAsync(out->keys_out, runs[0].keys, m * kw, cudaMemcpyDefault, st);
        if (e == cudaSuccess && vw)
            e = cudaMemcpyAsync(out->values_out, runs[0].vals, m * vw, cudaMemcpyDefault, st);
        if (e == cudaSuccess) e = cudaEventRecord(ev[2], st);
        if (e == cudaSuccess) e = cudaEventRecord(ev[3], st);
        if (e != cudaSuccess) return fail(d, j, e, "copying the one piece");
        im->timed[j] = true;
        return GPK_OK;
    }
    /* the last round writes the output, the one before the tree buffer, ... */
    for (int round = 1; round <= rounds; round++) {
        const bool to_out = (rounds - round) % 2 == 0;
        char *dk = to_out ? (char *)out->keys_out : tree_k;
        char *dv = to_out ? (char *)out->values_out : tree_v;
        if (!to_out && L.tree == 0)
            return gpk__fail(d->ctx, GPK_EDEVICE, "multi-device sort: no tree buffer");
        int next = 0;
        size_t at = 0;
        for (int q = 0; q < r; q += 2) {
            Run merged = {dk + at * kw, vw ? dv + at * vw : NULL, 0};
            if (q + 1 < r) {
                e = merge2(d, runs[q], runs[q + 1], dk + at * kw, vw ? dv + at * vw : NULL, splits, st,
                           round == 1 && q == 0 ? ev[2] : NULL);
                merged.n = runs[q].n + runs[q + 1].n;
            } else {
                e = cudaMemcpyAsync(dk + at * kw, runs[q].keys, runs[q].n * kw, cudaMemcpyDefault, st);
                if (e == cudaSuccess && vw)
                    e = cudaMemcpyAsync(dv + at * vw, runs[q].vals, runs[q].n * vw, cudaMemcpyDefault, st);
                merged.n = runs[q].n;
            }
            if (e != cudaSuccess) return fail(d, j, e, "merge");
            at += merged.n;
            runs[next++] = merged;
        }
        r = next;
    }
    e = cudaEventRecord(ev[3], st);
    if (e != cudaSuccess) return fail(d, j, e, "cudaEventRecord");
    im->timed[j] = true;
    return GPK_OK;
}

unsigned cuda_lsd_plan(gpk_multi_dev *d, unsigned *digits)
{
    return gpk__radix_cuda_dist_plan(&((Impl *)d->impl)->dist[0], digits);
}

gpk_status cuda_lsd_count(gpk_multi_dev *d, int i, uint64_t *counts)
{
    Impl *im = (Impl *)d->impl;
    GPK_CHECK(enter(d, i));
    gpk_ctx *part = part_of(d, i);
    cudaStream_t st = stream_of(d, i);
    cudaError_t e = cudaEventRecord(im->ev[i][0], st);
    if (e != cudaSuccess) return fail(d, i, e, "cudaEventRecord");
    const gpk_status s = gpk__radix_cuda_dist_count(part, &im->dist[i], (unsigned long long *)counts);
    if (s != GPK_OK) return gpk__fail(d->ctx, s, "multi-device sort, device %d: %s", i, gpk_last_error(part));
    e = cudaEventRecord(im->ev[i][1], st);
    return e == cudaSuccess ? GPK_OK : fail(d, i, e, "cudaEventRecord");
}

/* The time of device i's pass p - 1, which is done (the driver waited). */
void lsd_pass_time(gpk_multi_dev *d, int i, unsigned p)
{
    Impl *im = (Impl *)d->impl;
    float ms = 0;
    if (p > 0 && p <= 64 && cudaEventElapsedTime(&ms, im->ev[i][2], im->ev[i][3]) == cudaSuccess)
        im->pass_ms[i][p - 1] = ms;
    (void)cudaGetLastError();
}

gpk_status cuda_lsd_pass(gpk_multi_dev *d, int i, unsigned p, const uint64_t *bases, uint64_t *next)
{
    Impl *im = (Impl *)d->impl;
    GPK_CHECK(enter(d, i));
    lsd_pass_time(d, i, p);
    gpk_ctx *part = part_of(d, i);
    cudaStream_t st = stream_of(d, i);
    cudaError_t e = cudaEventRecord(im->ev[i][2], st);
    if (e != cudaSuccess) return fail(d, i, e, "cudaEventRecord");
    const gpk_status s = gpk__radix_cuda_dist_pass(part, &im->dist[i], p, (const unsigned long long *)bases,
                                                   (unsigned long long *)next);
    if (s != GPK_OK) return gpk__fail(d->ctx, s, "multi-device sort, device %d: %s", i, gpk_last_error(part));
    e = cudaEventRecord(im->ev[i][3], st);
    if (e != cudaSuccess) return fail(d, i, e, "cudaEventRecord");
    im->timed[i] = true;
    return GPK_OK;
}

char *temp_at(gpk_multi_dev *d, int i, size_t off) { return (char *)d->shards[i].temp + off; }

/* count keys (and values) from device `from` to device `to`: a copy
 * within a GPU, a peer copy between two */
cudaError_t copy_elems(gpk_multi_dev *d, int to, char *keys_to, char *vals_to, int from,
                       const char *keys_from, const char *vals_from, size_t count, cudaStream_t st)
{
    const int dt = part_of(d, to)->device, df = part_of(d, from)->device;
    const size_t kw = d->key_width, vw = d->value_width;
    cudaError_t e = dt == df ? cudaMemcpyAsync(keys_to, keys_from, count * kw, cudaMemcpyDeviceToDevice, st)
                             : cudaMemcpyPeerAsync(keys_to, dt, keys_from, df, count * kw, st);
    if (e == cudaSuccess && vw)
        e = dt == df ? cudaMemcpyAsync(vals_to, vals_from, count * vw, cudaMemcpyDeviceToDevice, st)
                     : cudaMemcpyPeerAsync(vals_to, dt, vals_from, df, count * vw, st);
    return e;
}

gpk_status cuda_part_partition(gpk_multi_dev *d, int i, unsigned shift, unsigned D, uint64_t *starts)
{
    Impl *im = (Impl *)d->impl;
    const Layout &L = im->L[i];
    const gpk_shard *sh = &d->shards[i];
    const unsigned vw = d->value_width;
    GPK_CHECK(enter(d, i));
    gpk_ctx *part = part_of(d, i);
    cudaStream_t st = stream_of(d, i);
    if (L.part_shift != shift)
        return gpk__fail(d->ctx, GPK_EDEVICE,
                         "multi-device sort: device %d's temp is "
                         "laid out for digit shift %u, not %u",
                         i, L.part_shift, shift);
    for (unsigned x = 0; x < D; x++) im->moved_flag[i][x] = false;
    im->next_sort[i] = 0;
    /* where each digit starts: X_i's keys below x << shift, found by the
     * splitters' binary searches (X_i is sorted by the digit). The probes
     * go first: a copy from pageable memory waits for the stream's work. */
    uint64_t probes[1u << GPK_MULTI_PART_BITS];
    for (unsigned x = 0; x < D; x++) probes[x] = (uint64_t)x << shift;
    uint64_t *d_probes = (uint64_t *)temp_at(d, i, L.probes);
    unsigned long long *d_starts = (unsigned long long *)temp_at(d, i, L.below);
    cudaError_t e = cudaMemcpyAsync(d_probes, probes, D * sizeof(uint64_t), cudaMemcpyHostToDevice, st);
    if (e != cudaSuccess) return fail(d, i, e, "digit probes to the device");
    size_t bytes = L.pt_bytes;
    const unsigned bits = shift + GPK_MULTI_PART_BITS;
    gpk_status s = gpk__radix_cuda_sort_bits(part, temp_at(d, i, L.pt), &bytes, d->key_type, sh->keys,
                                             temp_at(d, i, L.px), vw, vw ? sh->values : NULL,
                                             vw ? temp_at(d, i, L.pxv) : NULL, sh->n, shift, bits, 0, st);
    if (s != GPK_OK) return gpk__fail(d->ctx, s, "multi-device sort, device %d: %s", i, gpk_last_error(part));
    if (d->key_width == 4)
        rank_probes<<<(D + 127) / 128, 128, 0, st>>>((const uint32_t *)temp_at(d, i, L.px), sh->n, d_probes,
                                                     (int)D, (int)d->key_type, d->mask, d_starts, NULL);
    else
        rank_probes<<<(D + 127) / 128, 128, 0, st>>>((const uint64_t *)temp_at(d, i, L.px), sh->n, d_probes,
                                                     (int)D, (int)d->key_type, d->mask, d_starts, NULL);
    e = cudaGetLastError();
    if (e != cudaSuccess) return fail(d, i, e, "digit starts launch");
    e = cudaMemcpyAsync(starts, d_starts, D * sizeof(uint64_t), cudaMemcpyDeviceToHost, st);
    if (e != cudaSuccess) return fail(d, i, e, "digit starts to the host");
    e = cudaEventRecord(im->part_done[i], st);
    if (e == cudaSuccess) e = cudaStreamWaitEvent(im->copy_local[i], im->part_done[i], 0);
    if (e == cudaSuccess) e = cudaStreamWaitEvent(im->copy_peer[i], im->part_done[i], 0);
    if (e != cudaSuccess) return fail(d, i, e, "ordering the copies after the partition");
    return GPK_OK;
}

gpk_status cuda_part_move(gpk_multi_dev *d, int i, unsigned x, size_t from, int o, size_t to, size_t count)
{
    Impl *im = (Impl *)d->impl;
    const size_t kw = d->key_width, vw = d->value_width;
    GPK_CHECK(enter(d, i));
    cudaStream_t st = o == i ? im->copy_local[i] : im->copy_peer[i];
    cudaError_t e = copy_elems(
        d, o, temp_at(d, o, im->L[o].pw) + to * kw, temp_at(d, o, im->L[o].pwv) + to * vw, i,
        temp_at(d, i, im->L[i].px) + from * kw, temp_at(d, i, im->L[i].pxv) + from * vw, count, st);
    if (e == cudaSuccess) e = cudaEventRecord(im->moved[i][x], st);
    if (e != cudaSuccess) return fail(d, i, e, "moving a bucket");
    im->moved_flag[i][x] = true;
    return GPK_OK;
}

gpk_status cuda_part_sort(gpk_multi_dev *d, int o, unsigned x, size_t at, size_t count, size_t out_at,
                          size_t split, unsigned shift)
{
    Impl *im = (Impl *)d->impl;
    const Layout &L = im->L[o];
    const size_t kw = d->key_width, vw = d->value_width;
    GPK_CHECK(enter(d, o));
    gpk_ctx *part = part_of(d, o);
    const int q = im->next_sort[o]++ % GPK_MULTI_PART_STREAMS;
    cudaStream_t st = im->sort_st[o][q];
    cudaError_t e = cudaSuccess;
    for (int i = 0; i < d->k && e == cudaSuccess; i++)
        if (im->moved_flag[i][x]) e = cudaStreamWaitEvent(st, im->moved[i][x], 0);
    if (e != cudaSuccess) return fail(d, o, e, "a bucket sort waiting for its pieces");
    const bool whole = split == count;
    char *keys_to = whole ? (char *)d->shards[o].keys_out + out_at * kw : temp_at(d, o, L.pst);
    char *vals_to = !vw ? NULL
        : whole         ? (char *)d->shards[o].values_out + out_at * vw
                        : temp_at(d, o, L.pstv);
    size_t bytes = L.ps_bytes;
    gpk_status s = gpk__radix_cuda_sort_bits(part, temp_at(d, o, L.ps + (size_t)q * L.ps_bytes), &bytes,
                                             d->key_type, temp_at(d, o, L.pw) + at * kw, keys_to, vw,
                                             vw ? temp_at(d, o, L.pwv) + at * vw : NULL, vals_to, count, 0,
                                             shift, 0, st);
    if (s != GPK_OK) return gpk__fail(d->ctx, s, "multi-device sort, device %d: %s", o, gpk_last_error(part));
    if (whole) return GPK_OK;
    /* the bucket that straddles the end of output o: its head ends output
     * o, its tail starts output o + 1 */
    e = copy_elems(d, o, (char *)d->shards[o].keys_out + out_at * kw,
                   vw ? (char *)d->shards[o].values_out + out_at * vw : NULL, o, keys_to, vals_to, split, st);
    if (e == cudaSuccess)
        e = copy_elems(d, o + 1, (char *)d->shards[o + 1].keys_out, (char *)d->shards[o + 1].values_out, o,
                       keys_to + split * kw, vw ? vals_to + split * vw : NULL, count - split, st);
    if (e != cudaSuccess) return fail(d, o, e, "the straddling bucket's copies");
    return GPK_OK;
}

gpk_status cuda_wait(gpk_multi_dev *d)
{
    Impl *im = (Impl *)d->impl;
    gpk_status s = GPK_OK;
    for (int i = 0; i < d->k; i++) {
        cudaError_t e = cudaSetDevice(part_of(d, i)->device);
        if (e == cudaSuccess) e = cudaStreamSynchronize(stream_of(d, i));
        if (im->part_ready) {
            if (e == cudaSuccess) e = cudaStreamSynchronize(im->copy_local[i]);
            if (e == cudaSuccess) e = cudaStreamSynchronize(im->copy_peer[i]);
            for (int q = 0; q < GPK_MULTI_PART_STREAMS && e == cudaSuccess; q++)
                e = cudaStreamSynchronize(im->sort_st[i][q]);
        }
        if (e != cudaSuccess && s == GPK_OK) s = fail(d, i, e, "waiting for the device");
    }
    return s;
}

} // namespace

static size_t multi_cuda_temp(gpk_ctx *ctx, int i, int k, size_t n_i, size_t m_i, unsigned key_width,
                              unsigned value_width, const gpk_radix_opts *o, int out_in_temp, int plan)
{
    return layout(ctx, i, k, n_i, m_i, key_width, value_width, o, out_in_temp, plan).total;
}

static gpk_status multi_cuda_open(gpk_multi_dev *d)
{
    Impl *im = (Impl *)calloc(1, sizeof(Impl));
    if (!im) return gpk__fail(d->ctx, GPK_ENOMEM, "multi-device sort: out of host memory");
    d->impl = im;
    if (cudaGetDevice(&im->caller_device) != cudaSuccess) {
        (void)cudaGetLastError();
        im->caller_device = d->ctx->device;
    }
    im->o = (gpk_radix_opts)GPK_RADIX_OPTS_INIT;
    im->o.key_bits = d->key_bits;
    im->o.radix_bits = d->radix_bits;
    im->o.algorithm = GPK_SORT_RADIX;
    for (int i = 0; i < d->k; i++) {
        const size_t m = gpk_shard_share(d->total, d->k, i);
        im->L[i] = layout(d->ctx, i, d->k, d->shards[i].n, m, d->key_width, d->value_width, &im->o,
                          d->out_in_temp, d->plan);
        if (d->out_in_temp) {
            /* merge: the output takes the sort's scratch once the sort is
             * done; lsd: it has its own place */
            char *t = (char *)d->shards[i].temp + im->L[i].out;
            d->shards[i].keys_out = t;
            d->shards[i].values_out = d->value_width ? t + gpk__align_up(m * d->key_width, 256) : NULL;
        }
    }
    for (int i = 0; i < d->k; i++) {
        GPK_CHECK(enter(d, i));
        for (int q = 0; q < 4; q++) {
            cudaError_t e = cudaEventCreate(&im->ev[i][q]);
            if (e != cudaSuccess) {
                im->ev[i][q] = NULL;
                return fail(d, i, e, "cudaEventCreate");
            }
        }
    }
    const size_t most = (size_t)(d->k > 1 ? d->k - 1 : 1) * kProbes;
    im->host_counts = (unsigned long long *)malloc((size_t)d->k * most * 2 * sizeof(unsigned long long));
    if (!im->host_counts) return gpk__fail(d->ctx, GPK_ENOMEM, "multi-device sort: out of host memory");
    d->probes = GPK_MULTI_PROBES;
    d->sort = cuda_sort;
    d->rank = cuda_rank;
    d->merge = cuda_merge;
    d->wait = cuda_wait;
    d->lsd_plan = cuda_lsd_plan;
    d->lsd_count = cuda_lsd_count;
    d->lsd_pass = cuda_lsd_pass;
    d->part_partition = cuda_part_partition;
    d->part_move = cuda_part_move;
    d->part_sort = cuda_part_sort;
    if (d->plan == GPK_MULTI_PLAN_PART)
        for (int i = 0; i < d->k; i++)
            if (!im->L[i].part_shift) d->plan = GPK_MULTI_PLAN_MERGE; /* the temp queries failed: merge */
    if (d->plan == GPK_MULTI_PLAN_PART) {
        const unsigned D = 1u << GPK_MULTI_PART_BITS;
        cudaError_t e = cudaMallocHost((void **)&im->part_pinned, (size_t)d->k * D * sizeof(uint64_t));
        if (e != cudaSuccess) {
            im->part_pinned = NULL;
            return gpk__cuda_fail(d->ctx, e, "multi-device sort: cudaMallocHost of the digit counts");
        }
        d->part_starts = im->part_pinned;
        for (int i = 0; i < d->k; i++) {
            GPK_CHECK(enter(d, i));
            e = cudaStreamCreateWithFlags(&im->copy_local[i], cudaStreamNonBlocking);
            if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&im->copy_peer[i], cudaStreamNonBlocking);
            for (int q = 0; q < GPK_MULTI_PART_STREAMS && e == cudaSuccess; q++)
                e = cudaStreamCreateWithFlags(&im->sort_st[i][q], cudaStreamNonBlocking);
            if (e == cudaSuccess) e = cudaEventCreateWithFlags(&im->part_done[i], cudaEventDisableTiming);
            for (unsigned x = 0; x < D && e == cudaSuccess; x++)
                e = cudaEventCreateWithFlags(&im->moved[i][x], cudaEventDisableTiming);
            im->part_ready = true; /* close() destroys what is not NULL */
            if (e != cudaSuccess) return fail(d, i, e, "the part plan's streams and events");
        }
    }
    if (d->plan == GPK_MULTI_PLAN_LSD) {
        const size_t words = (size_t)d->k * GPK_MULTI_MAX_DIGITS * (2 + (size_t)d->k);
        cudaError_t e = cudaMallocHost((void **)&im->pinned, words * sizeof(uint64_t));
        if (e != cudaSuccess) {
            im->pinned = NULL;
            return gpk__cuda_fail(d->ctx, e, "multi-device sort: cudaMallocHost of the digit counts");
        }
        d->lsd_counts = im->pinned;
        d->lsd_bases = im->pinned + (size_t)d->k * GPK_MULTI_MAX_DIGITS;
        d->lsd_next = d->lsd_bases + (size_t)d->k * GPK_MULTI_MAX_DIGITS;
        size_t at = 0;
        for (int i = 0; i < d->k; i++) {
            gpk_radix_dist *j = &im->dist[i];
            const gpk_shard *sh = &d->shards[i];
            memset(j, 0, sizeof *j);
            j->key_type = d->key_type;
            j->key_width = d->key_width;
            j->value_width = d->value_width;
            j->key_bits = d->key_bits;
            j->radix_bits = d->radix_bits;
            j->keys = sh->keys;
            j->values = d->value_width ? sh->values : NULL;
            j->n = sh->n;
            j->total = d->total;
            j->temp = (char *)sh->temp + im->L[i].dist;
            j->self = i;
            j->k = d->k;
        }
        for (int q = 0; q < d->k; q++) {
            const size_t m = gpk_shard_share(d->total, d->k, q);
            void *spare_keys, *spare_vals;
            gpk__radix_cuda_dist_spare((char *)d->shards[q].temp + im->L[q].dist, m, d->key_width,
                                       &spare_keys, &spare_vals);
            for (int i = 0; i < d->k; i++) {
                im->dist[i].bounds[q] = at;
                im->dist[i].keys_out[q] = m ? d->shards[q].keys_out : NULL;
                im->dist[i].values_out[q] = m && d->value_width ? d->shards[q].values_out : NULL;
                im->dist[i].keys_alt[q] = m ? spare_keys : NULL;
                im->dist[i].values_alt[q] = m && d->value_width ? spare_vals : NULL;
            }
            at += m;
        }
        for (int i = 0; i < d->k; i++) im->dist[i].bounds[d->k] = at;
    }
    /* the caller's writes of the inputs (any stream, the legacy one
     * included) come first: the context's streams do not wait for them */
    for (int i = 0; i < d->k; i++) {
        GPK_CHECK(enter(d, i));
        cudaError_t e = cudaDeviceSynchronize();
        if (e != cudaSuccess) return fail(d, i, e, "cudaDeviceSynchronize before the sort");
    }
    return GPK_OK;
}

static void multi_cuda_close(gpk_multi_dev *d)
{
    Impl *im = (Impl *)d->impl;
    if (!im) return;
    /* the phases, from the events of a completed sort: the slowest device
     * (merge: copies, searches, tiles; lsd: the histogram; the passes) */
    gpk_multi_stats *ms = d->stats;
    ms->copy_ms = ms->search_ms = ms->tiles_ms = 0;
    ms->hist_ms = ms->pass_sum_ms = ms->last_ms = 0;
    const unsigned passes = ms->passes > 0 && ms->passes <= 64 ? (unsigned)ms->passes : 0;
    for (int i = 0; i < d->k; i++) {
        bool ok = im->timed[i] && cudaSetDevice(part_of(d, i)->device) == cudaSuccess;
        if (ok && d->plan == GPK_MULTI_PLAN_LSD) {
            float hist = 0;
            if (cudaEventElapsedTime(&hist, im->ev[i][0], im->ev[i][1]) == cudaSuccess)
                ms->hist_ms = hist > ms->hist_ms ? hist : ms->hist_ms;
            lsd_pass_time(d, i, passes);
        } else if (ok) {
            float part[3] = {0, 0, 0};
            for (int q = 0; q < 3 && ok; q++)
                ok = cudaEventElapsedTime(&part[q], im->ev[i][q], im->ev[i][q + 1]) == cudaSuccess;
            if (ok) {
                ms->copy_ms = part[0] > ms->copy_ms ? part[0] : ms->copy_ms;
                ms->search_ms = part[1] > ms->search_ms ? part[1] : ms->search_ms;
                ms->tiles_ms = part[2] > ms->tiles_ms ? part[2] : ms->tiles_ms;
            }
        }
        for (int q = 0; q < 4; q++)
            if (im->ev[i][q]) (void)cudaEventDestroy(im->ev[i][q]);
    }
    if (d->plan == GPK_MULTI_PLAN_LSD)
        for (unsigned p = 0; p < passes; p++) {
            double most = 0;
            for (int i = 0; i < d->k; i++) most = im->pass_ms[i][p] > most ? im->pass_ms[i][p] : most;
            ms->pass_sum_ms += most;
            if (p + 1 == passes) ms->last_ms = most;
        }
    for (int i = 0; i < d->k && im->part_ready; i++) {
        if (cudaSetDevice(part_of(d, i)->device) != cudaSuccess) continue;
        if (im->copy_local[i]) (void)cudaStreamDestroy(im->copy_local[i]);
        if (im->copy_peer[i]) (void)cudaStreamDestroy(im->copy_peer[i]);
        for (int q = 0; q < GPK_MULTI_PART_STREAMS; q++)
            if (im->sort_st[i][q]) (void)cudaStreamDestroy(im->sort_st[i][q]);
        if (im->part_done[i]) (void)cudaEventDestroy(im->part_done[i]);
        for (unsigned x = 0; x < (1u << GPK_MULTI_PART_BITS); x++)
            if (im->moved[i][x]) (void)cudaEventDestroy(im->moved[i][x]);
    }
    if (im->part_pinned) (void)cudaFreeHost(im->part_pinned);
    (void)cudaGetLastError();
    (void)cudaSetDevice(im->caller_device);
    free(im->host_counts);
    if (im->pinned) (void)cudaFreeHost(im->pinned);
    free(im);
    d->impl = NULL;
}

/* ---- the host API over the devices ----------------------------------------- */

namespace {

struct HostCopy {
    gpk_ctx *part;
    void *dev_keys, *dev_vals;
    void *host_keys, *host_vals;
    size_t kbytes, vbytes;
    int to_device;
    gpk_status s;
    char err[GPK_ERRLEN];
};

void *host_copy(void *arg)
{
    HostCopy *c = (HostCopy *)arg;
    gpk_cuda_state *st = (gpk_cuda_state *)c->part->cuda;
    c->s = GPK_OK;
    cudaError_t e = cudaSetDevice(c->part->device);
    if (e != cudaSuccess) c->s = gpk__cuda_fail(c->part, e, "cudaSetDevice");
    if (c->s == GPK_OK && c->kbytes)
        c->s = c->to_device
            ? gpk__cuda_copy_to_device(c->part, c->dev_keys, c->host_keys, c->kbytes, st->stream)
            : gpk__cuda_copy_to_host(c->part, c->host_keys, c->dev_keys, c->kbytes, st->stream);
    if (c->s == GPK_OK && c->vbytes)
        c->s = c->to_device
            ? gpk__cuda_copy_to_device(c->part, c->dev_vals, c->host_vals, c->vbytes, st->stream)
            : gpk__cuda_copy_to_host(c->part, c->host_vals, c->dev_vals, c->vbytes, st->stream);
    if (c->s != GPK_OK) snprintf(c->err, sizeof c->err, "%s", gpk_last_error(c->part));
    return NULL;
}

/* Every device's copy at once, each on a thread of its own (each device
 * has its own link to the host). */
gpk_status copy_all(gpk_ctx *ctx, HostCopy *c, int k)
{
    pthread_t th[GPK_MAX_DEVICES];
    int started[GPK_MAX_DEVICES] = {0};
    for (int i = 1; i < k; i++) started[i] = pthread_create(&th[i], NULL, host_copy, &c[i]) == 0;
    host_copy(&c[0]);
    for (int i = 1; i < k; i++) {
        if (started[i]) pthread_join(th[i], NULL);
        else host_copy(&c[i]);
    }
    (void)cudaSetDevice(ctx->device);
    for (int i = 0; i < k; i++)
        if (c[i].s != GPK_OK)
            return gpk__fail(ctx, c[i].s, "sort over %d devices, device %d: %s", k, i, c[i].err);
    return GPK_OK;
}

} // namespace

static gpk_status sort_host(gpk_ctx *ctx, const gpk_radix_job *job, int *declined);

static gpk_status multi_sort_host_cuda(gpk_ctx *ctx, const gpk_radix_job *job, int *declined)
{
    int caller = ctx->device;
    if (cudaGetDevice(&caller) != cudaSuccess) (void)cudaGetLastError();
    const gpk_status s = sort_host(ctx, job, declined);
    (void)cudaSetDevice(caller);
    return s;
}

static gpk_status sort_host(gpk_ctx *ctx, const gpk_radix_job *job, int *declined)
{
    *declined = 0;
    const int k = ctx->n_devices;
    const size_t n = job->n, kw = job->key_width;
    void *values = job->sigma ? job->sigma : job->values;
    const size_t vw = job->sigma ? job->sigma_width : job->value_width;
    gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
    o.key_bits = job->key_bits;
    o.radix_bits = job->radix_bits;
    gpk_shard sh[GPK_MAX_DEVICES];
    memset(sh, 0, sizeof sh);
    for (int i = 0; i < k; i++) sh[i].n = gpk_shard_share(n, k, i);
    /* the device buffers: in, out and temp on every device, or decline */
    for (int i = 0; i < k; i++) {
        gpk_ctx *part = ctx->part[i];
        const size_t m = sh[i].n;
        size_t bytes[GPK_CUDA_SLOTS] = {0};
        /* the input, and the scratch, which holds the output after the
         * local sort: two copies of the slice (and tables), as on one GPU */
        bytes[GPK_CUDA_KEYS_A] = m * kw;
        bytes[GPK_CUDA_VALUES_A] = m * vw;
        bytes[GPK_CUDA_TEMP] = multi_cuda_temp(ctx, i, k, m, m, (unsigned)kw, (unsigned)vw, &o, 1,
                                               gpk__multi_plan(ctx, (unsigned)kw, 1, n));
        size_t need = 0;
        for (int q = 0; q < GPK_CUDA_SLOTS; q++) need += bytes[q];
        if (ctx->device_budget && need > ctx->device_budget) {
            *declined = 1;
            return GPK_OK;
        }
        cudaError_t e = cudaSetDevice(part->device);
        if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "cudaSetDevice");
        gpk_status s = gpk__cuda_reserve(part, bytes, "sort over several devices");
        if (s == GPK_ENOMEM) {
            gpk__clear_error(part);
            *declined = 1;
            (void)cudaSetDevice(ctx->device);
            return GPK_OK;
        }
        if (s != GPK_OK)
            return gpk__fail(ctx, s, "sort over %d devices, device %d: %s", k, i, gpk_last_error(part));
        gpk_cuda_state *st = (gpk_cuda_state *)part->cuda;
        sh[i].keys = st->buf[GPK_CUDA_KEYS_A];
        sh[i].values = vw ? st->buf[GPK_CUDA_VALUES_A] : NULL;
        sh[i].temp = st->buf[GPK_CUDA_TEMP];
        sh[i].temp_bytes = st->buf_bytes[GPK_CUDA_TEMP];
    }
    if (job->sigma) gpk__sigma_iota(job->sigma, job->sigma_width, 0, n);
    HostCopy c[GPK_MAX_DEVICES];
    memset(c, 0, sizeof c);
    size_t off = 0;
    for (int i = 0; i < k; i++) {
        c[i].part = ctx->part[i];
        c[i].dev_keys = sh[i].keys;
        c[i].dev_vals = sh[i].values;
        c[i].host_keys = (char *)job->keys + off * kw;
        c[i].host_vals = vw ? (char *)values + off * vw : NULL;
        c[i].kbytes = sh[i].n * kw;
        c[i].vbytes = sh[i].n * vw;
        c[i].to_device = 1;
        off += sh[i].n;
    }
    GPK_CHECK(copy_all(ctx, c, k));
    GPK_CHECK(gpk__sort_shards(ctx, job->key_type, vw, sh, &o, "sort", 1));
    for (int i = 0; i < k; i++) {
        c[i].dev_keys = sh[i].keys_out;
        c[i].dev_vals = sh[i].values_out;
        c[i].to_device = 0;
    }
    GPK_CHECK(copy_all(ctx, c, k));
    return GPK_OK; /* last_sort_path: gpk__sort_shards's, which names the plan */
}

extern "C" const gpk__multi_backend gpk__multi_cuda = {
    GPK_MULTI_PART_MIN_CUDA, (size_t)1 << 22,     1, multi_cuda_temp, multi_cuda_open,
    multi_cuda_close,        multi_sort_host_cuda};
