/* CUDA neighbourhood evaluation of the local search (Luong, Melab & Talbi
 * 2009, Algorithm 1: the CPU drives the search, the GPU evaluates the whole
 * neighbourhood, one thread per neighbour). Built with GPK_WITH_CUDA_SEARCH
 * (ON by default with CUDA; tests/test_search_cuda.c compares every choice
 * with the CPU scan's; docs/perf/search.md records the GPUs it passed on).
 *
 * State kept on the device between iterations: the solution (QAP p / TSP
 * tour) and the tabu list. The host keeps a shadow of what it uploaded;
 * each call compares the host solution with it and sends only the changed
 * positions (a swap: 2) and the tabu writes made since (both as kernel
 * arguments, no copy), or the whole solution when many positions changed
 * (a 2-opt reversal, a restart). Read-backs go to pinned memory.
 *
 * Fast paths (the generic kernels below stay for the rest):
 *  - QAP with |entries| < 2^30: A, A^T and the permuted flow matrix
 *    Bp[x][y] = B[p[x]][p[y]] and its transpose as int32 on the device, Bp
 *    kept up to date by the patch kernel (O(n) per swap). A warp holds one
 *    r and consecutive s, so every read is a broadcast or coalesced;
 *  - TSP 2-opt with EUC_2D / CEIL_2D coordinates: float32 distances from
 *    tour-ordered coordinates (each a float hi + lo pair relative to the
 *    centroid) with an exactness guard: when the float value lies within
 *    its error bound of a rounding boundary, the distance is recomputed
 *    with the exact double formula below, so every integer distance is the
 *    host's. OURS runs a tiled kernel (O'Neil & Burtscher 2011): a block
 *    owns TILE rows i, one per thread, and a TILE-wide tile of columns j
 *    staged in shared memory; the exact edge lengths of the tour are
 *    computed once per iteration.
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
 * (warp shuffles, then shared memory), then over the blocks (the last block
 * to finish folds them) into a
 * two-move accumulator kept on the device across chunks, and copies back
 * 32 bytes. Both give the CPU scan's pair: the minimum of (delta, k) over
 * all moves, and over the admissible ones (not tabu, or aspirated:
 * cost + delta < best). */
#include "search_run.h"
#include "bijection_inline.h"
#include "../core/cuda_internal.h"

#include <cuda_runtime.h>

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SC_BLOCK 256
#define SC_WARPS (SC_BLOCK / 32)
/* 2-opt tiled kernel: rows per block = columns per tile. 256-wide tiles
 * evaluated pla33810 37 % faster on the GPUs measured (2.9e11 against
 * 2.1e11 per s), 128-wide ones were 10 to 20 % faster below 6000 cities
 * (docs/perf/search.md). */
#define SC_TILE_SMALL 128
#define SC_TILE_BIG 256
#define SC_TILE_BIG_N 16384             /* cities from which the big tiles run */
#define SC_PATCH 16                     /* changed positions / tabu writes sent as kernel arguments */
#define SC_CHUNK_MAX (1ull << 24)       /* neighbours per launch at most (PAPER: 128 MiB of deltas) */
#define SC_WORK_PER_LAUNCH (1ull << 32) /* neighbours x per-neighbour cost per launch */
#define SC_PPP_SCRATCH_BYTES (256ull << 20)

enum {
    NB_QAP_SWAP = 0, /* QAP, int64 matrices, the O(n) formula through p */
    NB_TSP_SWAP = 1,
    NB_TSP_2OPT = 2, /* matrix or exact double distances */
    NB_PPP_FLIP1 = 3,
    NB_PPP_FLIP2 = 4,
    NB_QAP32 = 5,     /* QAP fast path: int32 A, A^T, Bp, Bp^T */
    NB_TSP_2OPT_F = 6 /* TSP 2-opt fast path: float distances with the guard */
};

struct dmove {
    long long d;
    unsigned long long k;
};

/* Everything a kernel reads, passed by value. */
struct dev_problem {
    uint32_t n, m;
    uint64_t size;
    const long long *a, *b;    /* QAP */
    const int32_t *a32, *at32; /* QAP fast: A, A^T */
    const int32_t *bp, *bpt;   /* QAP fast: Bp[x][y] = B[p[x]][p[y]], and its transpose */
    const int32_t *mat;        /* TSP matrix or NULL */
    const double *x, *y;       /* TSP coordinates */
    const float4 *pos;         /* TSP fast: tour position q -> (hi x, hi y, lo x, lo y), n + 1 entries */
    const int32_t *edge;       /* TSP fast: exact d(t[q], t[q + 1 mod n]) */
    float tol;                 /* TSP fast: absolute part of the guard's bound */
    int lo_zero;               /* TSP fast: every lo part is 0 (integer coordinates) */
    int weight;                /* gpk_tsp_weight */
    const int8_t *pa;          /* PPP A, m x n */
    const int32_t *gap;        /* PPP H' - H for the current y, 2n + 1 */
    int32_t *scratch;          /* PPP per-thread bin changes, (2n + 1) x threads, zero */
    const uint32_t *perm;      /* QAP p / TSP tour */
    const int8_t *v;           /* PPP v */
    const int32_t *py;         /* PPP y */
    const unsigned long long *tabu;
    unsigned long long iteration;
    long long cost, best;
    int use_tabu;
    int tabu_city; /* TSP 2-opt: tabu keyed by city (search_run.h, gpk__tabu_by_city) */
};

/* Changed solution positions and tabu writes, sent by value. */
struct sc_patch {
    uint32_t np, nt;
    uint32_t pos[SC_PATCH], val[SC_PATCH];
    unsigned long long ti[SC_PATCH], tu[SC_PATCH];
};

