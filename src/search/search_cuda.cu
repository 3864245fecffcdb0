/* CUDA neighbourhood evaluation of the local search (Luong, Melab & Talbi
 * 2009, Algorithm 1: the CPU drives the search, the GPU evaluates the whole
 * neighbourhood, one thread per neighbour). Written before any GPU has run
 * it: built only with -DGPK_WITH_CUDA_SEARCH=ON (tests/test_search_cuda.c
 * compares every choice with the CPU scan's).
 *
 * Neighbours are numbered as in src/search/search_cpu.c: k -> (i, j) by the
 * paper's bijection (ported below to the device, the same integer
 * arithmetic as src/search/bijection.c), 1-flip: k is the bit. Each launch
 * covers a chunk [k0, k1) of the indices with a grid-stride loop, so huge
 * neighbourhoods (the paper stopped at 15000 cities) run as many bounded
 * launches.
 *
 * Deltas are the same exact integers as the CPU's:
 *  - QAP swap: the O(n) formula of gpk_qap_swap_delta per pair (the paper's
 *    evaluation; the host keeps Taillard's table for its own scan);
 *  - TSP 2-opt / swap: from the device distance matrix when the instance
 *    has one, else from the coordinates with TSPLIB95's formulas written
 *    with round-to-nearest intrinsics (__dsub_rn, __dmul_rn, __dadd_rn,
 *    __ddiv_rn, __dsqrt_rn), so no FMA contraction and the host's order of
 *    operations: bit-identical to src/search/tsp.c (x86-64-v2, no FMA
 *    there). GEO needs cos / acos, which differ from the host's libm in the
 *    last bits: GEO without a matrix is refused (the caller keeps the CPU);
 *  - PPP 1-flip / 2-flip: O(m) per thread. The histogram term changes only
 *    in the bins that rows leave or enter: each thread records its count
 *    changes in its own slice of a zeroed scratch array (interleaved,
 *    element b of thread t at b * T + t), sums |gap + change| - |gap| over
 *    the touched bins against the base gap H' - H (computed on the host per
 *    call) and zeroes what it touched.
 *
 * PAPER mode writes every delta of the chunk, copies them to the host and
 * chooses there with the CPU rule; OURS reduces (delta, k) in each block
 * (warp shuffles, then shared memory), then over the blocks into a
 * two-move accumulator kept on the device across chunks, and copies back
 * 32 bytes. Both give the CPU scan's pair: the minimum of (delta, k) over
 * all moves, and over the admissible ones (not tabu, or aspirated:
 * cost + delta < best). */
#include "search_run.h"
#include "bijection_inline.h"
#include "../core/cuda_internal.h"

#include <cuda_runtime.h>

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SC_BLOCK 256
#define SC_WARPS (SC_BLOCK / 32)
#define SC_CHUNK_MAX (1ull << 24)    /* neighbours per launch at most (PAPER: 128 MiB of deltas) */
#define SC_WORK_PER_LAUNCH (1ull << 32) /* neighbours x per-neighbour cost per launch */
#define SC_PPP_SCRATCH_BYTES (256ull << 20)

enum { NB_QAP_SWAP = 0, NB_TSP_SWAP = 1, NB_TSP_2OPT = 2, NB_PPP_FLIP1 = 3, NB_PPP_FLIP2 = 4 };

struct dmove {
    long long d;
    unsigned long long k;
};

/* Everything a kernel reads, passed by value. */
struct dev_problem {
    uint32_t n, m;
    uint64_t size;
    const long long *a, *b;       /* QAP */
    const int32_t *mat;           /* TSP matrix or NULL */
    const double *x, *y;          /* TSP coordinates */
    int weight;                   /* gpk_tsp_weight */
    const int8_t *pa;             /* PPP A, m x n */
    const int32_t *gap;           /* PPP H' - H for the current y, 2n + 1 */
    int32_t *scratch;             /* PPP per-thread bin changes, (2n + 1) x threads, zero */
    const uint32_t *perm;         /* QAP p / TSP tour */
    const int8_t *v;              /* PPP v */
    const int32_t *py;            /* PPP y */
    const unsigned long long *tabu;
    unsigned long long iteration;
    long long cost, best;
    int use_tabu;
};

