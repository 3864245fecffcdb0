/* Internals of the search (include/gpk/search.h, "the search"): the
 * validated, resolved parameters that src/search/search.c hands to a
 * backend's implementation. */
#ifndef GPK_SEARCH_RUN_H
#define GPK_SEARCH_RUN_H

#include "../core/internal.h"
#include "gpk/search.h"

#include <stdlib.h>
#include <string.h>

typedef struct gpk__search_cfg {
    gpk_problem_kind kind;
    const struct gpk__problem_ops *ops; /* kind's table (problem.h), never NULL */
    const gpk_qap *qap;
    const gpk_tsp *tsp;
    const gpk_ppp *ppp;
    gpk_neighbourhood nb; /* resolved: never GPK_NB_DEFAULT */
    gpk_search_algo algo;
    uint32_t n;             /* solution length */
    uint64_t iters;         /* resolved per algo (HC: 0 = unlimited) */
    uint32_t global_iters;  /* ITS / MULTISTART, resolved */
    uint32_t tenure;        /* TABU / ITS / MULTISTART, resolved */
    uint32_t tenure_spread; /* > 0: each move's tenure is uniform in tenure +- spread (QAP, n < 20) */
    uint32_t tenure_cube;   /* > 0: each move draws tenure + tenure_cube * u^3, u in [0, 1) (QAP, n >= 20) */
    uint32_t starts;        /* MULTISTART, resolved */
    uint32_t perturb;       /* ITS: random moves between rounds */
    uint64_t seed;
    const uint32_t *start; /* validated, or NULL */
    void (*progress)(const gpk_search_progress *p, void *user);
    void *user;
    uint64_t progress_every;       /* resolved, >= 1 */
    int threads;                   /* the context's CPU threads, >= 1 */
    gpk_search_eval eval;          /* CUDA context: PAPER or OURS */
    gpk_qap_delta qap_delta;       /* QAP CPU scan: table or formula */
    uint64_t kicks;                /* or2opt ILS (tabu, its, multistart): kicks per run, 0: until stopped */
    double deadline;               /* omp_get_wtime() at which to stop; 0: none */
    volatile sig_atomic_t *cancel; /* or NULL */
} gpk__search_cfg;

/* 1 when the search must stop now: the cancel flag is set or the deadline
 * has passed. Cheap (a clock read), but callers still space the calls out
 * in tight loops. */
int gpk__search_should_stop(const gpk__search_cfg *c);

/* Multistart progress: every run publishes its counts here and the
 * reporting thread sums them, so that a report counts all the runs, as the
 * result does (not the reporting thread's own runs alone). Runs not
 * started yet hold best = INT64_MAX. */
typedef struct gpk__tally {
    uint32_t runs;
    uint64_t *iters, *evaluated;
    int64_t *best;
} gpk__tally;
static inline int gpk__tally_init(gpk__tally *t, uint32_t runs)
{
    t->runs = runs;
    /* casts: the header is included from CUDA (C++) sources too */
    t->iters = (uint64_t *)calloc(runs, sizeof *t->iters);
    t->evaluated = (uint64_t *)calloc(runs, sizeof *t->evaluated);
    t->best = (int64_t *)malloc(runs * sizeof *t->best);
    if (!t->iters || !t->evaluated || !t->best) return -1;
    for (uint32_t r = 0; r < runs; r++) t->best[r] = INT64_MAX;
    return 0;
}
static inline void gpk__tally_free(gpk__tally *t)
{
    free(t->iters);
    free(t->evaluated);
    free(t->best);
    memset(t, 0, sizeof *t);
}
static inline void gpk__tally_put(gpk__tally *t, uint32_t r, uint64_t iters, uint64_t evaluated, int64_t best)
{
    if (!t) return;
    __atomic_store_n(&t->iters[r], iters, __ATOMIC_RELAXED);
    __atomic_store_n(&t->evaluated[r], evaluated, __ATOMIC_RELAXED);
    __atomic_store_n(&t->best[r], best, __ATOMIC_RELAXED);
}
/* p's iteration, evaluated and best become the totals over the runs. */
static inline void gpk__tally_sum(gpk__tally *t, gpk_search_progress *p)
{
    if (!t) return;
    uint64_t it = 0, ev = 0;
    int64_t best = INT64_MAX;
    for (uint32_t r = 0; r < t->runs; r++) {
        const int64_t c = __atomic_load_n(&t->best[r], __ATOMIC_RELAXED);
        it += __atomic_load_n(&t->iters[r], __ATOMIC_RELAXED);
        ev += __atomic_load_n(&t->evaluated[r], __ATOMIC_RELAXED);
        if (c < best) best = c;
    }
    p->iteration = it;
    p->evaluated = ev;
    if (best < p->best) p->best = best;
}