struct gpk__search_cuda {
    gpk_ctx *ctx;
    cudaStream_t stream;
    int nbk; /* NB_* */
    gpk_problem_kind kind;
    gpk_neighbourhood nb;
    uint32_t n, m;
    uint64_t size, tabu_len, chunk_limit, chunk_cap; /* chunk_cap: the buffers' size */
    int chunk_user;                                  /* set_chunk asked for a limit */
    int tiled;                                       /* TSP 2-opt fast path: OURS runs the tiled kernel */
    uint32_t tile;                                   /* its width: SC_TILE_SMALL or SC_TILE_BIG */
    const gpk_ppp *ppp;
    dev_problem P; /* device pointers; per-call fields set in best_move */
    long long *d_a, *d_b;
    int32_t *d_a32, *d_at32, *d_b32, *d_bp, *d_bpt;
    int32_t *d_mat, *d_gap, *d_scratch, *d_y;
    double *d_x, *d_yc;
    float4 *d_c4, *d_pos;
    int32_t *d_edge;
    int8_t *d_pa, *d_v;
    void *d_pstate; /* PPP: gap, y, v in one buffer (one upload) */
    uint32_t *d_perm;
    unsigned long long *d_tabu;
    long long *d_deltas;   /* PAPER: one chunk */
    dmove *d_blocks;       /* OURS: 2 per block */
    dmove *d_acc;          /* OURS: any, adm */
    unsigned int *d_count; /* OURS: blocks done (the last one folds) */
    uint64_t blocks_cap;   /* d_blocks holds 2 x blocks_cap moves */
    unsigned int grid_max; /* blocks per launch (PPP: fixed, the scratch's threads) */
    long long *h_deltas;   /* PAPER: one chunk on the host (pinned) */
    unsigned char *h_pin;  /* pinned staging: uploads, the move read back */
    size_t pin_bytes;
    int32_t *h_gap;   /* PPP: 2n + 1 */
    uint32_t *h_perm; /* the solution the device holds (valid when perm_valid) */
    int perm_valid;
    int no_tabu;   /* hill climbing: tabu_len 1, use_tabu refused */
    sc_patch pend; /* tabu writes not yet sent (np unused) */
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

/* gpk_qap_swap_delta on the fast path: the same terms with
 * b[p[x]][p[y]] = Bp[x][y] and a[s][k] = A^T[k][s], Bp[s][k] = Bp^T[k][s].
 * Entries are below 2^30 in magnitude, so each difference fits int32; the
 * products and the sum are int64 (exact, any order). */
__device__ long long d_qap32(const dev_problem &P, uint32_t r, uint32_t s)
{
    const size_t n = P.n;
    const int32_t *__restrict__ A = P.a32, *__restrict__ AT = P.at32, *__restrict__ Bp = P.bp,
                                *__restrict__ BT = P.bpt;
    const size_t rn = (size_t)r * n, sn = (size_t)s * n;
    long long d = (long long)(A[rn + r] - A[sn + s]) * (Bp[sn + s] - Bp[rn + r]) +
        (long long)(A[rn + s] - A[sn + r]) * (Bp[sn + r] - Bp[rn + s]);
    long long acc = 0;
#pragma unroll 4
    for (uint32_t k = 0; k < (uint32_t)n; k++) {
        const size_t kn = (size_t)k * n;
        const int x1 = __ldg(A + kn + r) - __ldg(A + kn + s);   /* a[k][r] - a[k][s] */
        const int y1 = __ldg(Bp + kn + s) - __ldg(Bp + kn + r); /* b[pk][ps] - b[pk][pr] */
        const int x2 = __ldg(A + rn + k) - __ldg(AT + kn + s);  /* a[r][k] - a[s][k] */
        const int y2 = __ldg(BT + kn + s) - __ldg(Bp + rn + k); /* b[ps][pk] - b[pr][pk] */
        const long long t = (long long)x1 * y1 + (long long)x2 * y2;
        acc += (k == r || k == s) ? 0 : t;
    }
    return d + acc;
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

/* The fast path's distance between tour positions (float coordinates pa,
 * pb). Each coordinate is hi + lo relative to the centroid, so dx = (hi_a -
 * hi_b) + (lo_a - lo_b) has an error of about 2u|dx| (u = 2^-24) plus u^2
 * times the coordinates' size; the norm and the + 0.5 add about 2.5u r and
 * the approximate square root (rsqrtf, 2 ulp) about 5u r, some 8u r in all.
 * The bound used, eps = 32u r + tol (tol = 16u + 8u^2 max|coordinate|, from
 * the host), is four times that (a host model of these roundings, the root
 * off by up to 4u, met no miss over 5 x 10^7 pairs of random, grid and
 * far-off coordinates): when the value to round (r + 0.5 for EUC_2D, r for
 * CEIL_2D) lies farther than eps from the nearest integer, the float result
 * rounds as the exact one does and *unc = 0. Otherwise *unc = 1 and the
 * result is a lower bound of the exact distance (the value less eps, rounded
 * down): the caller recomputes exactly (d_dist_pos) only when the neighbour
 * could matter. */
__device__ __forceinline__ float d_froot(const float4 pa, const float4 pb)
{
    const float dx = __fadd_rn(__fsub_rn(pa.x, pb.x), __fsub_rn(pa.z, pb.z));
    const float dy = __fadd_rn(__fsub_rn(pa.y, pb.y), __fsub_rn(pa.w, pb.w));
    const float q = __fmaf_rn(dx, dx, __fmul_rn(dy, dy));
    /* rsqrtf: the MUFU approximation, at most 2 ulp (4u) off; with the
     * product, r is within about 5u r of the exact root of q */
    return q > 0.f ? __fmul_rn(q, rsqrtf(q)) : 0.f;
}

/* d_froot when every lo part is 0: the same value, four additions fewer */
__device__ __forceinline__ float d_froot_hi(const float4 pa, const float4 pb)
{
    const float dx = __fsub_rn(pa.x, pb.x), dy = __fsub_rn(pa.y, pb.y);
    const float q = __fmaf_rn(dx, dx, __fmul_rn(dy, dy));
    return q > 0.f ? __fmul_rn(q, rsqrtf(q)) : 0.f;
}

__device__ __forceinline__ int32_t d_fround_lo(const dev_problem &P, const float r, int &unc)
{
    const bool euc = P.weight == GPK_TSP_EUC_2D;
    const float w = euc ? __fadd_rn(r, 0.5f) : r;
    const float eps = __fmaf_rn(r, 1.9073486328125e-06f /* 32u = 2^-19 */, P.tol);
    if (fabsf(__fsub_rn(w, rintf(w))) > eps) {
        unc = 0;
        return euc ? (int32_t)floorf(w) : (int32_t)ceilf(w);
    }
    unc = 1;
    const float lo = __fsub_rd(w, eps);
    return euc ? (int32_t)floorf(lo) : (int32_t)ceilf(lo);
}

__device__ __forceinline__ int32_t d_fdist_lo(const dev_problem &P, const float4 pa, const float4 pb,
                                              int &unc)
{
    return d_fround_lo(P, d_froot(pa, pb), unc);
}

/* The exact distance between the cities at tour positions qa, qb (< 2n). */
__device__ __forceinline__ int32_t d_dist_pos(const dev_problem &P, uint32_t qa, uint32_t qb)
{
    const uint32_t n = P.n;
    return d_dist(P, P.perm[qa >= n ? qa - n : qa], P.perm[qb >= n ? qb - n : qb]);
}

/* The exact distance on the fast path: the float value, or the double one
 * when the float one is uncertain. */
__device__ __forceinline__ int32_t d_fdist(const dev_problem &P, const float4 pa, const float4 pb,
                                           uint32_t qa, uint32_t qb)
{
    int unc;
    const int32_t d = d_fdist_lo(P, pa, pb, unc);
    return unc ? d_dist_pos(P, qa, qb) : d;
}

/* gpk_tsp_two_opt_delta on the fast path (n >= 8): positions, not cities. */
__device__ __forceinline__ long long d_two_opt_f(const dev_problem &P, uint32_t i, uint32_t j)
{
    const float4 pi = P.pos[i], pi1 = P.pos[i + 1], pj = P.pos[j], pj1 = P.pos[j + 1];
    return (long long)d_fdist(P, pi, pj, i, j) + d_fdist(P, pi1, pj1, i + 1, j + 1) - P.edge[i] - P.edge[j];
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

__device__ __forceinline__ long long d_pen(int32_t y) { return y < 0 ? -60 * (long long)y : 0; }

__device__ __forceinline__ long long d_abs(long long x) { return x < 0 ? -x : x; }

/* gpk_ppp_flip_delta (two = 0, k unused) / gpk_ppp_flip2_delta. dc: this
 * thread's scratch slice (stride T), all zero on entry and on exit. */
__device__ long long d_ppp_delta(const dev_problem &P, uint32_t j, uint32_t k, bool two, int32_t *dc,
                                 uint64_t T)
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
__device__ __forceinline__ long long d_eval(const dev_problem &P, uint64_t k, uint32_t &i, uint32_t &j,
                                            int32_t *dc, uint64_t T)
{
    if (NB == NB_PPP_FLIP1) {
        i = (uint32_t)k;
        j = 0;
    } else {
        d_pair(P.n, k, i, j);
    }
    switch (NB) {
    case NB_QAP_SWAP: return d_qap_delta(P, i, j);
    case NB_QAP32: return d_qap32(P, i, j);
    case NB_TSP_SWAP: return d_tsp_swap(P, i, j);
    case NB_TSP_2OPT: return d_two_opt(P, i, j);
    case NB_TSP_2OPT_F: return d_two_opt_f(P, i, j);
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
    case NB_QAP32:
    case NB_TSP_SWAP:
        if (NB == NB_TSP_SWAP && P.tabu_city) return P.tabu[P.perm[i]] > it && P.tabu[P.perm[j]] > it;
        return P.tabu[(size_t)i * P.n + P.perm[j]] > it && P.tabu[(size_t)j * P.n + P.perm[i]] > it;
    case NB_TSP_2OPT:
    case NB_TSP_2OPT_F:
        if (P.tabu_city) return P.tabu[P.perm[i]] > it && P.tabu[P.perm[j + 1 == P.n ? 0 : j + 1]] > it;
        return P.tabu[k] > it;
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

/* Block minimum of a and b; the result in thread 0. Every thread of the
 * block calls it (blockDim.x a multiple of 32). */
__device__ __forceinline__ void d_block_min(dmove &a, dmove &b)
{
    __shared__ dmove sa[32], sb[32];
    __syncthreads(); /* a previous call's readers are done */
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

__device__ __forceinline__ dmove d_load_cg(const dmove *p)
{
    dmove m;
    m.d = __ldcg(&p->d);
    m.k = __ldcg(&p->k);
    return m;
}

/* OURS: the block's (best of all, best admissible) to blocks[]; the last
 * block to finish folds every block's pair into acc (merged with acc's
 * previous value unless first) and resets the counter: one launch per
 * chunk, no separate reduction kernel. */
__device__ __forceinline__ void d_finish(dmove a, dmove b, dmove *blocks, dmove *acc, unsigned int *count,
                                         int first)
{
    __shared__ int last;
    d_block_min(a, b);
    const unsigned int nblocks = gridDim.x * gridDim.y;
    const unsigned int bid = blockIdx.y * gridDim.x + blockIdx.x;
    if (threadIdx.x == 0) {
        blocks[2 * (size_t)bid] = a;
        blocks[2 * (size_t)bid + 1] = b;
        __threadfence();
        last = atomicAdd(count, 1u) == nblocks - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    dmove fa = {LLONG_MAX, ULLONG_MAX}, fb = {LLONG_MAX, ULLONG_MAX};
    for (unsigned int q = threadIdx.x; q < nblocks; q += blockDim.x) {
        const dmove qa = d_load_cg(blocks + 2 * (size_t)q), qb = d_load_cg(blocks + 2 * (size_t)q + 1);
        if (d_less(qa, fa)) fa = qa;
        if (d_less(qb, fb)) fb = qb;
    }
    d_block_min(fa, fb);
    if (threadIdx.x == 0) {
        if (!first) {
            const dmove pa = d_load_cg(acc), pb = d_load_cg(acc + 1);
            if (d_less(pa, fa)) fa = pa;
            if (d_less(pb, fb)) fb = pb;
        }
        acc[0] = fa;
        acc[1] = fb;
        *count = 0;
    }
}

/* OURS: best of all and best admissible over [k0, k1), one neighbour per
 * thread in a grid-stride loop. */
template <int NB>
__global__ void __launch_bounds__(SC_BLOCK)
    k_best(dev_problem P, uint64_t k0, uint64_t k1, dmove *blocks, dmove *acc, unsigned int *count, int first)
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
    d_finish(a, b, blocks, acc, count, first);
}

/* OURS, TSP 2-opt fast path: block (x, y) evaluates rows i of row tile
 * row_tile0 + y (one per thread) against the columns j of tile x, staged in
 * shared memory (positions j and j + 1, exact edges), every thread reading
 * the same column at a time (a broadcast). Only pairs i < j with index k in
 * [k0, k1) count; tiles below the diagonal have none. */
template <bool HI_ONLY, int SC_TILE>
__global__ void __launch_bounds__(SC_TILE)
    k_2opt_tiled(dev_problem P, uint64_t k0, uint64_t k1, uint32_t row_tile0, dmove *blocks, dmove *acc,
                 unsigned int *count, int first)
{
    __shared__ float4 sp[SC_TILE + 1];
    __shared__ int32_t se[SC_TILE];
    __shared__ float sef[SC_TILE]; /* the same edges as floats (the filter) */
    const uint32_t n = P.n;
    const uint32_t row0 = (row_tile0 + blockIdx.y) * SC_TILE, jt = blockIdx.x * SC_TILE;
    const uint32_t i = row0 + threadIdx.x;
    dmove a = {LLONG_MAX, ULLONG_MAX}, b = {LLONG_MAX, ULLONG_MAX};
    if (jt + SC_TILE > row0 + 1 && jt < n) { /* block-uniform: the tile has some j > i */
        for (uint32_t c = threadIdx.x; c <= SC_TILE; c += blockDim.x)
            if (jt + c <= n) sp[c] = P.pos[jt + c];
        for (uint32_t c = threadIdx.x; c < SC_TILE; c += blockDim.x)
            if (jt + c < n) {
                se[c] = P.edge[jt + c];
                sef[c] = (float)se[c];
            }
        __syncthreads();
        /* this row's columns: i < j <= n - 1 with rs + (j - i - 1) in [k0, k1) */
        int64_t clo = 1, chi = 0;
        uint64_t rs = 0;
        float4 pi = make_float4(0.f, 0.f, 0.f, 0.f), pi1 = pi;
        int32_t ei = 0;
        if (i + 1 < n) {
            rs = (uint64_t)i * n - (uint64_t)i * (i + 1) / 2; /* the index of (i, i + 1) */
            const uint64_t rlen = n - 1 - i;                  /* pairs in the row */
            const uint64_t lo = k0 > rs ? k0 - rs : 0;        /* offsets [lo, hi) within the row */
            const uint64_t hi = k1 > rs ? (k1 - rs < rlen ? k1 - rs : rlen) : 0;
            if (lo < hi) {
                const int64_t jlo = (int64_t)(i + 1 + lo), jhi = (int64_t)(i + hi); /* inclusive */
                clo = jlo - (int64_t)jt;
                chi = jhi - (int64_t)jt;
                if (clo < 0) clo = 0;
                if (chi > SC_TILE - 1) chi = SC_TILE - 1;
                pi = P.pos[i];
                pi1 = P.pos[i + 1];
                ei = P.edge[i];
            }
        }
        /* The filter: a neighbour whose delta is surely >= b.d is skipped
         * before any rounding. Its delta is at least r1 + r2 - ei - ej - 1
         * (EUC_2D; CEIL_2D: - 0) less the float errors; the test
         * S - ej >= (b.d + ei) + margin, margin = 2^-16 (S + |ej| + |b.d +
         * ei|) + 2 tol + 2 (EUC_2D; CEIL_2D 1), holds only then, with room
         * for every rounding of the float sums (a host model of it, the
         * root off by 4u, skipped no neighbour below b.d). */
        const float c0 = __fadd_rn(2.f * P.tol, P.weight == GPK_TSP_EUC_2D ? 2.f : 1.f);
        float tf = INFINITY; /* (float)(b.d + ei), +inf while b is empty */
        /* the row's own columns only, sp[c + 1] carried to the next c in a
         * register, unrolled for independent roots in flight */
        float4 pc = sp[clo <= chi ? clo : 0];
#pragma unroll 4
        for (int c = (int)clo; c <= (int)chi; c++) {
            const uint32_t j = jt + (uint32_t)c;
            const float4 pn = sp[c + 1];
            const float r1 = HI_ONLY ? d_froot_hi(pi, pc) : d_froot(pi, pc);
            const float r2 = HI_ONLY ? d_froot_hi(pi1, pn) : d_froot(pi1, pn);
            pc = pn;
            const float S = __fadd_rn(r1, r2), ej = sef[c];
            const float margin =
                __fmaf_rn(__fadd_rn(__fadd_rn(S, fabsf(ej)), fabsf(tf)), 1.52587890625e-05f, c0);
            if (__fsub_rn(S, ej) >= __fadd_rn(tf, margin)) continue;
            int u1, u2;
            const int32_t d1 = d_fround_lo(P, r1, u1), d2 = d_fround_lo(P, r2, u2);
            long long d = (long long)d1 + d2 - ei - se[c]; /* exact, or a lower bound when u1 | u2 */
            /* This thread's k increase with c: a neighbour whose delta is
             * not below b.d (>= a.d) can change neither minimum. */
            if (d < b.d) {
                if (u1 | u2) { /* rare: the exact delta, with the host's double formula */
                    d = (long long)(u1 ? d_dist_pos(P, i, j) : d1) + (u2 ? d_dist_pos(P, i + 1, j + 1) : d2) -
                        ei - se[c];
                    if (d >= b.d) continue;
                }
                const dmove m = {d, rs + (j - i - 1)};
                if (d_less(m, a)) a = m;
                if (!P.use_tabu || P.cost + d < P.best || !d_tabu<NB_TSP_2OPT_F>(P, m.k, i, j)) {
                    b = m;
                    tf = (float)(d + ei);
                }
            }
        }
    }
    d_finish(a, b, blocks, acc, count, first);
}

/* The solution's changed positions and the pending tabu writes. QAP fast
 * path: rows and columns x of Bp and Bp^T for each changed position x, from
 * the new p (the positions being written are read through the patch, the
 * others from perm: no race). */
__global__ void k_patch(sc_patch pt, uint32_t *perm, unsigned long long *tabu, const int32_t *b32,
                        int32_t *bp, int32_t *bpt, uint32_t n)
{
    const uint64_t T = (uint64_t)gridDim.x * blockDim.x, t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < pt.nt) tabu[pt.ti[t]] = pt.tu[t];
    if (bp) {
        for (uint64_t idx = t; idx < (uint64_t)pt.np * n; idx += T) {
            const uint32_t q = (uint32_t)(idx / n), y = (uint32_t)(idx % n), x = pt.pos[q];
            const size_t px = pt.val[q];
            size_t py = SIZE_MAX;
            for (uint32_t e = 0; e < pt.np; e++)
                if (pt.pos[e] == y) py = pt.val[e];
            if (py == SIZE_MAX) py = perm[y];
            bp[(size_t)x * n + y] = b32[px * n + py];
            bpt[(size_t)x * n + y] = b32[py * n + px];
            bp[(size_t)y * n + x] = b32[py * n + px];
            bpt[(size_t)y * n + x] = b32[px * n + py];
        }
    }
    if (t < pt.np) perm[pt.pos[t]] = pt.val[t];
}

/* QAP fast path: Bp and Bp^T from scratch. */
__global__ void k_qap_build(const uint32_t *perm, const int32_t *b32, int32_t *bp, int32_t *bpt, uint32_t n)
{
    const uint64_t T = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t idx = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < (uint64_t)n * n; idx += T) {
        const size_t x = idx / n, y = idx % n, px = perm[x], py = perm[y];
        bp[idx] = b32[px * n + py];
        bpt[idx] = b32[py * n + px];
    }
}

/* TSP fast path: tour-ordered coordinates (pos[n] = pos[0]) and the tour's
 * exact edge lengths. */
__global__ void k_tsp_prep(dev_problem P, const float4 *c4, float4 *pos, int32_t *edge)
{
    const uint32_t n = P.n;
    const uint64_t T = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t q = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; q <= n; q += T) {
        const uint32_t c = P.perm[q == n ? 0 : q];
        pos[q] = c4[c];
        if (q < n) edge[q] = d_dist(P, c, P.perm[q + 1 == n ? 0 : q + 1]);
    }
}

/* ---- host side ---- */

#define SC_CK(call, what)                                                                         \
    do {                                                                                          \
        cudaError_t e_ = (call);                                                                  \
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

/* A synchronous upload from a temporary host array (setup only). */
static gpk_status sc_upload_sync(gpk__search_cuda *g, void *dst, const void *src, size_t bytes,
                                 const char *what)
{
    gpk_status st = sc_upload(g, dst, src, bytes, what);
    if (st != GPK_OK) return st;
    cudaError_t e = cudaStreamSynchronize(g->stream);
    return e == cudaSuccess ? GPK_OK : gpk__cuda_fail(g->ctx, e, what);
}

extern "C" void gpk__search_cuda_close(gpk__search_cuda *g)
{
    if (!g) return;
    void *d[] = {g->d_a,      g->d_b,      g->d_a32,     g->d_at32,   g->d_b32,  g->d_bp,
                 g->d_bpt,    g->d_mat,    g->d_scratch, g->d_x,      g->d_yc,   g->d_c4,
                 g->d_pos,    g->d_edge,   g->d_pa,      g->d_pstate, g->d_perm, g->d_tabu,
                 g->d_deltas, g->d_blocks, g->d_acc,     g->d_count};
    if (g->stream) (void)cudaStreamSynchronize(g->stream);
    for (size_t q = 0; q < sizeof d / sizeof *d; q++)
        if (d[q]) (void)cudaFree(d[q]);
    if (g->h_deltas) (void)cudaFreeHost(g->h_deltas);
    if (g->h_pin) (void)cudaFreeHost(g->h_pin);
    (void)cudaGetLastError();
    free(g->h_gap);
    free(g->h_perm);
    free(g);
}

extern "C" void gpk__search_cuda_set_chunk(gpk__search_cuda *g, uint64_t neighbours)
{
    if (!g) return;
    g->chunk_user = neighbours != 0;
    g->chunk_limit = neighbours == 0 || neighbours > g->chunk_cap ? g->chunk_cap : neighbours;
}

extern "C" void gpk__search_cuda_set_tile(gpk__search_cuda *g, unsigned tile)
{
    if (!g || !g->tiled) return;
    const uint32_t n = g->P.n;
    g->tile = tile == SC_TILE_SMALL || tile == SC_TILE_BIG ? tile
        : n >= SC_TILE_BIG_N                               ? SC_TILE_BIG
                                                           : SC_TILE_SMALL;
}

extern "C" int gpk__search_cuda_fast(const gpk__search_cuda *g)
{
    return g ? (g->nbk == NB_QAP32 ? 1 : g->nbk == NB_TSP_2OPT_F ? 2 : 0) : 0;
}

static unsigned int sc_grid(uint64_t threads)
{
    const uint64_t b = (threads + SC_BLOCK - 1) / SC_BLOCK;
    return b < 1 ? 1u : b > 4096 ? 4096u : (unsigned int)b;
}

/* The device data of a QAP: A and B (int32 with A^T for the fast path, else
 * int64). *cost: a neighbour's evaluation; *pin: the read-back buffer. */
static gpk_status sc_open_qap(gpk__search_cuda *g, const gpk__search_cfg *cfg, int fast, uint64_t *cost,
                              uint64_t *pin)
{
    const gpk_qap *q = cfg->qap;
    const uint64_t n = cfg->n;
    const size_t nn = (size_t)n * n;
    gpk_status st = GPK_OK;
    *cost = n + 1;
    int64_t amax = 0, bmax = 0;
    for (size_t t = 0; t < nn; t++) {
        const int64_t a = q->a[t] < 0 ? -q->a[t] : q->a[t], b = q->b[t] < 0 ? -q->b[t] : q->b[t];
        if (a > amax) amax = a;
        if (b > bmax) bmax = b;
    }
    if (fast && amax < (1 << 30) && bmax < (1 << 30)) {
        /* int32 A, A^T, B on the device; Bp, Bp^T built from p there. */
        g->nbk = NB_QAP32;
        int32_t *h = (int32_t *)malloc(nn * 4);
        if (!h) return gpk__fail(g->ctx, GPK_ENOMEM, "gpk_search_run (CUDA): out of host memory");
        if ((st = sc_alloc(g, (void **)&g->d_a32, nn * 4, "cudaMalloc (QAP A)")) == GPK_OK &&
            (st = sc_alloc(g, (void **)&g->d_at32, nn * 4, "cudaMalloc (QAP A^T)")) == GPK_OK &&
            (st = sc_alloc(g, (void **)&g->d_b32, nn * 4, "cudaMalloc (QAP B)")) == GPK_OK &&
            (st = sc_alloc(g, (void **)&g->d_bp, nn * 4, "cudaMalloc (QAP Bp)")) == GPK_OK &&
            (st = sc_alloc(g, (void **)&g->d_bpt, nn * 4, "cudaMalloc (QAP Bp^T)")) == GPK_OK) {
            for (size_t t = 0; t < nn; t++) h[t] = (int32_t)q->a[t];
            st = sc_upload_sync(g, g->d_a32, h, nn * 4, "gpk_search_run (CUDA): upload (QAP A)");
            if (st == GPK_OK) {
                for (size_t x = 0; x < n; x++)
                    for (size_t y = 0; y < n; y++) h[y * n + x] = (int32_t)q->a[x * n + y];
                st = sc_upload_sync(g, g->d_at32, h, nn * 4, "gpk_search_run (CUDA): upload (QAP A^T)");
            }
            if (st == GPK_OK) {
                for (size_t t = 0; t < nn; t++) h[t] = (int32_t)q->b[t];
                st = sc_upload_sync(g, g->d_b32, h, nn * 4, "gpk_search_run (CUDA): upload (QAP B)");
            }
        }
        free(h);
        if (st != GPK_OK) return st;
    } else {
        long long *ha = (long long *)q->a, *hb = (long long *)q->b; /* int64_t == long long on the targets */
        if ((st = sc_alloc(g, (void **)&g->d_a, nn * 8, "cudaMalloc (QAP A)")) != GPK_OK ||
            (st = sc_alloc(g, (void **)&g->d_b, nn * 8, "cudaMalloc (QAP B)")) != GPK_OK ||
            (st = sc_upload(g, g->d_a, ha, nn * 8, "upload (QAP A)")) != GPK_OK ||
            (st = sc_upload(g, g->d_b, hb, nn * 8, "upload (QAP B)")) != GPK_OK)
            return st;
    }
    g->tabu_len = nn;
    *pin = n * 4 + 64;
    return GPK_OK;
}

/* The 2-opt float path's data: float hi + lo per city relative to the
 * centroid; the exact doubles stay for the guard's recomputation. */
static gpk_status sc_open_tsp_float(gpk__search_cuda *g, const gpk_tsp *t, uint64_t n, uint64_t *cost)
{
    g->nbk = NB_TSP_2OPT_F;
    g->tiled = 1;
    double cx = 0, cy = 0, mx = 0;
    for (uint64_t c = 0; c < n; c++) cx += t->x[c], cy += t->y[c];
    /* an integer centroid: integer coordinates below 2^24 from it
     * are exact floats, every lo part is 0 (the cheaper kernel) */
    cx = nearbyint(cx / (double)n);
    cy = nearbyint(cy / (double)n);
    g->P.lo_zero = 1;
    float4 *h = (float4 *)malloc(n * sizeof(float4));
    if (!h) return gpk__fail(g->ctx, GPK_ENOMEM, "gpk_search_run (CUDA): out of host memory");
    for (uint64_t c = 0; c < n; c++) {
        const double dx = t->x[c] - cx, dy = t->y[c] - cy;
        const float hx = (float)dx, hy = (float)dy;
        h[c] = make_float4(hx, hy, (float)(dx - (double)hx), (float)(dy - (double)hy));
        if (h[c].z != 0.f || h[c].w != 0.f) g->P.lo_zero = 0;
        if (fabs(dx) > mx) mx = fabs(dx);
        if (fabs(dy) > mx) mx = fabs(dy);
    }
    const double u = 1.0 / 16777216.0;
    g->P.tol = (float)(16.0 * u + 8.0 * u * u * mx);
    *cost = 16;
    gpk_status st;
    if ((st = sc_alloc(g, (void **)&g->d_c4, n * sizeof(float4), "cudaMalloc (TSP coordinates)")) == GPK_OK &&
        (st = sc_alloc(g, (void **)&g->d_pos, (n + 1) * sizeof(float4),
                       "cudaMalloc (TSP tour coordinates)")) == GPK_OK &&
        (st = sc_alloc(g, (void **)&g->d_edge, n * 4, "cudaMalloc (TSP tour edges)")) == GPK_OK &&
        (st = sc_alloc(g, (void **)&g->d_x, n * 8, "cudaMalloc (TSP x)")) == GPK_OK &&
        (st = sc_alloc(g, (void **)&g->d_yc, n * 8, "cudaMalloc (TSP y)")) == GPK_OK &&
        (st = sc_upload(g, g->d_x, t->x, n * 8, "upload (TSP x)")) == GPK_OK &&
        (st = sc_upload(g, g->d_yc, t->y, n * 8, "upload (TSP y)")) == GPK_OK)
        st = sc_upload_sync(g, g->d_c4, h, n * sizeof(float4),
                            "gpk_search_run (CUDA): upload (TSP coordinates)");
    free(h);
    if (st != GPK_OK) return st;
    /* The tiled kernel's blocks: every (row tile, column tile). */
    const uint64_t tiles = (n + SC_TILE_SMALL - 1) / SC_TILE_SMALL; /* the most blocks */
    if (tiles * tiles > g->blocks_cap) g->blocks_cap = tiles * tiles;
    g->tile = n >= SC_TILE_BIG_N ? SC_TILE_BIG : SC_TILE_SMALL;
    return GPK_OK;
}

/* The device data of a TSP: the float path's, the matrix, or the
 * coordinates (exact doubles). */
static gpk_status sc_open_tsp(gpk__search_cuda *g, const gpk__search_cfg *cfg, int fast, uint64_t *cost,
                              uint64_t *pin)
{
    const gpk_tsp *t = cfg->tsp;
    const uint64_t n = cfg->n;
    gpk_status st = GPK_OK;
    g->P.weight = (int)t->weight;
    *pin = n * 4 + 64;
    if (fast && cfg->nb == GPK_NB_TWO_OPT && n >= 8 && t->x && t->y &&
        (t->weight == GPK_TSP_EUC_2D || t->weight == GPK_TSP_CEIL_2D)) {
        if ((st = sc_open_tsp_float(g, t, n, cost)) != GPK_OK) return st;
    } else if (t->matrix) {
        const size_t nn = (size_t)n * n;
        if ((st = sc_alloc(g, (void **)&g->d_mat, nn * 4, "cudaMalloc (TSP matrix)")) != GPK_OK ||
            (st = sc_upload(g, g->d_mat, t->matrix, nn * 4, "upload (TSP matrix)")) != GPK_OK)
            return st;
    } else {
        *cost = 16;
        if ((st = sc_alloc(g, (void **)&g->d_x, n * 8, "cudaMalloc (TSP x)")) != GPK_OK ||
            (st = sc_alloc(g, (void **)&g->d_yc, n * 8, "cudaMalloc (TSP y)")) != GPK_OK ||
            (st = sc_upload(g, g->d_x, t->x, n * 8, "upload (TSP x)")) != GPK_OK ||
            (st = sc_upload(g, g->d_yc, t->y, n * 8, "upload (TSP y)")) != GPK_OK)
            return st;
    }
    g->P.tabu_city = gpk__tabu_by_city(cfg);
    g->tabu_len = g->P.tabu_city ? n : cfg->nb == GPK_NB_TWO_OPT ? g->size : (uint64_t)n * n;
    return GPK_OK;
}

/* The device data of a PPP: A, the state (gap, y, v) and the scratch of
 * the histograms. */
static gpk_status sc_open_ppp(gpk__search_cuda *g, const gpk__search_cfg *cfg, uint64_t *cost, uint64_t *pin)
{
    const gpk_ppp *p = cfg->ppp;
    const uint64_t n = cfg->n;
    gpk_status st = GPK_OK;
    g->ppp = p;
    g->m = p->m;
    g->P.m = p->m;
    *cost = 2ull * p->m + 1;
    const size_t bins = 2 * (size_t)n + 1;
    /* The scratch holds (2n + 1) ints per thread of a launch: the grid
     * is fixed by it. */
    uint64_t threads = SC_PPP_SCRATCH_BYTES / (bins * 4);
    threads = threads / SC_BLOCK * SC_BLOCK;
    if (threads < SC_BLOCK) threads = SC_BLOCK;
    if (threads > (uint64_t)g->grid_max * SC_BLOCK) threads = (uint64_t)g->grid_max * SC_BLOCK;
    g->grid_max = (unsigned int)(threads / SC_BLOCK);
    g->h_gap = (int32_t *)malloc(bins * sizeof(int32_t));
    if (!g->h_gap) return gpk__fail(g->ctx, GPK_ENOMEM, "gpk_search_run (CUDA): out of host memory");
    /* gap (2n + 1 int32), y (m int32), v (n bytes): one buffer, one upload */
    const size_t pbytes = bins * 4 + (size_t)p->m * 4 + n;
    *pin = pbytes + 64;
    if ((st = sc_alloc(g, (void **)&g->d_pa, (size_t)p->m * n, "cudaMalloc (PPP A)")) != GPK_OK ||
        (st = sc_alloc(g, &g->d_pstate, pbytes, "cudaMalloc (PPP state)")) != GPK_OK ||
        (st = sc_alloc(g, (void **)&g->d_scratch, bins * 4 * threads, "cudaMalloc (PPP scratch)")) !=
            GPK_OK ||
        (st = sc_upload(g, g->d_pa, p->a, (size_t)p->m * n, "upload (PPP A)")) != GPK_OK)
        return st;
    g->d_gap = (int32_t *)g->d_pstate;
    g->d_y = g->d_gap + bins;
    g->d_v = (int8_t *)(g->d_y + p->m);
    const cudaError_t e = cudaMemsetAsync(g->d_scratch, 0, bins * 4 * threads, g->stream);
    if (e != cudaSuccess)
        return gpk__cuda_fail(g->ctx, e, "gpk_search_run (CUDA): cudaMemsetAsync (PPP scratch)");
    g->tabu_len = n;
    return GPK_OK;
}

/* What every session holds: the solution (permutations), the read-back
 * buffers, the deltas of one chunk of neighbours, the reduction's blocks,
 * the tabu mirror; then the kernels' parameters and a zeroed tabu list. */
static gpk_status sc_open_common(gpk__search_cuda *g, const gpk__search_cfg *cfg, uint64_t cost, uint64_t pin)
{
    gpk_ctx *ctx = g->ctx;
    const uint64_t n = cfg->n;
    gpk_status st;
    if (g->kind != GPK_PROBLEM_PPP) {
        g->h_perm = (uint32_t *)malloc(n * 4);
        if (!g->h_perm) return gpk__fail(ctx, GPK_ENOMEM, "gpk_search_run (CUDA): out of host memory");
        if ((st = sc_alloc(g, (void **)&g->d_perm, n * 4, "cudaMalloc (solution)")) != GPK_OK) return st;
    }
    /* Neighbours per launch: bounded work per launch; the buffers hold one
     * chunk (set_chunk only shrinks it). */
    uint64_t chunk = SC_WORK_PER_LAUNCH / cost;
    if (chunk > SC_CHUNK_MAX) chunk = SC_CHUNK_MAX;
    if (chunk < 1024) chunk = 1024;
    if (chunk > g->size) chunk = g->size ? g->size : 1;
    cudaError_t e = cudaMallocHost((void **)&g->h_deltas, chunk * sizeof(long long));
    if (e == cudaSuccess) e = cudaMallocHost((void **)&g->h_pin, pin);
    if (e != cudaSuccess)
        return gpk__cuda_fail(ctx, e, "gpk_search_run (CUDA): cudaMallocHost (read-back buffers)");
    g->pin_bytes = pin;
    /* Hill climbing never reads the tabu list (use_tabu = 0): one entry,
     * not 8 bytes per 2-opt move of a large TSP. */
    if (cfg->algo == GPK_SEARCH_HC_BEST || cfg->algo == GPK_SEARCH_HC_FIRST) {
        g->tabu_len = 1;
        g->no_tabu = 1;
    }
    if ((st = sc_alloc(g, (void **)&g->d_deltas, chunk * 8, "cudaMalloc (deltas)")) != GPK_OK ||
        (st = sc_alloc(g, (void **)&g->d_blocks, (size_t)g->blocks_cap * 2 * sizeof(dmove),
                       "cudaMalloc (blocks)")) != GPK_OK ||
        (st = sc_alloc(g, (void **)&g->d_acc, 2 * sizeof(dmove), "cudaMalloc (result)")) != GPK_OK ||
        (st = sc_alloc(g, (void **)&g->d_count, sizeof(unsigned int), "cudaMalloc (counter)")) != GPK_OK ||
        (st = sc_alloc(g, (void **)&g->d_tabu, g->tabu_len * 8, "cudaMalloc (tabu list)")) != GPK_OK)
        return st;
    g->chunk_limit = g->chunk_cap = chunk; /* the default; the buffers' size */
    g->P.a = g->d_a;
    g->P.b = g->d_b;
    g->P.a32 = g->d_a32;
    g->P.at32 = g->d_at32;
    g->P.bp = g->d_bp;
    g->P.bpt = g->d_bpt;
    g->P.mat = g->d_mat;
    g->P.x = g->d_x;
    g->P.y = g->d_yc;
    g->P.pos = g->d_pos;
    g->P.edge = g->d_edge;
    g->P.pa = g->d_pa;
    g->P.gap = g->d_gap;
    g->P.scratch = g->d_scratch;
    g->P.perm = g->d_perm;
    g->P.v = g->d_v;
    g->P.py = g->d_y;
    g->P.tabu = g->d_tabu;
    e = cudaMemsetAsync(g->d_tabu, 0, g->tabu_len * 8, g->stream);
    if (e == cudaSuccess) e = cudaMemsetAsync(g->d_count, 0, sizeof(unsigned int), g->stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(g->stream);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "gpk_search_run (CUDA): setting up the device data");
    return GPK_OK;
}

/* The kernel family of the problem's neighbourhood, or GPK_EUNSUPPORTED
 * when the device cannot evaluate this configuration bit-identically. */
static gpk_status sc_choose_kernels(gpk__search_cuda *g, const gpk__search_cfg *cfg)
{
    gpk_ctx *ctx = g->ctx;
    if (cfg->kind == GPK_PROBLEM_QAP && cfg->nb == GPK_NB_SWAP) g->nbk = NB_QAP_SWAP;
    else if (cfg->kind == GPK_PROBLEM_TSP && cfg->nb == GPK_NB_SWAP) g->nbk = NB_TSP_SWAP;
    else if (cfg->kind == GPK_PROBLEM_TSP && cfg->nb == GPK_NB_TWO_OPT) g->nbk = NB_TSP_2OPT;
    else if (cfg->kind == GPK_PROBLEM_PPP && cfg->nb == GPK_NB_FLIP1) g->nbk = NB_PPP_FLIP1;
    else if (cfg->kind == GPK_PROBLEM_PPP && cfg->nb == GPK_NB_FLIP2) g->nbk = NB_PPP_FLIP2;
    else
        return gpk__fail(ctx, GPK_EUNSUPPORTED,
                         "gpk_search_run (CUDA): neighbourhood not supported for this problem");
    if (cfg->kind == GPK_PROBLEM_TSP && !cfg->tsp->matrix &&
        (cfg->tsp->weight == GPK_TSP_GEO || cfg->tsp->weight == GPK_TSP_EXPLICIT))
        return gpk__fail(
            ctx, GPK_EUNSUPPORTED,
            "gpk_search_run (CUDA): GEO distances without a matrix (n = %u) are not bit-identical on the "
            "device",
            cfg->n);
    return GPK_OK;
}

extern "C" gpk_status gpk__search_cuda_open_ex(gpk_ctx *ctx, const gpk__search_cfg *cfg, int flags,
                                               gpk__search_cuda **out)
{
    *out = NULL;
    if (!ctx || ctx->backend != GPK_BACKEND_CUDA || !ctx->cuda)
        return gpk__fail(ctx, GPK_EUNSUPPORTED, "gpk_search_run (CUDA): the context is not a CUDA context");
    const gpk_cuda_state *cs = (const gpk_cuda_state *)ctx->cuda;
    gpk__search_cuda *g = (gpk__search_cuda *)calloc(1, sizeof *g);
    if (!g) return gpk__fail(ctx, GPK_ENOMEM, "gpk_search_run (CUDA): out of host memory");
    const int fast = !(flags & GPK__SEARCH_CUDA_NO_FAST);
    g->ctx = ctx;
    g->stream = cs->stream;
    g->kind = cfg->kind;
    g->nb = cfg->nb;
    g->n = cfg->n;
    const uint64_t n = cfg->n;
    g->size = cfg->nb == GPK_NB_FLIP1 ? n : n * (n - 1) / 2;
    g->P.n = cfg->n;
    g->P.size = g->size;
    gpk_status st = sc_choose_kernels(g, cfg);
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
    uint64_t cost = 4, pin = 64;
    const int sm = cs->sm_count > 0 ? cs->sm_count : 1;
    g->grid_max = (unsigned int)sm * 8u;
    g->blocks_cap = g->grid_max;
    if (g->kind == GPK_PROBLEM_QAP) st = sc_open_qap(g, cfg, fast, &cost, &pin);
    else if (g->kind == GPK_PROBLEM_TSP) st = sc_open_tsp(g, cfg, fast, &cost, &pin);
    else st = sc_open_ppp(g, cfg, &cost, &pin);
    if (st == GPK_OK) st = sc_open_common(g, cfg, cost, pin);
    if (st != GPK_OK) {
        gpk__search_cuda_close(g);
        return st;
    }
    *out = g;
    return GPK_OK;
}

extern "C" gpk_status gpk__search_cuda_open(gpk_ctx *ctx, const gpk__search_cfg *cfg, gpk__search_cuda **out)
{
    return gpk__search_cuda_open_ex(ctx, cfg, 0, out);
}

/* Sends the pending tabu writes and the changed positions (pt.np) in one
 * launch; the QAP fast path also updates Bp there. */
static gpk_status sc_send_patch(gpk__search_cuda *g, sc_patch *pt)
{
    if (pt->np == 0 && pt->nt == 0) return GPK_OK;
    const int qap = g->nbk == NB_QAP32 && pt->np > 0;
    const unsigned int grid = qap ? sc_grid((uint64_t)pt->np * g->n) : 1;
    k_patch<<<grid, SC_BLOCK, 0, g->stream>>>(*pt, g->d_perm, g->d_tabu, g->d_b32, qap ? g->d_bp : NULL,
                                              qap ? g->d_bpt : NULL, g->n);
    SC_CK(cudaGetLastError(), "launching the solution update");
    return GPK_OK;
}

extern "C" gpk_status gpk__search_cuda_tabu_upload(gpk__search_cuda *g, const uint64_t *tabu)
{
    g->pend.nt = 0; /* the whole array replaces the writes not yet sent */
    if (!tabu) {
        SC_CK(cudaMemsetAsync(g->d_tabu, 0, g->tabu_len * 8, g->stream), "clearing the tabu list");
        return GPK_OK;
    }
    return sc_upload(g, g->d_tabu, tabu, g->tabu_len * 8, "gpk_search_run (CUDA): uploading the tabu list");
}

extern "C" gpk_status gpk__search_cuda_tabu_set(gpk__search_cuda *g, uint64_t index, uint64_t until)
{
    if (index >= g->tabu_len)
        return gpk__fail(g->ctx, GPK_EINVAL, "gpk_search_run (CUDA): tabu index out of range");
    /* Kept and sent with the next evaluation (kernel arguments: no copy). */
    if (g->pend.nt == SC_PATCH) {
        sc_patch pt = g->pend;
        pt.np = 0;
        g->pend.nt = 0;
        gpk_status st = sc_send_patch(g, &pt);
        if (st != GPK_OK) return st;
    }
    g->pend.ti[g->pend.nt] = index;
    g->pend.tu[g->pend.nt] = until;
    g->pend.nt++;
    return GPK_OK;
}

/* The host's tabu rule (search_cpu.c's is_tabu) for PAPER mode. */
static int sc_host_tabu(const gpk__search_cuda *g, const gpk__search_cuda_in *in, uint64_t k, uint32_t i,
                        uint32_t j)
{
    const uint64_t it = in->iteration;
    const uint64_t *tb = in->tabu;
    switch (g->nb) {
    case GPK_NB_SWAP:
        if (g->P.tabu_city) return tb[in->perm[i]] > it && tb[in->perm[j]] > it;
        return tb[(size_t)i * g->n + in->perm[j]] > it && tb[(size_t)j * g->n + in->perm[i]] > it;
    case GPK_NB_TWO_OPT:
        if (g->P.tabu_city) return tb[in->perm[i]] > it && tb[in->perm[j + 1 == g->n ? 0 : j + 1]] > it;
        return tb[k] > it;
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
        k_best<NB><<<grid, SC_BLOCK, 0, g->stream>>>(g->P, k0, k1, g->d_blocks, g->d_acc, g->d_count, first);
        SC_CK(cudaGetLastError(), "launching the neighbourhood evaluation");
    }
    return GPK_OK;
}

/* Brings the device's solution (and everything derived from it) to the
 * host's: the changed positions as a patch when few, else the whole. */
static gpk_status sc_sync_solution(gpk__search_cuda *g, const uint32_t *perm)
{
    const uint32_t n = g->n;
    sc_patch pt = g->pend;
    g->pend.nt = 0;
    pt.np = 0;
    int full = !g->perm_valid, changed = 0;
    if (!full) {
        for (uint32_t x = 0; x < n; x++) {
            if (perm[x] == g->h_perm[x]) continue;
            if (pt.np == SC_PATCH) {
                full = 1;
                break;
            }
            pt.pos[pt.np] = x;
            pt.val[pt.np] = perm[x];
            pt.np++;
        }
    }
    gpk_status st;
    if (full) {
        pt.np = 0;
        memcpy(g->h_pin, perm,
               (size_t)n * 4); /* pinned: the previous call's copies are done (it synchronised) */
        if ((st = sc_upload(g, g->d_perm, g->h_pin, (size_t)n * 4,
                            "gpk_search_run (CUDA): upload (solution)")) != GPK_OK)
            return st;
        changed = 1;
    } else {
        changed = pt.np > 0;
    }
    if ((st = sc_send_patch(g, &pt)) != GPK_OK) return st;
    if (changed) memcpy(g->h_perm, perm, (size_t)n * 4);
    g->perm_valid = 1;
    if (full && g->nbk == NB_QAP32) {
        k_qap_build<<<sc_grid((uint64_t)n * n), SC_BLOCK, 0, g->stream>>>(g->d_perm, g->d_b32, g->d_bp,
                                                                          g->d_bpt, n);
        SC_CK(cudaGetLastError(), "launching the permuted matrix build");
    }
    if (changed && g->nbk == NB_TSP_2OPT_F) {
        k_tsp_prep<<<sc_grid((uint64_t)n + 1), SC_BLOCK, 0, g->stream>>>(g->P, g->d_c4, g->d_pos, g->d_edge);
        SC_CK(cudaGetLastError(), "launching the tour preparation");
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
    if (in->use_tabu && g->no_tabu)
        return gpk__fail(g->ctx, GPK_EINVAL,
                         "gpk_search_run (CUDA): a hill-climbing session has no tabu list");
    SC_CK(cudaSetDevice(g->ctx->device), "cudaSetDevice");
    const uint32_t n = g->n;
    gpk_status st;
    if (g->kind == GPK_PROBLEM_PPP) {
        /* The base gap H'(y) - H, as src/search/ppp.c's gap_histogram; gap,
         * y and v staged together, one copy. */
        const int32_t ni = (int32_t)n;
        const size_t bins = 2 * (size_t)n + 1;
        memset(g->h_gap, 0, bins * sizeof(int32_t));
        for (uint32_t i = 0; i < g->m; i++) g->h_gap[in->y[i] + ni]++;
        for (int32_t v = 0; v <= ni; v++) g->h_gap[v + ni] -= (int32_t)g->ppp->hist[v];
        memcpy(g->h_pin, g->h_gap, bins * 4);
        memcpy(g->h_pin + bins * 4, in->y, (size_t)g->m * 4);
        memcpy(g->h_pin + bins * 4 + (size_t)g->m * 4, in->v, n);
        sc_patch pt = g->pend;
        g->pend.nt = 0;
        pt.np = 0;
        if ((st = sc_upload(g, g->d_pstate, g->h_pin, bins * 4 + (size_t)g->m * 4 + n,
                            "gpk_search_run (CUDA): upload (v, y, gap)")) != GPK_OK ||
            (st = sc_send_patch(g, &pt)) != GPK_OK)
            return st;
    } else if ((st = sc_sync_solution(g, in->perm)) != GPK_OK) {
        return st;
    }
    g->P.iteration = in->iteration;
    g->P.cost = in->cost;
    g->P.best = in->best;
    g->P.use_tabu = in->use_tabu;

    /* chunk_limit never exceeds the buffers' size (set at open). The tiled
     * kernel writes no deltas: one launch unless a limit was asked for. */
    const int tiled = g->tiled && mode != GPK__SEARCH_CUDA_PAPER;
    uint64_t chunk = tiled && !g->chunk_user ? g->size : g->chunk_limit;
    if (chunk == 0) chunk = 1;
    const int ppp = g->kind == GPK_PROBLEM_PPP;
    int first = 1;
    int64_t best_any_d = INT64_MAX, best_adm_d = INT64_MAX;
    uint64_t best_any_k = UINT64_MAX, best_adm_k = UINT64_MAX;
    for (uint64_t k0 = 0; k0 < g->size; k0 += chunk) {
        const uint64_t k1 = g->size - k0 < chunk ? g->size : k0 + chunk;
        if (tiled) {
            uint32_t ia, ja, ib, jb;
            gpk_swap_index_to_pair(n, k0, &ia, &ja);
            gpk_swap_index_to_pair(n, k1 - 1, &ib, &jb);
            const uint32_t tile = g->tile;
            const uint32_t t0 = ia / tile, t1 = ib / tile;
            const dim3 grid((n + tile - 1) / tile, t1 - t0 + 1);
            if (tile == SC_TILE_BIG && g->P.lo_zero)
                k_2opt_tiled<true, SC_TILE_BIG><<<grid, tile, 0, g->stream>>>(g->P, k0, k1, t0, g->d_blocks,
                                                                              g->d_acc, g->d_count, first);
            else if (tile == SC_TILE_BIG)
                k_2opt_tiled<false, SC_TILE_BIG><<<grid, tile, 0, g->stream>>>(g->P, k0, k1, t0, g->d_blocks,
                                                                               g->d_acc, g->d_count, first);
            else if (g->P.lo_zero)
                k_2opt_tiled<true, SC_TILE_SMALL><<<grid, tile, 0, g->stream>>>(g->P, k0, k1, t0, g->d_blocks,
                                                                                g->d_acc, g->d_count, first);
            else
                k_2opt_tiled<false, SC_TILE_SMALL><<<grid, tile, 0, g->stream>>>(
                    g->P, k0, k1, t0, g->d_blocks, g->d_acc, g->d_count, first);
            SC_CK(cudaGetLastError(), "launching the tiled 2-opt evaluation");
            first = 0;
            continue;
        }
        uint64_t blocks = (k1 - k0 + SC_BLOCK - 1) / SC_BLOCK;
        /* PPP: the grid is fixed (each thread owns a scratch slice; a
         * smaller grid also works: T only sets the stride). */
        unsigned int grid = blocks < g->grid_max ? (unsigned int)blocks : g->grid_max;
        if (ppp) grid = g->grid_max;
        switch (g->nbk) {
        case NB_QAP_SWAP: st = sc_launch<NB_QAP_SWAP>(g, mode, k0, k1, grid, first); break;
        case NB_QAP32: st = sc_launch<NB_QAP32>(g, mode, k0, k1, grid, first); break;
        case NB_TSP_SWAP: st = sc_launch<NB_TSP_SWAP>(g, mode, k0, k1, grid, first); break;
        case NB_TSP_2OPT: st = sc_launch<NB_TSP_2OPT>(g, mode, k0, k1, grid, first); break;
        case NB_TSP_2OPT_F: st = sc_launch<NB_TSP_2OPT_F>(g, mode, k0, k1, grid, first); break;
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
    dmove *h = (dmove *)g->h_pin;
    SC_CK(cudaMemcpyAsync(h, g->d_acc, 2 * sizeof(dmove), cudaMemcpyDeviceToHost, g->stream),
          "copying the move back");
    SC_CK(cudaStreamSynchronize(g->stream), "neighbourhood evaluation");
    any->d = h[0].d;
    any->k = h[0].k;
    adm->d = h[1].d;
    adm->k = h[1].k;
    return GPK_OK;
}

/* ---- or2opt: the neighbour-list neighbourhood, one thread per city ----
 * The batched descent of src/search/tsp_ls.c (batch_descend) hands over
 * the tour and the cities whose don't-look bit is off; each thread finds
 * its city's best 2-opt or Or-opt move over the city's neighbour list,
 * exactly as gpk__tsp_ls_best_move does on the host (the same moves, pruning,
 * codes and ties; distances with d_dist, bit-identical to the host's), and
 * the host applies them. A neighbour list is K = 10 cities, so one city is
 * a few hundred distances: the whole tour of 10^5 cities is one launch. */

struct gpk__tsp_ls_cuda {
    gpk_ctx *ctx;
    cudaStream_t stream;
    dev_problem P; /* n, weight and the distances (matrix or coordinates) */
    uint32_t k;
    int32_t *d_mat, *d_nd;
    double *d_x, *d_y;
    uint32_t *d_nb, *d_tour, *d_pos, *d_cities;
    gpk__ls_move *d_moves;
    unsigned char *h_pin; /* the tour, the cities, the moves read back */
};

#define LS_FN static __device__ __forceinline__
typedef const dev_problem &ls_dist_ctx;
static __device__ __forceinline__ int32_t ls_dist(ls_dist_ctx P, uint32_t a, uint32_t b)
{
    return d_dist(P, a, b);
}
#include "tsp_ls_move_inline.h"

__global__ void k_ls_pos(const uint32_t *t, uint32_t *pos, uint32_t n)
{
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        pos[t[i]] = i;
}

__global__ void __launch_bounds__(SC_BLOCK)
    k_ls_best(dev_problem P, const uint32_t *nbs, const int32_t *nds, uint32_t k, const uint32_t *t,
              const uint32_t *pos, const uint32_t *cities, uint32_t count, gpk__ls_move *out)
{
    for (uint32_t w = blockIdx.x * blockDim.x + threadIdx.x; w < count; w += gridDim.x * blockDim.x)
        out[w] = ls_best_move(P, P.n, nbs, nds, k, t, pos, cities[w]);
}

#define LS_CK(call, what)                                                                                \
    do {                                                                                                 \
        cudaError_t e_ = (call);                                                                         \
        if (e_ != cudaSuccess) return gpk__cuda_fail(g->ctx, e_, "gpk_search_run (CUDA or2opt): " what); \
    } while (0)

extern "C" void gpk__tsp_ls_cuda_close(gpk__tsp_ls_cuda *g)
{
    if (!g) return;
    void *d[] = {g->d_mat, g->d_nd, g->d_x, g->d_y, g->d_nb, g->d_tour, g->d_pos, g->d_cities, g->d_moves};
    (void)cudaSetDevice(g->ctx->device);
    if (g->stream) (void)cudaStreamSynchronize(g->stream);
    for (size_t q = 0; q < sizeof d / sizeof *d; q++)
        if (d[q]) (void)cudaFree(d[q]);
    if (g->h_pin) (void)cudaFreeHost(g->h_pin);
    (void)cudaGetLastError();
    free(g);
}

static gpk_status ls_cuda_setup(gpk__tsp_ls_cuda *g, const gpk_tsp *t, const uint32_t *nb, const int32_t *nd)
{
    const size_t n = t->n, nk = n * g->k;
    LS_CK(cudaMalloc((void **)&g->d_nb, nk * 4), "cudaMalloc (neighbour lists)");
    LS_CK(cudaMalloc((void **)&g->d_nd, nk * 4), "cudaMalloc (neighbour distances)");
    LS_CK(cudaMalloc((void **)&g->d_tour, n * 4), "cudaMalloc (tour)");
    LS_CK(cudaMalloc((void **)&g->d_pos, n * 4), "cudaMalloc (positions)");
    LS_CK(cudaMalloc((void **)&g->d_cities, n * 4), "cudaMalloc (cities)");
    LS_CK(cudaMalloc((void **)&g->d_moves, n * sizeof(gpk__ls_move)), "cudaMalloc (moves)");
    LS_CK(cudaMallocHost((void **)&g->h_pin, n * (8 + sizeof(gpk__ls_move))), "cudaMallocHost (staging)");
    LS_CK(cudaMemcpyAsync(g->d_nb, nb, nk * 4, cudaMemcpyHostToDevice, g->stream),
          "upload (neighbour lists)");
    LS_CK(cudaMemcpyAsync(g->d_nd, nd, nk * 4, cudaMemcpyHostToDevice, g->stream),
          "upload (neighbour distances)");
    /* Coordinates when the kind has them (the matrix, up to 1.6 GB, is not
     * needed for 26 K distances per city); else the matrix. */
    if (t->x && t->weight != GPK_TSP_GEO && t->weight != GPK_TSP_EXPLICIT) {
        LS_CK(cudaMalloc((void **)&g->d_x, n * 8), "cudaMalloc (x)");
        LS_CK(cudaMalloc((void **)&g->d_y, n * 8), "cudaMalloc (y)");
        LS_CK(cudaMemcpyAsync(g->d_x, t->x, n * 8, cudaMemcpyHostToDevice, g->stream), "upload (x)");
        LS_CK(cudaMemcpyAsync(g->d_y, t->y, n * 8, cudaMemcpyHostToDevice, g->stream), "upload (y)");
    } else {
        LS_CK(cudaMalloc((void **)&g->d_mat, n * n * 4), "cudaMalloc (distance matrix)");
        LS_CK(cudaMemcpyAsync(g->d_mat, t->matrix, n * n * 4, cudaMemcpyHostToDevice, g->stream),
              "upload (distance matrix)");
    }
    LS_CK(cudaStreamSynchronize(g->stream), "set-up");
    g->P.n = t->n;
    g->P.weight = (int)t->weight;
    g->P.mat = g->d_mat;
    g->P.x = g->d_x;
    g->P.y = g->d_y;
    return GPK_OK;
}

extern "C" gpk_status gpk__tsp_ls_cuda_open(gpk_ctx *ctx, const gpk_tsp *t, const uint32_t *nb,
                                            const int32_t *nd, uint32_t k, gpk__tsp_ls_cuda **out)
{
    *out = NULL;
    if (!ctx || ctx->backend != GPK_BACKEND_CUDA || !ctx->cuda)
        return gpk__fail(ctx, GPK_EUNSUPPORTED,
                         "gpk_search_run (CUDA or2opt): the context is not a CUDA context");
    const int coords = t->x && t->weight != GPK_TSP_GEO && t->weight != GPK_TSP_EXPLICIT;
    if (!coords && !t->matrix)
        return gpk__fail(ctx, GPK_EUNSUPPORTED,
                         "gpk_search_run (CUDA or2opt): GEO distances without a matrix (n = %u) are not "
                         "bit-identical on the device",
                         t->n);
    const cudaError_t e = cudaSetDevice(ctx->device);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "gpk_search_run (CUDA or2opt): cudaSetDevice");
    gpk__tsp_ls_cuda *g = (gpk__tsp_ls_cuda *)calloc(1, sizeof *g);
    if (!g) return gpk__fail(ctx, GPK_ENOMEM, "gpk_search_run (CUDA or2opt): out of host memory");
    g->ctx = ctx;
    g->stream = ((const gpk_cuda_state *)ctx->cuda)->stream;
    g->k = k;
    const gpk_status st = ls_cuda_setup(g, t, nb, nd);
    if (st != GPK_OK) {
        gpk__tsp_ls_cuda_close(g);
        return st;
    }
    *out = g;
    return GPK_OK;
}

extern "C" gpk_status gpk__tsp_ls_cuda_eval(gpk__tsp_ls_cuda *g, const uint32_t *tour, const uint32_t *cities,
                                            uint32_t count, gpk__ls_move *moves)
{
    const uint32_t n = g->P.n;
    if (count == 0) return GPK_OK;
    LS_CK(cudaSetDevice(g->ctx->device), "cudaSetDevice");
    uint32_t *h_tour = (uint32_t *)g->h_pin, *h_cities = h_tour + n;
    gpk__ls_move *h_moves = (gpk__ls_move *)(h_cities + n);
    memcpy(h_tour, tour, (size_t)n * 4);
    memcpy(h_cities, cities, (size_t)count * 4);
    LS_CK(cudaMemcpyAsync(g->d_tour, h_tour, (size_t)n * 4, cudaMemcpyHostToDevice, g->stream),
          "upload (tour)");
    LS_CK(cudaMemcpyAsync(g->d_cities, h_cities, (size_t)count * 4, cudaMemcpyHostToDevice, g->stream),
          "upload (cities)");
    k_ls_pos<<<sc_grid(n), SC_BLOCK, 0, g->stream>>>(g->d_tour, g->d_pos, n);
    LS_CK(cudaGetLastError(), "launch (positions)");
    const unsigned int blocks = (count + SC_BLOCK - 1) / SC_BLOCK;
    k_ls_best<<<blocks, SC_BLOCK, 0, g->stream>>>(g->P, g->d_nb, g->d_nd, g->k, g->d_tour, g->d_pos,
                                                  g->d_cities, count, g->d_moves);
    LS_CK(cudaGetLastError(), "launch (neighbour-list moves)");
    LS_CK(cudaMemcpyAsync(h_moves, g->d_moves, (size_t)count * sizeof *h_moves, cudaMemcpyDeviceToHost,
                          g->stream),
          "read-back (moves)");
    LS_CK(cudaStreamSynchronize(g->stream), "neighbour-list moves");
    memcpy(moves, h_moves, (size_t)count * sizeof *moves);
    return GPK_OK;
}