struct gpk__search_cuda {
    gpk_ctx *ctx;
    cudaStream_t stream;
    int nbk;                       /* NB_* */
    gpk_problem_kind kind;
    gpk_neighbourhood nb;
    uint32_t n, m;
    uint64_t size, tabu_len, chunk_limit, chunk_cap; /* chunk_cap: the buffers' size */
    const gpk_ppp *ppp;
    dev_problem P;                 /* device pointers; per-call fields set in best_move */
    long long *d_a, *d_b;
    int32_t *d_mat, *d_gap, *d_scratch, *d_y;
    double *d_x, *d_yc;
    int8_t *d_pa, *d_v;
    uint32_t *d_perm;
    unsigned long long *d_tabu;
    long long *d_deltas;           /* PAPER: one chunk */
    dmove *d_blocks;               /* OURS: 2 per block */
    dmove *d_acc;                  /* OURS: any, adm */
    unsigned int grid_max;         /* blocks per launch (PPP: fixed, the scratch's threads) */
    int64_t *h_deltas;             /* PAPER: one chunk on the host */
    int32_t *h_gap;                /* PPP: 2n + 1 */
};

/* ---- device helpers ---- */

/* gpk_swap_index_to_pair on the device: the same arithmetic (bijection_inline.h). */
__device__ __forceinline__ void d_pair(uint64_t n, uint64_t k, uint32_t &i, uint32_t &j)
{
    search_index_to_pair(n, k, &i, &j);
}

__device__ __forceinline__ bool d_less(const dmove &a, const dmove &b)
{
    return a.d < b.d || (a.d == b.d && a.k < b.k);
}

/* gpk_qap_swap_delta. */
__device__ long long d_qap_delta(const dev_problem &P, uint32_t r, uint32_t s)
{
    const size_t n = P.n;
    const long long *a = P.a, *b = P.b;
    const uint32_t *p = P.perm;
    const size_t pr = p[r], ps = p[s];
    const long long *ar = a + (size_t)r * n, *as = a + (size_t)s * n;
    const long long *bpr = b + pr * n, *bps = b + ps * n;
    long long d = (ar[r] - as[s]) * (bps[ps] - bpr[pr]) + (ar[s] - as[r]) * (bps[pr] - bpr[ps]);
    for (size_t k = 0; k < n; k++) {
        if (k == r || k == s) continue;
        const size_t pk = p[k];
        const long long *ak = a + k * n, *bpk = b + pk * n;
        d += (ak[r] - ak[s]) * (bpk[ps] - bpk[pr]) + (ar[k] - as[k]) * (bps[pk] - bpr[pk]);
    }
    return d;
}

/* src/search/tsp.c's coord_dist with round-to-nearest intrinsics (never
 * contracted into FMA) in the host's order; GEO never comes here. */
__device__ int32_t d_dist(const dev_problem &P, uint32_t i, uint32_t j)
{
    if (P.mat) return P.mat[(size_t)i * P.n + j];
    if (i == j) return 0;
    const double xd = __dsub_rn(P.x[i], P.x[j]), yd = __dsub_rn(P.y[i], P.y[j]);
    const double s = __dadd_rn(__dmul_rn(xd, xd), __dmul_rn(yd, yd));
    switch (P.weight) {
    case GPK_TSP_EUC_2D: return (int32_t)__dadd_rn(__dsqrt_rn(s), 0.5);
    case GPK_TSP_CEIL_2D: return (int32_t)ceil(__dsqrt_rn(s));
    case GPK_TSP_ATT: {
        const double r = __dsqrt_rn(__ddiv_rn(s, 10.0));
        const int32_t k = (int32_t)__dadd_rn(r, 0.5);
        return (double)k < r ? k + 1 : k;
    }
    default: return 0;
    }
}

/* gpk_tsp_two_opt_delta. */
__device__ long long d_two_opt(const dev_problem &P, uint32_t i, uint32_t j)
{
    const uint32_t n = P.n;
    if (n < 4) return 0;
    const uint32_t *t = P.perm;
    const uint32_t a = t[i], b = t[i + 1], c = t[j], d = t[j + 1 == n ? 0 : j + 1];
    return (long long)d_dist(P, a, c) + d_dist(P, b, d) - d_dist(P, a, b) - d_dist(P, c, d);
}

/* gpk_tsp_swap_delta (i < j here). */
__device__ long long d_tsp_swap(const dev_problem &P, uint32_t i, uint32_t j)
{
    const uint32_t n = P.n;
    if (n < 4 || i == j) return 0;
    const uint32_t *t = P.perm;
    const uint32_t pi = t[i == 0 ? n - 1 : i - 1], ci = t[i], ni = t[i + 1];
    const uint32_t pj = t[j - 1], cj = t[j], nj = t[j + 1 == n ? 0 : j + 1];
    if (j == i + 1)
        return (long long)d_dist(P, pi, cj) + d_dist(P, ci, nj) - d_dist(P, pi, ci) - d_dist(P, cj, nj);
    if (i == 0 && j == n - 1)
        return (long long)d_dist(P, pj, ci) + d_dist(P, cj, ni) - d_dist(P, pj, cj) - d_dist(P, ci, ni);
    return (long long)d_dist(P, pi, cj) + d_dist(P, cj, ni) + d_dist(P, pj, ci) + d_dist(P, ci, nj) -
           d_dist(P, pi, ci) - d_dist(P, ci, ni) - d_dist(P, pj, cj) - d_dist(P, cj, nj);
}