/* The options of run r of a multistart spread over contexts
 * (gpk_search_run_multi, the MPI multistart), from resolved options
 * (gpk_search_opts_resolve): a multistart becomes one ITS run with a
 * multistart run's budget, seeded splitmix64(seed + r), run 0 from the
 * start solution. */
static inline void gpk__search_multi_run_opts(gpk_problem_kind kind, const gpk_search_opts *resolved,
                                              uint32_t r, gpk_search_opts *o)
{
    *o = *resolved;
    if (o->algo == GPK_SEARCH_MULTISTART) {
        /* a multistart run's budget (its, not the single ITS's); with a
         * time limit and no counts, rounds until the limit */
        if (!o->global_iters && !(o->time_limit > 0 && !o->iters))
            o->global_iters = gpk_search_default_global_iters(kind, GPK_SEARCH_MULTISTART, 0);
        o->algo = GPK_SEARCH_ITS;
    }
    o->seed = gpk__splitmix64(resolved->seed + r); /* as search_cpu.c seeds multistart run r */
    o->start = r == 0 ? resolved->start : NULL;
    o->starts = 0;
}

/* ---- TSP local search with neighbour lists (src/search/tsp_ls.c) ---- */
#define GPK__TSP_LS_K 10u /* neighbours per city */
/* An array tour and its inverse; log (when not NULL) records the positions
 * the moves write, up to cap (beyond: overflow = 1). */
typedef struct gpk__tour {
    uint32_t n;
    uint32_t *t, *pos;
    uint32_t *log;
    size_t nlog, cap;
    int overflow;
    uint64_t work; /* swaps made by reversals so far (the stop checks' clock) */
} gpk__tour;
/* The k nearest cities of each city (nb, n x k, nearest first; nd their
 * distances): a grid for the Euclidean kinds, every pair otherwise. */
gpk_status gpk__tsp_neighbours(const gpk_tsp *t, uint32_t k, int threads, const gpk__search_cfg *stop,
                               uint32_t *nb, int32_t *nd);
/* What gpk__tsp_neighbours returns when `stop` (non-NULL) said to stop
 * before the lists were complete; never returned by a public call. */
#define GPK_EAGAIN_STOP ((gpk_status)-100)
/* Removes the tour edges (a, b) and (c, d), b following a and d following c
 * in one reading direction, and adds (a, c) and (b, d). */
void gpk__tour_move2(gpk__tour *T, uint32_t a, uint32_t b, uint32_t c, uint32_t d);
/* Or-opt: the path s1 .. s2 (reading forward) moves between x and y = the
 * city after x (neither in the path, y not the city before s1): x s1..s2 y,
 * or x s2..s1 y when rev. The length change before the move: */
int64_t gpk__tour_or_delta(const gpk_tsp *t, const gpk__tour *T, uint32_t s1, uint32_t s2, uint32_t x,
                           uint32_t y, int rev);
void gpk__tour_or_move(gpk__tour *T, uint32_t s1, uint32_t s2, uint32_t x, uint32_t y, int rev);
uint32_t gpk__tour_next(const gpk__tour *T, uint32_t c);
uint32_t gpk__tour_prev(const gpk__tour *T, uint32_t c);

/* Row u of gpk_qap_delta_update (the pairs (u, v), v > u): the rows are
 * independent, so a caller may update them in parallel. */
void gpk__qap_delta_update_row(const gpk_qap *q, const uint32_t *p_after, int64_t *delta, uint32_t r,
                               uint32_t s, size_t u);

/* Moves that would reverse more than this many cities (on the shorter
 * side) are passed over, on the CPU and the GPU alike. Only instances above
 * 2 x MAX_REVERSAL cities have such moves; there, from the Hilbert-curve
 * start, they made a million-city descent spend half its time swapping
 * array entries for small gains. */
#define GPK__TSP_LS_MAX_REVERSAL 50000u
/* The best improving move from one city (gpk__tsp_ls_best_move): d < 0 and
 * its code, or d = 0 and code = GPK__LS_NONE when no move from the city
 * improves. Codes, K the list length, i the neighbour's index in the list:
 *   2-opt:  dir * K + i                         (dir 0: b = next(a); 1: prev)
 *   Or-opt: 2K + ((seg * K + i) * 2 + side) * 2 + rev
 *           seg = 0 (length 1), 1 + 2 (len - 2) + end (lengths 2, 3)
 * Ties: the smallest code. evaluated: the moves looked at. */