__device__ __forceinline__ long long d_pen(int32_t y)
{
    return y < 0 ? -60 * (long long)y : 0;
}

__device__ __forceinline__ long long d_abs(long long x)
{
    return x < 0 ? -x : x;
}

/* gpk_ppp_flip_delta (two = 0, k unused) / gpk_ppp_flip2_delta. dc: this
 * thread's scratch slice (stride T), all zero on entry and on exit. */
__device__ long long d_ppp_delta(const dev_problem &P, uint32_t j, uint32_t k, bool two, int32_t *dc, uint64_t T)
{
    const int32_t n = (int32_t)P.n;
    const int32_t vj = P.v[j], vk = two ? P.v[k] : 0;
    long long d = 0;
    for (uint32_t i = 0; i < P.m; i++) {
        const int8_t *row = P.pa + (size_t)i * (size_t)n;
        const int32_t y = P.py[i];
        const int32_t y2 = y - 2 * row[j] * vj - (two ? 2 * row[k] * vk : 0);
        if (y2 == y) continue;
        d += d_pen(y2) - d_pen(y);
        dc[(size_t)(y + n) * T]--;
        dc[(size_t)(y2 + n) * T]++;
    }
    for (uint32_t i = 0; i < P.m; i++) {
        const int8_t *row = P.pa + (size_t)i * (size_t)n;
        const int32_t y = P.py[i];
        const int32_t y2 = y - 2 * row[j] * vj - (two ? 2 * row[k] * vk : 0);
        if (y2 == y) continue;
        const int32_t bins[2] = {y + n, y2 + n};
        for (int q = 0; q < 2; q++) {
            int32_t *cell = dc + (size_t)bins[q] * T;
            const int32_t ch = *cell;
            if (ch) {
                const long long g = P.gap[bins[q]];
                d += d_abs(g + ch) - d_abs(g);
                *cell = 0;
            }
        }
    }
    return d;
}

template <int NB>
__device__ __forceinline__ long long d_eval(const dev_problem &P, uint64_t k, uint32_t &i, uint32_t &j, int32_t *dc,
                                            uint64_t T)
{
    if (NB == NB_PPP_FLIP1) {
        i = (uint32_t)k;
        j = 0;
    } else {
        d_pair(P.n, k, i, j);
    }
    switch (NB) {
    case NB_QAP_SWAP: return d_qap_delta(P, i, j);
    case NB_TSP_SWAP: return d_tsp_swap(P, i, j);
    case NB_TSP_2OPT: return d_two_opt(P, i, j);
    case NB_PPP_FLIP1: return d_ppp_delta(P, i, 0, false, dc, T);
    default: return d_ppp_delta(P, i, j, true, dc, T);
    }
}

/* search_cpu.c's is_tabu. */
template <int NB>
__device__ __forceinline__ bool d_tabu(const dev_problem &P, uint64_t k, uint32_t i, uint32_t j)
{
    const unsigned long long it = P.iteration;
    switch (NB) {
    case NB_QAP_SWAP:
    case NB_TSP_SWAP:
        return P.tabu[(size_t)i * P.n + P.perm[j]] > it && P.tabu[(size_t)j * P.n + P.perm[i]] > it;
    case NB_TSP_2OPT: return P.tabu[k] > it;
    case NB_PPP_FLIP1: return P.tabu[i] > it;
    default: return P.tabu[i] > it || P.tabu[j] > it;
    }
}

/* PAPER: out[k - k0] = delta of neighbour k, k0 <= k < k1. */
template <int NB>
__global__ void __launch_bounds__(SC_BLOCK) k_deltas(dev_problem P, uint64_t k0, uint64_t k1, long long *out)
{
    const uint64_t T = (uint64_t)gridDim.x * blockDim.x, t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int32_t *dc = P.scratch ? P.scratch + t : nullptr;
    for (uint64_t k = k0 + t; k < k1; k += T) {
        uint32_t i, j;
        out[k - k0] = d_eval<NB>(P, k, i, j, dc, T);
    }
}

__device__ __forceinline__ dmove d_shfl_down(dmove m, int off)
{
    dmove r;
    r.d = __shfl_down_sync(0xffffffffu, m.d, off);
    r.k = __shfl_down_sync(0xffffffffu, m.k, off);
    return r;
}