#define GPK__LS_NONE UINT32_MAX
typedef struct gpk__ls_move {
    int64_t d;
    uint32_t code;
    uint32_t evaluated;
} gpk__ls_move;
/* The reference for the GPU's batch evaluation: the best move from city a
 * of the tour t (pos its inverse) over a's neighbour list (nb, nd: k per
 * city), the same moves as the CPU descent tries (with its gain pruning
 * and reversal bound). */
gpk__ls_move gpk__tsp_ls_best_move(const gpk_tsp *tsp, const uint32_t *nb, const int32_t *nd, uint32_t k,
                                   const uint32_t *t, const uint32_t *pos, uint32_t a);
/* From this many cities a CUDA context runs the or2opt descents batched on
 * the GPU (GPK_TSP_LS_BATCH=gpu: from any size; =host: the batched descent
 * with gpk__tsp_ls_best_move on the host, for the tests; =off: never). */
#define GPK__TSP_LS_GPU_MIN GPK_TSP_OR_OPT_GPU_MIN

/* The or2opt search (hc, hc-first: one descent; tabu, its: an ILS;
 * multistart: `starts` ILS runs on the threads); fills r like
 * gpk__search_cpu, r->solution already allocated. */
gpk_status gpk__tsp_ls(gpk_ctx *ctx, const gpk__search_cfg *cfg, gpk_search_result *r);

/* TSP tabu above the matrix threshold is keyed by city, n entries: 2-opt
 * by the two cities that stay in place (tour[i] and tour[j + 1 mod n], the
 * outer ends of the reversed segment), swap by the two cities moved; a move
 * is tabu when both of its cities are. Below it, as the paper's
 * reproduction runs: 2-opt by the move (i, j), n(n-1)/2 entries, swap by
 * (city, position), n^2. Those would need 29.5 GB and 59 GB at 85 900
 * cities. */
static inline int gpk__tabu_by_city(const gpk__search_cfg *c)
{
    return c->kind == GPK_PROBLEM_TSP && c->n > GPK_TSP_MATRIX_MAX;
}

/* The CPU implementation: fills r (solution allocated here). */
gpk_status gpk__search_cpu(gpk_ctx *ctx, const gpk__search_cfg *cfg, gpk_search_result *r);

/* ---- the CUDA neighbourhood evaluation (src/search/search_cuda.cu; built
 * with GPK_WITH_CUDA_SEARCH, ON by default with CUDA, which defines
 * GPK_HAVE_CUDA_SEARCH) ----
 * A session keeps the problem's data on the device (QAP A and B; TSP
 * matrix or coordinates; PPP A), the current solution and a device mirror
 * of the tabu array. Each call of gpk__search_cuda_best_move brings the
 * device's solution to the host's (QAP p / TSP tour: only the changed
 * positions when few; PPP v and y), evaluates the WHOLE neighbourhood on the
 * GPU (one thread per neighbour, in chunks) and returns the same two moves
 * as the CPU scan: the best of all and the best admissible (tabu rule with
 * aspiration), each the minimum of (delta, k).
 * PAPER: every delta is copied to the host and the choice made there;
 * OURS: the choice is reduced on the device and one result copied back.
 * The host copy of the state stays authoritative; the caller mirrors its
 * tabu writes with gpk__search_cuda_tabu_set (kept and sent with the next
 * evaluation) / _upload. */