/* Block minimum of a and b; the result in thread 0. */
__device__ __forceinline__ void d_block_min(dmove &a, dmove &b)
{
    __shared__ dmove sa[SC_WARPS], sb[SC_WARPS];
    for (int off = 16; off > 0; off >>= 1) {
        const dmove oa = d_shfl_down(a, off), ob = d_shfl_down(b, off);
        if (d_less(oa, a)) a = oa;
        if (d_less(ob, b)) b = ob;
    }
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    if (lane == 0) {
        sa[w] = a;
        sb[w] = b;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int q = 1; q < (int)(blockDim.x >> 5); q++) {
            if (d_less(sa[q], a)) a = sa[q];
            if (d_less(sb[q], b)) b = sb[q];
        }
    }
}

/* OURS: each block's (best of all, best admissible) over its share of
 * [k0, k1) into blocks[2 * blockIdx.x], [2 * blockIdx.x + 1]. */
template <int NB>
__global__ void __launch_bounds__(SC_BLOCK) k_best(dev_problem P, uint64_t k0, uint64_t k1, dmove *blocks)
{
    const uint64_t T = (uint64_t)gridDim.x * blockDim.x, t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int32_t *dc = P.scratch ? P.scratch + t : nullptr;
    dmove a = {LLONG_MAX, ULLONG_MAX}, b = {LLONG_MAX, ULLONG_MAX};
    for (uint64_t k = k0 + t; k < k1; k += T) {
        uint32_t i, j;
        const dmove m = {d_eval<NB>(P, k, i, j, dc, T), (unsigned long long)k};
        if (d_less(m, a)) a = m;
        if (d_less(m, b) && (!P.use_tabu || P.cost + m.d < P.best || !d_tabu<NB>(P, k, i, j))) b = m;
    }
    d_block_min(a, b);
    if (threadIdx.x == 0) {
        blocks[2 * blockIdx.x] = a;
        blocks[2 * blockIdx.x + 1] = b;
    }
}

/* OURS: folds `count` block results into acc[0..1] (first: acc starts empty). */
__global__ void __launch_bounds__(SC_BLOCK) k_fold(const dmove *blocks, unsigned int count, dmove *acc, int first)
{
    dmove a = {LLONG_MAX, ULLONG_MAX}, b = {LLONG_MAX, ULLONG_MAX};
    for (unsigned int q = threadIdx.x; q < count; q += blockDim.x) {
        if (d_less(blocks[2 * q], a)) a = blocks[2 * q];
        if (d_less(blocks[2 * q + 1], b)) b = blocks[2 * q + 1];
    }
    d_block_min(a, b);
    if (threadIdx.x == 0) {
        if (!first) {
            if (d_less(acc[0], a)) a = acc[0];
            if (d_less(acc[1], b)) b = acc[1];
        }
        acc[0] = a;
        acc[1] = b;
    }
}

/* ---- host side ---- */

#define SC_CK(call, what)                                                                       \
    do {                                                                                        \
        cudaError_t e_ = (call);                                                                \
        if (e_ != cudaSuccess) return gpk__cuda_fail(g->ctx, e_, "gpk_search_run (CUDA): " what); \
    } while (0)

static gpk_status sc_alloc(gpk__search_cuda *g, void **p, size_t bytes, const char *what)
{
    cudaError_t e = cudaMalloc(p, bytes ? bytes : 1);
    if (e != cudaSuccess) {
        *p = NULL;
        return gpk__cuda_fail(g->ctx, e, what);
    }
    return GPK_OK;
}

static gpk_status sc_upload(gpk__search_cuda *g, void *dst, const void *src, size_t bytes, const char *what)
{
    if (!bytes) return GPK_OK;
    cudaError_t e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, g->stream);
    return e == cudaSuccess ? GPK_OK : gpk__cuda_fail(g->ctx, e, what);
}

extern "C" void gpk__search_cuda_close(gpk__search_cuda *g)
{
    if (!g) return;
    void *d[] = {g->d_a, g->d_b, g->d_mat, g->d_gap, g->d_scratch, g->d_y, g->d_x, g->d_yc,
                 g->d_pa, g->d_v, g->d_perm, g->d_tabu, g->d_deltas, g->d_blocks, g->d_acc};
    if (g->stream) (void)cudaStreamSynchronize(g->stream);
    for (size_t q = 0; q < sizeof d / sizeof *d; q++)
        if (d[q]) (void)cudaFree(d[q]);
    (void)cudaGetLastError();
    free(g->h_deltas);
    free(g->h_gap);
    free(g);
}

extern "C" void gpk__search_cuda_set_chunk(gpk__search_cuda *g, uint64_t neighbours)
{
    if (g) g->chunk_limit = neighbours == 0 || neighbours > g->chunk_cap ? g->chunk_cap : neighbours;
}

extern "C" gpk_status gpk__search_cuda_open(gpk_ctx *ctx, const gpk__search_cfg *cfg, gpk__search_cuda **out)
{
    *out = NULL;
    if (!ctx || ctx->backend != GPK_BACKEND_CUDA || !ctx->cuda)
        return gpk__fail(ctx, GPK_EUNSUPPORTED, "gpk_search_run (CUDA): the context is not a CUDA context");
    const gpk_cuda_state *cs = (const gpk_cuda_state *)ctx->cuda;
    gpk__search_cuda *g = (gpk__search_cuda *)calloc(1, sizeof *g);
    if (!g) return gpk__fail(ctx, GPK_ENOMEM, "gpk_search_run (CUDA): out of host memory");
    g->ctx = ctx;
    g->stream = cs->stream;
    g->kind = cfg->kind;
    g->nb = cfg->nb;
    g->n = cfg->n;
    const uint64_t n = cfg->n;
    g->size = cfg->nb == GPK_NB_FLIP1 ? n : n * (n - 1) / 2;
    g->P.n = cfg->n;
    g->P.size = g->size;
    gpk_status st = GPK_OK;
    if (cfg->kind == GPK_PROBLEM_QAP && cfg->nb == GPK_NB_SWAP) g->nbk = NB_QAP_SWAP;
    else if (cfg->kind == GPK_PROBLEM_TSP && cfg->nb == GPK_NB_SWAP) g->nbk = NB_TSP_SWAP;
    else if (cfg->kind == GPK_PROBLEM_TSP && cfg->nb == GPK_NB_TWO_OPT) g->nbk = NB_TSP_2OPT;
    else if (cfg->kind == GPK_PROBLEM_PPP && cfg->nb == GPK_NB_FLIP1) g->nbk = NB_PPP_FLIP1;
    else if (cfg->kind == GPK_PROBLEM_PPP && cfg->nb == GPK_NB_FLIP2) g->nbk = NB_PPP_FLIP2;
    else st = gpk__fail(ctx, GPK_EUNSUPPORTED, "gpk_search_run (CUDA): neighbourhood not supported for this problem");
    if (st == GPK_OK && cfg->kind == GPK_PROBLEM_TSP && !cfg->tsp->matrix &&
        (cfg->tsp->weight == GPK_TSP_GEO || cfg->tsp->weight == GPK_TSP_EXPLICIT))
        st = gpk__fail(ctx, GPK_EUNSUPPORTED,
                       "gpk_search_run (CUDA): GEO distances without a matrix (n = %u) are not bit-identical on the "
                       "device",
                       cfg->n);
    if (st != GPK_OK) {
        free(g);
        return st;
    }
    cudaError_t e = cudaSetDevice(ctx->device);
    if (e != cudaSuccess) {
        free(g);
        return gpk__cuda_fail(ctx, e, "gpk_search_run (CUDA): cudaSetDevice");
    }
    /* Per-neighbour cost for the chunk size. */
    uint64_t cost = 4, chunk = 1;
    const int sm = cs->sm_count > 0 ? cs->sm_count : 1;
    g->grid_max = (unsigned int)sm * 8u;
    if (g->kind == GPK_PROBLEM_QAP) {
        const gpk_qap *q = cfg->qap;
        const size_t nn = (size_t)n * n;
        cost = n + 1;
        long long *ha = (long long *)q->a, *hb = (long long *)q->b; /* int64_t == long long on the targets */
        if ((st = sc_alloc(g, (void **)&g->d_a, nn * 8, "cudaMalloc (QAP A)")) != GPK_OK ||
            (st = sc_alloc(g, (void **)&g->d_b, nn * 8, "cudaMalloc (QAP B)")) != GPK_OK ||
            (st = sc_upload(g, g->d_a, ha, nn * 8, "upload (QAP A)")) != GPK_OK ||
            (st = sc_upload(g, g->d_b, hb, nn * 8, "upload (QAP B)")) != GPK_OK)
            goto fail;
        g->tabu_len = nn;
    } else if (g->kind == GPK_PROBLEM_TSP) {
        const gpk_tsp *t = cfg->tsp;
        g->P.weight = (int)t->weight;
        if (t->matrix) {
            const size_t nn = (size_t)n * n;
            if ((st = sc_alloc(g, (void **)&g->d_mat, nn * 4, "cudaMalloc (TSP matrix)")) != GPK_OK ||
                (st = sc_upload(g, g->d_mat, t->matrix, nn * 4, "upload (TSP matrix)")) != GPK_OK)
                goto fail;
        } else {
            cost = 16;
            if ((st = sc_alloc(g, (void **)&g->d_x, n * 8, "cudaMalloc (TSP x)")) != GPK_OK ||
                (st = sc_alloc(g, (void **)&g->d_yc, n * 8, "cudaMalloc (TSP y)")) != GPK_OK ||
                (st = sc_upload(g, g->d_x, t->x, n * 8, "upload (TSP x)")) != GPK_OK ||
                (st = sc_upload(g, g->d_yc, t->y, n * 8, "upload (TSP y)")) != GPK_OK)
                goto fail;
        }
        g->tabu_len = cfg->nb == GPK_NB_TWO_OPT ? g->size : (uint64_t)n * n;
    } else {
        const gpk_ppp *p = cfg->ppp;
        g->ppp = p;
        g->m = p->m;
        g->P.m = p->m;
        cost = 2ull * p->m + 1;
        const size_t bins = 2 * (size_t)n + 1;
        /* The scratch holds (2n + 1) ints per thread of a launch: the grid
         * is fixed by it. */
        uint64_t threads = SC_PPP_SCRATCH_BYTES / (bins * 4);
        threads = threads / SC_BLOCK * SC_BLOCK;
        if (threads < SC_BLOCK) threads = SC_BLOCK;
        if (threads > (uint64_t)g->grid_max * SC_BLOCK) threads = (uint64_t)g->grid_max * SC_BLOCK;
        g->grid_max = (unsigned int)(threads / SC_BLOCK);
        g->h_gap = (int32_t *)malloc(bins * sizeof(int32_t));
        if (!g->h_gap) {
            st = gpk__fail(ctx, GPK_ENOMEM, "gpk_search_run (CUDA): out of host memory");
            goto fail;
        }
        if ((st = sc_alloc(g, (void **)&g->d_pa, (size_t)p->m * n, "cudaMalloc (PPP A)")) != GPK_OK ||
            (st = sc_alloc(g, (void **)&g->d_gap, bins * 4, "cudaMalloc (PPP gap)")) != GPK_OK ||
            (st = sc_alloc(g, (void **)&g->d_scratch, bins * 4 * threads, "cudaMalloc (PPP scratch)")) != GPK_OK ||
            (st = sc_alloc(g, (void **)&g->d_y, (size_t)p->m * 4, "cudaMalloc (PPP y)")) != GPK_OK ||
            (st = sc_alloc(g, (void **)&g->d_v, n, "cudaMalloc (PPP v)")) != GPK_OK ||
            (st = sc_upload(g, g->d_pa, p->a, (size_t)p->m * n, "upload (PPP A)")) != GPK_OK)
            goto fail;
        e = cudaMemsetAsync(g->d_scratch, 0, bins * 4 * threads, g->stream);
        if (e != cudaSuccess) {
            st = gpk__cuda_fail(ctx, e, "gpk_search_run (CUDA): cudaMemsetAsync (PPP scratch)");
            goto fail;
        }
        g->tabu_len = n;
    }
    if (g->kind != GPK_PROBLEM_PPP &&
        (st = sc_alloc(g, (void **)&g->d_perm, n * 4, "cudaMalloc (solution)")) != GPK_OK)
        goto fail;
    /* Neighbours per launch: bounded work per launch; the buffers hold one
     * chunk (set_chunk only shrinks it). */
    chunk = SC_WORK_PER_LAUNCH / cost;
    if (chunk > SC_CHUNK_MAX) chunk = SC_CHUNK_MAX;
    if (chunk < 1024) chunk = 1024;
    if (chunk > g->size) chunk = g->size ? g->size : 1;
    {
        g->h_deltas = (int64_t *)malloc(chunk * sizeof(int64_t));
        if (!g->h_deltas) {
            st = gpk__fail(ctx, GPK_ENOMEM, "gpk_search_run (CUDA): out of host memory for %llu deltas",
                           (unsigned long long)chunk);
            goto fail;
        }
        if ((st = sc_alloc(g, (void **)&g->d_deltas, chunk * 8, "cudaMalloc (deltas)")) != GPK_OK ||
            (st = sc_alloc(g, (void **)&g->d_blocks, (size_t)g->grid_max * 2 * sizeof(dmove), "cudaMalloc (blocks)")) !=
                GPK_OK ||
            (st = sc_alloc(g, (void **)&g->d_acc, 2 * sizeof(dmove), "cudaMalloc (result)")) != GPK_OK ||
            (st = sc_alloc(g, (void **)&g->d_tabu, g->tabu_len * 8, "cudaMalloc (tabu list)")) != GPK_OK)
            goto fail;
        g->chunk_limit = g->chunk_cap = chunk; /* the default; the buffers' size */
        g->P.a = g->d_a;
        g->P.b = g->d_b;
        g->P.mat = g->d_mat;
        g->P.x = g->d_x;
        g->P.y = g->d_yc;
        g->P.pa = g->d_pa;
        g->P.gap = g->d_gap;
        g->P.scratch = g->d_scratch;
        g->P.perm = g->d_perm;
        g->P.v = g->d_v;
        g->P.py = g->d_y;
        g->P.tabu = g->d_tabu;
    }
    {
        e = cudaMemsetAsync(g->d_tabu, 0, g->tabu_len * 8, g->stream);
        if (e == cudaSuccess) e = cudaStreamSynchronize(g->stream);
        if (e != cudaSuccess) {
            st = gpk__cuda_fail(ctx, e, "gpk_search_run (CUDA): setting up the device data");
            goto fail;
        }
    }
    *out = g;
    return GPK_OK;
fail:
    gpk__search_cuda_close(g);
    return st;
}