#ifdef __cplusplus
extern "C" {
#endif
typedef struct gpk__search_cuda gpk__search_cuda;
typedef enum { GPK__SEARCH_CUDA_PAPER = 0, GPK__SEARCH_CUDA_OURS = 1 } gpk__search_cuda_mode;

typedef struct gpk__search_cuda_in {
    const uint32_t *perm; /* QAP p / TSP tour, n entries */
    const int8_t *v;      /* PPP v (+-1), n entries */
    const int32_t *y;     /* PPP y = A v, m entries */
    const uint64_t *tabu; /* the host tabu array (PAPER: the host's choice reads it) */
    uint64_t iteration;   /* an attribute is tabu while tabu[.] > iteration */
    int64_t cost, best;   /* aspiration: cost + d < best */
    int use_tabu;
} gpk__search_cuda_in;

typedef struct gpk__search_cuda_move {
    int64_t d;  /* INT64_MAX: none */
    uint64_t k; /* neighbour index (k -> (i, j) with gpk_swap_index_to_pair; 1-flip: the bit) */
} gpk__search_cuda_move;

/* GPK_EUNSUPPORTED (with a message) when the device cannot evaluate this
 * configuration bit-identically (TSP GEO without a distance matrix: the
 * device's cos/acos differ from the host's libm), GPK_ENOMEM / GPK_EDEVICE
 * on CUDA failures; the caller then keeps the CPU scan. */
gpk_status gpk__search_cuda_open(gpk_ctx *ctx, const gpk__search_cfg *cfg, gpk__search_cuda **out);
/* flags: GPK__SEARCH_CUDA_NO_FAST keeps the generic kernels (int64 QAP
 * through p, exact double TSP distances), which the tests hold against the
 * fast paths. */
#define GPK__SEARCH_CUDA_NO_FAST 1
gpk_status gpk__search_cuda_open_ex(gpk_ctx *ctx, const gpk__search_cfg *cfg, int flags,
                                    gpk__search_cuda **out);
/* 1: the QAP int32 fast path; 2: the TSP 2-opt float path (tiled in OURS); 0: generic. */
int gpk__search_cuda_fast(const gpk__search_cuda *g);
void gpk__search_cuda_close(gpk__search_cuda *g);
/* Limits one launch to `neighbours` neighbours (0: the default, by work);
 * the tests use it to force chunking on small instances. */
void gpk__search_cuda_set_chunk(gpk__search_cuda *g, uint64_t neighbours);
/* The TSP 2-opt tiled kernel's width, 128 or 256 (other values: the
 * automatic choice by size); the tests run both on small instances. */
void gpk__search_cuda_set_tile(gpk__search_cuda *g, unsigned tile);
/* The whole tabu array (tabu_len entries as in the CPU search; NULL: all 0). */
gpk_status gpk__search_cuda_tabu_upload(gpk__search_cuda *g, const uint64_t *tabu);
gpk_status gpk__search_cuda_tabu_set(gpk__search_cuda *g, uint64_t index, uint64_t until);
gpk_status gpk__search_cuda_best_move(gpk__search_cuda *g, const gpk__search_cuda_in *in,
                                      gpk__search_cuda_mode mode, gpk__search_cuda_move *any,
                                      gpk__search_cuda_move *adm);
/* The or2opt batch evaluation on the GPU: the session holds the distances
 * (matrix or coordinates), the neighbour lists and the tour; each call
 * uploads the tour and the cities to evaluate and returns, for each city,
 * what gpk__tsp_ls_best_move returns on the host. */
typedef struct gpk__tsp_ls_cuda gpk__tsp_ls_cuda;
gpk_status gpk__tsp_ls_cuda_open(gpk_ctx *ctx, const gpk_tsp *tsp, const uint32_t *nb, const int32_t *nd,
                                 uint32_t k, gpk__tsp_ls_cuda **out);
gpk_status gpk__tsp_ls_cuda_eval(gpk__tsp_ls_cuda *g, const uint32_t *tour, const uint32_t *cities,
                                 uint32_t count, gpk__ls_move *moves);
void gpk__tsp_ls_cuda_close(gpk__tsp_ls_cuda *g);

/* The search's device scans of a backend, the functions above: the
 * front ends (search_cpu.c, tsp_ls.c) and the bench hooks reach them only
 * through this table, which the CUDA module fills (src/modules). */
typedef struct gpk__search_backend {
    gpk_status (*open)(gpk_ctx *ctx, const gpk__search_cfg *cfg, gpk__search_cuda **out);
    int (*fast)(const gpk__search_cuda *g);
    void (*close)(gpk__search_cuda *g);
    gpk_status (*tabu_upload)(gpk__search_cuda *g, const uint64_t *tabu);
    gpk_status (*tabu_set)(gpk__search_cuda *g, uint64_t index, uint64_t until);
    gpk_status (*best_move)(gpk__search_cuda *g, const gpk__search_cuda_in *in, gpk__search_cuda_mode mode,
                            gpk__search_cuda_move *any, gpk__search_cuda_move *adm);
    gpk_status (*tsp_ls_open)(gpk_ctx *ctx, const gpk_tsp *tsp, const uint32_t *nb, const int32_t *nd,
                              uint32_t k, gpk__tsp_ls_cuda **out);
    gpk_status (*tsp_ls_eval)(gpk__tsp_ls_cuda *g, const uint32_t *tour, const uint32_t *cities,
                              uint32_t count, gpk__ls_move *moves);
    void (*tsp_ls_close)(gpk__tsp_ls_cuda *g);
} gpk__search_backend;

/* The device scans of backend b (src/backends.c); NULL when b has none
 * (the CPU, OpenCL, or CUDA without its module). */
const gpk__search_backend *gpk__search_backend_of(gpk_backend b);
#ifdef __cplusplus
}
#endif

#endif