extern "C" gpk_status gpk__search_cuda_tabu_upload(gpk__search_cuda *g, const uint64_t *tabu)
{
    if (!tabu) {
        SC_CK(cudaMemsetAsync(g->d_tabu, 0, g->tabu_len * 8, g->stream), "clearing the tabu list");
        return GPK_OK;
    }
    return sc_upload(g, g->d_tabu, tabu, g->tabu_len * 8, "gpk_search_run (CUDA): uploading the tabu list");
}

extern "C" gpk_status gpk__search_cuda_tabu_set(gpk__search_cuda *g, uint64_t index, uint64_t until)
{
    if (index >= g->tabu_len) return gpk__fail(g->ctx, GPK_EINVAL, "gpk_search_run (CUDA): tabu index out of range");
    /* Pageable source: staged before the call returns, so a local is safe. */
    const unsigned long long u = until;
    return sc_upload(g, g->d_tabu + index, &u, 8, "gpk_search_run (CUDA): tabu update");
}

/* The host's tabu rule (search_cpu.c's is_tabu) for PAPER mode. */
static int sc_host_tabu(const gpk__search_cuda *g, const gpk__search_cuda_in *in, uint64_t k, uint32_t i, uint32_t j)
{
    const uint64_t it = in->iteration;
    const uint64_t *tb = in->tabu;
    switch (g->nb) {
    case GPK_NB_SWAP: return tb[(size_t)i * g->n + in->perm[j]] > it && tb[(size_t)j * g->n + in->perm[i]] > it;
    case GPK_NB_TWO_OPT: return tb[k] > it;
    case GPK_NB_FLIP1: return tb[i] > it;
    default: return tb[i] > it || tb[j] > it;
    }
}

template <int NB>
static gpk_status sc_launch(gpk__search_cuda *g, gpk__search_cuda_mode mode, uint64_t k0, uint64_t k1,
                            unsigned int grid, int first)
{
    if (mode == GPK__SEARCH_CUDA_PAPER) {
        k_deltas<NB><<<grid, SC_BLOCK, 0, g->stream>>>(g->P, k0, k1, g->d_deltas);
        SC_CK(cudaGetLastError(), "launching the neighbourhood evaluation");
    } else {
        k_best<NB><<<grid, SC_BLOCK, 0, g->stream>>>(g->P, k0, k1, g->d_blocks);
        SC_CK(cudaGetLastError(), "launching the neighbourhood evaluation");
        k_fold<<<1, SC_BLOCK, 0, g->stream>>>(g->d_blocks, grid, g->d_acc, first);
        SC_CK(cudaGetLastError(), "launching the reduction");
    }
    return GPK_OK;
}

extern "C" gpk_status gpk__search_cuda_best_move(gpk__search_cuda *g, const gpk__search_cuda_in *in,
                                                 gpk__search_cuda_mode mode, gpk__search_cuda_move *any,
                                                 gpk__search_cuda_move *adm)
{
    any->d = adm->d = INT64_MAX;
    any->k = adm->k = UINT64_MAX;
    if (g->size == 0) return GPK_OK;
    if (mode == GPK__SEARCH_CUDA_PAPER && in->use_tabu && !in->tabu)
        return gpk__fail(g->ctx, GPK_EINVAL, "gpk_search_run (CUDA): PAPER mode needs the host tabu list");
    SC_CK(cudaSetDevice(g->ctx->device), "cudaSetDevice");
    const uint32_t n = g->n;
    gpk_status st;
    if (g->kind == GPK_PROBLEM_PPP) {
        /* The base gap H'(y) - H, as src/search/ppp.c's gap_histogram. */
        const int32_t ni = (int32_t)n;
        memset(g->h_gap, 0, (2 * (size_t)n + 1) * sizeof(int32_t));
        for (uint32_t i = 0; i < g->m; i++) g->h_gap[in->y[i] + ni]++;
        for (int32_t v = 0; v <= ni; v++) g->h_gap[v + ni] -= (int32_t)g->ppp->hist[v];
        if ((st = sc_upload(g, g->d_v, in->v, n, "gpk_search_run (CUDA): upload (v)")) != GPK_OK ||
            (st = sc_upload(g, g->d_y, in->y, (size_t)g->m * 4, "gpk_search_run (CUDA): upload (y)")) != GPK_OK ||
            (st = sc_upload(g, g->d_gap, g->h_gap, (2 * (size_t)n + 1) * 4, "gpk_search_run (CUDA): upload (gap)")) !=
                GPK_OK)
            return st;
    } else if ((st = sc_upload(g, g->d_perm, in->perm, (size_t)n * 4, "gpk_search_run (CUDA): upload (solution)")) !=
               GPK_OK) {
        return st;
    }
    g->P.iteration = in->iteration;
    g->P.cost = in->cost;
    g->P.best = in->best;
    g->P.use_tabu = in->use_tabu;

    /* chunk_limit never exceeds the buffers' size (set at open). */
    uint64_t chunk = g->chunk_limit;
    if (chunk == 0) chunk = 1;
    const int ppp = g->kind == GPK_PROBLEM_PPP;
    int first = 1;
    int64_t best_any_d = INT64_MAX, best_adm_d = INT64_MAX;
    uint64_t best_any_k = UINT64_MAX, best_adm_k = UINT64_MAX;
    for (uint64_t k0 = 0; k0 < g->size; k0 += chunk) {
        const uint64_t k1 = g->size - k0 < chunk ? g->size : k0 + chunk;
        uint64_t blocks = (k1 - k0 + SC_BLOCK - 1) / SC_BLOCK;
        /* PPP: the grid is fixed (each thread owns a scratch slice; a
         * smaller grid also works: T only sets the stride). */
        unsigned int grid = blocks < g->grid_max ? (unsigned int)blocks : g->grid_max;
        if (ppp) grid = g->grid_max;
        switch (g->nbk) {
        case NB_QAP_SWAP: st = sc_launch<NB_QAP_SWAP>(g, mode, k0, k1, grid, first); break;
        case NB_TSP_SWAP: st = sc_launch<NB_TSP_SWAP>(g, mode, k0, k1, grid, first); break;
        case NB_TSP_2OPT: st = sc_launch<NB_TSP_2OPT>(g, mode, k0, k1, grid, first); break;
        case NB_PPP_FLIP1: st = sc_launch<NB_PPP_FLIP1>(g, mode, k0, k1, grid, first); break;
        default: st = sc_launch<NB_PPP_FLIP2>(g, mode, k0, k1, grid, first); break;
        }
        if (st != GPK_OK) return st;
        first = 0;
        if (mode != GPK__SEARCH_CUDA_PAPER) continue;
        /* PAPER: the chunk's deltas to the host; the CPU scan's choice. */
        SC_CK(cudaMemcpyAsync(g->h_deltas, g->d_deltas, (k1 - k0) * 8, cudaMemcpyDeviceToHost, g->stream),
              "copying the deltas back");
        SC_CK(cudaStreamSynchronize(g->stream), "neighbourhood evaluation");
        uint32_t i = 0, j = 0;
        if (g->nb == GPK_NB_FLIP1) i = (uint32_t)k0;
        else gpk_swap_index_to_pair(n, k0, &i, &j);
        for (uint64_t k = k0; k < k1; k++) {
            const int64_t d = g->h_deltas[k - k0];
            if (d < best_any_d || (d == best_any_d && k < best_any_k)) {
                best_any_d = d;
                best_any_k = k;
            }
            if ((d < best_adm_d || (d == best_adm_d && k < best_adm_k)) &&
                (!in->use_tabu || in->cost + d < in->best || !sc_host_tabu(g, in, k, i, j))) {
                best_adm_d = d;
                best_adm_k = k;
            }
            if (g->nb == GPK_NB_FLIP1) {
                ++i;
            } else if (++j == n) {
                ++i;
                j = i + 1;
            }
        }
    }
    if (mode == GPK__SEARCH_CUDA_PAPER) {
        any->d = best_any_d;
        any->k = best_any_k;
        adm->d = best_adm_d;
        adm->k = best_adm_k;
        return GPK_OK;
    }
    dmove h[2];
    SC_CK(cudaMemcpyAsync(h, g->d_acc, sizeof h, cudaMemcpyDeviceToHost, g->stream), "copying the move back");
    SC_CK(cudaStreamSynchronize(g->stream), "neighbourhood evaluation");
    any->d = h[0].d;
    any->k = h[0].k;
    adm->d = h[1].d;
    adm->k = h[1].k;
    return GPK_OK;
}
